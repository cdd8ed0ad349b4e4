//! Standard error, written without panicking: `eprintln!` panics where the write fails
//! (`2>/dev/full`, a reader that went away), which would end a command in the middle
//! of its work. A failed write is remembered instead, the command goes on, and its exit
//! status says so ([`failure`]). Every note and progress line goes through [`stderr!`]
//! or [`stderrln!`].
//!
//! [`stderr!`]: crate::stderr!
//! [`stderrln!`]: crate::stderrln!

use std::io::{self, Write as _};
use std::sync::OnceLock;

/// How the first failed write to standard error failed.
static FAILED: OnceLock<io::ErrorKind> = OnceLock::new();

/// Writes `text` to standard error, all at once; a failure is remembered, not raised.
pub fn write(text: std::fmt::Arguments) {
    if let Err(error) = io::stderr().lock().write_fmt(text) {
        // The first failure is the one the exit status tells.
        let _ = FAILED.set(error.kind());
    }
}

/// How a write to standard error failed, if one did: a command that lost a note ends
/// with a non-zero exit status.
pub fn failure() -> Option<io::ErrorKind> {
    FAILED.get().copied()
}

/// `eprint!` that never panics: see [`write`].
#[macro_export]
macro_rules! stderr {
    ($($arg:tt)*) => {
        $crate::stderr::write(format_args!($($arg)*))
    };
}

/// `eprintln!` that never panics: see [`write`].
#[macro_export]
macro_rules! stderrln {
    ($($arg:tt)*) => {
        $crate::stderr::write(format_args!("{}\n", format_args!($($arg)*)))
    };
}
