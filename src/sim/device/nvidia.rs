//! NVIDIA presets: Hopper (H100, H200), Ampere (A100), Ada (L40, RTX 4090), Volta
//! (V100) and Pascal (GTX 1050 Ti). One warp of 32 lanes, 32-byte sectors in 128-byte
//! lines and 32 banks of 4 bytes on all of them (CUDA C++ Programming Guide).

use super::{DeviceModel, clocked, per_clock};

/// NVIDIA H100 SXM5 80 GB. Source: "NVIDIA H100 Tensor Core GPU Architecture"
/// whitepaper (2022) and the H100 datasheet.
pub(super) const H100: DeviceModel = DeviceModel {
    name: "h100",
    description: "NVIDIA H100 SXM5 80 GB",
    sources: "H100 whitepaper (2022), datasheet; latencies: Luo et al. 2024, Chips and Cheese 2023, gpu-benches (far L2)",
    subgroup_size: 32, // warp, all NVIDIA GPUs
    sector_bytes: 32,  // whitepapers: 32-byte sectors, 128-byte lines
    line_bytes: 128,
    banks: 32, // CUDA C++ Programming Guide, compute capability 9.0: 32 banks of 4 bytes
    bank_bytes: 4,
    // Whitepaper: 256 KB combined L1/shared per SM (up to 228 KB shared); the L1's
    // share depends on the carve-out the driver picks. Estimate: gpu-benches'
    // `gpu-cache` (Ernst et al.) publishes an H100 PCIe L1 plateau up to about 200 KB
    // per SM for a kernel with little shared memory.
    l1_bytes: 200 << 10,
    l2_bytes: 50 << 20, // whitepaper: 50 MB L2
    // The A100 whitepaper: the L2 "is divided into two partitions", each caching data
    // for the SMs of the GPCs directly connected to it. The H100's chase measures two
    // L2 latencies, the near one to about half the L2 (docs/hierarchy.md, The levels).
    l2_partitions: 2,
    llc_bytes: 0, // NVIDIA GPUs have no cache beyond the L2
    llc_gbps: 0.0,
    sms: 132,                  // whitepaper: 132 SMs on H100 SXM5
    max_lanes_per_sm: 2048,    // whitepaper: 64 warps per SM
    max_workgroups_per_sm: 32, // whitepaper: 32 thread blocks per SM
    dram_gbps: 3350.0,         // datasheet: HBM3 3.35 TB/s
    // Estimate: one rate for both directions; calibrated from hierarchy/dram_read.
    dram_read_speedup: 1.0,
    // Estimate: copy/stride at strides 9 to 32, where every lane's sector is alone in
    // its line, falls steadily from a whole-sector stream's rate to about half of it
    // at one sector per 128-byte line (a third of a sector's time per sector left out
    // of a line); calibrated from copy/stride at stride 32.
    dram_unmoved_sector_share: 0.33,
    // Estimate: NVIDIA does not publish Hopper L2 bandwidth; microbenchmarks report
    // 5.5-7 TB/s, below A100's 5120 B/clk scaled to this clock (10 TB/s). Calibrated
    // from hierarchy/shared at 16 MiB.
    l2_gbps: 7000.0,
    // Estimate: as many write requests as sector reads (7 TB/s / 32 B); calibrated
    // from transpose/naive_row (docs/simulator.md, Device models and calibration).
    l2_write_requests_per_s: 7000e9 / 32.0,
    // Nsight Compute's `lrc__` counters on an H100 (probe p42, docs/probes/2026-11-27):
    // of the sectors the L1s asked for from a buffer every SM reads, the coalescer
    // passed on 70 % at 1 MiB, 86 % at 2, 93 % at 4, 98 % at 16 and 99 % at 64 MiB.
    // exp(−0.357 MiB ÷ S) gives 70, 84, 91, 98 and 99 %: the reach is fitted to the
    // 1 MiB point alone.
    l2_coalesce_bytes: 0.357 * (1 << 20) as f64,
    block_linear_textures: true,
    shared_wavefronts_per_s: per_clock(132, 1.98),
    l1_wavefronts_per_s: per_clock(132, 1.98),
    uniform_addresses_per_s: per_clock(132, 1.98),
    clock_ghz: 1.98, // datasheet: max boost 1980 MHz (SXM5)
    // Estimates from published pointer chases on Hopper (Luo et al., "Benchmarking and
    // Dissecting the Nvidia Hopper GPU Architecture", 2024; Chips and Cheese, "Nvidia's
    // H100: Funny L2, and Tons of Bandwidth", 2023): about 33 and 260 clocks for L1
    // and L2 hits, 500-600 ns to DRAM. The suite's latency/chase replaces them.
    l1_latency_ns: 33.0 / 1.98,
    l2_latency_ns: 260.0 / 1.98,
    // Estimate: gpu-benches' `gpu-latency` publishes 265 and 475 clocks for the near
    // and far L2 of an H100 PCIe.
    l2_far_over_near: 475.0 / 265.0,
    llc_latency_ns: 0.0,
    dram_latency_ns: 550.0,
    // Estimate: a scalar copy at full occupancy (2048 lanes × 4 B per SM in flight)
    // reaches about 2.2 TB/s of 3 TB/s: Little's law gives about 1 µs. Calibrated
    // from copy/offset.
    loaded_latency_ns: 1000.0,
    // Estimates: about 30 clocks for a shared-memory load (Luo et al. 2024) and 20
    // for a barrier.
    on_chip_latency_ns: 30.0 / 1.98,
    barrier_ns: 20.0 / 1.98,
    // Whitepaper: 4 warp schedulers per SM, 1 instruction/clock. Calibrated from
    // bank/stride at stride 1 (its tax-free kernel runs at the unrolled CUDA twin's
    // speed, 1.5x the rolled one's).
    issue_per_clock: 4.0,
    // CUDA C++ Programming Guide, "Arithmetic Instructions" (throughput table), compute
    // capability 9.0: 128 f32 multiply-adds and 64 32-bit integer multiply-adds per
    // clock per SM (8.9, the L40's and RTX 4090's, the same). Calibrated from
    // compute/f32 and compute/int at 1024 multiply-adds.
    f32_fma_per_clock: 128.0,
    int_mad_per_clock: 64.0,
    // CUDA C++ Programming Guide, "Arithmetic Instructions": integer division and
    // modulo compile to up to 20 instructions.
    int_div_instructions: 20,
    // CUDA C++ Programming Guide, "Arithmetic Instructions" (throughput table), compute
    // capability 9.0: warp shuffle 32 results per clock per SM, one 32-lane subgroup.
    shuffles_per_clock: 1.0,
    // Estimate, calibrated from copy/launch at 64 invocations per workgroup.
    workgroup_launch_ns: 80.0,
    // docs/launch.md's first H100 (GPU-85180884, 4523a3e, wgpu tax-free;
    // docs/probes/2026-12-07/plain.csv): 0.22 µs per dispatch in a pass, 2.24 µs per
    // dispatch on one buffer (the one-workgroup kernel's own time within it) and 5.09 µs
    // per pass. The first two are calibrated from launch/apart and launch/shared; the
    // pass's is not, so that launch/pass is held out.
    dispatch_ns: 220.0,
    dependent_dispatch_ns: 2240.0,
    pass_ns: 5090.0,
    // PCIe 5.0 x16 (the H100 SXM5's host interface, whitepaper): 32 GT/s × 16 lanes
    // × 128/130 / 8 = 63.0 GB/s raw, × 256/280 for a 256-byte payload's header and
    // framing (estimate). Calibrated from transfer/upload_pinned at 256 MiB.
    link_gbps: crate::sim::link::PCIE5_X16_GBPS,
    // Estimates; calibrated from four rows per api (crate::calibrate::CALIBRATION).
    transfer: crate::sim::link::ESTIMATED_COSTS,
    calibrated: false,
};

