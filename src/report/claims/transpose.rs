//! The transpose claims: the row-copy bound, reading columns, unrolling, diagonal
//! workgroups, tiles in workgroup memory and block shapes.

use super::{
    Claim, Finding, Kind, Outcome, all, any, at_each, at_least, at_most, best_ratio, ratio,
    ratio_text,
};
use crate::params;
use crate::suite::families::transpose::{
    COPY_COL, COPY_ROW, DIAGONAL_COL, DIAGONAL_ROW, NAIVE_COL, NAIVE_COL_UNROLL4, NAIVE_ROW,
    NAIVE_ROW_UNROLL4, NAIVE_TEXTURE, SMEM, SMEM_PAD, SMEM_PAD_VEC4, SMEM_UNROLL_PAD,
};
use crate::suite::{Experiment, Family, Key, Value};

/// Every transpose experiment but the row copy: what the row copy bounds.
const BOUNDED: &[&Experiment] = &[
    &COPY_COL,
    &NAIVE_ROW,
    &NAIVE_COL,
    &NAIVE_TEXTURE,
    &NAIVE_ROW_UNROLL4,
    &NAIVE_COL_UNROLL4,
    &DIAGONAL_ROW,
    &DIAGONAL_COL,
    &SMEM,
    &SMEM_PAD,
    &SMEM_UNROLL_PAD,
    &SMEM_PAD_VEC4,
];
const EVERY: &[&Experiment] = &[
    &COPY_ROW,
    &COPY_COL,
    &NAIVE_ROW,
    &NAIVE_COL,
    &NAIVE_TEXTURE,
    &NAIVE_ROW_UNROLL4,
    &NAIVE_COL_UNROLL4,
    &DIAGONAL_ROW,
    &DIAGONAL_COL,
    &SMEM,
    &SMEM_PAD,
    &SMEM_UNROLL_PAD,
    &SMEM_PAD_VEC4,
];
const UNROLLED: &[&Experiment] = &[&NAIVE_ROW_UNROLL4, &NAIVE_COL_UNROLL4];

/// The square block, and the thinner ones the texts expect to beat it.
const SQUARE_BLOCK: (u32, u32) = (32, 32);
const THIN_BLOCKS: [(u32, u32); 2] = [(32, 16), (32, 8)];

/// The family's finding in the report's summary: fastest transpose ÷ row copy.
pub(super) const FINDING: Finding = Finding {
    claim: &COPY_BOUND,
    what: "fastest transpose ÷ row copy",
};

/// transpose-copy-bound, the claim the family's finding shows.
const COPY_BOUND: Claim = Claim {
    id: "transpose-copy-bound",
    family: Family::Transpose,
    claim: "the row copy (copy_row) bounds every transpose from above",
    rule: "no transpose variant runs faster than 1.05 × copy_row at the same size",
    kind: Kind::Bandwidth,
    experiments: EVERY,
    decide: |cases| {
        at_each(cases, &COPY_ROW, |params| {
            let (fastest, fastest_gbps) = BOUNDED
                .iter()
                .filter_map(|&e| Some((e, cases.gbps(e, params).ok()?)))
                .max_by(|a, b| a.1.total_cmp(&b.1))
                .ok_or_else(|| format!("no other {} variant measured", Family::Transpose))?;
            let bound = cases.gbps(&COPY_ROW, params)?;
            let value = fastest_gbps / bound;
            Ok(at_most(
                value,
                1.05,
                format!(
                    "fastest {} / {} = {} ({fastest_gbps:.1} / {bound:.1} GB/s)",
                    fastest.variant,
                    COPY_ROW.variant,
                    ratio_text(value)
                ),
            ))
        })
    },
};

