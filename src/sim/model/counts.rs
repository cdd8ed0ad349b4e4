//! What the memory model counts of a run: global traffic by direction, cache hits, DRAM
//! bytes and requests, bank wavefronts and uniform addresses, raw (not scaled).

/// Global-memory requests of one direction and what they touch.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Traffic {
    /// Requests: one per subgroup memory instruction.
    pub requests: u64,
    /// Distinct 32-byte sectors they touch.
    pub sectors: u64,
    /// Distinct 128-byte lines they touch.
    pub lines: u64,
    /// Distinct bytes the lanes address within those sectors.
    pub bytes: u64,
}

/// Raw counts of the workgroups that ran (not scaled).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Reads.
    pub reads: Traffic,
    /// Writes.
    pub writes: Traffic,
    pub(crate) atomics: Traffic,
    /// Read sectors served by the L1.
    pub(crate) l1_hit_sectors: u64,
    /// Sector accesses reaching the L2, and those that hit.
    pub(crate) l2_sectors: u64,
    pub(crate) l2_hit_sectors: u64,
    /// Of `l2_sectors`, the writes and atomics.
    pub(crate) l2_write_sectors: u64,
    /// Sectors that missed the L2 and were read from the last-level cache.
    pub(crate) llc_hit_sectors: u64,
    /// Dependent read rounds by the farthest level one of their sectors came from (L1,
    /// near L2, far L2, last-level cache, DRAM): a round is the reads one workgroup issues at one round of its
    /// scoreboard ([`crate::sim::exec::Request::round`]), and it waits for its slowest
    /// sector, so a round of one DRAM read among L1 hits takes a DRAM latency.
    pub(crate) read_rounds_from: [u64; 5],
    /// Bytes read from DRAM.
    pub dram_read_bytes: u64,
    pub(crate) dram_write_bytes: u64,
    /// DRAM reads that merge a partly written sector before it is written back (a
    /// read-modify-write: the DRAM writes whole sectors).
    pub(crate) dram_merge_read_bytes: u64,
    /// DRAM requests: the L2 moves the sectors of one line that go to or from DRAM
    /// together as one request (write-backs and their merge reads of a line evicted
    /// together; the reads of a line that one request of the SMs misses), so a line
    /// that several requests of the in-flight group read, with sectors from DRAM, is
    /// one DRAM request per such request (at most one per sector moved), whatever
    /// order they come in; and the sectors those requests leave out of their lines (a
    /// request of one sector of a 4-sector line leaves out 3).
    pub(crate) dram_requests: u64,
    pub(crate) dram_unmoved_sectors: u64,
    /// Requests to private arrays in local memory.
    pub(crate) local_requests: u64,
    /// Local write requests that met a read miss's fill in the L1 (a sector a read
    /// missed and nothing touched since).
    pub(crate) local_write_hazards: u64,
    pub(crate) shared_requests: u64,
    pub(crate) shared_wavefronts: u64,
    pub(crate) uniform_requests: u64,
    pub(crate) uniform_addresses: u64,
}

impl Counts {
    /// Global requests of every direction.
    pub(crate) fn global_requests(&self) -> u64 {
        self.reads.requests + self.writes.requests + self.atomics.requests
    }

    /// Global sectors of every direction (before any cache).
    pub(crate) fn global_sectors(&self) -> u64 {
        self.reads.sectors + self.writes.sectors + self.atomics.sectors
    }

    /// Distinct bytes the global requests of every direction address.
    pub(crate) fn global_bytes(&self) -> u64 {
        self.reads.bytes + self.writes.bytes + self.atomics.bytes
    }

    /// Global lines of every direction: the L1 wavefronts of the global requests.
    pub(crate) fn global_lines(&self) -> u64 {
        self.reads.lines + self.writes.lines + self.atomics.lines
    }
}
