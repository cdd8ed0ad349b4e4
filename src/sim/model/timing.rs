//! The time model: a dispatch's scaled counts and work become each limit's time (the
//! memory paths' bandwidths, issue, latency by Little's law, launch) in [`Terms`]; the
//! largest is the predicted time and names the [`Bound`].

use super::counts::Counts;
use crate::sim::device::DeviceModel;
use crate::sim::exec::MultiplyAdds;
use crate::sim::{Costs, ExecStats};

/// What bounds the predicted time: a memory path's bandwidth, or the latency, issue
/// or launch limit of the workgroups in flight.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Bound {
    /// DRAM bandwidth.
    Dram,
    /// The last-level cache beyond the L2 (Infinity Cache, system-level cache).
    Llc,
    /// L2 bandwidth.
    L2,
    /// L1 bandwidth.
    L1,
    /// Shared-memory bandwidth (bank wavefronts).
    Shared,
    /// The uniform path's addresses per second.
    Uniform,
    /// Dependent memory rounds × latency over the workgroups resident at once
    /// (Little's law): too few loads in flight to fill the memory system.
    Latency,
    /// Instructions per lane over the device's issue rate.
    Issue,
    /// Traffic of private arrays that live in local memory.
    Local,
    /// Workgroups launched per second.
    Launch,
    /// Issuing the dispatch: the front end's, a barrier's or a pass's cost per
    /// dispatch ([`crate::sim::dispatch`]).
    Dispatch,
    /// A host↔device transfer's link rate ([`crate::sim::transfer`]).
    Link,
    /// A host thread's (or threads') copy of the bytes.
    HostCopy,
    /// A host↔device transfer's fixed cost per transfer.
    Overhead,
    /// The kernel touches no modelled memory: time 0.
    None,
}

impl Bound {
    /// The name in results files (`sim_bound`) and tables.
    pub fn name(self) -> &'static str {
        match self {
            Bound::Dram => "dram",
            Bound::Llc => "llc",
            Bound::L2 => "l2",
            Bound::L1 => "l1",
            Bound::Shared => "banks",
            Bound::Uniform => "uniform",
            Bound::Latency => "latency",
            Bound::Issue => "issue",
            Bound::Local => "local",
            Bound::Launch => "launch",
            Bound::Dispatch => "dispatch",
            Bound::Link => "link",
            Bound::HostCopy => "host",
            Bound::Overhead => "overhead",
            Bound::None => "none",
        }
    }

    /// The bound in words, for a report beside the bar.
    pub(crate) fn describe(self) -> &'static str {
        match self {
            Bound::Dram => "DRAM bandwidth",
            Bound::Llc => "last-level cache bandwidth",
            Bound::L2 => "L2 bandwidth",
            Bound::L1 => "L1 wavefronts",
            Bound::Shared => "shared-memory bank wavefronts",
            Bound::Uniform => "constant-cache addresses",
            Bound::Latency => "memory latency: too few loads in flight",
            Bound::Issue => "instruction issue",
            Bound::Local => "local-memory traffic of a private array",
            Bound::Launch => "workgroup launch rate",
            Bound::Dispatch => "issuing the dispatch (a barrier or a pass per dispatch)",
            Bound::Link => "the host-device link's rate",
            Bound::HostCopy => "the host's copy of the bytes",
            Bound::Overhead => "the fixed cost per transfer",
            Bound::None => "no modelled memory traffic",
        }
    }

    /// Every bound, in the order above.
    pub const ALL: [Bound; 15] = [
        Bound::Dram,
        Bound::Llc,
        Bound::L2,
        Bound::L1,
        Bound::Shared,
        Bound::Uniform,
        Bound::Latency,
        Bound::Issue,
        Bound::Local,
        Bound::Launch,
        Bound::Dispatch,
        Bound::Link,
        Bound::HostCopy,
        Bound::Overhead,
        Bound::None,
    ];
}

