//! The memory model as a [`TraceSink`]: coalesces each global request into sectors and
//! lines, buffers an in-flight group of workgroups and replays it round-robin through
//! the caches, and counts shared-memory bank wavefronts and uniform addresses.

use std::collections::HashSet;

use super::cache::{Caches, Covered};
use super::counts::Counts;
use super::line_cache::CacheLevel;
use crate::sim::device::DeviceModel;
use crate::sim::exec::{Access, Request, Space, Target, TraceSink};

/// A buffered global request: its SM, direction and sectors (a range of `sectors`).
#[derive(Clone, Copy, Debug)]
struct Pending {
    sm: u32,
    access: Access,
    sectors: (u32, u32),
    issued_ns: f64,
    round: Option<u32>,
    /// To a private array in local memory.
    local: bool,
}

/// The memory model as a [`TraceSink`]: feed it a run, then [`MemoryModel::finish`].
#[derive(Debug)]
pub(crate) struct MemoryModel {
    sector_bytes: u64,
    /// Sectors per line.
    per_line: u64,
    banks: u64,
    bank_bytes: u64,
    sms: u64,
    num_workgroups: [u32; 3],
    in_flight: u64,
    counts: Counts,
    caches: Caches,
    /// (group, binding) of each buffer seen; its index tags sector keys.
    buffers: Vec<(u32, u32)>,
    /// The aligned group of in-flight workgroups being buffered, and per workgroup of
    /// it (by id − group start) its requests in program order.
    group: Option<u64>,
    slots: Vec<Vec<Pending>>,
    sectors: Vec<Covered>,
    scratch: Vec<u64>,
    /// The distinct global sectors read, until [`MemoryModel::take_read_footprint`].
    read_footprint: Option<HashSet<u64>>,
    /// Each sector with a mask of the bytes the request covers in it.
    covered: Vec<(u64, u64)>,
    per_bank: Vec<u32>,
}

/// Buffer index in the top 16 bits of a sector key, sector number below.
const BUFFER_SHIFT: u32 = 48;
/// The buffer tag of a cold dispatch's flush buffer ([`MemoryModel::flush_l2`]): one no
/// binding gets (they are tagged in the order a kernel first touches them).
const FLUSH_BUFFER: u64 = u16::MAX as u64;

/// Bits `first..last` set, those past 64 dropped (a mask holds a sector of at most 64
/// bytes).
fn byte_mask(first: u64, last: u64) -> u64 {
    let last = last.min(64);
    if first >= last {
        return 0;
    }
    (u64::MAX >> (64 - (last - first))) << first
}

/// The mask of a sector's first 32 bytes: the caches track written bytes of those
/// only, so a 64-byte sector's write counts as whole when its first half is.
fn low_bytes(mask: u64) -> u32 {
    u32::try_from(mask & u64::from(u32::MAX)).unwrap_or(u32::MAX)
}

impl MemoryModel {
    /// A model of `device` for a dispatch of `num_workgroups`, replaying `in_flight`
    /// workgroups together (usually [`DeviceModel::workgroups_in_flight`]).
    pub(crate) fn new(
        device: &DeviceModel,
        num_workgroups: [u32; 3],
        in_flight: u64,
    ) -> MemoryModel {
        let sector_bytes = u64::from(device.sector_bytes.max(1));
        let sms = u64::from(device.sms.max(1));
        MemoryModel {
            sector_bytes,
            per_line: device.sectors_per_line(),
            banks: u64::from(device.banks.max(1)),
            bank_bytes: u64::from(device.bank_bytes.max(1)),
            sms,
            num_workgroups,
            in_flight: in_flight.max(1),
            counts: Counts::default(),
            caches: Caches::new(device, sms),
            buffers: Vec::new(),
            group: None,
            slots: Vec::new(),
            sectors: Vec::new(),
            scratch: Vec::new(),
            read_footprint: Some(HashSet::new()),
            covered: Vec::new(),
            per_bank: vec![0; device.banks.max(1) as usize],
        }
    }

    /// Replay what is buffered, write back the dirty sectors, and return the counts.
    /// The model can go on taking requests afterwards (with its caches clean).
    pub(crate) fn finish(&mut self) -> Counts {
        self.flush();
        self.caches.write_back(&mut self.counts);
        self.counts
    }

