//! AMD presets: CDNA (Instinct MI100, MI210, MI300X), 64-lane wavefronts, and RDNA
//! (Radeon RX 6900 XT, RX 7900 XTX), 32-lane waves and an Infinity Cache beyond the L2.
//!
//! What the model maps where: a compute unit (CU) is an SM; its vector L1 (RDNA: the
//! L0) is the model's L1. RDNA's L1 of 128 or 256 KB shared by a shader array of CUs is
//! not modelled: an L0 miss goes to the L2. The Infinity Cache is the model's
//! last-level cache. Latencies and every rate AMD does not publish are estimates.

use super::{DeviceModel, H100, clocked, per_clock};

/// AMD Instinct MI100 (CDNA, gfx908). Sources: "AMD CDNA Architecture" whitepaper
/// (2020) and the MI100 datasheet.
pub(super) const MI100: DeviceModel = DeviceModel {
    name: "mi100",
    description: "AMD Instinct MI100 32 GB",
    sources: "CDNA whitepaper (2020), MI100 datasheet; latencies and L1 rate estimates",
    subgroup_size: 64, // whitepaper: 64-lane wavefronts
    // GCN lineage: 64-byte cache lines in the vector L1 and the L2; estimate: a
    // 64-byte DRAM request.
    sector_bytes: 64,
    line_bytes: 64,
    banks: 32, // whitepaper: 64 KB LDS per CU, 32 banks of 4 bytes
    bank_bytes: 4,
    l1_bytes: 16 << 10, // whitepaper: 16 KB vector L1 per CU
    l2_bytes: 8 << 20,  // whitepaper: 8 MB L2, 16 channels
    l2_partitions: 1,
    llc_bytes: 0,
    llc_gbps: 0.0,
    // Whitepaper: 4 SIMD16 units per CU, each holding 10 wavefronts of 64 lanes.
    max_lanes_per_sm: 4 * 10 * 64,
    max_workgroups_per_sm: 16, // estimate: GCN's 16 workgroups per CU
    dram_gbps: 1228.8,         // datasheet: HBM2 1.2288 TB/s
    // Whitepaper: 16 L2 channels of 64 bytes a clock.
    l2_gbps: 16.0 * 64.0 * 1.502,
    l2_write_requests_per_s: 16.0 * 64.0 * 1.502e9 / 64.0, // estimate: as many as reads
    l2_coalesce_bytes: 0.0,
    block_linear_textures: false,
    l2_far_over_near: 1.0,
    llc_latency_ns: 0.0,
    // A CU issues one wavefront instruction a clock: 4 SIMD16 units take 4 clocks each
    // for 64 lanes (whitepaper).
    issue_per_clock: 1.0,
    // AMD's MI100 datasheet: 23.1 TFLOPs f32 at 1502 MHz on 120 CUs, 64 multiply-adds
    // per clock per CU (the MI210's 22.6 at 1.7 GHz on 104 and the MI300X's 81.7 at
    // 2.1 GHz on 304, unpacked, the same). Estimate: a 32-bit integer multiply at a
    // quarter of that (GCN and CDNA ISA guides: `v_mul_lo_u32` is a quarter-rate
    // instruction).
    f32_fma_per_clock: 64.0,
    int_mad_per_clock: 16.0,
    // Estimate: one cross-lane (DPP or permute) wavefront instruction a clock.
    shuffles_per_clock: 1.0,
    link_gbps: crate::sim::link::PCIE4_X16_GBPS, // datasheet: PCIe 4.0 x16
    // LDS: 32 banks × 4 bytes = 128 bytes a clock per CU, one wavefront (of 32 lanes'
    // words) a clock.
    // Estimate: the vector L1 returns 64 bytes (one line) a clock per CU.
    // Estimate: the scalar cache serves one address a clock per CU.
    // Estimates: the H100 preset's latencies in clocks (33 and 260) at this clock,
    // DRAM's (HBM2) as the H100's.
    // Datasheet: 120 CUs, peak engine clock 1502 MHz.
    ..clocked(H100, 120, 1.502)
};

