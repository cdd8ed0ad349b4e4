//! Host ↔ device transfers on the device: the buffers, mappings, clocks and checks of
//! the `transfer` family ([`crate::suite::families::transfer`] declares its cases).
//!
//! A transfer of `size` bytes in `chunks` pieces is timed on the host clock from its
//! first call to the moment the data is usable, which is what a user waits for:
//!
//! - `write_buffer`: `queue.write_buffer` per chunk (wgpu copies the bytes into staging
//!   memory of its own inside the call), the submission that carries them to the
//!   destination, and the wait for it.
//! - staging: per chunk a buffer created mapped (`MAP_WRITE | COPY_SRC`, so the host
//!   writes the memory the GPU copies from), the bytes written, unmap, a copy command;
//!   one submission and the wait. The fresh buffers are dropped after the clock stops.
//! - staging, pooled: the same with buffers kept from the last transfer and already
//!   mapped again: the remapping happens between transfers, off the clock, as a pool
//!   (wgpu's `StagingBelt`) does it while the host is busy elsewhere.
//!   The note gives the medians of the fill and of the copy to the GPU.
//! - staging, threads: the pooled staging buffer filled by `threads=` host threads, each
//!   copying its own part (a pool of threads kept from before the clock starts, as an
//!   application would keep one).
//! - mappable storage: map each chunk's storage buffer (the GPU is idle, so the map
//!   waits for wgpu alone), write the bytes, unmap: then the data is in the storage
//!   kernels bind. No copy, no submission; remapping is on the clock, since the GPU
//!   owns the buffer between uploads.
//! - readback: per chunk a copy into a pooled `MAP_READ` staging buffer, the
//!   submission, the map of every staging buffer (which waits for the copies), the
//!   bytes copied into host memory, unmap. The note gives the medians of the copy from
//!   the GPU (until the maps are done) and of the host's copy-out; `threads=` host
//!   threads copy out where the case names them.
//! - imported host memory (`VK_EXT_external_memory_host`): copies from it (upload) or
//!   into it (readback), both in one submission (duplex), or a kernel reading it as
//!   storage (zero-copy, GPU clock).
//! - device copy: `copy_buffer_to_buffer` per chunk between two timestamps written in
//!   the encoder (GPU clock); without `Features::TIMESTAMP_QUERY_INSIDE_ENCODERS`,
//!   encoding, submission and wait on the host clock.
//! - overlap: the whole workload (every chunk uploaded by `write_buffer` and processed
//!   by the kernel) until the last submission finished; see [`upload_and_process`].
//!
//! Every path is verified before it is timed: the destination is cleared (the data
//! never holds a zero word), one transfer runs, and what arrived is compared with what
//! was sent, bit for bit.

use std::num::NonZeroU64;
use std::time::Instant;

use rayon::prelude::*;

use super::host_memory::{self, HostBuffer};
use super::timing::{gpu_ns, gpu_pass_times_ns};
use super::{BoundKernel, GpuContext};
use crate::backend::transfer::{self, Payload, Phase};
use crate::error::{Error, Result};
use crate::measure::{Sampler, Stats, Timer, Timing, gbps};
use crate::suite::families::transfer::copy_threads;
use crate::suite::{Case, CaseData, Experiment, Grid, Schedule, TransferPath, WgpuBuild};

