//! The wgpu context: adapter choice, the device with the adapter's own limits, and
//! turning one [`Case`] into buffers and a pipeline that can be verified and timed.
//!
//! All wgpu calls of the suite live here, in [`timing`] and in [`transfer`].

pub mod clocks;
pub mod spirv;
pub mod timing;
pub mod transfer;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::Duration;

use super::Backend;
use crate::error::{Error, Result};
use crate::measure::{Clock, Sampler, Timing};
use crate::results::RunInfo;
use crate::suite::{
    Api, Binding, Buffer, Build, Case, CaseData, Expected, Experiment, Measure, POISON, Setting,
    Sizing, TransferPath, check_inputs,
};
use clocks::ClockGuard;
use rayon::prelude::*;
use timing::KernelClock;

/// The instance from the environment: `WGPU_BACKEND` picks backends.
pub fn instance() -> Result<wgpu::Instance> {
    check_backend_names()?;
    Ok(wgpu::Instance::new(
        wgpu::InstanceDescriptor::new_without_display_handle_from_env(),
    ))
}

/// The names `WGPU_BACKEND` takes, as wgpu reads them.
const BACKEND_NAMES: &[&str] = &[
    "vulkan", "vk", "dx12", "d3d12", "metal", "mtl", "opengl", "gles", "gl", "webgpu", "noop",
];

/// An error where `WGPU_BACKEND` holds a name wgpu does not know: wgpu would skip it
/// and find no adapter, and the error would suggest installing a driver.
fn check_backend_names() -> Result<()> {
    let Ok(value) = std::env::var("WGPU_BACKEND") else {
        return Ok(());
    };
    let lower = value.to_lowercase();
    match lower
        .split(',')
        .map(str::trim)
        .find(|name| !BACKEND_NAMES.contains(name))
    {
        Some(bad) => Err(Error::Environment(format!(
            "WGPU_BACKEND={value:?}: `{bad}` is not a backend; wgpu knows {}",
            BACKEND_NAMES.join(", ")
        ))),
        None => Ok(()),
    }
}

/// Every adapter of the instance, best first: real GPUs before software ones, and
/// Vulkan/Metal/DX12 before GL (the compute path of GL is the least complete).
pub fn adapters(instance: &wgpu::Instance) -> Vec<wgpu::Adapter> {
    let mut adapters = pollster::block_on(instance.enumerate_adapters(wgpu::Backends::all()));
    adapters.sort_by_key(|adapter| {
        let info = adapter.get_info();
        let device_rank = match info.device_type {
            wgpu::DeviceType::DiscreteGpu => 0,
            wgpu::DeviceType::IntegratedGpu => 1,
            wgpu::DeviceType::VirtualGpu => 2,
            wgpu::DeviceType::Cpu => 3,
            wgpu::DeviceType::Other => 4,
        };
        let backend_rank = match info.backend {
            wgpu::Backend::Vulkan | wgpu::Backend::Metal | wgpu::Backend::Dx12 => 0,
            _ => 1,
        };
        (device_rank, backend_rank)
    });
    adapters
}

/// Picks an adapter by index or case-insensitive name substring (`--adapter`, else
/// `WGPU_ADAPTER_NAME`), or the best one.
pub fn select_adapter(instance: &wgpu::Instance, selector: Option<&str>) -> Result<wgpu::Adapter> {
    let mut adapters = adapters(instance);
    if adapters.is_empty() {
        let backends = std::env::var("WGPU_BACKEND")
            .map(|b| format!(" for WGPU_BACKEND={b}"))
            .unwrap_or_default();
        return Err(Error::NoAdapter(backends));
    }
    let Some(wanted) = selector
        .map(str::to_owned)
        .or_else(|| std::env::var("WGPU_ADAPTER_NAME").ok())
    else {
        return Ok(adapters.swap_remove(0));
    };
    let names: Vec<String> = adapters.iter().map(|a| a.get_info().name).collect();
    let listing = |indexes: &mut dyn Iterator<Item = usize>| {
        indexes
            .map(|i| format!("  {i}: {}", describe(&adapters[i].get_info())))
            .collect::<Vec<_>>()
            .join("\n")
    };
    match adapter_matches(&names, &wanted).as_slice() {
        [index] if !wanted.is_empty() => Ok(adapters.swap_remove(*index)),
        [] => Err(Error::AdapterNotFound {
            available: listing(&mut (0..adapters.len())),
            wanted,
        }),
        several => Err(Error::AdapterAmbiguous {
            matching: listing(&mut several.iter().copied()),
            wanted,
        }),
    }
}

/// The indexes of the adapters (by `names`) that `wanted` names: an index, or a
/// case-insensitive substring of their names (an empty one names them all).
fn adapter_matches(names: &[String], wanted: &str) -> Vec<usize> {
    match wanted.parse::<usize>() {
        Ok(index) => (index < names.len()).then_some(index).into_iter().collect(),
        Err(_) => {
            let needle = wanted.to_lowercase();
            (0..names.len())
                .filter(|&i| names[i].to_lowercase().contains(&needle))
                .collect()
        }
    }
}

