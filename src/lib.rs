//! membench: GPU memory benchmarks on wgpu compute.
