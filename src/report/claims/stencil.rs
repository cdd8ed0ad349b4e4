//! The stencil claims: coefficients in uniform memory, a haloed tile in workgroup memory.

use super::{Claim, Kind, at_each, at_least, best_ratio, ratio};

/// The stencil claims, in checklist order.
pub(super) const CLAIMS: &[Claim] = &[
    Claim {
        id: "stencil-uniform-coefficients",
        family: "stencil",
        claim: "coefficients every lane reads alike belong in constant (uniform) memory",
        rule: "uniform_coef runs at 0.97 × storage_coef or faster",
        kind: Kind::Bandwidth,
        decide: |cases| {
            at_each(cases, "stencil/uniform_coef", |param| {
                let (value, detail) = ratio(
                    cases,
                    ("stencil/uniform_coef", param),
                    ("stencil/storage_coef", param),
                )?;
                Ok(at_least(value, 0.97, detail))
            })
        },
    },
    Claim {
        id: "stencil-tile",
        family: "stencil",
        claim: "a tile with halo in workgroup memory removes redundant global reads",
        rule: "the fastest tiled variant (uniform_coef, storage_coef, const_coef) runs at \
               1.05 × global_direct or faster",
        kind: Kind::Bandwidth,
        decide: |cases| {
            at_each(cases, "stencil/global_direct", |param| {
                let (value, detail) = best_ratio(
                    cases,
                    &[
                        "stencil/uniform_coef",
                        "stencil/storage_coef",
                        "stencil/const_coef",
                    ],
                    &["stencil/global_direct"],
                    param,
                )?;
                Ok(at_least(value, 1.05, detail))
            })
        },
    },
];

#[cfg(test)]
mod tests {
    use super::CLAIMS;
    use crate::report::claims::testing::{self, Threshold, row};

    static THRESHOLDS: &[Threshold] = &[
        Threshold {
            id: "stencil-uniform-coefficients",
            rows: |x| {
                vec![
                    row("stencil/storage_coef", "n=64", 100.0),
                    row("stencil/uniform_coef", "n=64", 100.0 * x),
                ]
            },
            sides: &[(0.96, false), (0.98, true)],
        },
        Threshold {
            id: "stencil-tile",
            rows: |x| {
                vec![
                    row("stencil/global_direct", "n=64", 100.0),
                    row("stencil/uniform_coef", "n=64", 100.0 * x),
                ]
            },
            sides: &[(1.04, false), (1.06, true)],
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
