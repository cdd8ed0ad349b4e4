//! transfer — host ↔ device: upload and readback paths, batching, copy/compute overlap.
//!
//! The WebGPU counterparts of the classic CUDA transfer experiments: the
//! `bandwidthTest` sweep of pageable vs pinned uploads (here `queue.write_buffer`, a
//! mapped staging buffer, and storage the host maps directly), many small copies vs one
//! large one, and chunked copies overlapped with kernels on streams. The texts expect
//! bandwidth to grow with size until a fixed per-transfer cost is amortised (tens of
//! KiB to a few MiB), few large transfers to beat many small ones by a wide margin, and
//! overlap to hide up to the smaller of the transfer and compute times. WebGPU has one
//! queue per device, so overlap here can only come from the host preparing chunk i+1
//! while the GPU processes chunk i, or from the driver overlapping work of one queue.
//!
//! CUDA measures the device copy and the overlap schedules too (on streams, as rows of
//! api `cuda`) and has paths of its own that wgpu cannot show: `cudaMemcpy` from
//! pageable, pinned and on-demand registered memory, readbacks into pageable and pinned
//! memory, and a kernel reading mapped host memory (zero-copy).
//!
//! Transfers are timed on the host clock from the call to the moment the data is
//! usable (see [`crate::backend::wgpu::transfer`] for what each time includes); the
//! device-to-device copy and the zero-copy read on the GPU clock.

use crate::params;
use crate::suite::{
    Buffer, Case, CaseData, CudaPath, Expected, Experiment, Family, Grid, HostMemory, Key, Measure,
    Params, Schedule, Sizing, TransferPath, Twin, Words, f32_data, f32_word, f32_words,
};

/// Smallest transfer of the size sweep; each next size is [`SIZE_STEP`] times larger.
const SWEEP_MIN_BYTES: u64 = 4 << 10;
const SIZE_STEP: u64 = 4;
/// Largest transfer of a full run, of a `--quick` run and on software adapters. Larger
/// ones lengthened a full run by a fifth and showed nothing new: no path ran faster at
/// 1 GiB than at 256 MiB (docs/transfers.md, Cases and sampling).
const FULL_MAX_BYTES: u64 = 256 << 20;
const QUICK_MAX_BYTES: u64 = 4 << 20;
const SOFTWARE_MAX_BYTES: u64 = 64 << 20;
/// Batching: the same bytes as one transfer or as many small ones.
pub(crate) const BATCH_BYTES: u64 = 4 << 20;
pub(crate) const BATCH_CHUNKS: u32 = 1024;
/// Overlap: at most this much data in total (transfers dominate; the working set need
/// not exceed any cache), in these numbers of chunks.
const OVERLAP_MAX_BYTES: u64 = 64 << 20;
const OVERLAP_CHUNKS: [u32; 2] = [4, 16];
/// Workgroup size and arithmetic rounds per element of `transfer_work`.
const WORK_WORKGROUP: u32 = 256;
const WORK_ROUNDS: u32 = 8;
/// A chunk is bound as a sub-range of a storage buffer, whose offset must be a multiple
/// of `min_storage_buffer_offset_alignment` (256 at most in WebGPU), and is whole
/// workgroups of `transfer_work`, so that the CUDA twin's grid covers it exactly.
const CHUNK_ALIGN_BYTES: u64 = 4 * WORK_WORKGROUP as u64;

/// The family's experiments, in the order runs and reports show them.
pub const EXPERIMENTS: &[Experiment] = &[
    UPLOAD_WRITE_BUFFER,
    UPLOAD_STAGING,
    UPLOAD_STAGING_POOLED,
    UPLOAD_STAGING_THREADS,
    UPLOAD_MAPPABLE,
    UPLOAD_IMPORTED,
    READBACK,
    READBACK_THREADS,
    READBACK_IMPORTED,
    MAPPED_READ_IMPORTED,
    DUPLEX,
    DEVICE_COPY,
    DEVICE_COPY_UNBOUND,
    DEVICE_COPY_KERNEL,
    UPLOAD_PAGEABLE,
    UPLOAD_PINNED,
    UPLOAD_REGISTERED,
    READBACK_PAGEABLE,
    READBACK_PINNED,
    MAPPED_READ,
    OVERLAP_SERIAL,
    OVERLAP_INTERLEAVED,
];

