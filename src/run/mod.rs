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
pub(crate) use lockstep::Lockstep;
pub use lockstep::Party;
pub use measurer::Measurer;
pub(crate) use measurer::measurer;
pub use measurer::{Outcome, measure_case};
pub use plan::Given;
pub use plan::{Adapters, CaseSource, Ended};
pub(crate) use plan::{Destination, check_settings, parse_matrix};
pub use plan::{Plan, identity};
pub use progress::Notices;
pub(crate) use session::Quiet;
pub use session::{Output, Session};
pub use session::{Progress, Ran};

pub use predict::{Predicted, describe_model, predict_cases};
pub(crate) use predict::{predict_transfer, predicted_rows};
pub use rows::{case_row, fill_prediction, row};

use crate::results::Row;
use crate::suite::RunSizing;
use crate::suite::{Case, Experiment};

/// Settings of one run that change what is measured.
#[derive(Clone, Debug)]
pub struct RunSettings {
    /// The `--quick` sizing: small buffers, the fewest samples.
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
