//! The bodies of the commands other than `run` (a [`crate::run::Plan`]): `devices`,
//! `list` (and [`emit`]), `compare`, `report` and [`simulate`]. Each prints through the
//! writer it is given (stdout), whose errors come back as [`Error::Stdout`], so that the
//! command line treats a closed pipe and a full disk in one place.

/// `write!` to a command's output, a failure an [`Error::Stdout`].
macro_rules! out {
    ($out:expr, $($arg:tt)*) => {
        write!($out, $($arg)*).map_err($crate::error::Error::Stdout)
    };
}

/// `writeln!`, as [`out!`].
macro_rules! outln {
    ($out:expr, $($arg:tt)*) => {
        writeln!($out, $($arg)*).map_err($crate::error::Error::Stdout)
    };
}

mod emit;
mod kernel;
mod simulate;

pub use emit::{Emit, emit};
pub use kernel::kernel;
pub use simulate::{LIST as PRESET_LIST, Validating, simulate, validate};

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

#[cfg(feature = "cuda")]
use crate::backend::cuda;
use crate::backend::wgpu as gpu;
use crate::error::{Error, Result};
use crate::judge::{baseline, fleet};
use crate::report::{self, compare};
use crate::suite::{self, Measure, REGISTRY, Sizing};
use crate::{results, validate};

/// Turns Mesa's device-select Vulkan layer off where there is no display server: the
/// layer asks Wayland for the display's GPU, which prints `XDG_RUNTIME_DIR is invalid`
/// twice per listing and cannot answer; membench picks its adapter itself. A user's
/// own `NODEVICE_SELECT` or `MESA_VK_DEVICE_SELECT` is left as it is.
///
/// # Safety
///
/// It sets an environment variable: call it before any thread exists that could read
/// the environment.
pub unsafe fn quiet_device_select() {
    let set = |name| std::env::var_os(name).is_some();
    if [
        "WAYLAND_DISPLAY",
        "DISPLAY",
        "NODEVICE_SELECT",
        "MESA_VK_DEVICE_SELECT",
    ]
    .into_iter()
    .any(set)
    {
        return;
    }
    // SAFETY: the caller calls this before any thread exists.
    unsafe { std::env::set_var("NODEVICE_SELECT", "1") };
}

/// `devices`: every adapter and every CUDA device (or why CUDA has none); no adapter
/// is an error.
pub fn devices(out: &mut dyn Write) -> Result<()> {
    let adapters = gpu::adapters(&gpu::instance()?);
    for (index, adapter) in adapters.iter().enumerate() {
        outln!(out, "{}", gpu::adapter_report(index, adapter))?;
    }
    #[cfg(feature = "cuda")]
    outln!(out, "{}", cuda::devices_report())?;
    if adapters.is_empty() {
        return Err(Error::NoAdapter(String::new()));
    }
    Ok(())
}

/// `list`: each experiment with cases `filters` select, where its WGSL comes from, the
/// claims it tests and its cases.
pub fn list(out: &mut dyn Write, filters: &[String]) -> Result<()> {
    // Without a device, cases are sized for a nominal large GPU.
    let selected = suite::select(&Sizing::nominal(false), filters)?;
    for experiment in REGISTRY {
        let params: Vec<String> = selected
            .iter()
            .filter(|(e, _)| std::ptr::eq(*e, experiment))
            .map(|(_, case)| case.params.to_string())
            .collect();
        if params.is_empty() {
            continue;
        }
        // Where the kernel's WGSL comes from: its file, or a source of
        // shaders/permutations and the keys it is made with.
        let wgsl = |kernel: &str| match suite::shaders::origin(kernel) {
            Some(origin) if origin != format!("shaders/{kernel}.wgsl") => {
                format!("{kernel}: {origin}")
            }
            _ => format!("shaders/{kernel}.wgsl"),
        };
        let runs = match (experiment.kernel, experiment.measure) {
            (Some(kernel), Measure::Kernel) => wgsl(kernel),
            (Some(kernel), Measure::Transfer(_)) => {
                format!("host transfers and {}", wgsl(kernel))
            }
            (None, _) => "host transfers, no kernel".to_owned(),
        };
        outln!(out, "{}  ({runs})", experiment.name())?;
        match report::claims::naming(experiment).as_slice() {
            [] => outln!(out, "  claims: none (a reference case)")?,
            named => {
                outln!(out, "  claims:")?;
                for claim in named {
                    outln!(out, "    {}: {}", claim.id, claim.claim)?;
                }
            }
        }
        outln!(out, "  cases: {}", params.join(" "))?;
    }
    Ok(())
}

