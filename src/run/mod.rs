//! Running cases: size them for the device, select them by filter, and take each
//! through build → verify → time, so that one failing case never sinks the run.

use crate::backend::wgpu::timing::{self, Stats, Timing};
use crate::backend::wgpu::{BoundsChecks, GpuContext};
use crate::error::{Error, Result};
use crate::results::{self, Row, SCHEMA_VERSION};
use crate::sim::device::{self as sim_device, DeviceModel};
use crate::sim::model::Prediction;
use crate::suite::{Case, CaseData, Experiment, Measure, REGISTRY, Sizing};

/// Settings of one run that change what is measured.
#[derive(Clone, Debug)]
pub struct RunSettings {
    pub quick: bool,
    pub checks: BoundsChecks,
    /// Timed samples per case (at least 10).
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
            checks: BoundsChecks::On,
            samples: 30,
            buffer_bytes: None,
            matrix: None,
        }
    }
}

/// Sizes cases for `ctx`'s device; a requested buffer beyond its limits is an error.
pub fn sizing(ctx: &GpuContext, settings: &RunSettings) -> Result<Sizing> {
    let limits = &ctx.limits;
    let max_binding_bytes = limits
        .max_storage_buffer_binding_size
        .min(limits.max_buffer_size);
    if let Some(requested) = settings.buffer_bytes.filter(|&b| b > max_binding_bytes) {
        return Err(Error::SizeLimit {
            what: "--buffer-mib",
            requested,
            limit: max_binding_bytes,
        });
    }
    if let Some((nx, ny)) = settings.matrix {
        let requested = 4 * u64::from(nx) * u64::from(ny);
        if requested > max_binding_bytes {
            return Err(Error::SizeLimit {
                what: "--size",
                requested,
                limit: max_binding_bytes,
            });
        }
    }
    Ok(Sizing {
        quick: settings.quick,
        buffer_bytes: settings.buffer_bytes,
        software: ctx.info.device_type == wgpu::DeviceType::Cpu,
        max_binding_bytes,
        max_workgroup_invocations: limits.max_compute_invocations_per_workgroup,
        max_workgroups_per_dimension: limits.max_compute_workgroups_per_dimension,
        max_workgroup_storage_bytes: limits.max_compute_workgroup_storage_size,
        mappable_storage: ctx
            .device
            .features()
            .contains(wgpu::Features::MAPPABLE_PRIMARY_BUFFERS),
        subgroup_sizes: ctx
            .device
            .features()
            .contains(wgpu::Features::SUBGROUP)
            .then_some((ctx.info.subgroup_min_size, ctx.info.subgroup_max_size)),
        matrix: settings.matrix,
    })
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
}

/// Build, verify, then time one case (a kernel here, a transfer in
/// [`crate::backend::wgpu::transfer`]); errors become a failed outcome.
pub fn run_case(
    ctx: &GpuContext,
    experiment: &Experiment,
    case: &Case,
    settings: &RunSettings,
) -> Outcome {
    run_case_with(ctx, experiment, case, settings, || Ok((case.data)()))
}

/// [`run_case`] with the case's inputs and references from `data` (made elsewhere,
/// e.g. while the previous case was measured); `data` is not called for a skipped
/// case.
pub fn run_case_with(
    ctx: &GpuContext,
    experiment: &Experiment,
    case: &Case,
    settings: &RunSettings,
    data: impl FnOnce() -> Result<CaseData>,
) -> Outcome {
    if let Some(reason) = &case.skip {
        return Outcome::Skipped(reason.clone());
    }
    let measure = || -> Result<Timing> {
        match experiment.measure {
            Measure::Kernel => {
                let (kernel, expected) = ctx.build_with(experiment, case, settings.checks, data)?;
                ctx.verify(&kernel, expected)?;
                timing::time_kernel(ctx, &kernel, settings.samples)
            }
            Measure::Transfer(path) => crate::backend::wgpu::transfer::measure(
                ctx,
                experiment,
                case,
                path,
                settings,
                data()?,
            ),
        }
    };
    match measure() {
        Ok(timing) => Outcome::Measured(timing),
        Err(error) => Outcome::Failed(error.to_string()),
    }
}

