//! A fully associative LRU cache of sectors (an arena of nodes in a doubly linked
//! list, found by a hash map), with a dirty bit and a byte mask each: the building block
//! of the L1s and the L2.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use super::cache::Level;

/// Multiplicative hash for the caches' sector keys (std's SipHash costs more than the
/// model around it).
#[derive(Default)]
pub(super) struct MulHasher(u64);

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
pub(super) const FULL: u32 = u32::MAX;

/// A sector leaving a cache: its key, whether dirty, which bytes are valid.
pub(super) type Evicted = Option<(u64, bool, u32)>;

/// A fully associative LRU cache of sectors, with a dirty bit each.
pub(super) struct Lru {
    capacity: usize,
    map: HashMap<u64, u32, BuildHasherDefault<MulHasher>>,
    nodes: Vec<Node>,
    free: Vec<u32>,
    head: u32,
    tail: u32,
}

impl Lru {
    pub(super) fn new(capacity: usize) -> Lru {
        Lru {
            capacity,
            map: HashMap::default(),
            nodes: Vec::new(),
            free: Vec::new(),
            head: NIL,
            tail: NIL,
        }
    }

    /// The most sectors it holds.
    pub(super) fn capacity(&self) -> usize {
        self.capacity
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
    pub(super) fn touch(&mut self, key: u64, written: u32) -> (bool, Evicted) {
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
    pub(super) fn set_capacity(&mut self, capacity: usize) -> Vec<(u64, bool, u32)> {
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
    pub(super) fn fill(&self, key: u64) -> Option<(f64, Level)> {
        self.map
            .get(&key)
            .map(|&i| (self.nodes[i as usize].ready_ns, self.nodes[i as usize].from))
    }

    /// Record when the fill of a held sector arrives and from where; it is now a read
    /// miss's, untouched since.
    pub(super) fn set_fill(&mut self, key: u64, ready_ns: f64, from: Level) {
        if let Some(&i) = self.map.get(&key) {
            self.nodes[i as usize].ready_ns = ready_ns;
            self.nodes[i as usize].from = from;
            self.nodes[i as usize].missed = true;
        }
    }

    /// Whether a held sector was allocated by a read miss and not touched since; clears
    /// the mark.
    pub(super) fn take_missed(&mut self, key: u64) -> bool {
        self.map
            .get(&key)
            .is_some_and(|&i| std::mem::take(&mut self.nodes[i as usize].missed))
    }

    /// Drop a held sector, dirty or not, without a write-back.
    pub(super) fn remove(&mut self, key: u64) {
        if let Some(i) = self.map.remove(&key) {
            self.unlink(i);
            self.free.push(i);
        }
    }

    /// Clean the dirty sectors (the end-of-run write-back) and return them in address
    /// order, each with whether it is partly valid.
    pub(super) fn write_back(&mut self) -> Vec<(u64, bool)> {
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
