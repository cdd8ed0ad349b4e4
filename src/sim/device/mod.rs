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
    /// Where its numbers come from, in one line (`simulate --device list`); each
    /// number's own source is a comment beside it in the preset.
    pub sources: &'static str,
    /// Lanes per subgroup (warp / wavefront / SIMD width).
    pub subgroup_size: u32,
    /// DRAM/L2 access granule.
    pub(crate) sector_bytes: u32,
    /// Cache line (4 sectors on NVIDIA).
    pub(crate) line_bytes: u32,
    /// Shared-memory banks and the width of one bank.
    pub banks: u32,
    pub(crate) bank_bytes: u32,
    /// L1 data cache per SM assumed available to a kernel (0 disables the L1).
    pub(crate) l1_bytes: u64,
    /// Whole-chip L2 (0 disables the L2: every sector access goes to DRAM).
    pub(crate) l2_bytes: u64,
    /// Partitions the L2 is split into, each near its own share of the SMs (1: one
    /// L2). A read that misses the L1 hits near while it finds its line among what its
    /// partition's SMs read lately (an equal share of `l2_bytes`); a hit anywhere else
    /// in the L2 takes [`DeviceModel::l2_far_latency_ns`]. Only latency depends on it.
    pub(crate) l2_partitions: u32,
    /// A last-level cache between the L2 and DRAM, whole chip: AMD's Infinity Cache
    /// (MALL), Apple's system-level cache (0: none). It is memory-side: reads that miss
    /// the L2 look in it and allocate in it, write-backs pass through it to DRAM and
    /// leave it a clean copy.
    pub(crate) llc_bytes: u64,
    /// The last-level cache's read bandwidth (sectors it serves to the L2), GB/s.
    pub(crate) llc_gbps: f64,
    /// Streaming multiprocessors (compute units; CPU cores for lavapipe).
    pub(crate) sms: u32,
    /// Resident lanes per SM and resident workgroups per SM: together with the
    /// workgroup size they give how many workgroups are in flight at once.
    pub(crate) max_lanes_per_sm: u32,
    pub(crate) max_workgroups_per_sm: u32,
    /// DRAM bandwidth as a copy meets it (as many bytes written as read), GB/s.
    pub(crate) dram_gbps: f64,
    /// A read-only stream's DRAM rate over a copy's (`hierarchy/dram_read` reads faster
    /// than `copy/peak` copies: docs/hierarchy.md; why was not isolated). Reads
    /// move at `dram_gbps` times this, writes at [`DeviceModel::dram_write_gbps`],
    /// which keeps a copy at `dram_gbps`. 1: one rate for both directions.
    pub(crate) dram_read_speedup: f64,
    /// The DRAM time a request of part of a line costs for each sector of the line it
    /// does not move, as a share of one sector's transfer time. The L2 sends the
    /// sectors of a line that go to or from DRAM together as one request; a stream of
    /// whole lines is what `dram_gbps` measures, and a request of fewer sectors leaves
    /// part of its slot (command, bank activation and bus turnaround it cannot hide
    /// behind the transfers of a full line) unused. 0: DRAM time is bytes alone.
    pub(crate) dram_unmoved_sector_share: f64,
    /// L2 read bandwidth (sectors served to the SMs).
    pub(crate) l2_gbps: f64,
    /// Write requests the L2 takes per second, whole chip: one per line a request
    /// writes, whatever part of the line (one sector's byte or all four sectors) it
    /// carries. `transpose/naive_row` (one 4-byte store per line) measures it; a
    /// coalesced store of whole lines then runs at this rate × `line_bytes`, about the
    /// L2 bandwidth on the H100 as calibrated (docs/simulator.md, Device models and
    /// calibration).
    pub(crate) l2_write_requests_per_s: f64,
    /// The reach of the L2's request coalescer, in bytes: it merges a read of a sector
    /// that another SM's read already has in flight, so the slices never see it. With
    /// reads spread over a working set of S bytes, a read finds its sector in flight
    /// with the probability a Poisson arrival does, and exp(−this ÷ S) of the reads
    /// pass on ([`DeviceModel::l2_pass_share`]). 0: no coalescer modelled.
    pub(crate) l2_coalesce_bytes: f64,
    /// Textures laid out block-linear (NVIDIA's tiled images): the simulator traces a
    /// texel where that layout keeps it ([`crate::sim::exec::block_linear_offset`]).
    pub(crate) block_linear_textures: bool,
    /// Shared-memory wavefronts per second, whole chip.
    pub(crate) shared_wavefronts_per_s: f64,
    /// L1 wavefronts (a line's worth of a global request's sectors each) per second,
    /// whole chip. On Volta and later the L1 and shared memory are one array with one data
    /// path, so it is `shared_wavefronts_per_s`; Maxwell and Pascal have separate
    /// L1/texture caches.
    pub(crate) l1_wavefronts_per_s: f64,
    /// Distinct uniform/constant addresses served per second, whole chip.
    pub(crate) uniform_addresses_per_s: f64,
    pub(crate) clock_ghz: f64,
    /// Latency of a dependent load that hits the L1, hits the L2, and goes to an idle
    /// DRAM (a pointer chase's steps).
    pub l1_latency_ns: f64,
    /// Latency of a dependent load that hits the L2, in ns.
    pub l2_latency_ns: f64,
    /// A dependent load's latency when it hits the L2 outside its SMs' partition
    /// ([`DeviceModel::l2_partitions`]), over `l2_latency_ns`: calibrating the near
    /// latency sets the far one with it ([`DeviceModel::l2_far_latency_ns`]).
    pub(crate) l2_far_over_near: f64,
    /// Latency of a dependent load that misses the L2 and hits the last-level cache.
    pub(crate) llc_latency_ns: f64,
    pub(crate) dram_latency_ns: f64,
    /// Latency of a DRAM load while streaming kernels keep the DRAM busy (queueing in
    /// the memory system): a load's latency rises from `dram_latency_ns` towards it
    /// with the share of DRAM bandwidth in use.
    pub(crate) loaded_latency_ns: f64,
    /// Latency of a workgroup-memory, constant-cache or L1-resident local load.
    pub(crate) on_chip_latency_ns: f64,
    /// A workgroup barrier, once every subgroup has arrived.
    pub(crate) barrier_ns: f64,
    /// Arithmetic subgroup instructions one SM issues per clock (its schedulers).
    pub(crate) issue_per_clock: f64,
    /// f32 fused multiply-adds one SM completes per clock, lanes (the CUDA C++
    /// Programming Guide's throughput table: 128 on compute capability 9.0).
    pub(crate) f32_fma_per_clock: f64,
    /// 32-bit integer multiply-adds one SM completes per clock, lanes (the same table:
    /// 64 on compute capability 9.0).
    pub(crate) int_mad_per_clock: f64,
    /// Instructions an integer division or remainder by a non-constant compiles to.
    pub(crate) int_div_instructions: u32,
    /// Subgroup shuffles or broadcasts one SM performs per clock, beside its
    /// arithmetic: the shuffle unit's rate.
    pub(crate) shuffles_per_clock: f64,
    /// Shortest interval between two workgroup launches on one SM.
    pub(crate) workgroup_launch_ns: f64,
    /// Issuing one dispatch in a compute pass, when nothing orders it after the one
    /// before ([`crate::sim::dispatch`]).
    pub(crate) dispatch_ns: f64,
    /// What a dispatch that must wait for the one before (a barrier between them) adds
    /// to its kernel's own time: the barrier, the drain and the refill.
    pub(crate) dependent_dispatch_ns: f64,
    /// One compute pass of one dispatch, in an encoder of many.
    pub(crate) pass_ns: f64,
    /// Host↔device link: the rate a large DMA transfer between pinned host memory and
    /// the device reaches, GB/s ([`crate::sim::transfer`]).
    pub(crate) link_gbps: f64,
    /// The transfer model's costs per api ([`crate::sim::transfer`]).
    pub(crate) transfer: crate::sim::link::TransferCosts,
    /// True when some of the above come from measurements ([`crate::run::calibrate`]).
    pub calibrated: bool,
}

