//! One adapter's run, in four steps: open (the device, its cases, where the rows go
//! and what the run is checked against, all refused before anything is measured) →
//! announce → measure (the [`Session`]) → conclude (the summary or the rows, the health
//! verdict, a blessing).

use std::cell::RefCell;
use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Instant;

use super::plan::{Concurrent, Out, expand, is_template, print};
use super::progress::Bars;
use super::{Backends, CaseSource, Destination, Ended, Measurer, Output, Plan, Ran, Session, stop};
use crate::backend::nvml;
use crate::backend::wgpu::{self as gpu, GpuContext};
use crate::error::{Error, Result};
use crate::files;
use crate::health;
use crate::measure::SuiteSampler;
use crate::results::{self, Row};
use crate::suite::{self, Case, CaseId, Experiment, Sizing};
use crate::text;

/// Held while an adapter of `--concurrent` tears its devices down: four H100s' CUDA
/// contexts and Vulkan devices torn down at once left the process waiting (two threads
/// on a priority-inheritance lock) after every adapter had measured, and one at a time
/// it exited (docs/method.md).
static TEARDOWN: Mutex<()> = Mutex::new(());

/// [`TEARDOWN`] where `serialise`, taken by the first [`Taking`] of it to drop and held
/// until it drops itself. Declared before an adapter's devices and a `Taking` after
/// each, it holds the lock while they drop, on every way out of the run, its errors'
/// included.
struct Teardown {
    serialise: bool,
    held: RefCell<Option<MutexGuard<'static, ()>>>,
}

impl Teardown {
    fn new(serialise: bool) -> Teardown {
        Teardown {
            serialise,
            held: RefCell::new(None),
        }
    }

    /// A guard that takes the lock into `self` as it drops, unless it is taken.
    fn taking(&self) -> Taking<'_> {
        Taking(self)
    }
}

struct Taking<'t>(&'t Teardown);

impl Drop for Taking<'_> {
    fn drop(&mut self) {
        let Teardown { serialise, held } = self.0;
        let mut held = held.borrow_mut();
        if *serialise && held.is_none() {
            *held = Some(TEARDOWN.lock().unwrap_or_else(PoisonError::into_inner));
        }
    }
}

/// What one adapter's run measures, where its rows go and what it is checked against:
/// everything a run may be refused for, found before anything is measured.
struct Opened<'c> {
    ctx: &'c GpuContext,
    settings: super::RunSettings,
    /// What its lines start with: the adapter, where several print at once.
    tag: String,
    sizing: Sizing,
    cases: Vec<(&'static Experiment, Case)>,
    case_ids: Vec<CaseId>,
    expectations: Option<health::Expectations>,
    identity: results::Identity,
    /// The results file; `None` where the rows go to stdout.
    file: Option<PathBuf>,
    /// The rows the sizing gives, nothing measured ([`results::Identity::admit`]).
    case_rows: Vec<Row>,
    /// The file's rows from before, of the same identity.
    old_rows: Vec<Row>,
}

impl Plan {
    /// The run on one adapter (`--adapter`'s selector); `concurrent` where it measures
    /// at the same time as others.
    pub(super) fn run_on(
        &self,
        adapter: Option<&str>,
        destination: &Destination,
        concurrent: Option<&Concurrent>,
        out: &Out,
    ) -> Result<Ended> {
        let started = Instant::now();
        let teardown = Teardown::new(concurrent.is_some());
        let ctx = GpuContext::new(adapter, self.timeout)?;
        let _ctx_down = teardown.taking();
        let opened = self.open(&ctx, adapter, destination, concurrent)?;
        let backends = Backends::new(&ctx, &self.apis, &self.builds, self.timeout);
        let measurers = backends.measurers();
        let _backends_down = teardown.taking();
        let target = announce(&opened, &measurers, destination, out)?;
        let ran = measure(&opened, &measurers, concurrent)?;
        self.conclude(&opened, &ran, (destination, &target), started, out)
    }