impl std::fmt::Display for Bound {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Bound {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Bound::ALL
            .into_iter()
            .find(|b| b.name() == s)
            .ok_or_else(|| format!("unknown bound `{s}`"))
    }
}

/// A prediction for a whole dispatch (counts scaled to the full grid).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Prediction {
    /// Predicted time of one dispatch, in seconds.
    pub time_s: f64,
    /// What bounds it.
    pub bound: Bound,
    /// Declared bytes / time (0 when time is 0).
    pub effective_gbps: f64,
    /// Bytes read from DRAM.
    pub dram_read_bytes: u64,
    pub(crate) dram_write_bytes: u64,
    /// Sector accesses reaching the L2.
    pub(crate) l2_sectors: u64,
    /// Global requests (reads, writes, atomics).
    pub requests: u64,
    /// Average distinct sectors per global request (0 with no global request).
    pub sectors_per_request: f64,
    /// The share of the bytes of those sectors that the lanes address: 0.25 when 8 of
    /// every 32 bytes fetched are used; None with no global request.
    pub sector_use: Option<f64>,
    pub(crate) shared_wavefronts: u64,
    /// Average ways (wavefronts) per shared-memory request; None with none.
    pub bank_ways: Option<f64>,
    pub(crate) uniform_addresses: u64,
    /// Average distinct addresses per uniform request; None with none.
    pub uniform_addresses_per_request: Option<f64>,
    pub(crate) simulated_workgroups: u64,
    pub(crate) total_workgroups: u64,
    /// The simulated window's raw counts, unscaled.
    pub counts: Counts,
    /// Each limit's time, seconds; the largest is `time_s`.
    pub(crate) terms: Terms,
}

/// The time each limit of the model allows a dispatch, seconds.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct Terms {
    pub dram: f64,
    /// Of `dram`, the time of the bytes read.
    pub(crate) dram_reads: f64,
    /// Of `dram`, the time of partial-line requests' unmoved sectors.
    pub(crate) dram_partial: f64,
    pub(crate) llc: f64,
    pub(crate) l2: f64,
    /// Of `l2`, the time of sector writes.
    pub(crate) l2_writes: f64,
    pub(crate) l1: f64,
    pub shared: f64,
    pub uniform: f64,
    pub issue: f64,
    /// Of `issue`, the f32 multiply-adds' time on the FMA pipe.
    pub(crate) f32_fma: f64,
    /// Of `issue`, the integer multiply-adds' time on the integer pipe.
    pub(crate) int_mad: f64,
    pub latency: f64,
    pub launch: f64,
    /// Issuing the dispatch ([`crate::sim::dispatch`]): added to the rest where the
    /// dispatch waits for the one before, the whole time where it does not; 0 but in
    /// the `launch` family.
    pub(crate) dispatch: f64,
}

impl Terms {
    /// Each limit with the bound it names, in order of precedence: on a tie the
    /// earlier names the bound. `dram_reads`, `dram_partial`, `l2_writes`, `f32_fma`
    /// and `int_mad` are parts of `dram`, `l2` and `issue`, not limits of their own.
    pub(crate) fn limits(&self) -> [(Bound, f64); 9] {
        [
            (Bound::Dram, self.dram),
            (Bound::Llc, self.llc),
            (Bound::L2, self.l2),
            (Bound::L1, self.l1),
            (Bound::Shared, self.shared),
            (Bound::Uniform, self.uniform),
            (Bound::Issue, self.issue),
            (Bound::Latency, self.latency),
            (Bound::Launch, self.launch),
        ]
    }

    /// The largest limit and the bound it names: the predicted time and what bounds
    /// it ([`Bound::None`] and 0 when no limit is above 0).
    pub(crate) fn largest(&self) -> (Bound, f64) {
        self.limits().into_iter().fold(
            (Bound::None, 0.0),
            |best, (b, t)| if t > best.1 { (b, t) } else { best },
        )
    }
}

