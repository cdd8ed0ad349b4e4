//! The launch family's clock: a kernel's repetitions issued in one of the ways
//! [`Dispatch`] names, one sample per submission. GPU-clock samples are timed from the
//! beginning of the first pass to the end of the last; host-clock samples from the
//! first submission to the end of the wait, their command buffers encoded beforehand.

use std::time::Instant;

use super::kernel::BoundResource;
use super::timing::gpu_ns;
use super::{BoundKernel, GpuContext};
use crate::error::{Error, Result};
use crate::measure::{TimedWork, Timer};
use crate::suite::Dispatch;

/// A built kernel whose repetitions are issued as `dispatch`.
#[derive(Debug)]
pub(super) struct LaunchClock<'a> {
    ctx: &'a GpuContext,
    kernel: &'a BoundKernel,
    dispatch: Dispatch,
    /// One bind group per dispatch of a sample, each over outputs of its own (made as
    /// samples grow): wgpu tracks a buffer whole, so only another buffer spares a
    /// dispatch the barrier.
    apart: Vec<Vec<wgpu::BindGroup>>,
    /// The grid of an indirect dispatch.
    indirect: Option<wgpu::Buffer>,
}

impl<'a> LaunchClock<'a> {
    pub(super) fn new(ctx: &'a GpuContext, kernel: &'a BoundKernel, dispatch: Dispatch) -> Self {
        LaunchClock {
            ctx,
            kernel,
            dispatch,
            apart: Vec::new(),
            indirect: None,
        }
    }

    /// Bind groups over outputs of their own for `dispatches` dispatches, the new
    /// outputs cleared (so that wgpu's lazy zeroing is not on the clock).
    fn grow(&mut self, dispatches: u32) -> Result<()> {
        let ctx = self.ctx;
        let kernel = self.kernel;
        ctx.scoped(|| {
            let mut encoder = ctx.device.create_command_encoder(&Default::default());
            while self.apart.len() < dispatches as usize {
                let bound: Vec<BoundResource> = kernel
                    .bound
                    .iter()
                    .map(|bound| match bound {
                        BoundResource::Output(output) => {
                            let own = ctx.device.create_buffer(&wgpu::BufferDescriptor {
                                label: Some("launch.apart"),
                                size: output.size(),
                                usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
                                mapped_at_creation: false,
                            });
                            encoder.clear_buffer(&own, 0, None);
                            BoundResource::Output(own)
                        }
                        other => other.clone(),
                    })
                    .collect();
                let group = ctx.bind("launch.apart", &kernel.slots, &kernel.pipeline, &bound);
                self.apart.push(group);
            }
            ctx.submit_and_wait(encoder.finish())
        })?
    }