/// `queue.write_buffer`: bandwidth grows with size until the per-call cost is
/// amortised; wgpu copies the data into its own staging memory first, like a pageable
/// cudaMemcpy.
pub(crate) const UPLOAD_WRITE_BUFFER: Experiment =
    declare("upload_write_buffer", TransferPath::WriteBuffer);
/// A staging buffer created mapped per transfer: the host writes straight into memory
/// the GPU copies from, as with pinned memory, but pays an allocation each time.
pub(crate) const UPLOAD_STAGING: Experiment =
    declare("upload_staging", TransferPath::Staging { pooled: false });
/// A staging buffer reused (mapped again after each use): no allocation, expected
/// faster than a fresh one, most of all for small transfers.
pub(crate) const UPLOAD_STAGING_POOLED: Experiment = declare(
    "upload_staging_pooled",
    TransferPath::Staging { pooled: true },
);
/// The pooled staging buffer at the sweep's largest size, filled by 1 to 16 host threads:
/// one thread's memory copy, not the link, is expected to bound an upload (published:
/// 5–10 GB/s a thread against a link of 50 GB/s and more), so more threads should help
/// until the link or the host's memory does. The note (as the pooled path's) splits each
/// transfer into the host's fill and the copy to the GPU (unmap, copy command,
/// submission, wait).
pub(crate) const UPLOAD_STAGING_THREADS: Experiment =
    declare("upload_staging_threads", TransferPath::StagingThreads);
/// Storage the host maps needs no copy: on unified memory the fastest path; on a
/// discrete GPU it lives in host-visible memory the kernels then read over the bus.
pub(crate) const UPLOAD_MAPPABLE: Experiment =
    declare("upload_mappable", TransferPath::MappableStorage);
/// A copy from host memory imported as a buffer: the copy engine reads the host's pages
/// directly, as from CUDA's pinned memory, so it is expected at the link's rate once
/// large, with no host copy on the clock (the data is in place beforehand, as for
/// `upload_pinned`).
pub(crate) const UPLOAD_IMPORTED: Experiment =
    declare("upload_imported", TransferPath::ImportedUpload);
/// A copy into imported host memory: the pinned readback's analogue, the data usable by
/// the host once the copy is done.
pub(crate) const READBACK_IMPORTED: Experiment =
    declare("readback_imported", TransferPath::ImportedReadback);
/// A kernel reads the data where it sits in imported host memory, bound as storage, and
/// writes device storage (`transfer_work` with no rounds: a copy), on the GPU clock:
/// CUDA's `mapped_read` in wgpu, the SMs' loads crossing the link.
pub(crate) const MAPPED_READ_IMPORTED: Experiment =
    declare("mapped_read_imported", TransferPath::ImportedKernelRead);
/// Both directions at once: the same size up and down, every copy in one submission
/// (CUDA: on two streams). PCIe is full duplex, so up to twice one direction's rate
/// if the copies run side by side; bytes are both directions' together.
pub(crate) const DUPLEX: Experiment = declare("duplex", TransferPath::Duplex);
/// A readback pays a copy, a map and a round trip to the host: expected slower than an
/// upload of the same size, with a larger fixed cost.
pub(crate) const READBACK: Experiment = declare("readback", TransferPath::Readback);
/// The readback at the sweep's largest size, copied out of the mapping by 1 to 16 host
/// threads. The note splits each transfer into the copy from the GPU (copy command,
/// submission, the map's wait) and the host's copy-out: reading mapped memory is
/// expected slow where the driver gives write-combined memory, fast where host-cached.
pub(crate) const READBACK_THREADS: Experiment =
    declare("readback_threads", TransferPath::ReadbackThreads);
/// `copy_buffer_to_buffer` within the device (CUDA: `cudaMemcpy` device to device):
/// near DRAM bandwidth (read + write) once large, one to two orders above any host
/// transfer.
pub(crate) const DEVICE_COPY: Experiment = declare("device_copy", TransferPath::DeviceCopy);
/// wgpu: the device copy between buffers without `STORAGE` usage, at the sweep's
/// largest size. Against `device_copy` of the same size: whether the buffers' usage
/// (and the memory it gets them) slows `copy_buffer_to_buffer` (issue 53).
pub(crate) const DEVICE_COPY_UNBOUND: Experiment =
    declare("device_copy_unbound", TransferPath::DeviceCopyUnbound);