    /// Replay what is buffered and return the counts, leaving the dirty sectors in the
    /// L2: a dispatch in the steady state writes back what the one before left dirty.
    pub(super) fn counts_without_write_back(&mut self) -> Counts {
        self.flush();
        self.counts
    }

    /// The sectors the lanes' accesses cover, sorted, each with the bytes covered
    /// (one bit per byte of a sector of at most 64 bytes), into `covered`.
    fn cover(&mut self, req: &Request<'_>) {
        let unit = self.sector_bytes;
        let bytes = u64::from(req.bytes_per_lane.max(1));
        self.covered.clear();
        for &a in req.addresses {
            for s in a / unit..=(a + bytes - 1) / unit {
                let first = a.max(s * unit) - s * unit;
                let last = (a + bytes).min((s + 1) * unit) - s * unit;
                let mask = byte_mask(first, last);
                self.covered.push((s, mask));
            }
        }
        self.covered.sort_unstable_by_key(|&(s, _)| s);
        self.covered.dedup_by(|next, kept| {
            let same = next.0 == kept.0;
            if same {
                kept.1 |= next.1;
            }
            same
        });
    }

    /// Bytes of the distinct global sectors read since the model was made, and stop
    /// tracking them (it costs a set insert per sector).
    pub(crate) fn take_read_footprint(&mut self) -> u64 {
        let sectors = self.read_footprint.take().map_or(0, |set| set.len());
        sectors as u64 * self.sector_bytes
    }

    /// Give the run the share of each cache that its workgroups would have on the
    /// device: `l1` and `l2` of their capacity (at most all of it). A sample of fewer
    /// workgroups than the device holds at once sees the caches that many would share.
    pub(crate) fn share(&mut self, l1: f64, l2: f64) {
        self.caches.share(&mut self.counts, l1, l2);
    }

    /// Fill the L2 with dirty sectors of a buffer no kernel binds, as the untimed clear
    /// of [`crate::suite::FLUSH_BYTES`] before a cold dispatch leaves it: the dispatch
    /// then writes them back as its own sectors evict them.
    pub(crate) fn flush_l2(&mut self) {
        self.flush();
        self.caches.fill_l2_dirty(FLUSH_BUFFER << BUFFER_SHIFT);
    }

    /// Replay what is buffered and start counting afresh, as the next dispatch: the
    /// L2 as it is, the L1s empty (they are invalidated at every kernel launch).
    pub(crate) fn restart(&mut self) {
        self.flush();
        self.group = None;
        self.counts = Counts::default();
        self.caches.clear_l1s();
    }

    /// Sort and deduplicate the `unit`-byte units the lanes' accesses cover into
    /// `scratch`.
    fn units(&mut self, req: &Request<'_>, unit: u64) {
        let bytes = u64::from(req.bytes_per_lane.max(1));
        self.scratch.clear();
        for &a in req.addresses {
            self.scratch.extend(a / unit..=(a + bytes - 1) / unit);
        }
        self.scratch.sort_unstable();
        self.scratch.dedup();
    }

