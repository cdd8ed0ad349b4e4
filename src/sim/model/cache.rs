//! The caches: a per-SM L1 for reads (write-through, no write-allocate, except local
//! memory's writes), one chip-wide write-back L2 and, where the device has one, a
//! memory-side last-level cache behind it, fed one sector at a time; they
//! count hits, DRAM bytes and DRAM requests, and say where each access was served. An
//! L2 split into partitions also keeps, per partition, the lines its SMs read lately:
//! an L2 hit outside them is far (a longer latency, the same traffic).

use super::counts::Counts;
use super::line_cache::{CacheLevel, Eviction, FULL, LineCache};
use super::line_table::LineTable;
use crate::sim::device::DeviceModel;
use crate::sim::exec::Access;

/// The first L1's random eviction state (the others count up from it): any odd
/// constant, fixed so that a prediction repeats.
const L1_SEED: u64 = 0x9E37_79B9_7F4A_7C15;

/// What a write-back's DRAM request does: each kind joins only requests of its own
/// kind (reads are [`Caches::settle_reads`]'s).
#[derive(Clone, Copy)]
enum DramOp {
    Write,
    /// The read that merges a partly written sector before its write-back.
    MergeRead,
}

/// A line's reads in the in-flight group.
#[derive(Clone, Copy, Default)]
struct LineReads {
    /// Sectors read from DRAM.
    moved: u64,
    /// Requests that read the line.
    users: u64,
}

/// The L1s and the L2, fed one sector at a time.
pub(super) struct Caches {
    sector_bytes: u64,
    /// Sectors per line.
    per_line: u64,
    /// The line of the DRAM request open for each [`DramOp`] and the sectors it moves
    /// so far.
    dram_open: [Option<(u64, u64)>; 2],
    /// The in-flight group's reads by line: the index of each line's in `reads`.
    line_reads: LineTable,
    reads: Vec<LineReads>,
    l1: Vec<LineCache>,
    l2: LineCache,
    /// The last-level cache behind the L2 (reads allocate, write-backs leave a clean
    /// copy); none where the device has none.
    llc: Option<LineCache>,
    /// Per L2 partition, the lines its SMs read lately, in its share of the L2's
    /// capacity, keyed by line (a quarter of the nodes sector keys would take); none
    /// where the L2 is one partition.
    l2_near: Vec<LineCache>,
    /// SMs per L2 partition (SM `sm` is near partition `sm / this`).
    sms_per_partition: usize,
    /// Latency of an L1 fill from the L2 (near and far) and from DRAM.
    l2_ns: f64,
    l2_far_ns: f64,
    llc_ns: f64,
    dram_ns: f64,
}

impl std::fmt::Debug for Caches {
    // Their lines are many and say little one by one.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Caches").finish_non_exhaustive()
    }
}

impl Caches {
    /// The caches of `device`: an L1 for each of `sms` SMs and the L2, all empty.
    pub(super) fn new(device: &DeviceModel, sms: u64) -> Caches {
        let sector_bytes = u64::from(device.sector_bytes.max(1));
        let sectors_of = |bytes: u64| crate::host_len(bytes / sector_bytes);
        let per_line = device.sectors_per_line();
        let partitions = device.l2_partitions.max(1);
        let l2_near = if partitions > 1 {
            let lines =
                sectors_of(device.l2_bytes / u64::from(partitions)) / crate::host_len(per_line);
            (0..partitions).map(|_| LineCache::new(lines, 1)).collect()
        } else {
            Vec::new()
        };
        Caches {
            sector_bytes,
            per_line,
            dram_open: [None; 2],
            line_reads: LineTable::default(),
            reads: Vec::new(),
            l1: (0..sms)
                .map(|sm| {
                    let eviction = Eviction::Random(L1_SEED + sm);
                    LineCache::evicting(sectors_of(device.l1_bytes), per_line, eviction)
                })
                .collect(),
            l2: LineCache::new(sectors_of(device.l2_bytes), per_line),
            llc: (device.llc_bytes > 0)
                .then(|| LineCache::new(sectors_of(device.llc_bytes), per_line)),
            l2_near,
            sms_per_partition: crate::host_len(sms).div_ceil(partitions as usize).max(1),
            l2_ns: device.l2_latency_ns,
            l2_far_ns: device.l2_far_latency_ns(),
            llc_ns: device.llc_latency_ns,
            dram_ns: device.dram_latency_ns,
        }
    }

