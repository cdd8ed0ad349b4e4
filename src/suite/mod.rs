//! The one registry of experiments, and the vocabulary every family declares itself in.
//!
//! An [`Experiment`] is a kernel (a WGSL file in `shaders/`), how it is measured
//! ([`Measure`]: a kernel on the GPU clock, or a host↔device transfer on the host
//! clock) and a function that expands it into [`Case`]s sized for a device. What the
//! classic texts claim of it is said once, in the claims checklist
//! ([`crate::report::claims`]), whose claims name the experiments they read; an
//! experiment's doc comment says what it does beyond that. A
//! case is cheap to list and declares its buffers' sizes; its data ([`CaseData`]:
//! inputs and the CPU reference) is built only when the case runs. The CLI, the benches and the tests all
//! iterate [`REGISTRY`]; nothing lists experiments a second time.

pub mod case;
pub mod data;
pub mod dispatch;
pub mod families;
pub mod id;
pub mod profile;
pub(crate) mod rebuild;
pub(crate) mod run_sizing;
pub mod select;
pub mod shaders;
pub mod sizing;
pub(crate) mod transfer_path;
pub mod verify;

pub use case::{Agree, Buffer, Case};
pub use case::{CaseBuilder, CaseData};
pub(crate) use case::{check_inputs, groups, slot};
pub(crate) use data::{PIECE_WORDS, f32_data, f32_word, f32_words};
pub use data::{Words, mix, words};
pub use dispatch::Dispatch;
pub use id::Params;
pub use id::{Api, Build, Cache, CaseId, CudaBuild, Family, Key, Setting, Value, WgpuBuild};
pub(crate) use id::{FLUSH_BYTES, SOFTWARE_FLUSH_BYTES, check_variant};
pub use profile::Profile;
pub use rebuild::Unmatched;
pub(crate) use rebuild::{Rebuilder, Rebuilt};
pub use run_sizing::RunSizing;
pub(crate) use select::{check_filters, unmatched};
pub use select::{select, selects};
pub use sizing::Grid;
pub use sizing::Sizing;
pub(crate) use sizing::{MAX_BINDING_BYTES, count};
pub use transfer_path::HostMemory;
pub use transfer_path::TransferPath;
pub use transfer_path::{CudaPath, Schedule};
pub use verify::Expected;
pub(crate) use verify::POISON;

use families::{
    bank, compute, constant, copy, hierarchy, latency, launch, localmem, reduce, stencil, subgroup,
    transfer, transpose,
};

/// The families' experiments, in the order runs and reports show them.
const FAMILIES: &[&[Experiment]] = &[
    copy::EXPERIMENTS,
    transpose::EXPERIMENTS,
    reduce::EXPERIMENTS,
    subgroup::EXPERIMENTS,
    bank::EXPERIMENTS,
    constant::EXPERIMENTS,
    stencil::EXPERIMENTS,
    localmem::EXPERIMENTS,
    latency::EXPERIMENTS,
    hierarchy::EXPERIMENTS,
    transfer::EXPERIMENTS,
    launch::EXPERIMENTS,
    compute::EXPERIMENTS,
];

/// Every experiment of the suite, in the order runs and reports show them: each
/// family's `EXPERIMENTS`, one family after the other.
pub static REGISTRY: &[Experiment] = &ALL;

static ALL: [Experiment; total_len(FAMILIES)] = concatenate(FAMILIES);

/// Why the WGSL side (wgpu) cannot measure `case` of `experiment`, if it cannot: its
/// CUDA twin, or the case's CUDA launch setting, uses an API WebGPU does not have. The
/// one place the registry says so; wgpu writes a skipped row with this reason, and the
/// simulator still predicts the case as its WGSL kernel.
pub(crate) fn wgsl_skip(experiment: &Experiment, case: &Case) -> Option<String> {
    let twin = match experiment.twin {
        Twin::Cuda(twin) => twin.wgsl_lacks,
        Twin::None(_) => None,
    };
    twin.or_else(|| case.cuda_launch.wgsl_lacks())
        .or_else(|| case.dispatch.wgsl_lacks())
        .map(|what| format!("no such API in WebGPU: {what}"))
}

