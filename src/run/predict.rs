//! Predictions: the model a run's predictions are made with (a preset, calibrated
//! from the run's own copy/peak), every case predicted on a few threads, and the
//! predictions made beside the measurements.

use std::sync::{Condvar, Mutex, PoisonError};

use rayon::prelude::*;

use crate::backend::sim;

use super::Outcome;
use super::rows::{fill_prediction, row};
use crate::error::{Error, Result};
use crate::results::Row;
use crate::results::{RunInfo, Status};
use crate::sim::device::{self as sim_device, DeviceModel};
use crate::sim::model::Prediction;
use crate::suite::{Api, Buffer, Case, Experiment, Measure, Params, RunSizing};

/// The model predictions are made with: the preset closest to the adapter, calibrated
/// from `rows` where they hold [`crate::calibrate::CALIBRATION`]'s rows.
pub(crate) fn device_model(adapter_name: &str, rows: &[Row]) -> DeviceModel {
    crate::calibrate::calibrate(sim_device::closest_preset(adapter_name), rows).model
}

/// `model`'s name, and what it was calibrated from.
pub fn describe_model(model: &DeviceModel) -> String {
    if model.calibrated {
        format!(
            "{} preset calibrated: DRAM {:.0} GB/s, latency {:.0} ns idle / {:.0} ns loaded",
            model.name, model.dram_gbps, model.dram_latency_ns, model.loaded_latency_ns
        )
    } else {
        format!(
            "{} preset, DRAM {:.0} GB/s, not calibrated: no row of the run isolates a \
             property it calibrates (at --quick sizes they may fit the caches)",
            model.name, model.dram_gbps
        )
    }
}

/// Predictions run in parallel on (at most) this many threads, within [`Budget`]: more
/// take the host's cores from the measurements beside them (docs/method.md).
const PREDICT_THREADS: usize = 4;

/// The host memory the predictions under way may take together: the largest buffer of
/// the cases predicted, so that a run's host memory stays within twice its largest
/// buffer and the process's own. A prediction waits until its
/// [`crate::backend::sim::prediction_bytes`] fit beside the others' (one alone always
/// runs).
struct Budget {
    capacity: u64,
    taken: Mutex<u64>,
    returned: Condvar,
}

impl Budget {
    fn new(capacity: u64) -> Self {
        Budget {
            capacity,
            taken: Mutex::new(0),
            returned: Condvar::new(),
        }
    }

    /// Waits until `bytes` fit, and takes them until the [`Taken`] drops.
    fn take(&self, bytes: u64) -> Taken<'_> {
        let mut taken = self.taken.lock().unwrap_or_else(PoisonError::into_inner);
        while *taken > 0 && *taken + bytes > self.capacity {
            taken = self
                .returned
                .wait(taken)
                .unwrap_or_else(PoisonError::into_inner);
        }
        *taken += bytes;
        Taken(self, bytes)
    }
}

/// Bytes of a [`Budget`], returned on drop.
struct Taken<'b>(&'b Budget, u64);

impl Drop for Taken<'_> {
    fn drop(&mut self) {
        let mut taken = self.0.taken.lock().unwrap_or_else(PoisonError::into_inner);
        *taken -= self.1;
        self.0.returned.notify_all();
    }
}

/// Predicts every runnable case on `model`, in parallel; `None` for skipped cases
/// and transfers (the memory model is of the device's memory; a transfer's row is
/// predicted by [`predict_transfer`], for its api).
/// `done` is called after each case (for progress).
pub fn predict_cases(
    cases: &[(&'static Experiment, Case)],
    model: &DeviceModel,
    done: &(dyn Fn() + Sync),
) -> Vec<Option<Result<Prediction, String>>> {
    let largest = cases
        .iter()
        .flat_map(|(_, case)| &case.buffers)
        .map(Buffer::len_bytes);
    let budget = Budget::new(largest.max().unwrap_or(0));
    let predict = |(experiment, case): &(&'static Experiment, Case)| {
        let simulated = case.skip.is_none()
            && experiment.measure == Measure::Kernel
            && crate::sim::unmodelled(experiment, case).is_none();
        let prediction = simulated.then(|| {
            let _taken = budget.take(sim::prediction_bytes(case));
            sim::predict(experiment, case, model).map_err(|e| e.to_string())
        });
        done();
        prediction
    };
    match rayon::ThreadPoolBuilder::new()
        .num_threads(PREDICT_THREADS.min(rayon::current_num_threads()))
        .build()
    {
        Ok(pool) => pool.install(|| cases.par_iter().map(predict).collect()),
        // Without a pool of its own, one thread: never more memory than allowed.
        Err(_) => cases.iter().map(predict).collect(),
    }
}

/// The prediction of a transfer row of `api`: the case of `params`, moving `bytes`,
/// along `experiment`'s path on `model`'s transfer terms ([`crate::sim::transfer`]);
/// `None` for a kernel (predicted per case by [`predict_cases`]).
pub(crate) fn predict_transfer(
    model: &DeviceModel,
    experiment: &Experiment,
    (params, bytes): (&Params, u64),
    api: Api,
) -> Option<Result<Prediction, String>> {
    let Measure::Transfer(path) = experiment.measure else {
        return None;
    };
    Some(crate::sim::transfer::time(model, path, api, params).map(|t| t.prediction(bytes)))
}

/// The rows of `membench simulate`: every case predicted on `model`, none measured.
pub(crate) fn predicted_rows(
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
                    // The status says "not simulated"; the note, why.
                    row.note = crate::sim::unmodelled(experiment, case)
                        .unwrap_or_default()
                        .to_owned();
                }
                None => {}
            }
            row
        })
        .collect()
}