/// The PCI vendor's name where known, with its id.
fn vendor_name(id: u32) -> String {
    let name = match id {
        0x10de => "NVIDIA",
        0x1002 => "AMD",
        0x8086 => "Intel",
        0x106b => "Apple",
        0x13b5 => "ARM",
        0x5143 => "Qualcomm",
        0x10005 => "Mesa",
        _ => "",
    };
    format!("{name} {id:#06x}").trim().to_owned()
}

/// `name (backend, type)`.
pub fn describe(info: &wgpu::AdapterInfo) -> String {
    format!("{} ({:?}, {:?})", info.name, info.backend, info.device_type)
}

/// Subgroup size as the adapter reports it: one number, or `min-max` where the
/// driver may choose per pipeline; empty where subgroups are not offered.
pub fn subgroup_label(adapter: &wgpu::Adapter) -> String {
    let info = adapter.get_info();
    if !adapter.features().contains(wgpu::Features::SUBGROUP) || info.subgroup_max_size == 0 {
        String::new()
    } else if info.subgroup_min_size == info.subgroup_max_size {
        info.subgroup_max_size.to_string()
    } else {
        format!("{}-{}", info.subgroup_min_size, info.subgroup_max_size)
    }
}

/// The optional features the suite uses, where the adapter offers them.
fn wanted_features(adapter: &wgpu::Adapter) -> wgpu::Features {
    adapter.features()
        & (wgpu::Features::TIMESTAMP_QUERY
            | wgpu::Features::TIMESTAMP_QUERY_INSIDE_ENCODERS
            | wgpu::Features::SUBGROUP
            // SPIR-V given to the driver as it is: the tax-free build.
            | wgpu::Features::PASSTHROUGH_SHADERS
            // Storage the host maps directly: one of the transfer paths.
            | wgpu::Features::MAPPABLE_PRIMARY_BUFFERS)
}

/// The wgpu backend: a device, and the build its kernels are made with.
pub struct Wgpu<'a> {
    pub ctx: &'a GpuContext,
    pub build: Build,
}

impl Backend for Wgpu<'_> {
    type Prepared = Kernel;

    fn setting(&self) -> Setting {
        Setting {
            api: Api::Wgpu,
            build: self.build,
        }
    }

    /// Transfers move bytes the same whatever the build: the default build takes them.
    fn takes(&self, experiment: &Experiment) -> bool {
        match experiment.measure {
            Measure::Kernel => true,
            Measure::Transfer(path) => path.in_wgpu() && self.build == Build::Default,
        }
    }

    fn prepare(&self, experiment: &Experiment, case: &Case, inputs: &[Vec<u32>]) -> Result<Kernel> {
        self.ctx.build(experiment, case, self.build, inputs)
    }

    fn verify(&self, kernel: &Kernel, expected: &[Expected]) -> Result<()> {
        self.ctx.verify(kernel, expected)
    }

    fn clock<'a>(&'a self, kernel: &'a Kernel) -> Result<Box<dyn Clock + 'a>> {
        Ok(Box::new(KernelClock::new(self.ctx, kernel)))
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

/// Device, queue and what the CSV records about them; built once, passed by reference.
pub struct GpuContext {
    pub adapter: wgpu::Adapter,
    pub device: wgpu::Device,
    pub queue: wgpu::Queue,
    pub info: wgpu::AdapterInfo,
    pub limits: wgpu::Limits,
    /// How long one submission may take before the device counts as hung.
    pub timeout: Duration,
    /// Buffers and queries every case reuses, made on first use.
    reused: Reused,
}

/// What every case uses, kept for the whole run: allocating a fresh staging buffer of
/// hundreds of MiB costs more than filling it, poison is cheaper copied on the device,
/// and a query set per timed batch costs tens of milliseconds to create.
#[derive(Default)]
struct Reused {
    /// Host writes, the device copies from (`MAP_WRITE | COPY_SRC`).
    upload: OnceLock<wgpu::Buffer>,
    /// The device copies into, the host reads (`MAP_READ | COPY_DST`).
    readback: OnceLock<wgpu::Buffer>,
    /// [`POISON`] words, copied over outputs before they are verified.
    poison: OnceLock<wgpu::Buffer>,
    timestamps: OnceLock<Timestamps>,
    clock_guard: OnceLock<ClockGuard>,
    /// Compiled pipelines by [`Pipeline::key`]: the cases of a sweep differ in their
    /// data only, and compiling each again cost a run seconds.
    pipelines: Mutex<HashMap<String, wgpu::ComputePipeline>>,
}

/// A query set of the most timestamps one submission may write, and the buffers that
/// bring them to the host.
pub struct Timestamps {
    pub query_set: wgpu::QuerySet,
    resolved: wgpu::Buffer,
    readback: wgpu::Buffer,
}

impl Timestamps {
    fn new(device: &wgpu::Device) -> Self {
        let bytes = 8 * u64::from(wgpu::QUERY_SET_MAX_QUERIES);
        let buffer = |label, usage| {
            device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size: bytes,
                usage,
                mapped_at_creation: false,
            })
        };
        Timestamps {
            query_set: device.create_query_set(&wgpu::QuerySetDescriptor {
                label: Some("timestamps"),
                ty: wgpu::QueryType::Timestamp,
                count: wgpu::QUERY_SET_MAX_QUERIES,
            }),
            // Queries resolve into a GPU buffer, which is copied into a mappable one.
            resolved: buffer(
                "timestamps.resolved",
                wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
            ),
            readback: buffer(
                "timestamps.readback",
                wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            ),
        }
    }

    /// Submits `encoder`, which wrote the first `queries` timestamps, and returns them
    /// in ticks.
    pub fn read(
        &self,
        ctx: &GpuContext,
        mut encoder: wgpu::CommandEncoder,
        queries: u32,
    ) -> Result<Vec<u64>> {
        let bytes = 8 * u64::from(queries);
        encoder.resolve_query_set(&self.query_set, 0..queries, &self.resolved, 0);
        encoder.copy_buffer_to_buffer(&self.resolved, 0, &self.readback, 0, bytes);
        ctx.submit_and_wait(encoder.finish())?;
        ctx.read_mapped(&self.readback, bytes, |words| {
            bytemuck::pod_collect_to_vec::<u32, u64>(words)
        })
    }
}

