//! Sampling driven from outside: in `cargo bench`, criterion decides how many batches a
//! case gets and how many repetitions each holds, and every batch is one sample on the
//! case's clock. Skipped and failed cases never reach the driver (the session skips,
//! prepares and verifies first); a batch that fails ends the case's sampling without
//! unwinding: the batches the driver still asks for return at once, untimed.

use std::time::Duration;

use super::{Sample, TimedWork, Timing};
use crate::error::Result;
use crate::suite::{CaseId, Setting};

/// The routine that times one batch of `n` repetitions, as a [`Driver`] calls it.
pub type Batch<'a> = &'a mut dyn FnMut(u64) -> Duration;

/// What runs a case's batches (criterion, in `cargo bench`).
pub trait Driver {
    /// Whether the driver runs case `id` in `setting` at all.
    fn takes(&self, id: &CaseId, setting: Setting) -> bool;

    /// Runs case `id`, which moves `bytes`, calling `batch(n)` for a batch of `n`
    /// repetitions as often as it likes; `batch` returns the batch's time on the
    /// case's clock.
    fn drive(&mut self, id: &CaseId, setting: Setting, bytes: u64, batch: Batch);

    /// As [`Driver::drive`], for `batch`es that replay samples taken before and so
    /// return at once: a driver that warms up for a time on its own clock (criterion
    /// does, on the wall clock) must not, or it doubles its repetitions without end.
    fn replay(&mut self, id: &CaseId, setting: Setting, bytes: u64, batch: Batch) {
        self.drive(id, setting, bytes, batch);
    }
}

/// A [`Sample`] whose batches a [`Driver`] asks for; a transfer's samples, which the
/// backend took on the host clock, are handed to the driver in turn.
#[derive(Debug)]
pub struct Driven<D>(pub D);

impl<D: Driver> Sample for Driven<D> {
    fn takes(&self, id: &CaseId, setting: Setting) -> bool {
        self.0.takes(id, setting)
    }

    #[expect(
        clippy::cast_possible_truncation,
        reason = "whole nanoseconds of a time: `as` drops the fraction, and saturates"
    )]
    fn sample(
        &mut self,
        id: &CaseId,
        setting: Setting,
        bytes: u64,
        clock: &mut dyn TimedWork,
    ) -> Result<Timing> {
        // A driver's warm-up (criterion's is 100 ms) is too short for a GPU's clocks to
        // rise.
        let note = clock.settle()?.unwrap_or_default();
        let mut batches = Vec::new();
        let mut failure = None;
        self.0.drive(id, setting, bytes, &mut |n| {
            if failure.is_some() {
                return Duration::ZERO;
            }
            let repeats = u32::try_from(n).unwrap_or(u32::MAX);
            match clock.samples_ns(1, repeats, 0) {
                Ok(ns) => {
                    let ns = ns.first().copied().unwrap_or(0.0);
                    batches.push((repeats, ns));
                    Duration::from_nanos(ns as u64)
                }
                Err(error) => {
                    failure = Some(error);
                    Duration::ZERO
                }
            }
        });
        if let Some(error) = failure {
            return Err(error);
        }
        let measured = measurement(&batches);
        Ok(Timing {
            samples_ns: measured
                .iter()
                .map(|&(repeats, ns)| ns / f64::from(repeats.max(1)))
                .collect(),
            timer: clock.timer(),
            dispatches_per_sample: measured.first().map_or(0, |&(repeats, _)| repeats),
            note,
        })
    }

    #[expect(
        clippy::cast_possible_truncation,
        reason = "whole nanoseconds of a time: `as` drops the fraction, and saturates"
    )]
    fn transfer(&mut self, id: &CaseId, setting: Setting, bytes: u64, timing: Timing) -> Timing {
        let samples = &timing.samples_ns;
        if !samples.is_empty() {
            let mut handed = 0;
            self.0.replay(id, setting, bytes, &mut |n| {
                let ns = samples[handed % samples.len()];
                handed += 1;
                Duration::from_nanos((ns * n as f64) as u64)
            });
        }
        timing
    }
}

