//! The transfer claims: large transfers, batching, overlap with compute.

use super::{Claim, Finding, Kind, Outcome, any_measured_all, at_each, at_least, ratio};
use crate::suite::families::transfer::{
    BATCH_BYTES, BATCH_CHUNKS, DEVICE_COPY, DUPLEX, MAPPED_READ, MAPPED_READ_IMPORTED,
    OVERLAP_INTERLEAVED, OVERLAP_SERIAL, READBACK, READBACK_IMPORTED, READBACK_PAGEABLE,
    READBACK_PINNED, READBACK_THREADS, Shape, UPLOAD_IMPORTED, UPLOAD_MAPPABLE, UPLOAD_PAGEABLE,
    UPLOAD_PINNED, UPLOAD_REGISTERED, UPLOAD_STAGING, UPLOAD_STAGING_POOLED,
    UPLOAD_STAGING_THREADS, UPLOAD_WRITE_BUFFER,
};
use crate::suite::{Experiment, Family, Key, Params};

/// The paths swept over size, each also measured batched, in registry order.
const PATHS: &[&Experiment] = &[
    &UPLOAD_WRITE_BUFFER,
    &UPLOAD_STAGING,
    &UPLOAD_STAGING_POOLED,
    &UPLOAD_MAPPABLE,
    &UPLOAD_IMPORTED,
    &READBACK,
    &READBACK_IMPORTED,
    &MAPPED_READ_IMPORTED,
    &DUPLEX,
    &DEVICE_COPY,
    &UPLOAD_PAGEABLE,
    &UPLOAD_PINNED,
    &UPLOAD_REGISTERED,
    &READBACK_PAGEABLE,
    &READBACK_PINNED,
    &MAPPED_READ,
];

/// The one-way paths that move host memory the device reads or writes directly, each
/// api's: what both directions at once are compared with.
const ONE_WAY_DIRECT: [&Experiment; 4] = [
    &UPLOAD_IMPORTED,
    &READBACK_IMPORTED,
    &UPLOAD_PINNED,
    &READBACK_PINNED,
];

/// CUDA's pinned paths beside their pageable counterparts.
const PINNED_PAIRS: [(&Experiment, &Experiment); 2] = [
    (&UPLOAD_PINNED, &UPLOAD_PAGEABLE),
    (&READBACK_PINNED, &READBACK_PAGEABLE),
];

/// The family's finding in the report's summary: largest ÷ smallest transfer, every path.
pub(super) const FINDING: Finding = Finding {
    claim: &LARGE,
    what: "largest ÷ smallest transfer, every path",
};

/// transfer-large, the claim the family's finding shows.
const LARGE: Claim = Claim {
    id: "transfer-large",
    family: Family::Transfer,
    claim: "few large transfers beat many small ones: per-transfer overhead dominates small \
                sizes",
    rule: "for every transfer variant swept over size, the largest size runs at 4 × the \
               bandwidth of the smallest or faster",
    kind: Kind::Bandwidth,
    experiments: PATHS,
    decide: |cases| {
        // The size of a one-transfer case.
        let size = |params: &Params| {
            params
                .number(Key::Size)
                .filter(|_| params.number(Key::Chunks) == Some(1))
        };
        let mut swept: Vec<&Experiment> = PATHS
            .iter()
            .copied()
            .filter(|&path| cases.params(path).iter().any(|p| size(p).is_some()))
            .collect();
        // The details list the paths by name.
        swept.sort_by_key(|path| path.variant);
        let parts: Vec<Outcome> = swept
            .into_iter()
            .map(|path| {
                let measured: Vec<(u64, Params)> = cases
                    .params(path)
                    .into_iter()
                    .filter(|params| cases.gbps(path, params).is_ok())
                    .filter_map(|params| Some((size(&params)?, params)))
                    .collect();
                let smallest = measured.iter().min_by_key(|(size, _)| *size);
                let largest = measured.iter().max_by_key(|(size, _)| *size);
                match (smallest, largest) {
                    (Some(small), Some(large)) if small.0 < large.0 => {
                        let (value, detail) = ratio(cases, (path, &large.1), (path, &small.1))?;
                        Ok(at_least(value, 4.0, detail))
                    }
                    _ => Err(format!("{} measured at fewer than two sizes", path.name())),
                }
            })
            .collect();
        any_measured_all(parts, "no transfer variant swept over size")
    },
};