/// Bytes of each staging buffer: outputs and inputs go through in pieces of this size.
const STAGING_BYTES: u64 = 64 << 20;

/// The device memory blocks wgpu's allocator shares among buffers: 4 MiB, the
/// smallest it takes, so that every larger buffer gets a device allocation of its own.
/// With the default blocks (128–256 MiB, shared by the buffers that fit), where a
/// case's buffers landed depended on the cases run before it: on the H100,
/// `reduce/neighbored` at 2^24 took 131.6 µs alone and 389 µs after the `smem_pad`
/// transposes (`interleaved` 104.8 µs both ways, 92.8 after the copies); with blocks
/// of their own, 128–130 and 92.8 µs in all three orders. A full run A/B in one
/// command: GPU-clock rows' median ratio 1.000.
const SHARED_BLOCK_BYTES: u64 = 4 << 20;

impl GpuContext {
    pub fn new(selector: Option<&str>, timeout: Duration) -> Result<Self> {
        let instance = instance()?;
        let adapter = select_adapter(&instance, selector)?;
        let info = adapter.get_info();
        if let Some(why) = no_compute(&adapter) {
            return Err(Error::NoCompute {
                adapter: describe(&info),
                why,
            });
        }
        // The defaults cap workgroups at 256 invocations and bindings at 128 MiB:
        // ask for what the adapter really has.
        let limits = adapter.limits();
        let (device, queue) =
            pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
                label: Some("membench"),
                required_features: wanted_features(&adapter),
                required_limits: limits.clone(),
                memory_hints: wgpu::MemoryHints::Manual {
                    suballocated_device_memory_block_size: SHARED_BLOCK_BYTES..SHARED_BLOCK_BYTES,
                },
                ..Default::default()
            }))?;
        // Errors inside a case are caught by error scopes; anything else is reported,
        // not a panic that would sink the run.
        device.on_uncaptured_error(Arc::new(|error| eprintln!("membench: wgpu: {error}")));
        device.set_device_lost_callback(|reason, message| {
            if reason != wgpu::DeviceLostReason::Destroyed {
                eprintln!("membench: device lost ({reason:?}): {message}");
            }
        });
        Ok(GpuContext {
            info,
            adapter,
            device,
            queue,
            limits,
            timeout,
            reused: Reused::default(),
        })
    }

    /// Sizes cases for this device; a requested buffer beyond its limits is an error.
    pub fn sizing(
        &self,
        quick: bool,
        buffer_bytes: Option<u64>,
        matrix: Option<(u32, u32)>,
    ) -> Result<Sizing> {
        let limits = &self.limits;
        let max_binding_bytes = limits
            .max_storage_buffer_binding_size
            .min(limits.max_buffer_size);
        if let Some(requested) = buffer_bytes.filter(|&b| b > max_binding_bytes) {
            return Err(Error::SizeLimit {
                what: "--buffer-mib",
                requested,
                limit: max_binding_bytes,
            });
        }
        if let Some((nx, ny)) = matrix {
            let requested = 4 * u64::from(nx) * u64::from(ny);
            if requested > max_binding_bytes {
                return Err(Error::SizeLimit {
                    what: "--size",
                    requested,
                    limit: max_binding_bytes,
                });
            }
        }
        Ok(Sizing {
            quick,
            buffer_bytes,
            software: self.info.device_type == wgpu::DeviceType::Cpu,
            max_binding_bytes,
            max_workgroup_invocations: limits.max_compute_invocations_per_workgroup,
            max_workgroups_per_dimension: limits.max_compute_workgroups_per_dimension,
            max_workgroup_storage_bytes: limits.max_compute_workgroup_storage_size,
            mappable_storage: self
                .device
                .features()
                .contains(wgpu::Features::MAPPABLE_PRIMARY_BUFFERS),
            subgroup_sizes: self
                .device
                .features()
                .contains(wgpu::Features::SUBGROUP)
                .then_some((self.info.subgroup_min_size, self.info.subgroup_max_size)),
            matrix,
        })
    }

    /// The columns every row of a run on this device records, for kernels built with
    /// `build`.
    pub fn run_info(&self, build: Build) -> RunInfo {
        let info = &self.info;
        RunInfo {
            device: info.name.clone(),
            vendor: vendor_name(info.vendor),
            backend: format!("{:?}", info.backend).to_lowercase(),
            driver: format!("{} {}", info.driver, info.driver_info)
                .trim()
                .to_owned(),
            subgroup_size: subgroup_label(&self.adapter),
            setting: Setting {
                api: Api::Wgpu,
                build,
            },
            timestamp_utc: humantime::format_rfc3339_seconds(std::time::SystemTime::now())
                .to_string(),
        }
    }

    /// Whether SPIR-V modules can be given to the driver as they are: the tax-free
    /// build needs it. Only Vulkan takes SPIR-V: wgpu's GL backend offers passthrough
    /// too, but of GLSL.
    pub fn has_passthrough(&self) -> bool {
        self.info.backend == wgpu::Backend::Vulkan
            && self
                .device
                .features()
                .contains(wgpu::Features::PASSTHROUGH_SHADERS)
    }

    pub fn has_timestamps(&self) -> bool {
        self.device
            .features()
            .contains(wgpu::Features::TIMESTAMP_QUERY)
    }

    /// Runs `work` inside validation, out-of-memory and internal error scopes and
    /// turns whatever they caught into an error.
    pub fn scoped<T>(&self, work: impl FnOnce() -> T) -> Result<T> {
        let scopes = [
            wgpu::ErrorFilter::Validation,
            wgpu::ErrorFilter::OutOfMemory,
            wgpu::ErrorFilter::Internal,
        ]
        .map(|filter| self.device.push_error_scope(filter));
        let value = work();
        let mut caught = None;
        for scope in scopes.into_iter().rev() {
            if let Some(error) = pollster::block_on(scope.pop()) {
                caught.get_or_insert(error);
            }
        }
        match caught {
            Some(error) => Err(Error::Gpu(error.to_string())),
            None => Ok(value),
        }
    }

    /// Submits and waits, with a timeout so that a hung kernel is an error.
    pub fn submit_and_wait(&self, commands: wgpu::CommandBuffer) -> Result<()> {
        let index = self.queue.submit([commands]);
        self.wait(index)
    }

    /// Timestamps may be written between commands of an encoder, not only around passes.
    pub fn has_encoder_timestamps(&self) -> bool {
        self.device
            .features()
            .contains(wgpu::Features::TIMESTAMP_QUERY_INSIDE_ENCODERS)
    }

    /// Waits for submission `index` to finish, with the timeout.
    pub fn wait(&self, index: wgpu::SubmissionIndex) -> Result<()> {
        self.device
            .poll(wgpu::PollType::Wait {
                submission_index: Some(index),
                timeout: Some(self.timeout),
            })
            .map(drop)
            .map_err(|error| match error {
                wgpu::PollError::Timeout => Error::Timeout(self.timeout),
                other => Error::Gpu(other.to_string()),
            })
    }

    /// Maps every one of `buffers` whole in `mode` and waits until all are mapped (or
    /// one fails): the GPU must first finish what it does with them.
    pub fn map_all<'a>(
        &self,
        buffers: impl IntoIterator<Item = &'a wgpu::Buffer>,
        mode: wgpu::MapMode,
    ) -> Result<()> {
        let (sender, receiver) = std::sync::mpsc::channel();
        let mut pending = 0;
        for buffer in buffers {
            let sender = sender.clone();
            buffer.map_async(mode, .., move |result| {
                // The receiver outlives the poll below; a failed send cannot happen.
                let _ = sender.send(result);
            });
            pending += 1;
        }
        self.device
            .poll(wgpu::PollType::Wait {
                submission_index: None,
                timeout: Some(self.timeout),
            })
            .map_err(|_| Error::Timeout(self.timeout))?;
        for _ in 0..pending {
            receiver
                .recv_timeout(self.timeout)
                .map_err(|_| Error::Timeout(self.timeout))?
                .map_err(|error| Error::Map(error.to_string()))?;
        }
        Ok(())
    }

    /// Maps `buffer` for reading, waits for it, and hands the words of its first
    /// `bytes` to `read`.
    pub fn read_mapped<T>(
        &self,
        buffer: &wgpu::Buffer,
        bytes: u64,
        read: impl FnOnce(&[u32]) -> T,
    ) -> Result<T> {
        self.map_all([buffer], wgpu::MapMode::Read)?;
        let view = buffer
            .get_mapped_range(..bytes)
            .map_err(|error| Error::Map(error.to_string()))?;
        let words =
            bytemuck::try_cast_slice(&view).map_err(|error| Error::Map(error.to_string()))?;
        let value = read(words);
        drop(view);
        buffer.unmap();
        Ok(value)
    }

    /// Builds the case's pipeline and buffers: `inputs` uploaded, outputs poisoned.
    pub fn build(
        &self,
        experiment: &Experiment,
        case: &Case,
        build: Build,
        inputs: &[Vec<u32>],
    ) -> Result<Kernel> {
        let pipeline = describe_pipeline(experiment, case, build)?;
        let limit = self
            .limits
            .max_storage_buffer_binding_size
            .min(self.limits.max_buffer_size);
        if let Some(buffer) = case.buffers.iter().find(|b| b.len_bytes() > limit) {
            return Err(Error::SizeLimit {
                what: "a buffer",
                requested: buffer.len_bytes(),
                limit,
            });
        }
        self.assemble(&pipeline, inputs, case.workgroups)
    }

    /// The compute pipeline of a case's kernel with its overrides, for callers that
    /// bind buffers of their own (sub-ranges, as the transfer overlap does).
    pub fn case_pipeline(
        &self,
        experiment: &Experiment,
        case: &Case,
        build: Build,
    ) -> Result<wgpu::ComputePipeline> {
        let pipeline = describe_pipeline(experiment, case, build)?;
        self.scoped(|| self.compile(&pipeline))?
    }

    /// Compiles a pipeline and creates its buffers: `inputs` uploaded, outputs
    /// poisoned.
    fn assemble(
        &self,
        pipeline: &Pipeline,
        inputs: &[Vec<u32>],
        workgroups: [u32; 3],
    ) -> Result<Kernel> {
        check_inputs(pipeline.buffers, inputs)
            .map_err(|why| Error::Gpu(format!("{}: {why}", pipeline.label)))?;
        self.scoped(|| {
            let compiled = self.pipeline(pipeline)?;
            let mut inputs = inputs.iter();
            let mut bound = Vec::new();
            let mut outputs = Vec::new();
            for (binding, buffer) in pipeline.buffers.iter().enumerate() {
                let label = format!("{}.{binding}", pipeline.label);
                let created = match buffer {
                    Buffer::Uniform(words) => {
                        self.upload(&label, wgpu::BufferUsages::UNIFORM, words)?
                    }
                    Buffer::Input(_) => {
                        let words = inputs.next().map_or(&[][..], Vec::as_slice);
                        self.upload(&label, wgpu::BufferUsages::STORAGE, words)?
                    }
                    Buffer::Output(words) => {
                        let output = self.poisoned(&label, *words)?;
                        outputs.push(output.clone());
                        output
                    }
                };
                bound.push(created);
            }
            let entries: Vec<wgpu::BindGroupEntry> = bound
                .iter()
                .enumerate()
                .map(|(i, buffer)| wgpu::BindGroupEntry {
                    binding: i as u32,
                    resource: buffer.as_entire_binding(),
                })
                .collect();
            let bind_group = self.device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some(pipeline.label),
                layout: &compiled.get_bind_group_layout(0),
                entries: &entries,
            });
            Ok(Kernel {
                pipeline: compiled,
                bind_group,
                workgroups,
                outputs,
            })
        })?
    }

    /// `pipeline` compiled, or the same one compiled before; one that failed
    /// validation is not kept, so each case that asks for it gets the error.
    fn pipeline(&self, pipeline: &Pipeline) -> Result<wgpu::ComputePipeline> {
        let key = pipeline.key();
        let cached = self.cached_pipelines()?.get(&key).cloned();
        if let Some(compiled) = cached {
            return Ok(compiled);
        }
        let compiled = self.scoped(|| self.compile(pipeline))??;
        self.cached_pipelines()?.insert(key, compiled.clone());
        Ok(compiled)
    }

    /// The compiled pipelines kept so far.
    fn cached_pipelines(&self) -> Result<MutexGuard<'_, HashMap<String, wgpu::ComputePipeline>>> {
        self.reused
            .pipelines
            .lock()
            .map_err(|_| Error::Internal("the pipeline cache was poisoned".to_owned()))
    }

    fn compile(&self, pipeline: &Pipeline) -> Result<wgpu::ComputePipeline> {
        let descriptor = wgpu::ShaderModuleDescriptor {
            label: Some(pipeline.label),
            source: wgpu::ShaderSource::Wgsl(pipeline.source.into()),
        };
        // The tax-free module has its overrides resolved already; the others take
        // them at pipeline creation.
        let (module, constants) = match pipeline.build {
            Build::Default => (
                self.device.create_shader_module(descriptor),
                pipeline.overrides,
            ),
            // SAFETY: every kernel is verified against its CPU reference before it is
            // timed; the build is recorded in the CSV.
            Build::Unchecked => (
                unsafe {
                    self.device.create_shader_module_trusted(
                        descriptor,
                        wgpu::ShaderRuntimeChecks::unchecked(),
                    )
                },
                pipeline.overrides,
            ),
            Build::Rolled => {
                return Err(Error::Gpu(format!(
                    "{}: rolled is a CUDA build",
                    pipeline.label
                )));
            }
            Build::TaxFree => {
                if !self.has_passthrough() {
                    return Err(Error::Gpu(format!(
                        "{}: the tax-free build needs SPIR-V passthrough (Vulkan), which the adapter does not offer",
                        pipeline.label
                    )));
                }
                let spirv = spirv::tax_free(pipeline.label, pipeline.source, pipeline.overrides)?;
                let [x, y, z] = spirv.workgroup_size;
                let entry_points = [wgpu::PassthroughShaderEntryPoint {
                    name: spirv::ENTRY_POINT.into(),
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
        let entries: Vec<wgpu::BindGroupLayoutEntry> = pipeline
            .buffers
            .iter()
            .enumerate()
            .map(|(i, buffer)| wgpu::BindGroupLayoutEntry {
                binding: i as u32,
                visibility: wgpu::ShaderStages::COMPUTE,
                ty: wgpu::BindingType::Buffer {
                    ty: match buffer.binding() {
                        Binding::Uniform => wgpu::BufferBindingType::Uniform,
                        Binding::ReadOnly => wgpu::BufferBindingType::Storage { read_only: true },
                        Binding::ReadWrite => wgpu::BufferBindingType::Storage { read_only: false },
                    },
                    has_dynamic_offset: false,
                    min_binding_size: None,
                },
                count: None,
            })
            .collect();
        let layout = self
            .device
            .create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
                label: Some(pipeline.label),
                entries: &entries,
            });
        let layout = self
            .device
            .create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
                label: Some(pipeline.label),
                bind_group_layouts: &[Some(&layout)],
                immediate_size: 0,
            });
        Ok(self
            .device
            .create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some(pipeline.label),
                layout: Some(&layout),
                module: &module,
                entry_point: Some(spirv::ENTRY_POINT),
                compilation_options: wgpu::PipelineCompilationOptions {
                    constants,
                    // Timed kernels must not pay an injected zeroing loop.
                    zero_initialize_workgroup_memory: false,
                },
                cache: None,
            }))
    }

    /// Waits for the clocks of sustained load before a kernel is timed (see
    /// [`clocks`]); `Some(note)` when they did not come. Not on software adapters,
    /// nor without GPU timestamps.
    pub fn settle_clocks(&self) -> Result<Option<String>> {
        if self.info.device_type == wgpu::DeviceType::Cpu || !self.has_timestamps() {
            return Ok(None);
        }
        let guard = match self.reused.clock_guard.get() {
            Some(guard) => guard,
            None => {
                let guard = ClockGuard::new(self)?;
                self.reused.clock_guard.get_or_init(|| guard)
            }
        };
        guard.settle(self)
    }

    /// The timestamp queries every timed batch reuses.
    pub fn timestamps(&self) -> &Timestamps {
        self.reused
            .timestamps
            .get_or_init(|| Timestamps::new(&self.device))
    }

    /// A staging buffer of the context (made on first use) with `usage`.
    fn staging_buffer<'a>(
        &self,
        slot: &'a OnceLock<wgpu::Buffer>,
        label: &str,
        usage: wgpu::BufferUsages,
    ) -> &'a wgpu::Buffer {
        slot.get_or_init(|| {
            self.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size: STAGING_BYTES.min(self.limits.max_buffer_size),
                usage,
                mapped_at_creation: false,
            })
        })
    }

    /// A buffer holding `words`, copied in through the upload staging buffer piece
    /// by piece.
    pub fn upload(
        &self,
        label: &str,
        usage: wgpu::BufferUsages,
        words: &[u32],
    ) -> Result<wgpu::Buffer> {
        let buffer = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(label),
            // Uniform bindings are read in 16-byte rows.
            size: (4 * words.len() as u64).next_multiple_of(16),
            usage: usage | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let staging = self.staging_buffer(
            &self.reused.upload,
            "staging.upload",
            wgpu::BufferUsages::MAP_WRITE | wgpu::BufferUsages::COPY_SRC,
        );
        let bytes: &[u8] = bytemuck::cast_slice(words);
        for (i, piece) in bytes.chunks(staging.size() as usize).enumerate() {
            self.map_all([staging], wgpu::MapMode::Write)?;
            write_parallel(staging, piece)?;
            staging.unmap();
            let mut encoder = self.device.create_command_encoder(&Default::default());
            let offset = i as u64 * staging.size();
            encoder.copy_buffer_to_buffer(staging, 0, &buffer, offset, piece.len() as u64);
            self.submit_and_wait(encoder.finish())?;
        }
        Ok(buffer)
    }

    /// An output buffer of `words` filled with [`POISON`] by copies on the device.
    fn poisoned(&self, label: &str, words: usize) -> Result<wgpu::Buffer> {
        let size = (4 * words as u64).next_multiple_of(16);
        let buffer = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(label),
            size,
            // COPY_SRC: outputs are copied to a mappable buffer for verification.
            usage: wgpu::BufferUsages::STORAGE
                | wgpu::BufferUsages::COPY_SRC
                | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let poison = match self.reused.poison.get() {
            Some(poison) => poison,
            None => {
                let words = (STAGING_BYTES.min(self.limits.max_buffer_size) / 4) as usize;
                let poison = self.upload(
                    "staging.poison",
                    wgpu::BufferUsages::COPY_SRC,
                    &vec![POISON; words],
                )?;
                self.reused.poison.get_or_init(|| poison)
            }
        };
        let mut encoder = self.device.create_command_encoder(&Default::default());
        let mut offset = 0;
        while offset < size {
            let piece = (size - offset).min(poison.size());
            encoder.copy_buffer_to_buffer(poison, 0, &buffer, offset, piece);
            offset += piece;
        }
        self.queue.submit([encoder.finish()]);
        Ok(buffer)
    }

    /// Copies the first `bytes` of `buffer` to the host through the readback staging
    /// buffer and hands them to `visit` piece by piece, in order.
    pub fn read_pieces(
        &self,
        buffer: &wgpu::Buffer,
        bytes: u64,
        mut visit: impl FnMut(&[u32]),
    ) -> Result<()> {
        let staging = self.staging_buffer(
            &self.reused.readback,
            "staging.readback",
            wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        );
        let mut offset = 0;
        while offset < bytes {
            let piece = (bytes - offset).min(staging.size());
            let mut encoder = self.device.create_command_encoder(&Default::default());
            encoder.copy_buffer_to_buffer(buffer, offset, staging, 0, piece);
            self.submit_and_wait(encoder.finish())?;
            self.read_mapped(staging, piece, &mut visit)?;
            offset += piece;
        }
        Ok(())
    }

    /// Whether `buffers`, one after the other, hold what `expected` says.
    pub fn check_output(&self, buffers: &[&wgpu::Buffer], expected: &Expected) -> Result<()> {
        let mut checker = expected.checker();
        let mut left = 4 * expected.len_words() as u64;
        for buffer in buffers {
            let bytes = left.min(buffer.size());
            self.read_pieces(buffer, bytes, |piece| checker.feed(piece))?;
            left -= bytes;
        }
        checker.finish().map_err(Error::Verification)
    }

    /// Runs the kernel once and checks every output against its reference.
    pub fn verify(&self, kernel: &Kernel, expected: &[Expected]) -> Result<()> {
        self.scoped(|| {
            self.dispatch_once(kernel)?;
            for (output, expected) in kernel.outputs.iter().zip(expected) {
                self.check_output(&[output], expected)?;
            }
            Ok(())
        })?
    }

    /// Runs an arbitrary WGSL kernel once: `inputs` bound read-only at bindings 0..k,
    /// an output of `output_words` words at binding k, returned. For tests that hold
    /// the simulator against the GPU.
    pub fn run_wgsl(
        &self,
        source: &str,
        inputs: &[&[u32]],
        output_words: usize,
        workgroups: [u32; 3],
    ) -> Result<Vec<u32>> {
        let mut buffers: Vec<Buffer> = inputs.iter().map(|i| Buffer::Input(i.len())).collect();
        buffers.push(Buffer::Output(output_words));
        let pipeline = Pipeline {
            label: "wgsl",
            source,
            buffers: &buffers,
            overrides: &[],
            build: Build::Default,
        };
        let inputs: Vec<Vec<u32>> = inputs.iter().map(|i| i.to_vec()).collect();
        let kernel = self.assemble(&pipeline, &inputs, workgroups)?;
        self.scoped(|| {
            self.dispatch_once(&kernel)?;
            let mut words = Vec::with_capacity(output_words);
            self.read_pieces(&kernel.outputs[0], 4 * output_words as u64, |piece| {
                words.extend_from_slice(piece);
            })?;
            Ok(words)
        })?
    }

    fn dispatch_once(&self, kernel: &Kernel) -> Result<()> {
        let mut encoder = self.device.create_command_encoder(&Default::default());
        kernel.encode_pass(&mut encoder, None, 1);
        self.submit_and_wait(encoder.finish())
    }
}

