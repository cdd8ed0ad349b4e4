//! Embeds every `shaders/*.wgsl` (the file stem is the kernel name) and records the
//! git commit the binary was built from.

use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;

fn main() {
    let root = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| ".".to_owned());
    let shaders = Path::new(&root).join("shaders");
    println!("cargo:rerun-if-changed={}", shaders.display());
    let mut names: Vec<_> = std::fs::read_dir(&shaders)
        .map(|dir| {
            dir.filter_map(|entry| entry.ok().map(|e| e.path()))
                .filter(|path| path.extension().is_some_and(|ext| ext == "wgsl"))
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    let mut table = String::from(
        "/// Every shader of `shaders/`, by kernel name.\npub static SHADERS: &[(&str, &str)] = &[\n",
    );
    for path in &names {
        let stem = path
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or_default();
        let _ = writeln!(
            table,
            "    ({stem:?}, include_str!({:?})),",
            path.display().to_string()
        );
    }
    table.push_str("];\n");
    let out = std::env::var("OUT_DIR").unwrap_or_else(|_| ".".to_owned());
    if let Err(error) = std::fs::write(Path::new(&out).join("shaders.rs"), table) {
        println!("cargo:warning=cannot write the shader table: {error}");
    }

    let git = |args: &[&str]| {
        Command::new("git")
            .args(args)
            .current_dir(&root)
            .output()
            .ok()
            .filter(|out| out.status.success())
            .map(|out| String::from_utf8_lossy(&out.stdout).trim().to_owned())
    };
    let commit = git(&["rev-parse", "--short=12", "HEAD"]).unwrap_or_else(|| "unknown".to_owned());
    let dirty =
        git(&["status", "--porcelain", "--untracked-files=no"]).is_some_and(|s| !s.is_empty());
    println!(
        "cargo:rustc-env=MEMBENCH_GIT_COMMIT={commit}{}",
        if dirty { "-dirty" } else { "" }
    );
    for path in [".git/HEAD", ".git/index"] {
        if Path::new(&root).join(path).exists() {
            println!("cargo:rerun-if-changed={path}");
        }
    }
}