/// wgpu: the very buffers of `device_copy` copied by a kernel (`transfer_work` with no
/// rounds), at the sweep's largest size, on the GPU clock: where this reaches the copy
/// peak and `device_copy` does not, the driver's copy command is the cause, not the
/// buffers.
pub(crate) const DEVICE_COPY_KERNEL: Experiment =
    declare("device_copy_kernel", TransferPath::DeviceCopyKernel);
/// CUDA: `cudaMemcpy` from pageable memory, which the driver stages through pinned
/// buffers of its own: the texts expect it well below pinned.
pub(crate) const UPLOAD_PAGEABLE: Experiment = declare(
    "upload_pageable",
    TransferPath::Cuda(CudaPath::Upload(HostMemory::Pageable)),
);
/// CUDA: `cudaMemcpy` from `cudaHostAlloc` memory: the copy engines read it directly, at
/// the bus's rate once large.
pub(crate) const UPLOAD_PINNED: Experiment = declare(
    "upload_pinned",
    TransferPath::Cuda(CudaPath::Upload(HostMemory::Pinned)),
);
/// CUDA: pageable memory pinned for the transfer by `cudaHostRegister` and released
/// after it, on the clock: pinning on demand pays off only for large transfers.
pub(crate) const UPLOAD_REGISTERED: Experiment = declare(
    "upload_registered",
    TransferPath::Cuda(CudaPath::Upload(HostMemory::Registered)),
);
/// CUDA: `cudaMemcpy` into pageable memory, staged by the driver.
pub(crate) const READBACK_PAGEABLE: Experiment = declare(
    "readback_pageable",
    TransferPath::Cuda(CudaPath::Readback(HostMemory::Pageable)),
);
/// CUDA: `cudaMemcpy` into `cudaHostAlloc` memory.
pub(crate) const READBACK_PINNED: Experiment = declare(
    "readback_pinned",
    TransferPath::Cuda(CudaPath::Readback(HostMemory::Pinned)),
);
/// CUDA: a kernel (`transfer_work` with no rounds: a copy) reads mapped pinned host
/// memory (`cudaHostAllocMapped`, zero-copy) and writes device memory; GPU clock.
pub(crate) const MAPPED_READ: Experiment =
    declare("mapped_read", TransferPath::Cuda(CudaPath::MappedRead));
/// All uploads, then all kernels: the time is the sum of both.
pub(crate) const OVERLAP_SERIAL: Experiment =
    declare("overlap_serial", TransferPath::Overlap(Schedule::Serial));
/// Upload and process chunk by chunk: with one queue, only the host's preparation of
/// the next chunk overlaps the GPU's work on the last; the note says how much of the
/// upload time was hidden. CUDA puts the chunks on streams, so its copy engines
/// overlap the kernels.
pub(crate) const OVERLAP_INTERLEAVED: Experiment = declare(
    "overlap_interleaved",
    TransferPath::Overlap(Schedule::Interleaved),
);

/// A transfer experiment: the overlap and the zero-copy read run `transfer_work` (its
/// CUDA twin on CUDA), the other paths run no kernel.
const fn declare(variant: &'static str, path: TransferPath) -> Experiment {
    let cases: fn(&Sizing) -> Vec<Case> = match path {
        TransferPath::WriteBuffer
        | TransferPath::Staging { .. }
        | TransferPath::Readback
        | TransferPath::Cuda(CudaPath::Upload(_) | CudaPath::Readback(_)) => sweep_cases,
        TransferPath::DeviceCopy => device_copy_cases,
        TransferPath::DeviceCopyUnbound => largest_copy_cases,
        TransferPath::DeviceCopyKernel => kernel_copy_cases,
        TransferPath::MappableStorage => mappable_cases,
        TransferPath::ImportedUpload | TransferPath::ImportedReadback => imported_cases,
        TransferPath::Duplex => duplex_cases,
        TransferPath::StagingThreads | TransferPath::ReadbackThreads => threads_cases,
        TransferPath::Cuda(CudaPath::MappedRead) => mapped_read_cases,
        TransferPath::ImportedKernelRead => mapped_read_imported_cases,
        TransferPath::Overlap(_) => overlap_cases,
    };
    let (kernel, twin) = match path {
        TransferPath::Overlap(_)
        | TransferPath::Cuda(CudaPath::MappedRead)
        | TransferPath::ImportedKernelRead
        | TransferPath::DeviceCopyKernel => (Some("transfer_work"), Twin::cuda("transfer_work")),
        _ => (
            None,
            Twin::None("a copy between host and device: no kernel runs"),
        ),
    };
    Experiment {
        family: Family::Transfer,
        variant,
        kernel,
        cases,
        measure: Measure::Transfer(path),
        twin,
    }
}

