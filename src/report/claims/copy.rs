//! The copy claims: coalescing (misaligned and aligned offsets, strides), the vec4
//! ceiling and the launch configuration.

use super::{
    Claim, Finding, Kind, Verdict, all, any_measured_all, at_least, between, is_of, ratio,
    ratio_text,
};
use crate::params;
use crate::suite::families::copy::{DEFAULT_GRID, DEFAULT_WORKGROUP, LAUNCH, OFFSET, PEAK, STRIDE};
use crate::suite::{Experiment, Family, Params};

/// Every copy experiment: the cases the peak is read against.
const EVERY: &[&Experiment] = &[&OFFSET, &STRIDE, &PEAK, &LAUNCH];

/// The family's finding in the report's summary: misaligned copy (offset 1 ÷ offset 0).
pub(super) const FINDING: Finding = Finding {
    claim: &OFFSET_MISALIGNED,
    what: "misaligned copy (offset 1 ÷ offset 0)",
};

/// copy-offset-misaligned, the claim the family's finding shows.
const OFFSET_MISALIGNED: Claim = Claim {
    id: "copy-offset-misaligned",
    family: Family::Copy,
    claim: "a misaligned copy needs a fifth 32-byte sector per request: about 4/5 of the \
                aligned bandwidth, softened by cached neighbouring lines (about 9/10 on a V100)",
    rule: "offset 1 runs at 0.75–0.97 of offset 0",
    kind: Kind::Bandwidth,
    experiments: &[&OFFSET],
    decide: |cases| {
        let (value, detail) = ratio(
            cases,
            (&OFFSET, &params!(Offset => 1u32)),
            (&OFFSET, &params!(Offset => 0u32)),
        )?;
        Ok(between(value, 0.75, 0.97, detail))
    },
};

/// The copy claims, in checklist order.
pub(super) const CLAIMS: &[Claim] = &[
    OFFSET_MISALIGNED,
    Claim {
        id: "copy-offset-aligned",
        family: Family::Copy,
        claim: "an offset of a multiple of 8 words (32 bytes) is as fast as offset 0",
        rule: "offsets 8, 16, 24 and 32 each run at 0.97 of offset 0 or faster (those measured, \
               one at least)",
        kind: Kind::Bandwidth,
        experiments: &[&OFFSET],
        decide: |cases| {
            let parts = [8u32, 16, 24, 32].map(|offset| {
                let (value, detail) = ratio(
                    cases,
                    (&OFFSET, &params!(Offset => offset)),
                    (&OFFSET, &params!(Offset => 0u32)),
                )?;
                Ok(at_least(value, 0.97, detail))
            });
            any_measured_all(parts.into(), "no aligned offset above 0")
        },
    },
    Claim {
        id: "copy-stride-2",
        family: Family::Copy,
        claim: "stride 2 halves load/store efficiency: half the bandwidth of stride 1",
        rule: "stride 2 runs at 0.40–0.65 of stride 1",
        kind: Kind::Bandwidth,
        experiments: &[&STRIDE],
        decide: |cases| {
            let (value, detail) = ratio(
                cases,
                (&STRIDE, &params!(Stride => 2u32)),
                (&STRIDE, &params!(Stride => 1u32)),
            )?;
            Ok(between(value, 0.40, 0.65, detail))
        },
    },
    Claim {
        id: "copy-stride-falls",
        family: Family::Copy,
        claim: "bandwidth falls as 1/s until every lane needs its own sector (1/8 for 4-byte \
                words)",
        rule: "stride 4 runs at 0.125–0.375 and stride 8 at 0.0625–0.1875 of stride 1 (1/s ± 50 %)",
        kind: Kind::Bandwidth,
        experiments: &[&STRIDE],
        decide: |cases| {
            all([(4u32, 0.125, 0.375), (8, 0.0625, 0.1875)]
                .map(|(stride, low, high)| {
                    let (value, detail) = ratio(
                        cases,
                        (&STRIDE, &params!(Stride => stride)),
                        (&STRIDE, &params!(Stride => 1u32)),
                    )?;
                    Ok(between(value, low, high, detail))
                })
                .into())
        },
    },
    Claim {
        id: "copy-peak-ceiling",
        family: Family::Copy,
        claim: "a wide (vec4) copy is the practical bandwidth ceiling",
        rule: "the faster copy/peak runs at 0.98 of the fastest other copy case or faster",
        kind: Kind::Bandwidth,
        experiments: EVERY,
        decide: |cases| {
            // The fastest case of the peak (or of every other copy experiment); of
            // equals, the last row.
            let best = |peak: bool| {
                cases
                    .family(Family::Copy)
                    .filter_map(|(id, _)| {
                        let experiment = *EVERY.iter().find(|e| is_of(id, e))?;
                        if experiment.is(&PEAK) != peak {
                            return None;
                        }
                        let gbps = cases.gbps(experiment, &id.params).ok()?;
                        Some((experiment, id.params.clone(), gbps))
                    })
                    .max_by(|a, b| a.2.total_cmp(&b.2))
            };
            let (_, peak, peak_gbps) =
                best(true).ok_or_else(|| format!("no {} measured", PEAK.name()))?;
            let (other, other_params, other_gbps) =
                best(false).ok_or_else(|| format!("no other {} case measured", Family::Copy))?;
            let value = peak_gbps / other_gbps;
            Ok(at_least(
                value,
                0.98,
                format!(
                    "{} {peak} / {} {other_params} = {} ({peak_gbps:.1} / {other_gbps:.1} GB/s)",
                    PEAK.variant,
                    other.variant,
                    ratio_text(value)
                ),
            ))
        },
    },
    Claim {
        id: "copy-launch-default",
        family: Family::Copy,
        claim: "the launch configuration (workgroup size, 1-D or 2-D grid) changes little; the \
                default is the fastest",
        rule: "the default launch (wg=512, 2-D grid) runs at 0.97 of the fastest copy/launch case \
               or faster",
        kind: Kind::Bandwidth,
        experiments: &[&LAUNCH],
        decide: |cases| {
            let default: Params = params!(Wg => DEFAULT_WORKGROUP, Grid => DEFAULT_GRID.label());
            let (best, _) = cases
                .params(&LAUNCH)
                .into_iter()
                .filter_map(|params| {
                    let gbps = cases.gbps(&LAUNCH, &params).ok()?;
                    Some((params, gbps))
                })
                .max_by(|a, b| a.1.total_cmp(&b.1))
                .ok_or_else(|| format!("no {} measured", LAUNCH.name()))?;
            if best.same_pairs(&default) {
                let gbps = cases.gbps(&LAUNCH, &best)?;
                return Ok(Verdict::Reproduced(
                    format!("the default {default} is the fastest ({gbps:.1} GB/s)").into(),
                ));
            }
            let (value, detail) = ratio(cases, (&LAUNCH, &default), (&LAUNCH, &best))?;
            Ok(at_least(value, 0.97, detail))
        },
    },
];

