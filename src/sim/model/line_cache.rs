//! A fully associative cache of sectors (an arena of nodes in a doubly linked list in
//! order of use, found by their line in a [`LineTable`]), with a dirty bit and a byte mask
//! each, that allocates and evicts whole lines: the building block of the L1s (random
//! eviction) and the L2 (least recently used).

use super::line_table::LineTable;

/// Where a sector access was served, nearest first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum CacheLevel {
    L1,
    /// The L2, near (the partition of the reading SM, or the only one).
    L2,
    /// The L2, in the other partition.
    L2Far,
    /// The last-level cache beyond the L2 ([`crate::sim::device::DeviceModel::llc_bytes`]).
    Llc,
    Dram,
}

const NIL: u32 = u32::MAX;

#[derive(Clone, Copy)]
struct Node {
    key: u64,
    prev: u32,
    next: u32,
    /// The line slot ([`LineCache::slots`]) of its line.
    line: u32,
    /// Holds a sector (not on the free list).
    held: bool,
    dirty: bool,
    /// Which bytes of the sector the cache holds (bit per byte): all once read from
    /// DRAM, only those written for a sector allocated by a write.
    valid: u32,
    /// In an L1: when the fill that allocated the sector arrives (ns on the issuing
    /// workgroup's scoreboard) and where it comes from.
    ready_ns: f64,
    from: CacheLevel,
    /// In an L1: allocated by a read miss and not touched since (its fill may still
    /// be on its way).
    missed: bool,
}

/// Every byte of a 32-byte sector valid.
pub(super) const FULL: u32 = u32::MAX;

/// Which held sector makes room for a new one.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Eviction {
    /// The least recently used.
    LeastRecent,
    /// One drawn uniformly, from this xorshift state (never 0).
    Random(u64),
}

/// A fully associative cache of sectors, with a dirty bit each. Its capacity is in
/// sectors, and a line with any sector held takes the room of all of its sectors (as
/// a cache with one tag per line and a valid bit per sector).
///
/// A sector is found by its line: one lookup in `lines` gives the line's slot, whose
/// `per_line` entries of `slots` are its sectors' nodes (the L2 of a large GPU holds
/// a million sectors, and a map by sector took several lookups a miss).
pub(super) struct LineCache {
    capacity: usize,
    eviction: Eviction,
    /// Sectors per line (sector key ÷ this = line).
    per_line: u64,
    /// log2 of `per_line` where it is a power of two: a shift for the division.
    line_shift: Option<u32>,
    /// Entries of `slots` per line slot: the count of its sectors held, then the
    /// `per_line` sectors' nodes (one host cache line for both where it can).
    width: usize,
    /// The slot of each line with a sector held.
    lines: LineTable,
    /// Per line slot, the sectors it holds, then the node of each of its sectors in
    /// address order (`NIL` where not held).
    slots: Vec<u32>,
    free_slots: Vec<u32>,
    /// What the last [`LineCache::touch`] evicted.
    evicted: Vec<(u64, bool, u32)>,
    /// The node of the sector the last [`LineCache::touch`] used, while held.
    touched: u32,
    nodes: Vec<Node>,
    free: Vec<u32>,
    head: u32,
    tail: u32,
}

impl LineCache {
    /// An empty cache of `capacity` sectors in lines of `per_line`, evicting the least
    /// recently used.
    pub(super) fn new(capacity: usize, per_line: u64) -> LineCache {
        LineCache::evicting(capacity, per_line, Eviction::LeastRecent)
    }

    pub(super) fn evicting(capacity: usize, per_line: u64, eviction: Eviction) -> LineCache {
        let per_line = per_line.max(1);
        LineCache {
            capacity,
            eviction,
            per_line,
            line_shift: per_line
                .is_power_of_two()
                .then_some(per_line.trailing_zeros()),
            width: 1 + crate::host_len(per_line),
            lines: LineTable::default(),
            slots: Vec::new(),
            free_slots: Vec::new(),
            evicted: Vec::new(),
            touched: NIL,
            nodes: Vec::new(),
            free: Vec::new(),
            head: NIL,
            tail: NIL,
        }
    }

