//! The memory model: turns the interpreter's request stream ([`super::exec`]) into
//! sectors, cache traffic, bank conflicts and a predicted time, GPGPU-Sim style but
//! small and parameterised by a [`DeviceModel`].
//!
//! Per request of one subgroup:
//! - **Global (storage) memory.** Coalescing: the distinct `sector_bytes` sectors and
//!   `line_bytes` lines the active lanes' bytes touch (a lane's access that straddles
//!   a sector boundary counts both). Requests, sectors and lines are counted per
//!   direction (reads, writes, atomics). The sectors then go through two caches:
//!   - a per-SM **L1** for reads, `l1_bytes` per SM, sector-granular LRU; workgroups
//!     are placed on SMs round-robin by linear workgroup id (`id % sms`). Global
//!     writes and atomics do not allocate in the L1 (write-through, no write-allocate)
//!     and invalidate a copy it holds; atomics are performed at the L2. A read that
//!     hits a sector whose fill has not arrived yet (requested moments before by
//!     another subgroup, by the requests' issue times on the scoreboard) waits for
//!     that fill: for latency it counts as served where the fill comes from.
//!     **Local memory** (private arrays indexed at run time) is private to its
//!     invocation, so the L1 keeps what it writes (write-through to the L2, as
//!     Nsight Compute shows on the H100, with write-allocate): a private array that
//!     fits in the L1 is read from it. A local write into a sector that a read miss
//!     allocated and nothing touched since meets that read on its way: the L1 holds
//!     the write until the read has reached the L2, the point that orders the two
//!     (estimate: half the L2 round trip, `l2_latency_ns / 2`), and, processing its
//!     requests in order, holds the SM's other requests with it. So a ring buffer that
//!     overflows the L1 and writes each slot right after reading it
//!     (`localmem/dynamic_index`) costs about that half round trip per request per SM
//!     (Nsight Compute on the H100's twin: about 170 clocks per step per SM, 3.3×
//!     less when the load and the store of a step use different addresses).
//!   - one chip-wide **L2**, `l2_bytes`, sector-granular LRU, write-back with
//!     write-allocate. A read miss reads the sector from DRAM; a write miss does not
//!     (no read-for-ownership): a written sector, even partly written, costs one full
//!     `sector_bytes` DRAM write, once, when it is evicted dirty or at the end of the
//!     run; the L2 keeps a byte mask per sector, and a sector whose bytes were not all
//!     written (nor read from DRAM) is merged with a DRAM read first (an assumption,
//!     not isolated on the device: with it `copy/stride` at strides 2–8 is predicted
//!     within 2 % on the H100, without it a third too fast). An atomic miss reads the
//!     sector and dirties it. Every sector access that
//!     reaches the L2 (read misses of the L1, writes, atomics) is L2 traffic.
//!
//!   Size 0 disables a cache (its accesses all miss; an L2 of size 0 sends every
//!   written sector straight to DRAM).
//! - **Workgroup (shared) memory.** `banks` banks of `bank_bytes`; a lane's access is
//!   split into the `bank_bytes` words it covers (a `vec4<u32>` is 4 words in 4
//!   consecutive banks), all lanes' words are pooled and deduplicated, and the request
//!   needs `ways` = the largest number of distinct words in one bank wavefronts. The
//!   same word for several lanes is a broadcast. So a conflict-free 16-byte-per-lane
//!   request of 32 lanes takes 4 wavefronts (512 bytes at 128 per wavefront), as on
//!   the hardware, and a conflicted one more.
//! - **Uniform memory.** The distinct byte addresses of the request: the constant path
//!   serves one address per clock and serialises distinct ones. A uniform read at an
//!   address that no run-time value sets is an instruction's constant operand, not a
//!   request (the interpreter does not trace it).
//!
//! **Interleaving.** The interpreter runs one workgroup after another, but a GPU runs
//! `W` = SMs × resident workgroups per SM ([`DeviceModel::workgroups_in_flight`]) at
//! once, and their requests meet in the L2. The model buffers the global requests of
//! each aligned group of `W` consecutive workgroups (ids `kW..(k+1)W`) and replays them
//! round-robin by request index (request 0 of every workgroup, then request 1, ...)
//! before feeding the caches. Shared and uniform requests have no cache state and are
//! counted as they arrive.
//!
//! **Time model.** The time is the largest of the limits: each memory path's
//! (`DRAM bytes / DRAM bandwidth`, L2 read sectors × `sector_bytes` / L2 bandwidth
//! plus L2 write requests, one per line a request writes, over their rate; L1
//! wavefronts plus the local-write holds per SM; shared wavefronts, uniform
//! addresses, each over its rate), the issue time (the interpreter's arithmetic
//! instructions over SMs × `issue_per_clock` × clock, or its shuffles over SMs ×
//! `shuffles_per_clock` × clock where that is longer), the latency time and the
//! launch time (workgroups per SM × `workgroup_launch_ns`); the largest names the
//! [`Bound`]. A global request takes one L1 wavefront per distinct line it touches, at
//! `l1_wavefronts_per_s`: on Volta and later the workgroup-memory wavefront rate, the
//! L1 and workgroup memory being one SRAM array with one 128-byte data path per SM.
//! Latency (Little's law): the
//! interpreter's scoreboard gives each workgroup's critical path and the storage loads
//! on it ([`super::Stats::critical_ns`]); a load on it takes the latency of where read
//! requests were served (a request waits for its farthest sector: L1, L2 or DRAM),
//! DRAM's rising from `dram_latency_ns` (idle) to `loaded_latency_ns` with the share of
//! the time the busiest memory path (DRAM or L2: both queue) is in use, where the
//! latency itself sets that time when it bounds (solved as a fixed point); besides, a workgroup's own global requests pass its SM's L1
//! one wavefront per clock (`l1_wavefronts_per_s` / SMs), so its critical path also
//! holds its own L1 wavefronts (a workgroup of many column reads waits for its last one
//! to leave the L1; this is what makes larger workgroups slower at equal occupancy),
//! and its subgroups issue in turns on the SM's `issue_per_clock` schedulers, so a
//! barrier and its end wait for its last subgroup ([`super::Costs::schedulers`]);
//! the workgroups resident at once
//! ([`DeviceModel::workgroups_in_flight`]) run in whole waves. A written sector keeps a
//! byte mask in the L2; one written back in part costs a DRAM read to merge first.
//! Predicted effective GB/s = the case's declared bytes / time.
//!
//! **Sampling.** [`predict`] runs every workgroup of a grid of at most `max_workgroups`;
//! for a larger grid it runs a window of `max_workgroups` consecutive workgroups in
//! the middle of the grid (start rounded down to a multiple of `W`, so the window's
//! in-flight groups are the real ones), and scales the counts by total / simulated.
//! The middle, not the start: the first and last workgroups are the atypical ones
//! (bounds checks, partial tiles, grid edges), the middle is the steady state. Caches
//! start cold at the window, which over-counts misses on data the workgroups before
//! the window would have brought in (about one group in `max_workgroups / W`), and
//! dirty sectors left at the end are written back. [`predict_sampled`] also bounds the
//! interpreter's work: after the window's first workgroup it runs only as many more as
//! fit in a budget of lane-operations, so that a kernel whose workgroups each loop
//! thousands of times (the on-chip experiments) is sampled on a few workgroups rather
//! than simulated for minutes; such kernels do the same work in every workgroup. Such
//! a sample runs fewer workgroups than share the caches on the device, so it gets their
//! share: each L1 the share of the workgroups resident on an SM it runs, the L2 the
//! share of the window it runs (else a sample's working set would fit where the full
//! grid's does not, and a second, warm pass would find it all in the L2). The bindings must be sized for the
//! FULL grid, since the kernel indexes with the full grid's ids: that is the caller's
//! business.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::ops::Range;

