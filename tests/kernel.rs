//! `membench kernel` on lavapipe (or whatever adapter exists): every example's command
//! line as docs/kernel.md gives it, shrunk to a quick size, runs verified; the fixtures
//! modelled on other projects' kernels run verified or fail in one line; bad input
//! gets one line and exit 2.

use std::path::Path;
use std::process::Command;

mod common;
use common::{no_adapter, outcome, scratch};

/// The `membench kernel` command lines of docs/kernel.md's code blocks, each as its
/// words (a line ending in `\` goes on).
fn documented_commands() -> Vec<Vec<String>> {
    let doc =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/kernel.md")).unwrap();
    let mut commands = Vec::new();
    let mut current: Option<String> = None;
    for line in doc.lines() {
        let line = line.trim();
        let text = match current.take() {
            Some(before) => format!("{before} {line}"),
            None if line.starts_with("membench kernel ") => line.to_owned(),
            None => continue,
        };
        match text.strip_suffix('\\') {
            Some(more) => current = Some(more.trim_end().to_owned()),
            None => commands.push(text.split_whitespace().map(str::to_owned).collect()),
        }
    }
    commands
}

/// Runs `membench` with `args` in the crate's root on Vulkan: status, stdout, stderr.
fn membench(args: &[String]) -> (std::process::ExitStatus, String, String) {
    outcome(
        Command::new(env!("CARGO_BIN_EXE_membench"))
            .args(args)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .env("WGPU_BACKEND", "vulkan"),
    )
    .unwrap()
}

/// A size small enough for the interpreter in a debug build, for each size variable the
/// examples use.
const QUICK_SIZES: &[&str] = &["n=2^12", "rows=64", "cols=96", "dim=64"];

/// The flags that make a documented command quick and write into `out`.
fn quick(command: &[String], out: &Path) -> Vec<String> {
    let mut args: Vec<String> = command[1..].to_vec();
    for size in QUICK_SIZES {
        let name = size.split('=').next().unwrap_or_default();
        if command
            .iter()
            .any(|word| word.starts_with(&format!("{name}=")))
        {
            args.extend(["--size".to_owned(), (*size).to_owned()]);
        }
    }
    args.extend(
        [
            "--quick",
            "--build",
            "default",
            "--levels",
            "/nonexistent.csv",
            "--out",
        ]
        .map(str::to_owned),
    );
    args.push(out.display().to_string());
    args
}

#[test]
fn every_documented_example_runs_verified_at_a_quick_size() {
    let commands = documented_commands();
    let examples: Vec<&str> = commands
        .iter()
        .filter_map(|c| c.get(2).map(String::as_str))
        .collect();
    for example in [
        "saxpy",
        "transpose_naive",
        "transpose_tiled",
        "layernorm",
        "histogram",
    ] {
        let file = format!("examples/kernels/{example}.wgsl");
        assert!(
            examples.contains(&file.as_str()),
            "{file} not in docs/kernel.md"
        );
    }
    let dir = scratch("examples").unwrap();
    for command in &commands {
        let out = dir.join(format!("{}.csv", command[2].replace('/', "_")));
        let (status, stdout, stderr) = membench(&quick(command, &out));
        if no_adapter(&stderr) {
            return;
        }
        assert!(status.success(), "{command:?}\n{stdout}\n{stderr}");
        let rows = std::fs::read_to_string(&out).unwrap();
        let data: Vec<&str> = rows.lines().skip(1).collect();
        assert!(!data.is_empty(), "{command:?}: no rows");
        for row in data {
            assert!(row.starts_with("kernel,"), "{row}");
            assert!(
                row.contains(",ok,") && row.contains(",true,"),
                "{command:?}: {row}"
            );
        }
        assert!(stdout.contains("kernel/"), "{stdout}");
    }
}
