//! The transfer model: the time of a host↔device transfer from physical terms, for the
//! `transfer` family's rows, which run no kernel for [`super::model`] to trace.
//!
//! A transfer of `chunks` chunks of `S` bytes each costs, per chunk, the sum of:
//!
//! - **overhead**: a fixed cost per transfer (the call, the DMA's setup, the host
//!   seeing it complete), `DeviceModel::transfer_overhead_us`;
//! - **link**: `S` over the link's rate, `DeviceModel::link_gbps`, for each time the
//!   bytes cross the bus by DMA;
//! - **host copy**: `S` over the host's copy rate, for each copy a host thread makes
//!   ([`HOST_COPY_GBPS_PER_THREAD`] a thread; several threads up to the link, where
//!   they write across it, or up to [`HOST_MEMORY_GBPS`]);
//! - **device copy**: `2 S` (read and write) over the device's DRAM bandwidth, for a
//!   copy within the device.
//!
//! Which terms a path pays comes from what its code does
//! (`crate::backend::wgpu::transfer`, `crate::backend::cuda::transfer`), not from its
//! rows. The largest term names the bound. Two rows calibrate the model
//! ([`crate::calibrate::CALIBRATION`]): CUDA `upload_pinned` at 256 MiB sets the link
//! rate, and at 4 KiB the overhead.

use crate::sim::device::DeviceModel;
use crate::sim::link::HOST_COPY_GBPS_PER_THREAD;
use crate::sim::model::{Bound, Prediction, Terms};
use crate::suite::families::transfer::{Shape, copy_threads};
use crate::suite::{Api, CudaPath, HostMemory, Params, Schedule, TransferPath};

/// The most host threads copy within host memory, GB/s. Estimate: one socket of
/// 8 DDR5-4800 channels (8 × 4.8 GT/s × 8 bytes = 307 GB/s), shared by a copy's read
/// and its write.
pub(crate) const HOST_MEMORY_GBPS: f64 = 150.0;

/// One transfer case's time, split into the model's terms, seconds.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct TransferTime {
    pub(crate) overhead_s: f64,
    pub(crate) link_s: f64,
    pub(crate) host_s: f64,
    pub(crate) device_s: f64,
}

impl TransferTime {
    pub(crate) fn total_s(&self) -> f64 {
        self.overhead_s + self.link_s + self.host_s + self.device_s
    }

    /// The term that takes longest.
    pub fn bound(&self) -> Bound {
        [
            (Bound::Overhead, self.overhead_s),
            (Bound::Link, self.link_s),
            (Bound::HostCopy, self.host_s),
            (Bound::Dram, self.device_s),
        ]
        .into_iter()
        .fold((Bound::None, 0.0), |best, (bound, t)| {
            if t > best.1 { (bound, t) } else { best }
        })
        .0
    }

    /// Each term × `k`.
    fn times(self, k: f64) -> TransferTime {
        TransferTime {
            overhead_s: k * self.overhead_s,
            link_s: k * self.link_s,
            host_s: k * self.host_s,
            device_s: k * self.device_s,
        }
    }

    fn plus(self, other: TransferTime) -> TransferTime {
        TransferTime {
            overhead_s: self.overhead_s + other.overhead_s,
            link_s: self.link_s + other.link_s,
            host_s: self.host_s + other.host_s,
            device_s: self.device_s + other.device_s,
        }
    }

    /// A prediction of `bytes` moved in this time (the kernel model's counts zero).
    pub fn prediction(&self, bytes: u64) -> Prediction {
        let time_s = self.total_s();
        Prediction {
            time_s,
            bound: self.bound(),
            effective_gbps: if time_s > 0.0 {
                bytes as f64 / time_s / 1e9
            } else {
                0.0
            },
            dram_read_bytes: 0,
            dram_write_bytes: 0,
            l2_sectors: 0,
            requests: 0,
            sectors_per_request: 0.0,
            sector_use: None,
            shared_wavefronts: 0,
            bank_ways: None,
            uniform_addresses: 0,
            uniform_addresses_per_request: None,
            simulated_workgroups: 0,
            total_workgroups: 0,
            counts: Default::default(),
            terms: Terms::default(),
        }
    }
}

/// The model's rates, in bytes per second, and its overhead.
struct Rates {
    overhead_s: f64,
    link: f64,
    device: f64,
}

