//! One case on one backend: skip → prepare → verify → time, and the object-safe
//! [`Measurer`] the session drives every backend through, whatever its prepared type.

use crate::backend::Backend;
use crate::error::Result;
use crate::measure::{Sample, Sampler, Timing};
use crate::results::RunInfo;
use crate::suite::{Case, CaseData, Experiment, Measure, Setting};

/// What became of one case.
#[derive(Debug)]
pub enum Outcome {
    /// Verified, then timed.
    Measured(Timing),
    /// Not run, for this reason.
    Skipped(String),
    /// Ran and failed (verification, a device error), for this reason.
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
    let measured = match experiment.measure {
        Measure::Kernel => time_kernel(backend, experiment, case, sampler, data),
        Measure::Transfer(path) => {
            let transfer = Sampler::TRANSFER.with_samples(samples);
            backend
                .transfer(experiment, case, path, transfer, data)
                .map(|timing| {
                    let id = case.id(experiment);
                    sampler.transfer(&id, backend.setting(), case.bytes, timing)
                })
        }
    };
    match measured {
        Ok(timing) => Outcome::Measured(timing),
        Err(error) => Outcome::Failed(error.to_string()),
    }
}

/// The case's kernel prepared, verified, then timed through `sampler`.
fn time_kernel<B: Backend>(
    backend: &B,
    experiment: &Experiment,
    case: &Case,
    sampler: &mut dyn Sample,
    data: &CaseData,
) -> Result<Timing> {
    let prepared = backend.prepare(experiment, case, &data.inputs)?;
    backend.verify(&prepared, &data.expected)?;
    let prepared = agree(backend, experiment, case, prepared, data)?;
    let mut clock = backend.clock(&prepared, case.cache)?;
    if case.untimed_first > 0 {
        // The warm-up of one sample, which is dropped.
        clock.samples_ns(1, 1, case.untimed_first)?;
    }
    let id = case.id(experiment);
    sampler.sample(&id, backend.setting(), case.bytes, clock.as_mut())
}

/// Where the case asks for it ([`Case::agree`]): a second instance from the same
/// inputs, dispatched once, must leave what the first left. The first is dropped
/// before the second is made, so a kernel as large as the device allows is checked
/// too; the second is the one returned, to be timed.
fn agree<B: Backend>(
    backend: &B,
    experiment: &Experiment,
    case: &Case,
    prepared: B::Prepared,
    data: &CaseData,
) -> Result<B::Prepared> {
    let Some(agree) = &case.agree else {
        return Ok(prepared);
    };
    let Some(first) = backend.outputs(&prepared)? else {
        return Ok(prepared);
    };
    drop(prepared);
    let again = backend.prepare(experiment, case, &data.inputs)?;
    backend.verify(&again, &agree(first))?;
    Ok(again)
}

/// Why `backend` does not measure `case`: the case's own reason, else the backend's.
fn skip_reason<B: Backend>(backend: &B, experiment: &Experiment, case: &Case) -> Option<String> {
    case.skip.clone().or_else(|| backend.skip(experiment, case))
}

/// A backend as a session drives it, whatever its prepared type, with the columns its
/// rows record: several of them measure each case in turn.
pub trait Measurer: Sync {
    /// The api and build of its rows.
    fn setting(&self) -> Setting;
    /// The run's columns of its rows: device, driver, identity.
    fn info(&self) -> &RunInfo;
    /// Whether it gives `experiment` rows at all.
    fn takes(&self, experiment: &Experiment) -> bool;
    /// Why it skips `case`, if it does.
    fn skip_reason(&self, experiment: &Experiment, case: &Case) -> Option<String>;
    /// [`measure_case`] on its backend.
    fn measure(
        &self,
        experiment: &Experiment,
        case: &Case,
        samples: u32,
        sampler: &mut dyn Sample,
        data: &CaseData,
    ) -> Outcome;
}

/// `backend` as a [`Measurer`] whose rows record `info`.
pub(crate) fn measurer<'a, B: Backend + Sync>(
    backend: &'a B,
    info: RunInfo,
) -> Box<dyn Measurer + 'a> {
    Box::new(Labelled { backend, info })
}

/// A backend and its rows' columns.
struct Labelled<'a, B> {
    backend: &'a B,
    info: RunInfo,
}

impl<B: Backend + Sync> Measurer for Labelled<'_, B> {
    fn setting(&self) -> Setting {
        self.backend.setting()
    }

    fn info(&self) -> &RunInfo {
        &self.info
    }

    fn takes(&self, experiment: &Experiment) -> bool {
        self.backend.takes(experiment)
    }

    fn skip_reason(&self, experiment: &Experiment, case: &Case) -> Option<String> {
        skip_reason(self.backend, experiment, case)
    }

    fn measure(
        &self,
        experiment: &Experiment,
        case: &Case,
        samples: u32,
        sampler: &mut dyn Sample,
        data: &CaseData,
    ) -> Outcome {
        measure_case(self.backend, experiment, case, samples, sampler, data)
    }
}