/// What one transfer case moves: `bytes` in total, as `chunks` transfers of equal size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Shape {
    pub bytes: u64,
    pub chunks: u32,
}

impl Shape {
    /// The case's params: `size=<bytes>;chunks=<n>`.
    pub(crate) fn params(self) -> Params {
        params!(Size => self.bytes, Chunks => self.chunks)
    }

    /// The shape that params made by [`Shape::params`] describe.
    pub(crate) fn of(params: &Params) -> Result<Shape, String> {
        let value = |key: Key| -> Result<u64, String> {
            params
                .number(key)
                .ok_or_else(|| format!("`{params}` has no whole-number `{key}=`"))
        };
        let bytes = value(Key::Size)?;
        let chunks = u32::try_from(value(Key::Chunks)?)
            .map_err(|_| format!("`{params}`: too many chunks"))?;
        if chunks == 0 || bytes == 0 || bytes % (4 * u64::from(chunks)) != 0 {
            return Err(format!(
                "`{params}`: {bytes} bytes do not split into {chunks} chunks of whole words"
            ));
        }
        Ok(Shape { bytes, chunks })
    }

    pub(crate) fn chunk_bytes(self) -> u64 {
        self.bytes / u64::from(self.chunks)
    }
}

/// The largest transfer of the size sweep before device limits.
fn sweep_max_bytes(sizing: &Sizing) -> u64 {
    sizing.sweep_max_bytes(FULL_MAX_BYTES, SOFTWARE_MAX_BYTES, QUICK_MAX_BYTES)
}

/// Why a buffer of `bytes` cannot be made on this device, if it cannot.
fn size_skip(sizing: &Sizing, bytes: u64) -> Option<String> {
    (bytes > sizing.max_binding_bytes).then(|| {
        format!(
            "{bytes} bytes exceed the device's largest buffer binding of {} bytes",
            sizing.max_binding_bytes
        )
    })
}

/// The size sweep (one transfer each) and the batching pair's many-chunk side (its
/// one-chunk side is the sweep's 4 MiB case).
fn shapes(sizing: &Sizing) -> Vec<Shape> {
    let max = sweep_max_bytes(sizing);
    let mut shapes: Vec<Shape> =
        std::iter::successors(Some(SWEEP_MIN_BYTES), |b| Some(b * SIZE_STEP))
            .take_while(|&bytes| bytes <= max)
            .map(|bytes| Shape { bytes, chunks: 1 })
            .collect();
    shapes.push(Shape {
        bytes: BATCH_BYTES,
        chunks: BATCH_CHUNKS,
    });
    shapes
}

/// Varied data the size of `shape`, and the same bytes as what must arrive.
fn transfer_case(sizing: &Sizing, shape: Shape, bytes_moved: u64) -> Case {
    let words = (shape.bytes / 4) as usize;
    Case::builder(sizing, shape.params())
        .skip_if(size_skip(sizing, shape.bytes))
        .workgroups([1, 1, 1])
        .moves(words as u64, bytes_moved)
        .buffers(vec![Buffer::Input(words)])
        .data(move || {
            // Sent from host memory, so held; what must arrive is made piece by piece.
            let seed = shape.bytes ^ u64::from(shape.chunks);
            CaseData {
                expected: vec![Expected::Exact(f32_words(words, seed))],
                inputs: vec![f32_data(words, seed).into()],
            }
        })
}

fn sweep_cases(sizing: &Sizing) -> Vec<Case> {
    shapes(sizing)
        .into_iter()
        .map(|shape| transfer_case(sizing, shape, shape.bytes))
        .collect()
}

/// The sweep, and the largest size as [`COPY_REGIONS`] regions in one encoder: one
/// region against several (issue 53).
fn device_copy_cases(sizing: &Sizing) -> Vec<Case> {
    let mut shapes = shapes(sizing);
    if let Some(largest) = largest_shape(sizing) {
        shapes.push(Shape {
            chunks: COPY_REGIONS,
            ..largest
        });
    }
    shapes
        .into_iter()
        .map(|shape| transfer_case(sizing, shape, device_copy_bytes(shape)))
        .collect()
}

