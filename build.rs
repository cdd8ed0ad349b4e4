//! Flattens the suite's WGSL into one text per kernel, embedded as `SHADERS`, and
//! records the git commit the binary was built from.
//!
//! This is the suite's one WGSL preprocessor: the GPU pipelines, the simulator (its
//! unit tests too) and `list --emit wgsl` all read its output through
//! `suite::shaders::source`, and the CUDA twins take their defines from its keys;
//! `tests/shaders.rs` includes this file to test it.
//!
//! Kernels: every `shaders/*.wgsl` is one kernel named by its file stem, except the
//! sources that `shaders/permutations` makes kernels from, one per line:
//!
//! ```text
//! KERNEL: SOURCE KEY=VALUE FLAG ...
//! ```
//!
//! Each kernel's text goes through a line-based preprocessor, with its line's keys
//! (none for a plain file). A directive is a whole line whose first non-blank
//! character is `#` (WGSL has no `#`):
//!
//! - `#import NAME`: the text of `shaders/shared/NAME.wgsl`, preprocessed too; once per
//!   kernel (a second `#import` of the same NAME adds nothing);
//! - `#if KEY` / `#if !KEY`, `#else`, `#endif`: keep the lines in between if the kernel
//!   sets KEY (does not, with `!`); blocks nest;
//! - `${KEY}` anywhere in a kept line: the VALUE the kernel gives KEY.
//!
//! A malformed directive or permutation line, an unknown KEY, an `#if` on a KEY that no
//! kernel of the source sets, or a key that a kernel sets and its source never reads
//! fails the build with the file and line.
//!
//! CUDA C twins: every `shaders/cuda/*.cu` is embedded by file stem as `CUDA_SOURCES`,
//! each `#include "NAME.cuh"` line replaced by `shaders/cuda/NAME.cuh`; NVRTC compiles
//! them at run time with the kernel's keys as defines.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A kernel's keys: FLAG (no value) or KEY=VALUE.
type Keys = BTreeMap<String, Option<String>>;

/// One kernel to flatten.
struct Kernel {
    name: String,
    /// The stem of `shaders/<stem>.wgsl`.
    source: String,
    keys: Keys,
    /// `shaders/permutations:LINE` for a generated kernel.
    line: Option<String>,
}

fn main() {
    let root = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| ".".to_owned());
    let root = Path::new(&root);
    // A directory: cargo scans all of it, shared/ and permutations included.
    println!("cargo:rerun-if-changed={}", root.join("shaders").display());
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap_or_else(|_| ".".to_owned()));
    if let Err(error) = shaders(root, &out).and_then(|()| cuda_sources(root, &out)) {
        eprintln!("error: {error}");
        std::process::exit(1);
    }
    git_commit(root);
}