    /// Empty, as [`LineCache::evicting`] makes it with its capacity, lines and eviction
    /// state as they are, keeping the room its parts took (a launch empties 132 L1s).
    pub(super) fn clear(&mut self) {
        self.lines.clear();
        self.slots.clear();
        self.free_slots.clear();
        self.evicted.clear();
        self.touched = NIL;
        self.nodes.clear();
        self.free.clear();
        self.head = NIL;
        self.tail = NIL;
    }

    /// The most sectors it holds.
    pub(super) fn capacity(&self) -> usize {
        self.capacity
    }

    /// The room its lines take, in sectors.
    fn occupied(&self) -> usize {
        self.lines.len() * crate::host_len(self.per_line)
    }

    /// What the last [`LineCache::touch`] evicted: key, dirty, valid bytes of each sector.
    pub(super) fn evicted(&self) -> &[(u64, bool, u32)] {
        &self.evicted
    }

    /// The line of sector `key`.
    fn line(&self, key: u64) -> u64 {
        match self.line_shift {
            Some(shift) => key >> shift,
            None => key / self.per_line,
        }
    }

    /// The entry of `slots` for sector `key` of the line in `slot`.
    fn entry(&self, slot: u32, key: u64) -> usize {
        let sector = key - self.line(key) * self.per_line;
        slot as usize * self.width + 1 + crate::host_len(sector)
    }

    /// The entry of `slots` that counts the sectors held of the line in `slot`.
    fn held(&self, slot: u32) -> usize {
        slot as usize * self.width
    }

    /// The node holding sector `key`, if held.
    fn find(&self, key: u64) -> Option<u32> {
        let slot = self.lines.get(self.line(key))?;
        let i = self.slots[self.entry(slot, key)];
        (i != NIL).then_some(i)
    }

