//! The kernel's clock: GPU timestamps around compute passes of back-to-back
//! dispatches, or, without timestamp queries, the host clock around submit and wait.
//! All samples of a batch go into one submission (warm-up passes first), each
//! submission holding at most about [`SUBMISSION_TARGET_NS`] of work. The query set
//! and the buffers that bring timestamps to the host are made once per context.

use std::time::Instant;

use super::{BoundKernel, GpuContext};
use crate::error::{Error, Result};
use crate::measure::{TimedWork, Timer};
use crate::suite::Cache;

/// GPU work per submission: far inside the hang timeout even on software adapters.
const SUBMISSION_TARGET_NS: f64 = 0.5e9;

/// A built kernel on its device's clock.
#[derive(Debug)]
pub(crate) struct KernelClock<'a> {
    ctx: &'a GpuContext,
    kernel: &'a BoundKernel,
    cache: Cache,
    /// The fastest dispatch seen so far: sizes the submissions.
    fastest_dispatch_ns: Option<f64>,
}

impl<'a> KernelClock<'a> {
    pub(crate) fn new(ctx: &'a GpuContext, kernel: &'a BoundKernel, cache: Cache) -> Self {
        KernelClock {
            ctx,
            kernel,
            cache,
            fastest_dispatch_ns: None,
        }
    }
}

impl TimedWork for KernelClock<'_> {
    fn timer(&self) -> Timer {
        if self.ctx.has_timestamps() {
            Timer::Gpu
        } else {
            Timer::Wall
        }
    }

    fn settle(&mut self) -> Result<Option<String>> {
        self.ctx.settle_clocks()
    }

    /// One sample is one compute pass of `repeats` dispatches.
    /// Warm: one sample is one pass of `repeats` dispatches. Cold: one sample is the sum
    /// of `repeats` passes of one dispatch, each after an untimed flush.
    fn samples_ns(&mut self, samples: u32, repeats: u32, warmup: u32) -> Result<Vec<f64>> {
        let warmup_passes = warmup.div_ceil(repeats.max(1));
        let (flush, passes, dispatches) = match self.cache {
            Cache::Warm => (None, samples, repeats),
            Cache::Cold => (Some(self.ctx.flush_buffer()), samples * repeats, 1),
        };
        let pass_times = if self.timer() == Timer::Gpu {
            #[expect(
                clippy::cast_possible_truncation,
                reason = "a whole number of dispatches per submission; `as` saturates a huge one"
            )]
            let per_submission = match self.fastest_dispatch_ns {
                Some(ns) => (SUBMISSION_TARGET_NS / (ns * f64::from(dispatches))) as u32,
                None => passes,
            };
            gpu_pass_times_ns(
                self.ctx,
                self.kernel,
                passes,
                dispatches,
                warmup_passes,
                per_submission,
                flush,
            )?
        } else {
            wall_pass_times_ns(
                self.ctx,
                self.kernel,
                passes,
                dispatches,
                warmup_passes,
                flush,
            )?
        };
        let passes_per_sample = (passes / samples.max(1)).max(1) as usize;
        let times: Vec<f64> = pass_times
            .chunks(passes_per_sample)
            .map(|sample| sample.iter().sum())
            .collect();
        let fastest = times.iter().copied().fold(f64::INFINITY, f64::min) / f64::from(repeats);
        self.fastest_dispatch_ns =
            Some(self.fastest_dispatch_ns.map_or(fastest, |f| f.min(fastest)));
        Ok(times)
    }
}

