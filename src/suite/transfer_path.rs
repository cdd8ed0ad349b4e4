//! The transfer-path vocabulary: the ways bytes travel between host and device
//! ([`TransferPath`]), which backend has each, CUDA's own paths and host memory kinds,
//! and the order of an upload-and-process workload. The `transfer` family
//! ([`super::families::transfer`]) declares its cases in these words; the backends and
//! the simulator's transfer model act on them.

/// The ways bytes travel between host and device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TransferPath {
    /// `queue.write_buffer` into a storage buffer.
    WriteBuffer,
    /// A staging buffer created mapped, filled, unmapped and copied; `pooled`: one kept
    /// and mapped again after each use instead of a fresh one per transfer.
    Staging {
        /// One buffer kept and mapped again, instead of a fresh one each time.
        pooled: bool,
    },
    /// A pooled staging buffer (as `Staging { pooled: true }`) that `threads=` host
    /// threads fill, each its own part.
    StagingThreads,
    /// Storage the host maps and fills directly (`MAP_WRITE | STORAGE`, which needs
    /// `Features::MAPPABLE_PRIMARY_BUFFERS`).
    MappableStorage,
    /// `copy_buffer_to_buffer` from page-aligned host memory imported as a buffer
    /// (`VK_EXT_external_memory_host`): wgpu's analogue of a pinned `cudaMemcpy`.
    ImportedUpload,
    /// `copy_buffer_to_buffer` into imported host memory, which the host then reads.
    ImportedReadback,
    /// A kernel reads imported host memory bound as storage and writes device storage
    /// (zero-copy): wgpu's analogue of CUDA's [`CudaPath::MappedRead`].
    ImportedKernelRead,
    /// Both directions at once, every chunk up and down in one submission (wgpu: from
    /// and into imported host memory; CUDA: pinned memory, the two directions on two
    /// streams).
    Duplex,
    /// A copy into a mapped staging buffer, mapped and read by the host.
    Readback,
    /// The same, read by `threads=` host threads, each its own part; the copy from the
    /// GPU and the host's copy-out are timed apart too.
    ReadbackThreads,
    /// `copy_buffer_to_buffer` between two storage buffers (CUDA: `cuMemcpyDtoDAsync`).
    DeviceCopy,
    /// The same between buffers no kernel may bind (`COPY_SRC | COPY_DST`, no
    /// `STORAGE`): whether the usage, and with it the memory wgpu-hal picks, sets the
    /// copy's rate.
    DeviceCopyUnbound,
    /// The same two storage buffers copied by a kernel (`transfer_work`, no rounds):
    /// the SMs' copy beside `vkCmdCopyBuffer`'s.
    DeviceCopyKernel,
    /// Chunks each uploaded and then processed by the experiment's kernel (CUDA: on
    /// streams, from pinned memory).
    Overlap(Schedule),
    /// A path only CUDA has.
    Cuda(CudaPath),
}

impl TransferPath {
    /// Whether wgpu has this path (and CUDA too: both measure it, as rows of their api).
    pub fn in_wgpu(self) -> bool {
        !matches!(self, TransferPath::Cuda(_))
    }

    /// Whether CUDA has this path.
    #[cfg(feature = "cuda")]
    pub(crate) fn in_cuda(self) -> bool {
        matches!(
            self,
            TransferPath::DeviceCopy
                | TransferPath::Duplex
                | TransferPath::Overlap(_)
                | TransferPath::Cuda(_)
        )
    }
}

/// CUDA's own host↔device paths: the `bandwidthTest` memory kinds and zero-copy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CudaPath {
    /// `cuMemcpyHtoDAsync` per chunk from host memory of this kind.
    Upload(HostMemory),
    /// `cuMemcpyDtoHAsync` per chunk into host memory of this kind.
    Readback(HostMemory),
    /// A kernel reads pinned host memory mapped into the device's address space
    /// (zero-copy) and writes device memory: the bus at the kernel's own access pattern.
    MappedRead,
}

/// Host memory as CUDA copies from or into it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HostMemory {
    /// Ordinary (pageable) memory: the driver stages it through pinned buffers of its
    /// own.
    Pageable,
    /// Page-locked memory from `cuMemHostAlloc`: the copy engines read it directly.
    Pinned,
    /// Ordinary memory page-locked for the transfer by `cuMemHostRegister` (on the
    /// clock, with its unregistering): what pinning on demand costs.
    Registered,
}

/// The order of a chunked upload-and-process workload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Schedule {
    /// Every chunk uploaded, then every chunk processed.
    Serial,
    /// Chunk by chunk: upload, then process, each chunk in its own submission.
    Interleaved,
}
