//! The driver: every case of a run, on every backend, through skip → prepare → verify
//! → time → row → write, with the simulator's predictions beside. `membench run` is a
//! [`Plan`] that drives a [`Session`] on each adapter it measures; `cargo bench` drives
//! the same session with criterion as its sampler ([`crate::measure::Driven`]).

mod adapter;
mod args;
mod backends;
mod lockstep;
mod measurer;
mod plan;
mod predict;
mod prefetch;
pub mod progress;
mod rows;
mod session;
pub mod stop;

pub use args::{MeasureArgs, RunArgs};
pub use backends::Backends;
pub use lockstep::{Lockstep, Party};
pub use measurer::{Measurer, Outcome, measure_case, measurer};
pub use plan::{
    Adapters, CaseSource, Destination, Ended, Explain, Given, MakeCases, Plan, check_settings,
    identity, parse_matrix,
};
pub use progress::{Bars, Notices};
pub use session::{Output, Progress, Quiet, Ran, Session};

pub use predict::{
    Background, Predicted, describe_model, device_model, predict_cases, predict_transfer,
    predicted_rows,
};
pub use rows::{case_row, fill_prediction, fill_telemetry, row};

use crate::results::Row;
use crate::suite::RunSizing;
use crate::suite::{Case, Experiment};

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
