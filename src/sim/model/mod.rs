//! The memory model: turns the interpreter's request stream ([`super::exec`]) into
//! sectors, cache traffic, bank conflicts and a predicted time, GPGPU-Sim style but
//! small and parameterised by a [`DeviceModel`].
//!
//! Per request of one subgroup:
//! - **Global (storage) memory.** Coalescing: the distinct `sector_bytes` sectors and
//!   `line_bytes` lines the active lanes' bytes touch (a lane's access that straddles
//!   a sector boundary counts both). Requests, sectors and lines are counted per
//!   direction (reads, writes, atomics). The sectors then go through two caches:
//!   - a per-SM **L1** for reads, `l1_bytes` per SM, sector-granular LRU; workgroups
//!     are placed on SMs round-robin by linear workgroup id (`id % sms`). Global
//!     writes and atomics do not allocate in the L1 (write-through, no write-allocate)
//!     and invalidate a copy it holds; atomics are performed at the L2. A read that
//!     hits a sector whose fill has not arrived yet (requested moments before by
//!     another subgroup, by the requests' issue times on the scoreboard) waits for
//!     that fill: for latency it counts as served where the fill comes from.
//!     **Local memory** (private arrays indexed at run time) is private to its
//!     invocation, so the L1 keeps what it writes (write-through to the L2, as
//!     Nsight Compute shows on the H100, with write-allocate): a private array that
//!     fits in the L1 is read from it. A local write into a sector that a read miss
//!     allocated and nothing touched since meets that read on its way: the L1 holds
//!     the write until the read has reached the L2, the point that orders the two
//!     (estimate: half the L2 round trip, `l2_latency_ns / 2`), and, processing its
//!     requests in order, holds the SM's other requests with it. So a ring buffer that
//!     overflows the L1 and writes each slot right after reading it
//!     (`localmem/dynamic_index`) costs about that half round trip per request per SM
//!     (measured in Nsight Compute: docs/simulator.md, Local memory).
//!   - one chip-wide **L2**, `l2_bytes`, sector-granular LRU, write-back with
//!     write-allocate. A read miss reads the sector from DRAM; a write miss does not
//!     (no read-for-ownership): a written sector, even partly written, costs one full
//!     `sector_bytes` DRAM write, once, when it is evicted dirty or at the end of the
//!     run; the L2 keeps a byte mask per sector, and a sector whose bytes were not all
//!     written (nor read from DRAM) is merged with a DRAM read first (an assumption,
//!     not isolated on the device: without it `copy/stride` at strides 2–8 is predicted
//!     a third too fast). An atomic miss reads the
//!     sector and dirties it. Every sector access that
//!     reaches the L2 (read misses of the L1, writes, atomics) is L2 traffic.
//!
//!   Size 0 disables a cache (its accesses all miss; an L2 of size 0 sends every
//!   written sector straight to DRAM).
//! - **Workgroup (shared) memory.** `banks` banks of `bank_bytes`; a lane's access is
//!   split into the `bank_bytes` words it covers (a `vec4<u32>` is 4 words in 4
//!   consecutive banks), all lanes' words are pooled and deduplicated, and the request
//!   needs `ways` = the largest number of distinct words in one bank wavefronts. The
//!   same word for several lanes is a broadcast. So a conflict-free 16-byte-per-lane
//!   request of 32 lanes takes 4 wavefronts (512 bytes at 128 per wavefront), as on
//!   the hardware, and a conflicted one more.
//! - **Uniform memory.** The distinct byte addresses of the request: the constant path
//!   serves one address per clock and serialises distinct ones. A uniform read at an
//!   address that no run-time value sets is an instruction's constant operand, not a
//!   request (the interpreter does not trace it).
//!
//! **Interleaving.** The interpreter runs one workgroup after another, but a GPU runs
//! `W` = SMs × resident workgroups per SM ([`DeviceModel::workgroups_in_flight`]) at
//! once, and their requests meet in the L2. The model buffers the global requests of
//! each aligned group of `W` consecutive workgroups (ids `kW..(k+1)W`) and replays them
//! round-robin by request index (request 0 of every workgroup, then request 1, ...)
//! before feeding the caches. Shared and uniform requests have no cache state and are
//! counted as they arrive.
//!
//! **Time model.** The time is the largest of the limits: each memory path's
//! (`DRAM bytes / DRAM bandwidth`, L2 read sectors × `sector_bytes` / L2 bandwidth
//! plus L2 write requests, one per line a request writes, over their rate; L1
//! wavefronts plus the local-write holds per SM; shared wavefronts, uniform
//! addresses, each over its rate), the issue time (the interpreter's arithmetic
//! instructions over SMs × `issue_per_clock` × clock, or its shuffles over SMs ×
//! `shuffles_per_clock` × clock where that is longer), the latency time and the
//! launch time (workgroups per SM × `workgroup_launch_ns`); the largest names the
//! [`Bound`]. The L1s move a line's worth of a request's sectors a wavefront, at
//! `l1_wavefronts_per_s`: on Volta and later the workgroup-memory wavefront rate, the
//! L1 and workgroup memory being one SRAM array with one 128-byte data path per SM.
//! Latency (Little's law): the
//! interpreter's scoreboard gives each workgroup's critical path and the storage loads
//! on it ([`super::ExecStats::critical_ns`]); a load on it takes the latency of where read
//! requests were served (a request waits for its farthest sector: L1, L2 or DRAM),
//! DRAM's rising from `dram_latency_ns` (idle) to `loaded_latency_ns` with the share of
//! the time the busiest memory path (DRAM or L2: both queue) is in use, where the
//! latency itself sets that time when it bounds (solved as a fixed point); besides, a workgroup's own global requests pass its SM's L1
//! one wavefront per clock (`l1_wavefronts_per_s` / SMs), so its critical path also
//! holds its own L1 wavefronts (a workgroup of many column reads waits for its last one
//! to leave the L1; this is what makes larger workgroups slower at equal occupancy),
//! and its subgroups issue in turns on the SM's `issue_per_clock` schedulers, so a
//! barrier and its end wait for its last subgroup ([`super::Costs::schedulers`]);
//! the workgroups resident at once
//! ([`DeviceModel::workgroups_in_flight`]) run in whole waves. A written sector keeps a
//! byte mask in the L2; one written back in part costs a DRAM read to merge first.
//! Predicted effective GB/s = the case's declared bytes / time.
//!
//! **Sampling.** [`predict`] runs every workgroup of a grid of at most `max_workgroups`;
//! for a larger grid it runs a window of `max_workgroups` consecutive workgroups in
//! the middle of the grid (start rounded down to a multiple of `W`, so the window's
//! in-flight groups are the real ones), and scales the counts by total / simulated.
//! The middle, not the start: the first and last workgroups are the atypical ones
//! (bounds checks, partial tiles, grid edges), the middle is the steady state. Caches
//! start cold at the window, which over-counts misses on data the workgroups before
//! the window would have brought in (about one group in `max_workgroups / W`), and
//! dirty sectors left at the end are written back. [`predict_sampled`] also bounds the
//! interpreter's work: after the window's first workgroup it runs only as many more as
//! fit in a budget of lane-operations, so that a kernel whose workgroups each loop
//! thousands of times (the on-chip experiments) is sampled on a few workgroups rather
//! than simulated for minutes; such kernels do the same work in every workgroup. Such
//! a sample runs fewer workgroups than share the caches on the device, so it gets their
//! share: each L1 the share of the workgroups resident on an SM it runs, the L2 the
//! share of the window it runs (else a sample's working set would fit where the full
//! grid's does not, and a second, warm pass would find it all in the L2). The bindings must be sized for the
//! FULL grid, since the kernel indexes with the full grid's ids: that is the caller's
//! business.
//!
//! The parts, one concern each: `line_cache` is the cache of sectors in lines,
//! `line_table` its map from a line to the line's slot, `cache`
//! the L1s and the L2 built of it, `counts` what the model counts, `memory` the
//! [`MemoryModel`] that coalesces, banks and replays requests, `timing` the time model,
//! and `sampling` the run of a kernel (or of a sample of its grid) into a
//! [`Prediction`].
//!
//! [`DeviceModel`]: super::device::DeviceModel
//! [`DeviceModel::workgroups_in_flight`]: super::device::DeviceModel::workgroups_in_flight

mod cache;
mod counts;
#[cfg(test)]
mod fixtures;
mod line_cache;
mod line_table;
mod memory;
mod sampling;
mod timing;

pub use counts::Counts;
pub use counts::Traffic;
pub use sampling::predict;
pub(crate) use sampling::{Sampling, predict_sampled};
pub(crate) use timing::Terms;
pub use timing::{Bound, Prediction};
