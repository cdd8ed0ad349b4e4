//! The simulator baseline: explain a GPU measurement from the very WGSL kernel that was
//! measured.
//!
//! [`exec`] interprets the kernel's naga IR on the CPU, one workgroup at a time with all
//! its invocations in lock-step, and streams every memory request (one subgroup, one
//! access, the byte address of each active lane) to a [`exec::TraceSink`]. The memory
//! model that turns requests into sectors, bank conflicts and time consumes that stream:
//! [`model`], parameterised by a [`device::DeviceModel`].

pub mod device;
pub mod exec;
pub mod link;
pub mod model;
pub mod transfer;

pub use exec::{
    Access, BoundBuffer, Costs, ExecStats, Kernel, Launch, NoTrace, Request, SimError, Space,
    Target, TraceSink, run,
};

#[cfg(test)]
mod tests;
