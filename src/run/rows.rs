//! Rows: the CSV row of a case, from the run's columns, the registry's and what
//! became of it (measured, skipped, failed), with the simulator's prediction beside.

use super::Outcome;
use crate::backend::nvml;
use crate::measure::{Stats, gbps};
use crate::results::{Row, RunInfo, SCHEMA_VERSION, Status};
use crate::sim::model::Prediction;
use crate::suite::RunSizing;
use crate::suite::{Case, Experiment, Family};

/// The CSV row of one case: the run's columns (its device and the sizing of its
/// cases), the case's, and its outcome. A measurement without samples is a failure:
/// an `ok` row always has a bandwidth.
pub fn row(
    info: &RunInfo,
    sizing: RunSizing,
    experiment: &Experiment,
    case: &Case,
    outcome: &Outcome,
) -> Row {
    let mut row = Row {
        device: info.device.clone(),
        vendor: info.vendor.clone(),
        backend: info.backend.clone(),
        driver: info.driver.clone(),
        subgroup_size: info.subgroup_size.clone(),
        api: info.setting.api(),
        build: info.setting.build(),
        sizing: Some(sizing),
        timestamp_utc: info.timestamp_utc.clone(),
        host: info.gpu.host.clone(),
        gpu_uuid: info.gpu.gpu_uuid.clone(),
        pci_bus_id: info.gpu.pci_bus_id.clone(),
        pcie_link: info.gpu.pcie_link.clone(),
        ..case_row(experiment, case)
    };
    match outcome {
        Outcome::Measured(timing) => match Stats::of(&timing.samples_ns) {
            Some(stats) if stats.min > 0.0 => {
                row.status = Status::Ok;
                row.verified = case.unverified.is_none();
                row.timer = timing.timer.label().to_owned();
                row.samples = u32::try_from(timing.samples_ns.len()).unwrap_or(u32::MAX);
                row.dispatches_per_sample = timing.dispatches_per_sample;
                row.note = match &case.unverified {
                    Some(why) if timing.note.is_empty() => format!("not verified: {why}"),
                    Some(why) => format!("not verified: {why}; {}", timing.note),
                    None => timing.note.clone(),
                };
                row.time_us_median = Some(stats.median / 1e3);
                row.time_us_min = Some(stats.min / 1e3);
                row.time_us_max = Some(stats.max / 1e3);
                row.cv = Some(stats.cv);
                row.gbps_median = Some(gbps(case.bytes, stats.median));
                row.gbps_best = Some(gbps(case.bytes, stats.min));
            }
            _ => {
                row.status = Status::Failed;
                row.note = "verified, but no sample was timed (or one took no time)".to_owned();
            }
        },
        Outcome::Skipped(reason) => {
            row.status = Status::Skipped;
            row.note = reason.clone();
        }
        Outcome::Failed(reason) => {
            row.status = Status::Failed;
            row.note = reason.clone();
        }
        Outcome::Predicted => row.status = Status::Simulated,
    }
    row
}

/// A row with what the registry says of a case, and nothing measured.
pub fn case_row(experiment: &Experiment, case: &Case) -> Row {
    Row {
        family: experiment.family,
        variant: experiment.variant.to_owned(),
        params: case.params.clone(),
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

/// Fills the telemetry columns of `row` with what was read while it ran, and notes a
/// throttle: its bandwidth is of clocks below the GPU's.
pub(crate) fn fill_telemetry(row: &mut Row, telemetry: &nvml::Telemetry) {
    row.sm_clock_mhz_min = telemetry.sm_clock_mhz.map(|(low, _)| low);
    row.sm_clock_mhz_max = telemetry.sm_clock_mhz.map(|(_, high)| high);
    row.mem_clock_mhz_min = telemetry.mem_clock_mhz.map(|(low, _)| low);
    row.mem_clock_mhz_max = telemetry.mem_clock_mhz.map(|(_, high)| high);
    row.power_w_max = telemetry.power_w_max;
    row.temperature_c_max = telemetry.temperature_c_max;
    row.throttle = telemetry.throttle.clone().unwrap_or_default();
    if telemetry.throttled() {
        let throttled = format!("measured while throttled ({})", row.throttle);
        row.note = if row.note.is_empty() {
            throttled
        } else {
            format!("{}; {throttled}", row.note)
        };
    }
}

/// Fills the `sim_*` columns of `row`; a case the simulator could not run keeps them
/// empty and says why in `note`.
pub fn fill_prediction(row: &mut Row, prediction: &Result<Prediction, String>) {
    match prediction {
        Ok(prediction) => {
            row.sim_gbps = Some(prediction.effective_gbps);
            row.sim_bound = Some(prediction.bound);
            // The transfer model counts no DRAM traffic.
            row.sim_dram_bytes = (row.family != Family::Transfer)
                .then_some(prediction.dram_read_bytes + prediction.dram_write_bytes);
            row.sim_sectors_per_request =
                (prediction.requests > 0).then_some(prediction.sectors_per_request);
            row.sim_sector_use = prediction.sector_use;
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
