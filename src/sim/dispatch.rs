//! The dispatch model: what issuing a `launch` case's repetitions adds to its kernel's
//! own time ([`crate::sim::model`]), by the way the case issues them ([`Dispatch`]).
//!
//! - [`Dispatch::Apart`] (one pass, each dispatch writing its own buffer): nothing
//!   orders the dispatches, so the front end issues one every `dispatch_ns` and each
//!   kernel runs under the next ones' issue. A repetition takes `dispatch_ns`.
//! - [`Dispatch::Pass`] (one pass, every dispatch writing one buffer): wgpu's barrier
//!   makes each dispatch wait until the one before has drained. A repetition takes
//!   `dependent_dispatch_ns` (the barrier, the drain and the refill) and then the
//!   kernel's own time: the scale sweep's time = a + V/b.
//! - [`Dispatch::PassEach`] (a compute pass per dispatch): a repetition takes
//!   `pass_ns`.
//!
//! The rest have no term ([`unpriced`]): the model is of the device, and those costs
//! are the host's, the driver's, wgpu's own validation's or CUDA's.
//!
//! Other families are not charged a dispatch: their rows are judged as before this model
//! existed (docs/simulator.md, The dispatch terms).

use crate::sim::device::DeviceModel;
use crate::sim::model::{Bound, Prediction};
use crate::suite::Dispatch;

/// Why the model prices no repetition issued as `dispatch`, where it does not.
pub(crate) fn unpriced(dispatch: Dispatch) -> Option<&'static str> {
    match dispatch {
        Dispatch::Apart | Dispatch::Pass | Dispatch::PassEach => None,
        Dispatch::Indirect => Some(
            "wgpu's validation dispatch before each indirect one (wgpu#8332) is not in the model",
        ),
        Dispatch::SubmitEach | Dispatch::SubmitAll => {
            Some("a submission's cost is the host's and the driver's (host clock)")
        }
        Dispatch::Graph => Some("the dispatch terms are wgpu's; CUDA graphs have none"),
    }
}

/// The time one repetition of `kernel` issued as `dispatch` takes on `device`, with
/// its dispatch term; `None` where the model has none ([`unpriced`]).
pub(crate) fn issued(
    kernel: &Prediction,
    dispatch: Dispatch,
    device: &DeviceModel,
    declared_bytes: u64,
) -> Option<Prediction> {
    let (dispatch_ns, kernel_s) = match dispatch {
        Dispatch::Apart => (device.dispatch_ns, 0.0),
        Dispatch::Pass => (device.dependent_dispatch_ns, kernel.time_s),
        Dispatch::PassEach => (device.pass_ns, 0.0),
        _ => return None,
    };
    let dispatch_s = dispatch_ns * 1e-9;
    let time_s = dispatch_s + kernel_s;
    let mut issued = *kernel;
    issued.terms.dispatch = dispatch_s;
    issued.time_s = time_s;
    issued.bound = if dispatch_s >= kernel_s {
        Bound::Dispatch
    } else {
        kernel.bound
    };
    issued.effective_gbps = declared_bytes as f64 / time_s / 1e9;
    Some(issued)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kernel(time_s: f64) -> Prediction {
        let device = crate::sim::device::preset("h100").copied().unwrap();
        Prediction::bound_by(Bound::Dram, time_s, &device)
    }

    #[test]
    fn a_dependent_dispatch_adds_its_wait_to_the_kernel_and_an_apart_one_hides_it() {
        let device = crate::sim::device::preset("h100").copied().unwrap();
        let small = kernel(1e-9);
        let apart = issued(&small, Dispatch::Apart, &device, 1).unwrap();
        assert_eq!(apart.time_s, device.dispatch_ns * 1e-9);
        assert_eq!(apart.bound, Bound::Dispatch);
        let pass = issued(&small, Dispatch::Pass, &device, 1).unwrap();
        assert!((pass.time_s - (device.dependent_dispatch_ns * 1e-9 + 1e-9)).abs() < 1e-15);
        assert_eq!(pass.terms.dispatch, device.dependent_dispatch_ns * 1e-9);
        // A kernel longer than the wait names its own bound.
        let large = issued(&kernel(1e-3), Dispatch::Pass, &device, 1).unwrap();
        assert_eq!(large.bound, Bound::Dram);
        assert!(large.time_s > 1e-3);
        assert_eq!(
            issued(&small, Dispatch::PassEach, &device, 1).map(|p| p.time_s),
            Some(device.pass_ns * 1e-9)
        );
    }

    #[test]
    fn host_clock_indirect_and_graph_repetitions_are_not_priced() {
        let device = crate::sim::device::preset("h100").copied().unwrap();
        for dispatch in [
            Dispatch::Indirect,
            Dispatch::SubmitEach,
            Dispatch::SubmitAll,
            Dispatch::Graph,
        ] {
            assert!(unpriced(dispatch).is_some(), "{dispatch:?}");
            assert!(issued(&kernel(1e-6), dispatch, &device, 1).is_none());
        }
        assert!(unpriced(Dispatch::Pass).is_none());
    }
}
