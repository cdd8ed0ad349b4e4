//! The latency claim: a load the L2 cannot serve waits for DRAM, far longer.

use super::{Claim, Finding, Kind, at_least, ratio_text};
use crate::params;
use crate::results::levels::{LATENCY_MIN_POINTS, Sense};
use crate::suite::Family;
use crate::suite::families::latency::{CHASE, ns_per_load};

/// A footprint every recent GPU's L2 holds and no L1 does (an H100's L1 is 256 KiB at
/// most), and one four times the largest L2 (60 MiB, H200).
const IN_L2_BYTES: u64 = 1 << 20;
const PAST_L2_BYTES: u64 = 256 << 20;

/// The family's finding in the report's summary: time per load, 256 MiB ÷ 1 MiB chase.
pub(super) const FINDING: Finding = Finding {
    claim: &DRAM,
    what: "time per load, 256 MiB ÷ 1 MiB chase",
};

/// latency-dram, the claim the family's finding shows.
const DRAM: Claim = Claim {
    id: "latency-dram",
    family: Family::Latency,
    claim: "a load that misses the L2 waits for DRAM: the chase's time per load rises past the \
            L2's size, to about twice the L2's latency or more",
    rule: "a chase over 256 MiB takes 1.5 × as long per load as one over 1 MiB, or longer",
    kind: Kind::Bandwidth,
    experiments: &[&CHASE],
    decide: |cases| {
        let in_l2 = cases.gbps(&CHASE, &params!(Footprint => IN_L2_BYTES))?;
        let past_l2 = cases.gbps(&CHASE, &params!(Footprint => PAST_L2_BYTES))?;
        if past_l2 <= 0.0 {
            return Err(format!(
                "{} footprint={PAST_L2_BYTES} has no time",
                CHASE.name()
            ));
        }
        // The ratio of times per load is the inverse ratio of bandwidths.
        let value = in_l2 / past_l2;
        let detail = format!(
            "256 MiB / 1 MiB = {} ({:.1} / {:.1} ns per load)",
            ratio_text(value),
            ns_per_load(past_l2),
            ns_per_load(in_l2)
        );
        Ok(at_least(value, 1.5, detail))
    },
};

/// Plateaus a chase from 4 KiB to far past the L2 must show: L1, L2, DRAM.
const LEVELS: usize = 3;

/// latency-levels: the chase's staircase, level by level, as the summary names it.
const LEVELS_CLAIM: Claim = Claim {
    id: "latency-levels",
    family: Family::Latency,
    claim: "each level answers a dependent load in its own time: the chase's time per load is \
            a staircase of plateaus, L1, L2 (near and far where the L2 is split) and DRAM, each \
            above the one before",
    rule: "the chase shows 3 plateaus or more (a plateau ends where the time per load rises \
           more than 15 % above its median; one of fewer than 2 sizes is a transition), named \
           in order; the ratio is the last plateau's time over the first's",
    kind: Kind::Bandwidth,
    experiments: &[&CHASE],
    decide: |cases| super::staircase(cases, &[&CHASE], Sense::Latency, LATENCY_MIN_POINTS, LEVELS),
};

/// The latency claims, in checklist order.
pub(super) const CLAIMS: &[Claim] = &[DRAM, LEVELS_CLAIM];

#[cfg(test)]
mod tests {
    use super::{CLAIMS, IN_L2_BYTES, PAST_L2_BYTES};
    use crate::params;
    use crate::report::claims::testing::{self, Threshold, row};
    use crate::results::Row;
    use crate::suite::families::latency::{CHASE, LOAD_BYTES};

    /// The chase at ×2 steps from 4 KiB to 1 GiB: one time per load to 64 KiB, x times
    /// it to 32 MiB, x² times it past: three plateaus once each rise exceeds 15 %.
    fn staircase(x: f64) -> Vec<Row> {
        (12..=30)
            .map(|log2| {
                let footprint = 1u64 << log2;
                let rises = [16, 25].iter().filter(|&&end| log2 > end).count();
                let gbps = 0.1 / x.powi(i32::try_from(rises).unwrap());
                Row {
                    bytes: LOAD_BYTES,
                    elements: 1,
                    ..row(&CHASE, params!(Footprint => footprint), gbps)
                }
            })
            .collect()
    }

    static THRESHOLDS: &[Threshold] = &[
        Threshold {
            id: "latency-dram",
            rows: |x| {
                vec![
                    row(&CHASE, params!(Footprint => 4096u64), 0.1),
                    row(&CHASE, params!(Footprint => IN_L2_BYTES), 0.02 * x),
                    row(&CHASE, params!(Footprint => PAST_L2_BYTES), 0.02),
                ]
            },
            sides: &[(1.49, false), (1.51, true)],
        },
        Threshold {
            id: "latency-levels",
            rows: staircase,
            sides: &[(1.14, false), (1.16, true)],
        },
    ];

    crate::threshold_tests!(CLAIMS, THRESHOLDS);
}