/// One experiment: one kernel (or a transfer) and the cases it is measured at.
#[derive(Clone, Copy, Debug)]
pub struct Experiment {
    /// The family it belongs to.
    pub family: Family,
    /// Its name within the family.
    pub variant: &'static str,
    /// Kernel name (see [`shaders`]); also the pipeline label. Its binding signature
    /// is reflected from the WGSL ([`shaders::signature`]). `None` for a pure
    /// transfer, which runs no kernel (and so is neither reflected nor simulated).
    pub kernel: Option<&'static str>,
    /// Expands the experiment into cases sized for a device.
    pub cases: fn(&Sizing) -> Vec<Case>,
    /// What is timed, and on which clock.
    pub measure: Measure,
    /// The kernel's CUDA C twin, which the CUDA backend runs on the same buffers and
    /// checks against the same reference, or why there is none.
    pub twin: Twin,
}

/// An experiment's kernel written as the CUDA texts write it, or why it has none.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Twin {
    /// Its twin.
    Cuda(CudaTwin),
    /// No twin, for this reason.
    None(&'static str),
}

/// A CUDA C twin: `shaders/cuda/<source>.cu`, whose `extern "C" __global__` function
/// of the same name computes what the WGSL kernel computes. One source serves every
/// kernel made from one WGSL source: it is compiled with that kernel's
/// `shaders/permutations` keys and the case's override constants as defines.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CudaTwin {
    /// The `.cu` file's stem, also its entry point's name.
    pub source: &'static str,
    /// The twin's workgroup array is `extern __shared__`, sized at launch with the
    /// case's workgroup storage bytes: CUDA's dynamic shared memory, where the WGSL
    /// sizes the array by an override.
    pub(crate) dynamic_shared: bool,
    /// What the twin uses that WebGPU has no API for (a cache hint, an asynchronous
    /// copy), if anything: then only CUDA measures the experiment, and wgpu skips each
    /// case with this reason ([`wgsl_skip`]). Its WGSL is the kernel without it.
    pub(crate) wgsl_lacks: Option<&'static str>,
}

/// How the CUDA backend launches a case beyond its grid and block: settings of the
/// driver API that WGSL cannot express. Each is also in the case's params (a CSV
/// column), which the case's builder checks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum CudaLaunch {
    /// A plain launch.
    #[default]
    Plain,
    /// The kernel's preferred shared-memory carve-out
    /// (`CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT`), in percent of the
    /// L1-and-shared array: 0 asks for the most L1, 100 for the most shared memory.
    Carveout { percent: u32 },
    /// An L2 access policy window on the stream over the first `bytes` of the storage
    /// argument `buffer` (counted without the uniform): `hit_percent` of its accesses
    /// persist (`CU_ACCESS_PROPERTY_PERSISTING`), the rest stream; `set_aside` bytes
    /// of the L2 are reserved for persisting lines (`CU_LIMIT_PERSISTING_L2_CACHE_SIZE`).
    /// The backend resets the persisting lines and the set-aside when the next case
    /// launches otherwise, so that no case inherits them.
    PersistingWindow {
        buffer: usize,
        bytes: u64,
        hit_percent: u32,
        set_aside: u64,
    },
}

impl CudaLaunch {
    /// What WebGPU has no API for in this setting, if anything.
    pub(crate) fn wgsl_lacks(self) -> Option<&'static str> {
        match self {
            CudaLaunch::Plain => None,
            CudaLaunch::Carveout { .. } => Some(
                "the shared-memory carve-out (CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT)",
            ),
            CudaLaunch::PersistingWindow { .. } => {
                Some("an L2 persisting access policy window (cudaAccessPolicyWindow)")
            }
        }
    }
}

impl Twin {
    /// The twin in `shaders/cuda/<source>.cu`, its shared memory (if any) static.
    pub const fn cuda(source: &'static str) -> Twin {
        Twin::Cuda(CudaTwin {
            source,
            dynamic_shared: false,
            wgsl_lacks: None,
        })
    }

