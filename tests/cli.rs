//! The command line's answers to bad input: one clear line and a non-zero exit.

use std::process::Command;

/// Runs the binary on Vulkan; whether it succeeded, and its stderr.
fn membench(args: &[&str]) -> std::io::Result<(bool, String)> {
    let output = Command::new(env!("CARGO_BIN_EXE_membench"))
        .args(args)
        .env("WGPU_BACKEND", "vulkan")
        .output()?;
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    Ok((output.status.success(), stderr))
}

#[test]
fn unknown_flag_is_refused() {
    let (ok, stderr) = membench(&["run", "--fast"]).unwrap();
    assert!(!ok);
    assert!(stderr.contains("unexpected argument '--fast'"), "{stderr}");
}

#[test]
fn too_few_samples_are_refused() {
    let (ok, stderr) = membench(&["run", "--samples", "3"]).unwrap();
    assert!(!ok);
    assert!(stderr.contains("--samples"), "{stderr}");
}

#[test]
fn unknown_filter_is_refused() {
    let (ok, stderr) = membench(&["list", "--filter", "copy/nonesuch"]).unwrap();
    assert!(!ok);
    assert!(
        stderr.contains("no experiment matches \"copy/nonesuch\""),
        "{stderr}"
    );
}

#[test]
fn list_names_every_experiment() {
    let output = Command::new(env!("CARGO_BIN_EXE_membench"))
        .arg("list")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    for experiment in membench::suite::REGISTRY {
        assert!(
            stdout.contains(&experiment.name()),
            "{} missing",
            experiment.name()
        );
    }
}

#[test]
fn out_of_range_adapter_index_is_refused() {
    let (ok, stderr) = membench(&["run", "--quick", "--adapter", "99"]).unwrap();
    assert!(!ok);
    assert!(
        stderr.contains("adapter \"99\" not found") || stderr.contains("no GPU adapter found"),
        "{stderr}"
    );
}

#[test]
fn missing_adapter_is_a_clear_error() {
    let output = Command::new(env!("CARGO_BIN_EXE_membench"))
        .args(["run", "--quick"])
        .env("WGPU_BACKEND", "metal")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    if cfg!(target_os = "linux") {
        assert!(!output.status.success());
        assert!(
            stderr.contains("no GPU adapter found for WGPU_BACKEND=metal"),
            "{stderr}"
        );
    }
}

#[test]
fn buffer_beyond_the_device_limit_is_refused() {
    let (ok, stderr) = membench(&["run", "--buffer-mib", "1000000"]).unwrap();
    assert!(!ok);
    assert!(
        stderr.contains("exceeds the device limit") || stderr.contains("no GPU adapter found"),
        "{stderr}"
    );
}

#[test]
fn malformed_results_file_stops_the_run_before_measuring() {
    let path = std::env::temp_dir().join(format!("membench-cli-{}.csv", std::process::id()));
    std::fs::write(&path, "family,variant\ncopy\n").unwrap();
    let (ok, stderr) = membench(&[
        "run",
        "--quick",
        "--filter",
        "copy/peak",
        "--out",
        path.to_str().unwrap(),
    ])
    .unwrap();
    let after = std::fs::read_to_string(&path).unwrap();
    std::fs::remove_file(&path).unwrap();
    assert!(!ok);
    assert_eq!(after, "family,variant\ncopy\n", "the file was touched");
    assert!(
        stderr.contains(path.to_str().unwrap()) || stderr.contains("no GPU adapter found"),
        "{stderr}"
    );
}
