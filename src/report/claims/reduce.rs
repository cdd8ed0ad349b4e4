//! The reduction claims: divergence, interleaving, unrolling, workgroup memory and
//! subgroup operations.

use super::{
    Cases, Claim, Kind, Outcome, at_each, at_least, best_ratio, between, ratio, same_param,
};

/// The reduce claims, in checklist order.
pub(super) const CLAIMS: &[Claim] = &[
    Claim {
        id: "reduce-less-divergence",
        family: "reduce",
        claim: "less divergence is faster: neighbored pairs with compact thread indices beat the \
                modulo test",
        rule: "neighbored_less runs at 1.05 × neighbored or faster",
        kind: Kind::Bandwidth,
        decide: |cases| reduce_faster(cases, "neighbored_less", "neighbored", 1.05),
    },
    Claim {
        id: "reduce-interleaved",
        family: "reduce",
        claim: "interleaved pairs beat neighbored pairs",
        rule: "interleaved runs at 1.05 × neighbored or faster",
        kind: Kind::Bandwidth,
        decide: |cases| reduce_faster(cases, "interleaved", "neighbored", 1.05),
    },
    Claim {
        id: "reduce-unroll",
        family: "reduce",
        claim: "unrolling (each workgroup first adds several data blocks) raises bandwidth",
        rule: "the fastest of unroll2, unroll4 and unroll8 runs at 1.05 × interleaved or faster",
        kind: Kind::Bandwidth,
        decide: |cases| {
            at_each(cases, "reduce/interleaved", |param| {
                let (value, detail) = best_ratio(
                    cases,
                    &["reduce/unroll2", "reduce/unroll4", "reduce/unroll8"],
                    &["reduce/interleaved"],
                    param,
                )?;
                Ok(at_least(value, 1.05, detail))
            })
        },
    },
    Claim {
        id: "reduce-workgroup-memory",
        family: "reduce",
        claim: "a tree in workgroup memory beats the same tree in place in global memory",
        rule: "smem runs at 1.05 × interleaved or faster",
        kind: Kind::Bandwidth,
        decide: |cases| reduce_faster(cases, "smem", "interleaved", 1.05),
    },
    Claim {
        id: "reduce-override-size",
        family: "reduce",
        claim: "a workgroup array sized by an override constant (dynamic shared memory) is as \
                fast as a static one",
        rule: "smem_override runs at 0.95–1.05 of smem",
        kind: Kind::Bandwidth,
        decide: |cases| {
            at_each(cases, "reduce/smem", |param| {
                let (value, detail) = ratio(
                    cases,
                    ("reduce/smem_override", param),
                    ("reduce/smem", param),
                )?;
                Ok(between(value, 0.95, 1.05, detail))
            })
        },
    },
    Claim {
        id: "reduce-subgroup-fastest",
        family: "reduce",
        claim: "the subgroup versions are the fastest reductions",
        rule: "the faster of subgroup_shuffle and subgroup_add runs at 0.98 of every other \
               variant or faster",
        kind: Kind::Bandwidth,
        decide: |cases| {
            at_each(cases, "reduce/subgroup_add", |param| {
                let others: Vec<String> = cases
                    .family("reduce")
                    .filter(|row| {
                        !row.variant.starts_with("subgroup_") && same_param(&row.param, param)
                    })
                    .map(|row| format!("reduce/{}", row.variant))
                    .collect();
                let others: Vec<&str> = others.iter().map(String::as_str).collect();
                let (value, detail) = best_ratio(
                    cases,
                    &["reduce/subgroup_shuffle", "reduce/subgroup_add"],
                    &others,
                    param,
                )?;
                Ok(at_least(value, 0.98, detail))
            })
        },
    },
];

/// `better` runs at `factor` × `worse` or faster at every reduction size.
fn reduce_faster(cases: &Cases<'_>, better: &str, worse: &str, factor: f64) -> Outcome {
    let (better, worse) = (format!("reduce/{better}"), format!("reduce/{worse}"));
    at_each(cases, &worse, |param| {
        let (value, detail) = ratio(cases, (&better, param), (&worse, param))?;
        Ok(at_least(value, factor, detail))
    })
}

#[cfg(test)]
mod tests {
    use super::CLAIMS;
    use crate::report::claims::testing::{self, Threshold, row};

    const N: &str = "n=16777216";

    static THRESHOLDS: &[Threshold] = &[
        Threshold {
            id: "reduce-less-divergence",
            rows: |x| {
                vec![
                    row("reduce/neighbored", N, 100.0),
                    row("reduce/neighbored_less", N, 100.0 * x),
                ]
            },
            sides: &[(1.04, false), (1.06, true)],
        },
        Threshold {
            id: "reduce-interleaved",
            rows: |x| {
                vec![
                    row("reduce/neighbored", N, 100.0),
                    row("reduce/interleaved", N, 100.0 * x),
                ]
            },
            sides: &[(1.04, false), (1.06, true)],
        },
        Threshold {
            id: "reduce-unroll",
            rows: |x| {
                vec![
                    row("reduce/interleaved", N, 100.0),
                    row("reduce/unroll2", N, 90.0),
                    row("reduce/unroll4", N, 100.0 * x),
                ]
            },
            sides: &[(1.04, false), (1.06, true)],
        },
        Threshold {
            id: "reduce-workgroup-memory",
            rows: |x| {
                vec![
                    row("reduce/interleaved", N, 100.0),
                    row("reduce/smem", N, 100.0 * x),
                ]
            },
            sides: &[(1.04, false), (1.06, true)],
        },
        Threshold {
            id: "reduce-override-size",
            rows: |x| {
                vec![
                    row("reduce/smem", N, 100.0),
                    row("reduce/smem_override", N, 100.0 * x),
                ]
            },
            sides: &[(0.94, false), (0.96, true), (1.04, true), (1.06, false)],
        },
        Threshold {
            id: "reduce-subgroup-fastest",
            rows: |x| {
                vec![
                    row("reduce/unroll8", N, 100.0),
                    row("reduce/subgroup_add", N, 100.0 * x),
                ]
            },
            sides: &[(0.97, false), (0.99, true)],
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
