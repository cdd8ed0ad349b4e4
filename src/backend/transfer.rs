//! What every backend's transfer paths share: a case's [`Payload`] (what to send, what
//! must arrive, how to sample), and the overlap workload's sampling: K chunks each
//! uploaded and processed by `transfer_work`, timed as four phases in turn (uploads
//! alone, kernels alone, the serial schedule, the interleaved one), so that drift
//! affects them alike. A backend supplies how one phase runs; [`kernel_repeats`] sizes
//! the kernel work to the uploads and [`sample_overlap`] samples and says how much of
//! the upload time interleaving hid.

use crate::error::{Error, Result};
use crate::measure::{FnWork, Sampler, Stats, TimedWork, Timer, Timing};
use crate::suite::families::transfer::Shape;
use crate::suite::{Case, CaseData, Expected, Experiment, Schedule, Words};

/// One transfer case: what to send, what must arrive, and the sampler.
#[derive(Debug)]
pub(crate) struct Payload<'a> {
    pub shape: Shape,
    pub sent: &'a [u32],
    pub expected: &'a Expected,
    pub sampler: Sampler,
}

impl<'a> Payload<'a> {
    /// The payload of `case` from its data.
    pub(crate) fn of(
        experiment: &Experiment,
        case: &Case,
        sampler: Sampler,
        data: &'a CaseData,
    ) -> Result<Payload<'a>> {
        let shape = Shape::of(&case.params).map_err(Error::Case)?;
        let declared = || {
            Error::Case(format!(
                "{}/{} declares no held data to send",
                experiment.name(),
                case.params
            ))
        };
        let sent = data
            .inputs
            .first()
            .and_then(Words::held)
            .ok_or_else(declared)?;
        let expected = data.expected.first().ok_or_else(declared)?;
        Ok(Payload {
            shape,
            sent,
            expected,
            sampler,
        })
    }

    /// Whether `words`, read back to the host, are what must arrive.
    pub(crate) fn check_words(&self, words: &[u32]) -> Result<()> {
        self.expected.check(words).map_err(Error::Verification)
    }

    /// Samples of `transfer(repeats)`, which makes `repeats` transfers and returns the
    /// nanoseconds that count, on `timer`, through the suite's sampler.
    pub(crate) fn sample(
        &self,
        timer: Timer,
        transfer: impl FnMut(u32) -> Result<f64>,
    ) -> Result<Timing> {
        let mut clock = FnWork {
            timer,
            run: transfer,
        };
        let mut timing = self.sampler.measure(&mut clock, false)?;
        timing.dispatches_per_sample *= self.shape.chunks;
        Ok(timing)
    }
}

/// The most dispatches of the overlap kernel per chunk.
const MAX_KERNEL_REPEATS: u32 = 256;

/// The parts of the overlap workload timed on their own and together.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Phase {
    /// Every chunk uploaded, no kernel.
    Uploads,
    /// Every chunk processed, no upload.
    Kernels,
    /// A schedule of both.
    Both(Schedule),
}

const PHASES: [Phase; 4] = [
    Phase::Uploads,
    Phase::Kernels,
    Phase::Both(Schedule::Serial),
    Phase::Both(Schedule::Interleaved),
];

/// Kernel dispatches per chunk that make the kernels alone about as long as the uploads
/// alone (then overlap could hide up to all of the upload time); `run(phase, repeats)`
/// runs one phase with `repeats` dispatches per chunk and returns its host nanoseconds.
#[expect(
    clippy::cast_possible_truncation,
    reason = "a rounded ratio of two times, clamped to 1..=MAX_KERNEL_REPEATS after `as` saturates it"
)]
pub(crate) fn kernel_repeats(run: &mut impl FnMut(Phase, u32) -> Result<f64>) -> Result<u32> {
    let uploads_ns = fastest_ns(|| run(Phase::Uploads, 1))?;
    let kernel_ns = fastest_ns(|| run(Phase::Kernels, 1))?;
    Ok(((uploads_ns / kernel_ns).round() as u32).clamp(1, MAX_KERNEL_REPEATS))
}

/// Samples every phase in turn with `kernel_repeats` dispatches per chunk of `chunks`;
/// the timing's samples are `schedule`'s, and its note gives every phase's median and
/// the share of the upload time that interleaving hid.
pub(crate) fn sample_overlap(
    sampler: &Sampler,
    mut run: impl FnMut(Phase, u32) -> Result<f64>,
    kernel_repeats: u32,
    chunks: u32,
    schedule: Schedule,
) -> Result<Timing> {
    // Each phase's time per repetition, kept beside the total the sampler sees.
    let mut by_phase: Vec<[f64; PHASES.len()]> = Vec::new();
    let timing = sampler.measure(
        &mut FnWork {
            timer: Timer::Host,
            run: |repeats: u32| -> Result<f64> {
                let mut ns = [0.0; PHASES.len()];
                for _ in 0..repeats {
                    for (slot, phase) in ns.iter_mut().zip(PHASES) {
                        *slot += run(phase, kernel_repeats)?;
                    }
                }
                by_phase.push(ns.map(|total| total / f64::from(repeats)));
                Ok(ns.iter().sum())
            },
        },
        false,
    )?;
    let repeats = timing.dispatches_per_sample;
    let sampled = &by_phase[by_phase.len().saturating_sub(timing.samples_ns.len())..];
    let mut samples: [Vec<f64>; PHASES.len()] = Default::default();
    for (index, phase_samples) in samples.iter_mut().enumerate() {
        *phase_samples = sampled.iter().map(|ns| ns[index]).collect();
    }
    let index = |phase: Phase| PHASES.iter().position(|&p| p == phase).unwrap_or(0);
    let median_us =
        |phase: Phase| Stats::of(&samples[index(phase)]).map_or(0.0, |s| s.median / 1e3);
    let uploads = median_us(Phase::Uploads);
    let serial = median_us(Phase::Both(Schedule::Serial));
    let interleaved = median_us(Phase::Both(Schedule::Interleaved));
    let note = format!(
        "kernel x{kernel_repeats} per chunk; medians: uploads alone {uploads:.1} us, kernels \
         alone {:.1} us, serial {serial:.1} us, interleaved {interleaved:.1} us; hidden: {:.0} % \
         of the upload time",
        median_us(Phase::Kernels),
        hidden_percent(uploads, serial, interleaved)
    );
    Ok(Timing {
        samples_ns: std::mem::take(&mut samples[index(Phase::Both(schedule))]),
        timer: Timer::Host,
        dispatches_per_sample: repeats * chunks,
        note,
    })
}

/// The share of the upload time that interleaving hid: what it saved over the serial
/// schedule, over what the uploads take alone (negative where it cost time).
fn hidden_percent(uploads: f64, serial: f64, interleaved: f64) -> f64 {
    if uploads > 0.0 {
        100.0 * (serial - interleaved) / uploads
    } else {
        0.0
    }
}

/// The fastest of a few untimed-first runs of `once`: a pilot's estimate.
fn fastest_ns(mut once: impl FnMut() -> Result<f64>) -> Result<f64> {
    let mut clock = FnWork {
        timer: Timer::Host,
        run: |_| once(),
    };
    let pilot = clock.samples_ns(3, 1, 1)?;
    Ok(pilot.iter().copied().fold(f64::INFINITY, f64::min).max(1.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hidden_share_is_of_the_upload_time() {
        assert_eq!(hidden_percent(100.0, 300.0, 250.0), 50.0);
        assert_eq!(hidden_percent(100.0, 300.0, 320.0), -20.0);
        assert_eq!(hidden_percent(0.0, 1.0, 1.0), 0.0);
    }
}
