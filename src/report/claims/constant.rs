//! The constant-memory claims: distinct addresses serialise, a broadcast is as fast as
//! can be.

use super::{Claim, Kind, at_each, at_least, at_most, ratio};
use crate::results::param_value;

/// The constant claims, in checklist order.
pub(super) const CLAIMS: &[Claim] = &[
    Claim {
        id: "constant-serialises",
        family: "constant",
        claim: "the constant (uniform) path serialises on distinct addresses within a request",
        rule: "uniform read=divergent runs at 0.5 × uniform read=broadcast or slower",
        kind: Kind::Bandwidth,
        decide: |cases| {
            at_each(cases, "constant/uniform", |param| {
                let divergent = divergent_of(param)?;
                let (value, detail) = ratio(
                    cases,
                    ("constant/uniform", &divergent),
                    ("constant/uniform", param),
                )?;
                Ok(at_most(value, 0.5, detail))
            })
        },
    },
    Claim {
        id: "constant-broadcast",
        family: "constant",
        claim: "when all lanes read the same address the constant path is as fast as can be",
        rule: "uniform read=broadcast runs at 0.97 × storage read=broadcast or faster",
        kind: Kind::Bandwidth,
        decide: |cases| {
            at_each(cases, "constant/uniform", |param| {
                divergent_of(param)?;
                let (value, detail) = ratio(
                    cases,
                    ("constant/uniform", param),
                    ("constant/storage", param),
                )?;
                Ok(at_least(value, 0.97, detail))
            })
        },
    },
];

/// The divergent twin of a `read=broadcast` constant case.
fn divergent_of(param: &str) -> Result<String, String> {
    match param_value(param, "read") {
        Some("broadcast") => Ok(param.replace("read=broadcast", "read=divergent")),
        _ => Err(format!("{param} is not a broadcast case")),
    }
}

#[cfg(test)]
mod tests {
    use super::CLAIMS;
    use crate::report::claims::testing::{self, Threshold, row};

    static THRESHOLDS: &[Threshold] = &[
        Threshold {
            id: "constant-serialises",
            rows: |x| {
                vec![
                    row("constant/uniform", "read=broadcast;r=64", 100.0),
                    row("constant/uniform", "read=divergent;r=64", 100.0 * x),
                ]
            },
            sides: &[(0.49, true), (0.51, false)],
        },
        Threshold {
            id: "constant-broadcast",
            rows: |x| {
                vec![
                    row("constant/storage", "read=broadcast;r=64", 100.0),
                    row("constant/uniform", "read=broadcast;r=64", 100.0 * x),
                ]
            },
            sides: &[(0.96, false), (0.98, true)],
        },
    ];

    #[test]
    fn every_rule_on_both_sides_of_its_thresholds() {
        testing::assert_thresholds(THRESHOLDS);
    }

    #[test]
    fn every_bandwidth_rule_has_threshold_tests() {
        testing::assert_thresholds_cover(CLAIMS, THRESHOLDS);
    }

    #[test]
    fn skipped_and_failed_rows_are_not_measured() {
        testing::assert_unmeasured_when_skipped_or_failed(THRESHOLDS);
    }
}