/// Writes `bytes` at the start of the mapped `staging` buffer, on all cores: a copy
/// of tens of MiB is bound by one core's memory bandwidth.
fn write_parallel(staging: &wgpu::Buffer, bytes: &[u8]) -> Result<()> {
    // Mapped ranges start at multiples of 8 bytes.
    let part = bytes
        .len()
        .div_ceil(rayon::current_num_threads())
        .max(1 << 20)
        .next_multiple_of(8);
    let views = (0..bytes.len())
        .step_by(part)
        .map(|start| {
            let end = (start + part).min(bytes.len());
            staging
                .get_mapped_range_mut(start as u64..end as u64)
                .map(|view| (view, &bytes[start..end]))
                .map_err(|error| Error::Map(error.to_string()))
        })
        .collect::<Result<Vec<_>>>()?;
    views
        .into_par_iter()
        .for_each(|(mut view, part)| view.copy_from_slice(part));
    Ok(())
}

/// What a case's kernel is built from: its shader, whose reflected bindings the
/// case's buffers agree with.
fn describe_pipeline<'a>(
    experiment: &Experiment,
    case: &'a Case,
    build: Build,
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
        overrides: &case.overrides,
        build,
    })
}

/// Everything a compute pipeline is built from.
struct Pipeline<'a> {
    label: &'a str,
    source: &'a str,
    buffers: &'a [Buffer],
    overrides: &'a [(&'a str, f64)],
    build: Build,
}