mod amd;
mod apple;
mod intel;
mod nvidia;

use amd::{MI100, MI210, MI300X, RX6900XT, RX7900XTX};
use apple::M2;
use intel::{A770, B580};
use nvidia::{A100, GTX1050TI, H100, H200, L40, RTX4090, V100};

/// SMs × one per clock × clock, per second.
const fn per_clock(sms: u32, clock_ghz: f64) -> f64 {
    sms as f64 * clock_ghz * 1e9
}

/// `base` with `sms` SMs at `clock_ghz`, and the fields every preset but the H100
/// derives from those two: one workgroup-memory wavefront, one L1 wavefront and one
/// uniform address per clock per SM, and the latencies in clocks (estimates: the H100
/// preset's, 33 for an L1 hit and 260 for an L2 hit, Luo et al. 2024; 30 for a
/// workgroup-memory load and 20 for a barrier). A preset with its own numbers for any
/// of them sets them after.
const fn clocked(base: DeviceModel, sms: u32, clock_ghz: f64) -> DeviceModel {
    DeviceModel {
        sms,
        clock_ghz,
        shared_wavefronts_per_s: per_clock(sms, clock_ghz),
        l1_wavefronts_per_s: per_clock(sms, clock_ghz),
        uniform_addresses_per_s: per_clock(sms, clock_ghz),
        l1_latency_ns: 33.0 / clock_ghz,
        l2_latency_ns: 260.0 / clock_ghz,
        on_chip_latency_ns: 30.0 / clock_ghz,
        barrier_ns: 20.0 / clock_ghz,
        ..base
    }
}