/// Verifies and times one transfer case along `path`.
pub fn measure(
    ctx: &GpuContext,
    experiment: &Experiment,
    case: &Case,
    path: TransferPath,
    build: WgpuBuild,
    sampler: Sampler,
    data: &CaseData,
) -> Result<Timing> {
    let transfer = Transfer {
        ctx,
        payload: Payload::of(experiment, case, sampler, data)?,
    };
    let threads = || HostCopy::threads(copy_threads(&case.params).map_err(Error::Case)?);
    ctx.scoped(|| match path {
        TransferPath::WriteBuffer => transfer.write_buffer(),
        TransferPath::Staging { pooled: false } => transfer.staging(),
        TransferPath::Staging { pooled: true } => transfer.staging_pooled(&HostCopy::Caller),
        TransferPath::StagingThreads => transfer.staging_pooled(&threads()?),
        TransferPath::MappableStorage => transfer.mappable_storage(),
        TransferPath::ImportedUpload => transfer.imported_upload(),
        TransferPath::ImportedReadback => transfer.imported_readback(),
        TransferPath::ImportedKernelRead => {
            let pipeline = ctx.case_pipeline(experiment, case, build)?;
            transfer.imported_kernel_read(pipeline, case.workgroup_size[0])
        }
        TransferPath::Duplex => transfer.imported_duplex(),
        TransferPath::Readback => transfer.readback(&HostCopy::Caller),
        TransferPath::ReadbackThreads => transfer.readback(&threads()?),
        TransferPath::DeviceCopy => transfer.device_copy(Usage::Storage),
        TransferPath::DeviceCopyUnbound => transfer.device_copy(Usage::CopyOnly),
        TransferPath::DeviceCopyKernel => {
            let pipeline = ctx.case_pipeline(experiment, case, build)?;
            let src = transfer.filled_storage("transfer.src")?;
            transfer.kernel_copy(pipeline, case.workgroup_size[0], &src)
        }
        TransferPath::Overlap(schedule) => {
            let pipeline = ctx.case_pipeline(experiment, case, build)?;
            upload_and_process(&transfer, pipeline, case.workgroup_size[0], schedule)
        }
        TransferPath::Cuda(_) => Err(Error::Case(format!(
            "{}: a path only CUDA has",
            experiment.name()
        ))),
    })?
}

/// The usage of a device copy's two buffers.
#[derive(Clone, Copy)]
enum Usage {
    /// As kernels bind them: `STORAGE` beside the copy usages.
    Storage,
    /// The copy usages alone.
    CopyOnly,
}

/// One case's transfer: what to send and what must arrive.
struct Transfer<'a> {
    ctx: &'a GpuContext,
    payload: Payload<'a>,
}