    /// The passes of one sample of `repeats` dispatches, timestamped at the beginning
    /// of the first and the end of the last when `timed`.
    fn encode(&self, encoder: &mut wgpu::CommandEncoder, repeats: u32, timed: bool) {
        let query_set = timed.then(|| &self.ctx.timestamps().query_set);
        // A pass between the first and the last writes no timestamp (wgpu refuses
        // timestamp writes that name none).
        let writes = |begin: bool, end: bool| {
            query_set
                .filter(|_| begin || end)
                .map(|query_set| wgpu::ComputePassTimestampWrites {
                    query_set,
                    beginning_of_pass_write_index: begin.then_some(0),
                    end_of_pass_write_index: end.then_some(1),
                })
        };
        let [x, y, z] = self.kernel.workgroups;
        let passes = if self.dispatch == Dispatch::PassEach {
            repeats
        } else {
            1
        };
        let per_pass = repeats / passes;
        for pass_index in 0..passes {
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: None,
                timestamp_writes: writes(pass_index == 0, pass_index + 1 == passes),
            });
            pass.set_pipeline(&self.kernel.pipeline);
            for index in 0..per_pass {
                let groups = match self.dispatch {
                    Dispatch::Pass => &self.kernel.bind_groups,
                    _ => &self.apart[(pass_index * per_pass + index) as usize],
                };
                super::kernel::set_bind_groups(&mut pass, groups);
                match &self.indirect {
                    Some(arguments) => pass.dispatch_workgroups_indirect(arguments, 0),
                    None => pass.dispatch_workgroups(x, y, z),
                }
            }
        }
    }

    /// One sample of `repeats` dispatches on the GPU clock (the host's around submit
    /// and wait where the adapter has no timestamps).
    fn gpu_sample(&mut self, repeats: u32) -> Result<f64> {
        let ctx = self.ctx;
        let timed = ctx.has_timestamps();
        let mut encoder = ctx.device.create_command_encoder(&Default::default());
        self.encode(&mut encoder, repeats, timed);
        if timed {
            let ticks = ctx.scoped(|| ctx.timestamps().read(ctx, encoder, 2))??;
            return gpu_ns(ctx, ticks[0], ticks[1]);
        }
        let commands = encoder.finish();
        let start = Instant::now();
        ctx.scoped(|| ctx.submit_and_wait(commands))??;
        Ok(start.elapsed().as_nanos() as f64)
    }

    /// One sample of `repeats` submissions of one dispatch each, on the host clock:
    /// each waited for, or all and then the last.
    fn host_sample(&self, repeats: u32) -> Result<f64> {
        let ctx = self.ctx;
        let commands: Vec<wgpu::CommandBuffer> = (0..repeats)
            .map(|_| {
                let mut encoder = ctx.device.create_command_encoder(&Default::default());
                self.kernel.encode_pass(&mut encoder, None, 1);
                encoder.finish()
            })
            .collect();
        let each = self.dispatch == Dispatch::SubmitEach;
        ctx.scoped(|| {
            let start = Instant::now();
            let mut last = None;
            for command in commands {
                let index = ctx.queue.submit([command]);
                if each {
                    ctx.wait(index)?;
                } else {
                    last = Some(index);
                }
            }
            if let Some(index) = last {
                ctx.wait(index)?;
            }
            Ok(start.elapsed().as_nanos() as f64)
        })?
    }

    fn sample(&mut self, repeats: u32) -> Result<f64> {
        match self.dispatch {
            Dispatch::SubmitEach | Dispatch::SubmitAll => self.host_sample(repeats),
            Dispatch::Pass | Dispatch::Apart | Dispatch::PassEach | Dispatch::Indirect => {
                self.gpu_sample(repeats)
            }
            Dispatch::Graph => Err(Error::Case(
                "CUDA graphs have no counterpart in wgpu".to_owned(),
            )),
        }
    }
}

impl TimedWork for LaunchClock<'_> {
    fn timer(&self) -> Timer {
        if self.dispatch.host_clock() || !self.ctx.has_timestamps() {
            Timer::Wall
        } else {
            Timer::Gpu
        }
    }

    fn settle(&mut self) -> Result<Option<String>> {
        self.ctx.settle_clocks()
    }

    /// Every sample is its own submission: a buffer of the clock's own used in two
    /// samples of one command buffer would get a barrier.
    fn samples_ns(&mut self, samples: u32, repeats: u32, warmup: u32) -> Result<Vec<f64>> {
        let repeats = repeats.max(1);
        if !matches!(self.dispatch, Dispatch::Pass) && !self.dispatch.host_clock() {
            self.grow(repeats)?;
        }
        if self.dispatch == Dispatch::Indirect && self.indirect.is_none() {
            let usage = wgpu::BufferUsages::INDIRECT;
            let grid = self
                .ctx
                .upload("launch.indirect", usage, &self.kernel.workgroups)?;
            self.indirect = Some(grid);
        }
        for _ in 0..warmup.div_ceil(repeats) {
            self.sample(repeats)?;
        }
        (0..samples).map(|_| self.sample(repeats)).collect()
    }
}
