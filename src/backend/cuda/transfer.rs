//! Host ↔ device transfers through CUDA: the `transfer` family's paths that CUDA has
//! ([`crate::suite::families::transfer`] declares them), each verified and timed as
//! the wgpu paths are (see [`crate::backend::wgpu::transfer`]):
//!
//! - uploads, `cuMemcpyHtoDAsync` per chunk, from pageable memory (the case's own data:
//!   the driver stages it), from `cuMemHostAlloc` memory filled off the clock, or from
//!   the pageable data page-locked by `cuMemHostRegister` for the transfer and released
//!   after it, both on the clock; readbacks, `cuMemcpyDtoHAsync` per chunk, into
//!   pageable or pinned memory. Host clock, from the first call until the stream is done.
//! - both directions at once: pinned memory up on one stream and down on another, host
//!   clock until both are done.
//! - the device copy: `cuMemcpyDtoDAsync` per chunk between two events (GPU clock).
//! - the zero-copy read: `transfer_work`'s twin with no rounds (a copy) reads pinned
//!   host memory mapped into the device's address space and writes device memory,
//!   between two events (GPU clock).
//! - the overlap workload: chunks copied from pinned memory and processed by
//!   `transfer_work`'s twin; serial on one stream, interleaved with chunk i on stream
//!   i mod [`OVERLAP_STREAMS`], so that the copy engines work beside the kernels.
//!
//! Every path is verified before it is timed: the destination is cleared (the data
//! never holds a zero word), one transfer runs, and what arrived is compared with what
//! was sent (or, for the overlap, with the kernel's reference), bit for bit.

use std::ffi::c_void;
use std::sync::Arc;
use std::time::Instant;

use cudarc::driver::sys::{self, CUdeviceptr};
use cudarc::driver::{
    CudaFunction, CudaSlice, CudaStream, DevicePtr, LaunchConfig, PinnedHostSlice, PushKernelArg,
};

use super::compile::Program;
use super::{Cuda, driver_error};
use crate::backend::transfer::{self, Payload, Phase};
use crate::error::{Error, Result};
use crate::measure::{Sampler, Timer, Timing};
use crate::suite::{
    Case, CaseData, CudaBuild, CudaPath, Experiment, HostMemory, Schedule, TransferPath,
};

/// Streams the interleaved overlap schedule spreads its chunks over.
const OVERLAP_STREAMS: usize = 4;

/// Verifies and times one transfer case along `path`.
pub fn measure(
    cuda: &Cuda,
    experiment: &Experiment,
    case: &Case,
    path: TransferPath,
    sampler: Sampler,
    data: &CaseData,
) -> Result<Timing> {
    let transfer = Transfer {
        cuda,
        payload: Payload::of(experiment, case, sampler, data)?,
    };
    let kernel = || transfer.kernel(experiment, case);
    match path {
        TransferPath::Cuda(CudaPath::Upload(memory)) => transfer.upload(memory),
        TransferPath::Cuda(CudaPath::Readback(memory)) => transfer.readback(memory),
        TransferPath::Cuda(CudaPath::MappedRead) => transfer.mapped_read(&kernel()?),
        TransferPath::DeviceCopy => transfer.device_copy(),
        TransferPath::Duplex => transfer.duplex(),
        TransferPath::Overlap(schedule) => transfer.overlap(&kernel()?, schedule),
        _ => Err(Error::Case(format!(
            "{}: a path only wgpu has",
            experiment.name()
        ))),
    }
}

/// One case's transfer: what to send and what must arrive.
struct Transfer<'a> {
    cuda: &'a Cuda,
    payload: Payload<'a>,
}