/// Writes every kernel's flat WGSL of `root/shaders/` to `out/wgsl/` and the table to
/// `out/shaders.rs` (public for `tests/shaders.rs`, which runs it on broken inputs).
pub(crate) fn shaders(root: &Path, out: &Path) -> Result<(), String> {
    let dir = root.join("shaders");
    let kernels = kernels(&dir)?;
    let wgsl = out.join("wgsl");
    std::fs::create_dir_all(&wgsl).map_err(|e| format!("{}: {e}", wgsl.display()))?;
    let mut table = String::from(
        "/// Every kernel's flat WGSL (`shaders/`, preprocessed by `build.rs`), by kernel name.\n\
         pub static SHADERS: &[(&str, &str)] = &[\n",
    );
    let mut origins = String::from(
        "/// Where each kernel's WGSL comes from: its file, or the source and keys of its\n\
         /// `shaders/permutations` line.\n\
         pub static ORIGINS: &[(&str, &str)] = &[\n",
    );
    let mut key_table = String::from(
        "/// The keys each kernel's `shaders/permutations` line sets: (KEY, VALUE), no VALUE\n\
         /// for a FLAG.\n\
         pub static KEYS: &[(&str, KernelKeys)] = &[\n",
    );
    // Per source: every key its kernels set, the keys its `#if`s may test.
    let mut known: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for kernel in &kernels {
        let keys = known.entry(&kernel.source).or_default();
        keys.extend(kernel.keys.keys().map(String::as_str));
    }
    for kernel in &kernels {
        let mut flat = Flattener {
            dir: &dir,
            keys: &kernel.keys,
            known: known
                .get(kernel.source.as_str())
                .cloned()
                .unwrap_or_default(),
            imported: BTreeSet::new(),
            read: BTreeSet::new(),
            text: String::new(),
        };
        flat.file(&format!("{}.wgsl", kernel.source))?;
        if let (Some(line), Some(key)) = (
            &kernel.line,
            kernel.keys.keys().find(|key| !flat.read.contains(*key)),
        ) {
            return Err(format!(
                "{line}: shaders/{}.wgsl never reads {key}",
                kernel.source
            ));
        }
        let path = wgsl.join(format!("{}.wgsl", kernel.name));
        std::fs::write(&path, &flat.text).map_err(|e| format!("{}: {e}", path.display()))?;
        let _ = writeln!(
            table,
            "    ({:?}, include_str!({:?})),",
            kernel.name,
            path.display().to_string()
        );
        let mut origin = format!("shaders/{}.wgsl", kernel.source);
        for (key, value) in &kernel.keys {
            let _ = match value {
                Some(value) => write!(origin, " {key}={value}"),
                None => write!(origin, " {key}"),
            };
        }
        let _ = writeln!(origins, "    ({:?}, {origin:?}),", kernel.name);
        let _ = writeln!(
            key_table,
            "    ({:?}, &{:?}),",
            kernel.name,
            kernel.keys_list()
        );
    }
    table.push_str("];\n");
    origins.push_str("];\n");
    key_table.push_str("];\n");
    let path = out.join("shaders.rs");
    std::fs::write(&path, table + &origins + &key_table)
        .map_err(|e| format!("{}: {e}", path.display()))
}

/// Writes the table of every `root/shaders/cuda/*.cu` (file stem, text) to
/// `out/cuda.rs`; no directory is no twins.
pub(crate) fn cuda_sources(root: &Path, out: &Path) -> Result<(), String> {
    let dir = root.join("shaders").join("cuda");
    let mut stems = Vec::new();
    if let Ok(entries) = std::fs::read_dir(&dir) {
        for entry in entries {
            let path = entry.map_err(|e| format!("{}: {e}", dir.display()))?.path();
            if path.extension().is_some_and(|ext| ext == "cu") {
                let stem = path
                    .file_stem()
                    .and_then(|s| s.to_str())
                    .unwrap_or_default();
                if !is_name(stem) {
                    return Err(format!("{}: twin names are [a-z0-9_]+", path.display()));
                }
                stems.push((stem.to_owned(), path));
            }
        }
    }
    stems.sort();
    let flat = out.join("cuda");
    std::fs::create_dir_all(&flat).map_err(|e| format!("{}: {e}", flat.display()))?;
    let mut table = String::from(
        "/// Every CUDA C twin's source (`shaders/cuda/<name>.cu`), by name.\n\
         pub static CUDA_SOURCES: &[(&str, &str)] = &[\n",
    );
    for (stem, path) in stems {
        let text = cuda_includes(&dir, &path)?;
        let path = flat.join(format!("{stem}.cu"));
        std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))?;
        let _ = writeln!(table, "    ({stem:?}, include_str!({:?})),", path.display());
    }
    table.push_str("];\n");
    let path = out.join("cuda.rs");
    std::fs::write(&path, table).map_err(|e| format!("{}: {e}", path.display()))
}

/// The text of the twin at `path` with each `#include "NAME.cuh"` line replaced by
/// `dir/NAME.cuh`: NVRTC compiles one text and finds no file beside it.
fn cuda_includes(dir: &Path, path: &Path) -> Result<String, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut flat = String::new();
    for (number, line) in text.lines().enumerate() {
        let header = line
            .trim()
            .strip_prefix("#include \"")
            .and_then(|rest| rest.strip_suffix(".cuh\""));
        match header {
            Some(name) => {
                let header = dir.join(format!("{name}.cuh"));
                let included = is_name(name)
                    .then(|| std::fs::read_to_string(&header).ok())
                    .flatten()
                    .ok_or_else(|| {
                        format!(
                            "{}:{}: no shaders/cuda/{name}.cuh to include",
                            path.display(),
                            number + 1
                        )
                    })?;
                flat.push_str(&included);
            }
            None => {
                flat.push_str(line);
                flat.push('\n');
            }
        }
    }
    Ok(flat)
}

