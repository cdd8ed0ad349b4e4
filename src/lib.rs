//! membench: GPU memory benchmarks on wgpu compute.
//!
//! The classic CUDA memory-optimisation experiments as WGSL compute shaders, run
//! through one registry ([`experiments::REGISTRY`]): each case is verified against a
//! CPU reference, then timed on the GPU clock (host↔device transfers on the host
//! clock, [`transfer`]), and reported as effective bandwidth in a results CSV
//! ([`results`]). [`sim`] executes the same WGSL on the CPU and traces every memory
//! request for the memory-system model. [`compare`] and [`report`] put several
//! devices' CSVs side by side: tables, charts and the claims checklist.

pub mod compare;
pub mod error;
pub mod experiments;
pub mod gpu;
pub mod report;
pub mod results;
pub mod runner;
pub mod shaders;
pub mod sim;
pub mod timing;
pub mod transfer;

pub use error::{Error, Result};