impl Pipeline<'_> {
    /// Everything the compiled pipeline depends on: two pipelines with the same key
    /// are the same.
    fn key(&self) -> String {
        let bindings: Vec<Binding> = self.buffers.iter().map(Buffer::binding).collect();
        format!(
            "{}|{:?}|{:?}|{}",
            self.build, self.overrides, bindings, self.source
        )
    }
}

/// A case ready to dispatch: pipeline, bound buffers and grid.
pub struct Kernel {
    pipeline: wgpu::ComputePipeline,
    bind_group: wgpu::BindGroup,
    workgroups: [u32; 3],
    outputs: Vec<wgpu::Buffer>,
}

impl Kernel {
    /// A kernel over buffers its caller owns (and checks).
    pub fn new(
        pipeline: wgpu::ComputePipeline,
        bind_group: wgpu::BindGroup,
        workgroups: [u32; 3],
    ) -> Self {
        Kernel {
            pipeline,
            bind_group,
            workgroups,
            outputs: Vec::new(),
        }
    }

    /// One compute pass of `dispatches` back-to-back dispatches, optionally with
    /// timestamps at its beginning and end.
    pub fn encode_pass(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        timestamp_writes: Option<wgpu::ComputePassTimestampWrites>,
        dispatches: u32,
    ) {
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: None,
            timestamp_writes,
        });
        pass.set_pipeline(&self.pipeline);
        pass.set_bind_group(0, &self.bind_group, &[]);
        let [x, y, z] = self.workgroups;
        for _ in 0..dispatches {
            pass.dispatch_workgroups(x, y, z);
        }
    }
}