    #[expect(
        clippy::cast_possible_truncation,
        reason = "an SM index below the device's SM count, and sectors in flight: far below 2^32"
    )]
    fn global(&mut self, req: &Request<'_>) {
        let [nx, ny, _] = self.num_workgroups.map(u64::from);
        let [x, y, z] = req.workgroup.map(u64::from);
        let id = x + nx * (y + ny * z);
        let group = id / self.in_flight;
        if self.group != Some(group) {
            self.flush();
            self.group = Some(group);
        }
        let buffer = match req.target {
            Target::Binding { group, binding } => (group, binding),
            Target::Workgroup { var } => (u32::MAX, var),
            Target::Local { var } => (u32::MAX - 1, var),
        };
        let tag = match self.buffers.iter().position(|&b| b == buffer) {
            Some(i) => i as u64,
            None => {
                self.buffers.push(buffer);
                (self.buffers.len() - 1) as u64
            }
        } << BUFFER_SHIFT;
        self.cover(req);
        let per_line = self.per_line;
        let mut lines = 0;
        let mut last_line = None;
        for &(s, _) in &self.covered {
            if last_line != Some(s / per_line) {
                lines += 1;
                last_line = Some(s / per_line);
            }
        }
        let traffic = match req.access {
            Access::Read => &mut self.counts.reads,
            Access::Write => &mut self.counts.writes,
            Access::Atomic => &mut self.counts.atomics,
        };
        traffic.requests += 1;
        traffic.sectors += self.covered.len() as u64;
        traffic.bytes += self
            .covered
            .iter()
            .map(|&(_, mask)| u64::from(mask.count_ones()))
            .sum::<u64>();
        traffic.lines += lines;
        if let (Some(set), Access::Read) = (&mut self.read_footprint, req.access) {
            set.extend(self.covered.iter().map(|&(s, _)| tag | s));
        }
        let start = self.sectors.len() as u32;
        self.sectors.extend(
            self.covered
                .iter()
                .map(|&(s, mask)| (tag | s, low_bytes(mask))),
        );
        let slot = (id % self.in_flight) as usize;
        if self.slots.len() <= slot {
            self.slots.resize_with(slot + 1, Vec::new);
        }
        self.slots[slot].push(Pending {
            sm: (id % self.sms) as u32,
            access: req.access,
            sectors: (start, self.sectors.len() as u32),
            issued_ns: req.issued_ns,
            round: req.round,
            local: req.space == Space::Local,
        });
    }

    /// Replay the buffered group round-robin by request index.
    fn flush(&mut self) {
        let longest = self.slots.iter().map(Vec::len).max().unwrap_or(0);
        // Per workgroup, the read round open and the farthest level it has reached
        // (a workgroup's rounds come in ascending order).
        let mut rounds: Vec<Option<(u32, CacheLevel)>> = vec![None; self.slots.len()];
        for i in 0..longest {
            for (slot, open) in self.slots.iter().zip(&mut rounds) {
                if let Some(p) = slot.get(i) {
                    let sectors = &self.sectors[p.sectors.0 as usize..p.sectors.1 as usize];
                    if p.access != Access::Write {
                        self.caches.read_lines(sectors);
                    }
                    let mut farthest = CacheLevel::L1;
                    let mut hazard = false;
                    for &covered in sectors {
                        let (level, met) = self.caches.access(
                            &mut self.counts,
                            p.sm as usize,
                            p.access,
                            covered,
                            p.issued_ns,
                            p.local,
                        );
                        farthest = farthest.max(level);
                        hazard |= met;
                    }
                    self.counts.local_write_hazards += u64::from(hazard);
                    if let Some(r) = p.round {
                        *open = match *open {
                            Some((round, level)) if round == r => {
                                Some((round, level.max(farthest)))
                            }
                            Some((_, level)) => {
                                self.counts.read_rounds_from[level as usize] += 1;
                                Some((r, farthest))
                            }
                            None => Some((r, farthest)),
                        };
                    }
                }
            }
        }
        for (_, level) in rounds.into_iter().flatten() {
            self.counts.read_rounds_from[level as usize] += 1;
        }
        self.caches.settle_reads(&mut self.counts);
        self.slots.iter_mut().for_each(Vec::clear);
        self.sectors.clear();
    }

    fn shared(&mut self, req: &Request<'_>) {
        self.units(req, self.bank_bytes);
        self.per_bank.fill(0);
        for &w in &self.scratch {
            self.per_bank[crate::host_len(w % self.banks)] += 1;
        }
        let ways = self.per_bank.iter().copied().max().unwrap_or(0).max(1);
        self.counts.shared_requests += 1;
        self.counts.shared_wavefronts += u64::from(ways);
    }

    fn uniform(&mut self, req: &Request<'_>) {
        self.scratch.clear();
        self.scratch.extend_from_slice(req.addresses);
        self.scratch.sort_unstable();
        self.scratch.dedup();
        self.counts.uniform_requests += 1;
        self.counts.uniform_addresses += self.scratch.len() as u64;
    }
}

