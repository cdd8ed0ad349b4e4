//! The reduction claims: divergence, interleaving, unrolling, workgroup memory and
//! subgroup operations.

use super::{Cases, Claim, Finding, Kind, Outcome, at_each, at_least, best_ratio, between, ratio};
use crate::suite::families::reduce::{
    INTERLEAVED, NEIGHBORED, NEIGHBORED_LESS, SMEM, SMEM_OVERRIDE, SMEM_UNROLL4, SUBGROUP_ADD,
    SUBGROUP_SHUFFLE, UNROLL2, UNROLL4, UNROLL8, UNROLL8_LASTWARP,
};
use crate::suite::{Experiment, Family};

const UNROLLED: &[&Experiment] = &[&UNROLL2, &UNROLL4, &UNROLL8];
const SUBGROUPS: &[&Experiment] = &[&SUBGROUP_SHUFFLE, &SUBGROUP_ADD];
/// Every reduction but the subgroup ones.
const OTHERS: &[&Experiment] = &[
    &NEIGHBORED,
    &NEIGHBORED_LESS,
    &INTERLEAVED,
    &UNROLL2,
    &UNROLL4,
    &UNROLL8,
    &UNROLL8_LASTWARP,
    &SMEM,
    &SMEM_OVERRIDE,
    &SMEM_UNROLL4,
];
const EVERY: &[&Experiment] = &[
    &NEIGHBORED,
    &NEIGHBORED_LESS,
    &INTERLEAVED,
    &UNROLL2,
    &UNROLL4,
    &UNROLL8,
    &UNROLL8_LASTWARP,
    &SMEM,
    &SMEM_OVERRIDE,
    &SMEM_UNROLL4,
    &SUBGROUP_SHUFFLE,
    &SUBGROUP_ADD,
];

/// The family's finding in the report's summary: fastest subgroup reduction ÷ fastest other.
pub(super) const FINDING: Finding = Finding {
    claim: &SUBGROUP_FASTEST,
    what: "fastest subgroup reduction ÷ fastest other",
};

/// reduce-subgroup-fastest, the claim the family's finding shows.
const SUBGROUP_FASTEST: Claim = Claim {
    id: "reduce-subgroup-fastest",
    family: Family::Reduce,
    claim: "the subgroup versions are the fastest reductions",
    rule: "the faster of subgroup_shuffle and subgroup_add runs at 0.98 of every other \
               variant or faster",
    kind: Kind::Bandwidth,
    experiments: EVERY,
    decide: |cases| {
        at_each(cases, &SUBGROUP_ADD, |params| {
            let (value, detail) = best_ratio(cases, SUBGROUPS, OTHERS, params)?;
            Ok(at_least(value, 0.98, detail))
        })
    },
};

/// The reduce claims, in checklist order.
pub(super) const CLAIMS: &[Claim] = &[
    Claim {
        id: "reduce-less-divergence",
        family: Family::Reduce,
        claim: "less divergence is faster: neighbored pairs with compact thread indices beat the \
                modulo test",
        rule: "neighbored_less runs at 1.05 × neighbored or faster",
        kind: Kind::Bandwidth,
        experiments: &[&NEIGHBORED_LESS, &NEIGHBORED],
        decide: |cases| reduce_faster(cases, &NEIGHBORED_LESS, &NEIGHBORED, 1.05),
    },
    Claim {
        id: "reduce-interleaved",
        family: Family::Reduce,
        claim: "interleaved pairs beat neighbored pairs",
        rule: "interleaved runs at 1.05 × neighbored or faster",
        kind: Kind::Bandwidth,
        experiments: &[&INTERLEAVED, &NEIGHBORED],
        decide: |cases| reduce_faster(cases, &INTERLEAVED, &NEIGHBORED, 1.05),
    },
    Claim {
        id: "reduce-unroll",
        family: Family::Reduce,
        claim: "unrolling (each workgroup first adds several data blocks) raises bandwidth",
        rule: "the fastest of unroll2, unroll4 and unroll8 runs at 1.05 × interleaved or faster",
        kind: Kind::Bandwidth,
        experiments: &[&INTERLEAVED, &UNROLL2, &UNROLL4, &UNROLL8],
        decide: |cases| {
            at_each(cases, &INTERLEAVED, |params| {
                let (value, detail) = best_ratio(cases, UNROLLED, &[&INTERLEAVED], params)?;
                Ok(at_least(value, 1.05, detail))
            })
        },
    },
    Claim {
        id: "reduce-workgroup-memory",
        family: Family::Reduce,
        claim: "a tree in workgroup memory beats the same tree in place in global memory",
        rule: "smem runs at 1.05 × interleaved or faster",
        kind: Kind::Bandwidth,
        experiments: &[&SMEM, &INTERLEAVED],
        decide: |cases| reduce_faster(cases, &SMEM, &INTERLEAVED, 1.05),
    },
    Claim {
        id: "reduce-override-size",
        family: Family::Reduce,
        claim: "a workgroup array sized by an override constant (dynamic shared memory) is as \
                fast as a static one",
        rule: "smem_override runs at 0.95–1.05 of smem",
        kind: Kind::Bandwidth,
        experiments: &[&SMEM, &SMEM_OVERRIDE],
        decide: |cases| {
            at_each(cases, &SMEM, |params| {
                let (value, detail) = ratio(cases, (&SMEM_OVERRIDE, params), (&SMEM, params))?;
                Ok(between(value, 0.95, 1.05, detail))
            })
        },
    },
    SUBGROUP_FASTEST,
];