impl Rates {
    fn of(model: &DeviceModel) -> Rates {
        Rates {
            overhead_s: model.transfer_overhead_us * 1e-6,
            link: model.link_gbps * 1e9,
            device: model.dram_gbps * 1e9,
        }
    }

    /// `threads` host threads' copy rate; `across_link`: they write across the link
    /// (into device-local memory the host maps), so the link caps it.
    fn host(&self, threads: usize, across_link: bool) -> f64 {
        let rate = threads as f64 * HOST_COPY_GBPS_PER_THREAD * 1e9;
        rate.min(if across_link {
            self.link
        } else {
            HOST_MEMORY_GBPS * 1e9
        })
    }
}

/// The time of one chunk of `s` bytes along `path` as `api` does it, with `threads`
/// host threads where the path has several.
fn chunk(r: &Rates, path: TransferPath, api: Api, s: f64, threads: usize) -> TransferTime {
    let overhead = TransferTime {
        overhead_s: r.overhead_s,
        ..TransferTime::default()
    };
    let link = TransferTime {
        link_s: s / r.link,
        ..TransferTime::default()
    };
    // A host copy into memory the device reads: wgpu-hal asks for `MAP_WRITE` buffers
    // both host-visible and device-local, so the host writes across the link.
    let host_across = |threads| TransferTime {
        host_s: s / r.host(threads, true),
        ..TransferTime::default()
    };
    // A host copy within host memory (out of a mapped readback buffer, which wgpu-hal
    // asks to be host-cached; into the driver's pinned staging).
    let host = |threads| TransferTime {
        host_s: s / r.host(threads, false),
        ..TransferTime::default()
    };
    let device = TransferTime {
        device_s: 2.0 * s / r.device,
        ..TransferTime::default()
    };
    match path {
        // The bytes copied by the host into a staging buffer (across the link), then
        // copied on the device into the storage buffer; one submission and wait.
        TransferPath::WriteBuffer | TransferPath::Staging { .. } => {
            overhead.plus(host_across(1)).plus(device)
        }
        TransferPath::StagingThreads => overhead.plus(host_across(threads)).plus(device),
        // Mapped, filled and unmapped: the host's copy alone, no submission.
        TransferPath::MappableStorage => host_across(1),
        // The copy engine reads or writes the host's pages: DMA alone.
        TransferPath::ImportedUpload
        | TransferPath::ImportedReadback
        | TransferPath::Cuda(CudaPath::Upload(HostMemory::Pinned))
        | TransferPath::Cuda(CudaPath::Readback(HostMemory::Pinned)) => overhead.plus(link),
        // A DMA into the mapped staging buffer (host memory), then the host's copy out.
        TransferPath::Readback => overhead.plus(link).plus(host(1)),
        TransferPath::ReadbackThreads => overhead.plus(link).plus(host(threads)),
        // GPU clock: the copy alone.
        TransferPath::DeviceCopy
        | TransferPath::DeviceCopyUnbound
        | TransferPath::DeviceCopyKernel => device,
        // Both directions at once over a full-duplex link: each direction's bytes in
        // one direction's time (the row counts both).
        TransferPath::Duplex => overhead.plus(link),
        // A kernel reads the host's pages across the link (GPU clock).
        TransferPath::Cuda(CudaPath::MappedRead) | TransferPath::ImportedKernelRead => link,
        // The driver copies pageable memory into pinned staging of its own, then DMAs
        // it. Registering pins the pages on the clock: a pass over them, taken as one
        // host copy's time.
        TransferPath::Cuda(CudaPath::Upload(HostMemory::Pageable | HostMemory::Registered))
        | TransferPath::Cuda(CudaPath::Readback(HostMemory::Pageable | HostMemory::Registered)) => {
            overhead.plus(host(1)).plus(link)
        }
        // One chunk's upload: wgpu by `write_buffer`, CUDA from pinned memory.
        TransferPath::Overlap(_) => match api {
            Api::Cuda => overhead.plus(link),
            _ => overhead.plus(host_across(1)).plus(device),
        },
    }
}

