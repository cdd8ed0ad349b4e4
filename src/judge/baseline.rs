//! The baseline judge (`membench compare --baseline`): each case of the compared files
//! against the same case of a baseline file. Its statistic, named against the
//! [`NoiseRule`]: the change `gbps / base − 1` against the two rows' noise together,
//! √(cv² + `cv_base`²). A change beyond the noise is `faster` or `slower`; one slower
//! beyond the threshold too, or a failed case the baseline measured, is a regression.

use std::collections::BTreeMap;

use super::{Difference, NoiseRule, Side};
use crate::results::{DeviceResults, Row, Status};

/// How many sigmas of the two rows' noise a change must exceed to count.
pub(crate) const SIGMAS: f64 = 1.0;

/// What a case did against the baseline.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Change {
    /// The difference is within the noise of the two measurements.
    Same,
    /// Faster by more than the noise.
    Faster,
    /// Slower by more than the noise.
    Slower,
    /// Measured in the baseline, failed here.
    Failed,
}

impl Change {
    /// The word the tables show.
    pub fn as_str(self) -> &'static str {
        match self {
            Change::Same => "same",
            Change::Faster => "faster",
            Change::Slower => "slower",
            Change::Failed => "failed",
        }
    }
}

/// One case of a compared file, judged against the same case in the same setting
/// (api and build) of the baseline file.
#[derive(Debug)]
pub struct Compared<'a> {
    /// The compared file's device, as the tables name it.
    pub label: &'a str,
    /// The compared file's row.
    pub row: &'a Row,
    /// The baseline's row of the same case.
    pub baseline: &'a Row,
    /// GB/s over the baseline's, less one: 0.05 is 5 % faster.
    pub(crate) change: Option<f64>,
    /// The relative noise of the two measurements together, √(cv² + `cv_baseline`²).
    pub noise: f64,
    /// What the case did.
    pub outcome: Change,
    /// Slower by more than the threshold (and the noise), or failed: `membench compare`
    /// exits non-zero.
    pub(crate) regression: bool,
}

/// Every case of `others` that `baseline` measured in the same setting and at the same
/// size (bytes moved), judged: a change within the combined noise of the two rows is
/// `same`; a case slower by more than `threshold` (a fraction: 0.05 for 5 %) and the
/// noise, or failed, is a regression. A case the other file skipped is not judged.
pub fn judge<'a>(
    baseline: &'a [DeviceResults],
    others: &'a [DeviceResults],
    threshold: f64,
) -> Vec<Compared<'a>> {
    // The change is told beyond the noise alone; the regression beyond the threshold.
    let told = NoiseRule {
        threshold: 0.0,
        sigmas: SIGMAS,
    };
    let gate = NoiseRule {
        threshold,
        sigmas: SIGMAS,
    };
    let reference: BTreeMap<_, &Row> = baseline
        .iter()
        .flat_map(|device| &device.rows)
        .filter(|row| row.gbps_median.is_some())
        .map(|row| ((row.key(), row.bytes), row))
        .collect();
    others
        .iter()
        .flat_map(|device| {
            device
                .rows
                .iter()
                .map(move |row| (device.label.as_str(), row))
        })
        .filter_map(|(label, row)| {
            let baseline = *reference.get(&(row.key(), row.bytes))?;
            let noise = row.cv.unwrap_or(0.0).hypot(baseline.cv.unwrap_or(0.0));
            let change = row
                .gbps_median
                .zip(baseline.gbps_median)
                .map(|(gbps, base)| gbps / base - 1.0);
            let difference = change.map(|relative| Difference {
                relative,
                sigma: noise,
            });
            let outcome = match difference.map(|d| told.side(d)) {
                Some(Side::Within) => Change::Same,
                Some(Side::Above) => Change::Faster,
                Some(Side::Below) => Change::Slower,
                None if row.status == Status::Failed => Change::Failed,
                None => return None,
            };
            let regression = outcome == Change::Failed
                || difference.is_some_and(|d| gate.side(d) == Side::Below);
            Some(Compared {
                label,
                row,
                baseline,
                change,
                noise,
                outcome,
                regression,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suite::{Family, Setting};

    #[test]
    fn changes_are_read_against_the_noise_and_the_threshold() {
        let row = |variant: &str, gbps: Option<f64>, cv: f64| Row {
            family: Family::Copy,
            variant: variant.into(),
            params: "offset=0".parse().unwrap(),
            status: if gbps.is_some() {
                Status::Ok
            } else {
                Status::Failed
            },
            gbps_median: gbps,
            cv: Some(cv),
            ..Row::default()
        };
        let file = |rows: Vec<Row>| {
            vec![DeviceResults {
                path: "gpu.csv".into(),
                kernel_files: Vec::new(),
                label: "GPU".into(),
                setting: Setting::WGPU,
                rows,
            }]
        };
        let baseline = file(
            ["faster", "noisy", "regressed", "slower", "failed"]
                .map(|variant| row(variant, Some(100.0), 0.01))
                .to_vec(),
        );
        let others = file(vec![
            // 1.5 % beyond a combined noise of √2 %.
            row("faster", Some(101.5), 0.01),
            // 7 % within √(1² + 7²) %.
            row("noisy", Some(93.0), 0.07),
            row("regressed", Some(90.0), 0.01),
            row("slower", Some(97.0), 0.01),
            row("failed", None, 0.0),
            row("new", Some(1.0), 0.0),
        ]);
        let judged: Vec<(&str, Change, bool)> = judge(&baseline, &others, 0.05)
            .iter()
            .map(|j| (j.row.variant.as_str(), j.outcome, j.regression))
            .collect();
        assert_eq!(
            judged,
            [
                ("faster", Change::Faster, false),
                ("noisy", Change::Same, false),
                ("regressed", Change::Slower, true),
                ("slower", Change::Slower, false),
                ("failed", Change::Failed, true),
            ]
        );
    }
}