impl Kernel {
    /// The keys as (KEY, VALUE) pairs, `None` for a FLAG.
    fn keys_list(&self) -> Vec<(&str, Option<&str>)> {
        self.keys
            .iter()
            .map(|(key, value)| (key.as_str(), value.as_deref()))
            .collect()
    }
}

/// The plain kernels and those `shaders/permutations` lists, by name.
fn kernels(dir: &Path) -> Result<Vec<Kernel>, String> {
    let mut kernels: BTreeMap<String, Kernel> = BTreeMap::new();
    let list = dir.join("permutations");
    let text = match std::fs::read_to_string(&list) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(format!("shaders/permutations: {e}")),
    };
    let mut sources = BTreeSet::new();
    for (index, line) in text.lines().enumerate() {
        let at = format!("shaders/permutations:{}", index + 1);
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (name, rest) = line
            .split_once(':')
            .ok_or_else(|| format!("{at}: expected `KERNEL: SOURCE KEY=VALUE FLAG ...`"))?;
        let name = name.trim();
        let mut words = rest.split_whitespace();
        let source = words.next().unwrap_or_default();
        if !is_name(name) || !is_name(source) {
            return Err(format!(
                "{at}: kernel and source names are [a-z0-9_]+, got `{name}` and `{source}`"
            ));
        }
        if !dir.join(format!("{source}.wgsl")).is_file() {
            return Err(format!("{at}: no shaders/{source}.wgsl"));
        }
        let mut keys = Keys::new();
        for word in words {
            let (key, value) = match word.split_once('=') {
                Some((key, value)) if !value.is_empty() => (key, Some(value.to_owned())),
                Some(_) => return Err(format!("{at}: `{word}` has no value")),
                None => (word, None),
            };
            if !is_key(key) || keys.insert(key.to_owned(), value).is_some() {
                return Err(format!("{at}: `{key}` is not a new key ([A-Z_][A-Z0-9_]*)"));
            }
        }
        sources.insert(source.to_owned());
        let kernel = Kernel {
            name: name.to_owned(),
            source: source.to_owned(),
            keys,
            line: Some(at.clone()),
        };
        if kernels.insert(name.to_owned(), kernel).is_some() {
            return Err(format!("{at}: kernel {name} is listed twice"));
        }
    }
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for entry in entries {
        let path = entry.map_err(|e| format!("{}: {e}", dir.display()))?.path();
        if path.extension().is_none_or(|ext| ext != "wgsl") {
            continue;
        }
        let stem = path
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or_default();
        if sources.contains(stem) {
            continue;
        }
        if let Some(kernel) = kernels.get(stem) {
            return Err(format!(
                "{}: kernel {stem} is also shaders/{stem}.wgsl",
                kernel.line.as_deref().unwrap_or_default()
            ));
        }
        let kernel = Kernel {
            name: stem.to_owned(),
            source: stem.to_owned(),
            keys: Keys::new(),
            line: None,
        };
        kernels.insert(stem.to_owned(), kernel);
    }
    Ok(kernels.into_values().collect())
}

fn is_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
}

fn is_key(key: &str) -> bool {
    key.bytes().next().is_some_and(|b| !b.is_ascii_digit())
        && key
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
}

/// One kernel's text being flattened.
struct Flattener<'a> {
    dir: &'a Path,
    keys: &'a Keys,
    /// The keys some kernel of the same source sets: the ones an `#if` may test.
    known: BTreeSet<&'a str>,
    /// The shared files imported so far.
    imported: BTreeSet<String>,
    /// The keys the text tests or substitutes, kept lines or not.
    read: BTreeSet<String>,
    text: String,
}

