//! The transpose claims: the row-copy bound, reading columns, unrolling, diagonal
//! workgroups, tiles in workgroup memory and block shapes.

use super::{
    Claim, Kind, Outcome, all, any, at_each, at_least, at_most, best_ratio, ratio, same_param,
};
use crate::results::param_value;

/// The transpose claims, in checklist order.
pub(super) const CLAIMS: &[Claim] = &[
    Claim {
        id: "transpose-copy-bound",
        family: "transpose",
        claim: "the row copy (copy_row) bounds every transpose from above",
        rule: "no transpose variant runs faster than 1.05 × copy_row at the same size",
        kind: Kind::Bandwidth,
        decide: |cases| {
            at_each(cases, "transpose/copy_row", |param| {
                let (fastest_id, fastest_gbps) = cases
                    .family("transpose")
                    .filter(|row| row.variant != "copy_row" && same_param(&row.param, param))
                    .filter_map(|row| {
                        let id = format!("transpose/{}", row.variant);
                        Some((row.variant.as_str(), cases.gbps(&id, param).ok()?))
                    })
                    .max_by(|a, b| a.1.total_cmp(&b.1))
                    .ok_or("no other transpose variant measured")?;
                let bound = cases.gbps("transpose/copy_row", param)?;
                let value = fastest_gbps / bound;
                Ok(at_most(
                    value,
                    1.05,
                    format!(
                        "fastest {fastest_id} / copy_row = {value:.3} ({fastest_gbps:.1} / \
                         {bound:.1} GB/s)"
                    ),
                ))
            })
        },
    },
    Claim {
        id: "transpose-read-columns",
        family: "transpose",
        claim: "reading columns and writing rows beats reading rows and writing columns on \
                cached GPUs",
        rule: "naive_col runs at 1.05 × naive_row or faster, at every size measured",
        kind: Kind::Bandwidth,
        decide: |cases| {
            at_each(cases, "transpose/naive_row", |param| {
                let (value, detail) = ratio(
                    cases,
                    ("transpose/naive_col", param),
                    ("transpose/naive_row", param),
                )?;
                Ok(at_least(value, 1.05, detail))
            })
        },
    },
    Claim {
        id: "transpose-unroll",
        family: "transpose",
        claim: "unrolling puts more loads in flight and raises bandwidth",
        rule: "the faster of naive_row_unroll4 and naive_col_unroll4 runs at 1.05 × the faster of \
               naive_row and naive_col or faster",
        kind: Kind::Bandwidth,
        decide: |cases| {
            at_each(cases, "transpose/naive_row", |param| {
                let (value, detail) = best_ratio(
                    cases,
                    &["transpose/naive_row_unroll4", "transpose/naive_col_unroll4"],
                    &["transpose/naive_row", "transpose/naive_col"],
                    param,
                )?;
                Ok(at_least(value, 1.05, detail))
            })
        },
    },
    Claim {
        id: "transpose-unroll-bound",
        family: "transpose",
        claim: "unrolled, the naive transpose can reach the row-copy bound",
        rule: "the faster of naive_row_unroll4 and naive_col_unroll4 runs at 0.90 × copy_row or \
               faster",
        kind: Kind::Bandwidth,
        decide: |cases| {
            at_each(cases, "transpose/copy_row", |param| {
                let (value, detail) = best_ratio(
                    cases,
                    &["transpose/naive_row_unroll4", "transpose/naive_col_unroll4"],
                    &["transpose/copy_row"],
                    param,
                )?;
                Ok(at_least(value, 0.90, detail))
            })
        },
    },
    Claim {
        id: "transpose-diagonal",
        family: "transpose",
        claim: "remapping workgroups to diagonals avoids DRAM partition camping and speeds up \
                the naive transpose (may not help on modern GPUs)",
        rule: "diagonal_row runs at 1.05 × naive_row or diagonal_col at 1.05 × naive_col, or \
               faster",
        kind: Kind::Bandwidth,
        decide: |cases| {
            at_each(cases, "transpose/naive_row", |param| {
                any(["row", "col"]
                    .map(|side| {
                        let (value, detail) = ratio(
                            cases,
                            (&format!("transpose/diagonal_{side}"), param),
                            (&format!("transpose/naive_{side}"), param),
                        )?;
                        Ok(at_least(value, 1.05, detail))
                    })
                    .into())
            })
        },
    },
    Claim {
        id: "transpose-tile",
        family: "transpose",
        claim: "a padded tile in workgroup memory beats an unpadded one, which beats the naive \
                transpose",
        rule: "smem_pad runs at 1.05 × smem or faster, and smem at 1.05 × naive_row or faster",
        kind: Kind::Bandwidth,
        decide: |cases| {
            at_each(cases, "transpose/smem", |param| {
                all([("smem_pad", "smem"), ("smem", "naive_row")]
                    .map(|(a, b)| {
                        let (value, detail) = ratio(
                            cases,
                            (&format!("transpose/{a}"), param),
                            (&format!("transpose/{b}"), param),
                        )?;
                        Ok(at_least(value, 1.05, detail))
                    })
                    .into())
            })
        },
    },
    Claim {
        id: "transpose-thin-blocks",
        family: "transpose",
        claim: "thinner blocks (32×16, 32×8) beat square 32×32 blocks",
        rule: "naive_col with block 32x16 or 32x8 runs at 1.05 × block 32x32 or faster",
        kind: Kind::Bandwidth,
        decide: |cases| {
            let sizes: Vec<&str> = cases
                .params("transpose/naive_col")
                .into_iter()
                .filter(|p| param_value(p, "block") == Some("32x32"))
                .filter_map(|p| param_value(p, "size"))
                .collect();
            if sizes.is_empty() {
                return Err("no transpose/naive_col block=32x32".to_owned());
            }
            let per_size: Vec<Outcome> = sizes
                .into_iter()
                .map(|size| {
                    let square = format!("size={size};block=32x32");
                    any(["32x16", "32x8"]
                        .map(|block| {
                            let thin = format!("size={size};block={block}");
                            let (value, detail) = ratio(
                                cases,
                                ("transpose/naive_col", &thin),
                                ("transpose/naive_col", &square),
                            )?;
                            Ok(at_least(value, 1.05, detail))
                        })
                        .into())
                })
                .collect();
            all(per_size)
        },
    },
];