/// Mesa lavapipe (llvmpipe's Vulkan driver) on 2 cores of the CI machine's AMD EPYC.
/// Rough: a CPU has no sectors, banks or constant cache, so the model's structure fits
/// it loosely, and every rate below is an estimate; calibrate DRAM from a measurement.
const LAVAPIPE: DeviceModel = DeviceModel {
    name: "lavapipe",
    description: "Mesa lavapipe (software Vulkan) on 2 CPU cores",
    sources: "lscpu on the CI machine (caches, cores); every rate an estimate",
    subgroup_size: 8, // llvmpipe: 8 lanes of 32 bits in a 256-bit AVX2 vector
    sector_bytes: 32,
    line_bytes: 64, // x86 cache line
    banks: 32,      // no banks on a CPU: kept at 32 × 4 so the ways stay defined
    bank_bytes: 4,
    l1_bytes: 32 << 10, // lscpu on the CI machine: 32 KiB L1d per core
    l2_bytes: 32 << 20, // lscpu: 32 MiB L3 (shared last level plays the L2's part)
    l2_partitions: 1,
    llc_bytes: 0, // the L3 plays the L2's part
    llc_gbps: 0.0,
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
    l2_coalesce_bytes: 0.0,
    block_linear_textures: false,
    // Estimate: one 8-lane vector access per core per clock.
    shared_wavefronts_per_s: per_clock(2, 2.5),
    l1_wavefronts_per_s: per_clock(2, 2.5),
    uniform_addresses_per_s: per_clock(2, 2.5),
    clock_ghz: 2.5, // estimate: lscpu gives no clock on the CI machine
    // Estimates for a CPU core: L1, L3 and DRAM latency of a recent x86 part.
    l1_latency_ns: 2.0,
    l2_latency_ns: 15.0,
    l2_far_over_near: 1.0,
    llc_latency_ns: 0.0,
    dram_latency_ns: 100.0,
    loaded_latency_ns: 150.0,
    on_chip_latency_ns: 2.0,
    barrier_ns: 50.0,
    issue_per_clock: 1.0,
    // Estimates: an 8-lane AVX2 vector on each of two FMA ports per core per clock, and
    // one 8-lane integer multiply.
    f32_fma_per_clock: 16.0,
    int_mad_per_clock: 8.0,
    int_div_instructions: 1,
    shuffles_per_clock: 1.0, // estimate: a vector permute per core per clock
    workgroup_launch_ns: 200.0,
    // Estimates: the H100's (the front end's costs are the driver's and the GPU's; no
    // run on lavapipe has measured them).
    dispatch_ns: 220.0,
    dependent_dispatch_ns: 2240.0,
    pass_ns: 5090.0,
    // No bus: a software adapter's "device" memory is host memory, so a transfer is
    // a host copy (one thread, [`crate::sim::link::HOST_COPY_GBPS_PER_THREAD`]).
    link_gbps: crate::sim::link::HOST_COPY_GBPS_PER_THREAD,
    transfer: crate::sim::link::ESTIMATED_COSTS,
    calibrated: false,
};

