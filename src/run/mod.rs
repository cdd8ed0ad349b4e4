//! The driver: every case of a run, on one backend, through skip → prepare → verify
//! → time → row → write, with the simulator's predictions beside. `membench run`,
//! `membench simulate` and `cargo bench` all go through here; `cargo bench` swaps only
//! the sampler ([`Sample`]) for criterion's.

mod predict;
mod rows;

pub use predict::{Background, Predicted, describe_model, device_model, predict_cases};
pub use rows::{case_row, fill_prediction, row};

use std::path::Path;
use std::thread::{Scope, ScopedJoinHandle};

use crate::backend::Backend;
use crate::error::{Error, Result};
use crate::measure::{Sample, Sampler, Timing};
use crate::results::{self, Row, RunInfo, Status};
use crate::sim::device::DeviceModel;
use crate::sim::model::Prediction;
use crate::suite::{Case, CaseData, CaseId, Experiment, Measure, REGISTRY, Sizing};

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
}

impl Default for RunSettings {
    fn default() -> Self {
        RunSettings {
            quick: false,
            samples: 30,
            buffer_bytes: None,
            matrix: None,
        }
    }
}

/// Whether case id `id` matches `filter`: a substring, or with a trailing `$` a suffix
/// (`offset=1$` is offset 1 alone, not 10 to 19).
fn matches(id: &str, filter: &str) -> bool {
    match filter.strip_suffix('$') {
        Some(suffix) => id.ends_with(suffix),
        None => id.contains(filter),
    }
}

/// Every case whose id matches one of `filters` (all cases for none). A filter that
/// matches nothing is an error, not an empty run.
pub fn select(sizing: &Sizing, filters: &[String]) -> Result<Vec<(&'static Experiment, Case)>> {
    let filters: Vec<&String> = filters.iter().filter(|f| !f.is_empty()).collect();
    let all: Vec<_> = REGISTRY
        .iter()
        .flat_map(|experiment| {
            (experiment.cases)(sizing)
                .into_iter()
                .map(move |case| (experiment, case))
        })
        .collect();
    if let Some(unmatched) = filters.iter().find(|filter| {
        !all.iter()
            .any(|(e, c)| matches(&c.id(e).to_string(), filter))
    }) {
        return Err(Error::NoMatch((*unmatched).clone()));
    }
    Ok(all
        .into_iter()
        .filter(|(e, c)| {
            filters.is_empty() || filters.iter().any(|f| matches(&c.id(e).to_string(), f))
        })
        .collect())
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
/// `data` makes the case's inputs and references (it is not called for a skipped
/// case); errors become a failed outcome, so one case never sinks the run.
pub fn measure_case<B: Backend>(
    backend: &B,
    experiment: &Experiment,
    case: &Case,
    samples: u32,
    sampler: &mut dyn Sample,
    data: impl FnOnce() -> Result<CaseData>,
) -> Outcome {
    if let Some(reason) = &case.skip {
        return Outcome::Skipped(reason.clone());
    }
    let measure = || -> Result<Timing> {
        let data = data()?;
        match experiment.measure {
            Measure::Kernel => {
                let prepared = backend.prepare(experiment, case, data.inputs)?;
                backend.verify(&prepared, &data.expected)?;
                let mut clock = backend.clock(&prepared)?;
                sampler.sample(&case.id(experiment), case.bytes, clock.as_mut())
            }
            Measure::Transfer(path) => {
                let transfer = Sampler::TRANSFER.with_samples(samples);
                backend.transfer(experiment, case, path, transfer, data)
            }
        }
    };
    match measure() {
        Ok(timing) => Outcome::Measured(timing),
        Err(error) => Outcome::Failed(error.to_string()),
    }
}

/// The rows of `membench simulate`: every case predicted on `model`, none measured.
pub fn predicted_rows(
    cases: &[(&'static Experiment, Case)],
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
            let mut row = row(&info, experiment, case, &outcome);
            match prediction {
                Some(prediction) => fill_prediction(&mut row, prediction),
                None if case.skip.is_none() => {
                    row.status = Status::NotSimulated;
                    row.note = "a host-device transfer: measured only".to_owned();
                }
                None => {}
            }
            row
        })
        .collect()
}

/// What a person watching a run is told.
pub trait Progress: Sync {
    /// Case `id` is about to run.
    fn started(&self, _id: &CaseId) {}
    /// Case `id` ran, with `outcome`.
    fn finished(&self, _id: &CaseId, _outcome: &Outcome) {}
    /// The predictions have started.
    fn predicting(&self) {}
    /// One more case is predicted.
    fn predicted(&self) {}
}

/// Nothing to tell.
pub struct Quiet;

impl Progress for Quiet {}

/// Where a run's rows go and what they merge with.
pub struct Output<'a> {
    pub path: &'a Path,
    /// The file's rows from before this run; this run's rows replace those of the
    /// same case.
    pub old_rows: &'a [Row],
}

