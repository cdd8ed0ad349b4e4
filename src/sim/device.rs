//! Device models: the handful of numbers the memory model ([`super::model`]) needs about
//! a GPU, with presets for well-known devices and a model calibrated from a measurement.
//!
//! Every preset number names its source in a comment: the vendor's architecture
//! whitepaper or datasheet where one publishes it, otherwise it is marked as an
//! estimate and says how it was reached. Numbers NVIDIA does not publish (L2 bandwidth
//! on Hopper, the L1 share of the unified L1/shared array the driver picks) are
//! estimates; [`DeviceModel::calibrated`] replaces the one that matters most for
//! streaming kernels, DRAM bandwidth, by a measurement.
//!
//! Rates are chip-wide: `shared_wavefronts_per_s` = SMs × 1 wavefront per clock × clock
//! and `uniform_addresses_per_s` = SMs × 1 distinct constant-cache address per clock ×
//! clock (the constant path broadcasts one address per clock and serialises distinct
//! ones). GB means 10^9 bytes.

/// What the memory model needs to know about one device.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DeviceModel {
    /// Short preset name (`h100`, `lavapipe`, ...), lower case.
    pub name: &'static str,
    /// The product it describes.
    pub description: &'static str,
    /// Lanes per subgroup (warp / wavefront / SIMD width).
    pub subgroup_size: u32,
    /// DRAM/L2 access granule.
    pub sector_bytes: u32,
    /// Cache line (4 sectors on NVIDIA).
    pub line_bytes: u32,
    /// Shared-memory banks and the width of one bank.
    pub banks: u32,
    pub bank_bytes: u32,
    /// L1 data cache per SM assumed available to a kernel (0 disables the L1).
    pub l1_bytes: u64,
    /// Whole-chip L2 (0 disables the L2: every sector access goes to DRAM).
    pub l2_bytes: u64,
    /// Partitions the L2 is split into, each near its own share of the SMs (1: one
    /// L2). A read that misses the L1 hits near while it finds its line among what its
    /// partition's SMs read lately (an equal share of `l2_bytes`); a hit anywhere else
    /// in the L2 takes [`DeviceModel::l2_far_latency_ns`]. Only latency depends on it.
    pub l2_partitions: u32,
    /// Streaming multiprocessors (compute units; CPU cores for lavapipe).
    pub sms: u32,
    /// Resident lanes per SM and resident workgroups per SM: together with the
    /// workgroup size they give how many workgroups are in flight at once.
    pub max_lanes_per_sm: u32,
    pub max_workgroups_per_sm: u32,
    /// DRAM bandwidth as a copy meets it (as many bytes written as read), GB/s.
    pub dram_gbps: f64,
    /// A read-only stream's DRAM rate over a copy's (`hierarchy/dram_read` reads faster
    /// than `copy/peak` copies: docs/hierarchy.md; why was not isolated). Reads
    /// move at `dram_gbps` times this, writes at [`DeviceModel::dram_write_gbps`],
    /// which keeps a copy at `dram_gbps`. 1: one rate for both directions.
    pub dram_read_speedup: f64,
    /// The DRAM time a request of part of a line costs for each sector of the line it
    /// does not move, as a share of one sector's transfer time. The L2 sends the
    /// sectors of a line that go to or from DRAM together as one request; a stream of
    /// whole lines is what `dram_gbps` measures, and a request of fewer sectors leaves
    /// part of its slot (command, bank activation and bus turnaround it cannot hide
    /// behind the transfers of a full line) unused. 0: DRAM time is bytes alone.
    pub dram_unmoved_sector_share: f64,
    /// L2 read bandwidth (sectors served to the SMs).
    pub l2_gbps: f64,
    /// Write requests the L2 takes per second, whole chip: one per line a request
    /// writes, whatever part of the line (one sector's byte or all four sectors) it
    /// carries. `transpose/naive_row` (one 4-byte store per line) measures it; a
    /// coalesced store of whole lines then runs at this rate × `line_bytes`, about the
    /// L2 bandwidth on the H100 as calibrated (docs/simulator.md, Device models and
    /// calibration).
    pub l2_write_requests_per_s: f64,
    /// Shared-memory wavefronts per second, whole chip.
    pub shared_wavefronts_per_s: f64,
    /// L1 wavefronts (a line's worth of a global request's sectors each) per second,
    /// whole chip. On Volta and later the L1 and shared memory are one array with one data
    /// path, so it is `shared_wavefronts_per_s`; Maxwell and Pascal have separate
    /// L1/texture caches.
    pub l1_wavefronts_per_s: f64,
    /// Distinct uniform/constant addresses served per second, whole chip.
    pub uniform_addresses_per_s: f64,
    pub clock_ghz: f64,
    /// Latency of a dependent load that hits the L1, hits the L2, and goes to an idle
    /// DRAM (a pointer chase's steps).
    pub l1_latency_ns: f64,
    pub l2_latency_ns: f64,
    /// A dependent load's latency when it hits the L2 outside its SMs' partition
    /// ([`DeviceModel::l2_partitions`]), over `l2_latency_ns`: calibrating the near
    /// latency sets the far one with it ([`DeviceModel::l2_far_latency_ns`]).
    pub l2_far_over_near: f64,
    pub dram_latency_ns: f64,
    /// Latency of a DRAM load while streaming kernels keep the DRAM busy (queueing in
    /// the memory system): a load's latency rises from `dram_latency_ns` towards it
    /// with the share of DRAM bandwidth in use.
    pub loaded_latency_ns: f64,
    /// Latency of a workgroup-memory, constant-cache or L1-resident local load.
    pub on_chip_latency_ns: f64,
    /// A workgroup barrier, once every subgroup has arrived.
    pub barrier_ns: f64,
    /// Arithmetic subgroup instructions one SM issues per clock (its schedulers).
    pub issue_per_clock: f64,
    /// Instructions an integer division or remainder by a non-constant compiles to.
    pub int_div_instructions: u32,
    /// Subgroup shuffles or broadcasts one SM performs per clock, beside its
    /// arithmetic: the shuffle unit's rate.
    pub shuffles_per_clock: f64,
    /// Shortest interval between two workgroup launches on one SM.
    pub workgroup_launch_ns: f64,
    /// Host↔device link: the rate a large DMA transfer between pinned host memory and
    /// the device reaches, GB/s ([`crate::sim::transfer`]).
    pub link_gbps: f64,
    /// The fixed cost of one host↔device transfer: the call, the DMA's setup and the
    /// host seeing it complete.
    pub transfer_overhead_us: f64,
    /// True when some of the above come from measurements ([`crate::run::calibrate`]).
    pub calibrated: bool,
}

