//! The transfer claims: large transfers, batching, overlap with compute.

use super::{Claim, Kind, Outcome, any_measured_all, at_each, at_least, ratio};
use crate::results::param_value;

/// The transfer claims, in checklist order.
pub(super) const CLAIMS: &[Claim] = &[
    Claim {
        id: "transfer-large",
        family: "transfer",
        claim: "few large transfers beat many small ones: per-transfer overhead dominates small \
                sizes",
        rule: "for every transfer variant swept over size, the largest size runs at 4 × the \
               bandwidth of the smallest or faster",
        kind: Kind::Bandwidth,
        decide: |cases| {
            let mut variants: Vec<&str> = cases
                .family("transfer")
                .filter(|row| param_value(&row.param, "chunks") == Some("1"))
                .filter(|row| param_value(&row.param, "size").is_some())
                .map(|row| row.variant.as_str())
                .collect();
            variants.sort_unstable();
            variants.dedup();
            let parts: Vec<Outcome> = variants
                .into_iter()
                .map(|variant| {
                    let id = format!("transfer/{variant}");
                    let size = |p: &str| {
                        param_value(p, "size")
                            .and_then(|s| s.parse::<f64>().ok())
                            .filter(|_| param_value(p, "chunks") == Some("1"))
                    };
                    let measured: Vec<(f64, &str)> = cases
                        .params(&id)
                        .into_iter()
                        .filter(|p| cases.gbps(&id, p).is_ok())
                        .filter_map(|p| Some((size(p)?, p)))
                        .collect();
                    let smallest = measured.iter().min_by(|a, b| a.0.total_cmp(&b.0));
                    let largest = measured.iter().max_by(|a, b| a.0.total_cmp(&b.0));
                    match (smallest, largest) {
                        (Some(small), Some(large)) if small.0 < large.0 => {
                            let (value, detail) = ratio(cases, (&id, large.1), (&id, small.1))?;
                            Ok(at_least(value, 4.0, detail))
                        }
                        _ => Err(format!("{id} measured at fewer than two sizes")),
                    }
                })
                .collect();
            any_measured_all(parts, "no transfer variant swept over size")
        },
    },
    Claim {
        id: "transfer-batching",
        family: "transfer",
        claim: "one upload of 4 MiB beats 1024 uploads of 4 KiB",
        rule: "for every upload or readback path, size=4194304;chunks=1 runs at 2 × \
               size=4194304;chunks=1024 or faster",
        kind: Kind::Bandwidth,
        decide: |cases| {
            let mut variants: Vec<&str> = cases
                .family("transfer")
                .filter(|row| row.param == BATCHED)
                .map(|row| row.variant.as_str())
                .collect();
            variants.dedup();
            let parts: Vec<Outcome> = variants
                .into_iter()
                .map(|variant| {
                    let id = format!("transfer/{variant}");
                    let (value, detail) = ratio(cases, (&id, ONE_UPLOAD), (&id, BATCHED))?;
                    Ok(at_least(value, 2.0, detail))
                })
                .collect();
            any_measured_all(parts, "no transfer path measured batched")
        },
    },
    Claim {
        id: "transfer-overlap",
        family: "transfer",
        claim: "chunked uploads overlapped with compute hide transfer time where the API and \
                hardware allow it (wgpu has one queue)",
        rule: "overlap_interleaved runs at 1.10 × overlap_serial or faster",
        kind: Kind::Bandwidth,
        decide: |cases| {
            at_each(cases, "transfer/overlap_interleaved", |param| {
                let (value, detail) = ratio(
                    cases,
                    ("transfer/overlap_interleaved", param),
                    ("transfer/overlap_serial", param),
                )?;
                Ok(at_least(value, 1.10, detail))
            })
        },
    },
];

/// The batching pair of every transfer path: one 4 MiB transfer, and 1024 of 4 KiB.
const ONE_UPLOAD: &str = "size=4194304;chunks=1";
const BATCHED: &str = "size=4194304;chunks=1024";

#[cfg(test)]
mod tests {
    use super::CLAIMS;
    use crate::report::claims::testing::{self, Threshold, row};

    static THRESHOLDS: &[Threshold] = &[
        Threshold {
            id: "transfer-large",
            rows: |x| {
                vec![
                    row("transfer/upload_write_buffer", "size=4096;chunks=1", 1.0),
                    row("transfer/upload_write_buffer", "size=65536;chunks=1", 2.0),
                    row("transfer/upload_write_buffer", "size=1048576;chunks=1", x),
                ]
            },
            sides: &[(3.9, false), (4.1, true)],
        },
        Threshold {
            id: "transfer-batching",
            rows: |x| {
                vec![
                    row("transfer/readback", "size=4194304;chunks=1024", 1.0),
                    row("transfer/readback", "size=4194304;chunks=1", x),
                ]
            },
            sides: &[(1.9, false), (2.1, true)],
        },
        Threshold {
            id: "transfer-overlap",
            rows: |x| {
                vec![
                    row("transfer/overlap_serial", "size=67108864;chunks=4", 100.0),
                    row(
                        "transfer/overlap_interleaved",
                        "size=67108864;chunks=4",
                        100.0 * x,
                    ),
                ]
            },
            sides: &[(1.09, false), (1.11, true)],
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
