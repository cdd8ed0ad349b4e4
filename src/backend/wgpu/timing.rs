//! GPU-clock timing: warm-up, timed samples from pass timestamps, statistics.
//!
//! One sample is one compute pass of `d` back-to-back dispatches between a beginning
//! and an end timestamp, divided by `d`. `d` is chosen from a pilot so that a sample
//! lasts about [`SAMPLE_TARGET_NS`]: short kernels are not lost in timestamp jitter.
//! All samples of a case go into one submission (warm-up passes first). Without
//! timestamp queries the wall clock around submit and wait is the recorded fallback.

use std::time::{Duration, Instant};

use crate::backend::wgpu::{GpuContext, Kernel};
use crate::error::{Error, Result};

/// Target length of one timed sample.
const SAMPLE_TARGET_NS: f64 = 2.0e6;
/// The most dispatches one sample may hold.
const MAX_DISPATCHES_PER_SAMPLE: u32 = 1024;
/// Timed GPU work per case beyond which fewer samples are taken (never under
/// [`MIN_SAMPLES`]): slow adapters still finish a run in reasonable time.
const CASE_TARGET_NS: f64 = 2.0e9;
pub const MIN_SAMPLES: u32 = 10;
/// GPU work per submission: far inside the hang timeout even on software adapters.
const SUBMISSION_TARGET_NS: f64 = 0.5e9;
/// Untimed GPU work before the timed samples: long enough for the clocks to leave
/// their idle state (GPUs driven through Vulkan ramp up under sustained load only).
const WARMUP_NS: f64 = 200.0e6;
/// The warm-up when the previous case finished less than [`WARM_GAP`] ago: the
/// clocks are still up, only caches and the pipeline need a first pass.
const SHORT_WARMUP_NS: f64 = 20.0e6;
const WARM_GAP: Duration = Duration::from_secs(1);

/// Which clock measured a case.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Timer {
    Gpu,
    Wall,
    /// Host clock from the call to the moment the data is usable (transfers).
    Host,
}

impl Timer {
    pub fn label(self) -> &'static str {
        match self {
            Timer::Gpu => "gpu",
            Timer::Wall => "wall",
            Timer::Host => "host",
        }
    }
}

/// The timed samples of one case, in nanoseconds per dispatch (or per transfer).
#[derive(Clone, Debug)]
pub struct Timing {
    pub samples_ns: Vec<f64>,
    pub timer: Timer,
    /// Dispatches (or transfers) in one sample.
    pub dispatches_per_sample: u32,
    /// What a reader of the row must know about this measurement, if anything.
    pub note: String,
}

/// Warm up, pick the dispatches per sample, and take `samples` timed samples (fewer,
/// but at least [`MIN_SAMPLES`], where they would exceed [`CASE_TARGET_NS`]).
pub fn time_kernel(ctx: &GpuContext, kernel: &Kernel, samples: u32) -> Result<Timing> {
    let timer = if ctx.has_timestamps() {
        Timer::Gpu
    } else {
        Timer::Wall
    };
    let measure = |passes, dispatches, warmup, per_submission| {
        if timer == Timer::Gpu {
            gpu_pass_times_ns(ctx, kernel, passes, dispatches, warmup, per_submission)
        } else {
            wall_pass_times_ns(ctx, kernel, passes, dispatches, warmup)
        }
    };
    let pilot = measure(3, 1, 1, 3)?;
    let fastest = pilot.iter().copied().fold(f64::INFINITY, f64::min).max(1.0);
    let dispatches =
        ((SAMPLE_TARGET_NS / fastest).ceil() as u32).clamp(1, MAX_DISPATCHES_PER_SAMPLE);
    let sample_ns = fastest * f64::from(dispatches);
    let warm = ctx
        .last_timed
        .lock()
        .ok()
        .and_then(|last| *last)
        .is_some_and(|last| last.elapsed() < WARM_GAP);
    let warmup_ns = if warm { SHORT_WARMUP_NS } else { WARMUP_NS };
    let warmup = (warmup_ns / sample_ns).ceil() as u32;
    let samples = samples.min(((CASE_TARGET_NS / sample_ns) as u32).max(MIN_SAMPLES));
    let per_submission = (SUBMISSION_TARGET_NS / sample_ns) as u32;
    let samples_ns = measure(samples, dispatches, warmup, per_submission)?
        .into_iter()
        .map(|ns| ns / f64::from(dispatches))
        .collect();
    if let Ok(mut last) = ctx.last_timed.lock() {
        *last = Some(Instant::now());
    }
    Ok(Timing {
        samples_ns,
        timer,
        dispatches_per_sample: dispatches,
        note: String::new(),
    })
}