impl Transfer<'_> {
    /// Each chunk of the data with its byte offset.
    fn pieces(&self) -> impl Iterator<Item = (u64, &[u8])> {
        let chunk_bytes = self.payload.shape.chunk_bytes();
        bytemuck::cast_slice::<u32, u8>(self.payload.sent)
            .chunks(crate::host_len(chunk_bytes))
            .enumerate()
            .map(move |(i, piece)| (i as u64 * chunk_bytes, piece))
    }

    fn buffer(&self, label: &str, bytes: u64, usage: wgpu::BufferUsages) -> wgpu::Buffer {
        self.ctx.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(label),
            size: bytes,
            usage,
            mapped_at_creation: usage.contains(wgpu::BufferUsages::MAP_WRITE),
        })
    }

    /// A storage buffer of the whole size, as kernels would bind it; clearable and
    /// readable for verification.
    fn storage(&self, label: &str) -> wgpu::Buffer {
        self.buffer(
            label,
            self.payload.shape.bytes,
            wgpu::BufferUsages::STORAGE
                | wgpu::BufferUsages::COPY_DST
                | wgpu::BufferUsages::COPY_SRC,
        )
    }

    /// One buffer per chunk with `usage`, created mapped where it is for writing.
    fn per_chunk(&self, label: &str, usage: wgpu::BufferUsages) -> Vec<wgpu::Buffer> {
        (0..self.payload.shape.chunks)
            .map(|_| self.buffer(label, self.payload.shape.chunk_bytes(), usage))
            .collect()
    }

    /// A storage buffer holding the data, uploaded off the clock.
    fn filled_storage(&self, label: &str) -> Result<wgpu::Buffer> {
        self.ctx.upload(
            label,
            wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
            self.payload.sent,
        )
    }

    /// Zeroes `buffers` (the data never holds a zero word), so nothing stale passes.
    fn clear(&self, buffers: &[&wgpu::Buffer]) -> Result<()> {
        let mut encoder = self.ctx.device.create_command_encoder(&Default::default());
        for buffer in buffers {
            encoder.clear_buffer(buffer, 0, None);
        }
        self.ctx.submit_and_wait(encoder.finish())
    }

    /// Checks that `buffers`, one after the other, hold what was sent.
    fn check(&self, buffers: &[&wgpu::Buffer]) -> Result<()> {
        self.ctx.check_output(buffers, self.payload.expected)
    }

    fn write_buffer(&self) -> Result<Timing> {
        let dst = self.storage("transfer.dst");
        let upload = || {
            for (offset, piece) in self.pieces() {
                self.ctx.queue.write_buffer(&dst, offset, piece);
            }
            self.ctx.wait(self.ctx.queue.submit([]))
        };
        self.clear(&[&dst])?;
        upload()?;
        self.check(&[&dst])?;
        self.sample_transfers(upload)
    }

    /// `copy` fills each chunk's mapped staging buffer; then each is unmapped, copied
    /// into `dst` in one submission, and waited for. The host nanoseconds of the fill
    /// and of the copy to the GPU.
    fn fill_and_copy(
        &self,
        stagings: &[wgpu::Buffer],
        dst: &wgpu::Buffer,
        copy: &HostCopy,
    ) -> Result<[f64; 2]> {
        let start = Instant::now();
        for (staging, (_, piece)) in stagings.iter().zip(self.pieces()) {
            let mut view = staging
                .get_mapped_range_mut(..)
                .map_err(|e| Error::Map(e.to_string()))?;
            copy.fill(&mut view, piece);
        }
        let filled = elapsed_ns(start);
        let mut encoder = self.ctx.device.create_command_encoder(&Default::default());
        for (staging, (offset, _)) in stagings.iter().zip(self.pieces()) {
            staging.unmap();
            encoder.copy_buffer_to_buffer(staging, 0, dst, offset, None);
        }
        self.ctx.submit_and_wait(encoder.finish())?;
        Ok([filled, elapsed_ns(start) - filled])
    }

    /// `MAP_WRITE` staging buffers may only be copy sources.
    const STAGING: wgpu::BufferUsages =
        wgpu::BufferUsages::MAP_WRITE.union(wgpu::BufferUsages::COPY_SRC);

    fn staging(&self) -> Result<Timing> {
        let dst = self.storage("transfer.dst");
        // Returns the staging buffers, so that they are dropped after the clock stops.
        let upload = || -> Result<Vec<wgpu::Buffer>> {
            let stagings = self.per_chunk("transfer.staging", Self::STAGING);
            self.fill_and_copy(&stagings, &dst, &HostCopy::Caller)?;
            Ok(stagings)
        };
        self.clear(&[&dst])?;
        upload()?;
        self.check(&[&dst])?;
        self.payload.sample(Timer::Host, |repeats| {
            let mut ns = 0.0;
            for _ in 0..repeats {
                let start = Instant::now();
                let used = upload()?;
                ns += elapsed_ns(start);
                drop(used);
            }
            Ok(ns)
        })
    }

    /// The pooled staging path: `copy` fills the mapped buffers. Each transfer's fill
    /// and its copy to the GPU are timed apart too.
    fn staging_pooled(&self, copy: &HostCopy) -> Result<Timing> {
        let dst = self.storage("transfer.dst");
        let pool = self.per_chunk("transfer.staging", Self::STAGING);
        let upload = || self.fill_and_copy(&pool, &dst, copy);
        // The pool's buffers are mapped again once the GPU is done with them.
        let remap = || self.ctx.map_all(&pool, wgpu::MapMode::Write);
        self.clear(&[&dst])?;
        upload()?;
        remap()?;
        self.check(&[&dst])?;
        self.sample_parts(copy, ["host fill", "copy to the GPU"], upload, remap)
    }

    /// Samples `transfer`, which makes one transfer and returns the nanoseconds of its
    /// two parts (`then` runs after each, off the clock); the note gives each part's
    /// median and its rate.
    fn sample_parts(
        &self,
        copy: &HostCopy,
        parts: [&str; 2],
        mut transfer: impl FnMut() -> Result<[f64; 2]>,
        mut then: impl FnMut() -> Result<()>,
    ) -> Result<Timing> {
        // Each sample's parts per transfer, kept beside the total the sampler sees.
        let mut split: Vec<[f64; 2]> = Vec::new();
        let mut timing = self.payload.sample(Timer::Host, |repeats| {
            let mut ns = [0.0; 2];
            for _ in 0..repeats {
                let [first, second] = transfer()?;
                ns[0] += first;
                ns[1] += second;
                then()?;
            }
            split.push(ns.map(|total| total / f64::from(repeats)));
            Ok(ns.iter().sum())
        })?;
        let sampled = &split[split.len().saturating_sub(timing.samples_ns.len())..];
        let medians = [0, 1].map(|part| {
            let samples: Vec<f64> = sampled.iter().map(|ns| ns[part]).collect();
            Stats::of(&samples).map_or(0.0, |s| s.median)
        });
        let text: Vec<String> = parts
            .iter()
            .zip(medians)
            .map(|(part, ns)| {
                let rate = gbps(self.payload.shape.bytes, ns.max(1.0));
                format!("{part} {:.1} us ({rate:.1} GB/s)", ns / 1e3)
            })
            .collect();
        timing.note = format!("{}medians: {}", copy.describe(), text.join(", "));
        Ok(timing)
    }

    /// Host memory imported as a buffer of `usage`, `size` bytes.
    fn imported(&self, usage: wgpu::BufferUsages) -> Result<HostBuffer> {
        host_memory::import(
            &self.ctx.device,
            "transfer.host",
            self.payload.shape.bytes,
            usage,
        )
    }

    /// A copy per chunk from `from` to `to` at the same offsets, in one submission.
    fn copy_chunks(&self, from: &wgpu::Buffer, to: &wgpu::Buffer) -> Result<()> {
        let mut encoder = self.ctx.device.create_command_encoder(&Default::default());
        self.encode_chunk_copies(&mut encoder, from, to);
        self.ctx.submit_and_wait(encoder.finish())
    }

    fn encode_chunk_copies(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        from: &wgpu::Buffer,
        to: &wgpu::Buffer,
    ) {
        for (offset, piece) in self.pieces() {
            encoder.copy_buffer_to_buffer(from, offset, to, offset, piece.len() as u64);
        }
    }

    /// One kernel per chunk, each bound to its chunk's sub-range of `input` (binding 0)
    /// and `output` (binding 1).
    fn chunk_kernels(
        &self,
        pipeline: &wgpu::ComputePipeline,
        workgroup_size: u32,
        input: &wgpu::Buffer,
        output: &wgpu::Buffer,
    ) -> Result<Vec<BoundKernel>> {
        let ctx = self.ctx;
        let chunk_bytes = self.payload.shape.chunk_bytes();
        let workgroups = Grid::TwoD
            .workgroups(
                (chunk_bytes / 4).div_ceil(u64::from(workgroup_size)),
                ctx.limits.max_compute_workgroups_per_dimension,
            )
            .map_err(Error::Case)?;
        let layout = pipeline.get_bind_group_layout(0);
        Ok((0..u64::from(self.payload.shape.chunks))
            .map(|i| {
                let chunk = |binding, buffer| wgpu::BindGroupEntry {
                    binding,
                    resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                        buffer,
                        offset: i * chunk_bytes,
                        size: NonZeroU64::new(chunk_bytes),
                    }),
                };
                let bind_group = ctx.device.create_bind_group(&wgpu::BindGroupDescriptor {
                    label: Some("transfer.chunk"),
                    layout: &layout,
                    entries: &[chunk(0, input), chunk(1, output)],
                });
                BoundKernel::new(pipeline.clone(), bind_group, workgroups)
            })
            .collect())
    }

    /// Times `transfer` on the host clock, `repeats` at a time.
    fn sample_transfers(&self, transfer: impl Fn() -> Result<()>) -> Result<Timing> {
        self.payload.sample(Timer::Host, |repeats| {
            let start = Instant::now();
            for _ in 0..repeats {
                transfer()?;
            }
            Ok(elapsed_ns(start))
        })
    }

    /// The data sits in imported host memory beforehand, as in a pinned buffer; the
    /// clock runs over the copies into storage.
    fn imported_upload(&self) -> Result<Timing> {
        let dst = self.storage("transfer.dst");
        let mut host = self.imported(wgpu::BufferUsages::COPY_SRC)?;
        host.bytes_mut()
            .copy_from_slice(bytemuck::cast_slice(self.payload.sent));
        let upload = || self.copy_chunks(&host.buffer, &dst);
        self.clear(&[&dst])?;
        upload()?;
        self.check(&[&dst])?;
        self.sample_transfers(upload)
    }

    /// The clock runs over the copies into imported host memory; then the host reads
    /// the data where it landed.
    fn imported_readback(&self) -> Result<Timing> {
        let src = self.filled_storage("transfer.src")?;
        let mut host = self.imported(wgpu::BufferUsages::COPY_DST)?;
        let target = host.buffer.clone();
        let read = || self.copy_chunks(&src, &target);
        host.bytes_mut().fill(0);
        read()?;
        self.payload
            .check_words(bytemuck::cast_slice(host.bytes_mut()))?;
        self.sample_transfers(read)
    }

    /// The data sits in imported host memory beforehand; the kernels read it over the
    /// link and write storage, timed on the GPU clock around their passes.
    fn imported_kernel_read(
        &self,
        pipeline: wgpu::ComputePipeline,
        workgroup_size: u32,
    ) -> Result<Timing> {
        let mut host = self.imported(wgpu::BufferUsages::STORAGE)?;
        host.bytes_mut()
            .copy_from_slice(bytemuck::cast_slice(self.payload.sent));
        self.kernel_copy(pipeline, workgroup_size, &host.buffer)
    }

    /// The kernel (`transfer_work` with no rounds) copies `src` into device storage,
    /// chunk by chunk, on the GPU clock.
    fn kernel_copy(
        &self,
        pipeline: wgpu::ComputePipeline,
        workgroup_size: u32,
        src: &wgpu::Buffer,
    ) -> Result<Timing> {
        let dst = self.storage("transfer.dst");
        let kernels = self.chunk_kernels(&pipeline, workgroup_size, src, &dst)?;
        let read_all = |repeats| {
            let mut encoder = self.ctx.device.create_command_encoder(&Default::default());
            for kernel in &kernels {
                kernel.encode_pass(&mut encoder, None, repeats);
            }
            self.ctx.submit_and_wait(encoder.finish())
        };
        self.clear(&[&dst])?;
        read_all(1)?;
        self.check(&[&dst])?;
        if !self.ctx.has_timestamps() {
            return self.payload.sample(Timer::Host, |repeats| {
                let start = Instant::now();
                read_all(repeats)?;
                Ok(elapsed_ns(start))
            });
        }
        self.payload.sample(Timer::Gpu, |repeats| {
            kernels
                .iter()
                .map(|kernel| Ok(gpu_pass_times_ns(self.ctx, kernel, 1, repeats, 0, 1, None)?[0]))
                .sum()
        })
    }

    /// The data goes up from imported host memory while a filled storage buffer comes
    /// down into more of it: every chunk's two copies in one submission, with no
    /// dependency between the directions.
    fn imported_duplex(&self) -> Result<Timing> {
        let src = self.filled_storage("transfer.src")?;
        let dst = self.storage("transfer.dst");
        let mut up = self.imported(wgpu::BufferUsages::COPY_SRC)?;
        up.bytes_mut()
            .copy_from_slice(bytemuck::cast_slice(self.payload.sent));
        let mut down = self.imported(wgpu::BufferUsages::COPY_DST)?;
        let target = down.buffer.clone();
        let both = || {
            let mut encoder = self.ctx.device.create_command_encoder(&Default::default());
            self.encode_chunk_copies(&mut encoder, &up.buffer, &dst);
            self.encode_chunk_copies(&mut encoder, &src, &target);
            self.ctx.submit_and_wait(encoder.finish())
        };
        self.clear(&[&dst])?;
        down.bytes_mut().fill(0);
        both()?;
        self.check(&[&dst])?;
        self.payload
            .check_words(bytemuck::cast_slice(down.bytes_mut()))?;
        self.sample_transfers(both)
    }

    fn mappable_storage(&self) -> Result<Timing> {
        let usage = wgpu::BufferUsages::MAP_WRITE
            | wgpu::BufferUsages::STORAGE
            | wgpu::BufferUsages::COPY_DST
            | wgpu::BufferUsages::COPY_SRC;
        let dsts: Vec<wgpu::Buffer> = (0..self.payload.shape.chunks)
            .map(|_| {
                self.ctx.device.create_buffer(&wgpu::BufferDescriptor {
                    label: Some("transfer.mappable"),
                    size: self.payload.shape.chunk_bytes(),
                    usage,
                    mapped_at_creation: false,
                })
            })
            .collect();
        let upload = || -> Result<()> {
            self.ctx.map_all(&dsts, wgpu::MapMode::Write)?;
            for (dst, (_, piece)) in dsts.iter().zip(self.pieces()) {
                dst.get_mapped_range_mut(..)
                    .map_err(|e| Error::Map(e.to_string()))?
                    .copy_from_slice(piece);
                dst.unmap();
            }
            Ok(())
        };
        let all: Vec<&wgpu::Buffer> = dsts.iter().collect();
        self.clear(&all)?;
        upload()?;
        self.check(&all)?;
        self.sample_transfers(upload)
    }

    /// A copy into pooled `MAP_READ` buffers, their maps (which wait for the copies),
    /// and `copy` out of them into host memory; the two timed apart too.
    fn readback(&self, copy: &HostCopy) -> Result<Timing> {
        let src = self.filled_storage("transfer.src")?;
        let pool = self.per_chunk(
            "transfer.readback",
            wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        );
        let host = std::cell::RefCell::new(vec![0u32; self.payload.sent.len()]);
        let chunk_bytes = crate::host_len(self.payload.shape.chunk_bytes());
        let read = || -> Result<[f64; 2]> {
            let start = Instant::now();
            let mut encoder = self.ctx.device.create_command_encoder(&Default::default());
            for (i, staging) in pool.iter().enumerate() {
                let offset = i as u64 * self.payload.shape.chunk_bytes();
                encoder.copy_buffer_to_buffer(&src, offset, staging, 0, staging.size());
            }
            self.ctx.queue.submit([encoder.finish()]);
            // Each map waits for the copy into its buffer.
            self.ctx.map_all(&pool, wgpu::MapMode::Read)?;
            let arrived = elapsed_ns(start);
            let mut host = host.borrow_mut();
            let host_bytes = bytemuck::cast_slice_mut::<u32, u8>(&mut host);
            for (staging, piece) in pool.iter().zip(host_bytes.chunks_mut(chunk_bytes)) {
                let view = staging
                    .get_mapped_range(..)
                    .map_err(|e| Error::Map(e.to_string()))?;
                copy.read(&view, piece);
                drop(view);
                staging.unmap();
            }
            Ok([arrived, elapsed_ns(start) - arrived])
        };
        read()?;
        self.payload.check_words(&host.borrow())?;
        self.sample_parts(
            copy,
            ["copy from the GPU", "host copy-out"],
            read,
            || Ok(()),
        )
    }

    /// `copy_buffer_to_buffer` between two buffers of `usage`, a region per chunk.
    fn device_copy(&self, usage: Usage) -> Result<Timing> {
        let (src, dst) = match usage {
            Usage::Storage => (
                self.filled_storage("transfer.src")?,
                self.storage("transfer.dst"),
            ),
            // COPY_DST to fill the source, COPY_SRC to check the destination: no STORAGE.
            Usage::CopyOnly => {
                let copy = wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST;
                let src = self.ctx.upload("transfer.src", copy, self.payload.sent)?;
                (
                    src,
                    self.buffer("transfer.dst", self.payload.shape.bytes, copy),
                )
            }
        };
        let encode_copy = |encoder: &mut wgpu::CommandEncoder| {
            for (offset, piece) in self.pieces() {
                encoder.copy_buffer_to_buffer(&src, offset, &dst, offset, piece.len() as u64);
            }
        };
        self.clear(&[&dst])?;
        let mut encoder = self.ctx.device.create_command_encoder(&Default::default());
        encode_copy(&mut encoder);
        self.ctx.submit_and_wait(encoder.finish())?;
        self.check(&[&dst])?;
        if !self.ctx.has_encoder_timestamps() {
            let mut timing = self.payload.sample(Timer::Host, |repeats| {
                let start = Instant::now();
                let mut encoder = self.ctx.device.create_command_encoder(&Default::default());
                for _ in 0..repeats {
                    encode_copy(&mut encoder);
                }
                self.ctx.submit_and_wait(encoder.finish())?;
                Ok(elapsed_ns(start))
            })?;
            timing.note = "no timestamps inside encoders: host clock around encoding, \
                           submission and wait"
                .to_owned();
            return Ok(timing);
        }
        let timestamps = self.ctx.timestamps();
        self.payload.sample(Timer::Gpu, |repeats| {
            let mut encoder = self.ctx.device.create_command_encoder(&Default::default());
            encoder.write_timestamp(&timestamps.query_set, 0);
            for _ in 0..repeats {
                encode_copy(&mut encoder);
            }
            encoder.write_timestamp(&timestamps.query_set, 1);
            let ticks = timestamps.read(self.ctx, encoder, 2)?;
            gpu_ns(self.ctx, ticks[0], ticks[1])
        })
    }
}