/// What the interpreter measured of the workgroups it ran, besides their memory
/// requests ([`crate::sim::ExecStats`]), and their shape.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct Work {
    /// Invocations per workgroup.
    pub lanes: u32,
    /// Arithmetic instructions issued, per subgroup ([`crate::sim::ExecStats::warp_ops`]).
    pub(crate) warp_ops: u64,
    /// Subgroup shuffles and broadcasts issued, per subgroup.
    pub(crate) shuffles: u64,
    /// Lane multiply-adds by pipe.
    pub(crate) multiply_adds: MultiplyAdds,
    /// Critical paths summed over the workgroups, and the storage loads on them,
    /// charged at [`costs`]`(device)`.
    pub(crate) critical_ns: f64,
    pub(crate) critical_rounds: u64,
}

impl Work {
    /// The work `runs` recorded, for workgroups of `lanes` invocations.
    pub(super) fn of(runs: &[ExecStats], lanes: u32) -> Work {
        Work {
            lanes,
            warp_ops: runs.iter().map(|r| r.warp_ops).sum(),
            shuffles: runs.iter().map(|r| r.shuffles).sum(),
            multiply_adds: MultiplyAdds::sum(runs.iter().map(|r| &r.multiply_adds)),
            critical_ns: runs.iter().map(|r| r.critical_ns).sum(),
            critical_rounds: runs.iter().map(|r| r.critical_rounds).sum(),
        }
    }
}

/// What the interpreter's scoreboard charges on `device`: storage loads at the idle
/// DRAM latency (the prediction rescales them by where they hit and how busy the
/// DRAM is), workgroup barriers.
pub(crate) fn costs(device: &DeviceModel) -> Costs {
    Costs {
        global_ns: device.dram_latency_ns,
        l2_ns: device.l2_latency_ns,
        on_chip_ns: device.on_chip_latency_ns,
        barrier_ns: device.barrier_ns,
        int_div_instructions: device.int_div_instructions,
        schedulers: device.issue_per_clock,
        clock_ghz: device.clock_ghz,
        block_linear_textures: device.block_linear_textures,
    }
}