    /// Shrink each L1 to `l1` and the L2 (and the last-level cache) to `l2` of its
    /// capacity (at most all of it), writing back the dirty sectors the L2 evicts.
    #[expect(
        clippy::cast_possible_truncation,
        reason = "a share of `capacity`, clamped to at most all of it"
    )]
    pub(super) fn share(&mut self, c: &mut Counts, l1: f64, l2: f64) {
        let of = |capacity: usize, share: f64| (capacity as f64 * share.clamp(0.0, 1.0)) as usize;
        for cache in &mut self.l1 {
            let capacity = of(cache.capacity(), l1);
            cache.set_capacity(capacity);
        }
        let capacity = of(self.l2.capacity(), l2);
        for (key, dirty, valid) in self.l2.set_capacity(capacity) {
            if dirty {
                self.write_back_sector(c, key, valid != FULL);
            }
        }
        for near in self.l2_near.iter_mut().chain(&mut self.llc) {
            let capacity = of(near.capacity(), l2);
            near.set_capacity(capacity);
        }
    }

    /// Empty the L1s, as a kernel launch invalidates them; the L2 keeps its sectors.
    pub(super) fn clear_l1s(&mut self) {
        self.l1.iter_mut().for_each(LineCache::clear);
    }

    /// Fill the L2 to its capacity with written sectors from `first_key` on; what they
    /// evict is the clear's to write back, untimed.
    pub(super) fn fill_l2_dirty(&mut self, first_key: u64) {
        for key in first_key..first_key + self.l2.capacity() as u64 {
            self.l2.touch(key, FULL);
        }
    }

    /// Write back the L2's dirty sectors (the end of a run), leaving them clean.
    pub(super) fn write_back(&mut self, c: &mut Counts) {
        for (key, partial) in self.l2.write_back() {
            self.write_back_sector(c, key, partial);
        }
    }

    /// One sector access, issued at `issued_ns`; `written` = the bytes a write covers
    /// (ignored otherwise). Returns where it was served: the L1, the L2 or DRAM. A read
    /// that finds its sector in the L1 before the fill that allocated it has arrived
    /// (another subgroup's miss moments before) waits for that fill: it is served
    /// where the fill comes from.
    pub(super) fn access(
        &mut self,
        c: &mut Counts,
        sm: usize,
        access: Access,
        (key, written): Covered,
        issued_ns: f64,
        local: bool,
    ) -> (CacheLevel, bool) {
        if access == Access::Read
            && let Some(l1) = self.l1.get_mut(sm)
        {
            // A read touches the sector (`touch` clears the mark): a write after it no
            // longer meets a fill.
            if l1.touch(key, 0) {
                c.l1_hit_sectors += 1;
                let level = match l1.fill() {
                    Some((ready_ns, from)) if issued_ns < ready_ns => from,
                    _ => CacheLevel::L1,
                };
                return (level, false);
            }
            let level = self.l2_access(c, access, key, written);
            let level = self.near_or_far(sm, key, level);
            let latency_ns = match level {
                CacheLevel::L1 | CacheLevel::L2 => self.l2_ns,
                CacheLevel::L2Far => self.l2_far_ns,
                CacheLevel::Llc => self.llc_ns,
                CacheLevel::Dram => self.dram_ns,
            };
            if let Some(l1) = self.l1.get_mut(sm) {
                l1.set_fill(issued_ns + latency_ns, level);
            }
            return (level, false);
        }
        let mut hazard = false;
        if access != Access::Read
            && let Some(l1) = self.l1.get_mut(sm)
        {
            if local && access == Access::Write {
                // Local memory is private to its invocation: the L1 keeps what it
                // writes (and writes it through to the L2). A write into a sector a
                // read miss allocated and nothing touched since meets its fill.
                hazard = l1.take_missed(key);
                l1.touch(key, written.max(1));
            } else {
                l1.remove(key);
            }
        }
        // A write leaves no partition a copy of the line to read near.
        for near in &mut self.l2_near {
            near.remove(key / self.per_line);
        }
        (self.l2_access(c, access, key, written), hazard)
    }

    /// Where a read that reached the L2 from `sm` was served (`level`, as the whole
    /// L2 says): an L2 hit is far unless `sm`'s partition read the line lately, and
    /// the partition keeps it from now on.
    fn near_or_far(&mut self, sm: usize, key: u64, level: CacheLevel) -> CacheLevel {
        let Some(near) = self.l2_near.get_mut(sm / self.sms_per_partition) else {
            return level;
        };
        if near.touch(key / self.per_line, 0) || level != CacheLevel::L2 {
            level
        } else {
            CacheLevel::L2Far
        }
    }

    /// A sector that `op` moves: it joins the open request of its kind when that is of
    /// its line, else it opens a new one.
    fn dram_sector(&mut self, c: &mut Counts, op: DramOp, key: u64) {
        let line = key / self.per_line;
        match &mut self.dram_open[op as usize] {
            Some((open, moved)) if *open == line && *moved < self.per_line => {
                *moved += 1;
                c.dram_unmoved_sectors -= 1;
            }
            open => {
                *open = Some((line, 1));
                c.dram_requests += 1;
                c.dram_unmoved_sectors += self.per_line - 1;
            }
        }
    }

    /// One request reads the lines of `sectors` (sorted): each line counts it once.
    pub(super) fn read_lines(&mut self, sectors: &[Covered]) {
        let mut last = None;
        for &(key, _) in sectors {
            let line = key / self.per_line;
            if last != Some(line) {
                self.reads_of(line).users += 1;
                last = Some(line);
            }
        }
    }

    /// The in-flight group's DRAM reads, settled per line whatever order its requests
    /// were replayed in: each request that reads part of a line whose sectors came
    /// from DRAM takes a DRAM access of its own (at most one per sector moved), and
    /// those accesses leave the rest of the line unmoved. A line split between two
    /// subgroups (a misaligned copy) so costs the same wherever the split falls: the
    /// replay's order, one workgroup's request after another's, is not the device's,
    /// where a workgroup's subgroups ask within a few clocks of one another.
    pub(super) fn settle_reads(&mut self, c: &mut Counts) {
        for line in self.reads.drain(..) {
            let requests = line.users.min(line.moved);
            c.dram_requests += requests;
            c.dram_unmoved_sectors += requests * self.per_line - line.moved;
        }
        self.line_reads.clear();
    }

    /// The in-flight group's reads of `line`.
    fn reads_of(&mut self, line: u64) -> &mut LineReads {
        let reads = &mut self.reads;
        let i = self.line_reads.get_or_insert(line, || {
            reads.push(LineReads::default());
            u32::try_from(reads.len() - 1).unwrap_or(u32::MAX - 1)
        });
        &mut self.reads[i as usize]
    }

    /// A dirty sector written back to DRAM, merged with a DRAM read first when it is
    /// `partial`.
    fn write_back_sector(&mut self, c: &mut Counts, key: u64, partial: bool) {
        if let Some(llc) = &mut self.llc {
            llc.touch(key, 0);
        }
        c.dram_write_bytes += self.sector_bytes;
        self.dram_sector(c, DramOp::Write, key);
        if partial {
            c.dram_merge_read_bytes += self.sector_bytes;
            self.dram_sector(c, DramOp::MergeRead, key);
        }
    }

    /// A sector access that reaches the L2.
    fn l2_access(&mut self, c: &mut Counts, access: Access, key: u64, written: u32) -> CacheLevel {
        c.l2_sectors += 1;
        c.l2_write_sectors += u64::from(access != Access::Read);
        let written = match access {
            Access::Read => 0,
            Access::Write => written.max(1),
            Access::Atomic => FULL,
        };
        let hit = self.l2.touch(key, written);
        let level = if hit {
            c.l2_hit_sectors += 1;
            CacheLevel::L2
        } else if access == Access::Write {
            CacheLevel::Dram
        } else if self.llc.as_mut().is_some_and(|llc| llc.touch(key, 0)) {
            c.llc_hit_sectors += 1;
            CacheLevel::Llc
        } else {
            c.dram_read_bytes += self.sector_bytes;
            self.reads_of(key / self.per_line).moved += 1;
            CacheLevel::Dram
        };
        for i in 0..self.l2.evicted().len() {
            let (victim, dirty, valid) = self.l2.evicted()[i];
            if dirty {
                self.write_back_sector(c, victim, valid != FULL);
            }
        }
        level
    }
}