/// SMs × one per clock × clock, per second.
const fn per_clock(sms: u32, clock_ghz: f64) -> f64 {
    sms as f64 * clock_ghz * 1e9
}

/// NVIDIA H100 SXM5 80 GB. Source: "NVIDIA H100 Tensor Core GPU Architecture"
/// whitepaper (2022) and the H100 datasheet.
const H100: DeviceModel = DeviceModel {
    name: "h100",
    description: "NVIDIA H100 SXM5 80 GB",
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
    // CUDA C++ Programming Guide, "Arithmetic Instructions": integer division and
    // modulo compile to up to 20 instructions.
    int_div_instructions: 20,
    // CUDA C++ Programming Guide, "Arithmetic Instructions" (throughput table), compute
    // capability 9.0: warp shuffle 32 results per clock per SM, one 32-lane subgroup.
    shuffles_per_clock: 1.0,
    // Estimate, calibrated from copy/launch at 64 invocations per workgroup.
    workgroup_launch_ns: 80.0,
    // PCIe 5.0 x16 (the H100 SXM5's host interface, whitepaper): 32 GT/s × 16 lanes
    // × 128/130 / 8 = 63.0 GB/s raw, × 256/280 for a 256-byte payload's header and
    // framing (estimate). Calibrated from transfer/upload_pinned at 256 MiB.
    link_gbps: crate::sim::link::PCIE5_X16_GBPS,
    // Estimate: a `cudaMemcpy` of a few bytes takes about 10 µs. Calibrated from
    // transfer/upload_pinned at 4 KiB.
    transfer_overhead_us: 10.0,
    calibrated: false,
};