/// NVIDIA H200 SXM 141 GB: the H100's GH100 chip with HBM3e. Source: NVIDIA H200
/// datasheet (2024); chip numbers as [`H100`].
pub(super) const H200: DeviceModel = DeviceModel {
    name: "h200",
    description: "NVIDIA H200 SXM 141 GB",
    sources: "H200 datasheet (2024); the chip as the h100 preset",
    dram_gbps: 4800.0, // datasheet: HBM3e 4.8 TB/s
    // The full GH100 has 60 MB of L2 ("NVIDIA H100 Tensor Core GPU Architecture",
    // full GH100 implementation), the H100 SXM5 50 MB; the lent H200 reports
    // 62914560 bytes (`cudaDeviceProp::l2CacheSize` through PyTorch).
    l2_bytes: 60 << 20,
    ..H100
};

/// NVIDIA A100 SXM4 40 GB. Source: "NVIDIA A100 Tensor Core GPU Architecture"
/// whitepaper (2020). The 80 GB part has 2039 GB/s DRAM: calibrate.
pub(super) const A100: DeviceModel = DeviceModel {
    name: "a100",
    description: "NVIDIA A100 SXM4 40 GB",
    sources: "A100 whitepaper (2020); latencies: the h100 preset's clocks (estimate)",
    // Whitepaper: 192 KB combined L1/shared per SM (up to 164 KB shared); estimate: half.
    l1_bytes: 96 << 10,
    l2_bytes: 40 << 20, // whitepaper: 40 MB L2
    max_lanes_per_sm: 2048,
    max_workgroups_per_sm: 32,
    dram_gbps: 1555.0, // whitepaper: 1555 GB/s HBM2
    // Whitepaper: L2 read bandwidth 5120 bytes/clk × 1.41 GHz.
    l2_gbps: 5120.0 * 1.41,
    l2_write_requests_per_s: 5120.0 * 1.41e9 / 32.0, // estimate: as many as reads
    l2_coalesce_bytes: 0.0,
    block_linear_textures: true,
    // CUDA C++ Programming Guide, throughput table, compute capability 8.0: warp
    // shuffle 32 results per clock per SM.
    shuffles_per_clock: 1.0,
    link_gbps: crate::sim::link::PCIE4_X16_GBPS, // whitepaper: PCIe 4.0
    // Estimates: the H100 preset's latencies in clocks (33 and 260, Luo et al. 2024) at
    // the A100's clock; an A100 L2 is split in two as the H100's.
    // CUDA C++ Programming Guide, throughput table, compute capability 8.0: 64 f32 and
    // 64 integer multiply-adds per clock per SM.
    f32_fma_per_clock: 64.0,
    // Whitepaper: 108 SMs, boost 1410 MHz.
    ..clocked(H100, 108, 1.41)
};

