//! The bank-conflict claims: column reads, padding, override-sized and rectangular
//! tiles, strides and the broadcast.

use super::{
    Cases, Claim, Finding, Kind, Verdict, all, as_shown, at_each, at_least, at_most, between,
    ratio, ratio_text,
};
use crate::params;
use crate::suite::families::bank::{
    RECT_ROW_COL, RECT_ROW_COL_PAD, RECT_ROW_ROW, ROW_COL, ROW_COL_OVERRIDE, ROW_COL_OVERRIDE_PAD,
    ROW_COL_PAD, ROW_ROW, STRIDE,
};
use crate::suite::{Family, Key, Params};

/// The family's finding in the report's summary: column ÷ row reads of a 32-wide tile.
pub(super) const FINDING: Finding = Finding {
    claim: &COLUMN_CONFLICT,
    what: "column ÷ row reads of a 32-wide tile",
};

/// bank-column-conflict, the claim the family's finding shows.
const COLUMN_CONFLICT: Claim = Claim {
    id: "bank-column-conflict",
    family: Family::Bank,
    claim: "reading a column of a 32-wide tile is a 32-way bank conflict",
    rule: "row_col runs at 0.25 × row_row or slower (4× the time at least)",
    kind: Kind::Bandwidth,
    experiments: &[&ROW_ROW, &ROW_COL],
    decide: |cases| {
        at_each(cases, &ROW_ROW, |params| {
            let (value, detail) = ratio(cases, (&ROW_COL, params), (&ROW_ROW, params))?;
            Ok(at_most(value, 0.25, detail))
        })
    },
};

/// The bank claims, in checklist order.
pub(super) const CLAIMS: &[Claim] = &[
    COLUMN_CONFLICT,
    Claim {
        id: "bank-padding",
        family: Family::Bank,
        claim: "one word of padding per tile row removes the column conflict",
        rule: "row_col_pad runs at 0.8 × row_row or faster",
        kind: Kind::Bandwidth,
        experiments: &[&ROW_ROW, &ROW_COL_PAD],
        decide: |cases| {
            at_each(cases, &ROW_ROW, |params| {
                let (value, detail) = ratio(cases, (&ROW_COL_PAD, params), (&ROW_ROW, params))?;
                Ok(at_least(value, 0.8, detail))
            })
        },
    },
    Claim {
        id: "bank-override",
        family: Family::Bank,
        claim: "a tile sized by an override constant with computed indices behaves as the static \
                tile",
        rule: "row_col_override runs at 0.9–1.1 of row_col, and row_col_override_pad at 0.9–1.1 \
               of row_col_pad",
        kind: Kind::Bandwidth,
        experiments: &[
            &ROW_COL,
            &ROW_COL_PAD,
            &ROW_COL_OVERRIDE,
            &ROW_COL_OVERRIDE_PAD,
        ],
        decide: |cases| {
            at_each(cases, &ROW_COL, |params| {
                all([
                    (&ROW_COL_OVERRIDE, &ROW_COL),
                    (&ROW_COL_OVERRIDE_PAD, &ROW_COL_PAD),
                ]
                .map(|(overridden, fixed)| {
                    let (value, detail) = ratio(cases, (overridden, params), (fixed, params))?;
                    Ok(between(value, 0.9, 1.1, detail))
                })
                .into())
            })
        },
    },
    Claim {
        id: "bank-rectangular",
        family: Family::Bank,
        claim: "on a rectangular 32×16 tile the column read conflicts too, and padding of 2 \
                words removes it",
        rule: "rect_row_col runs at 0.5 × rect_row_row or slower, and rect_row_col_pad at \
               0.8 × rect_row_row or faster",
        kind: Kind::Bandwidth,
        experiments: &[&RECT_ROW_ROW, &RECT_ROW_COL, &RECT_ROW_COL_PAD],
        decide: |cases| {
            at_each(cases, &RECT_ROW_ROW, |params| {
                let conflict = ratio(cases, (&RECT_ROW_COL, params), (&RECT_ROW_ROW, params))
                    .map(|(value, detail)| at_most(value, 0.5, detail));
                let padded = ratio(cases, (&RECT_ROW_COL_PAD, params), (&RECT_ROW_ROW, params))
                    .map(|(value, detail)| at_least(value, 0.8, detail));
                all(vec![conflict, padded])
            })
        },
    },
    Claim {
        id: "bank-stride-gcd",
        family: Family::Bank,
        claim: "lane l reading word l·s gives gcd(s, 32)-way conflicts",
        rule: "every odd stride (gcd 1) runs at 0.9 × stride 1 or faster, and stride 32 (32 ways) \
               at 1/8 of stride 1 or slower",
        kind: Kind::Bandwidth,
        experiments: &[&STRIDE],
        decide: |cases| {
            let stride = |s: u32| {
                let params = stride_params(cases, s)?;
                let gbps = cases.gbps(&STRIDE, &params)?;
                Ok::<_, String>((params, gbps))
            };
            let (one_params, one) = stride(1)?;
            let (_, thirty_two) = stride(32)?;
            let odd: Vec<(u32, f64)> = (3..32)
                .step_by(2)
                .filter_map(|s| stride(s).ok().map(|(_, gbps)| (s, gbps)))
                .collect();
            let (slowest_odd, slowest_gbps) = odd
                .iter()
                .copied()
                .min_by(|a, b| a.1.total_cmp(&b.1))
                .ok_or_else(|| format!("no odd {} above 1", STRIDE.name()))?;
            let odd_ratio = as_shown(slowest_gbps / one);
            let ratio_32 = as_shown(thirty_two / one);
            let detail = format!(
                "slowest odd stride {slowest_odd} / stride 1 = {}; stride 32 / stride 1 = {} \
                 ({one:.1} GB/s at {one_params})",
                ratio_text(odd_ratio),
                ratio_text(ratio_32)
            );
            Ok(if odd_ratio >= 0.9 && ratio_32 <= 1.0 / 8.0 {
                Verdict::Reproduced(detail.into())
            } else {
                Verdict::NotReproduced(detail.into())
            })
        },
    },
    Claim {
        id: "bank-broadcast",
        family: Family::Bank,
        claim: "the same word read by all lanes is a broadcast, not a conflict",
        rule: "stride 0 (every lane the same word) runs at 0.9 × stride 1 or faster",
        kind: Kind::Bandwidth,
        experiments: &[&STRIDE],
        decide: |cases| {
            let (zero, one) = (stride_params(cases, 0)?, stride_params(cases, 1)?);
            let (value, detail) = ratio(cases, (&STRIDE, &zero), (&STRIDE, &one))?;
            Ok(at_least(value, 0.9, detail))
        },
    },
];

