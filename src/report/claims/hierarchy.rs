//! The hierarchy claim: each level serves the same reads at its own bandwidth, a
//! plateau that ends near its capacity.

use super::{Cases, Claim, Finding, Kind, Outcome, Verdict};
use crate::results::levels::{self, BANDWIDTH_MIN_POINTS, Sense};
use crate::suite::families::hierarchy::{
    CARVEOUTS, PERSIST, SHARED, STAGED, STAGED_4, STAGED_8, STAGED_16, STAGED_ASYNC_8,
    STAGED_ASYNC_16, WINDOW, WINDOW_CARVEOUT,
};
use crate::suite::{Experiment, Family, Key};

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
        super::staircase(
            cases,
            &[&WINDOW, &SHARED],
            Sense::Bandwidth,
            BANDWIDTH_MIN_POINTS,
            LEVELS,
        )
    },
};

/// The least speed-up of the asynchronous staging that counts as helping.
const ASYNC_GAIN: f64 = 1.05;

/// The fastest case of `experiment` (over its stages), or why there is none.
fn fastest_case(cases: &Cases<'_>, experiment: &Experiment) -> Result<(f64, String), String> {
    let mut best: Option<(f64, String)> = None;
    let all = cases.params(experiment);
    if all.is_empty() {
        return Err(format!("no {}", experiment.name()));
    }
    for params in all {
        let gbps = cases.gbps(experiment, &params)?;
        if best.as_ref().is_none_or(|(b, _)| gbps > *b) {
            best = Some((gbps, params.to_string()));
        }
    }
    best.ok_or_else(|| format!("no {}", experiment.name()))
}

/// hierarchy-async-copy: `cp.async` against the synchronous staging.
const ASYNC_CLAIM: Claim = Claim {
    id: "hierarchy-async-copy",
    family: Family::Hierarchy,
    claim: "staging global memory into shared memory with an asynchronous copy (cp.async, \
            compute capability 8.0 on) is faster than staging it through registers, for 8- and \
            16-byte elements",
    rule: "for 8- and 16-byte elements, the faster of staged_async's cases (1 or 2 stages) reads \
           at least 1.05 × the faster of the synchronous staging's",
    kind: Kind::Bandwidth,
    experiments: &[&STAGED_8, &STAGED_16, &STAGED_ASYNC_8, &STAGED_ASYNC_16],
    decide: |cases| {
        let parts: Vec<Outcome> = STAGED
            .iter()
            .filter(|(sync, _)| !sync.is(&STAGED_4))
            .map(|(sync, asynchronous)| {
                let (top, top_case) = fastest_case(cases, asynchronous)?;
                let (bottom, bottom_case) = fastest_case(cases, sync)?;
                let value = super::as_shown(top / bottom);
                Ok(super::at_least(
                    value,
                    ASYNC_GAIN,
                    format!(
                        "{} {top_case} / {} {bottom_case} = {} ({top:.1} / {bottom:.1} GB/s)",
                        asynchronous.variant,
                        sync.variant,
                        super::ratio_text(value)
                    ),
                ))
            })
            .collect();
        super::all(parts)
    },
};

/// The least ratio of the L1 plateaus' ends (most L1 ÷ most shared) that counts.
const CARVEOUT_GAIN: f64 = 1.5;

/// The last footprint of the first plateau of `window_carveout` at `percent` (none if
/// the sweep shows no plateau), or why it is not measured.
fn l1_end(cases: &Cases<'_>, percent: u32) -> Result<Option<u64>, String> {
    let points: Vec<(u64, f64)> = cases
        .params(&WINDOW_CARVEOUT)
        .into_iter()
        .filter(|p| p.number(Key::Carveout) == Some(u64::from(percent)))
        .map(|p| {
            let bytes = p
                .number(Key::Footprint)
                .ok_or_else(|| format!("{} {p} has no footprint", WINDOW_CARVEOUT.name()))?;
            Ok((bytes, cases.gbps(&WINDOW_CARVEOUT, &p)?))
        })
        .collect::<Result<_, String>>()?;
    if points.is_empty() {
        return Err(format!("no {} carveout={percent}", WINDOW_CARVEOUT.name()));
    }
    let found = levels::levels(&points, Sense::Bandwidth, BANDWIDTH_MIN_POINTS);
    Ok(found.first().map(|level| level.last_bytes))
}

/// hierarchy-carveout: the most L1 against the most shared memory.
const CARVEOUT_CLAIM: Claim = Claim {
    id: "hierarchy-carveout",
    family: Family::Hierarchy,
    claim: "the shared-memory carve-out takes its share from the L1: a kernel asking for the \
            most L1 keeps a re-read window in the L1 up to larger sizes than one asking for the \
            most shared memory",
    rule: "the window_carveout sweep's first plateau ends at a footprint at least 1.5 × larger \
           at carveout=0 than at carveout=100 (plateaus as hierarchy-levels finds them)",
    kind: Kind::Bandwidth,
    experiments: &[&WINDOW_CARVEOUT],
    decide: |cases| {
        let [most_l1, most_shared] = CARVEOUTS;
        let (Some(l1), Some(shared)) = (l1_end(cases, most_l1)?, l1_end(cases, most_shared)?)
        else {
            return Ok(Verdict::NotReproduced(
                "a window_carveout sweep shows no plateau".to_owned().into(),
            ));
        };
        let value = super::as_shown(l1 as f64 / shared as f64);
        Ok(super::at_least(
            value,
            CARVEOUT_GAIN,
            format!(
                "the L1 plateau ends at {} KiB (carveout={most_l1}) / {} KiB \
                 (carveout={most_shared}) = {}",
                l1 >> 10,
                shared >> 10,
                super::ratio_text(value)
            ),
        ))
    },
};

