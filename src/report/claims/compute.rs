//! The compute claims: the arithmetic-intensity sweep's two regimes, and f16's rate.

use super::{Claim, Finding, Kind, all, at_least, at_most, ratio};
use crate::params;
use crate::suite::Family;
use crate::suite::families::compute::{F16, F32, FMAS};

/// The sweep's ends: one multiply-add per element and the most.
const FEWEST: u32 = FMAS[0];
const MOST: u32 = FMAS[FMAS.len() - 1];
/// Four multiply-adds: still under the ridge of every GPU the texts name.
const FEW: u32 = FMAS[1];

/// The family's finding in the report's summary: the most arithmetic against the least.
pub(super) const FINDING: Finding = Finding {
    claim: &ROOFLINE,
    what: "f32 at 1024 multiply-adds ÷ at 1, in GB/s",
};

/// compute-roofline, the claim the family's finding shows.
const ROOFLINE: Claim = Claim {
    id: "compute-roofline",
    family: Family::Compute,
    claim: "below the ridge point a kernel runs at the memory's speed whatever its \
            arithmetic; past it, time grows with the arithmetic",
    rule: "f32 rounds=4 runs at 0.8 × rounds=1 or faster, and rounds=1024 at 0.5 × \
           rounds=1 or slower",
    kind: Kind::Bandwidth,
    experiments: &[&F32],
    decide: |cases| {
        let fewest = params!(Rounds => FEWEST);
        let flat = ratio(cases, (&F32, &params!(Rounds => FEW)), (&F32, &fewest))
            .map(|(value, detail)| at_least(value, 0.8, detail));
        let rising = ratio(cases, (&F32, &params!(Rounds => MOST)), (&F32, &fewest))
            .map(|(value, detail)| at_most(value, 0.5, detail));
        all(vec![flat, rising])
    },
};

/// The compute claims, in checklist order.
pub(super) const CLAIMS: &[Claim] = &[
    ROOFLINE,
    Claim {
        id: "compute-f16-rate",
        family: Family::Compute,
        claim: "f16 arithmetic runs at about twice f32's rate: two halves per instruction",
        rule: "f16 rounds=1024 runs at 0.75 × f32 rounds=1024 or faster in GB/s (f16 moves \
               half the bytes per element: 1.5 × the FLOP/s)",
        kind: Kind::Bandwidth,
        experiments: &[&F16, &F32],
        decide: |cases| {
            let most = params!(Rounds => MOST);
            let (value, detail) = ratio(cases, (&F16, &most), (&F32, &most))?;
            Ok(at_least(value, 0.75, detail))
        },
    },
];

#[cfg(test)]
mod tests {
    use super::{CLAIMS, FEW, FEWEST, MOST};
    use crate::params;
    use crate::report::claims::testing::{self, Threshold, row};
    use crate::suite::families::compute::{F16, F32};

    static THRESHOLDS: &[Threshold] = &[
        Threshold {
            id: "compute-roofline",
            rows: |x| {
                vec![
                    row(&F32, params!(Rounds => FEWEST), 1000.0),
                    row(&F32, params!(Rounds => FEW), 1000.0 * x),
                    row(&F32, params!(Rounds => MOST), 100.0),
                ]
            },
            sides: &[(0.79, false), (0.81, true)],
        },
        Threshold {
            id: "compute-f16-rate",
            rows: |x| {
                vec![
                    row(&F32, params!(Rounds => MOST), 100.0),
                    row(&F16, params!(Rounds => MOST), 100.0 * x),
                ]
            },
            sides: &[(0.74, false), (0.76, true)],
        },
    ];

    crate::threshold_tests!(CLAIMS, THRESHOLDS);
}
