//! Input data: varied, non-zero words from one hash, and uniform parameter words; a
//! buffer's words held or made piece by piece ([`Words`]).

use std::borrow::Cow;
use std::ops::Range;
use std::sync::Arc;

use rayon::prelude::*;

/// A buffer's 32-bit words: held, or made from their index piece by piece, so that an
/// input or reference of a large buffer is never held whole (a plain run's host memory
/// stays within twice its largest buffer).
#[derive(Clone)]
pub enum Words {
    /// Held whole.
    Held(Vec<u32>),
    /// `len` words, word `i` being `word(i)`.
    Made {
        /// How many words.
        len: usize,
        /// Word `i`, made from `i`.
        word: Arc<dyn Fn(usize) -> u32 + Send + Sync>,
    },
}

/// Words made or compared a piece at a time: 4 MiB.
pub(crate) const PIECE_WORDS: usize = 1 << 20;

impl Words {
    /// `len` words, word `i` being `word(i)`.
    pub fn made(len: usize, word: impl Fn(usize) -> u32 + Send + Sync + 'static) -> Self {
        Words::Made {
            len,
            word: Arc::new(word),
        }
    }

    /// How many words.
    pub fn len(&self) -> usize {
        match self {
            Words::Held(words) => words.len(),
            Words::Made { len, .. } => *len,
        }
    }

    /// Whether there are no words.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Word `i`.
    pub fn get(&self, i: usize) -> u32 {
        match self {
            Words::Held(words) => words[i],
            Words::Made { word, .. } => word(i),
        }
    }

    /// The words of `range`: borrowed where held, made (on all cores) where not.
    pub fn piece(&self, range: Range<usize>) -> Cow<'_, [u32]> {
        match self {
            Words::Held(words) => Cow::Borrowed(&words[range]),
            Words::Made { word, .. } => {
                Cow::Owned(range.into_par_iter().map(|i| word(i)).collect())
            }
        }
    }

    /// Writes the words from `start` on into `out`, on all cores: into pinned memory or
    /// a scratch kept from piece to piece, where a piece of its own would be fresh memory
    /// (a run's page faults doubled when it was: docs/method.md).
    pub(crate) fn fill(&self, start: usize, out: &mut [u32]) {
        const PART: usize = 1 << 16;
        match self {
            Words::Held(words) => {
                let from = &words[start..start + out.len()];
                out.par_chunks_mut(PART)
                    .zip(from.par_chunks(PART))
                    .for_each(|(to, from)| to.copy_from_slice(from))
            }
            Words::Made { word, .. } => {
                out.par_chunks_mut(PART)
                    .enumerate()
                    .for_each(|(part, chunk)| {
                        let first = start + part * PART;
                        for (i, to) in chunk.iter_mut().enumerate() {
                            *to = word(first + i);
                        }
                    })
            }
        }
    }

    /// Every word, borrowed where held: for what needs them all at once.
    pub fn whole(&self) -> Cow<'_, [u32]> {
        self.piece(0..self.len())
    }

    /// Bytes held in memory: none where made.
    #[cfg(test)]
    pub(crate) fn held_bytes(&self) -> u64 {
        self.held().map_or(0, |words| 4 * words.len() as u64)
    }

    /// The words held, where they are.
    pub fn held(&self) -> Option<&[u32]> {
        match self {
            Words::Held(words) => Some(words),
            Words::Made { .. } => None,
        }
    }

    /// `fold` of each block of `block` words (the last may be shorter), on all cores,
    /// without holding more than one block per core.
    pub(crate) fn block_folds<T: Send>(
        &self,
        block: usize,
        fold: impl Fn(&[u32]) -> T + Send + Sync,
    ) -> Vec<T> {
        let block = block.max(1);
        (0..self.len().div_ceil(block))
            .into_par_iter()
            .map(|b| fold(&self.piece_sequential(b * block..((b + 1) * block).min(self.len()))))
            .collect()
    }

    /// [`Words::piece`] on the calling thread alone: inside an iterator already parallel.
    fn piece_sequential(&self, range: Range<usize>) -> Cow<'_, [u32]> {
        match self {
            Words::Held(words) => Cow::Borrowed(&words[range]),
            Words::Made { word, .. } => Cow::Owned(range.map(|i| word(i)).collect()),
        }
    }
}

impl From<Vec<u32>> for Words {
    fn from(words: Vec<u32>) -> Self {
        Words::Held(words)
    }
}

impl std::fmt::Debug for Words {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Words::Held(words) => write!(f, "Words::Held({} words)", words.len()),
            Words::Made { len, .. } => write!(f, "Words::Made({len} words)"),
        }
    }
}

/// The word of [`f32_data`] at index `i` of seed `seed`.
pub(crate) fn f32_word(i: usize, seed: u64) -> u32 {
    // 23 random mantissa bits under the exponent of 1.0.
    0x3F80_0000 | (mix(i, seed) & 0x007F_FFFF) as u32
}

/// [`f32_data`] made piece by piece: never held whole.
pub(crate) fn f32_words(len: usize, seed: u64) -> Words {
    Words::made(len, move |i| f32_word(i, seed))
}

/// Varied, non-zero f32 data in [1, 2), as bit patterns: a cheap integer hash of the index and seed,
/// so no two neighbours are equal and no value is zero, NaN or the poison word.
pub(crate) fn f32_data(len: usize, seed: u64) -> Vec<u32> {
    (0..len)
        .into_par_iter()
        .map(|i| f32_word(i, seed))
        .collect()
}

/// A 64-bit hash of an index and a seed (splitmix64's finaliser): the one source of
/// varied input data in the suite.
pub fn mix(i: usize, seed: u64) -> u64 {
    let mut x = (i as u64) ^ seed.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// The 32-bit words of a `#[repr(C)]` parameter struct, as a uniform buffer holds them.
pub fn words<P: bytemuck::Pod>(params: P) -> Vec<u32> {
    bytemuck::cast_slice(&[params]).to_vec()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suite::POISON;

    #[test]
    fn data_is_varied_and_never_zero_or_poison() {
        let data = f32_data(1 << 17, 7);
        assert!(
            data.iter()
                .all(|&v| (1.0..2.0).contains(&f32::from_bits(v)))
        );
        assert!(data.windows(2).filter(|w| w[0] == w[1]).count() < 4);
        assert!(data.iter().all(|&v| v != POISON));
        assert_ne!(f32_data(16, 1), f32_data(16, 2));
    }

    #[test]
    fn made_words_are_the_held_ones_piece_by_piece() {
        let held = Words::from(f32_data(1000, 3));
        let made = f32_words(1000, 3);
        assert_eq!(made.len(), 1000);
        assert_eq!(made.whole(), held.whole());
        assert_eq!(made.piece(10..20), held.piece(10..20));
        assert_eq!(made.get(999), held.get(999));
        let sums = |w: &Words| w.block_folds(64, |b| b.iter().map(|&x| u64::from(x)).sum::<u64>());
        assert_eq!(sums(&made), sums(&held));
        assert_eq!(sums(&made).len(), 16);
        assert!(made.held().is_none() && held.held().is_some());
    }
}