/// NVIDIA H200 SXM 141 GB: the H100's GH100 chip with HBM3e. Source: NVIDIA H200
/// datasheet (2024); chip numbers as [`H100`].
const H200: DeviceModel = DeviceModel {
    name: "h200",
    description: "NVIDIA H200 SXM 141 GB",
    dram_gbps: 4800.0, // datasheet: HBM3e 4.8 TB/s
    // The full GH100 has 60 MB of L2 ("NVIDIA H100 Tensor Core GPU Architecture",
    // full GH100 implementation), the H100 SXM5 50 MB; the lent H200 reports
    // 62914560 bytes (`cudaDeviceProp::l2CacheSize` through PyTorch).
    l2_bytes: 60 << 20,
    ..H100
};

/// NVIDIA A100 SXM4 40 GB. Source: "NVIDIA A100 Tensor Core GPU Architecture"
/// whitepaper (2020). The 80 GB part has 2039 GB/s DRAM: calibrate.
const A100: DeviceModel = DeviceModel {
    name: "a100",
    description: "NVIDIA A100 SXM4 40 GB",
    // Whitepaper: 192 KB combined L1/shared per SM (up to 164 KB shared); estimate: half.
    l1_bytes: 96 << 10,
    l2_bytes: 40 << 20, // whitepaper: 40 MB L2
    sms: 108,           // whitepaper: 108 SMs
    max_lanes_per_sm: 2048,
    max_workgroups_per_sm: 32,
    dram_gbps: 1555.0, // whitepaper: 1555 GB/s HBM2
    // Whitepaper: L2 read bandwidth 5120 bytes/clk × 1.41 GHz.
    l2_gbps: 5120.0 * 1.41,
    l2_write_requests_per_s: 5120.0 * 1.41e9 / 32.0, // estimate: as many as reads
    shared_wavefronts_per_s: per_clock(108, 1.41),
    l1_wavefronts_per_s: per_clock(108, 1.41),
    uniform_addresses_per_s: per_clock(108, 1.41),
    clock_ghz: 1.41, // whitepaper: boost 1410 MHz
    on_chip_latency_ns: 30.0 / 1.41,
    barrier_ns: 20.0 / 1.41,
    // CUDA C++ Programming Guide, throughput table, compute capability 8.0: warp
    // shuffle 32 results per clock per SM.
    shuffles_per_clock: 1.0,
    link_gbps: crate::sim::link::PCIE4_X16_GBPS, // whitepaper: PCIe 4.0
    ..H100
};

/// NVIDIA Tesla V100 SXM2. Source: "NVIDIA Tesla V100 GPU Architecture" whitepaper
/// (2017); L2 bytes/clk from the A100 whitepaper's comparison table.
const V100: DeviceModel = DeviceModel {
    name: "v100",
    description: "NVIDIA Tesla V100 SXM2",
    // Whitepaper: 128 KB combined L1/shared per SM (up to 96 KB shared); estimate: half.
    l1_bytes: 64 << 10,
    l2_bytes: 6 << 20, // whitepaper: 6144 KB L2
    l2_partitions: 1,  // the V100 whitepaper names no L2 partitions
    sms: 80,           // whitepaper: 80 SMs
    max_lanes_per_sm: 2048,
    max_workgroups_per_sm: 32,
    dram_gbps: 900.0, // whitepaper: 900 GB/s HBM2
    // A100 whitepaper: V100 L2 read bandwidth 2048 bytes/clk × 1.53 GHz.
    l2_gbps: 2048.0 * 1.53,
    l2_write_requests_per_s: 2048.0 * 1.53e9 / 32.0, // estimate: as many as reads
    shared_wavefronts_per_s: per_clock(80, 1.53),
    l1_wavefronts_per_s: per_clock(80, 1.53),
    uniform_addresses_per_s: per_clock(80, 1.53),
    clock_ghz: 1.53, // whitepaper: boost 1530 MHz
    on_chip_latency_ns: 30.0 / 1.53,
    barrier_ns: 20.0 / 1.53,
    // CUDA C++ Programming Guide, throughput table, compute capability 7.0: warp
    // shuffle 32 results per clock per SM.
    shuffles_per_clock: 1.0,
    link_gbps: crate::sim::link::PCIE3_X16_GBPS, // whitepaper: PCIe 3.0
    ..H100
};

