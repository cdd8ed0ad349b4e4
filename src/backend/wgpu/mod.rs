//! The wgpu backend: adapter choice, the device with the adapter's own limits, and
//! turning one [`Case`] into buffers and a pipeline that can be verified and timed.
//!
//! All wgpu calls of the suite live in this module's files, one concern each: `adapter`
//! (choosing and describing adapters), `context` (the device, submitting to it),
//! `pipelines`, `buffers` (staging, poisoning, mapping), `kernel` (a case made ready
//! to dispatch), `verify`, the kernel's clock ([`timing`], [`clocks`]), [`transfer`]
//! and the tax-free build's SPIR-V ([`spirv`]).

mod adapter;
mod buffers;
pub(crate) mod clocks;
mod context;
mod host_memory;
pub mod identity;
mod kernel;
mod launch;
mod pipelines;
pub(crate) mod spirv;
pub mod timing;
pub mod transfer;
mod verify;

pub(crate) use adapter::{adapter_report, describe, instance, no_compute};
pub use adapter::{adapters, info};
pub use context::GpuContext;
pub use kernel::BoundKernel;

use super::Backend;
use crate::error::Result;
use crate::measure::{Sampler, TimedWork, Timing};
use crate::suite::{
    Cache, Case, CaseData, Dispatch, Expected, Experiment, Measure, Setting, TransferPath,
    WgpuBuild, Words,
};
use launch::LaunchClock;
use timing::KernelClock;

/// The wgpu backend: a device, and the build its kernels are made with.
#[derive(Debug)]
pub struct Wgpu<'a> {
    /// The device its kernels run on.
    pub ctx: &'a GpuContext,
    /// How its kernels are built.
    pub build: WgpuBuild,
}

impl Backend for Wgpu<'_> {
    type Prepared = BoundKernel;

    fn setting(&self) -> Setting {
        Setting::Wgpu(self.build)
    }

    /// Transfers move bytes the same whatever the build: the default build takes them.
    fn takes(&self, experiment: &Experiment) -> bool {
        match experiment.measure {
            Measure::Kernel => true,
            Measure::Transfer(path) => path.in_wgpu() && self.build == WgpuBuild::Default,
        }
    }

    /// A case whose twin or launch uses an API WebGPU lacks ([`crate::suite::wgsl_skip`]).
    fn skip(&self, experiment: &Experiment, case: &Case) -> Option<String> {
        crate::suite::wgsl_skip(experiment, case)
    }

    fn prepare(
        &self,
        experiment: &Experiment,
        case: &Case,
        inputs: &[Words],
    ) -> Result<BoundKernel> {
        self.ctx.build(experiment, case, self.build, inputs)
    }

    fn verify(&self, kernel: &BoundKernel, expected: &[Expected]) -> Result<()> {
        self.ctx.verify(kernel, expected)
    }

    fn outputs(&self, kernel: &BoundKernel) -> Result<Option<Vec<std::sync::Arc<Vec<u32>>>>> {
        kernel
            .outputs
            .iter()
            .map(|output| {
                let mut words = Vec::new();
                self.ctx.read_pieces(output, output.size(), |piece| {
                    words.extend_from_slice(piece)
                })?;
                Ok(std::sync::Arc::new(words))
            })
            .collect::<Result<Vec<_>>>()
            .map(Some)
    }

    /// A case of the launch family on the launch clock, every other on the kernel clock.
    fn clock<'a>(
        &'a self,
        kernel: &'a BoundKernel,
        cache: Cache,
    ) -> Result<Box<dyn TimedWork + 'a>> {
        Ok(match kernel.dispatch {
            Dispatch::Pass => Box::new(KernelClock::new(self.ctx, kernel, cache)),
            dispatch => Box::new(LaunchClock::new(self.ctx, kernel, dispatch)),
        })
    }

    fn transfer(
        &self,
        experiment: &Experiment,
        case: &Case,
        path: TransferPath,
        sampler: Sampler,
        data: &CaseData,
    ) -> Result<Timing> {
        transfer::measure(self.ctx, experiment, case, path, self.build, sampler, data)
    }
}