/// The fallback when an adapter matches no preset: a generic mid-range discrete GPU
/// with NVIDIA-like structure. Every number is an estimate; calibrate it.
const GENERIC: DeviceModel = DeviceModel {
    name: "generic",
    description: "generic mid-range discrete GPU (estimate; calibrate)",
    sources: "none: every number an estimate",
    l1_bytes: 64 << 10,
    l2_bytes: 4 << 20,
    l2_partitions: 1,
    sms: 30,
    max_lanes_per_sm: 2048,
    max_workgroups_per_sm: 32,
    dram_gbps: 400.0,
    l2_gbps: 1200.0,
    l2_write_requests_per_s: 1200e9 / 32.0,
    l2_coalesce_bytes: 0.0,
    block_linear_textures: false,
    shared_wavefronts_per_s: per_clock(30, 1.5),
    l1_wavefronts_per_s: per_clock(30, 1.5),
    uniform_addresses_per_s: per_clock(30, 1.5),
    clock_ghz: 1.5,
    on_chip_latency_ns: 30.0 / 1.5,
    barrier_ns: 20.0 / 1.5,
    shuffles_per_clock: 1.0, // estimate: one subgroup per clock, as NVIDIA's
    ..H100
};

static PRESETS: [DeviceModel; 17] = [
    H100, H200, A100, L40, RTX4090, V100, GTX1050TI, MI100, MI210, MI300X, RX6900XT, RX7900XTX,
    A770, B580, M2, LAVAPIPE, GENERIC,
];

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
pub(crate) fn closest_preset(adapter_name: &str) -> &'static DeviceModel {
    let a = adapter_name.to_ascii_lowercase();
    // The first match wins: the H200 before the H100 ("H100" is no part of "H200",
    // but a longer name goes first all the same).
    let keys: [(&[&str], &str); 16] = [
        (&["h200"], "h200"),
        (&["h100"], "h100"),
        (&["a100"], "a100"),
        (&["l40"], "l40"),
        (&["4090"], "rtx4090"),
        (&["v100"], "v100"),
        (&["1050 ti", "1050ti"], "gtx1050ti"),
        (&["mi100"], "mi100"),
        (&["mi210"], "mi210"),
        (&["mi300x"], "mi300x"),
        (&["6900 xt", "6900xt"], "rx6900xt"),
        (&["7900 xtx", "7900xtx"], "rx7900xtx"),
        (&["a770"], "a770"),
        (&["b580"], "b580"),
        (&["apple m2"], "m2"),
        (&["llvmpipe", "lavapipe"], "lavapipe"),
    ];
    keys.iter()
        .find(|(subs, _)| subs.iter().any(|s| a.contains(s)))
        .and_then(|&(_, name)| preset(name))
        .unwrap_or(&PRESETS[PRESETS.len() - 1])
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
    pub(crate) fn sectors_per_line(&self) -> u64 {
        (u64::from(self.line_bytes) / u64::from(self.sector_bytes.max(1))).max(1)
    }

    /// The levels a sweep of this device shows, nearest first: the L1, the L2 (near and
    /// far where it is split), the last-level cache where there is one, DRAM.
    pub(crate) fn level_names(&self) -> Vec<&'static str> {
        let mut names = vec!["L1"];
        if self.l2_partitions > 1 {
            names.extend(["L2 near", "L2 far"]);
        } else {
            names.push("L2");
        }
        if self.llc_bytes > 0 {
            names.push("LLC");
        }
        names.push("DRAM");
        names
    }

    /// Latency of a dependent load that hits the L2 outside its SMs' partition, ns.
    pub(crate) fn l2_far_latency_ns(&self) -> f64 {
        self.l2_latency_ns * self.l2_far_over_near
    }

    /// DRAM read bandwidth, GB/s.
    pub(crate) fn dram_read_gbps(&self) -> f64 {
        self.dram_gbps * self.dram_read_speedup
    }

    /// DRAM write bandwidth, GB/s: what a copy's time leaves its writes once its reads
    /// are paid at [`DeviceModel::dram_read_gbps`] (a byte read and a byte written take
    /// 2 / `dram_gbps`). A read rate of at most half the copy's would leave the writes
    /// no time: they are bounded at twice the copy's rate.
    pub(crate) fn dram_write_gbps(&self) -> f64 {
        let read = self.dram_read_speedup.max(f64::MIN_POSITIVE);
        self.dram_gbps / (2.0 - 1.0 / read).max(0.5)
    }

    /// The share of L2 reads the request coalescer passes on to the slices when the
    /// reads spread over `working_set` bytes ([`DeviceModel::l2_coalesce_bytes`]); all
    /// of them where the working set is not known (0).
    pub(crate) fn l2_pass_share(&self, working_set: u64) -> f64 {
        if self.l2_coalesce_bytes <= 0.0 || working_set == 0 {
            return 1.0;
        }
        (-self.l2_coalesce_bytes / working_set as f64).exp()
    }

    /// Workgroups resident on one SM for a workgroup of `lanes` invocations (at least
    /// 1); shared-memory and register limits are not modelled.
    pub(crate) fn workgroups_per_sm(&self, lanes: u32) -> u32 {
        (self.max_lanes_per_sm / lanes.max(1)).clamp(1, self.max_workgroups_per_sm.max(1))
    }

    /// Workgroups in flight on the whole chip.
    pub(crate) fn workgroups_in_flight(&self, lanes: u32) -> u64 {
        u64::from(self.sms.max(1)) * u64::from(self.workgroups_per_sm(lanes))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_h100_coalescer_passes_on_what_its_counters_counted() {
        // Probe p42 (docs/probes/2026-11-27): the share of sectors the L2's request
        // coalescer passed on, for a buffer of 1, 2, 4, 16 and 64 MiB every SM reads.
        for (mib, counted) in [(1, 0.70), (2, 0.86), (4, 0.93), (16, 0.98), (64, 0.99)] {
            let share = H100.l2_pass_share(mib << 20);
            assert!((share - counted).abs() <= 0.025, "{mib} MiB: {share}");
        }
        // Nothing merged where the reads' spread is not known, nor without a coalescer.
        assert_eq!(H100.l2_pass_share(0), 1.0);
        assert_eq!(GENERIC.l2_pass_share(1 << 20), 1.0);
    }

    #[test]
    fn presets_by_name_and_adapter() {
        assert_eq!(presets().len(), 17);
        assert_eq!(presets().last().map(|d| d.name), Some("generic"));
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
            ("AMD Radeon RX 7900 XTX", "rx7900xtx"),
            ("AMD Radeon RX 6900 XT", "rx6900xt"),
            ("AMD Instinct MI210", "mi210"),
            ("Intel(R) Arc(TM) A770 Graphics", "a770"),
            ("Apple M2", "m2"),
            ("NVIDIA GeForce RTX 4090", "rtx4090"),
            ("NVIDIA L40", "l40"),
            ("AMD Radeon RX 580", "generic"),
        ] {
            assert_eq!(closest_preset(adapter).name, want, "{adapter}");
        }
    }

    #[test]
    fn every_preset_is_whole_and_names_its_sources() {
        for d in presets() {
            assert!(
                !d.sources.is_empty() && !d.description.is_empty(),
                "{}",
                d.name
            );
            assert!(d.subgroup_size.is_power_of_two() && (4..=128).contains(&d.subgroup_size));
            assert!(
                d.line_bytes % d.sector_bytes == 0 && d.sector_bytes <= 64,
                "{}",
                d.name
            );
            assert!(
                d.sms > 0 && d.clock_ghz > 0.0 && d.dram_gbps > 0.0,
                "{}",
                d.name
            );
            // Latencies rise level by level, and a last-level cache sits between the
            // L2 and DRAM.
            assert!(d.l1_latency_ns < d.l2_latency_ns, "{}", d.name);
            assert!(d.l2_far_latency_ns() < d.dram_latency_ns, "{}", d.name);
            if d.llc_bytes > 0 {
                assert!(
                    d.llc_bytes > d.l2_bytes && d.llc_gbps > d.dram_gbps,
                    "{}",
                    d.name
                );
                let llc = d.llc_latency_ns;
                assert!(
                    d.l2_latency_ns < llc && llc < d.dram_latency_ns,
                    "{}",
                    d.name
                );
            }
        }
        let names = |n: &str| preset(n).map(DeviceModel::level_names);
        assert_eq!(names("h100"), Some(vec!["L1", "L2 near", "L2 far", "DRAM"]));
        assert_eq!(names("rx6900xt"), Some(vec!["L1", "L2", "LLC", "DRAM"]));
        assert_eq!(names("mi100"), Some(vec!["L1", "L2", "DRAM"]));
        assert_eq!(preset("mi210").map(|d| d.subgroup_size), Some(64));
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