/// NVIDIA Tesla V100 SXM2. Source: "NVIDIA Tesla V100 GPU Architecture" whitepaper
/// (2017); L2 bytes/clk from the A100 whitepaper's comparison table.
pub(super) const V100: DeviceModel = DeviceModel {
    name: "v100",
    description: "NVIDIA Tesla V100 SXM2",
    sources: "V100 whitepaper (2017), A100 whitepaper (L2 B/clk); latencies: Jia et al. 2018",
    // Whitepaper: 128 KB combined L1/shared per SM (up to 96 KB shared); estimate: half.
    l1_bytes: 64 << 10,
    l2_bytes: 6 << 20, // whitepaper: 6144 KB L2
    l2_partitions: 1,  // the V100 whitepaper names no L2 partitions
    max_lanes_per_sm: 2048,
    max_workgroups_per_sm: 32,
    dram_gbps: 900.0, // whitepaper: 900 GB/s HBM2
    // A100 whitepaper: V100 L2 read bandwidth 2048 bytes/clk × 1.53 GHz.
    l2_gbps: 2048.0 * 1.53,
    l2_write_requests_per_s: 2048.0 * 1.53e9 / 32.0, // estimate: as many as reads
    l2_coalesce_bytes: 0.0,
    block_linear_textures: true,
    // Jia et al., "Dissecting the NVIDIA Volta GPU Architecture via Microbenchmarking"
    // (2018): 28 clocks for an L1 hit and 193 for an L2 hit.
    l1_latency_ns: 28.0 / 1.53,
    l2_latency_ns: 193.0 / 1.53,
    // CUDA C++ Programming Guide, throughput table, compute capability 7.0: warp
    // shuffle 32 results per clock per SM.
    shuffles_per_clock: 1.0,
    link_gbps: crate::sim::link::PCIE3_X16_GBPS, // whitepaper: PCIe 3.0
    // CUDA C++ Programming Guide, throughput table, compute capability 7.0: 64 f32 and
    // 64 integer multiply-adds per clock per SM.
    f32_fma_per_clock: 64.0,
    // Whitepaper: 80 SMs, boost 1530 MHz.
    ..clocked(H100, 80, 1.53)
};