impl Prediction {
    /// Scale `counts` and `work` by `total / simulated` workgroups and apply the time
    /// model: the largest of the memory paths' times, the issue time, the latency
    /// time and the launch time. `read_set` is the bytes the whole grid reads (0: not
    /// known), over which the L2's request coalescer finds reads in flight.
    #[expect(
        clippy::cast_possible_truncation,
        reason = "a count scaled to the whole grid, rounded: `as` saturates"
    )]
    pub(crate) fn from_counts(
        counts: &Counts,
        work: &Work,
        device: &DeviceModel,
        declared_bytes: u64,
        simulated_workgroups: u64,
        total_workgroups: u64,
        read_set: u64,
    ) -> Prediction {
        let scale = total_workgroups as f64 / simulated_workgroups.max(1) as f64;
        let scaled = |n: u64| (n as f64 * scale).round() as u64;
        let ratio = |a: u64, b: u64| (b > 0).then(|| a as f64 / b as f64);
        let per_s = |n: f64, rate: f64| if rate > 0.0 { n / rate } else { 0.0 };
        let dram_read_bytes = scaled(counts.dram_read_bytes + counts.dram_merge_read_bytes);
        let dram_write_bytes = scaled(counts.dram_write_bytes);
        let l2_sectors = scaled(counts.l2_sectors);
        let l2_writes = scaled(counts.l2_write_sectors);
        let shared_wavefronts = scaled(counts.shared_wavefronts);
        let uniform_addresses = scaled(counts.uniform_addresses);
        // The L2 takes one write request per line a request writes (an atomic: per
        // sector), whatever part of the line it carries.
        let l2_write_requests = scaled(counts.writes.lines + counts.atomics.sectors);
        let l2_writes_s = per_s(l2_write_requests as f64, device.l2_write_requests_per_s);
        // A DRAM request of part of a line takes a share of the time of the sectors it
        // leaves out besides the bytes it moves.
        let dram_partial_s = per_s(
            scaled(counts.dram_unmoved_sectors) as f64
                * device.dram_unmoved_sector_share
                * f64::from(device.sector_bytes),
            device.dram_gbps * 1e9,
        );
        let dram_reads_s = per_s(dram_read_bytes as f64, device.dram_read_gbps() * 1e9);
        let dram_s = dram_reads_s
            + per_s(dram_write_bytes as f64, device.dram_write_gbps() * 1e9)
            + dram_partial_s;
        let llc_s = per_s(
            (scaled(counts.llc_hit_sectors) * u64::from(device.sector_bytes)) as f64,
            device.llc_gbps * 1e9,
        );
        // The coalescer merges reads of a sector in flight, but each distinct sector
        // reaches the slices at least once.
        let l2_reads = l2_sectors.saturating_sub(l2_writes) as f64;
        let l2_passed = (l2_reads * device.l2_pass_share(read_set))
            .max(l2_reads.min((read_set / u64::from(device.sector_bytes.max(1))) as f64));
        let l2_s = per_s(
            l2_passed * f64::from(device.sector_bytes),
            device.l2_gbps * 1e9,
        ) + l2_writes_s;
        // The L1's data path moves a line's worth of sectors a clock, from however many
        // lines, as Nsight Compute counts `hierarchy/window`'s CUDA twin (docs/simulator.md,
        // What the model assumes about each level, and what was measured).
        let l1_s = per_s(
            scaled(counts.global_sectors()) as f64 / device.sectors_per_line() as f64,
            device.l1_wavefronts_per_s,
        ) + scaled(counts.local_write_hazards) as f64 * device.l2_latency_ns / 2.0
            * 1e-9
            / f64::from(device.sms.max(1));
        let shared_s = per_s(shared_wavefronts as f64, device.shared_wavefronts_per_s);
        let uniform_s = per_s(uniform_addresses as f64, device.uniform_addresses_per_s);
        let sms = f64::from(device.sms.max(1));
        // The schedulers, the multiply-add pipes and the shuffle unit work side by side.
        let per_clock =
            |n: u64, per_sm: f64| per_s(n as f64 * scale, sms * per_sm * device.clock_ghz * 1e9);
        let f32_fma_s = per_clock(work.multiply_adds.f32, device.f32_fma_per_clock);
        let int_mad_s = per_clock(work.multiply_adds.int, device.int_mad_per_clock);
        let issue_s = per_clock(work.warp_ops, device.issue_per_clock)
            .max(per_clock(work.shuffles, device.shuffles_per_clock))
            .max(f32_fma_s)
            .max(int_mad_s);
        let launch_s = total_workgroups as f64 * device.workgroup_launch_ns * 1e-9 / sms;
        // The busiest path of those that work side by side: the memory paths and issue.
        let busiest = [dram_s, llc_s, l2_s, l1_s, shared_s, uniform_s]
            .into_iter()
            .fold(issue_s, f64::max);
        // Little's law: the workgroups resident at once each take their critical path;
        // its storage loads take the latency of where they hit, DRAM's rising with the
        // share of DRAM bandwidth in use.
        let rounds = counts.read_rounds_from.map(|n| n as f64);
        let reads = rounds.iter().sum::<f64>().max(1.0);
        let [l1, l2, far, llc, dram] = rounds.map(|n| n / reads);
        let round_ns = |dram_ns: f64| {
            l1 * device.l1_latency_ns
                + l2 * device.l2_latency_ns
                + far * device.l2_far_latency_ns()
                + llc * device.llc_latency_ns
                + dram * dram_ns
        };
        let in_flight = device.workgroups_in_flight(work.lanes) as f64;
        // A workgroup's global requests pass its SM's L1 one wavefront (line) per clock,
        // so its last load leaves the L1 only after all of its own wavefronts: a
        // workgroup of many column reads waits that long besides the latency.
        let own_l1_ns = per_s(
            counts.global_lines() as f64 * 1e9,
            device.l1_wavefronts_per_s / sms,
        );
        let latency_s = |dram_ns: f64| {
            let per_workgroup = (work.critical_ns
                + own_l1_ns
                + work.critical_rounds as f64 * (round_ns(dram_ns) - device.dram_latency_ns))
                / simulated_workgroups.max(1) as f64;
            // Whole waves: a workgroup takes its critical path however few run.
            per_workgroup * 1e-9 * (total_workgroups as f64 / in_flight).ceil()
        };
        let idle = latency_s(device.dram_latency_ns);
        // The latency rises with the share of the time the busiest memory path (DRAM or
        // L2: both queue) is in use, and where the latency bounds, that time is its
        // own: t = idle + rise × min(1, load / t), solved for t.
        let rise = latency_s(device.loaded_latency_ns) - idle;
        let load = dram_s.max(l2_s).max(llc_s);
        let busy = if idle > 0.0 && load > 0.0 {
            let t = (idle + (idle * idle + 4.0 * rise * load).max(0.0).sqrt()) / 2.0;
            (load / t.max(busiest)).min(1.0)
        } else {
            0.0
        };
        let latency_s = idle + busy * rise;
        let terms = Terms {
            dram: dram_s,
            dram_reads: dram_reads_s,
            dram_partial: dram_partial_s,
            llc: llc_s,
            l2: l2_s,
            l2_writes: l2_writes_s,
            l1: l1_s,
            shared: shared_s,
            uniform: uniform_s,
            issue: issue_s,
            f32_fma: f32_fma_s,
            int_mad: int_mad_s,
            latency: latency_s,
            launch: launch_s,
            dispatch: 0.0,
        };
        let (mut bound, time_s) = terms.largest();
        // Local-memory traffic bounds the kernel when a memory path it loads does.
        if counts.local_requests > 0
            && matches!(bound, Bound::Dram | Bound::Llc | Bound::L2 | Bound::L1)
        {
            bound = Bound::Local;
        }
        Prediction {
            time_s,
            bound,
            effective_gbps: if time_s > 0.0 {
                declared_bytes as f64 / time_s / 1e9
            } else {
                0.0
            },
            dram_read_bytes,
            dram_write_bytes,
            l2_sectors,
            requests: scaled(counts.global_requests()),
            sectors_per_request: ratio(counts.global_sectors(), counts.global_requests())
                .unwrap_or(0.0),
            sector_use: ratio(
                counts.global_bytes(),
                counts.global_sectors() * u64::from(device.sector_bytes),
            ),
            shared_wavefronts,
            bank_ways: ratio(counts.shared_wavefronts, counts.shared_requests),
            uniform_addresses,
            uniform_addresses_per_request: ratio(counts.uniform_addresses, counts.uniform_requests),
            simulated_workgroups,
            total_workgroups,
            counts: *counts,
            terms,
        }
    }
}

