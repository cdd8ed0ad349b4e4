//! Intel presets: Xe-HPG (Arc A770) and Xe2-HPG (Arc B580). An Xe core is an SM; its
//! L1 (shared with the SLM, the workgroup memory) is the model's L1. Intel publishes
//! capacities, clocks and bus widths; latencies and rates are estimates.

use super::{DeviceModel, H100, clocked};

/// Intel Arc A770 16 GB (Xe-HPG, ACM-G10). Sources: the Arc A770 specification page and
/// Intel's Xe-HPG architecture disclosure (Architecture Day 2021).
pub(super) const A770: DeviceModel = DeviceModel {
    name: "a770",
    description: "Intel Arc A770 16 GB",
    sources: "Arc A770 specifications, Xe-HPG Architecture Day 2021; latencies and rates estimates",
    // Xe-HPG vector engines run SIMD8, 16 or 32; estimate: the compiler's usual SIMD16
    // for compute.
    subgroup_size: 16,
    sector_bytes: 64, // estimate: Intel GPU caches keep 64-byte lines
    line_bytes: 64,
    banks: 16, // estimate: SLM of 16 banks of 4 bytes (64 bytes a clock)
    bank_bytes: 4,
    // Architecture Day: 192 KB L1/SLM per Xe core; estimate: 128 KB of it L1 beside
    // a kernel's SLM.
    l1_bytes: 128 << 10,
    l2_bytes: 16 << 20, // specifications: 16 MB L2
    l2_partitions: 1,
    llc_bytes: 0,
    llc_gbps: 0.0,
    // Architecture Day: 16 vector engines per Xe core, 8 threads each; SIMD16 threads.
    max_lanes_per_sm: 16 * 8 * 16,
    max_workgroups_per_sm: 16, // estimate
    dram_gbps: 560.0,          // specifications: 17.5 Gbps GDDR6 × 256 bits / 8
    // Estimate: 64 bytes a clock per Xe core's share of the L2.
    l2_gbps: 32.0 * 64.0 * 2.1,
    l2_write_requests_per_s: 32.0 * 64.0 * 2.1e9 / 64.0,
    l2_coalesce_bytes: 0.0,
    block_linear_textures: false,
    l2_far_over_near: 1.0,
    llc_latency_ns: 0.0,
    // Estimate: 16 vector engines of SIMD8 take 2 clocks for a SIMD16 instruction.
    issue_per_clock: 8.0,
    // Intel's Xe-core: 16 vector engines of 8 f32 lanes, 128 multiply-adds per clock.
    // Estimate: integer multiplies at a quarter of that.
    f32_fma_per_clock: 128.0,
    int_mad_per_clock: 32.0,
    shuffles_per_clock: 1.0,                     // estimate
    link_gbps: crate::sim::link::PCIE4_X16_GBPS, // specifications: PCIe 4.0 x16
    // Estimate: the L1 returns 64 bytes (one line) a clock per Xe core.
    // Estimates: the H100 preset's latencies in clocks at this clock.
    // Specifications: 32 Xe cores, graphics clock 2100 MHz.
    ..clocked(H100, 32, 2.1)
};

/// Intel Arc B580 (Xe2-HPG, BMG-G21). Sources: the Arc B580 specification page and
/// Intel's Xe2 architecture disclosure (2024).
pub(super) const B580: DeviceModel = DeviceModel {
    name: "b580",
    description: "Intel Arc B580 12 GB",
    sources: "Arc B580 specifications, Xe2 disclosure (2024); latencies and rates estimates",
    // Xe2: SIMD16 vector engines, native width 16.
    subgroup_size: 16,
    // Xe2 disclosure: 256 KB L1/SLM per Xe2 core; estimate: 192 KB of it L1.
    l1_bytes: 192 << 10,
    l2_bytes: 18 << 20, // specifications: 18 MB L2
    // Xe2 disclosure: 8 vector engines of SIMD16 per core, 8 threads each.
    max_lanes_per_sm: 8 * 8 * 16,
    dram_gbps: 456.0, // specifications: 19 Gbps GDDR6 × 192 bits / 8
    l2_gbps: 20.0 * 64.0 * 2.67,
    l2_write_requests_per_s: 20.0 * 64.0 * 2.67e9 / 64.0,
    l2_coalesce_bytes: 0.0,
    block_linear_textures: false,
    // Estimate: 8 SIMD16 vector engines, one instruction a clock each.
    issue_per_clock: 8.0,
    // Specifications: PCIe 4.0 x8, half an x16 link.
    link_gbps: crate::sim::link::PCIE4_X16_GBPS / 2.0,
    // Specifications: 20 Xe2 cores, graphics clock 2670 MHz.
    ..clocked(A770, 20, 2.67)
};
