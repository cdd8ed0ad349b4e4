//! Signals: SIGINT, SIGTERM and SIGHUP stop a run after the case under way, with its
//! predictions and summary, and exit 128 + the signal; a second signal, one outside a
//! run, or [`GRACE`] passing without the run ending exits at once, once no file is half
//! written, saying what was saved. A run waiting for another's lock on its file gives
//! the wait up and keeps its rows apart ([`files::stop_waiting`]).

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::time::Duration;

use crate::error::{Error, Result};
use crate::{files, results};

/// Set by the first SIGINT, SIGTERM or SIGHUP during a run: it stops after the case
/// under way, predicts what it measured, saves and prints the summary. A second
/// signal, or one outside a run, exits at once, once no file is half written.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// The signal that set [`INTERRUPTED`]; the run exits with 128 + it, as a shell
/// reports a program the signal ended (130 for Ctrl-C, 143 for SIGTERM).
static STOPPED_BY: AtomicI32 = AtomicI32::new(0);

/// How long a run may take to stop after a first signal: Slurm's default wait between
/// SIGTERM and SIGKILL. A hung device, or a teardown that never returns, would
/// otherwise keep the process alive; every row measured is saved by then.
const GRACE: Duration = Duration::from_secs(30);

/// Whether a run is under way that stops at the end of a case on a first signal.
static STOPS_GRACEFULLY: AtomicBool = AtomicBool::new(false);

/// From now on a first signal stops the run after the case under way instead of
/// exiting at once.
pub(crate) fn stop_gracefully() {
    STOPS_GRACEFULLY.store(true, Ordering::SeqCst);
}

/// The flag a first signal sets: a [`super::Session`] stops after the case under way.
pub fn flag() -> &'static AtomicBool {
    &INTERRUPTED
}

/// Whether a signal has asked the run to stop.
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

/// The signal that stopped the run (0 where none did).
pub(crate) fn stopped_by() -> i32 {
    STOPPED_BY.load(Ordering::SeqCst)
}

/// Stops the run after the case under way on the first `signal` (called `name`), and
/// exits with 128 + it once [`GRACE`] has passed where the run has not ended.
fn stop_after_this_case(name: &'static str, signal: i32) {
    STOPPED_BY.store(signal, Ordering::SeqCst);
    files::stop_waiting();
    std::thread::spawn(move || {
        std::thread::sleep(GRACE);
        let _no_half_file = quit(&format!(
            "{name}: not stopped {} s after the signal: quitting",
            GRACE.as_secs()
        ));
        std::process::exit(128 + signal);
    });
}

/// Says `why` the run quits, and what it saved, once no file is half written; the
/// caller exits.
fn quit(why: &str) -> std::sync::MutexGuard<'static, ()> {
    let no_half_file = files::quiesce();
    stderrln!("membench: {why}; {}", results::saved());
    no_half_file
}

/// Handles SIGINT, SIGTERM (a scheduler's time limit) and SIGHUP (a closed terminal)
/// alike on a thread of their own, and catches SIGXFSZ.
#[cfg(unix)]
pub fn watch() -> Result<()> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM, SIGXFSZ};
    // Caught, a write past `ulimit -f` fails with an error, whose path removes the
    // temporary file, instead of ending the process in the middle of it.
    signal_hook::flag::register(SIGXFSZ, std::sync::Arc::new(AtomicBool::new(false)))
        .map_err(|e| Error::Signals(format!("catching SIGXFSZ: {e}")))?;
    let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP])
        .map_err(|e| Error::Signals(format!("catching signals: {e}")))?;
    std::thread::spawn(move || {
        for signal in signals.forever() {
            let name = match signal {
                SIGINT => "interrupted",
                SIGTERM => "terminated (SIGTERM)",
                _ => "hung up (SIGHUP)",
            };
            let in_run = STOPS_GRACEFULLY.load(Ordering::SeqCst);
            if in_run && !INTERRUPTED.swap(true, Ordering::SeqCst) {
                stderrln!(
                    "membench: {name}: stopping after this case, with its predictions and \
                     summary (a second signal quits at once)"
                );
                stop_after_this_case(name, signal);
                continue;
            }
            let _no_half_file = match in_run {
                true => quit(&format!("{name} again: quitting at once")),
                false => files::quiesce(),
            };
            std::process::exit(128 + signal);
        }
    });
    Ok(())
}

/// Ctrl-C, as [`watch`] handles it on Unix.
#[cfg(not(unix))]
pub fn watch() -> Result<()> {
    const SIGINT: i32 = 2;
    ctrlc::set_handler(|| {
        let in_run = STOPS_GRACEFULLY.load(Ordering::SeqCst);
        if in_run && !INTERRUPTED.swap(true, Ordering::SeqCst) {
            stderrln!(
                "membench: interrupted: stopping after this case (Ctrl-C again to quit at once)"
            );
            stop_after_this_case("interrupted", SIGINT);
            return;
        }
        let _no_half_file = match in_run {
            true => quit("interrupted again: quitting at once"),
            false => files::quiesce(),
        };
        std::process::exit(128 + SIGINT);
    })
    .map_err(|e| Error::Signals(format!("installing the Ctrl-C handler: {e}")))
}
