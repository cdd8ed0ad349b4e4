//! The backends one run measures a device with: the wgpu builds asked for, then the
//! same GPU through the CUDA twins where CUDA is there. `membench run` and
//! `cargo bench` both assemble them here.

use std::time::Duration;

#[cfg(feature = "cuda")]
use crate::backend::cuda::Cuda;
use crate::backend::wgpu::{self as gpu, GpuContext, Wgpu};
use crate::suite::{Api, Build};

use super::Measurer;

/// The backends of one run on one device, owned for the run.
pub struct Backends<'a> {
    ctx: &'a GpuContext,
    wgpu: Vec<Wgpu<'a>>,
    #[cfg(feature = "cuda")]
    cuda: Option<Cuda>,
}

impl<'a> Backends<'a> {
    /// The wgpu `builds` of `apis` (each once; tax-free falls back to unchecked where
    /// SPIR-V passthrough is not offered) and, where `apis` asks for it, the CUDA
    /// backend of the same GPU. What cannot be had is said in one line on stderr and
    /// the run goes on without it.
    pub fn new(ctx: &'a GpuContext, apis: &[Api], builds: &[Build], timeout: Duration) -> Self {
        let wgpu = if apis.contains(&Api::Wgpu) {
            wgpu_builds(ctx, builds)
                .into_iter()
                .map(|build| Wgpu { ctx, build })
                .collect()
        } else {
            Vec::new()
        };
        #[cfg(feature = "cuda")]
        let cuda = apis
            .contains(&Api::Cuda)
            .then(|| {
                Cuda::for_adapter(&ctx.info.name, &ctx.info.device_pci_bus_id, timeout)
                    .map_err(|error| eprintln!("membench: {error}"))
                    .ok()
            })
            .flatten();
        #[cfg(not(feature = "cuda"))]
        {
            let _ = timeout;
            if apis.contains(&Api::Cuda) {
                eprintln!("membench: CUDA backend unavailable: built without the `cuda` feature");
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
    pub fn measurers(&self) -> Vec<Measurer<'_>> {
        #[cfg_attr(
            not(feature = "cuda"),
            expect(
                unused_mut,
                reason = "only the CUDA backend comes after the wgpu builds"
            )
        )]
        let mut measurers: Vec<Measurer> = self
            .wgpu
            .iter()
            .map(|backend| Measurer {
                backend,
                info: self.ctx.run_info(backend.build),
            })
            .collect();
        #[cfg(feature = "cuda")]
        if let Some(backend) = &self.cuda {
            measurers.push(Measurer {
                backend,
                info: backend.run_info(),
            });
        }
        measurers
    }
}

/// `wanted`, each once, with tax-free replaced by unchecked where SPIR-V passthrough
/// is not offered (said on stderr).
fn wgpu_builds(ctx: &GpuContext, wanted: &[Build]) -> Vec<Build> {
    let mut builds = Vec::new();
    for &build in wanted {
        let build = match build {
            Build::TaxFree if !ctx.has_passthrough() => {
                eprintln!(
                    "membench: SPIR-V passthrough is not offered on {}: the unchecked build \
                     stands in for tax-free",
                    gpu::describe(&ctx.info)
                );
                Build::Unchecked
            }
            other => other,
        };
        if !builds.contains(&build) {
            builds.push(build);
        }
    }
    builds
}
