//! What a person watching a run sees: bars for the cases and the predictions, or, in a
//! log or where several adapters print at once, a line per measurement; and for
//! `cargo bench`, only what was skipped or failed.

use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::{Outcome, Progress};
use crate::error::{Error, Result};
use crate::measure::Stats;
use crate::suite::{CaseId, Setting};
use crate::text::{shown, shown_lines};

/// A progress bar of `len` steps, the time taken and a message.
pub(crate) fn bar(len: usize) -> Result<ProgressBar> {
    Ok(
        ProgressBar::new(len as u64)
            .with_style(style("{bar:30} {pos}/{len} {elapsed} {wide_msg}")?),
    )
}

/// The progress style of `template`.
pub(crate) fn style(template: &str) -> Result<ProgressStyle> {
    ProgressStyle::with_template(template)
        .map_err(|e| Error::Internal(format!("progress bar template: {e}")))
}

/// The line that says case `id` was skipped or failed in `setting`, if it was.
fn notice(id: &CaseId, setting: Setting, outcome: &Outcome) -> Option<String> {
    match outcome {
        Outcome::Failed(reason) => {
            Some(format!("FAILED {id} ({setting}): {}", shown_lines(reason)))
        }
        Outcome::Skipped(reason) => {
            Some(format!("skipped {id} ({setting}): {}", shown_lines(reason)))
        }
        Outcome::Measured(_) | Outcome::Predicted => None,
    }
}

/// A run's progress: one bar for the cases, one for the predictions; where standard
/// error is no terminal (a log, CI), or several adapters print at once, a line per
/// measurement instead, with the time since the start, so that a log shows where a run
/// spends its time.
#[derive(Debug)]
pub(crate) struct Bars {
    cases: ProgressBar,
    simulation: ProgressBar,
    _bars: MultiProgress,
    lines: Option<Instant>,
    /// What each line starts with: the adapter, where several print at once.
    tag: String,
    /// When a line last told of the predictions (lines only).
    told: Mutex<Instant>,
}

/// How often a line tells of the predictions while they are made: no silence of more
/// than this after the last case.
const PREDICTION_LINE_INTERVAL: Duration = Duration::from_secs(5);

impl Bars {
    /// Bars for `measurements` (a case in each setting that takes it) and the
    /// predictions of `cases`; lines, each starting with `tag`, where it is not empty.
    pub(crate) fn new(measurements: usize, cases: usize, tag: &str) -> Result<Self> {
        let lines = (!tag.is_empty() || !std::io::IsTerminal::is_terminal(&std::io::stderr()))
            .then(Instant::now);
        let bars = match lines {
            Some(_) => MultiProgress::with_draw_target(ProgressDrawTarget::hidden()),
            None => MultiProgress::new(),
        };
        let simulation = bars.add(bar(cases)?);
        simulation.set_message("simulating (once the model is calibrated)");
        Ok(Bars {
            cases: bars.insert(0, bar(measurements)?),
            simulation,
            _bars: bars,
            lines,
            tag: tag.to_owned(),
            told: Mutex::new(Instant::now()),
        })
    }

    /// In lines, a line on the predictions, where `due` (and the last is long enough
    /// ago): how many are made, of how many, and about how long the rest take.
    fn tell_predictions(&self, due: bool) {
        let Some(start) = self.lines else {
            return;
        };
        let mut told = self.told.lock().unwrap_or_else(PoisonError::into_inner);
        let (made, of) = (
            self.simulation.position(),
            self.simulation.length().unwrap_or(0),
        );
        if !due && told.elapsed() < PREDICTION_LINE_INTERVAL && made < of {
            return;
        }
        *told = Instant::now();
        let left = match made {
            0 => String::new(),
            _ => format!(", about {} s left", self.simulation.eta().as_secs()),
        };
        stderrln!(
            "{}[{:7.1} s] simulating: {made} of {of} cases predicted{left}",
            self.tag,
            start.elapsed().as_secs_f64()
        );
    }

    pub(crate) fn finish(&self) {
        self.cases.finish_and_clear();
        self.simulation.finish_and_clear();
    }
}

impl Progress for Bars {
    fn started(&self, id: &CaseId, setting: Setting) {
        self.cases.set_message(format!("{id} ({setting})"));
    }

    fn finished(&self, id: &CaseId, setting: Setting, outcome: &Outcome) {
        if let Some(start) = self.lines {
            let what = match outcome {
                Outcome::Measured(timing) => Stats::of(&timing.samples_ns)
                    .map_or_else(String::new, |s| format!("{:.3} us", s.median / 1e3)),
                Outcome::Failed(reason) => format!("FAILED: {reason}"),
                Outcome::Skipped(reason) => format!("skipped: {reason}"),
                Outcome::Predicted => "predicted".to_owned(),
            };
            let line = format!(
                "[{:7.1} s] {id} ({setting}): {what}",
                start.elapsed().as_secs_f64()
            );
            // Every line of a multi-line failure tagged and shown, all written at once.
            let tagged: String = line
                .lines()
                .map(|l| format!("{}{}\n", self.tag, shown(l)))
                .collect();
            stderr!("{tagged}");
            return;
        }
        if let Some(notice) = notice(id, setting, outcome) {
            self.cases.println(notice);
        }
        self.cases.inc(1);
    }

    fn predicting(&self) {
        self.simulation.set_message("simulating");
        self.tell_predictions(true);
    }

    fn predicted(&self) {
        self.simulation.inc(1);
        self.tell_predictions(false);
    }
}

/// Only what was skipped or failed, a line each on stderr: `cargo bench`, where
/// criterion tells the rest.
#[derive(Debug)]
pub struct Notices;

impl Progress for Notices {
    fn finished(&self, id: &CaseId, setting: Setting, outcome: &Outcome) {
        if let Some(notice) = notice(id, setting, outcome) {
            stderrln!("{notice}");
        }
    }
}
