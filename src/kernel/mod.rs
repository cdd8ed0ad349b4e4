//! Your kernel: `membench kernel FILE.wgsl` — a user's WGSL compute kernel verified
//! against membench's interpreter of the same WGSL, timed on the GPU clock by the
//! session `membench run` uses, written as rows of family `kernel`.
//!
//! [`args`] reads the flags into [`instance::Description`]s (sizes from [`expr`]);
//! [`reflect`] reads the kernel's bindings and layouts with naga; [`instance`] makes a
//! description the suite's case; [`checked`] makes its references with the interpreter
//! and compares; [`place`] places its rows against the device's memory levels; [`api`]
//! is the same from a user's own `cargo bench`.

pub mod api;
pub mod args;
pub mod checked;
pub(crate) mod expr;
pub(crate) mod instance;
pub mod place;
pub mod reflect;

pub use api::{GpuKernel, Measuring, measure};
pub use args::KernelArgs;
pub use instance::Fill;
pub use instance::Verify;
pub(crate) use instance::instance;
pub use instance::{Description, Init, Reference, ReferenceFn};