/// `compare`: the devices of the `csv` files side by side, in `format`.
pub fn compare(out: &mut dyn Write, csv: &[PathBuf], format: results::Format) -> Result<()> {
    format.taken_by("compare", compare::FORMATS)?;
    let devices = results::load(csv)?;
    if devices.len() < 2 {
        let first = csv.first().map(|p| p.display().to_string());
        return Err(Error::Usage(format!(
            "{} holds one device in one api/build: compare needs two (another file, or a run \
             with more than one --build)",
            first.unwrap_or_default()
        )));
    }
    out!(out, "{}", compare::render(&devices, format)?)
}

/// `--threshold`'s percentage: a finite number of at least 0.
pub fn parse_percent(text: &str) -> std::result::Result<f64, String> {
    text.trim()
        .parse::<f64>()
        .ok()
        .filter(|p| p.is_finite() && *p >= 0.0)
        .ok_or_else(|| format!("`{text}` is not a percentage of at least 0"))
}

/// `compare --baseline`: each case of the `csv` files judged against `baseline`'s;
/// `false` where one is slower by more than `threshold_percent`, or failed.
pub fn compare_to_baseline(
    out: &mut dyn Write,
    csv: &[PathBuf],
    baseline: &Path,
    threshold_percent: f64,
    format: results::Format,
) -> Result<bool> {
    format.taken_by("compare", compare::FORMATS)?;
    let threshold = threshold_percent / 100.0;
    let judged_against = results::load(&[baseline.to_owned()])?;
    let others = results::load(csv)?;
    let judged = baseline::judge(&judged_against, &others, threshold);
    if judged.is_empty() {
        return Err(Error::Usage(format!(
            "no case of {} was measured in {} in the same api/build and size",
            csv.iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", "),
            baseline.display()
        )));
    }
    out!(
        out,
        "{}",
        compare::render_changes(&judged, baseline, threshold, format)?
    )?;
    Ok(!judged.iter().any(|j| j.regression))
}

/// `report`: the HTML report of the `csv` files (default: every results/*.csv) in
/// `dir`, the ratios to the device `baseline` names, with a Simulator section of the
/// `predictions` where given (none: the section is left out).
pub fn report(
    csv: Vec<PathBuf>,
    dir: &Path,
    baseline: Option<&str>,
    predictions: Option<validate::Predictions>,
) -> Result<()> {
    // A file in the directory's place is refused before anything is read or predicted.
    report::destination(dir)?;
    let every_file = csv.is_empty();
    let inputs = if every_file {
        report::default_inputs(Path::new("results"))?
    } else {
        csv
    };
    let mut devices = results::load(&inputs)?;
    if let Some(baseline) = baseline {
        devices = report::with_baseline(devices, baseline)?;
    } else if every_file {
        // The first device is the ratios' baseline: a GPU's file, not the software
        // adapter's that sorts first by name (`llvmpipe-…` before `nvidia-…`).
        devices.sort_by_key(results::DeviceResults::is_software);
    }
    let progress = validate::StageProgress::stderr();
    let started = Instant::now();
    let validations = match predictions {
        Some(predictions) => validate::of_results(&devices, predictions, &progress),
        None => Vec::new(),
    };
    if let Some(predictions) = predictions {
        let how = match predictions {
            validate::Predictions::Recorded => "the predictions the rows recorded",
            validate::Predictions::Afresh => "every row predicted again (--resimulate)",
        };
        stderrln!(
            "membench: simulator judged on {} file(s), {how}, in {:.1} s",
            validations.len(),
            started.elapsed().as_secs_f64()
        );
    }
    // Built in full before anything is written: bad input leaves the directory as it was.
    let built = {
        let _stage = progress.stage("drawing the page and its charts", 0);
        report::build(&devices, &validations)?
    };
    report::write(&built, dir)?;
    stderrln!(
        "membench: report of {} device(s) with {} charts in {}",
        devices.len(),
        built.charts.len(),
        dir.join("index.html").display()
    );
    Ok(())
}

/// `membench fleet`: `inputs` (files, or directories of them) judged by `options`,
/// printed in `format`, and a report page into `report_dir` where given; the exit
/// status is the fleet's [`fleet::Conclusion`]'s.
pub fn fleet(
    out: &mut dyn Write,
    inputs: &[PathBuf],
    options: fleet::Options,
    format: results::Format,
    report_dir: Option<PathBuf>,
) -> Result<u8> {
    if let Some(dir) = &report_dir {
        report::destination(dir)?;
    }
    let judged = fleet::Fleet::load(inputs, options)?;
    fleet::write(&judged, format, out)?;
    if let Some(dir) = report_dir {
        report::write(&report::fleet_page(&judged)?, &dir)?;
        stderrln!(
            "membench: fleet report in {}",
            dir.join("index.html").display()
        );
    }
    Ok(judged.tally().conclusion().exit_code())
}