use super::device::DeviceModel;
use super::exec::{
    Access, Binding, Kernel, Launch, Request, SimError, Space, Target, TraceSink, run,
};

/// Global-memory requests of one direction and what they touch.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Traffic {
    pub requests: u64,
    pub sectors: u64,
    pub lines: u64,
}

/// Raw counts of the workgroups that ran (not scaled).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    pub reads: Traffic,
    pub writes: Traffic,
    pub atomics: Traffic,
    /// Read sectors served by the L1.
    pub l1_hit_sectors: u64,
    /// Sector accesses reaching the L2, and those that hit.
    pub l2_sectors: u64,
    pub l2_hit_sectors: u64,
    /// Of `l2_sectors`, the writes and atomics.
    pub l2_write_sectors: u64,
    /// Dependent read rounds by the farthest level one of their sectors came from (L1,
    /// L2, DRAM): a round is the reads one workgroup issues at one round of its
    /// scoreboard ([`super::exec::Request::round`]), and it waits for its slowest
    /// sector, so a round of one DRAM read among L1 hits takes a DRAM latency.
    pub read_rounds_from: [u64; 3],
    pub dram_read_bytes: u64,
    pub dram_write_bytes: u64,
    /// DRAM reads that merge a partly written sector before it is written back (a
    /// read-modify-write: the DRAM writes whole sectors).
    pub dram_merge_read_bytes: u64,
    /// DRAM requests: the L2 moves the sectors of one line that go to or from DRAM
    /// together as one request (write-backs and their merge reads of a line evicted
    /// together; the reads of a line that one request of the SMs misses), so a line
    /// that several requests of the in-flight group read, with sectors from DRAM, is
    /// one DRAM request per such request (at most one per sector moved), whatever
    /// order they come in; and the sectors those requests leave out of their lines (a
    /// request of one sector of a 4-sector line leaves out 3).
    pub dram_requests: u64,
    pub dram_unmoved_sectors: u64,
    /// Requests to private arrays in local memory.
    pub local_requests: u64,
    /// Local write requests that met a read miss's fill in the L1 (a sector a read
    /// missed and nothing touched since).
    pub local_write_hazards: u64,
    pub shared_requests: u64,
    pub shared_wavefronts: u64,
    pub uniform_requests: u64,
    pub uniform_addresses: u64,
}

impl Counts {
    /// Global requests of every direction.
    pub fn global_requests(&self) -> u64 {
        self.reads.requests + self.writes.requests + self.atomics.requests
    }

    /// Global sectors of every direction (before any cache).
    pub fn global_sectors(&self) -> u64 {
        self.reads.sectors + self.writes.sectors + self.atomics.sectors
    }

    /// Global lines of every direction: the L1 wavefronts of the global requests.
    pub fn global_lines(&self) -> u64 {
        self.reads.lines + self.writes.lines + self.atomics.lines
    }
}

