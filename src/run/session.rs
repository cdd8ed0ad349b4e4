//! The session: the one loop every run and `cargo bench` goes through. It reads as its
//! steps — order the cases (calibration first, host-clock cases last), then for each case measure it on every
//! backend, save when due, stop when asked, start the predictions once the model can be
//! calibrated — and ends with the predictions and the rows in case order. The jobs
//! around the loop are small types: [`Prefetch`] makes the next case's data beside the
//! measurements, [`Saver`] saves the rows, [`Background`] predicts beside them.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::predict::fill_predictions;
use super::predict::{Background, Predicted, device_model};
use super::prefetch::{Data, Prefetch};
use super::rows::{fill_telemetry, row};
use super::{Measurer, Outcome, Party, RunSettings};
use crate::backend::nvml;
use crate::error::Result;
use crate::measure::Sample;
use crate::results::{self, Row, Status};
use crate::sim::device::DeviceModel;
use crate::suite::{Case, CaseId, Experiment, Measure, Setting};

/// What a person watching a run is told.
pub trait Progress: Sync {
    /// Case `id` is about to run in `setting`.
    fn started(&self, _id: &CaseId, _setting: Setting) {}
    /// Case `id` ran in `setting`, with `outcome`.
    fn finished(&self, _id: &CaseId, _setting: Setting, _outcome: &Outcome) {}
    /// The predictions have started.
    fn predicting(&self) {}
    /// One more case is predicted.
    fn predicted(&self) {}
}

/// Nothing to tell.
#[derive(Debug)]
pub(crate) struct Quiet;

impl Progress for Quiet {}

/// Where a run's rows go: a results file, which may hold rows of other runs of its
/// identity; this run's rows replace those of the same case and setting.
#[derive(Debug)]
pub struct Output<'a> {
    /// The results file.
    pub path: &'a Path,
    /// What the file's rows must be of.
    pub identity: &'a results::Identity,
    /// The rows this sizing gives, nothing measured: [`results::Identity::admit`]
    /// checks a file that records no sizing against them.
    pub case_rows: &'a [Row],
}

/// One run of cases, each on every backend that takes it.
pub struct Session<'a> {
    /// The backends, in the order each case visits them.
    pub measurers: &'a [Box<dyn Measurer + 'a>],
    /// What changes the measurements.
    pub settings: &'a RunSettings,
    /// The device, as the model's preset is chosen by it.
    pub device: &'a str,
    /// Make the next case's data and the predictions while the GPU measures: not on a
    /// software adapter, whose kernels run on the very cores they would take.
    pub work_beside: bool,
    /// Rows of the same device from before, for calibrating the model.
    pub known_rows: &'a [Row],
    /// Saved every [`SAVE_INTERVAL`] and at the end, so that an interrupted run keeps
    /// what it measured.
    pub output: Option<Output<'a>>,
    /// Set (by a signal) to stop after the case under way: the cases measured so far
    /// are predicted, and their rows saved with the predictions.
    pub stop: Option<&'a AtomicBool>,
    /// Sessions on other adapters measuring at the same time: each measurement starts
    /// once every one of them still measuring has reached its own, and the session
    /// leaves the lockstep when it has measured its last case.
    pub lockstep: Option<&'a Party<'a>>,
    /// Predict the cases measured: not in `cargo test --benches`, which checks only
    /// that every case runs.
    pub predict: bool,
    /// The GPU whose clocks, power and temperature are read while each case runs,
    /// where NVML knows it.
    pub telemetry: Option<&'a nvml::Gpu>,
}

impl std::fmt::Debug for Session<'_> {
    // Its measurers are trait objects, its device a whole model: only the name prints.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session").finish_non_exhaustive()
    }
}

/// What a session made.
#[derive(Debug)]
pub struct Ran {
    /// One row per case and backend that takes it, in case order.
    pub rows: Vec<Row>,
    /// Cases that failed.
    pub failed: usize,
    /// The predictions, where the session makes them.
    pub predicted: Option<Predicted>,
    /// Stopped before the last case.
    pub interrupted: bool,
}

/// How often a run saves its rows while it measures. Each save re-reads and rewrites
/// the whole file, synced: after every case, that took seconds of a full run
/// (docs/method.md, What a run costs).
/// A run that is killed loses at most this much of its measuring; one stopped by a
/// signal loses nothing.
const SAVE_INTERVAL: Duration = Duration::from_secs(2);