impl TraceSink for MemoryModel {
    fn request(&mut self, req: &Request<'_>) {
        match req.space {
            Space::Storage => self.global(req),
            Space::Local => {
                self.counts.local_requests += 1;
                self.global(req);
            }
            Space::Workgroup => self.shared(req),
            Space::Uniform => self.uniform(req),
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::sim::device::preset;
    use crate::sim::exec::Kernel;
    use crate::sim::model::fixtures::{bind, copy_bindings, counts, h100, params, suite_kernel};
    use crate::sim::model::timing::Work;
    use crate::sim::model::{Prediction, Traffic};

    fn per_request(t: Traffic) -> f64 {
        t.sectors as f64 / t.requests as f64
    }

    #[test]
    fn a_byte_mask_sets_each_byte_covered_below_64() {
        for first in 0..70u64 {
            for last in first..140 {
                let bits = (first..last.min(64)).fold(0u64, |m, b| m | 1 << b);
                assert_eq!(super::byte_mask(first, last), bits, "{first}..{last}");
            }
        }
    }

    #[test]
    fn copy_offset_sectors_per_request() {
        let k = suite_kernel("copy_offset");
        let n = 256 * 4;
        for offset in 0..=32u32 {
            let mut b = copy_bindings(n, offset, (n + offset) as usize);
            let c = counts(&k, &mut b, [4, 1, 1], &h100());
            let want = if offset % 8 == 0 { 4.0 } else { 5.0 };
            assert_eq!(c.reads.requests, 32, "offset {offset}");
            assert_eq!(per_request(c.reads), want, "offset {offset}");
            assert_eq!(per_request(c.writes), want, "offset {offset}");
            // 4 lines when aligned to 128 bytes, else 2 per request.
            let lines = if offset % 32 == 0 { 1.0 } else { 2.0 };
            assert_eq!(c.reads.lines as f64 / 32.0, lines, "offset {offset}");
        }
    }

    #[test]
    fn copy_stride_sectors_per_request() {
        let k = suite_kernel("copy_stride");
        let n = 256 * 2;
        for s in 1..=32u32 {
            let mut b = copy_bindings(n, s, (n * s) as usize);
            let c = counts(&k, &mut b, [2, 1, 1], &h100());
            // 32 lanes span 128·s bytes from a 128·s-aligned start: every one of its 4·s
            // sectors is touched while lanes are at most a sector apart (s ≤ 8), then
            // each lane has its own.
            let want = f64::from((4 * s).min(32));
            assert_eq!(per_request(c.reads), want, "stride {s}");
            assert_eq!(per_request(c.writes), want, "stride {s}");
            // Of those sectors the lanes use their 128 bytes: 4 of every 32 at s ≥ 8.
            assert_eq!(c.reads.bytes, 128 * c.reads.requests, "stride {s}");
            assert_eq!(c.writes.bytes, 128 * c.writes.requests, "stride {s}");
        }
    }

    #[test]
    fn copy_peak_vec4_sectors_per_request() {
        let k = suite_kernel("copy_peak");
        let n = 256 * 2;
        let mut b = vec![
            bind(0, params(&[n])),
            bind(1, vec![0; 16 * n as usize]),
            bind(2, vec![0; 16 * n as usize]),
        ];
        let c = counts(&k, &mut b, [2, 1, 1], &h100());
        assert_eq!(per_request(c.reads), 16.0);
        assert_eq!(per_request(c.writes), 16.0);
        assert_eq!(c.reads.lines, 4 * c.reads.requests);
        // Every byte of every sector, also of the 64-byte sectors of AMD's presets.
        for device in [h100(), *preset("mi210").unwrap()] {
            let c = counts(&k, &mut b, [2, 1, 1], &device);
            assert_eq!(c.reads.bytes, 16 * u64::from(n));
            assert_eq!(
                c.reads.bytes,
                c.reads.sectors * u64::from(device.sector_bytes)
            );
        }
    }

    /// Ways per shared request of `wgsl` (one workgroup, only reads of workgroup memory).
    fn ways(wgsl: &str, overrides: &[(&str, f64)]) -> f64 {
        let k = Kernel::load("banks", wgsl, overrides).unwrap();
        let mut b = vec![bind(0, vec![0; 4 * 1024])];
        let c = counts(&k, &mut b, [1, 1, 1], &h100());
        assert!(c.shared_requests > 0);
        let p = Prediction::from_counts(&c, &Work::default(), &h100(), 0, 1, 1, 0);
        assert_eq!(
            p.bank_ways,
            Some(c.shared_wavefronts as f64 / c.shared_requests as f64)
        );
        c.shared_wavefronts as f64 / c.shared_requests as f64
    }

    const TILE: &str = "
        var<workgroup> tile: array<array<u32, WIDTH>, 32>;
        @group(0) @binding(0) var<storage, read_write> out: array<u32>;
        @compute @workgroup_size(32, 32)
        fn main(@builtin(local_invocation_id) lid: vec3<u32>) {
            out[lid.y * 32u + lid.x] = READ;
        }";

    fn tile(width: u32, read: &str) -> String {
        TILE.replace("WIDTH", &width.to_string())
            .replace("READ", read)
    }

    #[test]
    fn bank_conflicts_of_a_tile() {
        // A subgroup is one lid.y with lid.x = 0..31.
        assert_eq!(ways(&tile(32, "tile[lid.y][lid.x]"), &[]), 1.0, "row");
        assert_eq!(ways(&tile(32, "tile[lid.x][lid.y]"), &[]), 32.0, "column");
        assert_eq!(
            ways(&tile(33, "tile[lid.x][lid.y]"), &[]),
            1.0,
            "padded column"
        );
        assert_eq!(ways(&tile(32, "tile[0][0]"), &[]), 1.0, "broadcast");
        assert_eq!(
            ways(&tile(32, "tile[lid.x % 2u][0]"), &[]),
            2.0,
            "two words"
        );
    }

    #[test]
    fn bank_conflicts_of_a_stride() {
        let wgsl = "
            override S: u32 = 1;
            var<workgroup> a: array<u32, 1024>;
            @group(0) @binding(0) var<storage, read_write> out: array<u32>;
            @compute @workgroup_size(32)
            fn main(@builtin(local_invocation_index) l: u32) {
                out[l] = a[(l * S) % 1024u];
            }";
        let gcd = |mut a: u32, mut b: u32| {
            while b != 0 {
                (a, b) = (b, a % b);
            }
            a
        };
        for s in 1..=32u32 {
            let want = f64::from(gcd(s, 32));
            assert_eq!(ways(wgsl, &[("S", f64::from(s))]), want, "stride {s}");
        }
    }

    #[test]
    fn vec4_shared_access_is_split_by_word() {
        // 32 lanes × 16 contiguous bytes: every bank holds 4 distinct words.
        let wgsl = "
            var<workgroup> v: array<vec4<u32>, 64>;
            @group(0) @binding(0) var<storage, read_write> out: array<u32>;
            @compute @workgroup_size(32)
            fn main(@builtin(local_invocation_index) l: u32) {
                let x = v[l * STEP];
                out[l] = x.x + x.w;
            }";
        assert_eq!(ways(&wgsl.replace("STEP", "1u"), &[]), 4.0);
        // Stride of two vec4s: lanes l and l+4 share banks, 8 words a bank.
        assert_eq!(ways(&wgsl.replace("STEP", "2u"), &[]), 8.0);
    }

    #[test]
    fn uniform_distinct_addresses() {
        let wgsl = "
            @group(0) @binding(0) var<uniform> u: array<vec4<u32>, 8>;
            @group(0) @binding(1) var<storage, read_write> out: array<u32>;
            @compute @workgroup_size(32)
            fn main(@builtin(local_invocation_index) l: u32) {
                out[l] = u[INDEX].x;
            }";
        for (index, want) in [
            ("l / 32u", 1.0),
            ("l % 8u", 8.0),
            ("l % 3u", 3.0),
            ("l / 16u", 2.0),
        ] {
            let k = Kernel::load("uniform", &wgsl.replace("INDEX", index), &[]).unwrap();
            let mut b = vec![bind(0, vec![0; 128]), bind(1, vec![0; 128])];
            let c = counts(&k, &mut b, [1, 1, 1], &h100());
            let p = Prediction::from_counts(&c, &Work::default(), &h100(), 0, 1, 1, 0);
            assert_eq!(c.uniform_requests, 1, "{index}");
            assert_eq!(p.uniform_addresses_per_request, Some(want), "{index}");
        }
        // A fixed index is a constant operand, no request.
        let k = Kernel::load("uniform", &wgsl.replace("INDEX", "0u"), &[]).unwrap();
        let mut b = vec![bind(0, vec![0; 128]), bind(1, vec![0; 128])];
        assert_eq!(counts(&k, &mut b, [1, 1, 1], &h100()).uniform_requests, 0);
        // copy_offset reads params.n and params.offset as operands.
        let k = suite_kernel("copy_offset");
        let mut b = copy_bindings(512, 3, 515);
        let c = counts(&k, &mut b, [2, 1, 1], &h100());
        assert_eq!(c.uniform_requests, 0);
    }
}