/// The transfer claims, in checklist order.
pub(super) const CLAIMS: &[Claim] = &[
    LARGE,
    Claim {
        id: "transfer-batching",
        family: Family::Transfer,
        claim: "one upload of 4 MiB beats 1024 uploads of 4 KiB",
        rule: "for every upload or readback path, size=4194304;chunks=1 runs at 2 × \
               size=4194304;chunks=1024 or faster",
        kind: Kind::Bandwidth,
        experiments: PATHS,
        decide: |cases| {
            let one = batch(1);
            let batched = batch(BATCH_CHUNKS);
            let parts: Vec<Outcome> = PATHS
                .iter()
                .filter(|&&path| cases.row(path, &batched).is_some())
                .map(|&path| {
                    let (value, detail) = ratio(cases, (path, &one), (path, &batched))?;
                    Ok(at_least(value, 2.0, detail))
                })
                .collect();
            any_measured_all(parts, "no transfer path measured batched")
        },
    },
    Claim {
        id: "transfer-pinned",
        family: Family::Transfer,
        claim: "pinned (page-locked) host memory transfers faster than pageable memory, which \
                the driver stages through a pinned buffer of its own",
        rule: "at the largest size both measured, upload_pinned runs at 1.5 × upload_pageable \
               and readback_pinned at 1.5 × readback_pageable or faster",
        kind: Kind::Bandwidth,
        experiments: &[
            &UPLOAD_PINNED,
            &UPLOAD_PAGEABLE,
            &READBACK_PINNED,
            &READBACK_PAGEABLE,
        ],
        decide: |cases| {
            let parts: Vec<Outcome> = PINNED_PAIRS
                .iter()
                .map(|&(pinned, pageable)| {
                    let sizes = |path| -> Vec<Params> {
                        cases
                            .params(path)
                            .into_iter()
                            .filter(|params| params.number(Key::Chunks) == Some(1))
                            .filter(|params| cases.gbps(path, params).is_ok())
                            .collect()
                    };
                    let theirs = sizes(pageable);
                    let largest = sizes(pinned)
                        .into_iter()
                        .filter(|params| theirs.contains(params))
                        .max_by_key(|params| params.number(Key::Size))
                        .ok_or_else(|| {
                            format!("{} and {} share no size", pinned.name(), pageable.name())
                        })?;
                    let (value, detail) = ratio(cases, (pinned, &largest), (pageable, &largest))?;
                    Ok(at_least(value, 1.5, detail))
                })
                .collect();
            any_measured_all(parts, "no pinned and pageable pair measured")
        },
    },
    Claim {
        id: "transfer-threads",
        family: Family::Transfer,
        claim: "one host thread's memory copy, not the link, bounds a staged transfer: more \
                threads copying into or out of the mapped staging memory move it faster",
        rule: "for upload_staging_threads and readback_threads, the most threads measured run \
               at 1.5 × one thread or faster",
        kind: Kind::Bandwidth,
        experiments: &[&UPLOAD_STAGING_THREADS, &READBACK_THREADS],
        decide: |cases| {
            let parts: Vec<Outcome> = [&UPLOAD_STAGING_THREADS, &READBACK_THREADS]
                .into_iter()
                .filter(|&path| !cases.params(path).is_empty())
                .map(|path| {
                    let measured: Vec<(u64, Params)> = cases
                        .params(path)
                        .into_iter()
                        .filter(|params| cases.gbps(path, params).is_ok())
                        .filter_map(|params| Some((params.number(Key::Threads)?, params)))
                        .collect();
                    let one = measured.iter().find(|(threads, _)| *threads == 1);
                    let most = measured.iter().max_by_key(|(threads, _)| *threads);
                    match (one, most) {
                        (Some(one), Some(most)) if most.0 > 1 => {
                            let (value, detail) = ratio(cases, (path, &most.1), (path, &one.1))?;
                            Ok(at_least(value, 1.5, detail))
                        }
                        _ => Err(format!("{} measured with one thread count", path.name())),
                    }
                })
                .collect();
            any_measured_all(parts, "no threaded path measured")
        },
    },
    Claim {
        id: "transfer-duplex",
        family: Family::Transfer,
        claim: "the link is full duplex: an upload and a readback at once move more bytes per \
                second than either alone",
        rule: "at the largest size measured both ways at once, duplex runs at 1.5 × the faster \
               one-way path of direct host memory (imported in wgpu, pinned in CUDA) or faster",
        kind: Kind::Bandwidth,
        experiments: &[
            &DUPLEX,
            &UPLOAD_IMPORTED,
            &READBACK_IMPORTED,
            &UPLOAD_PINNED,
            &READBACK_PINNED,
        ],
        decide: |cases| {
            let largest = cases
                .params(&DUPLEX)
                .into_iter()
                .filter(|params| params.number(Key::Chunks) == Some(1))
                .filter(|params| cases.gbps(&DUPLEX, params).is_ok())
                .max_by_key(|params| params.number(Key::Size))
                .ok_or("duplex not measured")?;
            let fastest = ONE_WAY_DIRECT
                .into_iter()
                .filter_map(|path| Some((path, cases.gbps(path, &largest).ok()?)))
                .max_by(|a, b| a.1.total_cmp(&b.1))
                .ok_or_else(|| format!("no one-way direct path at {largest}"))?;
            let (value, detail) = ratio(cases, (&DUPLEX, &largest), (fastest.0, &largest))?;
            Ok(at_least(value, 1.5, detail))
        },
    },
    Claim {
        id: "transfer-overlap",
        family: Family::Transfer,
        claim: "chunked uploads overlapped with compute hide transfer time where the API and \
                hardware allow it (wgpu has one queue)",
        rule: "overlap_interleaved runs at 1.10 × overlap_serial or faster",
        kind: Kind::Bandwidth,
        experiments: &[&OVERLAP_SERIAL, &OVERLAP_INTERLEAVED],
        decide: |cases| {
            at_each(cases, &OVERLAP_INTERLEAVED, |params| {
                let (value, detail) = ratio(
                    cases,
                    (&OVERLAP_INTERLEAVED, params),
                    (&OVERLAP_SERIAL, params),
                )?;
                Ok(at_least(value, 1.10, detail))
            })
        },
    },
];