impl Transfer<'_> {
    fn stream(&self) -> &Arc<CudaStream> {
        &self.cuda.stream
    }

    /// Each chunk as (byte offset, bytes).
    fn chunks(&self) -> impl Iterator<Item = (usize, usize)> + use<> {
        let bytes = crate::host_len(self.payload.shape.chunk_bytes());
        (0..self.payload.shape.chunks as usize).map(move |i| (i * bytes, bytes))
    }

    /// A device buffer of the whole size, its contents unset.
    fn device_buffer(&self) -> Result<CudaSlice<u32>> {
        // SAFETY: every buffer is cleared or written before it is read.
        unsafe { self.stream().alloc::<u32>(self.payload.sent.len()) }
            .map_err(driver_error("allocating a transfer buffer"))
    }

    /// A device buffer holding the data, uploaded off the clock.
    fn filled_device_buffer(&self) -> Result<CudaSlice<u32>> {
        self.cuda.upload(self.payload.sent)
    }

    /// Pinned host memory of the whole size holding the data; `flags` as
    /// `cuMemHostAlloc` takes them.
    fn filled_pinned(&self, flags: u32) -> Result<PinnedHostSlice<u32>> {
        let mut pinned = self.pinned(flags)?;
        pinned
            .as_mut_slice()
            .map_err(driver_error("filling pinned memory"))?
            .copy_from_slice(self.payload.sent);
        Ok(pinned)
    }

    fn pinned(&self, flags: u32) -> Result<PinnedHostSlice<u32>> {
        // SAFETY: the memory is written before it is read (filled, or a readback's
        // destination that the check reads only after a transfer).
        unsafe {
            self.cuda
                .ctx
                .alloc_pinned_with_flags(self.payload.sent.len(), flags)
        }
        .map_err(driver_error("allocating pinned memory"))
    }

    /// Zeroes `buffer` (the data never holds a zero word), so nothing stale passes.
    fn clear(&self, buffer: &CudaSlice<u32>) -> Result<()> {
        let pointer = device_pointer(buffer, self.stream());
        // SAFETY: `buffer` holds `buffer.len()` words and lives past the wait below.
        unsafe { sys::cuMemsetD32Async(pointer, 0, buffer.len(), self.stream().cu_stream()) }
            .result()
            .map_err(driver_error("clearing a buffer"))?;
        self.finish(&[self.stream()])
    }

    /// Waits, with the hang timeout, until `streams` have done all they were given.
    fn finish(&self, streams: &[&Arc<CudaStream>]) -> Result<()> {
        for stream in streams {
            let done = stream
                .record_event(None)
                .map_err(driver_error("recording an event"))?;
            self.cuda.wait(&done)?;
        }
        Ok(())
    }

    fn check_device(&self, buffer: &CudaSlice<u32>) -> Result<()> {
        self.cuda.check_output(buffer, self.payload.expected)
    }

    /// Queues a copy of every chunk from host memory at `host` into `device` on `stream`.
    fn queue_upload(
        &self,
        host: *const u32,
        device: CUdeviceptr,
        stream: &CudaStream,
    ) -> Result<()> {
        self.chunks()
            .try_for_each(|chunk| queue_chunk_upload(host, device, chunk, stream))
    }

    fn upload(&self, memory: HostMemory) -> Result<Timing> {
        let dst = self.device_buffer()?;
        let device = device_pointer(&dst, self.stream());
        let pinned = match memory {
            HostMemory::Pinned => Some(self.filled_pinned(0)?),
            HostMemory::Pageable | HostMemory::Registered => None,
        };
        let host = match &pinned {
            Some(pinned) => pinned
                .as_ptr()
                .map_err(driver_error("reading pinned memory"))?,
            None => self.payload.sent.as_ptr(),
        };
        let bytes = self.payload.sent.len() * 4;
        let upload = || -> Result<()> {
            let registered = memory == HostMemory::Registered;
            if registered {
                // SAFETY: registers the case's own data, which outlives the transfer and
                // is unregistered below; registering does not write it.
                unsafe { sys::cuMemHostRegister_v2(host.cast_mut().cast(), bytes, 0) }
                    .result()
                    .map_err(driver_error("registering host memory"))?;
            }
            let copied = self
                .queue_upload(host, device, self.stream())
                .and_then(|()| self.finish(&[self.stream()]));
            if registered {
                // SAFETY: `host` was registered above and the copies are done (or failed).
                unsafe { sys::cuMemHostUnregister(host.cast_mut().cast()) }
                    .result()
                    .map_err(driver_error("unregistering host memory"))?;
            }
            copied
        };
        self.clear(&dst)?;
        upload()?;
        self.check_device(&dst)?;
        self.payload.sample(Timer::Host, |repeats| {
            let start = Instant::now();
            for _ in 0..repeats {
                upload()?;
            }
            Ok(elapsed_ns(start))
        })
    }

    fn readback(&self, memory: HostMemory) -> Result<Timing> {
        let src = self.filled_device_buffer()?;
        let device = device_pointer(&src, self.stream());
        let mut pageable;
        let mut pinned;
        let host: &mut [u32] = match memory {
            HostMemory::Pinned => {
                pinned = self.pinned(0)?;
                pinned
                    .as_mut_slice()
                    .map_err(driver_error("writing pinned memory"))?
            }
            HostMemory::Pageable => {
                pageable = vec![0u32; self.payload.sent.len()];
                &mut pageable
            }
            HostMemory::Registered => {
                return Err(Error::Case(
                    "a readback into memory registered on the clock is no path of the suite"
                        .to_owned(),
                ));
            }
        };
        host.fill(0);
        let host_pointer = host.as_mut_ptr();
        let read = || -> Result<()> {
            self.chunks().try_for_each(|chunk| {
                queue_chunk_readback(device, host_pointer, chunk, self.stream())
            })?;
            self.finish(&[self.stream()])
        };
        read()?;
        // SAFETY: the copies into the memory are done; nothing else writes it.
        self.payload.check_words(unsafe {
            std::slice::from_raw_parts(host_pointer, self.payload.sent.len())
        })?;
        self.payload.sample(Timer::Host, |repeats| {
            let start = Instant::now();
            for _ in 0..repeats {
                read()?;
            }
            Ok(elapsed_ns(start))
        })
    }

    /// Pinned memory both ways at once: the upload on the backend's stream, the
    /// readback on a second, so that the two copy engines may run side by side; host
    /// clock until both streams are done.
    fn duplex(&self) -> Result<Timing> {
        let up = self.filled_pinned(0)?;
        let up = up.as_ptr().map_err(driver_error("reading pinned memory"))?;
        let mut down = self.pinned(0)?;
        let down = down
            .as_mut_slice()
            .map_err(driver_error("writing pinned memory"))?;
        down.fill(0);
        let down = down.as_mut_ptr();
        let (src, dst) = (self.filled_device_buffer()?, self.device_buffer()?);
        let (from, to) = (
            device_pointer(&src, self.stream()),
            device_pointer(&dst, self.stream()),
        );
        let second = self
            .cuda
            .ctx
            .new_stream()
            .map_err(driver_error("creating a stream"))?;
        let both = || -> Result<()> {
            self.queue_upload(up, to, self.stream())?;
            self.chunks()
                .try_for_each(|chunk| queue_chunk_readback(from, down, chunk, &second))?;
            self.finish(&[self.stream(), &second])
        };
        self.clear(&dst)?;
        both()?;
        self.check_device(&dst)?;
        // SAFETY: the copies into the memory are done; nothing else writes it.
        self.payload
            .check_words(unsafe { std::slice::from_raw_parts(down, self.payload.sent.len()) })?;
        self.payload.sample(Timer::Host, |repeats| {
            let start = Instant::now();
            for _ in 0..repeats {
                both()?;
            }
            Ok(elapsed_ns(start))
        })
    }

    /// Samples on CUDA events of `repeats` runs of `queue`, which queues one transfer
    /// on the backend's stream.
    fn sample_on_events(&self, queue: impl Fn() -> Result<()>) -> Result<Timing> {
        let event = || {
            self.stream()
                .record_event(Some(sys::CUevent_flags::CU_EVENT_DEFAULT))
                .map_err(driver_error("recording an event"))
        };
        self.payload.sample(Timer::Gpu, |repeats| {
            let start = event()?;
            for _ in 0..repeats {
                queue()?;
            }
            let end = event()?;
            self.cuda.wait(&end)?;
            let ms = start
                .elapsed_ms(&end)
                .map_err(driver_error("reading an event pair"))?;
            Ok(f64::from(ms) * 1e6)
        })
    }

    fn device_copy(&self) -> Result<Timing> {
        let src = self.filled_device_buffer()?;
        let dst = self.device_buffer()?;
        let (from, to) = (
            device_pointer(&src, self.stream()),
            device_pointer(&dst, self.stream()),
        );
        let copy = || -> Result<()> {
            for (offset, bytes) in self.chunks() {
                let offset = offset as u64;
                // SAFETY: both buffers hold the whole size, which the chunks tile, and
                // live until the stream is done with them (waited for before returning).
                unsafe {
                    sys::cuMemcpyDtoDAsync_v2(
                        to + offset,
                        from + offset,
                        bytes,
                        self.stream().cu_stream(),
                    )
                }
                .result()
                .map_err(driver_error("copying within the device"))?;
            }
            Ok(())
        };
        self.clear(&dst)?;
        copy()?;
        self.finish(&[self.stream()])?;
        self.check_device(&dst)?;
        self.sample_on_events(copy)
    }

    /// `transfer_work`'s twin for the case, loaded.
    fn kernel(&self, experiment: &Experiment, case: &Case) -> Result<Work> {
        let program = Program::of(experiment, case, CudaBuild::Default)?;
        let module = self.cuda.module(&program, &case.buffers)?;
        let function = module
            .load_function(program.entry())
            .map_err(driver_error("finding the twin's entry"))?;
        let block = case.workgroup_size[0];
        let chunk_words = self.payload.shape.chunk_bytes() / 4;
        if !chunk_words.is_multiple_of(u64::from(block)) {
            return Err(Error::Case(format!(
                "{}: a chunk of {chunk_words} words is not whole blocks of {block}",
                case.id(experiment)
            )));
        }
        let blocks = u32::try_from(chunk_words / u64::from(block))
            .map_err(|_| Error::Case(format!("{}: too many blocks", case.id(experiment))))?;
        Ok(Work {
            function,
            config: LaunchConfig {
                grid_dim: (blocks, 1, 1),
                block_dim: (block, 1, 1),
                shared_mem_bytes: 0,
            },
        })
    }

    /// Queues `kernel` on the chunk at byte `offset` of `src` and `dst` on `stream`.
    fn queue_kernel(
        &self,
        kernel: &Work,
        (src, dst): (CUdeviceptr, CUdeviceptr),
        offset: usize,
        stream: &CudaStream,
    ) -> Result<()> {
        let (src, dst) = (src + offset as u64, dst + offset as u64);
        let mut launch = stream.launch_builder(&kernel.function);
        launch.arg(&src).arg(&dst);
        // SAFETY: the twin takes two pointers and touches one word per thread of a grid
        // of exactly the chunk's words, which both buffers hold from `offset`.
        unsafe { launch.launch(kernel.config) }
            .map(drop)
            .map_err(driver_error("launching the twin"))
    }

    fn mapped_read(&self, kernel: &Work) -> Result<Timing> {
        let mapped = self.filled_pinned(sys::CU_MEMHOSTALLOC_DEVICEMAP)?;
        let mut src: CUdeviceptr = 0;
        let host = mapped
            .as_ptr()
            .map_err(driver_error("reading pinned memory"))?;
        // SAFETY: `host` was allocated mapped; writes one device pointer.
        unsafe { sys::cuMemHostGetDevicePointer_v2(&mut src, host.cast_mut().cast(), 0) }
            .result()
            .map_err(driver_error("mapping host memory"))?;
        let dst = self.device_buffer()?;
        let pointers = (src, device_pointer(&dst, self.stream()));
        let read = || -> Result<()> {
            self.chunks().try_for_each(|(offset, _)| {
                self.queue_kernel(kernel, pointers, offset, self.stream())
            })
        };
        self.clear(&dst)?;
        read()?;
        self.finish(&[self.stream()])?;
        self.check_device(&dst)?;
        self.sample_on_events(read)
    }

    /// The overlap workload (see [`overlap`]): chunks copied from pinned memory and each
    /// processed by `kernel`, `repeats` dispatches per chunk. Serial: every copy, then
    /// every kernel, on one stream. Interleaved: chunk i's copy and kernels on stream
    /// i mod [`OVERLAP_STREAMS`], so that the copy engines move chunk i+1 while the SMs
    /// process chunk i.
    fn overlap(&self, kernel: &Work, schedule: Schedule) -> Result<Timing> {
        let pinned = self.filled_pinned(0)?;
        let host = pinned
            .as_ptr()
            .map_err(driver_error("reading pinned memory"))?;
        let (input, output) = (self.device_buffer()?, self.device_buffer()?);
        let pointers = (
            device_pointer(&input, self.stream()),
            device_pointer(&output, self.stream()),
        );
        let mut streams = vec![self.stream().clone()];
        for _ in 1..OVERLAP_STREAMS.min(self.payload.shape.chunks as usize) {
            streams.push(
                self.cuda
                    .ctx
                    .new_stream()
                    .map_err(driver_error("creating a stream"))?,
            );
        }
        let all: Vec<&Arc<CudaStream>> = streams.iter().collect();
        let main = self.stream();
        let process_all = |repeats| -> Result<()> {
            for (offset, _) in self.chunks() {
                for _ in 0..repeats {
                    self.queue_kernel(kernel, pointers, offset, main)?;
                }
            }
            Ok(())
        };
        let mut run = |phase: Phase, repeats: u32| -> Result<f64> {
            let start = Instant::now();
            match phase {
                Phase::Uploads => self.queue_upload(host, pointers.0, main)?,
                Phase::Kernels => process_all(repeats)?,
                Phase::Both(Schedule::Serial) => {
                    self.queue_upload(host, pointers.0, main)?;
                    process_all(repeats)?;
                }
                Phase::Both(Schedule::Interleaved) => {
                    for (chunk, stream) in self.chunks().zip(streams.iter().cycle()) {
                        queue_chunk_upload(host, pointers.0, chunk, stream)?;
                        let (offset, _) = chunk;
                        for _ in 0..repeats {
                            self.queue_kernel(kernel, pointers, offset, stream)?;
                        }
                    }
                }
            }
            self.finish(&all)?;
            Ok(elapsed_ns(start))
        };
        let kernel_repeats = transfer::kernel_repeats(&mut run)?;
        for phase in [
            Phase::Both(Schedule::Serial),
            Phase::Both(Schedule::Interleaved),
        ] {
            self.clear(&input)?;
            self.clear(&output)?;
            run(phase, kernel_repeats)?;
            self.check_device(&output)?;
        }
        transfer::sample_overlap(
            &self.payload.sampler,
            run,
            kernel_repeats,
            self.payload.shape.chunks,
            schedule,
        )
    }
}

