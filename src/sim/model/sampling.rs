//! Running a kernel into the model: [`predict`] simulates the whole grid or a window of
//! it in the middle, and [`predict_sampled`] also bounds the interpreter's work by
//! running fewer of the window's workgroups, with their share of the caches.

use std::ops::Range;

use super::memory::MemoryModel;
use super::timing::{Prediction, Work, costs};
use crate::sim::device::DeviceModel;
use crate::sim::exec::{BoundBuffer, Kernel, Launch, SimError, grid_size, run};

/// The workgroups [`predict`] simulates: all of a grid of at most `max_workgroups`,
/// else `max_workgroups` consecutive ones in the middle, the start rounded down to a
/// multiple of `in_flight`.
pub(crate) fn sample_window(total: u64, max_workgroups: u64, in_flight: u64) -> Range<u64> {
    let max = max_workgroups.max(1);
    if total <= max {
        return 0..total;
    }
    let start = (total - max) / 2 / in_flight.max(1) * in_flight.max(1);
    start..start + max
}

/// How [`predict_sampled`] samples a grid, and what ran before the dispatch it
/// predicts.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Sampling {
    /// Consecutive workgroups at most ([`sample_window`]).
    pub(crate) max_workgroups: u64,
    /// The interpreter's lane-operations at most; the first workgroup always runs.
    pub(crate) max_lane_ops: u64,
    /// Whole dispatches run untimed before the timed ones
    /// ([`crate::suite::Case::untimed_first`]).
    pub(crate) untimed_first: u32,
    /// Each timed dispatch follows the untimed clear of a flush buffer
    /// ([`crate::suite::Cache::Cold`]).
    pub(crate) cold: bool,
}

/// Predict a dispatch of `kernel` over `num_workgroups` on `device`: run (a window of
/// at most `max_workgroups` of) the grid through the interpreter into a
/// [`MemoryModel`] and apply the time model; `declared_bytes` is the case's bytes moved.
/// `bindings` must be sized for the full grid (they are updated in place, as on the
/// GPU).
pub fn predict(
    kernel: &Kernel,
    bindings: &mut [BoundBuffer],
    num_workgroups: [u32; 3],
    device: &DeviceModel,
    declared_bytes: u64,
    max_workgroups: u64,
) -> Result<Prediction, SimError> {
    let sampling = Sampling {
        max_workgroups,
        max_lane_ops: u64::MAX,
        untimed_first: 0,
        cold: false,
    };
    predict_sampled(
        kernel,
        bindings,
        num_workgroups,
        device,
        declared_bytes,
        sampling,
    )
}