impl<'a> Session<'a> {
    /// A session of `measurers` on `device` that measures alone, predicts at the end
    /// from its own rows and writes nothing: each use sets what it changes.
    pub fn new(
        measurers: &'a [Box<dyn Measurer + 'a>],
        settings: &'a RunSettings,
        device: &'a str,
    ) -> Self {
        Session {
            measurers,
            settings,
            device,
            work_beside: false,
            known_rows: &[],
            output: None,
            stop: None,
            lockstep: None,
            predict: true,
            telemetry: None,
        }
    }

    /// Runs `cases`, each on every backend that takes it in a setting the sampler
    /// takes, its rows saved as it goes; predicts them (beside the GPU-clock
    /// measurements once the model is calibrated, never beside a host-clock transfer);
    /// gives the rows back in case order.
    pub fn run(
        &self,
        cases: &[(&'static Experiment, Case)],
        sampler: &mut dyn Sample,
        progress: &dyn Progress,
    ) -> Result<Ran> {
        let order = self.order(cases);
        let mut measured = Measured::default();
        let mut saver = Saver::new(self.output.as_ref());
        let predicted = std::thread::scope(|scope| {
            let mut prefetch = Prefetch::new(scope, self.work_beside);
            let mut beside = Background::Waiting;
            for (position, &index) in order.indices.iter().enumerate() {
                if on_host_clock(&cases[index]) {
                    beside = beside.finished()?;
                }
                measured.case(
                    index,
                    self.measure(cases, &order, position, &mut prefetch, sampler, progress),
                );
                saver.save_when_due(&measured.rows)?;
                if self.stopped() && position + 1 < order.indices.len() {
                    measured.stopped_after = Some(position + 1);
                    break;
                }
                if self.predicts_beside() && order.calibrated_by(position) && beside.waiting() {
                    progress.predicting();
                    let model = self.model_maker(&measured.rows);
                    beside = Background::start(scope, cases, model, || progress.predicted());
                }
            }
            // Measured: the others need not wait for this session's predictions.
            if let Some(party) = self.lockstep {
                party.leave();
            }
            self.predictions(
                beside,
                cases,
                order.measured(&measured),
                &measured.rows,
                progress,
            )
        })?;
        let failed = measured.failed();
        let interrupted = measured.stopped_after.is_some();
        let rows = measured.in_case_order(cases, predicted.as_ref());
        saver.save(&rows)?;
        Ok(Ran {
            rows,
            failed,
            predicted,
            interrupted,
        })
    }

    /// The order the cases are measured in. Where the predictions run beside or a
    /// signal may stop the run, the calibration cases go first and the host-clock cases
    /// last: the predictions then run beside every other GPU-clock case and are made
    /// before the host-clock ones, which wait for them (they had held the transfers
    /// back: docs/method.md, What a run costs), and a run stopped early is calibrated.
    /// A session that predicts at its end and runs to it (`cargo bench`) keeps the
    /// cases' order.
    fn order(&self, cases: &[(&'static Experiment, Case)]) -> Order {
        let beside = self.work_beside || self.stop.is_some();
        let (first, rest): (Vec<usize>, Vec<usize>) = (0..cases.len()).partition(|&index| {
            let (experiment, case) = &cases[index];
            beside && crate::calibrate::is_calibration(&case.id(experiment))
        });
        // The host-clock cases last: the predictions run beside every GPU-clock case
        // and are done before the first host-clock one, which they would disturb.
        let (gpu_clock, host_clock): (Vec<usize>, Vec<usize>) = rest
            .into_iter()
            .partition(|&index| !beside || !on_host_clock(&cases[index]));
        Order {
            calibrated_after: first.len().checked_sub(1),
            indices: first
                .into_iter()
                .chain(gpu_clock)
                .chain(host_clock)
                .collect(),
        }
    }

    /// The rows of the case at `position` of `order`, one per backend that takes it: its
    /// data made once for them all (and the next case's started beside, where it is
    /// measured on the GPU clock).
    fn measure<'s>(
        &self,
        cases: &'s [(&'static Experiment, Case)],
        order: &Order,
        position: usize,
        prefetch: &mut Prefetch<'s, '_>,
        sampler: &mut dyn Sample,
        progress: &dyn Progress,
    ) -> Vec<Row> {
        let (experiment, case) = &cases[order.indices[position]];
        let id = case.id(experiment);
        let takers: Vec<&dyn Measurer> = self
            .measurers
            .iter()
            .map(Box::as_ref)
            .filter(|m| m.takes(experiment) && sampler.takes(&id, m.setting()))
            .collect();
        let runs = takers
            .iter()
            .any(|m| m.skip_reason(experiment, case).is_none());
        let gpu_clock = experiment.measure == Measure::Kernel;
        let next = order.indices.get(position + 1).map(|&next| &cases[next].1);
        let data = prefetch.data(case, runs, next.filter(|_| gpu_clock));
        takers
            .into_iter()
            .map(|measurer| self.measure_on(measurer, (experiment, case), &data, sampler, progress))
            .collect()
    }

    /// The row of `case` measured by `measurer`, with the telemetry read while it ran.
    fn measure_on(
        &self,
        measurer: &dyn Measurer,
        (experiment, case): (&Experiment, &Case),
        data: &Data,
        sampler: &mut dyn Sample,
        progress: &dyn Progress,
    ) -> Row {
        let id = case.id(experiment);
        let setting = measurer.setting();
        let met = self.lockstep.map(Party::wait);
        progress.started(&id, setting);
        let watch = self.telemetry.and_then(nvml::Watch::start);
        let outcome = match data {
            Ok(Some(data)) => {
                measurer.measure(experiment, case, self.settings.samples, sampler, data)
            }
            Ok(None) => {
                Outcome::Skipped(measurer.skip_reason(experiment, case).unwrap_or_default())
            }
            Err(why) => Outcome::Failed(why.clone()),
        };
        let telemetry = watch.map(nvml::Watch::finish);
        progress.finished(&id, setting, &outcome);
        let mut row = row(
            measurer.info(),
            self.settings.sizing(),
            experiment,
            case,
            &outcome,
        );
        if let Some(telemetry) = &telemetry {
            fill_telemetry(&mut row, telemetry);
        }
        if let Some(met) = met {
            note_alone(&mut row, met);
        }
        row
    }

    /// Whether a signal asked the run to stop.
    fn stopped(&self) -> bool {
        self.stop.is_some_and(|stop| stop.load(Ordering::SeqCst))
    }

    /// Whether the predictions are made beside the measurements.
    fn predicts_beside(&self) -> bool {
        self.work_beside && self.predict
    }

    /// The predictions of the cases `measured`: those made beside, or made now.
    fn predictions(
        &self,
        beside: Background,
        cases: &[(&'static Experiment, Case)],
        measured: &[usize],
        rows: &[Row],
        progress: &dyn Progress,
    ) -> Result<Option<Predicted>> {
        Ok(match beside.finished()? {
            Background::Made(predicted) => Some(*predicted),
            _ if !self.predict => None,
            _ => {
                progress.predicting();
                let model = self.model_maker(rows)();
                Some(Predicted::of_some(cases, measured, model, &|| {
                    progress.predicted()
                }))
            }
        })
    }

    /// What calibrates the model from `rows` and the known rows of this device: run
    /// where the predictions run, since the calibration simulates its cases too.
    fn model_maker(&self, rows: &[Row]) -> impl FnOnce() -> DeviceModel + Send + use<'a> {
        let known: Vec<Row> = rows.iter().chain(self.known_rows).cloned().collect();
        let device = self.device;
        move || device_model(device, &known)
    }
}

/// The order cases are measured in, by index into the run's cases.
/// Whether `case` is timed on the host clock (a transfer, a submission waited for), where
/// work beside it would show in its time.
fn on_host_clock((experiment, case): &(&'static Experiment, Case)) -> bool {
    experiment.measure != Measure::Kernel || case.dispatch.host_clock()
}

struct Order {
    indices: Vec<usize>,
    /// The position after which the model can be calibrated (every calibration case
    /// measured); `None` where there is none to wait for.
    calibrated_after: Option<usize>,
}

impl Order {
    /// Whether the model can be calibrated once the case at `position` is measured.
    fn calibrated_by(&self, position: usize) -> bool {
        self.calibrated_after.is_none_or(|last| position >= last)
    }

    /// The cases measured: all, unless the run stopped.
    fn measured(&self, measured: &Measured) -> &[usize] {
        &self.indices[..measured.stopped_after.unwrap_or(self.indices.len())]
    }
}

/// The rows measured so far, each with its case's index.
#[derive(Default)]
struct Measured {
    rows: Vec<Row>,
    cases: Vec<usize>,
    /// Where a signal stopped the run: the cases measured, in order.
    stopped_after: Option<usize>,
}

impl Measured {
    /// Adds the rows of case `index`.
    fn case(&mut self, index: usize, rows: Vec<Row>) {
        self.cases.extend(std::iter::repeat_n(index, rows.len()));
        self.rows.extend(rows);
    }

    fn failed(&self) -> usize {
        self.rows
            .iter()
            .filter(|row| row.status == Status::Failed)
            .count()
    }

    /// The rows in case order, whatever order they were measured in, with their
    /// predictions.
    fn in_case_order(
        self,
        cases: &[(&'static Experiment, Case)],
        predicted: Option<&Predicted>,
    ) -> Vec<Row> {
        let mut ordered: Vec<(usize, Row)> = self.cases.into_iter().zip(self.rows).collect();
        ordered.sort_by_key(|&(index, _)| index);
        if let Some(predicted) = predicted {
            fill_predictions(&mut ordered, cases, predicted);
        }
        ordered.into_iter().map(|(_, row)| row).collect()
    }
}

/// Saves a session's rows into its results file, re-read under its lock (a run beside
/// this one into the same file keeps its rows): when [`SAVE_INTERVAL`] has passed, and
/// at the end.
struct Saver<'o> {
    output: Option<&'o Output<'o>>,
    saved: Instant,
}

impl<'o> Saver<'o> {
    fn new(output: Option<&'o Output<'o>>) -> Self {
        Saver {
            output,
            saved: Instant::now(),
        }
    }

    fn save_when_due(&mut self, rows: &[Row]) -> Result<()> {
        if self.saved.elapsed() < SAVE_INTERVAL {
            return Ok(());
        }
        self.save(rows)?;
        self.saved = Instant::now();
        Ok(())
    }

    fn save(&self, rows: &[Row]) -> Result<()> {
        match self.output {
            Some(output) => results::update(output.path, rows, |old| {
                output.identity.admit(output.path, old, output.case_rows)
            }),
            None => Ok(()),
        }
    }
}

/// Notes on a measured row of a concurrent run that fewer than the run's adapters
/// started it together (`met`, this one included): the others had stopped.
fn note_alone(row: &mut Row, met: usize) {
    let Some(adapters) = row.sizing.and_then(|sizing| sizing.concurrent) else {
        return;
    };
    if row.status != Status::Ok || met >= adapters as usize {
        return;
    }
    let alone = format!("started with {met} of {adapters} adapters measuring");
    row.note = if row.note.is_empty() {
        alone
    } else {
        format!("{}; {alone}", row.note)
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suite::RunSizing;

    #[test]
    fn beside_predictions_the_host_clock_cases_come_last() {
        use crate::suite::families::{copy, launch, transfer};
        let sizing = crate::suite::Sizing::nominal(true);
        let first =
            |experiment: &'static Experiment| (experiment, (experiment.cases)(&sizing).remove(0));
        let cases = [
            first(&transfer::UPLOAD_STAGING),
            first(&launch::SUBMIT_WAIT),
            first(&copy::STRIDE),
            first(&launch::APART),
        ];
        let settings = RunSettings::default();
        let mut session = Session::new(&[], &settings, "device");
        assert_eq!(session.order(&cases).indices, [0, 1, 2, 3]);
        session.work_beside = true;
        let order = session.order(&cases).indices;
        let host: Vec<bool> = order.iter().map(|&i| on_host_clock(&cases[i])).collect();
        assert_eq!(host, [false, false, true, true], "{order:?}");
    }

    #[test]
    fn a_row_measured_with_fewer_adapters_than_the_run_says_so() {
        let measured = |concurrent, note: &str| Row {
            status: Status::Ok,
            note: note.to_owned(),
            sizing: Some(RunSizing {
                concurrent,
                ..RunSizing::default()
            }),
            ..Row::default()
        };
        let mut alone = measured(Some(3), "host clock");
        note_alone(&mut alone, 2);
        assert_eq!(
            alone.note,
            "host clock; started with 2 of 3 adapters measuring"
        );
        for (mut row, met) in [(measured(Some(3), ""), 3), (measured(None, ""), 1)] {
            note_alone(&mut row, met);
            assert_eq!(row.note, "");
        }
    }
}
