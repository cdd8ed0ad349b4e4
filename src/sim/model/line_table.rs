//! The caches' map from a line to its slot: open addressing with linear probing in one
//! array of (line, slot) pairs, so that a lookup in an L2 of a million sectors costs at
//! most about one host cache miss (a map with its control bytes apart costs two), and
//! four consecutive lines share a host cache line of the table (a stream's lines are
//! found, and evicted, near one another).

/// No slot: the entry is empty.
const EMPTY: u32 = u32::MAX;

/// Fibonacci hashing's multiplier: it spreads strided lines over the whole table.
const SPREAD: u64 = 0x9E37_79B9_7F4A_7C15;

/// Consecutive lines that keep consecutive entries: one host cache line of pairs.
const RUN: u64 = 4;

/// A map from line to slot (any u32 but `u32::MAX`), at most half full.
#[derive(Default)]
pub(super) struct LineTable {
    /// (line, slot) pairs, a power of two of them; slot [`EMPTY`] where none.
    entries: Vec<(u64, u32)>,
    len: usize,
}

impl LineTable {
    /// Lines held.
    pub(super) fn len(&self) -> usize {
        self.len
    }

    pub(super) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Where `line`'s probe starts: its run of [`RUN`] lines spread over the table,
    /// the line at its place in the run.
    #[expect(
        clippy::cast_possible_truncation,
        reason = "the top bits of the product: fewer than the table's index bits"
    )]
    fn home(&self, line: u64) -> usize {
        let bits = self.entries.len().trailing_zeros();
        let run = (line / RUN).wrapping_mul(SPREAD) >> (64 - bits);
        ((run & !(RUN - 1)) | (line % RUN)) as usize
    }

    fn mask(&self) -> usize {
        self.entries.len() - 1
    }

    /// The entry holding `line`, or the empty one where it would go.
    fn probe(&self, line: u64) -> usize {
        let mut i = self.home(line);
        loop {
            let (held, slot) = self.entries[i];
            if slot == EMPTY || held == line {
                return i;
            }
            i = (i + 1) & self.mask();
        }
    }

    /// The slot of `line`, if held.
    pub(super) fn get(&self, line: u64) -> Option<u32> {
        if self.entries.is_empty() {
            return None;
        }
        let slot = self.entries[self.probe(line)].1;
        (slot != EMPTY).then_some(slot)
    }

    /// The slot of `line`, given `slot()`'s slot first if it has none.
    pub(super) fn get_or_insert(&mut self, line: u64, slot: impl FnOnce() -> u32) -> u32 {
        if (self.len + 1) * 2 > self.entries.len() {
            self.grow();
        }
        let i = self.probe(line);
        if self.entries[i].1 == EMPTY {
            self.entries[i] = (line, slot());
            self.len += 1;
        }
        self.entries[i].1
    }

    /// Twice the entries (16 at first), every line placed anew.
    fn grow(&mut self) {
        let size = (self.entries.len() * 2).max(16);
        let old = std::mem::replace(&mut self.entries, vec![(0, EMPTY); size]);
        for (line, slot) in old.into_iter().filter(|&(_, slot)| slot != EMPTY) {
            let i = self.probe(line);
            self.entries[i] = (line, slot);
        }
    }

    /// Forget every line, keeping the room.
    pub(super) fn clear(&mut self) {
        if self.len > 0 {
            self.entries.fill((0, EMPTY));
            self.len = 0;
        }
    }

    /// Forget `line`, moving back the entries after it that its probe passed over.
    pub(super) fn remove(&mut self, line: u64) {
        if self.entries.is_empty() {
            return;
        }
        let mut hole = self.probe(line);
        if self.entries[hole].1 == EMPTY {
            return;
        }
        self.len -= 1;
        let mut next = hole;
        loop {
            next = (next + 1) & self.mask();
            let (moved, slot) = self.entries[next];
            if slot == EMPTY {
                break;
            }
            // An entry stays where the hole is not on its probe's way to it: its home
            // lies cyclically in (hole, next].
            let home = self.home(moved);
            let stays = if hole < next {
                hole < home && home <= next
            } else {
                hole < home || home <= next
            };
            if !stays {
                self.entries[hole] = (moved, slot);
                hole = next;
            }
        }
        self.entries[hole] = (0, EMPTY);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn holds_what_a_map_holds_through_inserts_and_removals() {
        // Lines that share their home (multiples of a large power of two) and
        // wrap round the table's end, against std's map.
        let mut table = LineTable::default();
        let mut map = HashMap::new();
        let mut state = 7u64;
        for step in 0..20_000u32 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let line = ((state % 512) << 40) | (state % 3);
            if state.is_multiple_of(3) {
                table.remove(line);
                map.remove(&line);
            } else {
                let slot = table.get_or_insert(line, || step);
                assert_eq!(slot, *map.entry(line).or_insert(step));
            }
            assert_eq!(table.len(), map.len());
        }
        for line in 0..600u64 {
            for low in 0..3 {
                let line = (line << 40) | low;
                assert_eq!(table.get(line), map.get(&line).copied());
            }
        }
        assert!(!table.is_empty());
        table.clear();
        assert!(table.is_empty() && table.get(3).is_none());
    }
}