    /// Unlink and free node `i`, and count its sector out of its line.
    fn drop_node(&mut self, i: u32) -> Node {
        let node = self.nodes[i as usize];
        self.unlink(i);
        self.nodes[i as usize].held = false;
        self.free.push(i);
        if i == self.touched {
            self.touched = NIL;
        }
        let entry = self.entry(node.line, node.key);
        self.slots[entry] = NIL;
        let held = self.held(node.line);
        self.slots[held] -= 1;
        if self.slots[held] == 0 {
            self.lines.remove(self.line(node.key));
            self.free_slots.push(node.line);
        }
        node
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

    /// The slot of `line`, taken now if it has none.
    fn slot_of(&mut self, line: u64) -> u32 {
        let (free_slots, slots, width) = (&mut self.free_slots, &mut self.slots, self.width);
        self.lines.get_or_insert(line, || {
            free_slots.pop().unwrap_or_else(|| {
                slots.push(0);
                slots.extend(std::iter::repeat_n(NIL, width - 1));
                u32::try_from(slots.len() / width - 1).unwrap_or(NIL)
            })
        })
    }

    /// Access `key`: a read (`written` = 0) or a write of the bytes `written`, which
    /// marks it dirty; allocates on a miss (a read fills every byte). A held sector is
    /// no longer one a read miss allocated and nothing touched since. Returns whether
    /// it hit; [`LineCache::evicted`] says which sectors left to make room.
    pub(super) fn touch(&mut self, key: u64, written: u32) -> bool {
        self.evicted.clear();
        let dirty = written != 0;
        let slot = self.slot_of(self.line(key));
        let entry = self.entry(slot, key);
        let i = self.slots[entry];
        if i != NIL {
            self.touched = i;
            self.unlink(i);
            self.push_front(i);
            let node = &mut self.nodes[i as usize];
            node.dirty |= dirty;
            node.valid |= written;
            node.missed = false;
            return true;
        }
        let node = Node {
            key,
            prev: NIL,
            next: NIL,
            line: slot,
            held: true,
            dirty,
            valid: if dirty { written } else { FULL },
            ready_ns: 0.0,
            from: CacheLevel::L1,
            missed: false,
        };
        let i = match self.free.pop() {
            Some(i) => {
                self.nodes[i as usize] = node;
                i
            }
            None => {
                self.nodes.push(node);
                u32::try_from(self.nodes.len() - 1).unwrap_or(NIL)
            }
        };
        self.slots[entry] = i;
        self.touched = i;
        let held = self.held(slot);
        self.slots[held] += 1;
        self.push_front(i);
        while self.occupied() > self.capacity {
            let before = self.evicted.len();
            self.evict_line();
            if self.evicted.len() == before {
                break;
            }
        }
        false
    }

    /// Drop the line of a sector [`Eviction`] picks, never the line of the one just
    /// used unless it is the only one, into [`LineCache::evicted`].
    fn evict_line(&mut self) {
        let Some(victim) = self.victim() else {
            return;
        };
        let slot = self.nodes[victim as usize].line;
        let first = self.held(slot) + 1;
        for entry in first..first + self.width - 1 {
            let i = self.slots[entry];
            if i != NIL {
                let node = self.drop_node(i);
                self.evicted.push((node.key, node.dirty, node.valid));
            }
        }
    }

    /// The sector whose line goes next.
    fn victim(&mut self) -> Option<u32> {
        if self.tail == NIL {
            return None;
        }
        let Eviction::Random(state) = &mut self.eviction else {
            return Some(self.tail);
        };
        let head_line = self.nodes[self.head as usize].line;
        Some(loop {
            *state ^= *state << 13;
            *state ^= *state >> 7;
            *state ^= *state << 17;
            // Draw slots of the arena until one holds a sector: the free ones are few (a
            // cache runs full).
            let i = crate::host_len(*state % self.nodes.len() as u64);
            let node = &self.nodes[i];
            if node.held && (node.line != head_line || self.lines.len() == 1) {
                break u32::try_from(i).unwrap_or(NIL);
            }
        })
    }

    /// Shrink to `capacity` sectors, returning the sectors evicted in eviction order.
    pub(super) fn set_capacity(&mut self, capacity: usize) -> Vec<(u64, bool, u32)> {
        self.capacity = capacity;
        let mut evicted = Vec::new();
        while self.occupied() > self.capacity && !self.lines.is_empty() {
            self.evicted.clear();
            self.evict_line();
            evicted.append(&mut self.evicted);
        }
        evicted
    }

    /// When the fill of the sector the last [`LineCache::touch`] used arrives and from
    /// where, while it is held.
    pub(super) fn fill(&self) -> Option<(f64, CacheLevel)> {
        let node = self.nodes.get(self.touched as usize)?;
        Some((node.ready_ns, node.from))
    }

    /// Record when the fill of the sector the last [`LineCache::touch`] used arrives
    /// and from where, while it is held; it is now a read miss's, untouched since.
    pub(super) fn set_fill(&mut self, ready_ns: f64, from: CacheLevel) {
        if let Some(node) = self.nodes.get_mut(self.touched as usize) {
            node.ready_ns = ready_ns;
            node.from = from;
            node.missed = true;
        }
    }

    /// Whether a held sector was allocated by a read miss and not touched since; clears
    /// the mark.
    pub(super) fn take_missed(&mut self, key: u64) -> bool {
        self.find(key)
            .is_some_and(|i| std::mem::take(&mut self.nodes[i as usize].missed))
    }

    /// Drop a held sector, dirty or not, without a write-back.
    pub(super) fn remove(&mut self, key: u64) {
        if let Some(i) = self.find(key) {
            self.drop_node(i);
        }
    }

    /// Clean the dirty sectors (the end-of-run write-back) and return them in address
    /// order, each with whether it is partly valid.
    pub(super) fn write_back(&mut self) -> Vec<(u64, bool)> {
        let mut dirty = Vec::new();
        for node in self.nodes.iter_mut().filter(|n| n.held) {
            if node.dirty {
                dirty.push((node.key, node.valid != FULL));
            }
            node.dirty = false;
        }
        dirty.sort_unstable();
        dirty
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn write_back_and_eviction_by_sector() {
        // Lines of one sector: the room is the sectors'.
        let mut l = LineCache::new(2, 1);
        assert!(!l.touch(1, 0xF));
        assert!(!l.touch(2, 0));
        assert!(l.touch(1, 0));
        assert!(!l.touch(3, 0));
        assert_eq!(l.evicted(), [(2, false, FULL)]);
        // Sector 1 holds only the four bytes written: a partial write-back.
        assert!(!l.touch(4, 0));
        assert_eq!(l.evicted(), [(1, true, 0xF)]);
        l.remove(3);
        assert_eq!(l.write_back(), vec![]);
        l.touch(5, FULL);
        l.touch(4, 0xF0);
        assert_eq!(
            l.write_back(),
            vec![(4, false), (5, false)],
            "a read sector written in part is whole"
        );
        let mut off = LineCache::new(0, 1);
        assert!(!off.touch(7, 1));
        assert_eq!(off.evicted(), [(7, true, 1)]);
    }

    #[test]
    fn a_line_takes_the_room_of_all_its_sectors() {
        // Room for two lines of four sectors.
        let mut l = LineCache::new(8, 4);
        // One sector of each of two lines fills it: a pointer chase's footprint.
        l.touch(0, 0);
        l.touch(4, 0);
        assert!(!l.touch(1, 0));
        assert!(
            l.evicted().is_empty(),
            "a sector of a held line needs no room"
        );
        // A third line evicts the least recent whole line (sectors 0 and 1).
        l.touch(4, 0);
        assert!(!l.touch(8, 0));
        assert_eq!(l.evicted(), [(0, false, FULL), (1, false, FULL)]);
        assert!(l.touch(4, 0) && l.touch(8, 0));
        // Shrinking to one line evicts the other whole.
        assert_eq!(l.set_capacity(4), vec![(4, false, FULL)]);
    }

    #[test]
    fn a_line_emptied_gives_its_slot_to_the_next_line() {
        // Room for one line of four sectors.
        let mut l = LineCache::new(4, 4);
        l.touch(0, 0);
        l.touch(1, 0xF);
        l.remove(0);
        l.remove(1);
        assert!(l.fill().is_none(), "removed");
        // Line 2 takes the freed slot: it fits, and line 0's sectors stay gone.
        assert!(!l.touch(9, 0));
        assert!(l.evicted().is_empty());
        assert!(l.fill().is_some());
        assert!(!l.touch(1, 0), "line 0 is not held");
        assert_eq!(l.evicted(), [(9, false, FULL)]);
        assert_eq!(l.write_back(), vec![]);
    }

    #[test]
    fn a_cleared_cache_is_a_new_one_with_the_draws_state_as_it_stood() {
        let walk = |l: &mut LineCache| {
            (0..300u64)
                .map(|key| (l.touch(key * 7 % 97, 0), l.evicted().to_vec()))
                .collect::<Vec<_>>()
        };
        let mut used = LineCache::evicting(32, 4, Eviction::Random(11));
        walk(&mut used);
        let mut new = LineCache::evicting(32, 4, used.eviction);
        used.clear();
        assert_eq!(walk(&mut used), walk(&mut new));
        assert_ne!(used.eviction, Eviction::Random(11));
    }

    #[test]
    fn random_eviction_keeps_part_of_a_cycle_larger_than_the_cache() {
        // A sweep over 1.25× and 2× the room, again and again: least recent first never
        // hits, a random victim leaves part of the sweep in place, more of the shorter.
        let hits = |eviction, keys: u64| {
            let mut l = LineCache::evicting(64, 1, eviction);
            let mut hits = 0;
            for round in 0..8 {
                for key in 0..keys {
                    hits += u32::from(l.touch(key, 0) && round > 0);
                }
            }
            hits
        };
        for keys in [80, 128] {
            assert_eq!(hits(Eviction::LeastRecent, keys), 0, "{keys} keys");
        }
        let (near, far) = (
            hits(Eviction::Random(7), 80),
            hits(Eviction::Random(7), 128),
        );
        assert!((280..560).contains(&near), "{near} hits of 560");
        assert!((100..700).contains(&far), "{far} hits of 896");
        assert!(near * 128 > far * 80, "{near} of 560 against {far} of 896");
    }
}
