//! membench: GPU memory benchmarks on wgpu compute.
//!
//! The classic CUDA memory-optimisation experiments as WGSL compute shaders, run
//! through one registry ([`suite::REGISTRY`]): each case is verified against a
//! CPU reference, then timed on the GPU clock (host↔device transfers on the host
//! clock, [`backend::wgpu::transfer`]), and reported as effective bandwidth in a results CSV
//! ([`results`]). [`sim`] executes the same WGSL on the CPU and traces every memory
//! request for the memory-system model. [`report`] (with [`report::compare`]) put several
//! devices' CSVs side by side: tables, charts and the claims checklist. [`validate`]
//! judges the simulator's predictions of a results file's cases against the measurements.
//! [`run`] drives a run ([`run::Plan`]); [`commands`] holds the other commands' bodies.
//! [`judge`] decides runs against a baseline ([`judge::baseline`]) and reads one file per
//! GPU of many GPUs to name those slower than their model's median ([`judge::fleet`]);
//! [`health`] checks a run against what a healthy GPU of its model reaches.
//! [`text`] keeps text from outside membench fit for a terminal, a row and a path.
//! Notes and progress go to standard error through [`stderrln!`], which never panics.

#![warn(clippy::disallowed_macros)]

// First: the macros it defines are used by the modules after it.
#[macro_use]
pub mod stderr;

pub mod backend;
pub mod calibrate;
pub mod commands;
pub mod error;
pub mod files;
pub mod health;
pub mod judge;
pub mod kernel;
pub mod measure;
pub mod report;
pub mod results;
pub mod run;
pub mod sim;
pub mod suite;
pub mod text;
pub mod validate;

pub use error::{Error, Result};

/// The plural ending of a count's noun: `1 case`, `2 cases`.
pub(crate) fn plural(count: usize) -> &'static str {
    if count == 1 { "" } else { "s" }
}

// Buffer sizes are u64 (wgpu's type) and host lengths usize: membench builds for 64-bit
// hosts alone, where every u64 is a usize.
const _: () = assert!(usize::BITS == u64::BITS, "membench needs a 64-bit host");

/// `n` (bytes, words) as a host length: lossless, the host being 64-bit (asserted above).
#[expect(
    clippy::cast_possible_truncation,
    reason = "usize is 64 bits: asserted above"
)]
pub(crate) const fn host_len(n: u64) -> usize {
    n as usize
}

/// `n` as the u32 an API takes (a row's bytes, a count), or the limit it passes.
pub(crate) fn to_u32(n: usize, what: &'static str) -> Result<u32> {
    u32::try_from(n).map_err(|_| Error::SizeLimit {
        what,
        requested: n as u64,
        limit: u64::from(u32::MAX),
    })
}