/// Multiplicative hash for the caches' sector keys (std's SipHash costs more than the
/// model around it).
#[derive(Default)]
struct MulHasher(u64);

impl Hasher for MulHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = (self.0.rotate_left(5) ^ v).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
}

const NIL: u32 = u32::MAX;

#[derive(Clone, Copy)]
struct Node {
    key: u64,
    prev: u32,
    next: u32,
    dirty: bool,
    /// Which bytes of the sector the cache holds (bit per byte): all once read from
    /// DRAM, only those written for a sector allocated by a write.
    valid: u32,
    /// In an L1: when the fill that allocated the sector arrives (ns on the issuing
    /// workgroup's scoreboard) and where it comes from.
    ready_ns: f64,
    from: Level,
    /// In an L1: allocated by a read miss and not touched since (its fill may still
    /// be on its way).
    missed: bool,
}

/// Every byte of a 32-byte sector valid.
const FULL: u32 = u32::MAX;

/// A sector leaving a cache: its key, whether dirty, which bytes are valid.
type Evicted = Option<(u64, bool, u32)>;

/// A fully associative LRU cache of sectors, with a dirty bit each.
struct Lru {
    capacity: usize,
    map: HashMap<u64, u32, BuildHasherDefault<MulHasher>>,
    nodes: Vec<Node>,
    free: Vec<u32>,
    head: u32,
    tail: u32,
}

impl Lru {
    fn new(capacity: usize) -> Lru {
        Lru {
            capacity,
            map: HashMap::default(),
            nodes: Vec::new(),
            free: Vec::new(),
            head: NIL,
            tail: NIL,
        }
    }

    fn unlink(&mut self, i: u32) {
        let Node { prev, next, .. } = self.nodes[i as usize];
        match prev {
            NIL => self.head = next,
            p => self.nodes[p as usize].next = next,
        }
        match next {
            NIL => self.tail = prev,
            n => self.nodes[n as usize].prev = prev,
        }
    }

    fn push_front(&mut self, i: u32) {
        self.nodes[i as usize].prev = NIL;
        self.nodes[i as usize].next = self.head;
        match self.head {
            NIL => self.tail = i,
            h => self.nodes[h as usize].prev = i,
        }
        self.head = i;
    }

    /// Access `key`: a read (`written` = 0) or a write of the bytes `written`, which
    /// marks it dirty; allocates on a miss (a read fills every byte). A held sector is
    /// no longer one a read miss allocated and nothing touched since. Returns whether
    /// it hit, and the sector evicted to make room.
    fn touch(&mut self, key: u64, written: u32) -> (bool, Evicted) {
        let dirty = written != 0;
        if let Some(&i) = self.map.get(&key) {
            self.unlink(i);
            self.push_front(i);
            let node = &mut self.nodes[i as usize];
            node.dirty |= dirty;
            node.valid |= written;
            node.missed = false;
            return (true, None);
        }
        let node = Node {
            key,
            prev: NIL,
            next: NIL,
            dirty,
            valid: if dirty { written } else { FULL },
            ready_ns: 0.0,
            from: Level::L1,
            missed: false,
        };
        let i = match self.free.pop() {
            Some(i) => {
                self.nodes[i as usize] = node;
                i
            }
            None => {
                self.nodes.push(node);
                (self.nodes.len() - 1) as u32
            }
        };
        self.map.insert(key, i);
        self.push_front(i);
        if self.map.len() <= self.capacity {
            return (false, None);
        }
        (false, self.evict_least_recent())
    }

    /// Drop the least recently used sector: its key, whether it is dirty, its valid
    /// bytes.
    fn evict_least_recent(&mut self) -> Evicted {
        let t = self.tail;
        if t == NIL {
            return None;
        }
        let victim = self.nodes[t as usize];
        self.unlink(t);
        self.map.remove(&victim.key);
        self.free.push(t);
        Some((victim.key, victim.dirty, victim.valid))
    }

    /// Shrink to `capacity` sectors, returning the sectors evicted (least recent first).
    fn set_capacity(&mut self, capacity: usize) -> Vec<(u64, bool, u32)> {
        self.capacity = capacity;
        let mut evicted = Vec::new();
        while self.map.len() > self.capacity {
            match self.evict_least_recent() {
                Some(victim) => evicted.push(victim),
                None => break,
            }
        }
        evicted
    }

    /// When the fill of a held sector arrives and from where.
    fn fill(&self, key: u64) -> Option<(f64, Level)> {
        self.map
            .get(&key)
            .map(|&i| (self.nodes[i as usize].ready_ns, self.nodes[i as usize].from))
    }

    fn set_fill(&mut self, key: u64, ready_ns: f64, from: Level) {
        if let Some(&i) = self.map.get(&key) {
            self.nodes[i as usize].ready_ns = ready_ns;
            self.nodes[i as usize].from = from;
            self.nodes[i as usize].missed = true;
        }
    }

    /// Whether a held sector was allocated by a read miss and not touched since; clears
    /// the mark.
    fn take_missed(&mut self, key: u64) -> bool {
        self.map
            .get(&key)
            .is_some_and(|&i| std::mem::take(&mut self.nodes[i as usize].missed))
    }

    fn remove(&mut self, key: u64) {
        if let Some(i) = self.map.remove(&key) {
            self.unlink(i);
            self.free.push(i);
        }
    }

