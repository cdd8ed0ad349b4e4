//! `list --emit`: what the devices are given, as text: the flat WGSL of the kernels,
//! the PTX of their CUDA twins, or the tax-free build's SPIR-V.

use std::io::Write;

#[cfg(feature = "cuda")]
use crate::backend::cuda;
use crate::backend::wgpu as gpu;
use crate::error::{Error, Result};
#[cfg(feature = "cuda")]
use crate::suite::CudaBuild;
use crate::suite::{self, Case, Experiment, REGISTRY, Sizing, Twin};

/// What `list --emit` prints.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Emit {
    /// The flat WGSL the GPU and the simulator run (`shaders/`, preprocessed).
    Wgsl,
    /// The PTX NVRTC makes of the CUDA twins (`shaders/cuda/`) for `compute_90`.
    #[cfg(feature = "cuda")]
    Ptx,
    /// The same in the rolled build (run-time trip counts kept rolled).
    #[cfg(feature = "cuda")]
    PtxRolled,
    /// The tax-free build's SPIR-V (overrides resolved, runtime checks off, barriers
    /// at Workgroup scope) of each case's kernel, as text.
    Spirv,
}

/// `list --emit`: `what` of the kernel (or CUDA twin) named `target`, or of the cases
/// matching `target` as a filter (else `filters`).
pub fn emit(
    out: &mut dyn Write,
    what: Emit,
    filters: &[String],
    target: Option<&str>,
) -> Result<()> {
    match what {
        Emit::Wgsl => emit_wgsl(out, filters, target),
        #[cfg(feature = "cuda")]
        Emit::Ptx => emit_ptx(out, filters, target, CudaBuild::Default),
        #[cfg(feature = "cuda")]
        Emit::PtxRolled => emit_ptx(out, filters, target, CudaBuild::Rolled),
        Emit::Spirv => emit_spirv(out, filters, target),
    }
}

/// What a target that names no kernel and matches no case says.
fn unmatched(filters: &[String]) -> Error {
    Error::Usage(format!(
        "no kernel or case matches \"{}\" (see membench list)",
        filters.join(",")
    ))
}

/// The WGSL of `kernel`, which the registry names.
fn source(kernel: &str) -> Result<&'static str> {
    suite::shaders::source(kernel)
        .ok_or_else(|| Error::Usage(format!("kernel {kernel} has no WGSL in shaders/")))
}

/// What matching cases that run no kernel say.
fn no_kernel() -> Error {
    Error::Usage("the matching cases run no kernel: host transfers only".to_owned())
}

/// `list --emit wgsl`: the flat WGSL of the kernel named `target`, or of the kernels
/// of the cases matching `target` (else `filters`), each once, in registry order.
fn emit_wgsl(out: &mut dyn Write, filters: &[String], target: Option<&str>) -> Result<()> {
    let kernels: Vec<&str> = match target {
        Some(kernel) if suite::shaders::source(kernel).is_some() => vec![kernel],
        _ => {
            let filters = target.map_or_else(|| filters.to_vec(), |t| vec![t.to_owned()]);
            let selected = suite::select(&Sizing::nominal(false), &filters)
                .map_err(|_| unmatched(&filters))?;
            let mut kernels = Vec::new();
            for kernel in selected.iter().filter_map(|(e, _)| e.kernel) {
                if !kernels.contains(&kernel) {
                    kernels.push(kernel);
                }
            }
            kernels
        }
    };
    if kernels.is_empty() {
        return Err(no_kernel());
    }
    for kernel in kernels {
        let source = source(kernel)?;
        outln!(out, "// kernel: {kernel}")?;
        out!(out, "{source}")?;
    }
    Ok(())
}

/// `list --emit ptx`: the PTX of the CUDA twins of the cases of the kernel (WGSL kernel
/// or twin source) named `target`, or of the cases matching `target` (else `filters`).
#[cfg(feature = "cuda")]
fn emit_ptx(
    out: &mut dyn Write,
    filters: &[String],
    target: Option<&str>,
    build: CudaBuild,
) -> Result<()> {
    let selected = emitted_cases(filters, target)?;
    out!(
        out,
        "{}",
        cuda::compile::ptx_listing(&selected, build, cuda::compile::DEFAULT_ARCH)?
    )
}

/// `list --emit spirv`: the tax-free SPIR-V of each distinct kernel and override
/// constants among the cases `emitted_cases` selects.
fn emit_spirv(out: &mut dyn Write, filters: &[String], target: Option<&str>) -> Result<()> {
    let mut seen = Vec::new();
    for (experiment, case) in emitted_cases(filters, target)? {
        let Some(kernel) = experiment.kernel else {
            continue;
        };
        if seen.contains(&(kernel, case.overrides.clone())) {
            continue;
        }
        let text = gpu::spirv::tax_free_text(kernel, source(kernel)?, &case.overrides)?;
        outln!(out, "; kernel: {kernel} for {}", case.id(experiment))?;
        out!(out, "{text}")?;
        seen.push((kernel, case.overrides));
    }
    if seen.is_empty() {
        return Err(no_kernel());
    }
    Ok(())
}

/// The cases `list --emit` prints: those of the kernel (or CUDA twin) named `target`,
/// else of the case filter `target`, else of `filters`, at nominal size.
fn emitted_cases(
    filters: &[String],
    target: Option<&str>,
) -> Result<Vec<(&'static Experiment, Case)>> {
    let sizing = Sizing::nominal(false);
    let names_kernel = |experiment: &Experiment, name: &str| {
        experiment.kernel == Some(name)
            || matches!(experiment.twin, Twin::Cuda(t) if t.source == name)
    };
    Ok(match target {
        Some(name) if REGISTRY.iter().any(|e| names_kernel(e, name)) => {
            suite::select(&sizing, &[])?
                .into_iter()
                .filter(|(e, _)| names_kernel(e, name))
                .collect()
        }
        _ => {
            let filters = target.map_or_else(|| filters.to_vec(), |t| vec![t.to_owned()]);
            suite::select(&sizing, &filters).map_err(|_| unmatched(&filters))?
        }
    })
}