    /// The run on `ctx` opened: its cases, its expectations (of this model and these
    /// cases), its results file (readable, of this identity, writable) and a blessing's.
    fn open<'c>(
        &self,
        ctx: &'c GpuContext,
        adapter: Option<&str>,
        destination: &Destination,
        concurrent: Option<&Concurrent>,
    ) -> Result<Opened<'c>> {
        let settings = self.settings(concurrent.map(|c| c.adapters));
        let sizing = ctx.sizing(settings.quick, settings.buffer_bytes, settings.matrix)?;
        let mut cases = match &self.cases {
            CaseSource::Suite => suite::select(&sizing, &self.filters)?,
            CaseSource::Given(given) => (given.make)(&sizing)?,
        };
        if let Some(profile) = self.profile {
            cases = profile.select(cases);
        }
        let case_ids: Vec<CaseId> = cases.iter().map(|(e, case)| case.id(e)).collect();
        let expectations = self.expect.as_deref().map(health::read).transpose()?;
        if let Some(expectations) = &expectations {
            expectations.admit(&ctx.info.name, &case_ids)?;
        }
        let identity = super::identity(&ctx.info, &ctx.identity, settings.sizing());
        let file = self.results_file(destination, &identity, ctx, adapter);
        let case_rows = match &self.cases {
            CaseSource::Suite => super::case_rows(&suite::select(&sizing, &[])?),
            CaseSource::Given(_) => super::case_rows(&cases),
        };
        let old_rows = match &file {
            Some(path) => {
                files::check_writable(path)?;
                let rows = identity.admit(path, results::read_existing(path)?, &case_rows)?;
                check_unmixed(path, &rows, self.cases.kernels())?;
                rows
            }
            None => Vec::new(),
        };
        if let Some(path) = &self.bless {
            health::check_blessable(path, file.as_deref())?;
        }
        Ok(Opened {
            ctx,
            tag: concurrent.map_or_else(String::new, |c| format!("adapter {}: ", c.index)),
            settings,
            sizing,
            cases,
            case_ids,
            expectations,
            identity,
            file,
            case_rows,
            old_rows,
        })
    }

    /// The results file the rows go to, if any: the device's default (its kernels file
    /// for kernel rows), a template expanded for this adapter, or the path given.
    fn results_file(
        &self,
        destination: &Destination,
        identity: &results::Identity,
        ctx: &GpuContext,
        adapter: Option<&str>,
    ) -> Option<PathBuf> {
        match destination {
            Destination::DefaultFile if self.cases.kernels() => Some(identity.kernels_path()),
            Destination::DefaultFile => Some(identity.default_path()),
            Destination::File(path) if is_template(path) => {
                let index = adapter_index(adapter, ctx);
                Some(expand(path, identity, &ctx.identity, index))
            }
            Destination::File(path) => Some(path.clone()),
            Destination::Stdout(_) => None,
        }
    }

    /// The run's end: the summary (or the rows, on stdout, rescued where stdout takes
    /// them not), the health verdict, the blessing; and how the run ended.
    fn conclude(
        &self,
        opened: &Opened,
        ran: &Ran,
        (destination, target): (&Destination, &str),
        started: Instant,
        out: &Out,
    ) -> Result<Ended> {
        let mut summary = summary(opened, ran, target, started);
        if let CaseSource::Given(given) = &self.cases {
            summary.push_str(&(given.explain)(&ran.rows, &opened.identity.default_path()));
        }
        match destination {
            Destination::Stdout(format) => {
                stderr!("{summary}");
                // The rows are not lost with stdout.
                print(out, &results::body(&ran.rows, *format)?)
                    .map_err(|error| results::rescue(&ran.rows, error))?;
            }
            Destination::DefaultFile | Destination::File(_) => print(out, &summary)?,
        }
        // The verdict goes to stderr: stdout may be the rows.
        let verdict = opened.expectations.as_ref().map(|e| e.check(&ran.rows));
        if let Some(verdict) = &verdict {
            stderr!("{}", verdict.text());
        }
        if let Some(path) = self.bless.as_deref().filter(|_| !ran.interrupted) {
            let source = opened.file.as_deref().map_or_else(
                || format!("a run on {}", opened.ctx.identity.host),
                text::shown_path,
            );
            let blessed = health::bless(path, &source, &ran.rows, &opened.case_ids)?;
            let path = text::shown_path(path);
            stderrln!(
                "membench: {} expectations blessed into {path}",
                blessed.len()
            );
        }
        Ok(if ran.interrupted {
            Ended::Stopped(stop::stopped_by())
        } else if ran.failed > 0 || verdict.as_ref().is_some_and(health::Checkup::incomplete) {
            Ended::Failed
        } else if verdict.as_ref().is_some_and(|v| !v.healthy()) {
            Ended::BelowExpectation
        } else {
            Ended::Measured
        })
    }
}