/// Regions of the device copy's split case.
const COPY_REGIONS: u32 = 16;

/// The sweep's largest transfer, one chunk.
fn largest_shape(sizing: &Sizing) -> Option<Shape> {
    shapes(sizing).into_iter().rfind(|shape| shape.chunks == 1)
}

fn largest_copy_cases(sizing: &Sizing) -> Vec<Case> {
    largest_shape(sizing)
        .map(|shape| transfer_case(sizing, shape, device_copy_bytes(shape)))
        .into_iter()
        .collect()
}

/// `transfer_work` with no rounds copying the largest size within the device: it reads
/// and writes every byte.
fn kernel_copy_cases(sizing: &Sizing) -> Vec<Case> {
    largest_shape(sizing)
        .map(|shape| Case {
            bytes: device_copy_bytes(shape),
            ..work_case(sizing, shape, 0, None)
        })
        .into_iter()
        .collect()
}

/// Why storage cannot be mapped by the host here, if it cannot.
pub(crate) fn mappable_skip(sizing: &Sizing) -> Option<String> {
    (!sizing.mappable_storage).then(|| {
        "the adapter does not offer storage the host can map \
         (Features::MAPPABLE_PRIMARY_BUFFERS)"
            .to_owned()
    })
}

fn mappable_cases(sizing: &Sizing) -> Vec<Case> {
    let mut cases = sweep_cases(sizing);
    if let Some(reason) = mappable_skip(sizing) {
        for case in &mut cases {
            case.skip.get_or_insert_with(|| reason.clone());
        }
    }
    cases
}

/// The host threads of [`UPLOAD_STAGING_THREADS`] and [`READBACK_THREADS`]: fixed, so that case ids agree across
/// hosts; a count above the host's cores is skipped with the reason.
const COPY_THREADS: [u32; 3] = [1, 4, 16];

fn threads_cases(sizing: &Sizing) -> Vec<Case> {
    let shape = Shape {
        bytes: sweep_max_bytes(sizing),
        chunks: 1,
    };
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    COPY_THREADS
        .iter()
        .map(|&threads| {
            let mut case = transfer_case(sizing, shape, shape.bytes);
            case.params = case.params.with(Key::Threads, threads);
            let beyond = threads as usize > cores;
            case.skip = case.skip.or_else(|| {
                beyond.then(|| format!("{threads} copy threads on a host of {cores} cores"))
            });
            case
        })
        .collect()
}

/// The host threads `params` name (`threads=`), for [`UPLOAD_STAGING_THREADS`] and
/// [`READBACK_THREADS`].
pub(crate) fn copy_threads(params: &Params) -> Result<usize, String> {
    params
        .number(Key::Threads)
        .and_then(|n| usize::try_from(n).ok())
        .filter(|&n| n > 0)
        .ok_or_else(|| format!("`{params}` has no thread count `threads=` above 0"))
}

fn imported_cases(sizing: &Sizing) -> Vec<Case> {
    without_import_skipped(sizing, sweep_cases(sizing))
}

/// `cases`, skipped with the reason where the adapter cannot import host memory.
fn without_import_skipped(sizing: &Sizing, mut cases: Vec<Case>) -> Vec<Case> {
    for case in &mut cases {
        case.skip = case.skip.take().or_else(|| sizing.host_import_skip.clone());
    }
    cases
}

/// The size sweep both ways at once: each byte counted once per direction. wgpu's
/// side needs imported host memory; the skip where it is absent covers CUDA's rows
/// too, which only NVIDIA devices have, whose Vulkan drivers offer the import.
fn duplex_cases(sizing: &Sizing) -> Vec<Case> {
    let cases = shapes(sizing)
        .into_iter()
        .map(|shape| transfer_case(sizing, shape, 2 * shape.bytes))
        .collect();
    without_import_skipped(sizing, cases)
}

fn mapped_read_imported_cases(sizing: &Sizing) -> Vec<Case> {
    without_import_skipped(sizing, mapped_read_cases(sizing))
}

/// Device-to-device copies read and write every byte.
pub(crate) fn device_copy_bytes(shape: Shape) -> u64 {
    2 * shape.bytes
}

