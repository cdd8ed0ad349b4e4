//! The transfer model: the time of a host↔device transfer from physical terms, for the
//! `transfer` family's rows, which run no kernel for [`super::model`] to trace.
//!
//! A transfer of `bytes` in `chunks` chunks costs the sum of:
//!
//! - **submission**: submitting the work and the host seeing it finish, once per
//!   transfer ([`ApiCosts::submit_us`]), on the host clock;
//! - **commands**: each further copy of a batch ([`ApiCosts::next_copy_us`]) on the host
//!   clock, each command ([`ApiCosts::command_us`]) on the GPU clock;
//! - **link**: the bytes over the link's rate, for each time they cross the bus by DMA
//!   ([`ApiCosts::link_gbps`]), or a kernel's reads of host memory at the bus's rate
//!   for 128-byte read completions ([`crate::sim::link::READ_COMPLETION_SHARE`]);
//! - **host copy**: the bytes over the host's copy rate, for each copy a host thread
//!   makes ([`HOST_COPY_GBPS_PER_THREAD`] a thread; several threads up to the link,
//!   where they write across it, or up to [`HOST_MEMORY_GBPS`]);
//! - **device copy**: `2 × bytes` (read and write) over the api's device copy rate
//!   ([`ApiCosts::device_copy_gbps`]; the DRAM's where it is not measured).
//! - **registration**: page-locking pageable memory on the clock, once per transfer
//!   ([`ApiCosts::register_us`]), and [`PIN_US_PER_PAGE`] for each of its pages.
//!
//! Which terms a path pays comes from what its code does
//! (`crate::backend::wgpu::transfer`, `crate::backend::cuda::transfer`), not from its
//! rows. The largest term names the bound. At most four rows per api calibrate the
//! terms ([`crate::calibrate::CALIBRATION`]); every other row is held out.

use crate::sim::device::DeviceModel;
use crate::sim::link::{
    ApiCosts, HOST_CACHE_BYTES, HOST_CACHED_COPY_GBPS_PER_THREAD, HOST_COPY_GBPS_PER_THREAD,
    HOST_PAGE_BYTES, PIN_US_PER_PAGE, READ_COMPLETION_SHARE,
};
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
    /// The submission and its wait.
    pub(crate) overhead_s: f64,
    /// Commands and further copies of a batch.
    pub(crate) commands_s: f64,
    pub(crate) link_s: f64,
    pub(crate) host_s: f64,
    pub(crate) device_s: f64,
    /// Registering host memory: the driver calls' fixed cost (its pages are host time).
    pub(crate) register_s: f64,
}

impl TransferTime {
    pub(crate) fn total_s(&self) -> f64 {
        self.overhead_s
            + self.commands_s
            + self.link_s
            + self.host_s
            + self.device_s
            + self.register_s
    }

    /// The term that takes longest (fixed costs, submission, commands and
    /// registration, together).
    pub fn bound(&self) -> Bound {
        [
            (
                Bound::Overhead,
                self.overhead_s + self.commands_s + self.register_s,
            ),
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
            commands_s: k * self.commands_s,
            link_s: k * self.link_s,
            host_s: k * self.host_s,
            device_s: k * self.device_s,
            register_s: k * self.register_s,
        }
    }