#[cfg(test)]
mod tests {
    use super::CLAIMS;
    use crate::report::claims::testing::{self, Threshold, claim, row};
    use crate::report::claims::{Cases, Source};

    const SIZE: &str = "size=4096x4096";

    static THRESHOLDS: &[Threshold] = &[
        Threshold {
            id: "transpose-copy-bound",
            rows: |x| {
                vec![
                    row("transpose/copy_row", SIZE, 100.0),
                    row("transpose/naive_col", SIZE, 100.0 * x),
                ]
            },
            sides: &[(1.04, true), (1.06, false)],
        },
        Threshold {
            id: "transpose-read-columns",
            rows: |x| {
                vec![
                    row("transpose/naive_row", SIZE, 100.0),
                    row("transpose/naive_col", SIZE, 100.0 * x),
                ]
            },
            sides: &[(1.04, false), (1.06, true)],
        },
        Threshold {
            id: "transpose-unroll",
            rows: |x| {
                vec![
                    row("transpose/naive_row", SIZE, 100.0),
                    row("transpose/naive_col", SIZE, 90.0),
                    row("transpose/naive_col_unroll4", SIZE, 100.0 * x),
                ]
            },
            sides: &[(1.04, false), (1.06, true)],
        },
        Threshold {
            id: "transpose-unroll-bound",
            rows: |x| {
                vec![
                    row("transpose/copy_row", SIZE, 100.0),
                    row("transpose/naive_col_unroll4", SIZE, 100.0 * x),
                ]
            },
            sides: &[(0.89, false), (0.91, true)],
        },
        Threshold {
            id: "transpose-diagonal",
            rows: |x| {
                vec![
                    row("transpose/naive_row", SIZE, 100.0),
                    row("transpose/diagonal_row", SIZE, 100.0 * x),
                ]
            },
            sides: &[(1.04, false), (1.06, true)],
        },
        Threshold {
            id: "transpose-tile",
            rows: |x| {
                vec![
                    row("transpose/naive_row", SIZE, 100.0),
                    row("transpose/smem", SIZE, 110.0),
                    row("transpose/smem_pad", SIZE, 110.0 * x),
                ]
            },
            sides: &[(1.04, false), (1.06, true)],
        },
        Threshold {
            id: "transpose-tile",
            rows: |x| {
                vec![
                    row("transpose/naive_row", SIZE, 100.0),
                    row("transpose/smem", SIZE, 100.0 * x),
                    row("transpose/smem_pad", SIZE, 200.0),
                ]
            },
            sides: &[(1.04, false), (1.06, true)],
        },
        Threshold {
            id: "transpose-thin-blocks",
            rows: |x| {
                vec![
                    row("transpose/naive_col", "size=4096x4096;block=32x32", 100.0),
                    row(
                        "transpose/naive_col",
                        "size=4096x4096;block=32x16",
                        100.0 * x,
                    ),
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

    #[test]
    fn a_rule_must_hold_at_every_size() {
        let claim = claim("transpose-read-columns");
        let rows = vec![
            row("transpose/naive_row", "size=4096x4096", 100.0),
            row("transpose/naive_col", "size=4096x4096", 120.0),
            row("transpose/naive_row", "size=8192x8192", 100.0),
            row("transpose/naive_col", "size=8192x8192", 100.0),
        ];
        let verdict = claim.decide(&Cases::new(&rows, Source::Measured));
        assert_eq!(verdict.label(), "not reproduced");
        assert!(verdict.detail().contains("[size=8192x8192]"), "{verdict:?}");
        // A size where one side is missing does not count against it.
        let verdict = claim.decide(&Cases::new(&rows[..3], Source::Measured));
        assert_eq!(verdict.label(), "reproduced", "{verdict:?}");
    }
}