/// NVIDIA GeForce GTX 1050 Ti (GP107). Sources: the GeForce GTX 1050 Ti specification
/// page (768 CUDA cores, 1392 MHz boost, 7 Gbps GDDR5 on 128 bits) and the
/// "NVIDIA GeForce GTX 1080" (GP104) whitepaper for the Pascal SM.
const GTX1050TI: DeviceModel = DeviceModel {
    name: "gtx1050ti",
    description: "NVIDIA GeForce GTX 1050 Ti",
    // GP104 whitepaper: 48 KB L1/texture per SM, shared memory (96 KB) separate.
    l1_bytes: 48 << 10,
    // GP104 whitepaper: 256 KB L2 per 32-bit memory controller; GP107 has 4.
    l2_bytes: 1 << 20,
    l2_partitions: 1, // the GP104 whitepaper names no L2 partitions
    sms: 6,           // spec page: 768 CUDA cores / 128 per Pascal SM
    max_lanes_per_sm: 2048,
    max_workgroups_per_sm: 32,
    dram_gbps: 112.0, // spec page: 7 Gbps × 128 bits / 8
    // Estimate (NVIDIA does not publish Pascal L2 bandwidth): 64 B/clk per memory
    // controller × 4 controllers × 1.392 GHz.
    l2_gbps: 64.0 * 4.0 * 1.392,
    // Estimate: a quarter of the read sectors, as the H100's calibrated
    // transpose/naive_row writes lines against its L2's read sectors.
    l2_write_requests_per_s: 0.27 * 64.0 * 4.0 * 1.392e9 / 32.0,
    shared_wavefronts_per_s: per_clock(6, 1.392),
    // GP104 whitepaper, SM diagram: two L1/texture caches per SM (one per pair of
    // processing blocks), apart from shared memory. Estimate: one line each per clock.
    l1_wavefronts_per_s: 2.0 * per_clock(6, 1.392),
    uniform_addresses_per_s: per_clock(6, 1.392),
    clock_ghz: 1.392, // spec page: boost 1392 MHz
    on_chip_latency_ns: 30.0 / 1.392,
    barrier_ns: 20.0 / 1.392,
    // CUDA C++ Programming Guide, throughput table, compute capability 6.1: warp
    // shuffle 32 results per clock per SM.
    shuffles_per_clock: 1.0,
    // Spec page: PCIe 3.0 x16.
    link_gbps: crate::sim::link::PCIE3_X16_GBPS,
    // Estimates for GDDR5 Pascal (pointer chases report 400-600 ns): the H100's.
    ..H100
};