/// `better` runs at `factor` × `worse` or faster at every reduction size.
fn reduce_faster(
    cases: &Cases<'_>,
    better: &Experiment,
    worse: &Experiment,
    factor: f64,
) -> Outcome {
    at_each(cases, worse, |params| {
        let (value, detail) = ratio(cases, (better, params), (worse, params))?;
        Ok(at_least(value, factor, detail))
    })
}

#[cfg(test)]
mod tests {
    use super::CLAIMS;
    use crate::params;
    use crate::report::claims::testing::{self, Threshold, row};
    use crate::suite::Params;
    use crate::suite::families::reduce::{
        INTERLEAVED, NEIGHBORED, NEIGHBORED_LESS, SMEM, SMEM_OVERRIDE, SUBGROUP_ADD, UNROLL2,
        UNROLL4, UNROLL8,
    };

    fn n() -> Params {
        params!(N => 16_777_216u32)
    }

    static THRESHOLDS: &[Threshold] = &[
        Threshold {
            id: "reduce-less-divergence",
            rows: |x| {
                vec![
                    row(&NEIGHBORED, n(), 100.0),
                    row(&NEIGHBORED_LESS, n(), 100.0 * x),
                ]
            },
            sides: &[(1.04, false), (1.06, true)],
        },
        Threshold {
            id: "reduce-interleaved",
            rows: |x| {
                vec![
                    row(&NEIGHBORED, n(), 100.0),
                    row(&INTERLEAVED, n(), 100.0 * x),
                ]
            },
            sides: &[(1.04, false), (1.06, true)],
        },
        Threshold {
            id: "reduce-unroll",
            rows: |x| {
                vec![
                    row(&INTERLEAVED, n(), 100.0),
                    row(&UNROLL2, n(), 90.0),
                    row(&UNROLL4, n(), 100.0 * x),
                ]
            },
            sides: &[(1.04, false), (1.06, true)],
        },
        Threshold {
            id: "reduce-workgroup-memory",
            rows: |x| vec![row(&INTERLEAVED, n(), 100.0), row(&SMEM, n(), 100.0 * x)],
            sides: &[(1.04, false), (1.06, true)],
        },
        Threshold {
            id: "reduce-override-size",
            rows: |x| vec![row(&SMEM, n(), 100.0), row(&SMEM_OVERRIDE, n(), 100.0 * x)],
            sides: &[(0.94, false), (0.96, true), (1.04, true), (1.06, false)],
        },
        Threshold {
            id: "reduce-subgroup-fastest",
            rows: |x| {
                vec![
                    row(&UNROLL8, n(), 100.0),
                    row(&SUBGROUP_ADD, n(), 100.0 * x),
                ]
            },
            sides: &[(0.97, false), (0.99, true)],
        },
    ];

    crate::threshold_tests!(CLAIMS, THRESHOLDS);
}
