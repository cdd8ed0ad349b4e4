//! The simulator baseline: explain a GPU measurement from the very WGSL kernel that was
//! measured.
//!
//! [`exec`] interprets the kernel's naga IR on the CPU, one workgroup at a time with all
//! its invocations in lock-step, and streams every memory request (one subgroup, one
//! access, the byte address of each active lane) to a [`exec::TraceSink`]. The memory
//! model that turns requests into sectors, bank conflicts and time consumes that stream:
//! [`model`], parameterised by a [`device::DeviceModel`].

pub mod device;
pub(crate) mod dispatch;
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

/// Why the model does not predict `case` of `experiment`, where it does not: a way of
/// issuing a `launch` case that the dispatch model has no term for
/// ([`dispatch::unpriced`]), and the f16 sweep, which the interpreter cannot run.
pub(crate) fn unmodelled(
    experiment: &crate::suite::Experiment,
    case: &crate::suite::Case,
) -> Option<&'static str> {
    use crate::suite::{Family, families::compute};
    match experiment.family {
        Family::Launch => dispatch::unpriced(case.dispatch),
        Family::Compute if experiment.is(&compute::F16) => Some("the interpreter has no f16"),
        _ => None,
    }
}