    fn plus(self, other: TransferTime) -> TransferTime {
        TransferTime {
            overhead_s: self.overhead_s + other.overhead_s,
            commands_s: self.commands_s + other.commands_s,
            link_s: self.link_s + other.link_s,
            host_s: self.host_s + other.host_s,
            device_s: self.device_s + other.device_s,
            register_s: self.register_s + other.register_s,
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

/// What a host copy reads.
#[derive(Clone, Copy, PartialEq)]
enum Source {
    /// The host's own data.
    Host,
    /// Memory the device just wrote by DMA.
    Dma,
}

/// The terms one api pays, as functions of bytes and counts.
struct Charges<'a> {
    model: &'a DeviceModel,
    costs: &'a ApiCosts,
}

impl Charges<'_> {
    fn submit(&self) -> TransferTime {
        TransferTime {
            overhead_s: self.costs.submit_us * 1e-6,
            ..TransferTime::default()
        }
    }

    /// `copies` copies in one submission or stream: each after the first costs
    /// [`ApiCosts::next_copy_us`].
    fn batch(&self, copies: f64) -> TransferTime {
        let each = self.costs.next_copy_us.unwrap_or(self.costs.command_us);
        TransferTime {
            commands_s: (copies - 1.0).max(0.0) * each * 1e-6,
            ..TransferTime::default()
        }
    }

    /// `commands` commands on the GPU clock.
    fn commands(&self, commands: f64) -> TransferTime {
        TransferTime {
            commands_s: commands * self.costs.command_us * 1e-6,
            ..TransferTime::default()
        }
    }

    fn link(&self, bytes: f64) -> TransferTime {
        let gbps = self.costs.link_gbps.unwrap_or(self.model.link_gbps);
        TransferTime {
            link_s: bytes / (gbps * 1e9),
            ..TransferTime::default()
        }
    }

    /// A kernel's reads of host memory: 128-byte read completions across the bus.
    fn kernel_reads(&self, bytes: f64) -> TransferTime {
        TransferTime {
            link_s: bytes / (self.model.link_gbps * READ_COMPLETION_SHARE * 1e9),
            ..TransferTime::default()
        }
    }

    /// `threads` host threads copying `bytes`; `across_link`: they write across it
    /// (into device-local memory the host maps), so the link caps them. `from`: what
    /// they read. The host's own data, where it fits the host's last-level cache, is
    /// read from there (a sample's repeats copy the same source); what the device
    /// wrote by DMA is read from memory.
    fn host(&self, bytes: f64, threads: usize, across_link: bool, from: Source) -> TransferTime {
        let per_thread = if from == Source::Host && bytes <= HOST_CACHE_BYTES {
            HOST_CACHED_COPY_GBPS_PER_THREAD
        } else {
            HOST_COPY_GBPS_PER_THREAD
        };
        self.host_at(bytes, per_thread, threads, across_link)
    }

    /// `threads` host threads copying `bytes` at `per_thread` GB/s each.
    fn host_at(
        &self,
        bytes: f64,
        per_thread: f64,
        threads: usize,
        across_link: bool,
    ) -> TransferTime {
        let rate = (threads as f64 * per_thread).min(if across_link {
            self.model.link_gbps
        } else {
            HOST_MEMORY_GBPS
        });
        TransferTime {
            host_s: bytes / (rate * 1e9),
            ..TransferTime::default()
        }
    }

    /// Page-locking `bytes` of pageable memory and releasing them: the driver calls,
    /// then each page pinned and unpinned on the host.
    fn register(&self, bytes: f64) -> TransferTime {
        TransferTime {
            register_s: self.costs.register_us * 1e-6,
            host_s: (bytes / HOST_PAGE_BYTES).ceil() * PIN_US_PER_PAGE * 1e-6,
            ..TransferTime::default()
        }
    }

    /// A copy of `bytes` within device memory at `gbps` (read and write).
    fn device_at(bytes: f64, gbps: f64) -> TransferTime {
        TransferTime {
            device_s: 2.0 * bytes / (gbps * 1e9),
            ..TransferTime::default()
        }
    }

    /// A copy at the memory's own rate: the DRAM's, or the L2's where the bytes read
    /// and written fit it (a sample's repeats find them there).
    fn memory_copy(&self, bytes: f64) -> TransferTime {
        let gbps = if 2.0 * bytes <= self.model.l2_bytes as f64 {
            self.model.l2_gbps
        } else {
            self.model.dram_gbps
        };
        Self::device_at(bytes, gbps)
    }

    /// A copy command within device memory: at the api's measured rate, else the
    /// memory's.
    fn device_copy(&self, bytes: f64) -> TransferTime {
        match self.costs.device_copy_gbps {
            Some(gbps) => Self::device_at(bytes, gbps),
            None => self.memory_copy(bytes),
        }
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
    let t = Charges {
        model,
        costs: model.transfer.of(api),
    };
    let k = f64::from(shape.chunks);
    let chunk = shape.chunk_bytes();
    let bytes = k * chunk as f64;
    // A host copy into memory the device reads: wgpu-hal asks for `MAP_WRITE` buffers
    // both host-visible and device-local, so the host writes across the link.
    let fill = |threads| t.host(bytes, threads, true, Source::Host);
    // A host copy within host memory out of what the device wrote (a mapped readback
    // buffer, which wgpu-hal asks to be host-cached; the driver's pinned staging).
    let copy_out = |threads| t.host(bytes, threads, false, Source::Dma);
    // One submission of `copies` copies.
    let submitted = |copies| t.submit().plus(t.batch(copies));
    // Filled staging copied on the device in one submission.
    let staged = |threads| submitted(k).plus(fill(threads)).plus(t.device_copy(bytes));
    // Staging allocated on the clock, more than the blocks wgpu-hal shares hold
    // (`crate::suite::sizing::SHARED_BLOCK_BYTES`), gets memory of its own: fresh
    // pages the host touches first, each zeroed by the kernel, taken as one more pass
    // at a thread's rate from memory (fresh pages are in no cache).
    let fresh = if bytes > crate::suite::sizing::SHARED_BLOCK_BYTES as f64 {
        t.host_at(bytes, HOST_COPY_GBPS_PER_THREAD, 1, true)
    } else {
        TransferTime::default()
    };
    Ok(match path {
        // The bytes copied by the host into staging (across the link), then copied on
        // the device into the storage buffer; one submission and wait. `write_buffer`
        // and unpooled staging allocate their staging on the clock.
        TransferPath::WriteBuffer => staged(1).plus(fresh),
        // A buffer created mapped is zeroed by wgpu-core before the host sees it
        // (`map_buffer` fills the ranges not yet initialized, wgpu-core 30
        // `device/mod.rs`): one more pass across the link, which reads nothing, so no
        // miss waits on memory: at the cached rate.
        TransferPath::Staging { pooled: false } => {
            staged(1)
                .plus(fresh)
                .plus(t.host_at(bytes, HOST_CACHED_COPY_GBPS_PER_THREAD, 1, true))
        }
        TransferPath::Staging { pooled: true } => staged(1),
        TransferPath::StagingThreads => staged(threads),
        // Mapped, filled and unmapped: the host's copy alone, no submission.
        TransferPath::MappableStorage => fill(1),
        // The copy engine reads or writes the host's pages: DMA alone.
        TransferPath::ImportedUpload
        | TransferPath::ImportedReadback
        | TransferPath::Cuda(CudaPath::Upload(HostMemory::Pinned))
        | TransferPath::Cuda(CudaPath::Readback(HostMemory::Pinned)) => {
            submitted(k).plus(t.link(bytes))
        }
        // A DMA into the mapped staging buffer (host memory), then the host's copy out.
        TransferPath::Readback => submitted(k).plus(t.link(bytes)).plus(copy_out(1)),
        TransferPath::ReadbackThreads => submitted(k).plus(t.link(bytes)).plus(copy_out(threads)),
        // GPU clock: a command per chunk and the copy.
        TransferPath::DeviceCopy | TransferPath::DeviceCopyUnbound => {
            t.commands(k).plus(t.device_copy(bytes))
        }
        // A kernel's copy runs at the memory's rate.
        TransferPath::DeviceCopyKernel => t.commands(k).plus(t.memory_copy(bytes)),
        // Both directions. wgpu's one queue runs the two directions' copies one after
        // the other; CUDA's two streams run them at once over the full-duplex link
        // (the row counts both).
        TransferPath::Duplex if api == Api::Cuda => submitted(2.0 * k).plus(t.link(bytes)),
        TransferPath::Duplex => submitted(2.0 * k).plus(t.link(2.0 * bytes)),
        // A kernel reads the host's pages across the link (GPU clock).
        TransferPath::Cuda(CudaPath::MappedRead) => t.commands(k).plus(t.kernel_reads(bytes)),
        // Imported host memory is cached in the L2 between the dispatches of a sample
        // (the rows measured so: docs/simulator.md, Transfers): where the lines read
        // fit the SMs' L2 partition, the reads after the first come from there and
        // the kernel copies at the memory's rate.
        TransferPath::ImportedKernelRead => {
            let partition = model.l2_bytes as f64 / f64::from(model.l2_partitions.max(1));
            let copy = if bytes <= partition {
                t.memory_copy(bytes)
            } else {
                t.kernel_reads(bytes)
            };
            t.commands(k).plus(copy)
        }
        // The driver copies pageable memory through pinned staging of its own in
        // pieces, the host's copy of one piece beside the DMA of the last: the slower
        // of the two. Uploads copy the host's data, readbacks what the DMA wrote.
        TransferPath::Cuda(CudaPath::Upload(HostMemory::Pageable))
        | TransferPath::Cuda(CudaPath::Readback(HostMemory::Pageable)) => {
            let from = match path {
                TransferPath::Cuda(CudaPath::Upload(_)) => Source::Host,
                _ => Source::Dma,
            };
            let (link, copy) = (t.link(bytes), t.host(bytes, 1, false, from));
            submitted(k).plus(if link.link_s > copy.host_s {
                link
            } else {
                copy
            })
        }
        // Registering pins the pages on the clock (and releases them after); then DMA.
        TransferPath::Cuda(CudaPath::Upload(HostMemory::Registered))
        | TransferPath::Cuda(CudaPath::Readback(HostMemory::Registered)) => {
            submitted(k).plus(t.register(bytes)).plus(t.link(bytes))
        }
        TransferPath::Overlap(schedule) => {
            // The uploads alone: wgpu by `write_buffer` (one submission), CUDA from
            // pinned memory (one stream).
            let uploads = match api {
                Api::Cuda => submitted(k).plus(t.link(bytes)),
                _ => staged(1).plus(fresh),
            };
            match schedule {
                // The kernels are sized to take as long as the uploads alone: all
                // uploads, then all kernels.
                Schedule::Serial => uploads.times(2.0),
                // CUDA's streams overlap each chunk's kernel with the next chunk's
                // copy: one chunk's copy and its kernel are left over.
                Schedule::Interleaved if api == Api::Cuda => {
                    uploads.plus(t.submit()).plus(t.link(chunk as f64))
                }
                // One queue: only the host's copy of the next chunk hides behind the
                // kernel of the last.
                Schedule::Interleaved => uploads.times(2.0).plus(TransferTime {
                    host_s: -(k - 1.0) / k * uploads.host_s,
                    ..TransferTime::default()
                }),
            }
        }
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
    fn pinned_is_the_submission_plus_the_bytes_over_the_link() {
        let h100 = preset("h100").unwrap();
        for bytes in [4096, 256 << 20] {
            let expected =
                h100.transfer.cuda.submit_us * 1e-6 + bytes as f64 / (h100.link_gbps * 1e9);
            assert!((t(PINNED, Api::Cuda, bytes) - expected).abs() < 1e-12);
        }
        let large = time(h100, PINNED, Api::Cuda, &params(256 << 20, 1)).unwrap();
        assert_eq!(large.bound(), Bound::Link);
        let small = time(h100, PINNED, Api::Cuda, &params(4096, 1)).unwrap();
        assert_eq!(small.bound(), Bound::Overhead);
    }

    #[test]
    fn each_api_pays_its_own_costs() {
        let mut model = *preset("h100").unwrap();
        let cuda = t(TransferPath::DeviceCopy, Api::Cuda, 4096);
        model.transfer.wgpu.command_us = 1000.0;
        model.transfer.wgpu.submit_us = 1000.0;
        let at = |api, path| time(&model, path, api, &params(4096, 1)).unwrap().total_s();
        // wgpu's costs move wgpu's rows alone.
        assert_eq!(at(Api::Cuda, TransferPath::DeviceCopy), cuda);
        assert!(at(Api::Wgpu, TransferPath::DeviceCopy) > 1e-3);
        assert!(at(Api::Wgpu, TransferPath::ImportedUpload) > 1e-3);
        assert!(at(Api::Cuda, PINNED) < 1e-4);
        // A measured wgpu link rate and device copy rate replace the bus's and the DRAM's.
        model.transfer.wgpu.link_gbps = Some(model.link_gbps / 2.0);
        model.transfer.wgpu.device_copy_gbps = Some(model.dram_gbps / 4.0);
        let big = |api, path| {
            time(&model, path, api, &params(256 << 20, 1))
                .unwrap()
                .total_s()
        };
        let link = |api| big(api, TransferPath::Duplex);
        assert!(link(Api::Wgpu) > 3.5 * link(Api::Cuda));
        let copy = |api| big(api, TransferPath::DeviceCopy);
        assert!(copy(Api::Wgpu) > 3.9 * copy(Api::Cuda));
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
        // The driver's staging copy hides behind the DMA or the DMA behind it, not both.
        let h100 = preset("h100").unwrap();
        let bytes = 256u64 << 20;
        let host = bytes as f64 / (HOST_COPY_GBPS_PER_THREAD * 1e9);
        let pageable = t(PAGEABLE, Api::Cuda, bytes) - h100.transfer.cuda.submit_us * 1e-6;
        assert!((pageable - host).abs() < 1e-12, "{pageable} {host}");
        // More threads never slower, and capped.
        let threaded = |n: u64| {
            let p = params(bytes, 1).with(crate::suite::Key::Threads, n);
            time(h100, TransferPath::StagingThreads, Api::Wgpu, &p)
                .unwrap()
                .total_s()
        };
        assert!(threaded(2) < threaded(1) && threaded(16) <= threaded(8));
        assert_eq!(threaded(16), threaded(64));
    }

    #[test]
    fn staging_over_the_shared_blocks_pays_a_pass_over_fresh_pages() {
        let extra = |bytes: u64, chunks| {
            let h100 = preset("h100").unwrap();
            let at = |path| {
                time(h100, path, Api::Wgpu, &params(bytes, chunks))
                    .unwrap()
                    .total_s()
            };
            at(TransferPath::WriteBuffer) - at(TransferPath::Staging { pooled: true })
        };
        let shared = crate::suite::sizing::SHARED_BLOCK_BYTES;
        assert_eq!(extra(shared, 1), 0.0);
        assert_eq!(extra(shared, 1024), 0.0);
        let pass = 4.0 * shared as f64 / (HOST_COPY_GBPS_PER_THREAD * 1e9);
        assert!((extra(4 * shared, 1) - pass).abs() < 1e-12);
    }

    #[test]
    fn registering_costs_the_driver_calls_once_and_each_page_pinned() {
        let h100 = preset("h100").unwrap();
        let registered = TransferPath::Cuda(CudaPath::Upload(HostMemory::Registered));
        for bytes in [4096u64, 1 << 20, 256 << 20] {
            let extra = t(registered, Api::Cuda, bytes) - t(PINNED, Api::Cuda, bytes);
            let pages = bytes as f64 / HOST_PAGE_BYTES;
            let expected = (h100.transfer.cuda.register_us + pages * PIN_US_PER_PAGE) * 1e-6;
            assert!(
                (extra - expected).abs() < 1e-12,
                "{bytes}: {extra} {expected}"
            );
        }
        // The calls' fixed cost is a term of its own, which calibration sets alone.
        let small = time(h100, registered, Api::Cuda, &params(4096, 1)).unwrap();
        assert_eq!(small.register_s, h100.transfer.cuda.register_us * 1e-6);
        assert_eq!(small.bound(), Bound::Overhead);
        let large = time(h100, registered, Api::Cuda, &params(256 << 20, 1)).unwrap();
        assert_eq!(large.bound(), Bound::HostCopy);
    }

    #[test]
    fn the_hosts_own_data_is_copied_faster_where_its_cache_holds_it() {
        let rate = |path, bytes: u64| bytes as f64 / t(path, Api::Wgpu, bytes) / 1e9;
        let cached = 16u64 << 20;
        assert!(cached as f64 <= HOST_CACHE_BYTES && (4 * cached) as f64 > HOST_CACHE_BYTES);
        // Mapped storage is the host's copy alone.
        let mappable = TransferPath::MappableStorage;
        assert!((rate(mappable, cached) - HOST_CACHED_COPY_GBPS_PER_THREAD).abs() < 1e-9);
        assert!((rate(mappable, 4 * cached) - HOST_COPY_GBPS_PER_THREAD).abs() < 1e-9);
        // What the device wrote by DMA comes from memory at any size: a readback's
        // copy-out, and the pageable readback's, as against the pageable upload's.
        let h100 = preset("h100").unwrap();
        let copy_out = |path| {
            let p = time(h100, path, Api::Wgpu, &params(cached, 1)).unwrap();
            cached as f64 / p.host_s / 1e9
        };
        assert!((copy_out(TransferPath::Readback) - HOST_COPY_GBPS_PER_THREAD).abs() < 1e-9);
        let pageable = |path| t(path, Api::Cuda, cached);
        let readback = TransferPath::Cuda(CudaPath::Readback(HostMemory::Pageable));
        assert!(pageable(PAGEABLE) < pageable(readback));
    }

    #[test]
    fn unpooled_staging_pays_wgpus_zeroing_of_a_buffer_created_mapped() {
        let at = |path, bytes| t(path, Api::Wgpu, bytes);
        let bytes = 1u64 << 20;
        let extra = at(TransferPath::Staging { pooled: false }, bytes)
            - at(TransferPath::Staging { pooled: true }, bytes);
        let zeroing = bytes as f64 / (HOST_CACHED_COPY_GBPS_PER_THREAD * 1e9);
        assert!((extra - zeroing).abs() < 1e-12, "{extra} {zeroing}");
        // `write_buffer`'s staging is written at once, never zeroed.
        assert_eq!(
            at(TransferPath::WriteBuffer, bytes),
            at(TransferPath::Staging { pooled: true }, bytes)
        );
    }

    #[test]
    fn kernels_read_host_memory_at_the_read_completions_share_unless_the_l2_holds_it() {
        let h100 = preset("h100").unwrap();
        let bytes = 256u64 << 20;
        let read = |path, api, bytes| {
            let t = time(h100, path, api, &params(bytes, 1)).unwrap();
            t.total_s() - h100.transfer.of(api).command_us * 1e-6
        };
        let cuda = read(TransferPath::Cuda(CudaPath::MappedRead), Api::Cuda, bytes);
        let bus = bytes as f64 / (h100.link_gbps * 1e9);
        assert!((cuda / bus - 1.0 / READ_COMPLETION_SHARE).abs() < 1e-9);
        assert!((0.9..0.93).contains(&READ_COMPLETION_SHARE));
        // Past the L2 partition wgpu's imported memory crosses the bus as CUDA's does;
        // within it, it is read from the L2.
        assert_eq!(
            read(TransferPath::ImportedKernelRead, Api::Wgpu, bytes),
            cuda
        );
        let small = 4u64 << 20;
        let cached = read(TransferPath::ImportedKernelRead, Api::Wgpu, small);
        let uncached = read(TransferPath::Cuda(CudaPath::MappedRead), Api::Cuda, small);
        assert!(cached < uncached / 10.0, "{cached} {uncached}");
    }

    #[test]
    fn batches_pay_one_submission_and_further_copies_and_overlap_hides_part_of_the_uploads() {
        let h100 = preset("h100").unwrap();
        let many = time(h100, PINNED, Api::Cuda, &params(4 << 20, 1024)).unwrap();
        let cuda = &h100.transfer.cuda;
        let expected = (cuda.submit_us + 1023.0 * cuda.next_copy_us.unwrap()) * 1e-6
            + (4 << 20) as f64 / (h100.link_gbps * 1e9);
        assert!((many.total_s() - expected).abs() < 1e-12);
        // wgpu's further copies are commands; on the GPU clock each chunk is one.
        let wgpu = &h100.transfer.wgpu;
        let copies = time(
            h100,
            TransferPath::DeviceCopy,
            Api::Wgpu,
            &params(4 << 20, 1024),
        )
        .unwrap()
        .commands_s;
        assert!((copies - 1024.0 * wgpu.command_us * 1e-6).abs() < 1e-12);
        let staged = time(
            h100,
            TransferPath::Staging { pooled: true },
            Api::Wgpu,
            &params(4 << 20, 1024),
        )
        .unwrap();
        assert!((staged.commands_s - 1023.0 * wgpu.command_us * 1e-6).abs() < 1e-12);
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