/// `transfer_work`'s twin and its launch over one chunk.
struct Work {
    function: CudaFunction,
    config: LaunchConfig,
}

/// Queues the copy of the chunk at (byte offset, bytes) from host memory at `host` into
/// `device` on `stream`. Both must hold the chunk and stay alive until the stream is
/// done: every path waits for it before its memory goes.
fn queue_chunk_upload(
    host: *const u32,
    device: CUdeviceptr,
    (offset, bytes): (usize, usize),
    stream: &CudaStream,
) -> Result<()> {
    // SAFETY: see above; the chunks of a path tile the memory both sides hold.
    unsafe {
        sys::cuMemcpyHtoDAsync_v2(
            device + offset as u64,
            host.cast::<u8>().add(offset).cast::<c_void>(),
            bytes,
            stream.cu_stream(),
        )
    }
    .result()
    .map_err(driver_error("copying to the device"))
}

/// Queues the copy of the chunk at (byte offset, bytes) from `device` into host memory
/// at `host` on `stream`; as [`queue_chunk_upload`], both must outlive the stream's work.
fn queue_chunk_readback(
    device: CUdeviceptr,
    host: *mut u32,
    (offset, bytes): (usize, usize),
    stream: &CudaStream,
) -> Result<()> {
    // SAFETY: see above; the chunks of a path tile the memory both sides hold.
    unsafe {
        sys::cuMemcpyDtoHAsync_v2(
            host.cast::<u8>().add(offset).cast::<c_void>(),
            device + offset as u64,
            bytes,
            stream.cu_stream(),
        )
    }
    .result()
    .map_err(driver_error("copying to the host"))
}

/// The device address of `buffer`, for the raw copies and launches of this module.
fn device_pointer(buffer: &CudaSlice<u32>, stream: &CudaStream) -> CUdeviceptr {
    buffer.device_ptr(stream).0
}

fn elapsed_ns(start: Instant) -> f64 {
    start.elapsed().as_nanos() as f64
}