    /// The twin in `shaders/cuda/<source>.cu`, using `lacks`, an API WebGPU does not
    /// have: only CUDA measures the experiment ([`wgsl_skip`]).
    pub(crate) const fn cuda_only(source: &'static str, lacks: &'static str) -> Twin {
        Twin::Cuda(CudaTwin {
            source,
            dynamic_shared: false,
            wgsl_lacks: Some(lacks),
        })
    }

    /// The twin in `shaders/cuda/<source>.cu`, with dynamic shared memory.
    pub(crate) const fn cuda_dynamic_shared(source: &'static str) -> Twin {
        Twin::Cuda(CudaTwin {
            source,
            dynamic_shared: true,
            wgsl_lacks: None,
        })
    }
}

/// How an experiment is measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Measure {
    /// Build the kernel, verify one dispatch, time dispatches on the GPU clock
    /// ([`crate::backend::wgpu::timing`]).
    Kernel,
    /// Move bytes between host and device (or within the device) along a path, verify
    /// what arrived, and time it from the call to the moment the data is usable
    /// ([`crate::backend::wgpu::transfer`], `crate::backend::cuda::transfer`).
    Transfer(TransferPath),
}

impl Experiment {
    /// `family/variant`, the prefix of every case id.
    pub fn name(&self) -> String {
        format!("{}/{}", self.family, self.variant)
    }

    /// Whether `other` is this experiment: the same family and variant (constants are
    /// copied where they are used, so their addresses say nothing).
    pub fn is(&self, other: &Experiment) -> bool {
        self.family == other.family && self.variant == other.variant
    }

    /// The kernel `case` runs, once its buffers agree with the kernel's signature as
    /// reflected from the WGSL: a binding of the right kind for each buffer, in order,
    /// and a uniform of the uniform struct's size.
    pub fn kernel_for(&self, case: &Case) -> Result<&'static str, String> {
        let kernel = self
            .kernel
            .ok_or_else(|| format!("{} runs no kernel", self.name()))?;
        let reflected = shaders::signature(kernel)?;
        let signature: Vec<Binding> = case.buffers.iter().map(Buffer::binding).collect();
        if signature != reflected.bindings {
            return Err(format!(
                "{kernel}: buffers {signature:?} do not match the shader's bindings {:?}",
                reflected.bindings
            ));
        }
        let uniform_bytes = case.buffers.iter().find_map(|buffer| match buffer {
            Buffer::Uniform(_) => Some(buffer.len_bytes()),
            _ => None,
        });
        if uniform_bytes != reflected.uniform_bytes {
            return Err(format!(
                "{kernel}: a uniform of {uniform_bytes:?} bytes where the shader's struct \
                 has {:?}",
                reflected.uniform_bytes
            ));
        }
        Ok(kernel)
    }
}

/// How a kernel sees one buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Binding {
    /// A uniform buffer.
    Uniform,
    /// A storage buffer the kernel only reads.
    ReadOnly,
    /// A storage buffer the kernel writes.
    ReadWrite,
    /// A `texture_2d<f32>` read with `textureLoad` (no sampler).
    Texture,
}

/// The length of `parts` one after the other.
pub(crate) const fn total_len<T>(parts: &[&[T]]) -> usize {
    let mut len = 0;
    let mut part = 0;
    while part < parts.len() {
        len += parts[part].len();
        part += 1;
    }
    len
}