/// K chunks, each uploaded with `write_buffer` and processed by the kernel (bound to
/// the chunk's sub-range of one input and one output buffer).
///
/// The kernel runs `d` times per chunk (it is idempotent), `d` chosen so that the
/// kernels alone take about as long as the uploads alone: then overlap could hide up
/// to all of the upload time. Serial: every `write_buffer`, then one submission of
/// every kernel (wgpu runs a submission's buffer writes before its commands).
/// Interleaved: per chunk its `write_buffer` and a submission of its kernels, so the
/// host copies chunk i+1 into wgpu's staging memory while the GPU processes chunk i;
/// wgpu has one queue per device (one Vulkan queue, one Metal command queue, one DX12
/// direct queue), so the GPU's own copy and compute engines overlap only where the
/// driver overlaps work of that one queue. Both schedules are verified; the four
/// phases are sampled in turn, so drift affects them alike; the row's samples are the
/// case's schedule, and the note gives every median and the fraction of the upload
/// time that interleaving hid: (serial − interleaved) / uploads alone.
fn upload_and_process(
    transfer: &Transfer,
    pipeline: wgpu::ComputePipeline,
    workgroup_size: u32,
    schedule: Schedule,
) -> Result<Timing> {
    let ctx = transfer.ctx;
    let input = transfer.storage("overlap.input");
    let output = transfer.storage("overlap.output");
    let kernels = transfer.chunk_kernels(&pipeline, workgroup_size, &input, &output)?;
    let queue = &ctx.queue;
    let upload_all = || {
        for (offset, piece) in transfer.pieces() {
            queue.write_buffer(&input, offset, piece);
        }
    };
    // Every chunk's kernel, `repeats` dispatches each, in one submission.
    let process_all = |repeats| {
        let mut encoder = ctx.device.create_command_encoder(&Default::default());
        for kernel in &kernels {
            kernel.encode_pass(&mut encoder, None, repeats);
        }
        ctx.submit_and_wait(encoder.finish())
    };
    // Host nanoseconds of one run of `phase` with `repeats` dispatches per chunk.
    let mut run = |phase: Phase, repeats: u32| -> Result<f64> {
        let start = Instant::now();
        match phase {
            Phase::Uploads => {
                upload_all();
                ctx.wait(queue.submit([]))?;
            }
            Phase::Kernels => process_all(repeats)?,
            Phase::Both(Schedule::Serial) => {
                upload_all();
                process_all(repeats)?;
            }
            Phase::Both(Schedule::Interleaved) => {
                let mut last = None;
                for (kernel, (offset, piece)) in kernels.iter().zip(transfer.pieces()) {
                    queue.write_buffer(&input, offset, piece);
                    let mut encoder = ctx.device.create_command_encoder(&Default::default());
                    kernel.encode_pass(&mut encoder, None, repeats);
                    last = Some(queue.submit([encoder.finish()]));
                }
                if let Some(last) = last {
                    ctx.wait(last)?;
                }
            }
        }
        Ok(elapsed_ns(start))
    };

    let kernel_repeats = transfer::kernel_repeats(&mut run)?;
    for phase in [
        Phase::Both(Schedule::Serial),
        Phase::Both(Schedule::Interleaved),
    ] {
        transfer.clear(&[&input, &output])?;
        run(phase, kernel_repeats)?;
        transfer.check(&[&output])?;
    }
    transfer::sample_overlap(
        &transfer.payload.sampler,
        run,
        kernel_repeats,
        transfer.payload.shape.chunks,
        schedule,
    )
}

