//! The hierarchy claim: each level serves the same reads at its own bandwidth, a
//! plateau that ends near its capacity.

use super::{Claim, Evidence, Finding, Kind, Source, Verdict};
use crate::results::levels::{self, BANDWIDTH_MIN_POINTS, Sense};
use crate::suite::Family;
use crate::suite::families::hierarchy::{SHARED, WINDOW};

/// Plateaus a sweep from 4 KiB to far past the L2 must show: L1, L2, DRAM.
const LEVELS: usize = 3;

/// The family's finding in the report's summary: the first plateau's bandwidth over the
/// last's.
pub(super) const FINDING: Finding = Finding {
    claim: &LEVELS_CLAIM,
    what: "L1 ÷ DRAM bandwidth (plateaus of the window and shared sweeps)",
};

/// hierarchy-levels, the claim the family's finding shows.
const LEVELS_CLAIM: Claim = Claim {
    id: "hierarchy-levels",
    family: Family::Hierarchy,
    claim: "the same wide reads run at the L1's bandwidth while the data fits an SM's L1, at the \
            L2's while it fits the L2, then at DRAM's: a staircase of plateaus, each well below \
            the one before",
    rule: "the window and shared sweeps together show 3 plateaus or more (a plateau ends where \
           bandwidth drops more than 25 % below its median; one of fewer than 3 sizes is a \
           transition), named L1, L2 and DRAM in order",
    kind: Kind::Bandwidth,
    experiments: &[&WINDOW, &SHARED],
    decide: |cases| {
        let points: Vec<(u64, f64)> = cases
            .family(Family::Hierarchy)
            .filter(|(id, _)| id.variant == WINDOW.variant || id.variant == SHARED.variant)
            .filter_map(|(id, row)| {
                let bytes = id.params.number(crate::suite::Key::Footprint)?;
                let gbps = match cases.source {
                    Source::Measured => row.gbps_median,
                    Source::Predicted => row.sim_gbps,
                }?;
                Some((bytes, gbps))
            })
            .collect();
        if points.is_empty() {
            return Err(format!(
                "no {} or {} with a bandwidth",
                WINDOW.name(),
                SHARED.name()
            ));
        }
        let found = levels::levels(&points, Sense::Bandwidth, BANDWIDTH_MIN_POINTS);
        let (Some(first), Some(last)) = (found.first(), found.last()) else {
            return Err("no plateau in the window and shared sweeps".to_owned());
        };
        let ratio = super::as_shown(first.value / last.value);
        let evidence = Evidence {
            detail: format!(
                "{} plateau{}: {}",
                found.len(),
                crate::plural(found.len()),
                levels::levels_text(&found, Sense::Bandwidth)
            ),
            ratio: Some(ratio),
        };
        Ok(Verdict::decided(found.len() >= LEVELS, evidence))
    },
};

/// The hierarchy claims, in checklist order.
pub(super) const CLAIMS: &[Claim] = &[LEVELS_CLAIM];

#[cfg(test)]
mod tests {
    use super::CLAIMS;
    use crate::params;
    use crate::report::claims::testing::{self, Threshold, row};
    use crate::results::Row;
    use crate::suite::families::hierarchy::{SHARED, WINDOW};

    /// A window sweep at 20 TB/s to 192 KiB then at 20 / x, and a shared sweep at 20 / x
    /// to 32 MiB then at 20 / x²: three plateaus once each drop exceeds 25 % (x > 4/3).
    fn staircase(x: f64) -> Vec<Row> {
        let mut rows = Vec::new();
        let mut bytes = 4096.0f64;
        while bytes <= f64::from(1u32 << 20) {
            let gbps = if bytes <= f64::from(192u32 << 10) {
                20_000.0
            } else {
                20_000.0 / x
            };
            rows.push(row(&WINDOW, params!(Footprint => bytes as u64), gbps));
            bytes *= 1.19;
        }
        let mut bytes = f64::from(1u32 << 20);
        while bytes <= f64::from(1u32 << 30) {
            let gbps = if bytes <= f64::from(32u32 << 20) {
                20_000.0 / x
            } else {
                20_000.0 / (x * x)
            };
            rows.push(row(&SHARED, params!(Footprint => bytes as u64), gbps));
            bytes *= 1.15;
        }
        rows
    }

    static THRESHOLDS: &[Threshold] = &[Threshold {
        id: "hierarchy-levels",
        rows: staircase,
        sides: &[(1.32, false), (1.34, true)],
    }];

    crate::threshold_tests!(CLAIMS, THRESHOLDS);
}
