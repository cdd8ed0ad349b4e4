//! Measurement: one sampler over a clock.
//!
//! A [`TimedWork`] is a prepared piece of work (a kernel's dispatches, a transfer) that
//! the sampler repeats a given number of times per sample; it says how long each sample
//! took on its clock (GPU timestamps, or the host's). The [`Sampler`] chooses the
//! repetitions per sample from a pilot, warms up, and takes the samples; kernels and
//! transfers differ only in its declared constants ([`Sampler::KERNEL`],
//! [`Sampler::TRANSFER`]). `cargo bench` swaps the sampler for criterion's ([`Sample`],
//! [`Driven`]) and keeps the work.

mod driven;

pub use driven::{Batch, Driven, Driver};

use std::time::{Duration, Instant};

use crate::error::Result;
use crate::suite::{CaseId, Setting};

/// Which clock measured a case.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Timer {
    /// GPU timestamps around the work.
    Gpu,
    /// Host clock around submit and wait: a GPU without timestamp queries.
    Wall,
    /// Host clock from the call to the moment the data is usable (transfers).
    Host,
}

impl Timer {
    /// The name the CSV's `timer` column holds.
    pub fn label(self) -> &'static str {
        match self {
            Timer::Gpu => "gpu",
            Timer::Wall => "wall",
            Timer::Host => "host",
        }
    }
}

/// A prepared piece of work that the sampler repeats and times on its clock.
pub trait TimedWork {
    /// Which clock the samples are on.
    fn timer(&self) -> Timer;

    /// Nanoseconds of each of `samples` samples, each `repeats` repetitions of the
    /// work, after `warmup` untimed repetitions.
    fn samples_ns(&mut self, samples: u32, repeats: u32, warmup: u32) -> Result<Vec<f64>>;
    /// Brings the device to the clocks of sustained load before the samples, where it
    /// can tell; `Some(note)` when it could not.
    fn settle(&mut self) -> Result<Option<String>> {
        Ok(None)
    }
}

/// The timed samples of one case, in nanoseconds per repetition (one dispatch, one
/// transfer or one workload).
#[derive(Clone, Debug)]
pub struct Timing {
    /// Each sample's time per repetition, in nanoseconds.
    pub samples_ns: Vec<f64>,
    /// The clock that took them.
    pub timer: Timer,
    /// Repetitions (dispatches, transfers) in one sample.
    pub(crate) dispatches_per_sample: u32,
    /// What a reader of the row must know about this measurement, if anything.
    pub note: String,
}

/// How a case's samples are taken: the suite's [`Sampler`], or criterion's in
/// `cargo bench`.
pub trait Sample {
    /// Whether case `id` is measured in `setting` at all (criterion's filter, in
    /// `cargo bench`): one not taken is not made, prepared or verified, and has no row.
    fn takes(&self, _id: &CaseId, _setting: Setting) -> bool {
        true
    }

    /// Samples case `id`, which moves `bytes`, on `clock`.
    fn sample(
        &mut self,
        id: &CaseId,
        setting: Setting,
        bytes: u64,
        clock: &mut dyn TimedWork,
    ) -> Result<Timing>;

    /// The timing of transfer `id`, which the backend sampled itself on the host
    /// clock (a transfer's phases are several clocks, not one): kept as it is, or
    /// handed on as well (to criterion).
    fn transfer(&mut self, _id: &CaseId, _setting: Setting, _bytes: u64, timing: Timing) -> Timing {
        timing
    }
}

/// Fewest samples of any case.
pub const MIN_SAMPLES: u32 = 10;

/// Samples a case takes unless `--samples` says otherwise: against 30, the same median
/// cv and medians in a shorter run (docs/method.md, What a run costs).
pub(crate) const DEFAULT_SAMPLES: u32 = 20;

/// The one sampling routine: a pilot, repetitions per sample so that a sample lasts
/// [`Sampler::sample_target_ns`], a warm-up, then the samples, fewer (never under
/// [`MIN_SAMPLES`]) where they would add up to more than [`Sampler::case_budget_ns`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sampler {
    /// Samples asked for.
    pub samples: u32,
    /// Shortest sample: short work is repeated until a sample lasts this long, so that
    /// it is not lost in the clock's jitter.
    pub(crate) sample_target_ns: f64,
    /// The most repetitions one sample holds.
    pub(crate) max_repeats: u32,
    /// Timed work per case beyond which fewer samples are taken.
    pub(crate) case_budget_ns: f64,
    /// Untimed work before the samples: long enough for a GPU's clocks to leave their
    /// idle state (GPUs driven through Vulkan ramp up under sustained load only).
    pub(crate) warmup_ns: f64,
    /// The warm-up when the previous case finished less than [`WARM_GAP`] ago: the
    /// clocks are still up, only caches and first uses need a pass.
    pub(crate) short_warmup_ns: f64,
}