/// The columns that describe the device and the run, the same on every row.
#[derive(Clone, Debug)]
pub struct RunInfo {
    pub device: String,
    pub vendor: String,
    pub backend: String,
    pub driver: String,
    pub subgroup_size: String,
    pub bounds_checks: BoundsChecks,
    pub timestamp_utc: String,
}

impl RunInfo {
    pub fn new(ctx: &GpuContext, checks: BoundsChecks) -> Self {
        let info = &ctx.info;
        RunInfo {
            device: info.name.clone(),
            vendor: vendor_name(info.vendor),
            backend: format!("{:?}", info.backend).to_lowercase(),
            driver: format!("{} {}", info.driver, info.driver_info)
                .trim()
                .to_owned(),
            subgroup_size: crate::backend::wgpu::subgroup_label(&ctx.adapter),
            bounds_checks: checks,
            timestamp_utc: humantime::format_rfc3339_seconds(std::time::SystemTime::now())
                .to_string(),
        }
    }

    /// The CSV row of one case.
    pub fn row(&self, experiment: &Experiment, case: &Case, outcome: &Outcome) -> Row {
        let mut row = Row {
            device: self.device.clone(),
            vendor: self.vendor.clone(),
            backend: self.backend.clone(),
            driver: self.driver.clone(),
            subgroup_size: self.subgroup_size.clone(),
            bounds_checks: self.bounds_checks.label().to_owned(),
            timestamp_utc: self.timestamp_utc.clone(),
            ..case_row(experiment, case)
        };
        match outcome {
            Outcome::Measured(timing) => {
                row.status = "ok".to_owned();
                row.verified = true;
                row.timer = timing.timer.label().to_owned();
                row.samples = timing.samples_ns.len() as u32;
                row.dispatches_per_sample = timing.dispatches_per_sample;
                row.note = timing.note.clone();
                if let Some(stats) = Stats::of(&timing.samples_ns) {
                    row.time_us_median = Some(stats.median / 1e3);
                    row.time_us_min = Some(stats.min / 1e3);
                    row.time_us_max = Some(stats.max / 1e3);
                    row.cv = Some(stats.cv);
                    row.gbps_median = Some(timing::gbps(case.bytes, stats.median));
                    row.gbps_best = Some(timing::gbps(case.bytes, stats.min));
                }
            }
            Outcome::Skipped(reason) => {
                row.status = "skipped".to_owned();
                row.note = reason.clone();
            }
            Outcome::Failed(reason) => {
                row.status = "failed".to_owned();
                row.note = reason.clone();
            }
        }
        row
    }
}

/// A row with what the registry says of a case, and nothing measured.
pub fn case_row(experiment: &Experiment, case: &Case) -> Row {
    Row {
        family: experiment.family.to_string(),
        variant: experiment.variant.to_owned(),
        param: case.params.to_string(),
        elements: case.elements,
        bytes: case.bytes,
        // A pure transfer runs no kernel, so has no workgroup.
        workgroup: experiment
            .kernel
            .map_or_else(String::new, |_| case.workgroup_label()),
        membench_version: env!("CARGO_PKG_VERSION").to_owned(),
        schema_version: SCHEMA_VERSION,
        git_commit: env!("MEMBENCH_GIT_COMMIT").to_owned(),
        ..Row::default()
    }
}

/// The PCI vendor's name where known, with its id.
fn vendor_name(id: u32) -> String {
    let name = match id {
        0x10de => "NVIDIA",
        0x1002 => "AMD",
        0x8086 => "Intel",
        0x106b => "Apple",
        0x13b5 => "ARM",
        0x5143 => "Qualcomm",
        0x10005 => "Mesa",
        _ => "",
    };
    format!("{name} {id:#06x}").trim().to_owned()
}

/// The model predictions are made with: the preset closest to the adapter, its DRAM
/// bandwidth calibrated from the fastest `copy/peak` among `rows` (the suite's own
/// practical ceiling) where there is one.
pub fn device_model(adapter_name: &str, rows: &[Row]) -> DeviceModel {
    let preset = sim_device::closest_preset(adapter_name);
    match results::copy_peak_gbps(rows) {
        Some(peak) => preset.calibrated(peak),
        None => *preset,
    }
}

