//! Compute pipelines: a case's kernel and build turned into a shader module (checked,
//! unchecked or tax-free SPIR-V), its bind group layout and pipeline, and the cache
//! that compiles each distinct pipeline once per run.

use std::sync::{Mutex, MutexGuard};

use super::{GpuContext, spirv};
use crate::error::{Error, Result};
use crate::suite::{Binding, Buffer, Case, Experiment, WgpuBuild};

/// The pipelines compiled last, by [`Pipeline::key`], the most recent first: the cases
/// of a sweep differ in their data only, and compiling each again cost a run seconds.
/// Only the last few are kept: a pipeline holds the driver's compiled code, and the
/// whole run's (hundreds) held to its end grew a quick lavapipe run's host memory by
/// half.
#[derive(Debug, Default)]
pub(super) struct PipelineCache {
    pipelines: Mutex<Vec<(String, wgpu::ComputePipeline)>>,
}

/// The pipelines [`PipelineCache`] keeps: those of a sweep's case in every build.
const CACHED_PIPELINES: usize = 8;

impl PipelineCache {
    /// The pipeline compiled before under `key`, if it is still kept.
    fn get(&self, key: &str) -> Result<Option<wgpu::ComputePipeline>> {
        let mut pipelines = self.lock()?;
        let found = pipelines.iter().position(|(kept, _)| kept == key);
        Ok(found.map(|at| {
            let hit = pipelines.remove(at);
            let compiled = hit.1.clone();
            pipelines.insert(0, hit);
            compiled
        }))
    }

    /// Keeps `compiled` under `key`, dropping the least recently used beyond
    /// [`CACHED_PIPELINES`].
    fn insert(&self, key: String, compiled: wgpu::ComputePipeline) -> Result<()> {
        let mut pipelines = self.lock()?;
        pipelines.insert(0, (key, compiled));
        pipelines.truncate(CACHED_PIPELINES);
        Ok(())
    }

    /// The compiled pipelines kept so far.
    fn lock(&self) -> Result<MutexGuard<'_, Vec<(String, wgpu::ComputePipeline)>>> {
        self.pipelines
            .lock()
            .map_err(|_| Error::Internal("the pipeline cache was poisoned".to_owned()))
    }
}

/// Everything a compute pipeline is built from.
pub(super) struct Pipeline<'a> {
    pub(super) label: &'a str,
    pub(super) source: &'a str,
    pub(super) buffers: &'a [Buffer],
    /// Each buffer's group and binding (see [`Case::slots`]).
    pub(super) slots: &'a [naga::ResourceBinding],
    pub(super) overrides: &'a [(&'a str, f64)],
    pub(super) build: WgpuBuild,
}

impl Pipeline<'_> {
    /// The bind groups the pipeline takes: 0 up to the last one bound.
    pub(super) fn groups(&self) -> u32 {
        crate::suite::groups(self.slots, self.buffers.len())
    }

    /// Everything the compiled pipeline depends on: two pipelines with the same key
    /// are the same.
    fn key(&self) -> String {
        let bindings: Vec<Binding> = self.buffers.iter().map(Buffer::binding).collect();
        format!(
            "{}|{:?}|{:?}|{:?}|{}",
            self.build, self.overrides, bindings, self.slots, self.source
        )
    }
}

/// What a case's kernel is built from: its shader, whose reflected bindings the
/// case's buffers agree with.
pub(super) fn describe_pipeline<'a>(
    experiment: &Experiment,
    case: &'a Case,
    build: WgpuBuild,
) -> Result<Pipeline<'a>> {
    let kernel = experiment.kernel_for(case).map_err(Error::Gpu)?;
    let source = crate::suite::shaders::source(kernel).ok_or_else(|| {
        Error::Gpu(format!(
            "no kernel named {kernel} (membench list --emit wgsl)"
        ))
    })?;
    Ok(Pipeline {
        label: kernel,
        source,
        buffers: &case.buffers,
        slots: &case.slots,
        overrides: &case.overrides,
        build,
    })
}

/// The layout entry of one binding.
fn binding_type(binding: Binding) -> wgpu::BindingType {
    let buffer = |ty| wgpu::BindingType::Buffer {
        ty,
        has_dynamic_offset: false,
        min_binding_size: None,
    };
    match binding {
        Binding::Uniform => buffer(wgpu::BufferBindingType::Uniform),
        Binding::ReadOnly => buffer(wgpu::BufferBindingType::Storage { read_only: true }),
        Binding::ReadWrite => buffer(wgpu::BufferBindingType::Storage { read_only: false }),
        // r32float is not filterable without a feature; textureLoad needs no filtering.
        Binding::Texture => wgpu::BindingType::Texture {
            sample_type: wgpu::TextureSampleType::Float { filterable: false },
            view_dimension: wgpu::TextureViewDimension::D2,
            multisampled: false,
        },
    }
}

impl GpuContext {
    /// The compute pipeline of a case's kernel with its overrides, for callers that
    /// bind buffers of their own (sub-ranges, as the transfer overlap does).
    pub(crate) fn case_pipeline(
        &self,
        experiment: &Experiment,
        case: &Case,
        build: WgpuBuild,
    ) -> Result<wgpu::ComputePipeline> {
        let pipeline = describe_pipeline(experiment, case, build)?;
        self.scoped(|| self.compile(&pipeline))?
    }

    /// `pipeline` compiled, or the same one compiled before; one that failed
    /// validation is not kept, so each case that asks for it gets the error.
    pub(super) fn pipeline(&self, pipeline: &Pipeline) -> Result<wgpu::ComputePipeline> {
        let key = pipeline.key();
        let cached = self.pipeline_cache.get(&key)?;
        if let Some(compiled) = cached {
            return Ok(compiled);
        }
        let compiled = self.scoped(|| self.compile(pipeline))??;
        self.pipeline_cache.insert(key, compiled.clone())?;
        Ok(compiled)
    }