/// How the host copies into or out of mapped memory: on the calling thread, or split
/// over a pool of threads kept from before the clock starts (as an application would
/// keep one).
enum HostCopy {
    Caller,
    Threads(rayon::ThreadPool),
}

/// The pieces, in bytes, that a pool's threads share.
const COPY_BLOCK: usize = 64 << 10;

impl HostCopy {
    /// A pool of `threads` host threads.
    fn threads(threads: usize) -> Result<HostCopy> {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .map(HostCopy::Threads)
            .map_err(|e| Error::Case(format!("{threads} copy threads: {e}")))
    }

    /// The note's opening: how many threads copied, where a pool did.
    fn describe(&self) -> String {
        match self {
            HostCopy::Caller => String::new(),
            HostCopy::Threads(pool) => {
                let threads = pool.current_num_threads();
                format!("{threads} copy thread{}; ", crate::plural(threads))
            }
        }
    }

    /// Writes `from` into the mapped `view`, of the same length.
    fn fill(&self, view: &mut wgpu::BufferViewMut, from: &[u8]) {
        let HostCopy::Threads(pool) = self else {
            view.copy_from_slice(from);
            return;
        };
        // wgpu's write-only view of a mapping can go to another thread only in pieces
        // of a fixed size (`WriteOnly<[u8; N]>` is `Send`, `WriteOnly<[u8]>` is not).
        let (blocks, mut rest) = view.slice(..).into_chunks::<COPY_BLOCK>();
        let blocks: Vec<_> = blocks.into_iter().collect();
        let (whole, tail) = from.split_at(blocks.len() * COPY_BLOCK);
        pool.install(|| {
            blocks
                .into_par_iter()
                .zip(whole.par_chunks(COPY_BLOCK))
                .for_each(|(block, from)| {
                    wgpu::WriteOnly::<[u8]>::from(block).copy_from_slice(from)
                });
        });
        rest.copy_from_slice(tail);
    }

    /// Copies the mapped `view` into `to`, of the same length.
    fn read(&self, view: &[u8], to: &mut [u8]) {
        match self {
            HostCopy::Caller => to.copy_from_slice(view),
            HostCopy::Threads(pool) => pool.install(|| {
                to.par_chunks_mut(COPY_BLOCK)
                    .zip(view.par_chunks(COPY_BLOCK))
                    .for_each(|(to, from)| to.copy_from_slice(from));
            }),
        }
    }
}

fn elapsed_ns(start: Instant) -> f64 {
    start.elapsed().as_nanos() as f64
}
