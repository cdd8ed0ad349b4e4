//! The backends one run measures a device with: the wgpu builds asked for, then the
//! same GPU through the CUDA twins in the CUDA builds asked for, where CUDA is there.
//! `membench run` and `cargo bench` both assemble them here.

use std::time::Duration;

#[cfg(feature = "cuda")]
use crate::backend::cuda::Cuda;
use crate::backend::wgpu::{self as gpu, GpuContext, Wgpu};
use crate::suite::{Api, Build, CudaBuild, Setting, WgpuBuild};

use super::{Measurer, measurer};

/// The backends of one run on one device, owned for the run.
#[derive(Debug)]
pub struct Backends<'a> {
    ctx: &'a GpuContext,
    wgpu: Vec<Wgpu<'a>>,
    #[cfg(feature = "cuda")]
    cuda: Vec<Cuda>,
}

impl<'a> Backends<'a> {
    /// What `apis` and `builds` select ([`Setting::selected`]): the wgpu builds
    /// (tax-free falls back to unchecked where SPIR-V passthrough is not offered),
    /// then the CUDA builds on the same GPU. What cannot be had is said in
    /// one line on stderr and the run goes on without it.
    pub fn new(ctx: &'a GpuContext, apis: &[Api], builds: &[Build], timeout: Duration) -> Self {
        let selected = Setting::selected(apis, builds);
        let wgpu_wanted: Vec<WgpuBuild> = selected
            .iter()
            .filter_map(|setting| match setting {
                Setting::Wgpu(build) => Some(*build),
                Setting::Cuda(_) => None,
            })
            .collect();
        let wgpu = wgpu_builds(ctx, &wgpu_wanted)
            .into_iter()
            .map(|build| Wgpu { ctx, build })
            .collect();
        let cuda_builds: Vec<CudaBuild> = selected
            .iter()
            .filter_map(|setting| match setting {
                Setting::Cuda(build) => Some(*build),
                Setting::Wgpu(_) => None,
            })
            .collect();
        #[cfg(feature = "cuda")]
        let cuda = match cuda_builds.as_slice() {
            [] => Vec::new(),
            _ => match Cuda::for_adapter(&ctx.info.name, &ctx.info.device_pci_bus_id, timeout) {
                Ok(cuda) => cuda_builds.iter().map(|&b| cuda.with_build(b)).collect(),
                Err(error) => {
                    stderrln!("membench: {}", crate::text::shown_lines(&error.to_string()));
                    Vec::new()
                }
            },
        };
        #[cfg(not(feature = "cuda"))]
        {
            let _ = timeout;
            if !cuda_builds.is_empty() {
                stderrln!("membench: CUDA backend unavailable: built without the `cuda` feature");
            }
        }
        Backends {
            ctx,
            wgpu,
            #[cfg(feature = "cuda")]
            cuda,
        }
    }

    /// Each backend with the columns its rows record, in the order a case visits them.
    pub fn measurers(&self) -> Vec<Box<dyn Measurer + '_>> {
        let wgpu = self
            .wgpu
            .iter()
            .map(|backend| measurer(backend, self.ctx.run_info(backend.build)));
        #[cfg(feature = "cuda")]
        let wgpu = wgpu.chain(self.cuda.iter().map(|backend| {
            // The host the wgpu rows name, checked once where it was read.
            measurer(backend, backend.run_info(&self.ctx.identity.host))
        }));
        wgpu.collect()
    }
}

/// `wanted`, each once, with tax-free replaced by unchecked where SPIR-V passthrough
/// is not offered (said on stderr).
fn wgpu_builds(ctx: &GpuContext, wanted: &[WgpuBuild]) -> Vec<WgpuBuild> {
    let mut builds = Vec::new();
    for &build in wanted {
        let build = match build {
            WgpuBuild::TaxFree if !ctx.has_passthrough() => {
                stderrln!(
                    "membench: SPIR-V passthrough is not offered on {}: the unchecked build \
                     stands in for tax-free",
                    gpu::describe(&ctx.info)
                );
                WgpuBuild::Unchecked
            }
            other => other,
        };
        if !builds.contains(&build) {
            builds.push(build);
        }
    }
    builds
}