/// A sector key and the bytes of it a request covers.
pub(super) type Covered = (u64, u32);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::model::fixtures::{copy_bindings, counts, h100, suite_kernel};

    /// DRAM bytes of `copy_offset` over `n` invocations on `device`.
    fn copy_offset_dram(device: &DeviceModel, n: u32, offset: u32) -> Counts {
        let k = suite_kernel("copy_offset");
        let mut b = copy_bindings(n, offset, (n + offset) as usize);
        counts(&k, &mut b, [n / 256, 1, 1], device)
    }

    #[test]
    fn misaligned_copy_dram_bytes_with_and_without_l2() {
        // A small chip: 16 SMs × 4 workgroups of 256 in flight, 256 KB of L2 against
        // 2 MB of buffers, so the L2 cannot hold the whole copy.
        let small = DeviceModel {
            sms: 16,
            max_lanes_per_sm: 1024,
            l1_bytes: 16 << 10,
            l2_bytes: 256 << 10,
            ..h100()
        };
        let n = 256 * 1024;
        let bytes = u64::from(n) * 4;
        let aligned = copy_offset_dram(&small, n, 0);
        assert_eq!(aligned.dram_read_bytes, bytes);
        assert_eq!(aligned.dram_write_bytes, bytes);
        let shifted = copy_offset_dram(&small, n, 1);
        let total = |c: &Counts| (c.dram_read_bytes + c.dram_write_bytes) as f64;
        let ratio = total(&shifted) / total(&aligned);
        assert!((1.0..1.03).contains(&ratio), "L2 on: {ratio}");
        // The extra sector per request is still L2 traffic.
        assert!(shifted.l2_sectors > aligned.l2_sectors);

        let uncached = DeviceModel {
            l1_bytes: 0,
            l2_bytes: 0,
            ..small
        };
        let aligned = copy_offset_dram(&uncached, n, 0);
        let shifted = copy_offset_dram(&uncached, n, 1);
        let reads = shifted.dram_read_bytes as f64 / aligned.dram_read_bytes as f64;
        assert_eq!(reads, 1.25, "L2 off, reads");
        assert_eq!(total(&shifted) / total(&aligned), 1.25, "L2 off, total");
    }

    #[test]
    fn l1_serves_reads_within_a_workgroup() {
        // Without an L2, the sector two neighbouring subgroups of a workgroup share is
        // read once thanks to the L1; across workgroups (other SMs) it is read twice.
        let device = DeviceModel {
            l2_bytes: 0,
            ..h100()
        };
        let c = copy_offset_dram(&device, 256 * 8, 1);
        // 8 workgroups × 8 requests × 5 sectors, 7 of 8 shared sectors hit in L1.
        assert_eq!(c.l1_hit_sectors, 8 * 7);
        assert_eq!(c.dram_read_bytes, (8 * 8 * 5 - 8 * 7) * 32);
    }

    #[test]
    fn a_split_l2_serves_near_to_half_its_size_and_far_to_all_of_it() {
        // Two SMs, one per partition; an L2 of 64 lines, so 32 near each; no L1, so
        // every read reaches the L2.
        let device = DeviceModel {
            sms: 2,
            l1_bytes: 0,
            l2_bytes: 64 * 128,
            l2_partitions: 2,
            ..h100()
        };
        let read = |caches: &mut Caches, sm: usize, line: u64| {
            let mut c = Counts::default();
            caches
                .access(&mut c, sm, Access::Read, (line * 4, 0), 0.0, false)
                .0
        };
        // SM 0 walks a cycle of `lines` lines twice; the second walk's levels.
        let second_walk = |lines: u64| {
            let mut caches = Caches::new(&device, 2);
            (0..lines).for_each(|line| _ = read(&mut caches, 0, line));
            (0..lines).map(|line| read(&mut caches, 0, line)).max()
        };
        assert_eq!(second_walk(24), Some(CacheLevel::L2));
        assert_eq!(second_walk(48), Some(CacheLevel::L2Far));
        assert_eq!(second_walk(80), Some(CacheLevel::Dram));

        let mut caches = Caches::new(&device, 2);
        assert_eq!(read(&mut caches, 0, 7), CacheLevel::Dram);
        assert_eq!(read(&mut caches, 0, 7), CacheLevel::L2);
        // The other partition's SM finds the line far, then near.
        assert_eq!(read(&mut caches, 1, 7), CacheLevel::L2Far);
        assert_eq!(read(&mut caches, 1, 7), CacheLevel::L2);
        // A write leaves no near copy.
        let mut c = Counts::default();
        caches.access(&mut c, 0, Access::Write, (7 * 4, FULL), 0.0, false);
        assert_eq!(read(&mut caches, 0, 7), CacheLevel::L2Far);

        let one = DeviceModel {
            l2_partitions: 1,
            ..device
        };
        let mut caches = Caches::new(&one, 2);
        read(&mut caches, 0, 7);
        assert_eq!(
            read(&mut caches, 1, 7),
            CacheLevel::L2,
            "one partition is all near"
        );
    }

    #[test]
    fn a_last_level_cache_serves_what_the_l2_lost_and_saves_its_dram_reads() {
        // No L1, an L2 of 8 lines and a last-level cache of 32: a cycle of 16 lines
        // misses the L2 every time but is read from DRAM only once.
        let device = DeviceModel {
            sms: 1,
            l1_bytes: 0,
            l2_bytes: 8 * 128,
            l2_partitions: 1,
            llc_bytes: 32 * 128,
            ..h100()
        };
        let mut caches = Caches::new(&device, 1);
        let mut c = Counts::default();
        let mut walk = |c: &mut Counts| {
            (0..16u64)
                .map(|line| {
                    caches
                        .access(c, 0, Access::Read, (line * 4, 0), 0.0, false)
                        .0
                })
                .max()
        };
        assert_eq!(walk(&mut c), Some(CacheLevel::Dram));
        assert_eq!(walk(&mut c), Some(CacheLevel::Llc));
        assert_eq!(c.dram_read_bytes, 16 * 32);
        assert_eq!(c.llc_hit_sectors, 16);
        // Without it, the second walk reads DRAM again.
        let none = DeviceModel {
            llc_bytes: 0,
            ..device
        };
        let mut caches = Caches::new(&none, 1);
        let mut c = Counts::default();
        for _ in 0..2 {
            for line in 0..16u64 {
                caches.access(&mut c, 0, Access::Read, (line * 4, 0), 0.0, false);
            }
        }
        assert_eq!(c.dram_read_bytes, 2 * 16 * 32);
        assert_eq!(c.llc_hit_sectors, 0);
    }

    #[test]
    fn partial_sector_writes_cost_a_merge_read() {
        // copy_stride at stride 2 writes every other word: every written sector is
        // half valid and must be merged with DRAM's copy; at stride 1 none is.
        let k = suite_kernel("copy_stride");
        let device = DeviceModel {
            l2_bytes: 64 << 10,
            ..h100()
        };
        let n = 256 * 64;
        for (s, merged) in [(1u32, 0), (2, 1)] {
            let mut b = copy_bindings(n, s, (n * s) as usize);
            let c = counts(&k, &mut b, [64, 1, 1], &device);
            assert_eq!(c.dram_write_bytes, u64::from(n * s) * 4, "stride {s}");
            assert_eq!(
                c.dram_merge_read_bytes,
                merged * c.dram_write_bytes,
                "stride {s}"
            );
        }
    }
}
