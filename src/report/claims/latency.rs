//! The latency claim: a load the L2 cannot serve waits for DRAM, far longer.

use super::{Claim, Finding, Kind, at_least, ratio_text};
use crate::params;
use crate::suite::Family;
use crate::suite::families::latency::{CHASE, LOAD_BYTES};

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
        // Every step loads LOAD_BYTES: the time per load is LOAD_BYTES / (GB/s) in ns,
        // and the ratio of times is the inverse ratio of bandwidths.
        let ns = |gbps: f64| LOAD_BYTES as f64 / gbps;
        let value = in_l2 / past_l2;
        let detail = format!(
            "256 MiB / 1 MiB = {} ({:.1} / {:.1} ns per load)",
            ratio_text(value),
            ns(past_l2),
            ns(in_l2)
        );
        Ok(at_least(value, 1.5, detail))
    },
};

/// The latency claims, in checklist order.
pub(super) const CLAIMS: &[Claim] = &[DRAM];

#[cfg(test)]
mod tests {
    use super::{CLAIMS, IN_L2_BYTES, PAST_L2_BYTES};
    use crate::params;
    use crate::report::claims::testing::{self, Threshold, row};
    use crate::suite::families::latency::CHASE;

    static THRESHOLDS: &[Threshold] = &[Threshold {
        id: "latency-dram",
        rows: |x| {
            vec![
                row(&CHASE, params!(Footprint => 4096u64), 0.1),
                row(&CHASE, params!(Footprint => IN_L2_BYTES), 0.02 * x),
                row(&CHASE, params!(Footprint => PAST_L2_BYTES), 0.02),
            ]
        },
        sides: &[(1.49, false), (1.51, true)],
    }];

    crate::threshold_tests!(CLAIMS, THRESHOLDS);
}