/// The least speed-up of a persisting window that counts as keeping the hot buffer.
const PERSIST_GAIN: f64 = 1.05;

/// hierarchy-persisting: an L2 access policy window over the hot buffer.
const PERSIST_CLAIM: Claim = Claim {
    id: "hierarchy-persisting",
    family: Family::Hierarchy,
    claim: "an L2 persisting access policy window keeps a hot buffer in the L2 while a \
            streaming buffer passes through it, so that reading both runs faster",
    rule: "at the largest hot buffer measured, persist with a window over all of it (hit=100) \
           reads at least 1.05 × persist without a window",
    kind: Kind::Bandwidth,
    experiments: &[&PERSIST],
    decide: |cases| {
        let all = cases.params(&PERSIST);
        let footprint = |p: &crate::suite::Params| p.number(Key::Footprint);
        let hot = all
            .iter()
            .filter_map(footprint)
            .max()
            .ok_or_else(|| format!("no {}", PERSIST.name()))?;
        let at = |window: bool| {
            all.iter()
                .find(|p| {
                    footprint(p) == Some(hot)
                        && p.number(Key::Window).is_some() == window
                        && (!window || p.number(Key::HitRatio) == Some(100))
                })
                .ok_or_else(|| format!("no {} at footprint={hot}", PERSIST.name()))
        };
        let (with, without) = (at(true)?, at(false)?);
        let (top, bottom) = (cases.gbps(&PERSIST, with)?, cases.gbps(&PERSIST, without)?);
        let value = super::as_shown(top / bottom);
        Ok(super::at_least(
            value,
            PERSIST_GAIN,
            format!(
                "{with} / {without} = {} ({top:.1} / {bottom:.1} GB/s)",
                super::ratio_text(value)
            ),
        ))
    },
};

/// The hierarchy claims, in checklist order.
pub(super) const CLAIMS: &[Claim] = &[LEVELS_CLAIM, ASYNC_CLAIM, CARVEOUT_CLAIM, PERSIST_CLAIM];

#[cfg(test)]
mod tests {
    use super::CLAIMS;
    use crate::params;
    use crate::report::claims::testing::{self, Threshold, row};
    use crate::results::Row;
    use crate::suite::families::hierarchy::{PERSIST, SHARED, STAGED, WINDOW, WINDOW_CARVEOUT};

    /// A window sweep at 20 TB/s to 192 KiB then at 20 / x, and a shared sweep at 20 / x
    /// to 32 MiB then at 20 / x²: three plateaus once each drop exceeds 25 % (x > 4/3).
    #[expect(
        clippy::cast_possible_truncation,
        reason = "whole bytes of footprints up to 1 GiB"
    )]
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

    /// Every staged case at 100 GB/s, the asynchronous ones at 100 × x.
    fn staged(x: f64) -> Vec<Row> {
        let mut rows = Vec::new();
        for (sync, asynchronous) in STAGED {
            for stages in [1u32, 2] {
                let params = || params!(Size => 1u64 << 30, Stages => stages);
                rows.push(row(sync, params(), 100.0));
                rows.push(row(asynchronous, params(), 100.0 * x));
            }
        }
        rows
    }

    /// The window sweep at carveout=100 at 20 TB/s to 64 KiB, at carveout=0 to 64 KiB × x,
    /// then at 8 TB/s.
    #[expect(
        clippy::cast_possible_truncation,
        reason = "whole bytes of footprints up to 1 MiB"
    )]
    fn carveout(x: f64) -> Vec<Row> {
        let mut rows = Vec::new();
        for (percent, end) in [(0u32, 65536.0 * x), (100, 65536.0)] {
            let mut bytes = 4096.0f64;
            while bytes <= f64::from(1u32 << 20) {
                let gbps = if bytes <= end { 20_000.0 } else { 8_000.0 };
                let params = params!(Footprint => bytes as u64, Carveout => percent);
                rows.push(row(&WINDOW_CARVEOUT, params, gbps));
                bytes *= 1.19;
            }
        }
        rows
    }

    /// persist without a window at 100 GB/s, with one at 100 × x (hit=100) and 90
    /// (hit=50), at two hot sizes.
    fn persist(x: f64) -> Vec<Row> {
        let mut rows = Vec::new();
        for hot in [8u64 << 20, 32 << 20] {
            rows.push(row(&PERSIST, params!(Footprint => hot), 100.0));
            for (hit, gbps) in [(100u32, 100.0 * x), (50, 90.0)] {
                let params =
                    params!(Footprint => hot, Window => hot, HitRatio => hit, SetAside => hot);
                rows.push(row(&PERSIST, params, gbps));
            }
        }
        rows
    }

    static THRESHOLDS: &[Threshold] = &[
        Threshold {
            id: "hierarchy-persisting",
            rows: persist,
            sides: &[(1.04, false), (1.06, true)],
        },
        Threshold {
            id: "hierarchy-levels",
            rows: staircase,
            sides: &[(1.32, false), (1.34, true)],
        },
        Threshold {
            id: "hierarchy-async-copy",
            rows: staged,
            sides: &[(1.04, false), (1.06, true)],
        },
        Threshold {
            id: "hierarchy-carveout",
            rows: carveout,
            sides: &[(1.2, false), (2.0, true)],
        },
    ];

    crate::threshold_tests!(CLAIMS, THRESHOLDS);
}