/// A device busy less than this long ago still runs at its working clocks.
pub(crate) const WARM_GAP: Duration = Duration::from_secs(1);

impl Sampler {
    /// Kernels on the GPU clock: samples of 0.5 ms, and fewer (never under
    /// [`MIN_SAMPLES`]) where they would add up to more than 0.1 s. Why these: see
    /// docs/method.md.
    pub(crate) const KERNEL: Sampler = Sampler {
        samples: DEFAULT_SAMPLES,
        sample_target_ns: 0.5e6,
        max_repeats: 1024,
        case_budget_ns: 0.1e9,
        warmup_ns: 200.0e6,
        short_warmup_ns: 10.0e6,
    };

    /// Host↔device transfers on the host clock: a 256 MiB transfer takes tens of
    /// milliseconds, so the budget is smaller; the warm-up covers allocations and
    /// first maps.
    pub(crate) const TRANSFER: Sampler = Sampler {
        samples: DEFAULT_SAMPLES,
        sample_target_ns: 1.0e6,
        max_repeats: 1024,
        case_budget_ns: 0.25e9,
        warmup_ns: 20.0e6,
        short_warmup_ns: 20.0e6,
    };

    /// Pilot samples of one repetition each, after one untimed one; work whose first
    /// pilot sample already lasts a sample needs no more.
    const PILOT_SAMPLES: u32 = 3;

    /// This sampler asking for `samples` samples.
    pub(crate) fn with_samples(self, samples: u32) -> Sampler {
        Sampler { samples, ..self }
    }

    /// Samples `clock`; `warm` when the device finished timed work within [`WARM_GAP`].
    pub fn measure(&self, clock: &mut dyn TimedWork, warm: bool) -> Result<Timing> {
        let note = clock.settle()?.unwrap_or_default();
        let mut pilot = clock.samples_ns(1, 1, 1)?;
        if pilot[0] < self.sample_target_ns {
            pilot.extend(clock.samples_ns(Self::PILOT_SAMPLES - 1, 1, 0)?);
        }
        let fastest = pilot.iter().copied().fold(f64::INFINITY, f64::min).max(1.0);
        // The pilot warmed up too: long work (a 1 GiB transfer) needs nothing more.
        let plan = self.plan(fastest, pilot.iter().sum(), warm);
        let samples_ns = clock
            .samples_ns(plan.samples, plan.repeats, plan.warmup)?
            .into_iter()
            .map(|ns| ns / f64::from(plan.repeats))
            .collect();
        Ok(Timing {
            samples_ns,
            timer: clock.timer(),
            dispatches_per_sample: plan.repeats,
            note,
        })
    }

    /// Repetitions per sample, warm-up repetitions and samples for work whose fastest
    /// repetition took `fastest_ns`, after `warmed_ns` of work already done.
    #[expect(
        clippy::cast_possible_truncation,
        reason = "whole counts from ratios of times, rounded up and at least 1; `as` saturates"
    )]
    fn plan(&self, fastest_ns: f64, warmed_ns: f64, warm: bool) -> Plan {
        let repeats =
            ((self.sample_target_ns / fastest_ns).ceil() as u32).clamp(1, self.max_repeats);
        let sample_ns = fastest_ns * f64::from(repeats);
        let warmup_ns = if warm {
            self.short_warmup_ns
        } else {
            self.warmup_ns
        } - warmed_ns;
        Plan {
            repeats,
            // Whole samples' worth, as the samples run.
            warmup: (warmup_ns.max(0.0) / sample_ns).ceil() as u32 * repeats,
            samples: self
                .samples
                .min(((self.case_budget_ns / sample_ns) as u32).max(MIN_SAMPLES)),
        }
    }
}

/// What [`Sampler::plan`] chose.
#[derive(Debug, PartialEq)]
struct Plan {
    repeats: u32,
    warmup: u32,
    samples: u32,
}

/// The suite's own sampling, remembering when the device was last busy.
#[derive(Debug)]
pub struct SuiteSampler {
    /// Sampling of kernels.
    pub kernel: Sampler,
    /// Sampling of transfers.
    pub transfer: Sampler,
    last_timed: Option<Instant>,
}

impl SuiteSampler {
    /// `samples` samples per case.
    pub fn new(samples: u32) -> Self {
        SuiteSampler {
            kernel: Sampler::KERNEL.with_samples(samples),
            transfer: Sampler::TRANSFER.with_samples(samples),
            last_timed: None,
        }
    }

