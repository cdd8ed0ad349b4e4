//! Calibration: a device model fitted to a handful of microbenchmark rows of a run,
//! named in [`CALIBRATION`]; every other row is held out, so a prediction of it is a
//! prediction, not a fit.

use crate::results::Row;
use crate::sim::device::DeviceModel;
use crate::suite::{Api, Build};

/// The rows a device model is calibrated from, as `family/variant/param`, and the
/// device property each sets.
pub const CALIBRATION: &[(&str, &str)] = &[(
    "copy/peak/launch=vec4",
    "DRAM bandwidth (a full-sector vec4 copy streams at the DRAM's practical rate)",
)];

/// Whether the row of `family/variant/param` is one [`CALIBRATION`] reads.
pub fn is_calibration(family: &str, variant: &str, param: &str) -> bool {
    CALIBRATION
        .iter()
        .any(|(id, _)| *id == format!("{family}/{variant}/{param}"))
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

/// `preset` with the properties [`CALIBRATION`] names set from `rows` (of one device)
/// where they hold the row, on the [`hardware_build`]; the preset's value otherwise.
pub fn calibrate(preset: &DeviceModel, rows: &[Row]) -> Calibration {
    let build = hardware_build(rows);
    let measured = |id: &str| {
        rows.iter()
            .filter(|r| r.api == Api::Wgpu && Some(r.build) == build)
            .find(|r| format!("{}/{}/{}", r.family, r.variant, r.param) == id)
            .and_then(|r| r.gbps_median)
    };
    let mut used = Vec::new();
    let mut model = *preset;
    if let Some(peak) = measured(CALIBRATION[0].0) {
        model = model.calibrated(peak);
        used.push(CALIBRATION[0].0.to_owned());
    }
    Calibration { model, used }
}
