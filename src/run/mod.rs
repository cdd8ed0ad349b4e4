//! The driver: every case of a run, on one backend, through skip → prepare → verify
//! → time → row → write, with the simulator's predictions beside. `membench run` is a
//! [`Plan`] that drives a [`Session`] on each adapter it measures; `cargo bench` drives
//! the same session with criterion as its sampler ([`crate::measure::Driven`]).

mod args;
mod backends;
mod lockstep;
mod plan;
mod predict;
pub mod progress;
mod rows;
pub mod stop;

pub use args::RunArgs;
pub use backends::Backends;
pub use lockstep::{Lockstep, Party};
pub use plan::{Adapters, Destination, Ended, Plan, check_settings, identity, parse_matrix};
pub use progress::{Bars, Notices};

pub use predict::{
    Background, Predicted, describe_model, device_model, predict_cases, predict_transfer,
};
pub use rows::{case_row, fill_prediction, fill_telemetry, row};

use std::path::Path;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::{Scope, ScopedJoinHandle};
use std::time::{Duration, Instant};

use crate::backend::{Backend, nvml};
use crate::error::Result;
use crate::measure::{Sample, Sampler, Timing};
use crate::results::{self, Row, RunInfo, Status};
use crate::sim::device::DeviceModel;
use crate::sim::model::Prediction;
use crate::suite::RunSizing;
use crate::suite::{Api, Case, CaseData, CaseId, Experiment, Measure, Setting};

/// Settings of one run that change what is measured.
#[derive(Clone, Debug)]
pub struct RunSettings {
    pub quick: bool,
    /// Timed samples per case (at least [`crate::measure::MIN_SAMPLES`]).
    pub samples: u32,
    /// Main buffer of the streaming experiments, if not the default.
    pub buffer_bytes: Option<u64>,
    /// Matrix size (columns, rows) of the 2-D experiments, if not the default.
    pub matrix: Option<(u32, u32)>,
    /// The adapters measuring at the same time, this one included, if more than one.
    pub concurrent: Option<u32>,
}

impl RunSettings {
    /// The settings that size the cases and whether others ran beside: the `sizing`
    /// column, part of a results file's identity.
    pub fn sizing(&self) -> RunSizing {
        RunSizing {
            quick: self.quick,
            buffer_bytes: self.buffer_bytes,
            matrix: self.matrix,
            concurrent: self.concurrent,
        }
    }
}

impl Default for RunSettings {
    fn default() -> Self {
        RunSettings {
            quick: false,
            samples: crate::measure::DEFAULT_SAMPLES,
            buffer_bytes: None,
            matrix: None,
            concurrent: None,
        }
    }
}