/// Why `adapter` runs no compute shaders, if it runs none. wgpu asks EGL for a desktop
/// OpenGL 3.3 context; Mesa gives 4.5, but NVIDIA's driver gives exactly 3.3, whose
/// GLSL 3.30 naga cannot write compute shaders in (they need OpenGL 4.3), and opening
/// the device then fails as "Parent device is lost".
fn no_compute(adapter: &wgpu::Adapter) -> Option<String> {
    let info = adapter.get_info();
    if !adapter
        .get_downlevel_capabilities()
        .flags
        .contains(wgpu::DownlevelFlags::COMPUTE_SHADERS)
    {
        return Some(String::new());
    }
    let desktop_gl = info.backend == wgpu::Backend::Gl && !info.driver_info.contains("OpenGL ES");
    let version = gl_version(&info.driver_info)?;
    (desktop_gl && version < (4, 3)).then(|| {
        format!(
            ": its OpenGL context is version {}.{} and compute shaders need 4.3 (wgpu asks \
             EGL for 3.3, which this driver gives as it is)",
            version.0, version.1
        )
    })
}

/// The (major, minor) an OpenGL version string starts with ("3.3.0 NVIDIA 580.159.04",
/// "4.5 (Core Profile) Mesa 22.3.6").
fn gl_version(text: &str) -> Option<(u32, u32)> {
    let mut parts = text.split_whitespace().next()?.split('.');
    Some((parts.next()?.parse().ok()?, parts.next()?.parse().ok()?))
}

