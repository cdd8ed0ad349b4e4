//! Helpers the integration tests that run the binary share.
#![allow(dead_code, reason = "each test crate uses some of them")]

use std::path::PathBuf;
use std::process::{Command, ExitStatus, Output};

/// One quick case: seconds on lavapipe.
pub(crate) const ONE_CASE: &str = "copy/peak/launch=vec4$";

/// A fresh empty directory for one test, named after its test crate and `name`.
pub(crate) fn scratch(name: &str) -> std::io::Result<PathBuf> {
    let crate_name = env!("CARGO_CRATE_NAME");
    let dir = std::env::temp_dir().join(format!(
        "membench-{crate_name}-{name}-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}

/// The outcome of `command`: its status, stdout and stderr.
pub(crate) fn outcome(command: &mut Command) -> std::io::Result<(ExitStatus, String, String)> {
    let Output {
        status,
        stdout,
        stderr,
    } = command.output()?;
    Ok((
        status,
        String::from_utf8_lossy(&stdout).into_owned(),
        String::from_utf8_lossy(&stderr).into_owned(),
    ))
}

/// Whether the run could not start for want of an adapter (outside CI, the test then
/// passes with a note).
pub(crate) fn no_adapter(stderr: &str) -> bool {
    let missing = stderr.contains("no GPU adapter found");
    if missing {
        assert!(std::env::var_os("CI").is_none(), "{stderr}");
        eprintln!("no adapter: the run is not tried");
    }
    missing
}