/// GPU time of `dispatches` back-to-back dispatches in one pass, for benches that
/// choose their own iteration counts.
pub fn time_dispatches(ctx: &GpuContext, kernel: &Kernel, dispatches: u32) -> Result<Duration> {
    let ns = if ctx.has_timestamps() {
        gpu_pass_times_ns(ctx, kernel, 1, dispatches, 0, 1)?
    } else {
        wall_pass_times_ns(ctx, kernel, 1, dispatches, 0)?
    };
    Ok(Duration::from_nanos(
        ns.first().copied().unwrap_or(0.0) as u64
    ))
}

/// Durations of `passes` timed passes of `dispatches` each, after `warmup` untimed
/// passes, in submissions of at most `per_submission` timed passes (the warm-up goes
/// with the first).
fn gpu_pass_times_ns(
    ctx: &GpuContext,
    kernel: &Kernel,
    passes: u32,
    dispatches: u32,
    warmup: u32,
    per_submission: u32,
) -> Result<Vec<f64>> {
    let mut times = Vec::with_capacity(passes as usize);
    // A query set holds at most 4096 timestamps.
    let per_submission = per_submission.clamp(1, wgpu::QUERY_SET_MAX_QUERIES / 2);
    let mut warmup = warmup;
    let mut left = passes;
    while left > 0 {
        let batch = left.min(per_submission);
        times.extend(gpu_batch(ctx, kernel, batch, dispatches, warmup)?);
        warmup = 0;
        left -= batch;
    }
    Ok(times)
}

fn gpu_batch(
    ctx: &GpuContext,
    kernel: &Kernel,
    passes: u32,
    dispatches: u32,
    warmup: u32,
) -> Result<Vec<f64>> {
    let queries = 2 * passes;
    let timestamps = ctx.timestamps();
    let ticks = ctx.scoped(|| -> Result<Vec<u64>> {
        let mut encoder = ctx.device.create_command_encoder(&Default::default());
        for _ in 0..warmup {
            kernel.encode_pass(&mut encoder, None, dispatches);
        }
        for pass in 0..passes {
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
pub fn gpu_ns(ctx: &GpuContext, begin: u64, end: u64) -> Result<f64> {
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
    kernel: &Kernel,
    passes: u32,
    dispatches: u32,
    warmup: u32,
) -> Result<Vec<f64>> {
    let mut times = Vec::with_capacity(passes as usize);
    for pass in 0..warmup + passes {
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

/// Median, extremes and spread of a set of samples.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Stats {
    pub median: f64,
    pub min: f64,
    pub max: f64,
    /// Coefficient of variation: standard deviation over mean.
    pub cv: f64,
}

impl Stats {
    /// `None` for an empty sample set.
    pub fn of(samples: &[f64]) -> Option<Stats> {
        if samples.is_empty() {
            return None;
        }
        let mut sorted = samples.to_vec();
        sorted.sort_by(f64::total_cmp);
        let n = sorted.len();
        let median = if n % 2 == 1 {
            sorted[n / 2]
        } else {
            (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
        };
        let mean = sorted.iter().sum::<f64>() / n as f64;
        let variance = sorted.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n as f64;
        Some(Stats {
            median,
            min: sorted[0],
            max: sorted[n - 1],
            cv: if mean > 0.0 {
                variance.sqrt() / mean
            } else {
                0.0
            },
        })
    }
}

/// Effective bandwidth in decimal GB/s: bytes over nanoseconds is exactly 10^9 B/s.
pub fn gbps(bytes: u64, time_ns: f64) -> f64 {
    bytes as f64 / time_ns
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_of_odd_and_even_sets() {
        let odd = Stats::of(&[3.0, 1.0, 2.0]).unwrap();
        assert_eq!((odd.median, odd.min, odd.max), (2.0, 1.0, 3.0));
        let even = Stats::of(&[4.0, 1.0, 3.0, 2.0]).unwrap();
        assert_eq!(even.median, 2.5);
        assert!(Stats::of(&[]).is_none());
    }

    #[test]
    fn cv_is_population_std_over_mean() {
        let stats = Stats::of(&[9.0, 11.0]).unwrap();
        assert!((stats.cv - 0.1).abs() < 1e-12);
        assert_eq!(Stats::of(&[5.0; 4]).unwrap().cv, 0.0);
    }

    #[test]
    fn gbps_is_decimal() {
        // 1 GB in 1 ms is 1000 GB/s.
        assert_eq!(gbps(1_000_000_000, 1.0e6), 1000.0);
    }
}