/// A query set of the most timestamps one submission may write, and the buffers that
/// bring them to the host.
#[derive(Debug)]
pub(crate) struct Timestamps {
    pub(crate) query_set: wgpu::QuerySet,
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
    pub(crate) fn read(
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

impl GpuContext {
    /// The timestamp queries every timed batch reuses.
    pub(crate) fn timestamps(&self) -> &Timestamps {
        self.timestamps
            .get_or_init(|| Timestamps::new(&self.device))
    }
}

/// Durations of `passes` timed passes of `dispatches` each, after `warmup` untimed
/// passes, in submissions of at most `per_submission` timed passes (the warm-up goes
/// with the first); with `flush`, each timed pass follows an untimed clear of it.
pub(crate) fn gpu_pass_times_ns(
    ctx: &GpuContext,
    kernel: &BoundKernel,
    passes: u32,
    dispatches: u32,
    warmup: u32,
    per_submission: u32,
    flush: Option<&wgpu::Buffer>,
) -> Result<Vec<f64>> {
    let mut times = Vec::with_capacity(passes as usize);
    // A query set holds at most 4096 timestamps.
    let per_submission = per_submission.clamp(1, wgpu::QUERY_SET_MAX_QUERIES / 2);
    let mut warmup = warmup;
    let mut left = passes;
    while left > 0 {
        let batch = left.min(per_submission);
        times.extend(gpu_batch(ctx, kernel, batch, dispatches, warmup, flush)?);
        warmup = 0;
        left -= batch;
    }
    Ok(times)
}

fn gpu_batch(
    ctx: &GpuContext,
    kernel: &BoundKernel,
    passes: u32,
    dispatches: u32,
    warmup: u32,
    flush: Option<&wgpu::Buffer>,
) -> Result<Vec<f64>> {
    let queries = 2 * passes;
    let timestamps = ctx.timestamps();
    let ticks = ctx.scoped(|| -> Result<Vec<u64>> {
        let mut encoder = ctx.device.create_command_encoder(&Default::default());
        for _ in 0..warmup {
            kernel.encode_pass(&mut encoder, None, dispatches);
        }
        for pass in 0..passes {
            if let Some(flush) = flush {
                encoder.clear_buffer(flush, 0, None);
            }
            let writes = wgpu::ComputePassTimestampWrites {
                query_set: &timestamps.query_set,
                beginning_of_pass_write_index: Some(2 * pass),
                end_of_pass_write_index: Some(2 * pass + 1),
            };
            kernel.encode_pass(&mut encoder, Some(writes), dispatches);
        }
        timestamps.read(ctx, encoder, queries)
    })??;
    ticks
        .chunks_exact(2)
        .map(|pair| gpu_ns(ctx, pair[0], pair[1]))
        .collect()
}

/// Nanoseconds between two timestamps, in ticks; an error unless time advanced.
pub(crate) fn gpu_ns(ctx: &GpuContext, begin: u64, end: u64) -> Result<f64> {
    let ns = end.wrapping_sub(begin) as f64 * f64::from(ctx.queue.get_timestamp_period());
    if ns > 0.0 {
        Ok(ns)
    } else {
        Err(Error::Gpu("a timestamp pair did not advance".to_owned()))
    }
}

/// Wall-clock fallback: submit and wait per pass, so the time includes submission.
fn wall_pass_times_ns(
    ctx: &GpuContext,
    kernel: &BoundKernel,
    passes: u32,
    dispatches: u32,
    warmup: u32,
    flush: Option<&wgpu::Buffer>,
) -> Result<Vec<f64>> {
    let mut times = Vec::with_capacity(passes as usize);
    for pass in 0..warmup + passes {
        if let Some(flush) = flush {
            let mut encoder = ctx.device.create_command_encoder(&Default::default());
            encoder.clear_buffer(flush, 0, None);
            ctx.submit_and_wait(encoder.finish())?;
        }
        let mut encoder = ctx.device.create_command_encoder(&Default::default());
        kernel.encode_pass(&mut encoder, None, dispatches);
        let commands = encoder.finish();
        let start = Instant::now();
        ctx.submit_and_wait(commands)?;
        if pass >= warmup {
            times.push(start.elapsed().as_nanos() as f64);
        }
    }
    Ok(times)
}