/// A run's predictions, the model they were made with, and how long they took.
#[derive(Debug)]
pub struct Predicted {
    /// The device model the predictions were made with.
    pub model: DeviceModel,
    /// One per case in order: `None` where the case is not predicted, the error where it failed.
    pub predictions: Vec<Option<Result<Prediction, String>>>,
    /// Seconds the predictions took.
    pub seconds: f64,
}

impl Predicted {
    /// Predicts the cases of `cases` at `indices` on `model` here and now: one
    /// prediction per case of `cases`, `None` for those not at `indices`.
    pub(crate) fn of_some(
        cases: &[(&'static Experiment, Case)],
        indices: &[usize],
        model: DeviceModel,
        done: &(dyn Fn() + Sync),
    ) -> Self {
        let some: Vec<_> = indices.iter().map(|&i| cases[i].clone()).collect();
        let mut predicted = Predicted::make(&some, model, done);
        let mut predictions = vec![None; cases.len()];
        for (&index, prediction) in indices.iter().zip(predicted.predictions) {
            predictions[index] = prediction;
        }
        predicted.predictions = predictions;
        predicted
    }

    /// Predicts `cases` on `model` here and now.
    pub fn make(
        cases: &[(&'static Experiment, Case)],
        model: DeviceModel,
        done: &(dyn Fn() + Sync),
    ) -> Self {
        let started = std::time::Instant::now();
        let predictions = predict_cases(cases, &model, done);
        Predicted {
            model,
            predictions,
            seconds: started.elapsed().as_secs_f64(),
        }
    }
}

/// Fills the `sim_*` columns of each row of `rows` (each with its case's index into
/// `cases`) from `predicted`: a kernel's prediction, or an `ok` transfer row's, made
/// for its api.
pub(super) fn fill_predictions(
    rows: &mut [(usize, Row)],
    cases: &[(&'static Experiment, Case)],
    predicted: &Predicted,
) {
    for (index, row) in rows {
        if let Some(Some(prediction)) = predicted.predictions.get(*index) {
            fill_prediction(row, prediction);
        } else if row.status == Status::Ok {
            let (experiment, case) = &cases[*index];
            let case = (&case.params, case.bytes);
            if let Some(prediction) = predict_transfer(&predicted.model, experiment, case, row.api)
            {
                fill_prediction(row, &prediction);
            }
        }
    }
}

/// Predictions made on a thread of their own while the GPU measures.
#[derive(Debug)]
pub(crate) enum Background<'scope> {
    /// Not started (the model is not calibrated yet).
    Waiting,
    Running(std::thread::ScopedJoinHandle<'scope, Predicted>),
    Made(Box<Predicted>),
}

impl<'scope> Background<'scope> {
    /// Starts calibrating the model (`model`) and predicting `cases` on it in `scope`:
    /// the calibration simulates its cases too (seconds on a GPU's host), so it does not
    /// hold the measurements back either.
    pub(crate) fn start(
        scope: &'scope std::thread::Scope<'scope, '_>,
        cases: &'scope [(&'static Experiment, Case)],
        model: impl FnOnce() -> DeviceModel + Send + 'scope,
        done: impl Fn() + Send + Sync + 'scope,
    ) -> Self {
        Background::Running(scope.spawn(move || Predicted::make(cases, model(), &done)))
    }

    /// Whether they have not started.
    pub(crate) fn waiting(&self) -> bool {
        matches!(self, Background::Waiting)
    }

    /// Waits for predictions under way to be made; `Waiting` stays as it is.
    pub(crate) fn finished(self) -> Result<Self> {
        match self {
            Background::Running(thread) => thread
                .join()
                .map(|predicted| Background::Made(Box::new(predicted)))
                .map_err(|_| Error::Internal("the simulator's thread panicked".to_owned())),
            other => Ok(other),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_prediction_waits_until_its_bytes_fit_and_one_alone_always_runs() {
        let budget = Budget::new(100);
        drop(budget.take(250));
        let first = budget.take(60);
        let (sent, received) = std::sync::mpsc::channel();
        std::thread::scope(|scope| {
            scope.spawn(|| {
                let _second = budget.take(60);
                sent.send(()).ok();
            });
            let waited = received.recv_timeout(std::time::Duration::from_millis(100));
            assert!(waited.is_err(), "60 + 60 bytes taken of 100");
            drop(first);
            assert!(received.recv().is_ok());
        });
        assert_eq!(*budget.taken.lock().unwrap(), 0);
    }
}