/// `parts` one after the other, at compile time: static tables assembled from one
/// list per module. `N` must be [`total_len`] of `parts`, and the first part not empty.
pub(crate) const fn concatenate<T: Copy, const N: usize>(parts: &[&[T]]) -> [T; N] {
    // Any element fills the array first: every slot is overwritten below.
    let mut all = [parts[0][0]; N];
    let mut slot = 0;
    let mut part = 0;
    while part < parts.len() {
        let mut index = 0;
        while index < parts[part].len() {
            all[slot] = parts[part][index];
            slot += 1;
            index += 1;
        }
        part += 1;
    }
    all
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A case's data holds at most one of its buffers: large inputs and references are
    /// made piece by piece, so host memory stays within twice the largest buffer.
    #[test]
    fn no_case_holds_more_data_than_one_of_its_buffers() {
        let sizing = Sizing {
            buffer_bytes: Some(32 << 20),
            ..Sizing::nominal(false)
        };
        for experiment in REGISTRY {
            for case in (experiment.cases)(&sizing) {
                let largest = case
                    .buffers
                    .iter()
                    .map(Buffer::len_bytes)
                    .max()
                    .unwrap_or(0);
                if case.skip.is_some() || largest < 16 << 20 {
                    continue;
                }
                let held = (case.data)().held_bytes();
                let id = case.id(experiment);
                assert!(
                    held <= largest,
                    "{id}: {held} bytes held, largest buffer {largest}"
                );
            }
        }
    }

    /// Every kernel has a CUDA twin whose source exists and declares its entry; an
    /// experiment without one runs no kernel (a copy between host and device) and says
    /// why.
    #[test]
    fn every_experiment_has_a_twin_or_says_why() {
        let mut twins = 0;
        for experiment in REGISTRY {
            match experiment.twin {
                Twin::Cuda(twin) => {
                    let source = shaders::cuda_source(twin.source).unwrap_or_default();
                    assert!(
                        source.contains("extern \"C\" __global__")
                            && source.contains(&format!("{}(", twin.source)),
                        "{}: shaders/cuda/{}.cu has no entry {}",
                        experiment.name(),
                        twin.source,
                        twin.source
                    );
                    twins += 1;
                }
                Twin::None(why) => {
                    assert!(!why.trim().is_empty(), "{}", experiment.name());
                    assert_eq!(experiment.kernel, None, "{}", experiment.name());
                }
            }
        }
        let kernels = REGISTRY.iter().filter(|e| e.kernel.is_some()).count();
        assert_eq!(twins, kernels);
    }

    /// wgpu skips, with the reason, exactly the cases whose twin or launch uses an API
    /// WebGPU lacks; every such case's launch setting is in its params.
    #[test]
    fn wgsl_skips_say_which_api_webgpu_lacks() {
        use families::hierarchy::{SHARED, SHARED_L1_BYPASS, STAGED_ASYNC_16, WINDOW_CARVEOUT};
        let sizing = Sizing::nominal(true);
        let mut skipped = Vec::new();
        for experiment in REGISTRY {
            for case in (experiment.cases)(&sizing) {
                if let Some(why) = wgsl_skip(experiment, &case) {
                    assert!(why.starts_with("no such API in WebGPU: "), "{why}");
                    skipped.push(experiment.variant);
                }
                match case.cuda_launch {
                    CudaLaunch::Carveout { percent } => {
                        assert_eq!(case.params.number(Key::Carveout), Some(u64::from(percent)));
                    }
                    CudaLaunch::PersistingWindow {
                        bytes,
                        hit_percent,
                        set_aside,
                        ..
                    } => {
                        assert_eq!(case.params.number(Key::Window), Some(bytes));
                        assert_eq!(case.params.number(Key::HitRatio), Some(hit_percent.into()));
                        assert_eq!(case.params.number(Key::SetAside), Some(set_aside));
                    }
                    CudaLaunch::Plain => {}
                }
            }
        }
        skipped.dedup();
        assert_eq!(
            skipped,
            [
                "window_carveout",
                "shared_l1_bypass",
                "staged_async_4",
                "staged_async_8",
                "staged_async_16",
                "persist",
                "graph",
                "scale_graph"
            ]
        );
        let case = &(SHARED_L1_BYPASS.cases)(&sizing)[0];
        assert_eq!(
            wgsl_skip(&SHARED_L1_BYPASS, case).as_deref(),
            Some("no such API in WebGPU: an L1 bypass hint (__ldcg)")
        );
        assert_eq!(wgsl_skip(&SHARED, case), None);
        let case = &(STAGED_ASYNC_16.cases)(&sizing)[0];
        assert!(wgsl_skip(&STAGED_ASYNC_16, case).is_some_and(|w| w.contains("cp.async")));
        let case = &(WINDOW_CARVEOUT.cases)(&sizing)[0];
        assert!(wgsl_skip(&WINDOW_CARVEOUT, case).is_some_and(|w| w.contains("carve-out")));
    }
}