/// AMD Instinct MI210 (CDNA 2, gfx90a). Sources: "AMD CDNA 2 Architecture" whitepaper
/// (2021) and the MI210 datasheet.
pub(super) const MI210: DeviceModel = DeviceModel {
    name: "mi210",
    description: "AMD Instinct MI210 64 GB",
    sources: "CDNA 2 whitepaper (2021), MI210 datasheet; latencies and L1 rate estimates",
    line_bytes: 128,   // whitepaper: 128-byte L2 lines
    l2_bytes: 8 << 20, // whitepaper: 8 MB L2 per die, 16 channels
    // Whitepaper: 8 wavefronts per SIMD (down from CDNA's 10).
    max_lanes_per_sm: 4 * 8 * 64,
    dram_gbps: 1638.4, // datasheet: HBM2e 1.6384 TB/s
    // Whitepaper: the L2's channels doubled to 128 bytes a clock each.
    l2_gbps: 16.0 * 128.0 * 1.7,
    l2_write_requests_per_s: 16.0 * 128.0 * 1.7e9 / 128.0, // estimate: as many as reads
    l2_coalesce_bytes: 0.0,
    block_linear_textures: false,
    // Estimate: the vector L1 returns 64 bytes a clock per CU, half a 128-byte line.
    l1_wavefronts_per_s: 0.5 * per_clock(104, 1.7),
    // Datasheet: 104 CUs, peak engine clock 1700 MHz.
    ..clocked(MI100, 104, 1.7)
};

/// AMD Instinct MI300X (CDNA 3, gfx942). Sources: "AMD CDNA 3 Architecture" whitepaper
/// (2023) and the MI300X datasheet. Eight accelerator dies (XCDs) of 38 CUs each have
/// their own 4 MB L2 and share a 256 MB Infinity Cache: the model has one L2, so it
/// takes one XCD's 4 MB (what a buffer every CU reads finds cached in each) at the
/// whole chip's rate.
pub(super) const MI300X: DeviceModel = DeviceModel {
    name: "mi300x",
    description: "AMD Instinct MI300X 192 GB",
    sources: "CDNA 3 whitepaper (2023), MI300X datasheet; latencies and L1 rate estimates",
    l1_bytes: 32 << 10,   // whitepaper: 32 KB vector L1 per CU
    l2_bytes: 4 << 20,    // whitepaper: 4 MB L2 per XCD
    llc_bytes: 256 << 20, // whitepaper: 256 MB AMD Infinity Cache
    // Whitepaper: 17.2 TB/s peak Infinity Cache bandwidth.
    llc_gbps: 17200.0,
    dram_gbps: 5300.0, // datasheet: HBM3 5.3 TB/s
    // Whitepaper: 2 KB a clock of L2 bandwidth per XCD (16 channels × 128 bytes).
    l2_gbps: 8.0 * 2048.0 * 2.1,
    l2_write_requests_per_s: 8.0 * 2048.0 * 2.1e9 / 128.0,
    l2_coalesce_bytes: 0.0,
    block_linear_textures: false,
    // Estimate: between the L2's and DRAM's, as an H100 far L2 (475 clocks).
    llc_latency_ns: 475.0 / 2.1,
    link_gbps: crate::sim::link::PCIE5_X16_GBPS, // datasheet: PCIe 5.0 x16
    // Whitepaper: the vector L1 doubled its bandwidth to 128 bytes a clock per CU.
    // Datasheet: 304 CUs, peak engine clock 2100 MHz.
    ..clocked(MI210, 304, 2.1)
};

