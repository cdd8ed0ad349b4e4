//! Apple presets: the M2's GPU. Apple publishes the core count, the memory bandwidth
//! and Metal's limits, little else: the caches and rates are estimates. Memory is
//! unified: the system-level cache (SLC) is the model's last-level cache, and a
//! "transfer" is a host copy.

use super::{DeviceModel, H100, clocked};

/// Apple M2 with a 10-core GPU. Sources: Apple's M2 announcement (2022) and the Metal
/// feature set tables.
pub(super) const M2: DeviceModel = DeviceModel {
    name: "m2",
    description: "Apple M2 (10-core GPU)",
    sources: "Apple M2 announcement (2022), Metal feature set tables; caches, clock and rates estimates",
    subgroup_size: 32, // Metal feature set tables: SIMD-group width 32
    sector_bytes: 64,  // estimate: LPDDR5's 64-byte requests
    line_bytes: 128,   // estimate
    banks: 32,         // estimate
    bank_bytes: 4,
    l1_bytes: 8 << 10, // estimate: a small L1 beside 32 KB of threadgroup memory
    l2_bytes: 1 << 20, // estimate: a GPU L2 of 1 MB
    l2_partitions: 1,
    llc_bytes: 8 << 20, // estimate: an 8 MB system-level cache shared with the CPU
    llc_gbps: 200.0,    // estimate: twice the DRAM rate
    // Estimate: 32 SIMD-groups of 32 lanes per core (Metal allows 1024 threads a
    // threadgroup).
    max_lanes_per_sm: 1024,
    max_workgroups_per_sm: 8,     // estimate
    dram_gbps: 100.0,             // announcement: 100 GB/s unified memory (LPDDR5)
    l2_gbps: 10.0 * 64.0 * 1.398, // estimate: 64 bytes a clock per core
    l2_write_requests_per_s: 10.0 * 64.0 * 1.398e9 / 128.0,
    l2_coalesce_bytes: 0.0,
    block_linear_textures: false,
    l2_far_over_near: 1.0,
    llc_latency_ns: 475.0 / 1.398,
    issue_per_clock: 4.0, // estimate: 4 SIMD-group schedulers per core
    // Apple's M2: 10 GPU cores of 128 ALUs, 3.6 TFLOPs f32 at 1398 MHz. Estimate:
    // integer multiplies at a quarter of that.
    f32_fma_per_clock: 128.0,
    int_mad_per_clock: 32.0,
    shuffles_per_clock: 1.0, // estimate
    // Unified memory: no bus, a transfer is one host thread's copy.
    link_gbps: crate::sim::link::HOST_COPY_GBPS_PER_THREAD,
    // Estimates: the H100 preset's latencies in clocks at this clock; the SLC's as an
    // H100 far L2 (475 clocks); DRAM's (LPDDR5) as the H100's.
    // Announcement: 10 GPU cores; estimate: the clock macOS reports for the M2's GPU.
    ..clocked(H100, 10, 1.398)
};
