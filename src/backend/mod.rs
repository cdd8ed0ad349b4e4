//! The seam every backend implements: prepare a case's buffers and kernel, run it once
//! and check its outputs, and time it on the backend's clock.
//!
//! [`wgpu`] runs cases on any GPU wgpu drives; `cuda` (feature `cuda`) runs their CUDA C
//! twins through the CUDA driver; [`sim`] runs the same cases in the simulator's
//! interpreter (and predicts their time from its trace). The driver
//! ([`crate::run`]) takes every case through one backend the same way: skip, prepare,
//! verify, time. [`nvml`] reads an NVIDIA GPU's identity and telemetry beside.

#[cfg(feature = "cuda")]
pub mod cuda;
pub(crate) mod nvml;
pub mod sim;
pub mod transfer;
pub mod wgpu;

use crate::error::{Error, Result};
use crate::measure::{Sampler, TimedWork, Timing};
use crate::suite::{Cache, Case, CaseData, Expected, Experiment, Setting, TransferPath, Words};
use std::sync::Arc;

/// What a backend does with one case.
pub trait Backend {
    /// A case ready to run: its buffers made (inputs filled, outputs poisoned) and its
    /// kernel built.
    type Prepared;

    /// The api and build this backend measures with: the `api` and `build` columns of
    /// its rows.
    fn setting(&self) -> Setting;

    /// Whether this backend measures `experiment` at all: an experiment it does not
    /// take gets no row of its setting (a transfer does not depend on how kernels are
    /// built, so only one wgpu build takes transfers).
    fn takes(&self, _experiment: &Experiment) -> bool {
        true
    }

    /// Why this backend cannot measure `case` (beyond the case's own skip reason),
    /// if it cannot: a kernel without a CUDA twin, say.
    fn skip(&self, _experiment: &Experiment, _case: &Case) -> Option<String> {
        None
    }

    /// Makes the case's buffers from `inputs` (in binding order of its input buffers)
    /// and builds its kernel.
    fn prepare(
        &self,
        experiment: &Experiment,
        case: &Case,
        inputs: &[Words],
    ) -> Result<Self::Prepared>;

    /// Runs the case once and checks each output against `expected`, in order.
    fn verify(&self, prepared: &Self::Prepared, expected: &[Expected]) -> Result<()>;

    /// Each output's words as they are now (after [`Backend::verify`]'s dispatch), for
    /// a second dispatch to agree with; `None` where the backend does not read them.
    fn outputs(&self, _prepared: &Self::Prepared) -> Result<Option<Vec<Arc<Vec<u32>>>>> {
        Ok(None)
    }

    /// The prepared case on this backend's clock, every timed dispatch started with the
    /// caches `cache`.
    fn clock<'a>(
        &'a self,
        prepared: &'a Self::Prepared,
        cache: Cache,
    ) -> Result<Box<dyn TimedWork + 'a>>;

    /// Verifies and times a host↔device transfer along `path`: only a backend with a
    /// host side has one.
    fn transfer(
        &self,
        experiment: &Experiment,
        _case: &Case,
        _path: TransferPath,
        _sampler: Sampler,
        _data: &CaseData,
    ) -> Result<Timing> {
        Err(Error::Case(format!(
            "{}: this backend has no host-device transfers",
            experiment.name()
        )))
    }
}