/// The rows `cases` give at their sizing with nothing measured: what a results file's
/// rows are checked against where it does not record its sizing.
pub fn case_rows(cases: &[(&'static Experiment, Case)]) -> Vec<Row> {
    cases
        .iter()
        .map(|(experiment, case)| case_row(experiment, case))
        .collect()
}

/// What became of one case.
pub enum Outcome {
    Measured(Timing),
    Skipped(String),
    Failed(String),
    /// Predicted only (`membench simulate`): nothing ran on a device.
    Predicted,
}

/// Skip, prepare, verify, then time one case on `backend`: a kernel through
/// `sampler`, a transfer through the backend's own path with the transfer sampler.
/// `data` holds the case's inputs and references, made once for every backend (it is
/// not made for a case every backend skips); errors become a failed outcome, so one
/// case never sinks the run.
pub fn measure_case<B: Backend>(
    backend: &B,
    experiment: &Experiment,
    case: &Case,
    samples: u32,
    sampler: &mut dyn Sample,
    data: &CaseData,
) -> Outcome {
    if let Some(reason) = skip_reason(backend, experiment, case) {
        return Outcome::Skipped(reason);
    }
    let mut measure = || -> Result<Timing> {
        match experiment.measure {
            Measure::Kernel => {
                let prepared = prepare_verified(backend, experiment, case, data)?;
                let mut clock = backend.clock(&prepared, case.cache)?;
                if case.untimed_first > 0 {
                    // The warm-up of one sample, which is dropped.
                    clock.samples_ns(1, 1, case.untimed_first)?;
                }
                let id = case.id(experiment);
                sampler.sample(&id, backend.setting(), case.bytes, clock.as_mut())
            }
            Measure::Transfer(path) => {
                let transfer = Sampler::TRANSFER.with_samples(samples);
                let timing = backend.transfer(experiment, case, path, transfer, data)?;
                let id = case.id(experiment);
                Ok(sampler.transfer(&id, backend.setting(), case.bytes, timing))
            }
        }
    };
    match measure() {
        Ok(timing) => Outcome::Measured(timing),
        Err(error) => Outcome::Failed(error.to_string()),
    }
}

/// The case's kernel on `backend`, prepared and verified.
fn prepare_verified<B: Backend>(
    backend: &B,
    experiment: &Experiment,
    case: &Case,
    data: &CaseData,
) -> Result<B::Prepared> {
    let prepared = backend.prepare(experiment, case, &data.inputs)?;
    backend.verify(&prepared, &data.expected)?;
    Ok(prepared)
}

/// Why `backend` does not measure `case`: the case's own reason, else the backend's.
fn skip_reason<B: Backend>(backend: &B, experiment: &Experiment, case: &Case) -> Option<String> {
    case.skip.clone().or_else(|| backend.skip(experiment, case))
}

/// A backend as the session drives it, whatever its prepared type: several of them
/// measure each case in turn.
pub trait Runner: Sync {
    /// The api and build of the backend's rows.
    fn setting(&self) -> Setting;
    /// Whether the backend gives `experiment` rows at all.
    fn takes(&self, experiment: &Experiment) -> bool;
    /// Why the backend skips `case`, if it does.
    fn skip_reason(&self, experiment: &Experiment, case: &Case) -> Option<String>;
    /// [`measure_case`] on the backend.
    fn measure(
        &self,
        experiment: &Experiment,
        case: &Case,
        samples: u32,
        sampler: &mut dyn Sample,
        data: &CaseData,
    ) -> Outcome;
}

impl<B: Backend + Sync> Runner for B {
    fn setting(&self) -> Setting {
        Backend::setting(self)
    }

    fn takes(&self, experiment: &Experiment) -> bool {
        Backend::takes(self, experiment)
    }

    fn skip_reason(&self, experiment: &Experiment, case: &Case) -> Option<String> {
        skip_reason(self, experiment, case)
    }

    fn measure(
        &self,
        experiment: &Experiment,
        case: &Case,
        samples: u32,
        sampler: &mut dyn Sample,
        data: &CaseData,
    ) -> Outcome {
        measure_case(self, experiment, case, samples, sampler, data)
    }
}

/// One backend of a session and the columns its rows record.
pub struct Measurer<'a> {
    pub backend: &'a dyn Runner,
    pub info: RunInfo,
}

/// The rows of `membench simulate`: every case predicted on `model`, none measured.
pub fn predicted_rows(
    cases: &[(&'static Experiment, Case)],
    sizing: RunSizing,
    predictions: &[Option<Result<Prediction, String>>],
    model: &DeviceModel,
) -> Vec<Row> {
    let info = RunInfo {
        device: model.name.to_owned(),
        ..RunInfo::default()
    };
    cases
        .iter()
        .zip(predictions)
        .map(|((experiment, case), prediction)| {
            let outcome = match &case.skip {
                Some(reason) => Outcome::Skipped(reason.clone()),
                None => Outcome::Predicted,
            };
            let mut row = row(&info, sizing, experiment, case, &outcome);
            // A transfer as the api that has its path runs it (wgpu where both do).
            let api = match experiment.measure {
                Measure::Transfer(path) if !path.in_wgpu() => Api::Cuda,
                _ => Api::Wgpu,
            };
            let transfer = case
                .skip
                .is_none()
                .then(|| predict_transfer(model, experiment, (&case.params, case.bytes), api))
                .flatten();
            match prediction.as_ref().or(transfer.as_ref()) {
                Some(prediction) => fill_prediction(&mut row, prediction),
                None if case.skip.is_none() => {
                    row.status = Status::NotSimulated;
                    row.note = "not simulated".to_owned();
                }
                None => {}
            }
            row
        })
        .collect()
}

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
pub struct Quiet;

impl Progress for Quiet {}

/// Where a run's rows go: a results file, which may hold rows of other runs of its
/// identity; this run's rows replace those of the same case and setting.
pub struct Output<'a> {
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
    pub measurers: &'a [Measurer<'a>],
    pub settings: &'a RunSettings,
    /// The device, as the model's preset is chosen by it.
    pub device: &'a str,
    /// Make the next case's data and the predictions beside the GPU-clock
    /// measurements: not on a software adapter, whose kernels run on those cores.
    pub beside: bool,
    /// Rows of the same device from before, for calibrating the model.
    pub known_rows: &'a [Row],
    /// Saved every [`SAVE_INTERVAL`] and at the end, so that an interrupted run keeps
    /// what it measured.
    pub output: Option<Output<'a>>,
    /// Set (by Ctrl-C) to stop after the case under way: the cases measured so far
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

/// What a session made.
pub struct Ran {
    /// One row per case and backend that takes it, in case order.
    pub rows: Vec<Row>,
    pub failed: usize,
    /// The predictions, where the session makes them.
    pub predicted: Option<Predicted>,
    /// Stopped before the last case.
    pub interrupted: bool,
}

impl<'a> Session<'a> {
    /// A session of `measurers` on `device` that measures alone, predicts at the end
    /// from its own rows and writes nothing: each use sets what it changes.
    pub fn new(measurers: &'a [Measurer<'a>], settings: &'a RunSettings, device: &'a str) -> Self {
        Session {
            measurers,
            settings,
            device,
            beside: false,
            known_rows: &[],
            output: None,
            stop: None,
            lockstep: None,
            predict: true,
            telemetry: None,
        }
    }

    /// Runs `cases` (the calibration cases first where the predictions run beside or a
    /// signal may stop the run), each on every backend that takes it in a setting the
    /// sampler takes (its data made once, beside the previous case's measurement), its
    /// rows saved; the predictions start once the model is calibrated and run beside
    /// the GPU-clock measurements, never beside a host-clock transfer. The rows come
    /// back in case order.
    pub fn run(
        &self,
        cases: &[(&'static Experiment, Case)],
        sampler: &mut dyn Sample,
        progress: &dyn Progress,
    ) -> Result<Ran> {
        // The calibration cases first, so that the predictions run beside the rest of
        // the GPU-clock cases and are made before the host-clock transfers, which wait
        // for them (on an H100 they had held the transfers back by 27 s), and so that a
        // run stopped early is calibrated. A session that predicts at its end and runs
        // to it (`cargo bench`) keeps the cases' order.
        let calibration_first = self.beside || self.stop.is_some();
        let (first, rest): (Vec<usize>, Vec<usize>) = (0..cases.len()).partition(|&index| {
            let (experiment, case) = &cases[index];
            calibration_first && crate::calibrate::is_calibration(&case.id(experiment))
        });
        let calibrated_after = first.len().checked_sub(1);
        let order: Vec<usize> = first.into_iter().chain(rest).collect();
        let mut rows = Vec::with_capacity(cases.len() * self.measurers.len());
        // The case of each row, for its prediction.
        let mut row_cases = Vec::with_capacity(rows.capacity());
        let mut failed = 0;
        let sizing = self.settings.sizing();
        let stopped = || self.stop.is_some_and(|stop| stop.load(Ordering::SeqCst));
        // The cases measured, in the order measured: all of them, unless the run is
        // stopped.
        let mut measured = order.len();
        let mut saved = Instant::now();
        let predicted = std::thread::scope(|scope| -> Result<Option<Predicted>> {
            let mut background = Background::Waiting;
            let mut next_data: Option<ScopedJoinHandle<CaseData>> = None;
            for (position, &index) in order.iter().enumerate() {
                let (experiment, case) = &cases[index];
                let gpu_clock = experiment.measure == Measure::Kernel;
                if !gpu_clock {
                    background = background.finished()?;
                }
                let prefetched = next_data.take();
                if self.beside && gpu_clock {
                    next_data = prefetch(scope, order.get(position + 1).map(|&next| &cases[next]));
                }
                let id = case.id(experiment);
                let takers: Vec<&Measurer> = self
                    .measurers
                    .iter()
                    .filter(|m| m.backend.takes(experiment))
                    .filter(|m| sampler.takes(&id, m.backend.setting()))
                    .collect();
                let runs = takers
                    .iter()
                    .any(|m| m.backend.skip_reason(experiment, case).is_none());
                let data = match (runs, prefetched) {
                    (false, _) => Ok(None),
                    (true, Some(thread)) => thread
                        .join()
                        .map(Some)
                        .map_err(|_| "a case's data panicked".to_owned()),
                    (true, None) => Ok(Some((case.data)())),
                };
                for measurer in takers {
                    let setting = measurer.backend.setting();
                    let met = self.lockstep.map(Party::wait);
                    progress.started(&id, setting);
                    let watch = self.telemetry.and_then(nvml::Watch::start);
                    let outcome = match &data {
                        Ok(Some(data)) => measurer.backend.measure(
                            experiment,
                            case,
                            self.settings.samples,
                            sampler,
                            data,
                        ),
                        Ok(None) => Outcome::Skipped(
                            measurer
                                .backend
                                .skip_reason(experiment, case)
                                .unwrap_or_default(),
                        ),
                        Err(why) => Outcome::Failed(why.clone()),
                    };
                    let telemetry = watch.map(nvml::Watch::finish);
                    failed += usize::from(matches!(outcome, Outcome::Failed(_)));
                    progress.finished(&id, setting, &outcome);
                    let mut row = row(&measurer.info, sizing, experiment, case, &outcome);
                    if let Some(telemetry) = &telemetry {
                        fill_telemetry(&mut row, telemetry);
                    }
                    if let Some(met) = met {
                        note_alone(&mut row, met);
                    }
                    rows.push(row);
                    row_cases.push(index);
                }
                if saved.elapsed() >= SAVE_INTERVAL {
                    self.save(&rows)?;
                    saved = Instant::now();
                }
                if stopped() && position + 1 < order.len() {
                    measured = position + 1;
                    break;
                }
                let calibrated = calibrated_after.is_none_or(|last| position >= last);
                if self.beside
                    && self.predict
                    && calibrated
                    && matches!(background, Background::Waiting)
                {
                    progress.predicting();
                    let known = self.known(&rows);
                    let device = self.device;
                    let model = move || device_model(device, &known);
                    background = Background::start(scope, cases, model, || progress.predicted());
                }
            }
            // Measured: the others need not wait for this session's predictions.
            if let Some(party) = self.lockstep {
                party.leave();
            }
            match background.finished()? {
                Background::Made(predicted) => Ok(Some(*predicted)),
                _ if !self.predict => Ok(None),
                _ => {
                    progress.predicting();
                    let model = self.model(&rows);
                    let measured = &order[..measured];
                    let subset: Vec<_> = measured.iter().map(|&i| cases[i].clone()).collect();
                    let mut predicted = Predicted::make(&subset, model, &|| progress.predicted());
                    // Back to one prediction per case, by case index.
                    let mut predictions = vec![None; cases.len()];
                    for (&index, prediction) in measured.iter().zip(predicted.predictions) {
                        predictions[index] = prediction;
                    }
                    predicted.predictions = predictions;
                    Ok(Some(predicted))
                }
            }
        })?;
        // Rows in case order, whatever order they were measured in.
        let mut ordered: Vec<(usize, Row)> = row_cases.iter().copied().zip(rows).collect();
        ordered.sort_by_key(|&(index, _)| index);
        let (row_cases, mut rows): (Vec<usize>, Vec<Row>) = ordered.into_iter().unzip();
        if let Some(predicted) = &predicted {
            for (row, &index) in rows.iter_mut().zip(&row_cases) {
                if let Some(Some(prediction)) = predicted.predictions.get(index) {
                    fill_prediction(row, prediction);
                } else if row.status == Status::Ok {
                    let (experiment, case) = &cases[index];
                    let case = (&case.params, case.bytes);
                    if let Some(prediction) =
                        predict_transfer(&predicted.model, experiment, case, row.api)
                    {
                        fill_prediction(row, &prediction);
                    }
                }
            }
        }
        self.save(&rows)?;
        Ok(Ran {
            rows,
            failed,
            predicted,
            interrupted: measured < cases.len(),
        })
    }

    /// The model calibrated from `rows` and the known rows of this device.
    fn model(&self, rows: &[Row]) -> DeviceModel {
        device_model(self.device, &self.known(rows))
    }

    /// `rows` and the known rows of this device, to calibrate from.
    fn known(&self, rows: &[Row]) -> Vec<Row> {
        rows.iter().chain(self.known_rows).cloned().collect()
    }

    /// Adds `rows` to the results file, re-read under its lock: a run beside this one
    /// into the same file keeps its rows.
    fn save(&self, rows: &[Row]) -> Result<()> {
        match &self.output {
            Some(output) => results::update(output.path, rows, |old| {
                output.identity.admit(output.path, old, output.case_rows)
            }),
            None => Ok(()),
        }
    }
}

/// How often a run saves its rows while it measures. Each save re-reads and rewrites
/// the whole file, synced: after every case, that took 7 s of a 208 s run on an H100.
/// A run that is killed loses at most this much of its measuring; one stopped by a
/// signal loses nothing.
const SAVE_INTERVAL: Duration = Duration::from_secs(2);

/// Starts making the data of `next`, unless it is skipped, on [`data_pool`]'s threads.
fn prefetch<'scope>(
    scope: &'scope Scope<'scope, '_>,
    next: Option<&'scope (&'static Experiment, Case)>,
) -> Option<ScopedJoinHandle<'scope, CaseData>> {
    next.filter(|(_, case)| case.skip.is_none())
        .map(|(_, case)| {
            scope.spawn(|| match data_pool() {
                Some(pool) => pool.install(|| (case.data)()),
                None => (case.data)(),
            })
        })
}

/// Half the cores, for the next case's data, apart from rayon's global pool, which the
/// measured case's uploads and comparisons use. With one pool a case's first upload took
/// 3× as long as the same upload for the next build; apart, the families that move the
/// most data ran 4–8 % faster (H100, A/B in one command).
fn data_pool() -> Option<&'static rayon::ThreadPool> {
    static POOL: OnceLock<Option<rayon::ThreadPool>> = OnceLock::new();
    POOL.get_or_init(|| {
        rayon::ThreadPoolBuilder::new()
            .num_threads((rayon::current_num_threads() / 2).max(1))
            .thread_name(|i| format!("membench-data-{i}"))
            .build()
            .ok()
    })
    .as_ref()
}

#[cfg(test)]
mod tests {
    use super::*;

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
