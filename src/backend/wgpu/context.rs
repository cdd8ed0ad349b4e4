//! The device context: the device opened with the adapter's own limits, what the CSV
//! records about it, the features it offers, and submitting to it with a timeout and
//! error scopes.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use super::adapter::{
    describe, instance, no_compute, select_adapter, subgroup_label, vendor_name, wanted_features,
};
use super::buffers::Staging;
use super::clocks::ClockGuard;
use super::pipelines::PipelineCache;
use super::timing::Timestamps;
use crate::error::{Error, Result};
use crate::results::{GpuIdentity, RunInfo};
use crate::suite::sizing::SHARED_BLOCK_BYTES;
use crate::suite::{FLUSH_BYTES, SOFTWARE_FLUSH_BYTES, Setting, Sizing, WgpuBuild};
use crate::text::shown_lines;

/// Device, queue and what the CSV records about them; built once, passed by reference.
#[derive(Debug)]
pub struct GpuContext {
    /// The adapter the device came from.
    pub adapter: wgpu::Adapter,
    /// The device every buffer and pipeline is made on.
    pub device: wgpu::Device,
    pub(crate) queue: wgpu::Queue,
    /// The adapter's name, vendor, backend and driver.
    pub info: wgpu::AdapterInfo,
    /// The limits the device was opened with.
    pub limits: wgpu::Limits,
    /// How long one submission may take before the device counts as hung.
    pub(crate) timeout: Duration,
    /// Staging and poison buffers every case reuses, made on first use.
    pub(super) staging: Staging,
    /// Pipelines compiled so far, reused by the cases that build the same one.
    pub(super) pipeline_cache: PipelineCache,
    /// The query set every timed batch reuses, made on first use: one per batch costs
    /// tens of milliseconds to create.
    pub(super) timestamps: OnceLock<Timestamps>,
    /// What a cold dispatch's untimed flush clears, made on first use.
    flush: OnceLock<wgpu::Buffer>,
    /// The clock guard, made at the first timed case.
    pub(super) clock_guard: OnceLock<ClockGuard>,
    /// Which physical GPU this is, and the host.
    pub identity: GpuIdentity,
}

impl GpuContext {
    /// The buffer a cold dispatch's flush clears: [`FLUSH_BYTES`] ([`SOFTWARE_FLUSH_BYTES`]
    /// on a CPU), or the device's largest buffer if smaller.
    pub fn flush_buffer(&self) -> &wgpu::Buffer {
        self.flush.get_or_init(|| {
            let bytes = match self.info.device_type {
                wgpu::DeviceType::Cpu => SOFTWARE_FLUSH_BYTES,
                _ => FLUSH_BYTES,
            };
            self.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("flush"),
                size: bytes.min(self.limits.max_buffer_size),
                usage: wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            })
        })
    }

    /// Opens the adapter `selector` picks (an index or a part of its name; else the
    /// best one), each submission given `timeout`.
    pub fn new(selector: Option<&str>, timeout: Duration) -> Result<Self> {
        let instance = instance()?;
        let adapter = select_adapter(&instance, selector)?;
        let info = super::adapter::info(&adapter);
        if let Some(why) = no_compute(&adapter) {
            return Err(Error::NoCompute {
                adapter: describe(&info),
                why,
            });
        }
        // The defaults cap workgroups at 256 invocations and bindings at 128 MiB:
        // ask for what the adapter really has.
        let limits = adapter.limits();
        let desc = wgpu::DeviceDescriptor {
            label: Some("membench"),
            required_features: wanted_features(&adapter),
            required_limits: limits.clone(),
            memory_hints: wgpu::MemoryHints::Manual {
                suballocated_device_memory_block_size: SHARED_BLOCK_BYTES..SHARED_BLOCK_BYTES,
            },
            ..Default::default()
        };
        // With host memory import where Vulkan offers it (the transfers' pinned analogue).
        let (device, queue) = match super::host_memory::open_device(&adapter, &desc) {
            Some(opened) => opened?,
            None => pollster::block_on(adapter.request_device(&desc))?,
        };
        // Errors inside a case are caught by error scopes; anything else is reported,
        // not a panic that would sink the run.
        device.on_uncaptured_error(Arc::new(|error| {
            stderrln!("membench: wgpu: {}", shown_lines(&error.to_string()));
        }));
        device.set_device_lost_callback(|reason, message| {
            if reason != wgpu::DeviceLostReason::Destroyed {
                stderrln!(
                    "membench: device lost ({reason:?}): {}",
                    shown_lines(&message)
                );
            }
        });
        let identity = super::identity::of(&adapter, &info)?;
        Ok(GpuContext {
            identity,
            info,
            adapter,
            device,
            queue,
            limits,
            timeout,
            staging: Staging::default(),
            pipeline_cache: PipelineCache::default(),
            timestamps: OnceLock::new(),
            flush: OnceLock::new(),
            clock_guard: OnceLock::new(),
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
            .min(limits.max_buffer_size)
            .min(crate::suite::MAX_BINDING_BYTES);
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
            host_import_skip: super::host_memory::unavailable(&self.device),
            mappable_storage: self
                .device
                .features()
                .contains(wgpu::Features::MAPPABLE_PRIMARY_BUFFERS),
            subgroup_sizes: self
                .device
                .features()
                .contains(wgpu::Features::SUBGROUP)
                .then_some((self.info.subgroup_min_size, self.info.subgroup_max_size)),
            shader_f16: self.device.features().contains(wgpu::Features::SHADER_F16),
            matrix,
            max_texture_dimension_2d: limits.max_texture_dimension_2d,
        })
    }

    /// The columns every row of a run on this device records, for kernels built with
    /// `build`.
    pub fn run_info(&self, build: WgpuBuild) -> RunInfo {
        let info = &self.info;
        RunInfo {
            device: info.name.clone(),
            vendor: vendor_name(info.vendor),
            backend: format!("{:?}", info.backend).to_lowercase(),
            driver: format!("{} {}", info.driver, info.driver_info)
                .trim()
                .to_owned(),
            subgroup_size: subgroup_label(&self.adapter),
            setting: Setting::Wgpu(build),
            timestamp_utc: humantime::format_rfc3339_seconds(std::time::SystemTime::now())
                .to_string(),
            gpu: self.identity.clone(),
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

    /// Whether the device timestamps compute passes (the GPU clock).
    pub fn has_timestamps(&self) -> bool {
        self.device
            .features()
            .contains(wgpu::Features::TIMESTAMP_QUERY)
    }

    /// Timestamps may be written between commands of an encoder, not only around passes.
    pub(crate) fn has_encoder_timestamps(&self) -> bool {
        self.device
            .features()
            .contains(wgpu::Features::TIMESTAMP_QUERY_INSIDE_ENCODERS)
    }

    /// Runs `work` inside validation, out-of-memory and internal error scopes and
    /// turns whatever they caught into an error.
    pub(crate) fn scoped<T>(&self, work: impl FnOnce() -> T) -> Result<T> {
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
    pub(crate) fn submit_and_wait(&self, commands: wgpu::CommandBuffer) -> Result<()> {
        let index = self.queue.submit([commands]);
        self.wait(index)
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
}