/// AMD Radeon RX 6900 XT (RDNA 2, Navi 21). Sources: "AMD RDNA 2" architecture
/// whitepaper (2020) and the RX 6900 XT specification page.
pub(super) const RX6900XT: DeviceModel = DeviceModel {
    name: "rx6900xt",
    description: "AMD Radeon RX 6900 XT",
    sources: "RDNA 2 whitepaper (2020), RX 6900 XT specifications; latencies and L2 rate estimates",
    // Whitepaper: wave32 is RDNA's native width (and HIP's); a Vulkan driver may pick
    // wave64 for a compute shader.
    subgroup_size: 32,
    sector_bytes: 64, // estimate: the Infinity Cache's and GDDR6's 64-byte requests
    line_bytes: 128,  // whitepaper: 128-byte lines in the L0, L1 and L2
    banks: 32,        // whitepaper: LDS of 32 banks per CU half of a WGP
    bank_bytes: 4,
    l1_bytes: 16 << 10, // whitepaper: 16 KB vector L0 per CU
    l2_bytes: 4 << 20,  // specifications: 4 MB L2
    l2_partitions: 1,
    llc_bytes: 128 << 20, // specifications: 128 MB AMD Infinity Cache
    // AMD's RDNA 2 launch figure: 1.99 TB/s peak Infinity Cache bandwidth (64 bytes
    // a clock on each of 16 channels at 1.94 GHz).
    llc_gbps: 1987.0,
    // Whitepaper: 2 SIMD32 units per CU, 20 waves each (estimate for RDNA 2: RDNA's).
    max_lanes_per_sm: 2 * 20 * 32,
    max_workgroups_per_sm: 16, // estimate, as CDNA's
    dram_gbps: 512.0,          // specifications: 16 Gbps GDDR6 × 256 bits / 8
    // Estimate: 16 L2 channels of 64 bytes a clock at the boost clock.
    l2_gbps: 16.0 * 64.0 * 2.25,
    l2_write_requests_per_s: 16.0 * 64.0 * 2.25e9 / 128.0,
    l2_coalesce_bytes: 0.0,
    block_linear_textures: false,
    l2_far_over_near: 1.0,
    llc_latency_ns: 475.0 / 2.25,
    // Whitepaper: each of a CU's 2 SIMD32 units issues a wave32 instruction a clock.
    issue_per_clock: 2.0,
    // AMD's RX 6900 XT specifications: 23.04 TFLOPs f32 at 2250 MHz on 80 CUs, 64
    // multiply-adds per clock per CU. Estimate: integer multiplies at a quarter, as
    // CDNA's.
    f32_fma_per_clock: 64.0,
    int_mad_per_clock: 16.0,
    shuffles_per_clock: 1.0,                     // estimate
    link_gbps: crate::sim::link::PCIE4_X16_GBPS, // specifications: PCIe 4.0 x16
    // Whitepaper: the L0 returns 128 bytes (one line) a clock per CU.
    // Estimates: the H100 preset's latencies in clocks at this clock; the Infinity
    // Cache's between the L2's and DRAM's, as an H100 far L2 (475 clocks).
    // Specifications: 80 CUs, boost clock 2250 MHz.
    ..clocked(H100, 80, 2.25)
};

/// AMD Radeon RX 7900 XTX (RDNA 3, Navi 31). Sources: "AMD RDNA 3" architecture
/// material (2022) and the RX 7900 XTX specification page.
pub(super) const RX7900XTX: DeviceModel = DeviceModel {
    name: "rx7900xtx",
    description: "AMD Radeon RX 7900 XTX",
    sources: "RDNA 3 launch material (2022), RX 7900 XTX specifications; latencies and L2 rate estimates",
    l1_bytes: 32 << 10,  // RDNA 3: the vector L0 doubled to 32 KB per CU
    l2_bytes: 6 << 20,   // specifications: 6 MB L2
    llc_bytes: 96 << 20, // specifications: 96 MB AMD Infinity Cache (second generation)
    llc_gbps: 5300.0,    // AMD: up to 5.3 TB/s peak Infinity Cache bandwidth
    // Estimate: 16 waves per SIMD32 (RDNA 3 has larger registers per wave).
    max_lanes_per_sm: 2 * 16 * 32,
    dram_gbps: 960.0, // specifications: 20 Gbps GDDR6 × 384 bits / 8
    // Estimate: 24 L2 channels (6 memory controllers × 4) of 64 bytes a clock.
    l2_gbps: 24.0 * 64.0 * 2.5,
    l2_write_requests_per_s: 24.0 * 64.0 * 2.5e9 / 128.0,
    l2_coalesce_bytes: 0.0,
    block_linear_textures: false,
    llc_latency_ns: 475.0 / 2.5,
    // AMD's RX 7900 XTX specifications: 61.4 TFLOPs f32 at 2500 MHz on 96 CUs, RDNA 3
    // issuing two f32 multiply-adds per lane (128 per clock per CU).
    f32_fma_per_clock: 128.0,
    // Specifications: 96 CUs, boost clock 2500 MHz.
    ..clocked(RX6900XT, 96, 2.5)
};