/// NVIDIA GeForce GTX 1050 Ti (GP107). Sources: the GeForce GTX 1050 Ti specification
/// page (768 CUDA cores, 1392 MHz boost, 7 Gbps GDDR5 on 128 bits) and the
/// "NVIDIA GeForce GTX 1080" (GP104) whitepaper for the Pascal SM.
pub(super) const GTX1050TI: DeviceModel = DeviceModel {
    name: "gtx1050ti",
    description: "NVIDIA GeForce GTX 1050 Ti",
    sources: "GTX 1050 Ti specification page, GTX 1080 (GP104) whitepaper; the rest estimates",
    // GP104 whitepaper: 48 KB L1/texture per SM, shared memory (96 KB) separate.
    l1_bytes: 48 << 10,
    // GP104 whitepaper: 256 KB L2 per 32-bit memory controller; GP107 has 4.
    l2_bytes: 1 << 20,
    l2_partitions: 1, // the GP104 whitepaper names no L2 partitions
    max_lanes_per_sm: 2048,
    max_workgroups_per_sm: 32,
    dram_gbps: 112.0, // spec page: 7 Gbps × 128 bits / 8
    // Estimate (NVIDIA does not publish Pascal L2 bandwidth): 64 B/clk per memory
    // controller × 4 controllers × 1.392 GHz.
    l2_gbps: 64.0 * 4.0 * 1.392,
    // Estimate: a quarter of the read sectors, as the H100's calibrated
    // transpose/naive_row writes lines against its L2's read sectors.
    l2_write_requests_per_s: 0.27 * 64.0 * 4.0 * 1.392e9 / 32.0,
    l2_coalesce_bytes: 0.0,
    block_linear_textures: true,
    // GP104 whitepaper, SM diagram: two L1/texture caches per SM (one per pair of
    // processing blocks), apart from shared memory. Estimate: one line each per clock.
    l1_wavefronts_per_s: 2.0 * per_clock(6, 1.392),
    // CUDA C++ Programming Guide, throughput table, compute capability 6.1: warp
    // shuffle 32 results per clock per SM.
    shuffles_per_clock: 1.0,
    // Spec page: PCIe 3.0 x16.
    link_gbps: crate::sim::link::PCIE3_X16_GBPS,
    // Estimates for GDDR5 Pascal (pointer chases report 400-600 ns): the H100's
    // latencies, in ns (the L1's and L2's too, not its clocks at this clock).
    l1_latency_ns: H100.l1_latency_ns,
    l2_latency_ns: H100.l2_latency_ns,
    // CUDA C++ Programming Guide, throughput table, compute capability 6.1: 128 f32
    // multiply-adds per clock per SM; a 32-bit integer multiply-add takes "multiple
    // instructions" (estimate: a quarter of the f32 rate).
    int_mad_per_clock: 32.0,
    // Spec page: 768 CUDA cores / 128 per Pascal SM, boost 1392 MHz.
    ..clocked(H100, 6, 1.392)
};

/// NVIDIA L40 (AD102, PCIe). Sources: "NVIDIA ADA GPU Architecture" whitepaper (2022)
/// and the L40 datasheet.
pub(super) const L40: DeviceModel = DeviceModel {
    name: "l40",
    description: "NVIDIA L40 48 GB",
    sources: "Ada whitepaper (2022), L40 datasheet; L2 rate and latencies estimates",
    // Whitepaper: 128 KB combined L1/shared per SM; estimate: all but 28 KB of shared
    // memory a small kernel keeps, as the H100's 200 of 256 KB.
    l1_bytes: 100 << 10,
    l2_bytes: 96 << 20, // datasheet: 96 MB L2
    l2_partitions: 1,   // the Ada whitepaper names no L2 partitions
    // CUDA C++ Programming Guide, compute capability 8.9: 48 warps, 24 blocks per SM.
    max_lanes_per_sm: 1536,
    max_workgroups_per_sm: 24,
    dram_gbps: 864.0, // datasheet: 864 GB/s GDDR6
    // Estimate (NVIDIA does not publish Ada L2 bandwidth): 64 B/clk for each of 48
    // L2 slices (2 MB each) at the boost clock.
    l2_gbps: 64.0 * 48.0 * 2.49,
    l2_write_requests_per_s: 64.0 * 48.0 * 2.49e9 / 32.0, // estimate: as many as reads
    l2_coalesce_bytes: 0.0,
    block_linear_textures: true,
    l2_far_over_near: 1.0,
    // CUDA C++ Programming Guide, throughput table, compute capability 8.9: warp
    // shuffle 32 results per clock per SM.
    shuffles_per_clock: 1.0,
    link_gbps: crate::sim::link::PCIE4_X16_GBPS, // datasheet: PCIe 4.0 x16
    // Estimates: the H100 preset's latencies in clocks (33 and 260) at this clock; the
    // DRAM's (GDDR6) as the H100's.
    // Datasheet: 18176 CUDA cores / 128 per SM, boost 2490 MHz.
    ..clocked(H100, 142, 2.49)
};

/// NVIDIA GeForce RTX 4090 (AD102). Sources: "NVIDIA ADA GPU Architecture" whitepaper
/// (2022), its RTX 4090 column.
pub(super) const RTX4090: DeviceModel = DeviceModel {
    name: "rtx4090",
    description: "NVIDIA GeForce RTX 4090",
    sources: "Ada whitepaper (2022); L2 rate and latencies estimates as the l40 preset's",
    l2_bytes: 72 << 20, // whitepaper: 72 MB L2
    dram_gbps: 1008.0,  // whitepaper: 21 Gbps GDDR6X × 384 bits / 8
    // Estimate: as the L40's, 64 B/clk for each of 36 L2 slices (2 MB each).
    l2_gbps: 64.0 * 36.0 * 2.52,
    l2_write_requests_per_s: 64.0 * 36.0 * 2.52e9 / 32.0,
    l2_coalesce_bytes: 0.0,
    block_linear_textures: true,
    // Whitepaper: 128 SMs, boost 2520 MHz.
    ..clocked(L40, 128, 2.52)
};