/// What `transfer_work` makes of one word: `rounds` rounds of a multiply-add and a
/// shift-xor, exactly as the shader computes them (u32 arithmetic wraps).
pub fn work(x: u32, rounds: u32) -> u32 {
    (0..rounds).fold(x, |x, _| {
        let x = x.wrapping_mul(747_796_405).wrapping_add(2_891_336_453);
        x ^ (x >> 13)
    })
}

/// Total bytes of the overlap workload: the streaming size, at most
/// [`OVERLAP_MAX_BYTES`], a whole number of aligned chunks for every chunk count.
fn overlap_bytes(sizing: &Sizing) -> u64 {
    let unit = CHUNK_ALIGN_BYTES * u64::from(OVERLAP_CHUNKS[OVERLAP_CHUNKS.len() - 1]);
    sizing.stream_buffer_bytes().min(OVERLAP_MAX_BYTES) / unit * unit
}

fn overlap_cases(sizing: &Sizing) -> Vec<Case> {
    let bytes = overlap_bytes(sizing);
    OVERLAP_CHUNKS
        .iter()
        .map(|&chunks| {
            let empty = (bytes == 0).then(|| "the overlap workload has no whole chunk".into());
            work_case(sizing, Shape { bytes, chunks }, WORK_ROUNDS, empty)
        })
        .collect()
}

/// The size sweep as a copy by `transfer_work` (no rounds) out of mapped host memory.
fn mapped_read_cases(sizing: &Sizing) -> Vec<Case> {
    shapes(sizing)
        .into_iter()
        .filter(|shape| shape.chunks == 1)
        .map(|shape| work_case(sizing, shape, 0, None))
        .collect()
}