/// Says what the run measures, with what, where its rows go (returned: the summary
/// names it) and why there is no telemetry; a stdout that takes not even the rows'
/// head stops the run now.
fn announce(
    opened: &Opened,
    measurers: &[Box<dyn Measurer + '_>],
    destination: &Destination,
    out: &Out,
) -> Result<String> {
    if measurers.is_empty() {
        return Err(Error::Usage(
            "nothing to measure with: no backend asked for is available (see above)".to_owned(),
        ));
    }
    let target = match (&opened.file, destination) {
        (Some(path), _) => text::shown_path(path),
        (None, Destination::Stdout(format)) => {
            print(out, &results::head(*format)?)?;
            let mut out = out.lock().unwrap_or_else(PoisonError::into_inner);
            out.flush().map_err(Error::Stdout)?;
            "stdout".to_owned()
        }
        (None, _) => "stdout".to_owned(),
    };
    let settings: Vec<String> = measurers.iter().map(|m| m.setting().to_string()).collect();
    let (cases, measurements) = (opened.cases.len(), measurements(opened, measurers));
    stderrln!(
        "membench: {}{cases} case{}, {measurements} measurement{} on {} in {} at sizing {}, \
         results to {target}",
        opened.tag,
        crate::plural(cases),
        crate::plural(measurements),
        gpu::describe(&opened.ctx.info),
        settings.join(", "),
        opened.identity.sizing,
    );
    if let (None, Some(why)) = (telemetry(opened), nvml::unavailable()) {
        stderrln!("membench: {}{why}", opened.tag);
    }
    Ok(target)
}

/// An error unless the rows of the file at `path` are all a user's kernels (`kernels`)
/// or all the suite's: the two never share a file.
fn check_unmixed(path: &std::path::Path, rows: &[Row], kernels: bool) -> Result<()> {
    let other = rows
        .iter()
        .find(|row| (row.family == suite::Family::Kernel) != kernels);
    match other {
        None => Ok(()),
        Some(row) => Err(Error::Results {
            path: path.to_owned(),
            message: format!(
                "holds {} rows ({}/{}), and a file of `membench kernel` rows never mixes                  with a suite results file: choose another --out",
                if kernels { "the suite's" } else { "kernel" },
                row.family,
                row.variant
            ),
        }),
    }
}

/// The measurements of the run: each case in every setting that takes it.
fn measurements(opened: &Opened, measurers: &[Box<dyn Measurer + '_>]) -> usize {
    let taking = |experiment| measurers.iter().filter(|m| m.takes(experiment)).count();
    opened
        .cases
        .iter()
        .map(|(experiment, _)| taking(experiment))
        .sum()
}

/// The GPU whose clocks and temperature NVML reads while each case runs, if it knows it.
fn telemetry(opened: &Opened) -> Option<nvml::Gpu> {
    nvml::gpu_at(&opened.ctx.identity.pci_bus_id)
}

/// Every case of the run measured by `measurers` through a [`Session`], with progress;
/// says how long the predictions took.
fn measure(
    opened: &Opened,
    measurers: &[Box<dyn Measurer + '_>],
    concurrent: Option<&Concurrent>,
) -> Result<Ran> {
    let gpu = telemetry(opened);
    let session = Session {
        telemetry: gpu.as_ref(),
        work_beside: !opened.sizing.software,
        known_rows: &opened.old_rows,
        output: opened.file.as_deref().map(|path| Output {
            path,
            identity: &opened.identity,
            case_rows: &opened.case_rows,
        }),
        stop: Some(stop::flag()),
        lockstep: concurrent.map(|c| &c.party),
        ..Session::new(measurers, &opened.settings, &opened.ctx.info.name)
    };
    let progress = Bars::new(
        measurements(opened, measurers),
        opened.cases.len(),
        &opened.tag,
    )?;
    let sampler = &mut SuiteSampler::new(opened.settings.samples);
    let ran = session.run(&opened.cases, sampler, &progress)?;
    progress.finish();
    if let Some(predicted) = &ran.predicted {
        let beside = if session.work_beside {
            ", beside the measurements,"
        } else {
            ""
        };
        stderrln!(
            "membench: {}simulated in {:.1} s{beside} with the {}",
            opened.tag,
            predicted.seconds,
            super::describe_model(&predicted.model)
        );
    }
    Ok(ran)
}

/// The table a run ends with, and its last line: how many, how long, how much memory.
fn summary(opened: &Opened, ran: &Ran, target: &str, started: Instant) -> String {
    format!(
        "{}\n{} measurement{}{}, {} failed, in {:.1} s; peak host memory {} (largest \
         buffer {} MiB); results in {target}\n",
        results::summary(&ran.rows),
        ran.rows.len(),
        crate::plural(ran.rows.len()),
        if ran.interrupted {
            " (interrupted)"
        } else {
            ""
        },
        ran.failed,
        started.elapsed().as_secs_f64(),
        peak_resident().unwrap_or_else(|| "unknown".to_owned()),
        largest_buffer_bytes(&opened.cases) >> 20,
    )
}

/// The index of the adapter `ctx` opened (by `selector`) in `membench devices`' list:
/// `--out`'s `{adapter}`.
fn adapter_index(selector: Option<&str>, ctx: &GpuContext) -> usize {
    if let Some(index) = selector.and_then(|s| s.parse().ok()) {
        return index;
    }
    gpu::instance()
        .map(|instance| gpu::adapters(&instance))
        .ok()
        .and_then(|adapters| adapters.iter().position(|a| gpu::info(a) == ctx.info))
        .unwrap_or(0)
}

/// The largest buffer of the cases that run: host memory stays within twice it and
/// the process's own (docs/method.md).
fn largest_buffer_bytes(cases: &[(&'static Experiment, Case)]) -> u64 {
    cases
        .iter()
        .filter(|(_, case)| case.skip.is_none())
        .flat_map(|(_, case)| &case.buffers)
        .map(suite::Buffer::len_bytes)
        .max()
        .unwrap_or(0)
}

/// Peak resident set size of this process (Linux `VmHWM`).
fn peak_resident() -> Option<String> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|line| line.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(format!("{} MiB", kib >> 10))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn teardown_holds_the_lock_from_the_first_taking_until_it_drops() {
        let teardown = Teardown::new(true);
        {
            let _ctx_down = teardown.taking();
            let _backends_down = teardown.taking();
            assert!(TEARDOWN.try_lock().is_ok(), "free while the devices live");
        }
        assert!(TEARDOWN.try_lock().is_err(), "held once a taking dropped");
        drop(teardown);
        assert!(TEARDOWN.try_lock().is_ok(), "released with the teardown");
        let alone = Teardown::new(false);
        drop(alone.taking());
        assert!(
            TEARDOWN.try_lock().is_ok(),
            "an adapter run alone takes nothing"
        );
    }
}
