//! The launch claims: what issuing a small kernel costs, and what cuts or adds to it.
//! A tiny kernel's GB/s is its bytes over the time per issue, so a ratio of GB/s is
//! the inverse ratio of launch costs.

use super::{Claim, Finding, Kind, at_each, at_least, ratio};
use crate::suite::Family;
use crate::suite::families::launch::{APART, GRAPH, INDIRECT, SHARED, SUBMIT_BATCH, SUBMIT_WAIT};

/// The family's finding in the report's summary: a wait per submission against one
/// wait for all.
pub(super) const FINDING: Finding = Finding {
    claim: &BATCHED,
    what: "submissions waited for once ÷ each waited for",
};

/// launch-batched-submission, the claim the family's finding shows.
const BATCHED: Claim = Claim {
    id: "launch-batched-submission",
    family: Family::Launch,
    claim: "waiting for each submission costs far more than submitting all and waiting once",
    rule: "submit_batch runs at 1.5 × submit_wait or faster",
    kind: Kind::Bandwidth,
    experiments: &[&SUBMIT_BATCH, &SUBMIT_WAIT],
    decide: |cases| {
        at_each(cases, &SUBMIT_WAIT, |params| {
            let (value, detail) = ratio(cases, (&SUBMIT_BATCH, params), (&SUBMIT_WAIT, params))?;
            Ok(at_least(value, 1.5, detail))
        })
    },
};

/// The launch claims, in checklist order.
pub(super) const CLAIMS: &[Claim] = &[
    BATCHED,
    Claim {
        id: "launch-shared-buffer",
        family: Family::Launch,
        claim: "dispatches that write one read_write buffer cost more than dispatches that \
                write their own: wgpu puts a barrier between them (wgpu#2659); a CUDA stream \
                has none",
        rule: "apart runs at 1.2 × shared or faster",
        kind: Kind::Bandwidth,
        experiments: &[&APART, &SHARED],
        decide: |cases| {
            at_each(cases, &SHARED, |params| {
                let (value, detail) = ratio(cases, (&APART, params), (&SHARED, params))?;
                Ok(at_least(value, 1.2, detail))
            })
        },
    },
    Claim {
        id: "launch-indirect",
        family: Family::Launch,
        claim: "an indirect dispatch costs more than a direct one: wgpu validates its \
                arguments with a dispatch of its own (wgpu#8332)",
        rule: "apart runs at 1.05 × indirect or faster",
        kind: Kind::Bandwidth,
        experiments: &[&APART, &INDIRECT],
        decide: |cases| {
            at_each(cases, &INDIRECT, |params| {
                let (value, detail) = ratio(cases, (&APART, params), (&INDIRECT, params))?;
                Ok(at_least(value, 1.05, detail))
            })
        },
    },
    Claim {
        id: "launch-graph",
        family: Family::Launch,
        claim: "a CUDA graph cuts the cost of a launch against launches on a stream",
        rule: "graph runs at 1.1 × shared (CUDA's launches on one stream) or faster",
        kind: Kind::Bandwidth,
        experiments: &[&GRAPH, &SHARED],
        decide: |cases| {
            at_each(cases, &GRAPH, |params| {
                let (value, detail) = ratio(cases, (&GRAPH, params), (&SHARED, params))?;
                Ok(at_least(value, 1.1, detail))
            })
        },
    },
];

#[cfg(test)]
mod tests {
    use super::CLAIMS;
    use crate::params;
    use crate::report::claims::testing::{self, Threshold, row};
    use crate::suite::families::launch::{
        APART, GRAPH, INDIRECT, SHARED, SUBMIT_BATCH, SUBMIT_WAIT,
    };

    static THRESHOLDS: &[Threshold] = &[
        Threshold {
            id: "launch-batched-submission",
            rows: |x| {
                vec![
                    row(&SUBMIT_WAIT, params!(Size => 256u32), 1.0),
                    row(&SUBMIT_BATCH, params!(Size => 256u32), x),
                ]
            },
            sides: &[(1.49, false), (1.51, true)],
        },
        Threshold {
            id: "launch-shared-buffer",
            rows: |x| {
                vec![
                    row(&SHARED, params!(Size => 256u32), 1.0),
                    row(&APART, params!(Size => 256u32), x),
                ]
            },
            sides: &[(1.19, false), (1.21, true)],
        },
        Threshold {
            id: "launch-indirect",
            rows: |x| {
                vec![
                    row(&INDIRECT, params!(Size => 256u32), 1.0),
                    row(&APART, params!(Size => 256u32), x),
                ]
            },
            sides: &[(1.04, false), (1.06, true)],
        },
        Threshold {
            id: "launch-graph",
            rows: |x| {
                vec![
                    row(&SHARED, params!(Size => 256u32), 1.0),
                    row(&GRAPH, params!(Size => 256u32), x),
                ]
            },
            sides: &[(1.09, false), (1.11, true)],
        },
    ];

    crate::threshold_tests!(CLAIMS, THRESHOLDS);
}
