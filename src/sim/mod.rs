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

pub use exec::Request;
pub(crate) use exec::{Access, Costs};
pub use exec::{BoundBuffer, Kernel, Launch, NoTrace, run};
pub use exec::{ExecStats, SimError, TraceSink};
pub use exec::{Space, Target};

#[cfg(test)]
mod tests;

/// Why the model does not predict `family`'s cases, where it does not: issue item 5
/// asks for a launch term and an issue rate calibrated from at most one row each;
/// until then these rows carry no prediction rather than a memory-bound guess.
pub(crate) fn unmodelled(family: crate::suite::Family) -> Option<&'static str> {
    use crate::suite::Family;
    match family {
        Family::Launch => Some(
            "a launch's cost is the driver's and the front end's; the model has no launch term",
        ),
        Family::Compute => {
            Some("arithmetic throughput per element type is not modelled; only memory is")
        }
        _ => None,
    }
}