/// [`predict`], running the window's workgroups only while the interpreter's
/// lane-operations stay within `sampling.max_lane_ops`: the first workgroup always
/// runs, and its cost sets how many of the window's others follow.
pub(crate) fn predict_sampled(
    kernel: &Kernel,
    bindings: &mut [BoundBuffer],
    num_workgroups: [u32; 3],
    device: &DeviceModel,
    declared_bytes: u64,
    sampling: Sampling,
) -> Result<Prediction, SimError> {
    let Sampling {
        max_workgroups,
        max_lane_ops,
        untimed_first,
        cold,
    } = sampling;
    let total = grid_size(num_workgroups);
    let lanes = kernel.workgroup_size().iter().product::<u32>();
    let in_flight = device.workgroups_in_flight(lanes);
    let window = sample_window(total, max_workgroups, in_flight);
    let mut launch = Launch {
        num_workgroups,
        subgroup_size: device.subgroup_size,
        workgroups: window.start..window.end.min(window.start + 1),
        costs: costs(device),
    };
    let mut model = MemoryModel::new(device, num_workgroups, in_flight);
    let first = run(kernel, bindings, &launch, &mut model)?;
    let footprint = Footprint {
        first: model.take_read_footprint(),
        bound: bindings.iter().map(|b| b.data.len() as u64).sum(),
    };
    // A grid that re-reads its data runs its sample twice (below): half as many
    // workgroups keep the interpreter's work within the budget.
    let reread = footprint.reread(total);
    let passes = if reread { 2 } else { 1 };
    let affordable = (max_lane_ops / passes / first.lane_ops.max(1)).max(1);
    let end = window.end.min(window.start.saturating_add(affordable));
    if end < window.end {
        // The budget runs fewer workgroups than the window: they get the share of the
        // caches they would have among the window's (the L1 of an SM among the
        // workgroups resident on it, the L2 among the window's), so that a sample's
        // working set meets the capacity the full grid's does.
        let sms = u64::from(device.sms.max(1));
        let per_sm = |n: u64| {
            n.div_ceil(sms)
                .min(u64::from(device.workgroups_per_sm(lanes)))
        };
        let simulated = end - window.start;
        let whole = window.end - window.start;
        model.share(
            footprint.share(per_sm(simulated), per_sm(whole)),
            footprint.share(simulated, whole),
        );
    }
    let (counts, work) = if cold {
        // The clear before the dispatch left the L2 full of its dirty lines, and the
        // dispatch writes back those its reads evict; what it leaves, the next clear
        // writes back.
        launch.workgroups = window.start..end;
        model.restart();
        model.flush_l2();
        let work = Work::of(&[run(kernel, bindings, &launch, &mut model)?], lanes);
        (model.counts_without_write_back(), work)
    } else {
        launch.workgroups = launch.workgroups.end..end;
        let rest = run(kernel, bindings, &launch, &mut model)?;
        let mut work = Work::of(&[first, rest], lanes);
        // Timed dispatches follow one another: the caches hold what the last one left.
        // Where the window is the whole grid, that is what the window leaves: count a
        // second pass (the bindings as the first left them). So it is where the grid
        // reads its data more than once: the workgroups before the window left what it
        // reads. A window of a larger grid that reads its data once starts cold, as the
        // middle of a stream does.
        let counts = if window == (0..total) || reread {
            launch.workgroups = window.start..end;
            // The untimed dispatches before the timed ones (a chase's walk of its cycle).
            for _ in 0..untimed_first {
                model.restart();
                run(kernel, bindings, &launch, &mut model)?;
            }
            model.restart();
            work = Work::of(&[run(kernel, bindings, &launch, &mut model)?], lanes);
            // In the steady state a dispatch writes back what the one before left dirty
            // (counted during the second pass), not its own leftovers.
            model.counts_without_write_back()
        } else {
            model.finish()
        };
        (counts, work)
    };
    Ok(Prediction::from_counts(
        &counts,
        &work,
        device,
        declared_bytes,
        end - window.start,
        total,
        footprint.data(total),
    ))
}

/// How the data a grid's workgroups read grows with their number: by the first
/// workgroup's reads each, up to every bound byte. Workgroups that re-read one buffer
/// (every `hierarchy/window` workgroup reads the whole window) share their data, and
/// a sample of them needs the whole cache that all of them use; workgroups that read
/// data of their own (a copy) need their share of it.
struct Footprint {
    /// Bytes of the distinct sectors the first workgroup read.
    first: u64,
    /// Bytes of every binding.
    bound: u64,
}

impl Footprint {
    /// Whether `all` workgroups read each bound byte twice or more on average: data
    /// the workgroups share, not the halo a stencil's neighbours overlap in.
    fn reread(&self, all: u64) -> bool {
        self.first.saturating_mul(all) >= 2 * self.bound
    }

    /// The share of a cache that `some` of `all` workgroups get: the data `some` read
    /// over the data `all` read.
    fn share(&self, some: u64, all: u64) -> f64 {
        self.data(some).max(1) as f64 / self.data(all).max(1) as f64
    }