/// What `membench devices` prints about one adapter.
pub fn adapter_report(index: usize, adapter: &wgpu::Adapter) -> String {
    let info = adapter.get_info();
    let limits = adapter.limits();
    let features = adapter.features();
    let yes_no = |feature| {
        if features.contains(feature) {
            "yes"
        } else {
            "no"
        }
    };
    let subgroup = subgroup_label(adapter);
    format!(
        "{index}: {}\n   backend {:?}, type {:?}, driver {} {}\n   compute shaders {}, subgroup size {}, timestamps {} (inside encoders {}), \
         subgroups {}, mappable storage {}\n   \
         max storage binding {} MiB, max buffer {} MiB, workgroup invocations {}, workgroup storage {} KiB, \
         workgroups per dimension {}",
        info.name,
        info.backend,
        info.device_type,
        info.driver,
        info.driver_info,
        if no_compute(adapter).is_none() {
            "yes"
        } else {
            "no"
        },
        if subgroup.is_empty() { "-" } else { &subgroup },
        yes_no(wgpu::Features::TIMESTAMP_QUERY),
        yes_no(wgpu::Features::TIMESTAMP_QUERY_INSIDE_ENCODERS),
        yes_no(wgpu::Features::SUBGROUP),
        yes_no(wgpu::Features::MAPPABLE_PRIMARY_BUFFERS),
        limits.max_storage_buffer_binding_size >> 20,
        limits.max_buffer_size >> 20,
        limits.max_compute_invocations_per_workgroup,
        limits.max_compute_workgroup_storage_size >> 10,
        limits.max_compute_workgroups_per_dimension,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gl_versions_are_read_from_the_driver_string() {
        assert_eq!(gl_version("3.3.0 NVIDIA 580.159.04"), Some((3, 3)));
        assert_eq!(gl_version("4.5 (Core Profile) Mesa 22.3.6"), Some((4, 5)));
        assert_eq!(gl_version("NVIDIA"), None);
        assert_eq!(gl_version(""), None);
    }

    #[test]
    fn adapters_are_named_by_index_or_by_part_of_one_name() {
        let names = ["llvmpipe (LLVM 15)", "llvmpipe (LLVM 15)", "NVIDIA H100"].map(String::from);
        assert_eq!(adapter_matches(&names, "1"), [1]);
        assert_eq!(adapter_matches(&names, "3"), [0usize; 0]);
        assert_eq!(adapter_matches(&names, "h100"), [2]);
        assert_eq!(adapter_matches(&names, "LLVMpipe"), [0, 1]);
        assert_eq!(adapter_matches(&names, ""), [0, 1, 2]);
    }
}