/// `model`'s name, and what it was calibrated from.
pub fn describe_model(model: &DeviceModel) -> String {
    if model.calibrated {
        format!(
            "{} preset, DRAM calibrated to copy/peak {:.0} GB/s",
            model.name, model.dram_gbps
        )
    } else {
        format!(
            "{} preset, DRAM {:.0} GB/s (no copy/peak to calibrate from)",
            model.name, model.dram_gbps
        )
    }
}

/// Predictions run in parallel on at most this many threads: a sampled window of a
/// strided or grid-stride case touches up to half of its buffers, and host memory must
/// stay within about four times the largest buffer.
const PREDICT_THREADS: usize = 4;

/// Predicts every runnable case on `model`, in parallel; `None` for skipped cases
/// and transfers (the model is of the device's memory, not of the bus or the host).
/// `done` is called after each case (for progress).
pub fn predict_cases(
    cases: &[(&'static Experiment, Case)],
    model: &DeviceModel,
    done: &(dyn Fn() + Sync),
) -> Vec<Option<Result<Prediction, String>>> {
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(PREDICT_THREADS);
    let mut predictions: Vec<_> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|first| {
                scope.spawn(move || {
                    (first..cases.len())
                        .step_by(threads)
                        .map(|i| {
                            let (experiment, case) = &cases[i];
                            let simulated =
                                case.skip.is_none() && experiment.measure == Measure::Kernel;
                            let prediction = simulated.then(|| {
                                crate::sim::suite::predict(experiment, case, model)
                                    .map_err(|e| e.to_string())
                            });
                            done();
                            (i, prediction)
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|worker| worker.join().unwrap_or_default())
            .collect()
    });
    predictions.sort_by_key(|(i, _)| *i);
    predictions.into_iter().map(|(_, p)| p).collect()
}

/// A run's predictions, the model they were made with, and how long they took.
pub struct Predicted {
    pub model: DeviceModel,
    pub predictions: Vec<Option<Result<Prediction, String>>>,
    pub seconds: f64,
}

impl Predicted {
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

/// Predictions made on a thread of their own while the GPU measures.
pub enum Background<'scope> {
    /// Not started (the model is not calibrated yet).
    Waiting,
    Running(std::thread::ScopedJoinHandle<'scope, Predicted>),
    Made(Predicted),
}

impl<'scope> Background<'scope> {
    /// Starts predicting `cases` on `model` in `scope`.
    pub fn start(
        scope: &'scope std::thread::Scope<'scope, '_>,
        cases: &'scope [(&'static Experiment, Case)],
        model: DeviceModel,
        done: impl Fn() + Send + Sync + 'scope,
    ) -> Self {
        Background::Running(scope.spawn(move || Predicted::make(cases, model, &done)))
    }

    /// Waits for predictions under way to be made; `Waiting` stays as it is.
    pub fn finished(self) -> Result<Self> {
        match self {
            Background::Running(thread) => thread
                .join()
                .map(Background::Made)
                .map_err(|_| Error::Internal("the simulator's thread panicked".to_owned())),
            other => Ok(other),
        }
    }
}

/// Fills the `sim_*` columns of `row`; a case the simulator could not run keeps them
/// empty and says why in `note`.
pub fn fill_prediction(row: &mut Row, prediction: &Result<Prediction, String>) {
    match prediction {
        Ok(prediction) => {
            row.sim_gbps = Some(prediction.effective_gbps);
            row.sim_dram_bytes = Some(prediction.dram_read_bytes + prediction.dram_write_bytes);
            row.sim_sectors_per_request =
                (prediction.requests > 0).then_some(prediction.sectors_per_request);
            row.sim_bank_ways = prediction.bank_ways;
            row.measured_over_sim = row
                .gbps_median
                .filter(|_| prediction.effective_gbps > 0.0)
                .map(|g| g / prediction.effective_gbps);
        }
        Err(error) => {
            let sep = if row.note.is_empty() { "" } else { "; " };
            row.note = format!("{}{sep}simulator: {error}", row.note);
        }
    }
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