    /// Clean the dirty sectors (the end-of-run write-back) and return them in address
    /// order, each with whether it is partly valid.
    fn write_back(&mut self) -> Vec<(u64, bool)> {
        let mut dirty = Vec::new();
        for &i in self.map.values() {
            let node = &mut self.nodes[i as usize];
            if node.dirty {
                dirty.push((node.key, node.valid != FULL));
            }
            node.dirty = false;
        }
        dirty.sort_unstable();
        dirty
    }
}

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
struct Caches {
    sector_bytes: u64,
    /// Sectors per line.
    per_line: u64,
    /// The line of the DRAM request open for each [`DramOp`] and the sectors it moves
    /// so far.
    dram_open: [Option<(u64, u64)>; 2],
    /// The in-flight group's reads by line.
    line_reads: HashMap<u64, LineReads, BuildHasherDefault<MulHasher>>,
    l1: Vec<Lru>,
    l2: Lru,
    /// Latency of an L1 fill from the L2 and from DRAM.
    l2_ns: f64,
    dram_ns: f64,
}

impl Caches {
    /// One sector access, issued at `issued_ns`; `written` = the bytes a write covers
    /// (ignored otherwise). Returns where it was served: the L1, the L2 or DRAM. A read
    /// that finds its sector in the L1 before the fill that allocated it has arrived
    /// (another subgroup's miss moments before) waits for that fill: it is served
    /// where the fill comes from.
    fn access(
        &mut self,
        c: &mut Counts,
        sm: usize,
        access: Access,
        (key, written): Covered,
        issued_ns: f64,
        local: bool,
    ) -> (Level, bool) {
        if access == Access::Read
            && let Some(l1) = self.l1.get_mut(sm)
        {
            // A read touches the sector (`touch` clears the mark): a write after it no
            // longer meets a fill.
            if l1.touch(key, 0).0 {
                c.l1_hit_sectors += 1;
                let level = match l1.fill(key) {
                    Some((ready_ns, from)) if issued_ns < ready_ns => from,
                    _ => Level::L1,
                };
                return (level, false);
            }
            let level = self.l2_access(c, access, key, written);
            let latency_ns = if level == Level::L2 {
                self.l2_ns
            } else {
                self.dram_ns
            };
            if let Some(l1) = self.l1.get_mut(sm) {
                l1.set_fill(key, issued_ns + latency_ns, level);
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
        (self.l2_access(c, access, key, written), hazard)
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
    fn read_lines(&mut self, sectors: &[Covered]) {
        let mut last = None;
        for &(key, _) in sectors {
            let line = key / self.per_line;
            if last != Some(line) {
                self.line_reads.entry(line).or_default().users += 1;
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
    fn settle_reads(&mut self, c: &mut Counts) {
        for (_, line) in self.line_reads.drain() {
            let requests = line.users.min(line.moved);
            c.dram_requests += requests;
            c.dram_unmoved_sectors += requests * self.per_line - line.moved;
        }
    }

    /// A dirty sector written back to DRAM, merged with a DRAM read first when it is
    /// `partial`.
    fn write_back_sector(&mut self, c: &mut Counts, key: u64, partial: bool) {
        c.dram_write_bytes += self.sector_bytes;
        self.dram_sector(c, DramOp::Write, key);
        if partial {
            c.dram_merge_read_bytes += self.sector_bytes;
            self.dram_sector(c, DramOp::MergeRead, key);
        }
    }

    /// A sector access that reaches the L2.
    fn l2_access(&mut self, c: &mut Counts, access: Access, key: u64, written: u32) -> Level {
        c.l2_sectors += 1;
        c.l2_write_sectors += u64::from(access != Access::Read);
        let written = match access {
            Access::Read => 0,
            Access::Write => written.max(1),
            Access::Atomic => FULL,
        };
        let (hit, evicted) = self.l2.touch(key, written);
        if hit {
            c.l2_hit_sectors += 1;
        } else if access != Access::Write {
            c.dram_read_bytes += self.sector_bytes;
            self.line_reads
                .entry(key / self.per_line)
                .or_default()
                .moved += 1;
        }
        if let Some((victim, true, valid)) = evicted {
            self.write_back_sector(c, victim, valid != FULL);
        }
        if hit { Level::L2 } else { Level::Dram }
    }
}

/// Where a sector access was served, nearest first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Level {
    L1,
    L2,
    Dram,
}

/// A buffered global request: its SM, direction and sectors (a range of `sectors`).
#[derive(Clone, Copy)]
struct Pending {
    sm: u32,
    access: Access,
    sectors: (u32, u32),
    issued_ns: f64,
    round: Option<u32>,
    /// To a private array in local memory.
    local: bool,
}

/// A sector key and the bytes of it a request covers.
type Covered = (u64, u32);

/// The memory model as a [`TraceSink`]: feed it a run, then [`MemoryModel::finish`].
pub struct MemoryModel {
    sector_bytes: u64,
    line_bytes: u64,
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
    covered: Vec<Covered>,
    per_bank: Vec<u32>,
}

/// Buffer index in the top 16 bits of a sector key, sector number below.
const BUFFER_SHIFT: u32 = 48;

impl MemoryModel {
    /// A model of `device` for a dispatch of `num_workgroups`, replaying `in_flight`
    /// workgroups together (usually [`DeviceModel::workgroups_in_flight`]).
    pub fn new(device: &DeviceModel, num_workgroups: [u32; 3], in_flight: u64) -> MemoryModel {
        let sector_bytes = u64::from(device.sector_bytes.max(1));
        let sectors_of = |bytes: u64| (bytes / sector_bytes) as usize;
        let sms = u64::from(device.sms.max(1));
        MemoryModel {
            sector_bytes,
            line_bytes: u64::from(device.line_bytes.max(1)),
            banks: u64::from(device.banks.max(1)),
            bank_bytes: u64::from(device.bank_bytes.max(1)),
            sms,
            num_workgroups,
            in_flight: in_flight.max(1),
            counts: Counts::default(),
            caches: Caches {
                sector_bytes,
                per_line: (u64::from(device.line_bytes) / sector_bytes).max(1),
                dram_open: [None; 2],
                line_reads: HashMap::default(),
                l1: (0..sms)
                    .map(|_| Lru::new(sectors_of(device.l1_bytes)))
                    .collect(),
                l2: Lru::new(sectors_of(device.l2_bytes)),
                l2_ns: device.l2_latency_ns,
                dram_ns: device.dram_latency_ns,
            },
            buffers: Vec::new(),
            group: None,
            slots: Vec::new(),
            sectors: Vec::new(),
            scratch: Vec::new(),
            covered: Vec::new(),
            per_bank: vec![0; device.banks.max(1) as usize],
        }
    }

    /// Replay what is buffered, write back the dirty sectors, and return the counts.
    /// The model can go on taking requests afterwards (with its caches clean).
    pub fn finish(&mut self) -> Counts {
        self.flush();
        for (key, partial) in self.caches.l2.write_back() {
            self.caches
                .write_back_sector(&mut self.counts, key, partial);
        }
        self.counts
    }

    /// The sectors the lanes' accesses cover, sorted, each with the bytes covered
    /// (one bit per byte of a sector of at most 32 bytes), into `covered`.
    fn cover(&mut self, req: &Request<'_>) {
        let unit = self.sector_bytes;
        let bytes = u64::from(req.bytes_per_lane.max(1));
        self.covered.clear();
        for &a in req.addresses {
            for s in a / unit..=(a + bytes - 1) / unit {
                let first = a.max(s * unit) - s * unit;
                let last = (a + bytes).min((s + 1) * unit) - s * unit;
                let mask = (first..last.min(32)).fold(0u32, |m, b| m | 1 << b);
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

    /// Give the run the share of each cache that its workgroups would have on the
    /// device: `l1` and `l2` of their capacity (at most all of it). A sample of fewer
    /// workgroups than the device holds at once sees the caches that many would share.
    pub fn share(&mut self, l1: f64, l2: f64) {
        let of = |capacity: usize, share: f64| (capacity as f64 * share.clamp(0.0, 1.0)) as usize;
        for cache in &mut self.caches.l1 {
            let capacity = of(cache.capacity, l1);
            cache.set_capacity(capacity);
        }
        let capacity = of(self.caches.l2.capacity, l2);
        for (key, dirty, valid) in self.caches.l2.set_capacity(capacity) {
            if dirty {
                self.caches
                    .write_back_sector(&mut self.counts, key, valid != FULL);
            }
        }
    }

    /// Replay what is buffered and start counting afresh, as the next dispatch: the
    /// L2 as it is, the L1s empty (they are invalidated at every kernel launch).
    pub fn restart(&mut self) {
        self.flush();
        self.group = None;
        self.counts = Counts::default();
        for l1 in &mut self.caches.l1 {
            *l1 = Lru::new(l1.capacity);
        }
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
        let per_line = (self.line_bytes / self.sector_bytes).max(1);
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
        traffic.lines += lines;
        let start = self.sectors.len() as u32;
        self.sectors
            .extend(self.covered.iter().map(|&(s, mask)| (tag | s, mask)));
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
        let mut rounds: Vec<Option<(u32, Level)>> = vec![None; self.slots.len()];
        for i in 0..longest {
            for (slot, open) in self.slots.iter().zip(&mut rounds) {
                if let Some(p) = slot.get(i) {
                    let sectors = &self.sectors[p.sectors.0 as usize..p.sectors.1 as usize];
                    if p.access != Access::Write {
                        self.caches.read_lines(sectors);
                    }
                    let mut farthest = Level::L1;
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
            self.per_bank[(w % self.banks) as usize] += 1;
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

/// What bounds the predicted time: a memory path's bandwidth, or the latency, issue
/// or launch limit of the workgroups in flight.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Bound {
    Dram,
    L2,
    L1,
    Shared,
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
    /// The kernel touches no modelled memory: time 0.
    None,
}

impl Bound {
    /// The name in results files (`sim_bound`) and tables.
    pub fn name(self) -> &'static str {
        match self {
            Bound::Dram => "dram",
            Bound::L2 => "l2",
            Bound::L1 => "l1",
            Bound::Shared => "banks",
            Bound::Uniform => "uniform",
            Bound::Latency => "latency",
            Bound::Issue => "issue",
            Bound::Local => "local",
            Bound::Launch => "launch",
            Bound::None => "none",
        }
    }

    /// The bound in words, for a report beside the bar.
    pub fn describe(self) -> &'static str {
        match self {
            Bound::Dram => "DRAM bandwidth",
            Bound::L2 => "L2 bandwidth",
            Bound::L1 => "L1 wavefronts",
            Bound::Shared => "shared-memory bank wavefronts",
            Bound::Uniform => "constant-cache addresses",
            Bound::Latency => "memory latency: too few loads in flight",
            Bound::Issue => "instruction issue",
            Bound::Local => "local-memory traffic of a private array",
            Bound::Launch => "workgroup launch rate",
            Bound::None => "no modelled memory traffic",
        }
    }

    /// Every bound, in the order above.
    pub const ALL: [Bound; 10] = [
        Bound::Dram,
        Bound::L2,
        Bound::L1,
        Bound::Shared,
        Bound::Uniform,
        Bound::Latency,
        Bound::Issue,
        Bound::Local,
        Bound::Launch,
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
    pub time_s: f64,
    pub bound: Bound,
    /// Declared bytes / time (0 when time is 0).
    pub effective_gbps: f64,
    pub dram_read_bytes: u64,
    pub dram_write_bytes: u64,
    /// Sector accesses reaching the L2.
    pub l2_sectors: u64,
    /// Global requests (reads, writes, atomics).
    pub requests: u64,
    /// Average distinct sectors per global request (0 with no global request).
    pub sectors_per_request: f64,
    pub shared_wavefronts: u64,
    /// Average ways (wavefronts) per shared-memory request; None with none.
    pub bank_ways: Option<f64>,
    pub uniform_addresses: u64,
    /// Average distinct addresses per uniform request; None with none.
    pub uniform_addresses_per_request: Option<f64>,
    pub simulated_workgroups: u64,
    pub total_workgroups: u64,
    /// The simulated window's raw counts, unscaled.
    pub counts: Counts,
    /// Each limit's time, seconds; the largest is `time_s`.
    pub terms: Terms,
}

/// The time each limit of the model allows a dispatch, seconds.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Terms {
    pub dram: f64,
    /// Of `dram`, the time of partial-line requests' unmoved sectors.
    pub dram_partial: f64,
    pub l2: f64,
    /// Of `l2`, the time of sector writes.
    pub l2_writes: f64,
    pub l1: f64,
    pub shared: f64,
    pub uniform: f64,
    pub issue: f64,
    pub latency: f64,
    pub launch: f64,
}

/// What the interpreter measured of the workgroups it ran, besides their memory
/// requests ([`super::Stats`]), and their shape.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Work {
    /// Invocations per workgroup.
    pub lanes: u32,
    /// Arithmetic instructions issued, per subgroup ([`super::Stats::warp_ops`]).
    pub warp_ops: u64,
    /// Subgroup shuffles and broadcasts issued, per subgroup.
    pub shuffles: u64,
    /// Critical paths summed over the workgroups, and the storage loads on them,
    /// charged at [`costs`]`(device)`.
    pub critical_ns: f64,
    pub critical_rounds: u64,
}

impl Work {
    /// The work `runs` recorded, for workgroups of `lanes` invocations.
    fn of(runs: &[super::Stats], lanes: u32) -> Work {
        Work {
            lanes,
            warp_ops: runs.iter().map(|r| r.warp_ops).sum(),
            shuffles: runs.iter().map(|r| r.shuffles).sum(),
            critical_ns: runs.iter().map(|r| r.critical_ns).sum(),
            critical_rounds: runs.iter().map(|r| r.critical_rounds).sum(),
        }
    }
}

/// What the interpreter's scoreboard charges on `device`: storage loads at the idle
/// DRAM latency (the prediction rescales them by where they hit and how busy the
/// DRAM is), workgroup barriers.
pub fn costs(device: &DeviceModel) -> super::Costs {
    super::Costs {
        global_ns: device.dram_latency_ns,
        l2_ns: device.l2_latency_ns,
        on_chip_ns: device.on_chip_latency_ns,
        barrier_ns: device.barrier_ns,
        int_div_instructions: device.int_div_instructions,
        schedulers: device.issue_per_clock,
        clock_ghz: device.clock_ghz,
    }
}

impl Prediction {
    /// Scale `counts` and `work` by `total / simulated` workgroups and apply the time
    /// model: the largest of the memory paths' times, the issue time, the latency
    /// time and the launch time.
    pub fn from_counts(
        counts: &Counts,
        work: &Work,
        device: &DeviceModel,
        declared_bytes: u64,
        simulated_workgroups: u64,
        total_workgroups: u64,
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
        let dram_s = per_s(
            (dram_read_bytes + dram_write_bytes) as f64,
            device.dram_gbps * 1e9,
        ) + dram_partial_s;
        let memory = [
            (Bound::Dram, dram_s),
            (
                Bound::L2,
                per_s(
                    (l2_sectors.saturating_sub(l2_writes) * u64::from(device.sector_bytes)) as f64,
                    device.l2_gbps * 1e9,
                ) + l2_writes_s,
            ),
            (
                Bound::L1,
                per_s(
                    scaled(counts.global_lines()) as f64,
                    device.l1_wavefronts_per_s,
                ) + scaled(counts.local_write_hazards) as f64 * device.l2_latency_ns / 2.0 * 1e-9
                    / f64::from(device.sms.max(1)),
            ),
            (
                Bound::Shared,
                per_s(shared_wavefronts as f64, device.shared_wavefronts_per_s),
            ),
            (
                Bound::Uniform,
                per_s(uniform_addresses as f64, device.uniform_addresses_per_s),
            ),
        ];
        let sms = f64::from(device.sms.max(1));
        // The arithmetic pipes and the shuffle unit work side by side.
        let issue_s = per_s(
            work.warp_ops as f64 * scale,
            sms * device.issue_per_clock * device.clock_ghz * 1e9,
        )
        .max(per_s(
            work.shuffles as f64 * scale,
            sms * device.shuffles_per_clock * device.clock_ghz * 1e9,
        ));
        let launch_s = total_workgroups as f64 * device.workgroup_launch_ns * 1e-9 / sms;
        let busiest = memory.iter().map(|&(_, t)| t).fold(issue_s, f64::max);
        // Little's law: the workgroups resident at once each take their critical path;
        // its storage loads take the latency of where they hit, DRAM's rising with the
        // share of DRAM bandwidth in use.
        let [l1, l2, dram] = counts.read_rounds_from.map(|n| n as f64);
        let reads = (l1 + l2 + dram).max(1.0);
        let [l1, l2, dram] = [l1 / reads, l2 / reads, dram / reads];
        let round_ns =
            |dram_ns: f64| l1 * device.l1_latency_ns + l2 * device.l2_latency_ns + dram * dram_ns;
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
        let load = dram_s.max(memory[1].1);
        let busy = if idle > 0.0 && load > 0.0 {
            let t = (idle + (idle * idle + 4.0 * rise * load).max(0.0).sqrt()) / 2.0;
            (load / t.max(busiest)).min(1.0)
        } else {
            0.0
        };
        let latency_s = idle + busy * rise;
        let terms = Terms {
            dram: memory[0].1,
            dram_partial: dram_partial_s,
            l2: memory[1].1,
            l2_writes: l2_writes_s,
            l1: memory[2].1,
            shared: memory[3].1,
            uniform: memory[4].1,
            issue: issue_s,
            latency: latency_s,
            launch: launch_s,
        };
        let limits = memory.into_iter().chain([
            (Bound::Issue, issue_s),
            (Bound::Latency, latency_s),
            (Bound::Launch, launch_s),
        ]);
        let (mut bound, time_s) =
            limits.fold(
                (Bound::None, 0.0),
                |best, (b, t)| if t > best.1 { (b, t) } else { best },
            );
        // Local-memory traffic bounds the kernel when a memory path it loads does.
        if counts.local_requests > 0 && matches!(bound, Bound::Dram | Bound::L2 | Bound::L1) {
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

/// The workgroups [`predict`] simulates: all of a grid of at most `max_workgroups`,
/// else `max_workgroups` consecutive ones in the middle, the start rounded down to a
/// multiple of `in_flight`.
pub fn sample_window(total: u64, max_workgroups: u64, in_flight: u64) -> Range<u64> {
    let max = max_workgroups.max(1);
    if total <= max {
        return 0..total;
    }
    let start = (total - max) / 2 / in_flight.max(1) * in_flight.max(1);
    start..start + max
}

/// Predict a dispatch of `kernel` over `num_workgroups` on `device`: run (a window of
/// at most `max_workgroups` of) the grid through the interpreter into a
/// [`MemoryModel`] and apply the time model; `declared_bytes` is the case's bytes moved.
/// `bindings` must be sized for the full grid (they are updated in place, as on the
/// GPU).
pub fn predict(
    kernel: &Kernel,
    bindings: &mut [Binding],
    num_workgroups: [u32; 3],
    device: &DeviceModel,
    declared_bytes: u64,
    max_workgroups: u64,
) -> Result<Prediction, SimError> {
    predict_sampled(
        kernel,
        bindings,
        num_workgroups,
        device,
        declared_bytes,
        max_workgroups,
        u64::MAX,
    )
}

/// [`predict`], running the window's workgroups only while the interpreter's
/// lane-operations stay within `max_lane_ops`: the first workgroup always runs, and its
/// cost sets how many of the window's others follow.
pub fn predict_sampled(
    kernel: &Kernel,
    bindings: &mut [Binding],
    num_workgroups: [u32; 3],
    device: &DeviceModel,
    declared_bytes: u64,
    max_workgroups: u64,
    max_lane_ops: u64,
) -> Result<Prediction, SimError> {
    let total: u64 = num_workgroups.iter().map(|&n| u64::from(n)).product();
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
    let affordable = (max_lane_ops / first.lane_ops.max(1)).max(1);
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
            per_sm(simulated) as f64 / per_sm(whole).max(1) as f64,
            simulated as f64 / whole as f64,
        );
    }
    launch.workgroups = launch.workgroups.end..end;
    let rest = run(kernel, bindings, &launch, &mut model)?;
    let mut work = Work::of(&[first, rest], lanes);
    // Timed dispatches follow one another: the caches hold what the last one left.
    // Where the window is the whole grid, that is what the window leaves: count a
    // second pass (the bindings as the first left them). A window of a larger grid
    // starts cold, as the middle of a stream does.
    let counts = if window == (0..total) {
        model.restart();
        launch.workgroups = window.start..end;
        work = Work::of(&[run(kernel, bindings, &launch, &mut model)?], lanes);
        // In the steady state a dispatch writes back what the one before left dirty
        // (counted during the second pass), not its own leftovers.
        model.flush();
        model.counts
    } else {
        model.finish()
    };
    Ok(Prediction::from_counts(
        &counts,
        &work,
        device,
        declared_bytes,
        end - window.start,
        total,
    ))
}

#[cfg(test)]
mod tests {
    use super::super::device::preset;
    use super::*;

    /// A suite kernel as the GPU gets it (flattened by `build.rs`), with workgroups of
    /// 256 invocations.
    fn suite_kernel(name: &str) -> Kernel {
        let source = crate::suite::shaders::source(name).unwrap();
        Kernel::load(name, source, &[("WORKGROUP_SIZE", 256.0)]).unwrap()
    }

    fn h100() -> DeviceModel {
        *preset("h100").unwrap()
    }

    fn bind(binding: u32, data: Vec<u8>) -> Binding {
        Binding {
            group: 0,
            binding,
            data,
        }
    }

    fn params(words: &[u32]) -> Vec<u8> {
        let mut w = words.to_vec();
        w.resize(4, 0);
        w.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    /// Run every workgroup into a fresh model and return its counts.
    fn counts(k: &Kernel, b: &mut [Binding], grid: [u32; 3], device: &DeviceModel) -> Counts {
        let lanes = k.workgroup_size().iter().product();
        let mut m = MemoryModel::new(device, grid, device.workgroups_in_flight(lanes));
        run(k, b, &Launch::all(grid, device.subgroup_size), &mut m).unwrap();
        m.finish()
    }

    /// copy_offset or copy_stride over `n` invocations, buffers of `len` f32.
    fn copy_bindings(n: u32, param: u32, len: usize) -> Vec<Binding> {
        vec![
            bind(0, params(&[n, param])),
            bind(1, vec![0; 4 * len]),
            bind(2, vec![0; 4 * len]),
        ]
    }

    fn per_request(t: Traffic) -> f64 {
        t.sectors as f64 / t.requests as f64
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
    }

    /// Ways per shared request of `wgsl` (one workgroup, only reads of workgroup memory).
    fn ways(wgsl: &str, overrides: &[(&str, f64)]) -> f64 {
        let k = Kernel::load("banks", wgsl, overrides).unwrap();
        let mut b = vec![bind(0, vec![0; 4 * 1024])];
        let c = counts(&k, &mut b, [1, 1, 1], &h100());
        assert!(c.shared_requests > 0);
        let p = Prediction::from_counts(&c, &Work::default(), &h100(), 0, 1, 1);
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
            let p = Prediction::from_counts(&c, &Work::default(), &h100(), 0, 1, 1);
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

    /// DRAM bytes of copy_offset over `n` invocations on `device`.
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
            predict_sampled(
                &k,
                &mut b,
                [workgroups, 1, 1],
                &h100(),
                1 << 20,
                u64::MAX,
                max_lane_ops,
            )
            .unwrap()
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
    fn a_small_table_read_over_and_over_is_bound_by_the_l1() {
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
        for (offset, lines_per_read) in [("0u", 1.0), ("l", 2.0 - 2.0 / 64.0)] {
            let k = Kernel::load("table", &wgsl.replace("OFFSET", offset), &[]).unwrap();
            let mut b = vec![bind(0, vec![0; 1024]), bind(1, vec![0; 4 * 64 * 264])];
            let c = counts(&k, &mut b, [264, 1, 1], &h100());
            // Launches are instantaneous here: the L1 alone is compared.
            let device = DeviceModel {
                workgroup_launch_ns: 0.0,
                ..h100()
            };
            let p = Prediction::from_counts(&c, &Work::default(), &device, 1, 264, 264);
            assert_eq!(p.bound, Bound::L1, "{offset}");
            // 2 subgroups × 64 reads and 1 write (one line) per workgroup.
            let lines = 264.0 * 2.0 * (64.0 * lines_per_read + 1.0);
            assert_eq!(c.global_lines() as f64, lines, "{offset}");
            assert_eq!(p.time_s, lines / h100().shared_wavefronts_per_s, "{offset}");
        }
    }

    #[test]
    fn sampling_window() {
        assert_eq!(sample_window(100, 4096, 1056), 0..100);
        assert_eq!(sample_window(10_000, 4096, 1056), 2112..6208);
        assert_eq!(sample_window(10_000, 4096, 1), 2952..7048);
        assert_eq!(sample_window(10, 0, 0), 4..5);
    }

    #[test]
    fn lru_write_back() {
        let mut l = Lru::new(2);
        assert_eq!(l.touch(1, 0xF), (false, None));
        assert_eq!(l.touch(2, 0), (false, None));
        assert_eq!(l.touch(1, 0), (true, None));
        assert_eq!(l.touch(3, 0), (false, Some((2, false, FULL))));
        // Sector 1 holds only the four bytes written: a partial write-back.
        assert_eq!(l.touch(4, 0), (false, Some((1, true, 0xF))));
        l.remove(3);
        assert_eq!(l.write_back(), vec![]);
        l.touch(5, FULL);
        l.touch(4, 0xF0);
        assert_eq!(
            l.write_back(),
            vec![(4, false), (5, false)],
            "a read sector written in part is whole"
        );
        let mut off = Lru::new(0);
        assert_eq!(off.touch(7, 1), (false, Some((7, true, 1))));
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

    /// `cargo test --release --lib sim::model::tests::speed -- --ignored --nocapture`
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