impl Flattener<'_> {
    /// Appends `shaders/<relative>`, preprocessed.
    fn file(&mut self, relative: &str) -> Result<(), String> {
        let name = format!("shaders/{relative}");
        let source =
            std::fs::read_to_string(self.dir.join(relative)).map_err(|e| format!("{name}: {e}"))?;
        // Per open #if: whether its current branch is kept, whether #else was seen,
        // and its line.
        let mut open: Vec<(bool, bool, usize)> = Vec::new();
        for (index, line) in source.lines().enumerate() {
            let at = format!("{name}:{}", index + 1);
            let kept = open.iter().all(|(on, _, _)| *on);
            let Some(directive) = line.trim_start().strip_prefix('#') else {
                let line = self.substitute(line, kept, &at)?;
                if kept {
                    self.text.push_str(&line);
                    self.text.push('\n');
                }
                continue;
            };
            let words: Vec<&str> = directive.split_whitespace().collect();
            match words.as_slice() {
                ["if", key] => {
                    let (negated, key) = match key.strip_prefix('!') {
                        Some(key) => (true, key),
                        None => (false, *key),
                    };
                    if !self.known.contains(key) {
                        return Err(format!(
                            "{at}: #if {key}: no kernel made from this file sets {key} \
                             (shaders/permutations)"
                        ));
                    }
                    self.read.insert(key.to_owned());
                    open.push((self.keys.contains_key(key) != negated, false, index + 1));
                }
                ["else"] => match open.last_mut() {
                    Some((on, seen @ false, _)) => {
                        *on = !*on;
                        *seen = true;
                    }
                    Some(_) => return Err(format!("{at}: a second #else")),
                    None => return Err(format!("{at}: #else without #if")),
                },
                ["endif"] => {
                    open.pop()
                        .ok_or_else(|| format!("{at}: #endif without #if"))?;
                }
                ["import", shared] if is_name(shared) => {
                    if kept && self.imported.insert((*shared).to_owned()) {
                        self.file(&format!("shared/{shared}.wgsl"))
                            .map_err(|e| format!("{e}\n  imported at {at}"))?;
                    }
                }
                _ => {
                    return Err(format!(
                        "{at}: `{}` is not #import NAME, #if KEY, #if !KEY, #else or #endif",
                        line.trim()
                    ));
                }
            }
        }
        match open.last() {
            Some((_, _, line)) => Err(format!("{name}:{line}: #if without #endif")),
            None => Ok(()),
        }
    }

    /// `line` with every `${KEY}` replaced by the kernel's VALUE (checked, and the keys
    /// recorded as read, in dropped lines too; replaced only in kept ones).
    fn substitute(&mut self, line: &str, kept: bool, at: &str) -> Result<String, String> {
        let mut out = String::new();
        let mut rest = line;
        while let Some(start) = rest.find("${") {
            out.push_str(&rest[..start]);
            let after = &rest[start + 2..];
            let end = after
                .find('}')
                .ok_or_else(|| format!("{at}: `${{` without `}}`"))?;
            let key = &after[..end];
            if !is_key(key) {
                return Err(format!("{at}: `${{{key}}}` is not ${{KEY}}"));
            }
            self.read.insert(key.to_owned());
            match self.keys.get(key) {
                Some(Some(value)) => out.push_str(value),
                Some(None) if kept => {
                    return Err(format!("{at}: {key} is a flag: it has no value"));
                }
                None if kept => return Err(format!("{at}: ${{{key}}}: {key} is not set")),
                _ => {}
            }
            rest = &after[end + 1..];
        }
        out.push_str(rest);
        Ok(out)
    }
}

/// `MEMBENCH_GIT_COMMIT`: the commit, `-dirty` with uncommitted changes.
fn git_commit(root: &Path) {
    let git = |args: &[&str]| {
        Command::new("git")
            .args(args)
            .current_dir(root)
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
    // `src` too: an unstaged edit there changes neither HEAD nor the index, and the
    // binary would keep the last clean commit's name.
    for path in [".git/HEAD", ".git/index", "src"] {
        if root.join(path).exists() {
            println!("cargo:rerun-if-changed={path}");
        }
    }
}