    fn compile(&self, pipeline: &Pipeline) -> Result<wgpu::ComputePipeline> {
        let descriptor = wgpu::ShaderModuleDescriptor {
            label: Some(pipeline.label),
            source: wgpu::ShaderSource::Wgsl(pipeline.source.into()),
        };
        // The tax-free module has its overrides resolved already; the others take
        // them at pipeline creation.
        let (module, constants) = match pipeline.build {
            WgpuBuild::Default => (
                self.device.create_shader_module(descriptor),
                pipeline.overrides,
            ),
            // SAFETY: every kernel is verified against its CPU reference before it is
            // timed; the build is recorded in the CSV.
            WgpuBuild::Unchecked
            | WgpuBuild::NoBoundsChecks
            | WgpuBuild::NoLoopBounding
            | WgpuBuild::NoIntDivChecks => (
                unsafe {
                    self.device
                        .create_shader_module_trusted(descriptor, runtime_checks(pipeline.build))
                },
                pipeline.overrides,
            ),
            WgpuBuild::TaxFree => {
                if !self.has_passthrough() {
                    return Err(Error::Gpu(format!(
                        "{}: the tax-free build needs SPIR-V passthrough (Vulkan), which the adapter does not offer",
                        pipeline.label
                    )));
                }
                let spirv = spirv::tax_free(pipeline.label, pipeline.source, pipeline.overrides)?;
                let [x, y, z] = spirv.workgroup_size;
                let entry_points = [wgpu::PassthroughShaderEntryPoint {
                    name: crate::suite::shaders::entry(pipeline.label).into(),
                    workgroup_size: (x, y, z),
                }];
                // SAFETY: naga parsed and validated the kernel before writing these
                // words, and the barrier rewrite only narrows memory scopes to what
                // the WGSL spec defines; every kernel is verified against its CPU
                // reference before it is timed, and the build is recorded in the CSV.
                let module = unsafe {
                    self.device.create_shader_module_passthrough(
                        wgpu::ShaderModuleDescriptorPassthrough {
                            label: Some(pipeline.label),
                            entry_points: entry_points[..].into(),
                            spirv: Some(spirv.words.into()),
                            ..Default::default()
                        },
                    )
                };
                (module, &[][..])
            }
        };
        // One layout per group up to the last one bound; a group between without
        // bindings gets an empty layout.
        let layouts: Vec<wgpu::BindGroupLayout> = (0..pipeline.groups())
            .map(|group| {
                let entries: Vec<wgpu::BindGroupLayoutEntry> = pipeline
                    .buffers
                    .iter()
                    .enumerate()
                    .map(|(index, buffer)| (crate::suite::slot(pipeline.slots, index), buffer))
                    .filter(|(slot, _)| slot.group == group)
                    .map(|(slot, buffer)| wgpu::BindGroupLayoutEntry {
                        binding: slot.binding,
                        visibility: wgpu::ShaderStages::COMPUTE,
                        ty: binding_type(buffer.binding()),
                        count: None,
                    })
                    .collect();
                self.device
                    .create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
                        label: Some(pipeline.label),
                        entries: &entries,
                    })
            })
            .collect();
        let bind_group_layouts: Vec<Option<&wgpu::BindGroupLayout>> =
            layouts.iter().map(Some).collect();
        let layout = self
            .device
            .create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
                label: Some(pipeline.label),
                bind_group_layouts: &bind_group_layouts,
                immediate_size: 0,
            });
        Ok(self
            .device
            .create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some(pipeline.label),
                layout: Some(&layout),
                module: &module,
                entry_point: Some(crate::suite::shaders::entry(pipeline.label)),
                compilation_options: wgpu::PipelineCompilationOptions {
                    constants,
                    // Timed kernels must not pay an injected zeroing loop.
                    zero_initialize_workgroup_memory: false,
                },
                cache: None,
            }))
    }
}

/// wgpu's runtime checks in `build`: all off (unchecked), or one off and the others on.
fn runtime_checks(build: WgpuBuild) -> wgpu::ShaderRuntimeChecks {
    let checked = wgpu::ShaderRuntimeChecks::checked();
    match build {
        WgpuBuild::NoBoundsChecks => wgpu::ShaderRuntimeChecks {
            bounds_checks: false,
            ..checked
        },
        WgpuBuild::NoLoopBounding => wgpu::ShaderRuntimeChecks {
            force_loop_bounding: false,
            ..checked
        },
        WgpuBuild::NoIntDivChecks => wgpu::ShaderRuntimeChecks {
            int_div_checks: false,
            ..checked
        },
        WgpuBuild::Unchecked => wgpu::ShaderRuntimeChecks::unchecked(),
        WgpuBuild::Default | WgpuBuild::TaxFree => checked,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each single-check build turns exactly its check off; unchecked turns all three off.
    #[test]
    fn each_tax_build_turns_off_its_one_check() {
        let flags = |build| {
            let checks = runtime_checks(build);
            [
                checks.bounds_checks,
                checks.force_loop_bounding,
                checks.int_div_checks,
            ]
        };
        assert_eq!(flags(WgpuBuild::Default), [true, true, true]);
        assert_eq!(flags(WgpuBuild::NoBoundsChecks), [false, true, true]);
        assert_eq!(flags(WgpuBuild::NoLoopBounding), [true, false, true]);
        assert_eq!(flags(WgpuBuild::NoIntDivChecks), [true, true, false]);
        assert_eq!(flags(WgpuBuild::Unchecked), [false, false, false]);
    }
}