/// `transfer_work` with `rounds` rounds over data the size of `shape`, the whole buffer
/// as one dispatch (how the simulator test runs the kernel; a transfer path dispatches
/// it per chunk), skipped for `skip` too.
fn work_case(sizing: &Sizing, shape: Shape, rounds: u32, skip: Option<String>) -> Case {
    let words = (shape.bytes / 4) as usize;
    Case::builder(sizing, shape.params())
        .workgroup([WORK_WORKGROUP, 1, 1], 0)
        .skip_if(size_skip(sizing, shape.bytes))
        .skip_if(skip)
        .grid(
            Grid::TwoD,
            (words as u64).div_ceil(u64::from(WORK_WORKGROUP)),
        )
        .constants([
            ("WORKGROUP_SIZE", f64::from(WORK_WORKGROUP)),
            ("ROUNDS", f64::from(rounds)),
        ])
        .moves(words as u64, shape.bytes)
        .buffers(vec![Buffer::Input(words), Buffer::Output(words)])
        .data(move || {
            let seed = u64::from(shape.chunks);
            let expected = move |i| work(f32_word(i, seed), rounds);
            CaseData {
                inputs: vec![f32_data(words, seed).into()],
                expected: vec![Expected::Exact(Words::made(words, expected))],
            }
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_sweep_is_nine_sizes_from_4_kib_to_256_mib_plus_the_batch() {
        let shapes = shapes(&Sizing::nominal(false));
        assert_eq!(shapes.len(), 10);
        assert_eq!(
            shapes[0],
            Shape {
                bytes: 4096,
                chunks: 1
            }
        );
        assert_eq!(
            shapes[8],
            Shape {
                bytes: 256 << 20,
                chunks: 1
            }
        );
        assert!(
            shapes
                .windows(2)
                .take(8)
                .all(|w| w[1].bytes == 4 * w[0].bytes)
        );
        // The batching pair: the same bytes in one transfer and in 1024 of 4 KiB.
        let batch = shapes[9];
        assert_eq!(batch.chunk_bytes(), 4096);
        assert!(shapes.contains(&Shape {
            bytes: batch.bytes,
            chunks: 1
        }));
    }

    #[test]
    fn quick_and_software_runs_stop_early_and_device_limits_skip() {
        let quick = shapes(&Sizing::nominal(true));
        assert_eq!(quick.iter().map(|s| s.bytes).max(), Some(QUICK_MAX_BYTES));
        let software = Sizing {
            software: true,
            max_binding_bytes: 32 << 20,
            ..Sizing::nominal(false)
        };
        let cases = (UPLOAD_WRITE_BUFFER.cases)(&software);
        let largest = cases.iter().map(|c| c.elements * 4).max();
        assert_eq!(largest, Some(SOFTWARE_MAX_BYTES));
        for case in &cases {
            let beyond = case.elements * 4 > 32 << 20;
            assert_eq!(case.skip.is_some(), beyond, "{}", case.params);
        }
        let reason = size_skip(&software, 64 << 20).unwrap_or_default();
        assert!(reason.contains("largest buffer binding"), "{reason}");
    }

    #[test]
    fn mappable_storage_is_skipped_with_the_reason_where_not_offered() {
        let without = Sizing {
            mappable_storage: false,
            ..Sizing::nominal(true)
        };
        let cases = (UPLOAD_MAPPABLE.cases)(&without);
        assert!(!cases.is_empty());
        for case in cases {
            let reason = case.skip.unwrap_or_default();
            assert!(reason.contains("MAPPABLE_PRIMARY_BUFFERS"), "{reason}");
        }
        let with = (UPLOAD_MAPPABLE.cases)(&Sizing::nominal(true));
        assert!(with.iter().all(|c| c.skip.is_none()));
    }

    #[test]
    fn params_round_trip_and_bad_ones_are_refused() {
        for case in (UPLOAD_STAGING.cases)(&Sizing::nominal(false)) {
            assert_eq!(Shape::of(&case.params).map(Shape::params), Ok(case.params));
        }
        for bad in [
            "size=4096",
            "chunks=2",
            "size=4096x4096;chunks=1",
            "size=4096;chunks=0",
            "size=6;chunks=1",
        ] {
            let params = bad.parse().unwrap();
            assert!(Shape::of(&params).is_err(), "{bad}");
        }
    }

    #[test]
    fn copy_threads_are_fixed_cases_at_the_largest_size_skipped_beyond_the_cores() {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        for sizing in [Sizing::nominal(false), Sizing::nominal(true)] {
            let cases = (READBACK_THREADS.cases)(&sizing);
            let params =
                |cases: Vec<Case>| -> Vec<Params> { cases.into_iter().map(|c| c.params).collect() };
            assert_eq!(
                params((UPLOAD_STAGING_THREADS.cases)(&sizing)),
                params((READBACK_THREADS.cases)(&sizing))
            );
            let threads: Vec<usize> = cases
                .iter()
                .map(|c| copy_threads(&c.params).unwrap())
                .collect();
            assert_eq!(threads, [1, 4, 16]);
            for (case, threads) in cases.iter().zip(threads) {
                let shape = Shape::of(&case.params).unwrap();
                assert_eq!((shape.bytes, shape.chunks), (sweep_max_bytes(&sizing), 1));
                assert_eq!(case.skip.is_some(), threads > cores, "{}", case.params);
            }
        }
        assert!(copy_threads(&"size=4096;chunks=1".parse().unwrap()).is_err());
        assert!(copy_threads(&"size=4096;chunks=1;threads=0".parse().unwrap()).is_err());
    }

    #[test]
    fn device_copy_counts_read_and_write() {
        let cases = (DEVICE_COPY.cases)(&Sizing::nominal(true));
        assert!(cases.iter().all(|c| c.bytes == 2 * 4 * c.elements));
        let uploads = (UPLOAD_WRITE_BUFFER.cases)(&Sizing::nominal(true));
        assert!(uploads.iter().all(|c| c.bytes == 4 * c.elements));
    }

    #[test]
    fn overlap_chunks_are_aligned_and_the_reference_is_the_shader_mix() {
        for sizing in [Sizing::nominal(false), Sizing::nominal(true)] {
            for case in (OVERLAP_INTERLEAVED.cases)(&sizing) {
                let shape = Shape::of(&case.params).unwrap();
                assert!(shape.bytes <= OVERLAP_MAX_BYTES && shape.bytes > 0);
                assert_eq!(shape.chunk_bytes() % CHUNK_ALIGN_BYTES, 0);
                assert!(case.skip.is_none());
            }
        }
        assert_eq!(work(7, 0), 7);
        let once = 7u32.wrapping_mul(747_796_405).wrapping_add(2_891_336_453);
        assert_eq!(work(7, 1), once ^ (once >> 13));
        assert_ne!(work(7, WORK_ROUNDS), work(8, WORK_ROUNDS));
    }
}