/// The time of the transfer case of `params` along `path`, as `api` runs it.
pub fn time(
    model: &DeviceModel,
    path: TransferPath,
    api: Api,
    params: &Params,
) -> Result<TransferTime, String> {
    let shape = Shape::of(params)?;
    let threads = match path {
        TransferPath::StagingThreads | TransferPath::ReadbackThreads => copy_threads(params)?,
        _ => 1,
    };
    let r = Rates::of(model);
    let k = f64::from(shape.chunks);
    let one = chunk(&r, path, api, shape.chunk_bytes() as f64, threads);
    let uploads = one.times(k);
    Ok(match path {
        // The kernels are sized to take as long as the uploads alone: all uploads, then
        // all kernels.
        TransferPath::Overlap(Schedule::Serial) => uploads.times(2.0),
        // CUDA's streams overlap each chunk's kernel with the next chunk's copy: the
        // last kernel alone is left over.
        TransferPath::Overlap(Schedule::Interleaved) if api == Api::Cuda => uploads.plus(one),
        // One queue: only the host's copy of the next chunk hides behind the kernel of
        // the last.
        TransferPath::Overlap(Schedule::Interleaved) => uploads.times(2.0).plus(TransferTime {
            host_s: -(k - 1.0) * one.host_s,
            ..TransferTime::default()
        }),
        _ => uploads,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::device::preset;

    fn params(bytes: u64, chunks: u32) -> Params {
        Shape { bytes, chunks }.params()
    }

    fn t(path: TransferPath, api: Api, bytes: u64) -> f64 {
        let h100 = preset("h100").unwrap();
        time(h100, path, api, &params(bytes, 1)).unwrap().total_s()
    }

    const PINNED: TransferPath = TransferPath::Cuda(CudaPath::Upload(HostMemory::Pinned));
    const PAGEABLE: TransferPath = TransferPath::Cuda(CudaPath::Upload(HostMemory::Pageable));

    #[test]
    fn pinned_is_the_overhead_plus_the_bytes_over_the_link() {
        let h100 = preset("h100").unwrap();
        for bytes in [4096, 256 << 20] {
            let expected = 10e-6 + bytes as f64 / (h100.link_gbps * 1e9);
            assert!((t(PINNED, Api::Cuda, bytes) - expected).abs() < 1e-12);
        }
        let large = time(h100, PINNED, Api::Cuda, &params(256 << 20, 1)).unwrap();
        assert_eq!(large.bound(), Bound::Link);
        let small = time(h100, PINNED, Api::Cuda, &params(4096, 1)).unwrap();
        assert_eq!(small.bound(), Bound::Overhead);
    }

    #[test]
    fn more_host_copies_never_predict_faster_and_pageable_is_slower_than_pinned() {
        for bytes in [4096u64, 1 << 20, 256 << 20] {
            let pinned = t(PINNED, Api::Cuda, bytes);
            assert!(t(PAGEABLE, Api::Cuda, bytes) > pinned, "{bytes}");
            // The imported paths DMA the host's pages; the staged ones copy first.
            let imported = t(TransferPath::ImportedUpload, Api::Wgpu, bytes);
            for staged in [
                TransferPath::WriteBuffer,
                TransferPath::Staging { pooled: true },
            ] {
                assert!(
                    t(staged, Api::Wgpu, bytes) >= imported,
                    "{staged:?} {bytes}"
                );
            }
            let readback = t(TransferPath::Readback, Api::Wgpu, bytes);
            assert!(readback > t(TransferPath::ImportedReadback, Api::Wgpu, bytes));
        }
        // More threads never slower, and capped.
        let h100 = preset("h100").unwrap();
        let threaded = |n: u64| {
            let p = params(256 << 20, 1).with(crate::suite::Key::Threads, n);
            time(h100, TransferPath::StagingThreads, Api::Wgpu, &p)
                .unwrap()
                .total_s()
        };
        assert!(threaded(2) < threaded(1) && threaded(16) <= threaded(8));
        assert_eq!(threaded(16), threaded(64));
    }

    #[test]
    fn batches_pay_the_overhead_per_chunk_and_overlap_hides_part_of_the_uploads() {
        let h100 = preset("h100").unwrap();
        let one = time(h100, PINNED, Api::Cuda, &params(4096, 1)).unwrap();
        let many = time(h100, PINNED, Api::Cuda, &params(4 << 20, 1024)).unwrap();
        assert!((many.total_s() - 1024.0 * one.total_s()).abs() < 1e-12);
        for api in [Api::Wgpu, Api::Cuda] {
            let of = |schedule| {
                time(
                    h100,
                    TransferPath::Overlap(schedule),
                    api,
                    &params(64 << 20, 4),
                )
                .unwrap()
                .total_s()
            };
            assert!(of(Schedule::Interleaved) < of(Schedule::Serial), "{api}");
        }
    }
}
