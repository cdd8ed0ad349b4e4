//! Calibration: a device model fitted to a handful of microbenchmark rows of a run,
//! named in [`CALIBRATION`]; every other row is held out, so a prediction of it is a
//! prediction, not a fit. Each row sets one device property with a physical meaning,
//! in the order listed (later rows are predicted with the properties set before).

use crate::results::Row;
use crate::sim::device::DeviceModel;
use crate::sim::model::Prediction;
use crate::suite::{Api, Build, CaseId, Rebuilder};

/// The device property a calibration row sets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Property {
    DramBandwidth,
    L1Latency,
    L2Latency,
    DramLatency,
    LoadedLatency,
    LaunchInterval,
    IssueRate,
    UniformRate,
    L2WriteRate,
    DramPartialLine,
}

/// The rows a device model is calibrated from (`family/variant/param`), the property
/// each sets, and why that row isolates it.
pub const CALIBRATION: &[(&str, Property, &str)] = &[
    (
        "copy/peak/launch=vec4",
        Property::DramBandwidth,
        "a vec4 copy of whole sectors streams at the DRAM's practical rate",
    ),
    (
        "latency/chase/footprint=16384",
        Property::L1Latency,
        "a pointer chase within the L1",
    ),
    (
        "latency/chase/footprint=16777216",
        Property::L2Latency,
        "a pointer chase within the L2",
    ),
    (
        "latency/chase/footprint=1073741824",
        Property::DramLatency,
        "a pointer chase far beyond the L2, on an idle DRAM",
    ),
    (
        "transpose/naive_row/size=8192x8192;block=32x16",
        Property::L2WriteRate,
        "writing columns makes every lane's store its own line: L2 write requests",
    ),
    (
        "copy/stride/stride=32",
        Property::DramPartialLine,
        "a copy at 128-byte stride moves one sector per line: DRAM requests of part of a line",
    ),
    (
        "copy/offset/offset=0",
        Property::LoadedLatency,
        "a scalar copy at full occupancy is bound by its loads in flight (Little's law)",
    ),
    (
        "copy/launch/wg=64;grid=2d",
        Property::LaunchInterval,
        "64-invocation workgroups finish sooner than an SM launches them",
    ),
    (
        "bank/stride/stride=1;r=1024",
        Property::IssueRate,
        "conflict-free workgroup-memory reads are bound by instruction issue",
    ),
    (
        "constant/uniform/read=divergent;r=1024",
        Property::UniformRate,
        "a uniform read of 32 distinct addresses serialises in the constant cache",
    ),
];

/// Whether case `id` is one [`CALIBRATION`] reads.
pub fn is_calibration(id: &CaseId) -> bool {
    let id = id.to_string();
    CALIBRATION.iter().any(|(c, ..)| *c == id)
}

/// The build whose rows the model is judged and calibrated on: the wgpu build closest
/// to the hardware that `rows` hold (tax-free, else unchecked, else default). The
/// simulator runs the WGSL as written, so CUDA twins (other code) are not its rows.
pub fn hardware_build(rows: &[Row]) -> Option<Build> {
    [Build::TaxFree, Build::Unchecked, Build::Default]
        .into_iter()
        .find(|&build| rows.iter().any(|r| r.api == Api::Wgpu && r.build == build))
}

/// A model and the calibration rows it was fitted to (`family/variant/param`).
#[derive(Clone, Debug)]
pub struct Calibration {
    pub model: DeviceModel,
    pub used: Vec<String>,
}

/// `preset` with the properties [`CALIBRATION`] names set from `rows` (of one device,
/// on the [`hardware_build`]) where they hold the row; the preset's value otherwise.
pub fn calibrate(preset: &DeviceModel, rows: &[Row]) -> Calibration {
    let build = hardware_build(rows);
    let mut used = Vec::new();
    let mut model = *preset;
    for &(id, property, _) in CALIBRATION {
        let Some(row) = rows
            .iter()
            .filter(|r| r.api == Api::Wgpu && Some(r.build) == build)
            .find(|r| r.id().to_string() == id)
        else {
            continue;
        };
        let Some(measured_s) = row.gbps_median.map(|g| row.bytes as f64 / (g * 1e9)) else {
            continue;
        };
        // The registry's case the row measured, as the validator rebuilds it.
        let Ok((experiment, case)) =
            Rebuilder::default().find(&row.id(), row.sizing, (row.elements, row.bytes))
        else {
            continue;
        };
        let Ok(p) = crate::backend::sim::predict(experiment, &case, &model) else {
            continue;
        };
        if set(&mut model, property, &p, measured_s) {
            model.calibrated = true;
            used.push(id.to_owned());
        }
    }
    Calibration { model, used }
}

/// Scales `property` so that the term it governs in `p` takes `measured_s`; false
/// when `p` has no such term.
fn set(model: &mut DeviceModel, property: Property, p: &Prediction, measured_s: f64) -> bool {
    let t = &p.terms;
    // A time proportional to the property (latencies, intervals) or inversely (rates).
    let (value, term, slower_is_larger): (&mut f64, f64, bool) = match property {
        Property::DramBandwidth => (&mut model.dram_gbps, t.dram, false),
        Property::L1Latency => (&mut model.l1_latency_ns, t.latency, true),
        Property::L2Latency => (&mut model.l2_latency_ns, t.latency, true),
        Property::DramLatency => (&mut model.dram_latency_ns, t.latency, true),
        Property::LoadedLatency => (&mut model.loaded_latency_ns, t.latency, true),
        Property::LaunchInterval => (&mut model.workgroup_launch_ns, t.launch, true),
        Property::IssueRate => (&mut model.issue_per_clock, t.issue, false),
        Property::UniformRate => (&mut model.uniform_addresses_per_s, t.uniform, false),
        Property::L2WriteRate => (&mut model.l2_write_requests_per_s, t.l2_writes, false),
        Property::DramPartialLine => (&mut model.dram_unmoved_sector_share, t.dram_partial, true),
    };
    // The write rate governs only the rest of the time the L2 takes.
    let measured_s = match property {
        Property::L2WriteRate => measured_s - (t.l2 - t.l2_writes),
        Property::DramPartialLine => measured_s - (t.dram - t.dram_partial),
        _ => measured_s,
    };
    if !(term > 0.0 && term.is_finite() && measured_s > 0.0) {
        return false;
    }
    *value *= if slower_is_larger {
        measured_s / term
    } else {
        term / measured_s
    };
    true
}