/// The transpose claims, in checklist order.
pub(super) const CLAIMS: &[Claim] = &[
    COPY_BOUND,
    Claim {
        id: "transpose-read-columns",
        family: Family::Transpose,
        claim: "reading columns and writing rows beats reading rows and writing columns on \
                cached GPUs",
        rule: "naive_col runs at 1.05 × naive_row or faster, at every size measured",
        kind: Kind::Bandwidth,
        experiments: &[&NAIVE_ROW, &NAIVE_COL],
        decide: |cases| {
            at_each(cases, &NAIVE_ROW, |params| {
                let (value, detail) = ratio(cases, (&NAIVE_COL, params), (&NAIVE_ROW, params))?;
                Ok(at_least(value, 1.05, detail))
            })
        },
    },
    Claim {
        id: "transpose-unroll",
        family: Family::Transpose,
        claim: "unrolling puts more loads in flight and raises bandwidth",
        rule: "the faster of naive_row_unroll4 and naive_col_unroll4 runs at 1.05 × the faster of \
               naive_row and naive_col or faster",
        kind: Kind::Bandwidth,
        experiments: &[
            &NAIVE_ROW,
            &NAIVE_COL,
            &NAIVE_ROW_UNROLL4,
            &NAIVE_COL_UNROLL4,
        ],
        decide: |cases| {
            at_each(cases, &NAIVE_ROW, |params| {
                let (value, detail) =
                    best_ratio(cases, UNROLLED, &[&NAIVE_ROW, &NAIVE_COL], params)?;
                Ok(at_least(value, 1.05, detail))
            })
        },
    },
    Claim {
        id: "transpose-unroll-bound",
        family: Family::Transpose,
        claim: "unrolled, the naive transpose can reach the row-copy bound",
        rule: "the faster of naive_row_unroll4 and naive_col_unroll4 runs at 0.90 × copy_row or \
               faster",
        kind: Kind::Bandwidth,
        experiments: &[&COPY_ROW, &NAIVE_ROW_UNROLL4, &NAIVE_COL_UNROLL4],
        decide: |cases| {
            at_each(cases, &COPY_ROW, |params| {
                let (value, detail) = best_ratio(cases, UNROLLED, &[&COPY_ROW], params)?;
                Ok(at_least(value, 0.90, detail))
            })
        },
    },
    Claim {
        id: "transpose-diagonal",
        family: Family::Transpose,
        claim: "remapping workgroups to diagonals avoids DRAM partition camping and speeds up \
                the naive transpose (may not help on modern GPUs)",
        rule: "diagonal_row runs at 1.05 × naive_row or diagonal_col at 1.05 × naive_col, or \
               faster",
        kind: Kind::Bandwidth,
        experiments: &[&NAIVE_ROW, &NAIVE_COL, &DIAGONAL_ROW, &DIAGONAL_COL],
        decide: |cases| {
            at_each(cases, &NAIVE_ROW, |params| {
                any([(&DIAGONAL_ROW, &NAIVE_ROW), (&DIAGONAL_COL, &NAIVE_COL)]
                    .map(|(diagonal, naive)| {
                        let (value, detail) = ratio(cases, (diagonal, params), (naive, params))?;
                        Ok(at_least(value, 1.05, detail))
                    })
                    .into())
            })
        },
    },
    Claim {
        id: "transpose-tile",
        family: Family::Transpose,
        claim: "a padded tile in workgroup memory beats an unpadded one, which beats the naive \
                transpose",
        rule: "smem_pad runs at 1.05 × smem or faster, and smem at 1.05 × naive_row or faster",
        kind: Kind::Bandwidth,
        experiments: &[&NAIVE_ROW, &SMEM, &SMEM_PAD],
        decide: |cases| {
            at_each(cases, &SMEM, |params| {
                all([(&SMEM_PAD, &SMEM), (&SMEM, &NAIVE_ROW)]
                    .map(|(faster, slower)| {
                        let (value, detail) = ratio(cases, (faster, params), (slower, params))?;
                        Ok(at_least(value, 1.05, detail))
                    })
                    .into())
            })
        },
    },
    Claim {
        id: "transpose-texture-locality",
        family: Family::Transpose,
        claim: "the texture cache's 2-D locality serves a transpose's column reads better \
                than storage reads",
        rule: "naive_texture runs at 1.05 × naive_col or faster, at every size and block \
               measured",
        kind: Kind::Bandwidth,
        experiments: &[&NAIVE_COL, &NAIVE_TEXTURE],
        decide: |cases| {
            at_each(cases, &NAIVE_TEXTURE, |params| {
                let (value, detail) = ratio(cases, (&NAIVE_TEXTURE, params), (&NAIVE_COL, params))?;
                Ok(at_least(value, 1.05, detail))
            })
        },
    },
    Claim {
        id: "transpose-thin-blocks",
        family: Family::Transpose,
        claim: "thinner blocks (32×16, 32×8) beat square 32×32 blocks",
        rule: "naive_col with block 32x16 or 32x8 runs at 1.05 × block 32x32 or faster",
        kind: Kind::Bandwidth,
        experiments: &[&NAIVE_COL],
        decide: |cases| {
            let square = Value::from(SQUARE_BLOCK);
            let sizes: Vec<Value> = cases
                .params(&NAIVE_COL)
                .into_iter()
                .filter(|params| params.get(Key::Block) == Some(&square))
                .filter_map(|params| params.get(Key::Size).cloned())
                .collect();
            if sizes.is_empty() {
                return Err(format!(
                    "no {} {}",
                    NAIVE_COL.name(),
                    params!(Block => SQUARE_BLOCK)
                ));
            }
            let per_size: Vec<Outcome> = sizes
                .into_iter()
                .map(|size| {
                    let square = params!(Size => size.clone(), Block => SQUARE_BLOCK);
                    any(THIN_BLOCKS
                        .map(|block| {
                            let thin = params!(Size => size.clone(), Block => block);
                            let (value, detail) =
                                ratio(cases, (&NAIVE_COL, &thin), (&NAIVE_COL, &square))?;
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
    use crate::params;
    use crate::report::claims::testing::{self, Threshold, claim, row};
    use crate::report::claims::{Cases, Source};
    use crate::suite::Params;
    use crate::suite::families::transpose::{
        COPY_ROW, DIAGONAL_ROW, NAIVE_COL, NAIVE_COL_UNROLL4, NAIVE_ROW, NAIVE_TEXTURE, SMEM,
        SMEM_PAD,
    };

    fn size() -> Params {
        params!(Size => (4096u32, 4096u32))
    }

    static THRESHOLDS: &[Threshold] = &[
        Threshold {
            id: "transpose-copy-bound",
            rows: |x| {
                vec![
                    row(&COPY_ROW, size(), 100.0),
                    row(&NAIVE_COL, size(), 100.0 * x),
                ]
            },
            sides: &[(1.04, true), (1.06, false)],
        },
        Threshold {
            id: "transpose-read-columns",
            rows: |x| {
                vec![
                    row(&NAIVE_ROW, size(), 100.0),
                    row(&NAIVE_COL, size(), 100.0 * x),
                ]
            },
            sides: &[(1.04, false), (1.06, true)],
        },
        Threshold {
            id: "transpose-unroll",
            rows: |x| {
                vec![
                    row(&NAIVE_ROW, size(), 100.0),
                    row(&NAIVE_COL, size(), 90.0),
                    row(&NAIVE_COL_UNROLL4, size(), 100.0 * x),
                ]
            },
            sides: &[(1.04, false), (1.06, true)],
        },
        Threshold {
            id: "transpose-unroll-bound",
            rows: |x| {
                vec![
                    row(&COPY_ROW, size(), 100.0),
                    row(&NAIVE_COL_UNROLL4, size(), 100.0 * x),
                ]
            },
            sides: &[(0.89, false), (0.91, true)],
        },
        Threshold {
            id: "transpose-diagonal",
            rows: |x| {
                vec![
                    row(&NAIVE_ROW, size(), 100.0),
                    row(&DIAGONAL_ROW, size(), 100.0 * x),
                ]
            },
            sides: &[(1.04, false), (1.06, true)],
        },
        Threshold {
            id: "transpose-tile",
            rows: |x| {
                vec![
                    row(&NAIVE_ROW, size(), 100.0),
                    row(&SMEM, size(), 110.0),
                    row(&SMEM_PAD, size(), 110.0 * x),
                ]
            },
            sides: &[(1.04, false), (1.06, true)],
        },
        Threshold {
            id: "transpose-tile",
            rows: |x| {
                vec![
                    row(&NAIVE_ROW, size(), 100.0),
                    row(&SMEM, size(), 100.0 * x),
                    row(&SMEM_PAD, size(), 200.0),
                ]
            },
            sides: &[(1.04, false), (1.06, true)],
        },
        Threshold {
            id: "transpose-texture-locality",
            rows: |x| {
                vec![
                    row(&NAIVE_COL, size(), 100.0),
                    row(&NAIVE_TEXTURE, size(), 100.0 * x),
                ]
            },
            sides: &[(1.04, false), (1.06, true)],
        },
        Threshold {
            id: "transpose-thin-blocks",
            rows: |x| {
                let size = (4096u32, 4096u32);
                vec![
                    row(
                        &NAIVE_COL,
                        params!(Size => size, Block => (32u32, 32u32)),
                        100.0,
                    ),
                    row(
                        &NAIVE_COL,
                        params!(Size => size, Block => (32u32, 16u32)),
                        100.0 * x,
                    ),
                ]
            },
            sides: &[(1.04, false), (1.06, true)],
        },
    ];

    crate::threshold_tests!(CLAIMS, THRESHOLDS);

    #[test]
    fn a_rule_must_hold_at_every_size() {
        let claim = claim("transpose-read-columns");
        let small = params!(Size => (4096u32, 4096u32));
        let large = params!(Size => (8192u32, 8192u32));
        let rows = vec![
            row(&NAIVE_ROW, small.clone(), 100.0),
            row(&NAIVE_COL, small, 120.0),
            row(&NAIVE_ROW, large.clone(), 100.0),
            row(&NAIVE_COL, large, 100.0),
        ];
        let verdict = claim.decide(&Cases::new(&rows, Source::Measured));
        assert_eq!(verdict.label(), "not reproduced");
        assert!(verdict.detail().contains("[size=8192x8192]"), "{verdict:?}");
        // A size where one side is missing does not count against it.
        let verdict = claim.decide(&Cases::new(&rows[..3], Source::Measured));
        assert_eq!(verdict.label(), "reproduced", "{verdict:?}");
    }
}