    /// The data `n` workgroups read: over the whole grid's, the L2's request coalescer
    /// merges reads ([`crate::sim::device::DeviceModel::l2_coalesce_bytes`]).
    fn data(&self, n: u64) -> u64 {
        self.first.saturating_mul(n).min(self.bound)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::exec::Request;
    use crate::sim::model::Bound;
    use crate::sim::model::fixtures::{bind, copy_bindings, h100, params, suite_kernel};

    #[test]
    fn workgroups_that_share_their_data_share_the_whole_cache() {
        // A copy: each workgroup reads 4 KiB of its own out of 8 MiB bound.
        let own = Footprint {
            first: 4 << 10,
            bound: 8 << 20,
        };
        assert_eq!(own.share(16, 1024), 16.0 / 1024.0);
        assert!(!own.reread(1024));
        // hierarchy/window: every workgroup reads the whole 64 KiB window.
        let window = Footprint {
            first: 64 << 10,
            bound: 64 << 10,
        };
        assert_eq!(window.share(1, 1024), 1.0);
        assert!(window.reread(2));
        // A stencil's halo: neighbours overlap, but each byte is read about once.
        let halo = Footprint {
            first: (4 << 10) + 64,
            bound: 2 * (4 << 20),
        };
        assert!(!halo.reread(1024));
    }

    #[test]
    fn peak_copy_predicts_the_calibrated_bandwidth() {
        let k = suite_kernel("copy_peak");
        let x = 2500.0;
        // An L2 smaller than the 16 MiB copied: repeated dispatches stream from DRAM.
        let device = DeviceModel {
            l2_bytes: 4 << 20,
            ..h100().calibrated(x)
        };
        let workgroups = 2048u32;
        let n = workgroups * 256;
        let declared = 2 * 16 * u64::from(n);
        let mut b = vec![
            bind(0, params(&[n])),
            bind(1, vec![0; 16 * n as usize]),
            bind(2, vec![0; 16 * n as usize]),
        ];
        for max in [u64::MAX, 1000] {
            let p = predict(&k, &mut b, [workgroups, 1, 1], &device, declared, max).unwrap();
            assert_eq!(p.bound, Bound::Dram, "max {max}");
            assert!((p.effective_gbps / x - 1.0).abs() < 0.02, "{p:?}");
            assert_eq!(p.sectors_per_request, 16.0);
            assert_eq!(p.total_workgroups, 2048);
            assert_eq!(p.simulated_workgroups, u64::from(workgroups).min(max));
        }
    }

    #[test]
    fn sampled_prediction_matches_the_full_run() {
        let k = suite_kernel("copy_offset");
        // Caches far smaller than the buffers: the whole grid's second (warm) pass
        // finds none of its data, as a window of a stream does.
        let device = DeviceModel {
            sms: 16,
            max_lanes_per_sm: 1024,
            l1_bytes: 16 << 10,
            l2_bytes: 256 << 10,
            ..h100()
        };
        let workgroups = 2048u32;
        let n = workgroups * 256;
        let run_with = |max| {
            let mut b = copy_bindings(n, 1, n as usize + 1);
            predict(
                &k,
                &mut b,
                [workgroups, 1, 1],
                &device,
                8 * u64::from(n),
                max,
            )
            .unwrap()
        };
        let full = run_with(u64::MAX);
        let sampled = run_with(512);
        assert_eq!(sampled.simulated_workgroups, 512);
        let close = |a: u64, b: u64| (a as f64 / b as f64 - 1.0).abs() < 0.02;
        assert!(
            close(sampled.dram_read_bytes, full.dram_read_bytes),
            "{sampled:?}"
        );
        assert!(
            close(sampled.dram_write_bytes, full.dram_write_bytes),
            "{sampled:?}"
        );
        assert!(close(sampled.l2_sectors, full.l2_sectors), "{sampled:?}");
        assert!((sampled.time_s / full.time_s - 1.0).abs() < 0.02);
    }

    #[test]
    fn a_cold_dispatch_writes_back_the_dirty_lines_the_flush_left_in_the_l2() {
        // Each workgroup reads 1 KiB of its own and writes nothing (its input is
        // zeros): the grid reads 1 MiB through an L2 of 256 KiB, so its reads evict
        // every line the flush left, and a warm dispatch finds the L2 clean.
        let wgsl = "
            @group(0) @binding(0) var<storage, read> src: array<u32>;
            @group(0) @binding(1) var<storage, read_write> out: array<u32>;
            @compute @workgroup_size(256)
            fn main(@builtin(local_invocation_index) l: u32, @builtin(workgroup_id) w: vec3<u32>) {
                let v = src[w.x * 256u + l];
                if v == 7u {
                    out[w.x] = v;
                }
            }";
        let k = Kernel::load("sum", wgsl, &[]).unwrap();
        let device = DeviceModel {
            l2_bytes: 256 << 10,
            ..h100()
        };
        let workgroups = 1024u32;
        let predict_with = |cold| {
            let words = 256 * workgroups as usize;
            let mut b = vec![bind(0, vec![0; 4 * words]), bind(1, vec![0; 4096])];
            let sampling = Sampling {
                max_workgroups: u64::MAX,
                max_lane_ops: u64::MAX,
                untimed_first: 0,
                cold,
            };
            predict_sampled(&k, &mut b, [workgroups, 1, 1], &device, 8 << 20, sampling).unwrap()
        };
        let warm = predict_with(false);
        let cold = predict_with(true);
        assert_eq!(
            cold.counts.dram_write_bytes - warm.counts.dram_write_bytes,
            256 << 10
        );
        assert!(cold.time_s > warm.time_s);
    }

    #[test]
    fn lane_op_budget_samples_fewer_workgroups_of_a_uniform_kernel() {
        // Every workgroup loops over workgroup memory the same way: a few of them
        // predict what all of them do.
        let wgsl = "
            var<workgroup> a: array<u32, 64>;
            @group(0) @binding(0) var<storage, read_write> out: array<u32>;
            @compute @workgroup_size(64)
            fn main(@builtin(local_invocation_index) l: u32, @builtin(workgroup_id) w: vec3<u32>) {
                a[l] = l;
                workgroupBarrier();
                var acc = 0u;
                for (var k = 0u; k < 64u; k++) {
                    acc += a[(l * 2u + k) % 64u];
                }
                out[w.x * 64u + l] = acc;
            }";
        let k = Kernel::load("loop", wgsl, &[]).unwrap();
        let workgroups = 64u32;
        let run_with = |max_lane_ops| {
            let mut b = vec![bind(0, vec![0; 4 * 64 * workgroups as usize])];
            let sampling = Sampling {
                max_workgroups: u64::MAX,
                max_lane_ops,
                untimed_first: 0,
                cold: false,
            };
            predict_sampled(&k, &mut b, [workgroups, 1, 1], &h100(), 1 << 20, sampling).unwrap()
        };
        let full = run_with(u64::MAX);
        assert_eq!(full.simulated_workgroups, 64);
        let one = run_with(1);
        assert_eq!(one.simulated_workgroups, 1, "the first always runs");
        let first_cost = {
            let mut b = vec![bind(0, vec![0; 4 * 64 * workgroups as usize])];
            let launch = Launch {
                num_workgroups: [workgroups, 1, 1],
                subgroup_size: 32,
                workgroups: 0..1,
                costs: Default::default(),
            };
            run(&k, &mut b, &launch, &mut |_: &Request<'_>| {})
                .unwrap()
                .lane_ops
        };
        let some = run_with(5 * first_cost + 1);
        assert_eq!(some.simulated_workgroups, 5);
        for sampled in [one, some] {
            assert_eq!(sampled.bank_ways, full.bank_ways);
            assert_eq!(sampled.shared_wavefronts, full.shared_wavefronts);
            assert_eq!(sampled.time_s, full.time_s);
        }
    }

    #[test]
    fn sampling_window() {
        assert_eq!(sample_window(100, 4096, 1056), 0..100);
        assert_eq!(sample_window(10_000, 4096, 1056), 2112..6208);
        assert_eq!(sample_window(10_000, 4096, 1), 2952..7048);
        assert_eq!(sample_window(10, 0, 0), 4..5);
    }

    /// `cargo test --release --lib sim::model::sampling::tests::speed -- --ignored --nocapture`
    #[test]
    #[ignore = "timing; run in release"]
    fn speed_of_a_million_invocation_prediction() {
        let k = suite_kernel("copy_offset");
        for (workgroups, max) in [(4096u32, 4096), (65536, 4096)] {
            let n = workgroups * 256;
            let mut b = copy_bindings(n, 1, n as usize + 1);
            let t = std::time::Instant::now();
            let p = predict(
                &k,
                &mut b,
                [workgroups, 1, 1],
                &h100(),
                8 * u64::from(n),
                max,
            )
            .unwrap();
            let s = t.elapsed().as_secs_f64();
            println!(
                "{n} invocations, {} of {} workgroups simulated: {:.1} ms; {:.0} GB/s {:?}",
                p.simulated_workgroups,
                p.total_workgroups,
                s * 1e3,
                p.effective_gbps,
                p.bound
            );
            assert!(s < 1.0, "{s} s");
        }
    }
}
