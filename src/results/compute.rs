//! The compute ceiling and the ridge point, read from the `compute` family's rows: per
//! api/build the peak operations per second of each element type (its best row's GB/s
//! times its operations per byte) and the ridge point, peak FLOP/s over the DRAM
//! bandwidth (the setting's fastest `copy/peak`).

use super::{Row, Status};
use crate::suite::families::compute::Element;
use crate::suite::{Family, Key, Setting};

/// The peak of one element type: operations per second and where.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Peak {
    /// 10^9 operations per second (GFLOP/s for f32).
    pub(crate) gops: f64,
    /// Multiply-adds per element of the row that reached it.
    pub(crate) fmas: u64,
}

/// The peak of `element`'s sweep in `setting`, from its measured rows.
pub fn peak(rows: &[Row], element: Element, setting: Setting) -> Option<Peak> {
    let experiment = element.experiment();
    rows.iter()
        .filter(|row| {
            row.family == Family::Compute
                && row.variant == experiment.variant
                && row.status == Status::Ok
                && row.setting() == setting
        })
        .filter_map(|row| {
            let fmas = row.params.number(Key::Rounds)?;
            Some(Peak {
                gops: row.gbps_median? * element.ops_per_byte(fmas),
                fmas,
            })
        })
        .max_by(|x, y| x.gops.total_cmp(&y.gops))
}

/// The fastest measured `copy/peak` of `setting`: the DRAM bandwidth a ridge point is
/// read against.
pub(crate) fn dram_gbps(rows: &[Row], setting: Setting) -> Option<f64> {
    let of_setting: Vec<Row> = rows
        .iter()
        .filter(|row| row.setting() == setting)
        .cloned()
        .collect();
    super::copy_peak_gbps(&of_setting)
}

/// One line per api/build with compute rows: `compute, cuda/default: f32 peak 51234
/// GFLOP/s (k=1024), int 25610 Gop/s (k=256); ridge point 17.1 flop/byte against 2990
/// GB/s`.
pub(crate) fn summary_lines(rows: &[Row]) -> String {
    let mut lines = String::new();
    for setting in super::measured_settings(rows, Family::Compute) {
        let mut parts = Vec::new();
        let f32_peak = peak(rows, Element::F32, setting);
        if let Some(p) = f32_peak {
            parts.push(format!("f32 peak {:.0} GFLOP/s (k={})", p.gops, p.fmas));
        }
        if let Some(p) = peak(rows, Element::F16, setting) {
            parts.push(format!("f16 {:.0} GFLOP/s (k={})", p.gops, p.fmas));
        }
        if let Some(p) = peak(rows, Element::Int, setting) {
            parts.push(format!("int {:.0} Gop/s (k={})", p.gops, p.fmas));
        }
        let mut line = format!("compute, {setting}: {}", parts.join(", "));
        if let (Some(p), Some(dram)) = (f32_peak, dram_gbps(rows, setting)) {
            line.push_str(&format!(
                "; ridge point {:.1} flop/byte against {dram:.0} GB/s",
                p.gops / dram
            ));
        }
        lines.push_str(&line);
        lines.push('\n');
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::tests::row;

    #[test]
    fn the_peak_is_the_best_rows_ops_and_the_ridge_its_ratio_to_the_copy_peak() {
        let compute_row = |variant: &str, k: u32, gbps: f64| Row {
            family: Family::Compute,
            ..row(variant, &format!("rounds={k}"), gbps)
        };
        let rows = [
            row("peak", "launch=vec4", 2000.0),
            compute_row("f32", 1, 1900.0),
            // 256 flop per byte at 200 GB/s: 51200 GFLOP/s.
            compute_row("f32", 1024, 200.0),
            compute_row("int", 256, 200.0),
        ];
        let lines = summary_lines(&rows);
        assert_eq!(
            lines,
            "compute, wgpu/default: f32 peak 51200 GFLOP/s (k=1024), int 12800 Gop/s \
             (k=256); ridge point 25.6 flop/byte against 2000 GB/s\n"
        );
    }
}