#[cfg(test)]
impl Prediction {
    /// A prediction of `time_s` that `bound` names, its term that time, counting nothing.
    pub(crate) fn bound_by(bound: Bound, time_s: f64, device: &DeviceModel) -> Prediction {
        let mut p =
            Prediction::from_counts(&Counts::default(), &Work::default(), device, 1, 1, 1, 0);
        p.terms = Terms::default();
        p.time_s = time_s;
        p.bound = bound;
        p.effective_gbps = 1.0 / time_s / 1e9;
        p
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::exec::Kernel;
    use crate::sim::model::fixtures::{bind, counts, h100};

    #[test]
    fn the_coalescer_merges_reads_of_a_small_read_set_but_each_sector_once_at_least() {
        // `reads` sector reads reaching the L2, the whole grid, over `read_set` bytes.
        let l2 = |reads: u64, read_set: u64| {
            let c = Counts {
                l2_sectors: reads,
                ..Counts::default()
            };
            Prediction::from_counts(&c, &Work::default(), &h100(), 1, 1, 1, read_set)
                .terms
                .l2
        };
        let reads = 1u64 << 20;
        let unknown = l2(reads, 0);
        assert!(unknown > 0.0);
        // Reads over a 1 MiB buffer, each sector 32 times: 70 % reach the slices
        // (probe p42).
        let share = l2(reads, 1 << 20) / unknown;
        assert!(
            (share - h100().l2_pass_share(1 << 20)).abs() < 1e-9,
            "{share}"
        );
        // Each read a sector of its own: nothing to merge.
        assert_eq!(l2(reads, reads * 32), unknown);
        // Each sector of 128 KiB read twice: the coalescer would pass on 6 %, but each
        // sector reaches the slices once.
        let few = 1u64 << 13;
        assert_eq!(l2(few, few * 16) / l2(few, 0), 0.5);
    }

    #[test]
    fn the_largest_term_names_the_bound() {
        assert_eq!(Terms::default().largest(), (Bound::None, 0.0));
        let tie = Terms {
            l2: 2.0,
            issue: 2.0,
            latency: 1.0,
            ..Terms::default()
        };
        assert_eq!(tie.largest(), (Bound::L2, 2.0), "a tie goes to the earlier");
        let parts = Terms {
            dram: 1.0,
            dram_reads: 5.0,
            dram_partial: 5.0,
            l2_writes: 5.0,
            ..Terms::default()
        };
        assert_eq!(parts.largest(), (Bound::Dram, 1.0), "parts are not limits");
    }

    #[test]
    fn a_small_table_read_over_and_over_takes_the_l1_four_sectors_a_clock() {
        // Every lane reads element k (broadcast) or lane + k (32 consecutive words: one
        // line when k is a multiple of 32, else two) of a 1 KiB table, 64 times: all
        // but the first reads hit the L1.
        let wgsl = "
            @group(0) @binding(0) var<storage, read> table: array<u32>;
            @group(0) @binding(1) var<storage, read_write> out: array<u32>;
            @compute @workgroup_size(64)
            fn main(@builtin(local_invocation_index) l: u32, @builtin(workgroup_id) w: vec3<u32>) {
                var acc = 0u;
                for (var k = 0u; k < 64u; k++) {
                    acc += table[(OFFSET + k) % 256u];
                }
                out[w.x * 64u + l] = acc;
            }";
        // The divergent reads (4 or 5 sectors each) are bound by the L1; a broadcast's one
        // sector a read leaves it idle most of the time.
        let cases = [
            ("0u", 1.0, Bound::Latency),
            ("l", 2.0 - 2.0 / 64.0, Bound::L1),
        ];
        for (offset, lines_per_read, bound) in cases {
            let k = Kernel::load("table", &wgsl.replace("OFFSET", offset), &[]).unwrap();
            let mut b = vec![bind(0, vec![0; 1024]), bind(1, vec![0; 4 * 64 * 264])];
            let c = counts(&k, &mut b, [264, 1, 1], &h100());
            // Launches are instantaneous here: the L1 alone is compared.
            let device = DeviceModel {
                workgroup_launch_ns: 0.0,
                ..h100()
            };
            let p = Prediction::from_counts(&c, &Work::default(), &device, 1, 264, 264, 0);
            // 2 subgroups × 64 reads and 1 write (one line) per workgroup.
            let lines = 264.0 * 2.0 * (64.0 * lines_per_read + 1.0);
            assert_eq!(c.global_lines() as f64, lines, "{offset}");
            // The L1 moves a line's worth of sectors (four) a clock.
            let wavefronts = c.global_sectors() as f64 / 4.0;
            assert!(wavefronts < lines, "{offset}");
            assert_eq!(
                p.terms.l1,
                wavefronts / h100().shared_wavefronts_per_s,
                "{offset}"
            );
            assert_eq!(p.bound, bound, "{offset}");
        }
    }
}