/// One run of cases on one backend.
pub struct Session<'a, B> {
    pub backend: &'a B,
    pub settings: &'a RunSettings,
    pub info: &'a RunInfo,
    /// Make the next case's data and the predictions beside the GPU-clock
    /// measurements: not on a software adapter, whose kernels run on those cores.
    pub beside: bool,
    /// Rows of the same device from before, for calibrating the model.
    pub known_rows: &'a [Row],
    /// Saved after every case, so that an interrupted run keeps what it measured.
    pub output: Option<Output<'a>>,
}

/// What a session made.
pub struct Ran {
    pub rows: Vec<Row>,
    pub failed: usize,
    pub predicted: Predicted,
}

impl<B: Backend + Sync> Session<'_, B> {
    /// Runs `cases` in order: each measured (its data made beside the previous one's
    /// measurement), its row saved; the predictions start once the model is
    /// calibrated from this run's last `copy/peak` and run beside the GPU-clock
    /// measurements, never beside a host-clock transfer.
    pub fn run(
        &self,
        cases: &[(&'static Experiment, Case)],
        sampler: &mut dyn Sample,
        progress: &dyn Progress,
    ) -> Result<Ran> {
        let calibrated_after = cases
            .iter()
            .rposition(|(experiment, _)| experiment.name() == "copy/peak");
        let mut rows = Vec::with_capacity(cases.len());
        let mut failed = 0;
        let predicted = std::thread::scope(|scope| -> Result<Predicted> {
            let mut background = Background::Waiting;
            let mut next_data: Option<ScopedJoinHandle<CaseData>> = None;
            for (index, (experiment, case)) in cases.iter().enumerate() {
                let gpu_clock = experiment.measure == Measure::Kernel;
                if !gpu_clock {
                    background = background.finished()?;
                }
                let data = next_data.take();
                if self.beside && gpu_clock {
                    next_data = prefetch(scope, cases.get(index + 1));
                }
                let data = || match data {
                    Some(thread) => thread
                        .join()
                        .map_err(|_| Error::Internal("a case's data panicked".to_owned())),
                    None => Ok((case.data)()),
                };
                let id = case.id(experiment);
                progress.started(&id);
                let outcome = measure_case(
                    self.backend,
                    experiment,
                    case,
                    self.settings.samples,
                    sampler,
                    data,
                );
                failed += usize::from(matches!(outcome, Outcome::Failed(_)));
                progress.finished(&id, &outcome);
                rows.push(row(self.info, experiment, case, &outcome));
                self.save(&rows)?;
                let calibrated = calibrated_after.is_none_or(|last| index >= last);
                if self.beside && calibrated && matches!(background, Background::Waiting) {
                    progress.predicting();
                    let model = self.model(&rows);
                    background = Background::start(scope, cases, model, || progress.predicted());
                }
            }
            match background.finished()? {
                Background::Made(predicted) => Ok(predicted),
                _ => {
                    progress.predicting();
                    let model = self.model(&rows);
                    Ok(Predicted::make(cases, model, &|| progress.predicted()))
                }
            }
        })?;
        for (row, prediction) in rows.iter_mut().zip(&predicted.predictions) {
            if let Some(prediction) = prediction {
                fill_prediction(row, prediction);
            }
        }
        self.save(&rows)?;
        Ok(Ran {
            rows,
            failed,
            predicted,
        })
    }

    /// The model calibrated from `rows` and the known rows of this device.
    fn model(&self, rows: &[Row]) -> DeviceModel {
        let known: Vec<Row> = rows.iter().chain(self.known_rows).cloned().collect();
        device_model(&self.info.device, &known)
    }

    fn save(&self, rows: &[Row]) -> Result<()> {
        match &self.output {
            Some(output) => {
                results::write(output.path, &results::merge(output.old_rows.to_vec(), rows))
            }
            None => Ok(()),
        }
    }
}

/// Starts making the data of `next`, unless it is skipped.
fn prefetch<'scope>(
    scope: &'scope Scope<'scope, '_>,
    next: Option<&'scope (&'static Experiment, Case)>,
) -> Option<ScopedJoinHandle<'scope, CaseData>> {
    next.filter(|(_, case)| case.skip.is_none())
        .map(|(_, case)| scope.spawn(|| (case.data)()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters_are_substrings_or_anchored_suffixes() {
        let sizing = Sizing::nominal(true);
        let ids = |filter: &str| -> Vec<String> {
            select(&sizing, &[filter.to_owned()])
                .unwrap()
                .iter()
                .map(|(e, c)| c.id(e).to_string())
                .collect()
        };
        assert_eq!(ids("copy/offset/offset=1").len(), 11);
        assert_eq!(ids("copy/offset/offset=1$"), ["copy/offset/offset=1"]);
        assert!(matches!(
            select(&sizing, &["nope".into()]),
            Err(Error::NoMatch(_))
        ));
        assert_eq!(
            select(&sizing, &[String::new()]).unwrap().len(),
            select(&sizing, &[]).unwrap().len()
        );
    }
}
