//! membench: GPU memory benchmarks on wgpu compute.

pub mod sim;
