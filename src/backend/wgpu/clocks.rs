//! The clock guard: a kernel is timed only once the GPU runs at the clocks it reaches
//! under sustained load. GPUs scale their clocks with load, and the suite's load comes
//! in bursts (a case's samples, then the host verifying and making the next case's
//! data). `--api wgpu` runs measured on-chip kernels much slower in some runs than in
//! others, each case steady within itself, and runs with the CUDA backend in the same
//! process did not (docs/findings.md, Clocks follow load under Vulkan alone). So before a
//! kernel's samples a reference kernel of dependent integer arithmetic (bound by the
//! SM clock alone) runs until it is as fast as it has been this run.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::timing::gpu_pass_times_ns;
use super::{BoundKernel, GpuContext};
use crate::error::{Error, Result};

/// A chain of dependent multiply-adds per invocation: its time follows the SM clock.
const REFERENCE_WGSL: &str = "
@group(0) @binding(0) var<storage, read_write> out: array<u32>;
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    var x = id.x;
    for (var i = 0u; i < 2048u; i++) {
        x = x * 1664525u + 1013904223u;
    }
    out[id.x] = x;
}
";
const WORKGROUPS: u32 = 1024;
const INVOCATIONS: u64 = 256 * WORKGROUPS as u64;

/// One timed pass of the reference lasts about this long (repeated dispatches).
const PASS_TARGET: Duration = Duration::from_millis(1);
/// Settled: the pass within this fraction of the run's fastest and of the pass before.
const TOLERANCE: f64 = 0.015;
/// At the run's first case the reference runs at least this long: its fastest pass is
/// the standard for the rest of the run.
const FIRST_SETTLE: Duration = Duration::from_millis(300);
/// Longest wait for the clocks; the case is then measured and its note says so.
const MAX_SETTLE: Duration = Duration::from_secs(3);

/// The reference kernel and the fastest pass it ran this run.
#[derive(Debug)]
pub(crate) struct ClockGuard {
    reference: BoundKernel,
    /// Dispatches per timed pass, and the fastest pass's time per dispatch (ns).
    state: Mutex<Option<(u32, f64)>>,
}

impl ClockGuard {
    pub(crate) fn new(ctx: &GpuContext) -> Result<Self> {
        let reference = ctx.scoped(|| {
            let device = &ctx.device;
            let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
                label: Some("clock reference"),
                source: wgpu::ShaderSource::Wgsl(REFERENCE_WGSL.into()),
            });
            let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some("clock reference"),
                layout: None,
                module: &module,
                entry_point: Some("main"),
                compilation_options: Default::default(),
                cache: None,
            });
            let out = device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("clock reference"),
                size: 4 * INVOCATIONS,
                usage: wgpu::BufferUsages::STORAGE,
                mapped_at_creation: false,
            });
            let bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some("clock reference"),
                layout: &pipeline.get_bind_group_layout(0),
                entries: &[wgpu::BindGroupEntry {
                    binding: 0,
                    resource: out.as_entire_binding(),
                }],
            });
            BoundKernel::new(pipeline, bind_group, [WORKGROUPS, 1, 1])
        })?;
        Ok(ClockGuard {
            reference,
            state: Mutex::new(None),
        })
    }

    /// Runs the reference until its passes are as fast as this run's fastest (within
    /// [`TOLERANCE`], two in a row); `Some(note)` when they were not after
    /// [`MAX_SETTLE`].
    pub(crate) fn settle(&self, ctx: &GpuContext) -> Result<Option<String>> {
        let mut state = self
            .state
            .lock()
            .map_err(|_| Error::Internal("the clock guard's lock is poisoned".to_owned()))?;
        let started = Instant::now();
        let first = state.is_none();
        let (dispatches, mut fastest) = match *state {
            Some(known) => known,
            None => {
                let one = self.pass_ns(ctx, 1)?;
                #[expect(
                    clippy::cast_possible_truncation,
                    reason = "a whole number of dispatches, at least 1; `as` saturates a huge one"
                )]
                let dispatches = (PASS_TARGET.as_nanos() as f64 / one).ceil().max(1.0) as u32;
                (dispatches, f64::INFINITY)
            }
        };
        let mut last = f64::INFINITY;
        let settled = loop {
            let ns = self.pass_ns(ctx, dispatches)? / f64::from(dispatches);
            let previous = std::mem::replace(&mut last, ns);
            fastest = fastest.min(ns);
            let near = |other: f64| ns <= other * (1.0 + TOLERANCE);
            let long_enough = !first || started.elapsed() >= FIRST_SETTLE;
            if near(fastest) && near(previous) && long_enough {
                break true;
            }
            if started.elapsed() >= MAX_SETTLE {
                break false;
            }
        };
        *state = Some((dispatches, fastest));
        Ok((!settled).then(|| {
            format!(
                "clocks not settled after {} s: a reference kernel ran {:.0} % slower than this run's fastest",
                MAX_SETTLE.as_secs(),
                (last / fastest - 1.0) * 100.0
            )
        }))
    }

    /// One timed pass of `dispatches` reference dispatches.
    fn pass_ns(&self, ctx: &GpuContext, dispatches: u32) -> Result<f64> {
        let times = gpu_pass_times_ns(ctx, &self.reference, 1, dispatches, 0, 1, None)?;
        times
            .first()
            .copied()
            .ok_or_else(|| Error::Internal("the clock reference gave no time".to_owned()))
    }
}

impl GpuContext {
    /// Waits for the clocks of sustained load before a kernel is timed (see
    /// [`super::clocks`]); `Some(note)` when they did not come. Not on software adapters,
    /// nor without GPU timestamps.
    pub(crate) fn settle_clocks(&self) -> Result<Option<String>> {
        if self.info.device_type == wgpu::DeviceType::Cpu || !self.has_timestamps() {
            return Ok(None);
        }
        let guard = match self.clock_guard.get() {
            Some(guard) => guard,
            None => {
                let guard = ClockGuard::new(self)?;
                self.clock_guard.get_or_init(|| guard)
            }
        };
        guard.settle(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reference_kernel_is_valid_wgsl() {
        let module = naga::front::wgsl::parse_str(REFERENCE_WGSL).unwrap();
        naga::valid::Validator::new(
            naga::valid::ValidationFlags::all(),
            naga::valid::Capabilities::empty(),
        )
        .validate(&module)
        .unwrap();
    }
}