    fn sampler_for(&self, timer: Timer) -> Sampler {
        match timer {
            Timer::Host => self.transfer,
            Timer::Gpu | Timer::Wall => self.kernel,
        }
    }
}

impl Sample for SuiteSampler {
    fn sample(
        &mut self,
        _: &CaseId,
        _: Setting,
        _: u64,
        clock: &mut dyn TimedWork,
    ) -> Result<Timing> {
        let warm = self
            .last_timed
            .is_some_and(|last| last.elapsed() < WARM_GAP);
        let timing = self.sampler_for(clock.timer()).measure(clock, warm);
        self.last_timed = Some(Instant::now());
        timing
    }
}

/// Timed work over a closure that runs `repeats` repetitions and returns the nanoseconds
/// that count: for work whose timed part is not one contiguous stretch (a transfer
/// whose staging buffers are dropped off the clock).
#[derive(Debug)]
pub(crate) struct FnWork<F> {
    pub timer: Timer,
    pub run: F,
}

impl<F: FnMut(u32) -> Result<f64>> TimedWork for FnWork<F> {
    fn timer(&self) -> Timer {
        self.timer
    }

    fn samples_ns(&mut self, samples: u32, repeats: u32, warmup: u32) -> Result<Vec<f64>> {
        for _ in 0..warmup {
            (self.run)(1)?;
        }
        (0..samples).map(|_| (self.run)(repeats)).collect()
    }
}

/// Median, extremes and spread of a set of samples.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Stats {
    /// The median sample.
    pub median: f64,
    /// The smallest sample.
    pub min: f64,
    /// The largest sample.
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

    #[test]
    fn short_work_is_repeated_to_the_target_and_long_work_is_not() {
        let plan = |ns| Sampler::TRANSFER.plan(ns, 0.0, false);
        assert_eq!(plan(10_000.0).repeats, 100);
        assert_eq!(plan(5.0e6).repeats, 1);
        assert_eq!(plan(1.0).repeats, Sampler::TRANSFER.max_repeats);
    }

    #[test]
    fn slow_cases_take_fewer_samples_but_never_under_the_minimum() {
        let samples = |ns| Sampler::TRANSFER.plan(ns, 0.0, false).samples;
        assert_eq!(samples(1.0e6), DEFAULT_SAMPLES);
        assert_eq!(samples(100.0e6), MIN_SAMPLES);
        assert_eq!(samples(20.0e6), 12);
    }

    #[test]
    fn warm_up_is_whole_samples_and_short_when_the_device_is_warm() {
        let cold = Sampler::KERNEL.plan(0.25e6, 0.0, false);
        assert_eq!((cold.repeats, cold.warmup), (2, 800));
        let warm = Sampler::KERNEL.plan(0.25e6, 0.0, true);
        assert_eq!(warm.warmup, 40);
        // Work the pilot already did counts: a 60 ms transfer needs no more.
        let long = Sampler::TRANSFER.plan(60.0e6, 180.0e6, false);
        assert_eq!((long.repeats, long.warmup), (1, 0));
    }

    /// A clock whose every repetition takes `ns`, recording what it was asked.
    struct Fixed {
        ns: f64,
        calls: Vec<(u32, u32, u32)>,
    }

    impl TimedWork for Fixed {
        fn timer(&self) -> Timer {
            Timer::Gpu
        }

        fn samples_ns(&mut self, samples: u32, repeats: u32, warmup: u32) -> Result<Vec<f64>> {
            self.calls.push((samples, repeats, warmup));
            Ok(vec![self.ns * f64::from(repeats); samples as usize])
        }
    }

    #[test]
    fn measure_pilots_then_samples_per_repetition() {
        let mut clock = Fixed {
            ns: 0.25e6,
            calls: Vec::new(),
        };
        let timing = Sampler::KERNEL.measure(&mut clock, false).unwrap();
        // 200 ms of warm-up less the pilot's 0.75 ms: 399 samples of 0.5 ms.
        assert_eq!(
            clock.calls,
            [(1, 1, 1), (2, 1, 0), (DEFAULT_SAMPLES, 2, 798)]
        );
        assert_eq!(timing.dispatches_per_sample, 2);
        assert!(timing.samples_ns.iter().all(|&ns| ns == 0.25e6));
    }

    #[test]
    fn work_that_fills_a_sample_is_piloted_once() {
        let mut clock = Fixed {
            ns: 40.0e6,
            calls: Vec::new(),
        };
        Sampler::KERNEL.measure(&mut clock, true).unwrap();
        // 10 samples of 40 ms: the budget of 0.1 s gives no more than the minimum.
        assert_eq!(clock.calls, [(1, 1, 1), (MIN_SAMPLES, 1, 0)]);
    }
}