/// The driver's measurement among its batches: with flat sampling every measured batch
/// has the same repetitions, while criterion's warm-up doubled them from one, so the
/// last run of equal repetitions.
fn measurement(batches: &[(u32, f64)]) -> &[(u32, f64)] {
    let Some(&(repeats, _)) = batches.last() else {
        return &[];
    };
    let start = batches
        .iter()
        .rposition(|&(r, _)| r != repeats)
        .map_or(0, |before| before + 1);
    &batches[start..]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;
    use crate::measure::Timer;
    use crate::suite::Sizing;

    /// A driver that asks for the batches `batches`, recording what each returned.
    struct Script {
        batches: Vec<u64>,
        returned: Vec<Duration>,
    }

    impl Driver for Script {
        fn takes(&self, _: &CaseId, _: Setting) -> bool {
            true
        }

        fn drive(
            &mut self,
            _: &CaseId,
            _: Setting,
            _: u64,
            batch: &mut dyn FnMut(u64) -> Duration,
        ) {
            for &n in &self.batches {
                self.returned.push(batch(n));
            }
        }
    }

    /// A clock whose every repetition takes 10 ns, failing from its `fails_at`th call.
    struct Counting {
        calls: usize,
        fails_at: usize,
    }

    impl TimedWork for Counting {
        fn timer(&self) -> Timer {
            Timer::Gpu
        }

        fn samples_ns(&mut self, samples: u32, repeats: u32, _: u32) -> Result<Vec<f64>> {
            self.calls += 1;
            if self.calls >= self.fails_at {
                return Err(Error::Gpu("lost".to_owned()));
            }
            Ok(vec![10.0 * f64::from(repeats); samples as usize])
        }
    }

    fn driven(batches: &[u64]) -> Driven<Script> {
        Driven(Script {
            batches: batches.to_vec(),
            returned: Vec::new(),
        })
    }

    fn any_case() -> CaseId {
        let cases = crate::suite::select(&Sizing::nominal(true), &[]).unwrap();
        cases[0].1.id(cases[0].0)
    }

    #[test]
    fn the_warm_up_batches_are_dropped_and_the_rest_are_per_repetition() {
        let mut sampler = driven(&[1, 2, 4, 8, 8, 8]);
        let mut clock = Counting {
            calls: 0,
            fails_at: usize::MAX,
        };
        let timing = sampler
            .sample(&any_case(), Setting::WGPU, 1, &mut clock)
            .unwrap();
        assert_eq!(timing.samples_ns, [10.0; 3]);
        assert_eq!(timing.dispatches_per_sample, 8);
        assert_eq!(sampler.0.returned[3], Duration::from_nanos(80));
    }

    #[test]
    fn a_failed_batch_ends_the_sampling_without_touching_the_clock_again() {
        let mut sampler = driven(&[1, 2, 4, 8]);
        let mut clock = Counting {
            calls: 0,
            fails_at: 2,
        };
        let failed = sampler.sample(&any_case(), Setting::WGPU, 1, &mut clock);
        assert!(matches!(failed, Err(Error::Gpu(_))));
        assert_eq!(clock.calls, 2);
        assert_eq!(sampler.0.returned[2..], [Duration::ZERO; 2]);
    }

    #[test]
    fn a_transfer_hands_its_samples_in_turn_and_is_kept() {
        let mut sampler = driven(&[2, 2, 2]);
        let timing = Timing {
            samples_ns: vec![10.0, 20.0],
            timer: Timer::Host,
            dispatches_per_sample: 1,
            note: String::new(),
        };
        let kept = sampler.transfer(&any_case(), Setting::WGPU, 1, timing);
        assert_eq!(kept.samples_ns, [10.0, 20.0]);
        let ns: Vec<u128> = sampler.0.returned.iter().map(Duration::as_nanos).collect();
        assert_eq!(ns, [20, 40, 20]);
        assert!(measurement(&[]).is_empty());
    }
}