/// Mesa lavapipe (llvmpipe's Vulkan driver) on 2 cores of the CI machine's AMD EPYC.
/// Rough: a CPU has no sectors, banks or constant cache, so the model's structure fits
/// it loosely, and every rate below is an estimate; calibrate DRAM from a measurement.
const LAVAPIPE: DeviceModel = DeviceModel {
    name: "lavapipe",
    description: "Mesa lavapipe (software Vulkan) on 2 CPU cores",
    subgroup_size: 8, // llvmpipe: 8 lanes of 32 bits in a 256-bit AVX2 vector
    sector_bytes: 32,
    line_bytes: 64, // x86 cache line
    banks: 32,      // no banks on a CPU: kept at 32 × 4 so the ways stay defined
    bank_bytes: 4,
    l1_bytes: 32 << 10, // lscpu on the CI machine: 32 KiB L1d per core
    l2_bytes: 32 << 20, // lscpu: 32 MiB L3 (shared last level plays the L2's part)
    l2_partitions: 1,
    sms: 2,              // 2 cores, one workgroup per core thread at a time
    max_lanes_per_sm: 1, // llvmpipe runs one workgroup per thread: 1 resident
    max_workgroups_per_sm: 1,
    dram_gbps: 10.0, // estimate: 2 cores streaming through llvmpipe's generated code
    dram_read_speedup: 1.0,
    // Estimate: a CPU moves whole 64-byte lines; a line's unused part costs its full
    // transfer time (2 sectors of 32 bytes each), which sectors-only accounting would
    // not count.
    dram_unmoved_sector_share: 1.0,
    l2_gbps: 50.0,                        // estimate
    l2_write_requests_per_s: 50e9 / 32.0, // estimate
    // Estimate: one 8-lane vector access per core per clock.
    shared_wavefronts_per_s: per_clock(2, 2.5),
    l1_wavefronts_per_s: per_clock(2, 2.5),
    uniform_addresses_per_s: per_clock(2, 2.5),
    clock_ghz: 2.5, // estimate: lscpu gives no clock on the CI machine
    // Estimates for a CPU core: L1, L3 and DRAM latency of a recent x86 part.
    l1_latency_ns: 2.0,
    l2_latency_ns: 15.0,
    l2_far_over_near: 1.0,
    dram_latency_ns: 100.0,
    loaded_latency_ns: 150.0,
    on_chip_latency_ns: 2.0,
    barrier_ns: 50.0,
    issue_per_clock: 1.0,
    int_div_instructions: 1,
    shuffles_per_clock: 1.0, // estimate: a vector permute per core per clock
    workgroup_launch_ns: 200.0,
    // No bus: a software adapter's "device" memory is host memory, so a transfer is
    // a host copy (one thread, [`crate::sim::link::HOST_COPY_GBPS_PER_THREAD`]).
    link_gbps: crate::sim::link::HOST_COPY_GBPS_PER_THREAD,
    transfer_overhead_us: 10.0, // estimate, as the H100's
    calibrated: false,
};

/// The fallback when an adapter matches no preset: a generic mid-range discrete GPU
/// with NVIDIA-like structure. Every number is an estimate; calibrate it.
const GENERIC: DeviceModel = DeviceModel {
    name: "generic",
    description: "generic mid-range discrete GPU (estimate; calibrate)",
    l1_bytes: 64 << 10,
    l2_bytes: 4 << 20,
    l2_partitions: 1,
    sms: 30,
    max_lanes_per_sm: 2048,
    max_workgroups_per_sm: 32,
    dram_gbps: 400.0,
    l2_gbps: 1200.0,
    l2_write_requests_per_s: 1200e9 / 32.0,
    shared_wavefronts_per_s: per_clock(30, 1.5),
    l1_wavefronts_per_s: per_clock(30, 1.5),
    uniform_addresses_per_s: per_clock(30, 1.5),
    clock_ghz: 1.5,
    on_chip_latency_ns: 30.0 / 1.5,
    barrier_ns: 20.0 / 1.5,
    shuffles_per_clock: 1.0, // estimate: one subgroup per clock, as NVIDIA's
    ..H100
};

static PRESETS: [DeviceModel; 7] = [H100, H200, A100, V100, GTX1050TI, LAVAPIPE, GENERIC];

/// Every preset, `generic` last.
pub fn presets() -> &'static [DeviceModel] {
    &PRESETS
}

/// The preset called `name` (case-insensitive).
pub fn preset(name: &str) -> Option<&'static DeviceModel> {
    PRESETS.iter().find(|d| d.name.eq_ignore_ascii_case(name))
}

/// The preset for an adapter name as wgpu reports it ("NVIDIA H100 80GB HBM3",
/// "llvmpipe (LLVM 15.0.7, 256 bits)"), by substring; `generic` when none matches.
pub fn closest_preset(adapter_name: &str) -> &'static DeviceModel {
    let a = adapter_name.to_ascii_lowercase();
    let keys: [(&[&str], &DeviceModel); 6] = [
        (&["h200"], &PRESETS[1]),
        (&["h100"], &PRESETS[0]),
        (&["a100"], &PRESETS[2]),
        (&["v100"], &PRESETS[3]),
        (&["1050 ti", "1050ti"], &PRESETS[4]),
        (&["llvmpipe", "lavapipe"], &PRESETS[5]),
    ];
    keys.iter()
        .find(|(subs, _)| subs.iter().any(|s| a.contains(s)))
        .map_or(&PRESETS[6], |&(_, d)| d)
}