/// The batching pair's params: the batch's bytes as one transfer, or as `chunks`.
fn batch(chunks: u32) -> Params {
    Shape {
        bytes: BATCH_BYTES,
        chunks,
    }
    .params()
}

#[cfg(test)]
mod tests {
    use super::CLAIMS;
    use crate::params;
    use crate::report::claims::testing::{self, Threshold, row};
    use crate::suite::families::transfer::{
        DUPLEX, OVERLAP_INTERLEAVED, OVERLAP_SERIAL, READBACK, READBACK_IMPORTED,
        READBACK_PAGEABLE, READBACK_PINNED, READBACK_THREADS, UPLOAD_IMPORTED, UPLOAD_PAGEABLE,
        UPLOAD_PINNED, UPLOAD_STAGING_THREADS, UPLOAD_WRITE_BUFFER,
    };

    static THRESHOLDS: &[Threshold] = &[
        Threshold {
            id: "transfer-large",
            rows: |x| {
                [(4096u64, 1.0), (65536, 2.0), (1_048_576, x)]
                    .map(|(size, gbps)| {
                        row(
                            &UPLOAD_WRITE_BUFFER,
                            params!(Size => size, Chunks => 1u32),
                            gbps,
                        )
                    })
                    .into()
            },
            sides: &[(3.9, false), (4.1, true)],
        },
        Threshold {
            id: "transfer-batching",
            rows: |x| {
                vec![
                    row(
                        &READBACK,
                        params!(Size => 4_194_304u64, Chunks => 1024u32),
                        1.0,
                    ),
                    row(&READBACK, params!(Size => 4_194_304u64, Chunks => 1u32), x),
                ]
            },
            sides: &[(1.9, false), (2.1, true)],
        },
        Threshold {
            id: "transfer-pinned",
            rows: |x| {
                let size = |bytes: u64| params!(Size => bytes, Chunks => 1u32);
                vec![
                    row(&UPLOAD_PAGEABLE, size(1 << 20), 10.0),
                    row(&UPLOAD_PINNED, size(1 << 20), 10.0 * x),
                    // The largest size both measured decides, not the pinned path's own.
                    row(&UPLOAD_PINNED, size(1 << 22), 1.0),
                    row(&READBACK_PAGEABLE, size(1 << 20), 10.0),
                    row(&READBACK_PINNED, size(1 << 20), 20.0),
                ]
            },
            sides: &[(1.49, false), (1.51, true)],
        },
        Threshold {
            id: "transfer-threads",
            rows: |x| {
                let threads = |n: u32| params!(Size => 1u64 << 28, Chunks => 1u32, Threads => n);
                vec![
                    row(&UPLOAD_STAGING_THREADS, threads(1), 10.0),
                    row(&UPLOAD_STAGING_THREADS, threads(2), 12.0),
                    row(&UPLOAD_STAGING_THREADS, threads(8), 10.0 * x),
                    row(&READBACK_THREADS, threads(1), 10.0),
                    row(&READBACK_THREADS, threads(4), 20.0),
                ]
            },
            sides: &[(1.49, false), (1.51, true)],
        },
        Threshold {
            id: "transfer-duplex",
            rows: |x| {
                let size = |bytes: u64| params!(Size => bytes, Chunks => 1u32);
                vec![
                    row(&UPLOAD_IMPORTED, size(1 << 20), 40.0),
                    // The faster direction decides.
                    row(&READBACK_IMPORTED, size(1 << 20), 50.0),
                    row(&DUPLEX, size(1 << 20), 50.0 * x),
                    // The largest size duplex measured decides, not a one-way path's.
                    row(&UPLOAD_IMPORTED, size(1 << 22), 1.0),
                    row(&DUPLEX, size(1 << 18), 1.0),
                ]
            },
            sides: &[(1.49, false), (1.51, true)],
        },
        Threshold {
            id: "transfer-overlap",
            rows: |x| {
                let shape = params!(Size => 67_108_864u64, Chunks => 4u32);
                vec![
                    row(&OVERLAP_SERIAL, shape.clone(), 100.0),
                    row(&OVERLAP_INTERLEAVED, shape, 100.0 * x),
                ]
            },
            sides: &[(1.09, false), (1.11, true)],
        },
    ];

    crate::threshold_tests!(CLAIMS, THRESHOLDS);
}
