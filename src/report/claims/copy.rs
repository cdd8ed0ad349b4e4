//! The copy claims: coalescing (misaligned and aligned offsets, strides), the vec4
//! ceiling and the launch configuration.

use super::{Claim, Kind, Verdict, all, any_measured_all, at_least, between, ratio, same_param};
use crate::suite::families::copy::{DEFAULT_GRID, DEFAULT_WORKGROUP};

/// The copy claims, in checklist order.
pub(super) const CLAIMS: &[Claim] = &[
    Claim {
        id: "copy-offset-misaligned",
        family: "copy",
        claim: "a misaligned copy needs a fifth 32-byte sector per request: about 4/5 of the \
                aligned bandwidth, softened by cached neighbouring lines (about 9/10 on a V100)",
        rule: "offset 1 runs at 0.75–0.97 of offset 0",
        kind: Kind::Bandwidth,
        decide: |cases| {
            let (value, detail) = ratio(
                cases,
                ("copy/offset", "offset=1"),
                ("copy/offset", "offset=0"),
            )?;
            Ok(between(value, 0.75, 0.97, detail))
        },
    },
    Claim {
        id: "copy-offset-aligned",
        family: "copy",
        claim: "an offset of a multiple of 8 words (32 bytes) is as fast as offset 0",
        rule: "offsets 8, 16, 24 and 32 each run at 0.97 of offset 0 or faster (those measured, \
               one at least)",
        kind: Kind::Bandwidth,
        decide: |cases| {
            let parts = [8, 16, 24, 32].map(|offset| {
                let param = format!("offset={offset}");
                let (value, detail) =
                    ratio(cases, ("copy/offset", &param), ("copy/offset", "offset=0"))?;
                Ok(at_least(value, 0.97, detail))
            });
            any_measured_all(parts.into(), "no aligned offset above 0")
        },
    },
    Claim {
        id: "copy-stride-2",
        family: "copy",
        claim: "stride 2 halves load/store efficiency: half the bandwidth of stride 1",
        rule: "stride 2 runs at 0.40–0.65 of stride 1",
        kind: Kind::Bandwidth,
        decide: |cases| {
            let (value, detail) = ratio(
                cases,
                ("copy/stride", "stride=2"),
                ("copy/stride", "stride=1"),
            )?;
            Ok(between(value, 0.40, 0.65, detail))
        },
    },
    Claim {
        id: "copy-stride-falls",
        family: "copy",
        claim: "bandwidth falls as 1/s until every lane needs its own sector (1/8 for 4-byte \
                words)",
        rule: "stride 4 runs at 0.125–0.375 and stride 8 at 0.0625–0.1875 of stride 1 (1/s ± 50 %)",
        kind: Kind::Bandwidth,
        decide: |cases| {
            all([(4, 0.125, 0.375), (8, 0.0625, 0.1875)]
                .map(|(stride, low, high)| {
                    let param = format!("stride={stride}");
                    let (value, detail) =
                        ratio(cases, ("copy/stride", &param), ("copy/stride", "stride=1"))?;
                    Ok(between(value, low, high, detail))
                })
                .into())
        },
    },
    Claim {
        id: "copy-peak-ceiling",
        family: "copy",
        claim: "a wide (vec4) copy is the practical bandwidth ceiling",
        rule: "the faster copy/peak runs at 0.98 of the fastest other copy case or faster",
        kind: Kind::Bandwidth,
        decide: |cases| {
            let best = |peak: bool| {
                cases
                    .family("copy")
                    .filter(|row| (row.variant == "peak") == peak)
                    .filter_map(|row| {
                        let id = format!("copy/{}", row.variant);
                        Some((row, cases.gbps(&id, &row.param).ok()?))
                    })
                    .max_by(|a, b| a.1.total_cmp(&b.1))
            };
            let (peak, peak_gbps) = best(true).ok_or("no copy/peak measured")?;
            let (other, other_gbps) = best(false).ok_or("no other copy case measured")?;
            let value = peak_gbps / other_gbps;
            Ok(at_least(
                value,
                0.98,
                format!(
                    "peak {} / {} {} = {value:.3} ({peak_gbps:.1} / {other_gbps:.1} GB/s)",
                    peak.param, other.variant, other.param
                ),
            ))
        },
    },
    Claim {
        id: "copy-launch-default",
        family: "copy",
        claim: "the launch configuration (workgroup size, 1-D or 2-D grid) changes little; the \
                default is the fastest",
        rule: "the default launch (wg=512, 2-D grid) runs at 0.97 of the fastest copy/launch case \
               or faster",
        kind: Kind::Bandwidth,
        decide: |cases| {
            let default = format!("wg={};grid={}", DEFAULT_WORKGROUP, DEFAULT_GRID.label());
            let (best, _) = cases
                .params("copy/launch")
                .into_iter()
                .filter_map(|p| Some((p, cases.gbps("copy/launch", p).ok()?)))
                .max_by(|a, b| a.1.total_cmp(&b.1))
                .ok_or("no copy/launch measured")?;
            if same_param(best, &default) {
                let gbps = cases.gbps("copy/launch", best)?;
                return Ok(Verdict::Reproduced(format!(
                    "the default {default} is the fastest ({gbps:.1} GB/s)"
                )));
            }
            let (value, detail) = ratio(cases, ("copy/launch", &default), ("copy/launch", best))?;
            Ok(at_least(value, 0.97, detail))
        },
    },
];

#[cfg(test)]
mod tests {
    use super::CLAIMS;
    use crate::report::claims::testing::{self, Threshold, row};

    static THRESHOLDS: &[Threshold] = &[
        Threshold {
            id: "copy-offset-misaligned",
            rows: |x| {
                vec![
                    row("copy/offset", "offset=0", 100.0),
                    row("copy/offset", "offset=1", 100.0 * x),
                ]
            },
            sides: &[(0.74, false), (0.76, true), (0.96, true), (0.98, false)],
        },
        Threshold {
            id: "copy-offset-aligned",
            rows: |x| {
                vec![
                    row("copy/offset", "offset=0", 100.0),
                    row("copy/offset", "offset=8", 100.0 * x),
                    row("copy/offset", "offset=16", 100.0),
                ]
            },
            sides: &[(0.96, false), (0.98, true)],
        },
        Threshold {
            id: "copy-stride-2",
            rows: |x| {
                vec![
                    row("copy/stride", "stride=1", 100.0),
                    row("copy/stride", "stride=2", 100.0 * x),
                ]
            },
            sides: &[(0.39, false), (0.41, true), (0.64, true), (0.66, false)],
        },
        Threshold {
            id: "copy-stride-falls",
            rows: |x| {
                vec![
                    row("copy/stride", "stride=1", 100.0),
                    row("copy/stride", "stride=4", 25.0 * x),
                    row("copy/stride", "stride=8", 12.5 * x),
                ]
            },
            sides: &[(0.49, false), (0.51, true), (1.49, true), (1.51, false)],
        },
        Threshold {
            id: "copy-peak-ceiling",
            rows: |x| {
                vec![
                    row("copy/peak", "launch=vec4", 100.0 * x),
                    row("copy/offset", "offset=0", 100.0),
                ]
            },
            sides: &[(0.97, false), (0.99, true)],
        },
        Threshold {
            id: "copy-launch-default",
            rows: |x| {
                vec![
                    row("copy/launch", "wg=512;grid=2d", 100.0 * x),
                    row("copy/launch", "wg=256;grid=2d", 100.0),
                ]
            },
            sides: &[(0.96, false), (0.98, true), (1.5, true)],
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