/// The params of the `bank/stride` case at stride `s` (whatever its other params).
fn stride_params(cases: &Cases<'_>, s: u32) -> Result<Params, String> {
    cases
        .params(&STRIDE)
        .into_iter()
        .find(|params| params.number(Key::Stride) == Some(u64::from(s)))
        .ok_or_else(|| format!("no {} {}", STRIDE.name(), params!(Stride => s)))
}

#[cfg(test)]
mod tests {
    use super::CLAIMS;
    use crate::params;
    use crate::report::claims::testing::{self, Threshold, row};
    use crate::suite::Params;
    use crate::suite::families::bank::{
        RECT_ROW_COL, RECT_ROW_COL_PAD, RECT_ROW_ROW, ROW_COL, ROW_COL_OVERRIDE,
        ROW_COL_OVERRIDE_PAD, ROW_COL_PAD, ROW_ROW, STRIDE,
    };

    fn r() -> Params {
        params!(Repeats => 1024u32)
    }

    fn gcd(a: u32, b: u32) -> u32 {
        if b == 0 { a } else { gcd(b, a % b) }
    }

    static THRESHOLDS: &[Threshold] = &[
        Threshold {
            id: "bank-column-conflict",
            rows: |x| vec![row(&ROW_ROW, r(), 100.0), row(&ROW_COL, r(), 100.0 * x)],
            sides: &[(0.24, true), (0.26, false)],
        },
        Threshold {
            id: "bank-padding",
            rows: |x| vec![row(&ROW_ROW, r(), 100.0), row(&ROW_COL_PAD, r(), 100.0 * x)],
            sides: &[(0.79, false), (0.81, true)],
        },
        Threshold {
            id: "bank-override",
            rows: |x| {
                vec![
                    row(&ROW_COL, r(), 100.0),
                    row(&ROW_COL_OVERRIDE, r(), 100.0 * x),
                    row(&ROW_COL_PAD, r(), 50.0),
                    row(&ROW_COL_OVERRIDE_PAD, r(), 50.0),
                ]
            },
            sides: &[(0.89, false), (0.91, true), (1.09, true), (1.11, false)],
        },
        Threshold {
            id: "bank-rectangular",
            rows: |x| {
                vec![
                    row(&RECT_ROW_ROW, r(), 100.0),
                    row(&RECT_ROW_COL, r(), 100.0 * x),
                    row(&RECT_ROW_COL_PAD, r(), 90.0),
                ]
            },
            sides: &[(0.49, true), (0.51, false)],
        },
        Threshold {
            id: "bank-rectangular",
            rows: |x| {
                vec![
                    row(&RECT_ROW_ROW, r(), 100.0),
                    row(&RECT_ROW_COL, r(), 10.0),
                    row(&RECT_ROW_COL_PAD, r(), 100.0 * x),
                ]
            },
            sides: &[(0.79, false), (0.81, true)],
        },
        Threshold {
            id: "bank-stride-gcd",
            rows: |x| {
                (1..=32)
                    .map(|s| {
                        let gbps = if s % 2 == 1 && s > 1 {
                            100.0 * x
                        } else {
                            100.0 / f64::from(gcd(s, 32))
                        };
                        row(&STRIDE, params!(Stride => s, Repeats => 1024u32), gbps)
                    })
                    .collect()
            },
            sides: &[(0.89, false), (0.91, true)],
        },
        Threshold {
            id: "bank-stride-gcd",
            rows: |x| {
                (1..=32)
                    .map(|s| {
                        let gbps = match s {
                            32 => 100.0 * x,
                            s if s % 2 == 1 => 100.0,
                            s => 100.0 / f64::from(gcd(s, 32)),
                        };
                        row(&STRIDE, params!(Stride => s, Repeats => 1024u32), gbps)
                    })
                    .collect()
            },
            sides: &[(0.124, true), (0.126, false)],
        },
        Threshold {
            id: "bank-broadcast",
            rows: |x| {
                vec![
                    row(&STRIDE, params!(Stride => 1u32, Repeats => 1024u32), 100.0),
                    row(
                        &STRIDE,
                        params!(Stride => 0u32, Repeats => 1024u32),
                        100.0 * x,
                    ),
                ]
            },
            sides: &[(0.89, false), (0.91, true)],
        },
    ];

    crate::threshold_tests!(CLAIMS, THRESHOLDS);
}