impl DeviceModel {
    /// This model with DRAM bandwidth set from a measured copy/peak, in effective GB/s
    /// counting read and write bytes (a peak copy is DRAM-bound, and its DRAM bytes are
    /// its declared bytes). Everything else stays the preset's.
    pub fn calibrated(&self, copy_peak_gbps: f64) -> DeviceModel {
        DeviceModel {
            dram_gbps: copy_peak_gbps,
            calibrated: true,
            ..*self
        }
    }

    /// Sectors in a line (at least 1): what coalescing, the caches' lines and the L1's
    /// rate count by.
    pub fn sectors_per_line(&self) -> u64 {
        (u64::from(self.line_bytes) / u64::from(self.sector_bytes.max(1))).max(1)
    }

    /// Latency of a dependent load that hits the L2 outside its SMs' partition, ns.
    pub fn l2_far_latency_ns(&self) -> f64 {
        self.l2_latency_ns * self.l2_far_over_near
    }

    /// DRAM read bandwidth, GB/s.
    pub fn dram_read_gbps(&self) -> f64 {
        self.dram_gbps * self.dram_read_speedup
    }

    /// DRAM write bandwidth, GB/s: what a copy's time leaves its writes once its reads
    /// are paid at [`DeviceModel::dram_read_gbps`] (a byte read and a byte written take
    /// 2 / `dram_gbps`). A read rate of at most half the copy's would leave the writes
    /// no time: they are bounded at twice the copy's rate.
    pub fn dram_write_gbps(&self) -> f64 {
        let read = self.dram_read_speedup.max(f64::MIN_POSITIVE);
        self.dram_gbps / (2.0 - 1.0 / read).max(0.5)
    }

    /// Workgroups resident on one SM for a workgroup of `lanes` invocations (at least
    /// 1); shared-memory and register limits are not modelled.
    pub fn workgroups_per_sm(&self, lanes: u32) -> u32 {
        (self.max_lanes_per_sm / lanes.max(1)).clamp(1, self.max_workgroups_per_sm.max(1))
    }

    /// Workgroups in flight on the whole chip.
    pub fn workgroups_in_flight(&self, lanes: u32) -> u64 {
        u64::from(self.sms.max(1)) * u64::from(self.workgroups_per_sm(lanes))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_by_name_and_adapter() {
        assert_eq!(presets().len(), 7);
        assert_eq!(preset("H100").map(|d| d.name), Some("h100"));
        assert_eq!(preset("GTX1050Ti").map(|d| d.name), Some("gtx1050ti"));
        assert!(preset("b200").is_none());
        for (adapter, want) in [
            ("NVIDIA H200", "h200"),
            ("NVIDIA H100 80GB HBM3", "h100"),
            ("NVIDIA A100-SXM4-40GB", "a100"),
            ("Tesla V100-SXM2-16GB", "v100"),
            ("NVIDIA GeForce GTX 1050 Ti", "gtx1050ti"),
            ("llvmpipe (LLVM 15.0.7, 256 bits)", "lavapipe"),
            ("AMD Radeon RX 7900 XTX", "generic"),
        ] {
            assert_eq!(closest_preset(adapter).name, want, "{adapter}");
        }
    }

    #[test]
    fn calibration_replaces_dram_only() {
        let h = preset("h100").copied().unwrap_or(GENERIC);
        let c = h.calibrated(2900.0);
        assert_eq!(c.dram_gbps, 2900.0);
        assert!(c.calibrated);
        assert_eq!(c.l2_bytes, h.l2_bytes);
        assert_eq!(c.l2_gbps, h.l2_gbps);
    }

    #[test]
    fn in_flight_workgroups() {
        assert_eq!(H100.workgroups_per_sm(256), 8);
        assert_eq!(H100.workgroups_per_sm(32), 32);
        assert_eq!(H100.workgroups_per_sm(4096), 1);
        assert_eq!(H100.workgroups_in_flight(256), 132 * 8);
        assert_eq!(LAVAPIPE.workgroups_in_flight(256), 2);
        // Shared-memory rates are SMs × clock.
        assert!((H100.shared_wavefronts_per_s - 132.0 * 1.98e9).abs() < 1.0);
    }
}
