//! Progress of long work on standard error, so that no command is silent for long: per
//! file and stage, the steps done, the time taken and an estimate of the time left. On
//! a terminal a bar; elsewhere (a log, CI) a line when a stage starts and then one
//! every [`LINE_EVERY`].

use std::io::Write as _;
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};

/// How often a stage prints a line where standard error is no terminal.
pub(crate) const LINE_EVERY: Duration = Duration::from_secs(5);

/// How often a bar redraws its clock between steps.
const TICK: Duration = Duration::from_millis(250);

/// Where progress goes: bars, lines or nowhere; each stage's words start with `tag`
/// (the file, and which of how many).
#[derive(Clone, Debug)]
pub struct StageProgress {
    shown: Shown,
    tag: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Shown {
    Bars,
    Lines,
    Hidden,
}

impl StageProgress {
    /// Bars where standard error is a terminal, lines elsewhere.
    pub fn stderr() -> StageProgress {
        let terminal = std::io::IsTerminal::is_terminal(&std::io::stderr());
        StageProgress {
            shown: if terminal { Shown::Bars } else { Shown::Lines },
            tag: String::new(),
        }
    }

    /// Nothing shown: tests, benches.
    pub fn hidden() -> StageProgress {
        StageProgress {
            shown: Shown::Hidden,
            tag: String::new(),
        }
    }

    /// The same, each stage's words after `tag`: `[2/3] results/x.csv`.
    pub(crate) fn tagged(&self, tag: String) -> StageProgress {
        StageProgress {
            shown: self.shown,
            tag,
        }
    }

    /// A stage of `steps` steps (0 where they are not counted), in words `what`:
    /// shown until it is dropped.
    pub(crate) fn stage(&self, what: &str, steps: usize) -> Stage {
        let what = if self.tag.is_empty() {
            what.to_owned()
        } else {
            format!("{}: {what}", self.tag)
        };
        let bar = if steps > 0 {
            let left = |state: &ProgressState, w: &mut dyn std::fmt::Write| {
                let left = left(state.elapsed(), state.pos(), state.len());
                let _ = w.write_str(&left.map_or_else(|| "…".to_owned(), duration_text));
            };
            ProgressBar::new(steps as u64).with_style(
                style("{msg} {bar:30} {pos}/{len} in {elapsed}, about {left} left")
                    .with_key("left", left),
            )
        } else {
            ProgressBar::new_spinner().with_style(style("{spinner} {msg} {elapsed}"))
        };
        bar.set_message(what.clone());
        let ticker = match self.shown {
            Shown::Bars => {
                bar.enable_steady_tick(TICK);
                None
            }
            Shown::Lines => {
                bar.set_draw_target(ProgressDrawTarget::hidden());
                say(&format!("membench: {what}"));
                Some(Ticker::start(bar.clone(), what))
            }
            Shown::Hidden => {
                bar.set_draw_target(ProgressDrawTarget::hidden());
                None
            }
        };
        Stage { bar, ticker }
    }
}

/// A style from a template of this file; indicatif's default where it would not parse.
fn style(template: &str) -> ProgressStyle {
    ProgressStyle::with_template(template).unwrap_or_else(|_| ProgressStyle::default_bar())
}

/// A line on standard error; where it cannot be written, nothing (the command's own
/// output is what matters).
fn say(line: &str) {
    let _ = writeln!(std::io::stderr(), "{line}");
}

/// One stage of a [`StageProgress`], shown until dropped.
#[derive(Debug)]
pub(crate) struct Stage {
    bar: ProgressBar,
    ticker: Option<Ticker>,
}

impl Stage {
    /// One more step done (from any thread).
    pub(crate) fn step(&self) {
        self.bar.inc(1);
    }
}

impl Drop for Stage {
    fn drop(&mut self) {
        if let Some(ticker) = self.ticker.take() {
            ticker.stop();
        }
        self.bar.finish_and_clear();
    }
}

/// The thread that prints a stage's line every [`LINE_EVERY`] until stopped.
#[derive(Debug)]
struct Ticker {
    stopped: Arc<(Mutex<bool>, Condvar)>,
    thread: JoinHandle<()>,
}

impl Ticker {
    fn start(bar: ProgressBar, what: String) -> Ticker {
        let stopped = Arc::new((Mutex::new(false), Condvar::new()));
        let flag = Arc::clone(&stopped);
        let thread = std::thread::spawn(move || {
            let (lock, wake) = &*flag;
            let mut stop = lock.lock().unwrap_or_else(PoisonError::into_inner);
            loop {
                stop = wake
                    .wait_timeout(stop, LINE_EVERY)
                    .unwrap_or_else(PoisonError::into_inner)
                    .0;
                if *stop {
                    return;
                }
                say(&format!("membench: {what}: {}", done_text(&bar)));
            }
        });
        Ticker { stopped, thread }
    }

    fn stop(self) {
        let (lock, wake) = &*self.stopped;
        *lock.lock().unwrap_or_else(PoisonError::into_inner) = true;
        wake.notify_all();
        // A ticker that panicked has nothing more to print.
        let _ = self.thread.join();
    }
}

/// What a stage has done, in words: `120/812 in 35 s, about 3 min left`, or the time
/// alone where steps are not counted.
fn done_text(bar: &ProgressBar) -> String {
    let elapsed = duration_text(bar.elapsed());
    let (position, length) = (bar.position(), bar.length());
    match (length, left(bar.elapsed(), position, length)) {
        (Some(len), Some(left)) => format!(
            "{position}/{len} in {elapsed}, about {} left",
            duration_text(left)
        ),
        (Some(len), None) if len > 0 => format!("{position}/{len} in {elapsed}"),
        _ => elapsed,
    }
}

/// The time the steps left would take at the average rate so far: steadier than a
/// recent rate where steps differ a hundredfold (a 1 GiB case beside a 4 KiB one).
/// `None` before the first step.
fn left(elapsed: Duration, position: u64, length: Option<u64>) -> Option<Duration> {
    let length = length.filter(|&len| len > 0)?;
    (position > 0)
        .then(|| elapsed.mul_f64(length.saturating_sub(position) as f64 / position as f64))
}

/// `7 s`, `3 min`: as precise as an estimate is.
fn duration_text(duration: Duration) -> String {
    let seconds = duration.as_secs_f64();
    if seconds < 90.0 {
        format!("{seconds:.0} s")
    } else {
        format!("{:.0} min", seconds / 60.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stage_says_what_is_done_and_what_is_left() {
        let bar = ProgressBar::hidden();
        assert_eq!(done_text(&bar), "0 s");
        bar.set_length(10);
        assert_eq!(done_text(&bar), "0/10 in 0 s");
        bar.inc(4);
        assert!(done_text(&bar).starts_with("4/10 in 0 s, about "));
        // 4 of 10 steps in 60 s: 90 s left at that rate.
        let left = left(Duration::from_secs(60), 4, Some(10));
        assert_eq!(left, Some(Duration::from_secs(90)));
        assert_eq!(duration_text(Duration::from_secs(200)), "3 min");
    }
}