#[cfg(test)]
mod tests {
    use super::CLAIMS;
    use crate::params;
    use crate::report::claims::testing::{self, Threshold, row};
    use crate::suite::families::copy::{LAUNCH, OFFSET, PEAK, STRIDE};

    static THRESHOLDS: &[Threshold] = &[
        Threshold {
            id: "copy-offset-misaligned",
            rows: |x| {
                vec![
                    row(&OFFSET, params!(Offset => 0u32), 100.0),
                    row(&OFFSET, params!(Offset => 1u32), 100.0 * x),
                ]
            },
            sides: &[(0.74, false), (0.76, true), (0.96, true), (0.98, false)],
        },
        Threshold {
            id: "copy-offset-aligned",
            rows: |x| {
                vec![
                    row(&OFFSET, params!(Offset => 0u32), 100.0),
                    row(&OFFSET, params!(Offset => 8u32), 100.0 * x),
                    row(&OFFSET, params!(Offset => 16u32), 100.0),
                ]
            },
            sides: &[(0.96, false), (0.98, true)],
        },
        Threshold {
            id: "copy-stride-2",
            rows: |x| {
                vec![
                    row(&STRIDE, params!(Stride => 1u32), 100.0),
                    row(&STRIDE, params!(Stride => 2u32), 100.0 * x),
                ]
            },
            sides: &[(0.39, false), (0.41, true), (0.64, true), (0.66, false)],
        },
        Threshold {
            id: "copy-stride-falls",
            rows: |x| {
                vec![
                    row(&STRIDE, params!(Stride => 1u32), 100.0),
                    row(&STRIDE, params!(Stride => 4u32), 25.0 * x),
                    row(&STRIDE, params!(Stride => 8u32), 12.5 * x),
                ]
            },
            sides: &[(0.49, false), (0.51, true), (1.49, true), (1.51, false)],
        },
        Threshold {
            id: "copy-peak-ceiling",
            rows: |x| {
                vec![
                    row(&PEAK, params!(Launch => "vec4"), 100.0 * x),
                    row(&OFFSET, params!(Offset => 0u32), 100.0),
                ]
            },
            sides: &[(0.97, false), (0.99, true)],
        },
        Threshold {
            id: "copy-launch-default",
            rows: |x| {
                vec![
                    row(&LAUNCH, params!(Wg => 512u32, Grid => "2d"), 100.0 * x),
                    row(&LAUNCH, params!(Wg => 256u32, Grid => "2d"), 100.0),
                ]
            },
            sides: &[(0.96, false), (0.98, true), (1.5, true)],
        },
    ];

    crate::threshold_tests!(CLAIMS, THRESHOLDS);
}
