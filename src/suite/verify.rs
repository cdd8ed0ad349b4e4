//! Verification: what an output must hold after one dispatch ([`Expected`]), checked
//! whole or piece by piece as it is read back ([`Checker`]), on all cores.

use std::cell::RefCell;
use std::ops::Range;

use rayon::prelude::*;

use super::Words;

/// A verification rule that only the output can complete (e.g. a result that depends
/// on the subgroup size the driver chose): `Ok`, or a one-line account of the failure.
pub(crate) type Rule = Box<dyn Fn(&[u32]) -> Result<(), String> + Send + Sync>;

/// What an output buffer must hold after one dispatch.
pub enum Expected {
    /// Bit for bit, poison included where the kernel must not write.
    Exact(Words),
    /// f32 values (`values` their bits) each within `tolerance` of the reference,
    /// relative to max(1, |reference|): for kernels whose summation order differs from
    /// the CPU's.
    Approx {
        /// The reference.
        values: Words,
        /// The largest relative difference accepted.
        tolerance: f32,
    },
    /// Word `i * stride` equal to `values[i]`, the words between unchecked (a
    /// kernel's scratch space): checked piece by piece, where a [`Rule`] would gather
    /// the whole output first.
    Strided {
        /// Words from one checked word to the next.
        stride: usize,
        /// The reference.
        values: Vec<u32>,
    },
    /// `words` words that `rule` accepts.
    Rule {
        /// The output's length in words.
        words: usize,
        /// What each word must satisfy.
        rule: Rule,
    },
}

impl std::fmt::Debug for Expected {
    // A rule is a closure: only its length prints.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Expected::Exact(values) => f.debug_tuple("Exact").field(values).finish(),
            Expected::Approx { values, tolerance } => f
                .debug_struct("Approx")
                .field("values", values)
                .field("tolerance", tolerance)
                .finish(),
            Expected::Strided { stride, values } => f
                .debug_struct("Strided")
                .field("stride", stride)
                .field("values", values)
                .finish(),
            Expected::Rule { words, .. } => f
                .debug_struct("Rule")
                .field("words", words)
                .finish_non_exhaustive(),
        }
    }
}

impl Expected {
    /// `values` each within `tolerance` (see [`Expected::Approx`]).
    #[cfg(test)]
    pub(crate) fn approx(values: impl IntoIterator<Item = f32>, tolerance: f32) -> Self {
        let bits: Vec<u32> = values.into_iter().map(f32::to_bits).collect();
        Expected::Approx {
            values: bits.into(),
            tolerance,
        }
    }

    /// Bytes of the reference held in memory.
    #[cfg(test)]
    pub(crate) fn held_bytes(&self) -> u64 {
        match self {
            Expected::Exact(words) | Expected::Approx { values: words, .. } => words.held_bytes(),
            Expected::Strided { values, .. } => 4 * values.len() as u64,
            Expected::Rule { .. } => 0,
        }
    }

    pub(crate) fn len_words(&self) -> usize {
        match self {
            Expected::Exact(words) => words.len(),
            Expected::Approx { values, .. } => values.len(),
            Expected::Strided { stride, values } => values.len() * stride,
            Expected::Rule { words, .. } => *words,
        }
    }

    /// `Ok` if `actual` is what was expected, else a one-line account of the first
    /// mismatch and how many 32-bit words differ.
    pub fn check(&self, actual: &[u32]) -> Result<(), String> {
        let mut checker = self.checker();
        checker.feed(actual);
        checker.finish()
    }

    /// A check of an output that arrives in pieces, in order (read back through a
    /// staging buffer smaller than the output).
    pub(crate) fn checker(&self) -> Checker<'_> {
        Checker {
            expected: self,
            seen: 0,
            gathered: Vec::new(),
            differing: 0,
            first: None,
        }
    }
}

thread_local! {
    /// Made reference words of the piece under way, kept from piece to piece and check to
    /// check: with fresh memory for each a run's page faults doubled (docs/method.md).
    static SCRATCH: RefCell<Vec<u32>> = const { RefCell::new(Vec::new()) };
}

/// `work` on [`SCRATCH`], or on a fresh vector where it is in use: a rayon worker
/// waiting inside a check may take up another check on the same thread.
fn with_scratch(work: impl FnOnce(&mut Vec<u32>)) {
    SCRATCH.with(|scratch| match scratch.try_borrow_mut() {
        Ok(mut scratch) => work(&mut scratch),
        Err(_) => work(&mut Vec::new()),
    });
}

/// `words` of `range`: borrowed where held, else made into `scratch`.
fn piece_of<'a>(words: &'a Words, range: Range<usize>, scratch: &'a mut Vec<u32>) -> &'a [u32] {
    match words.held() {
        Some(held) => &held[range],
        None => {
            scratch.resize(range.len(), 0);
            words.fill(range.start, scratch);
            scratch
        }
    }
}

/// [`Expected::check`] of an output fed piece by piece: references are compared
/// piece by piece; a [`Rule`], which needs the whole output, gets it gathered.
#[derive(Debug)]
pub(crate) struct Checker<'a> {
    expected: &'a Expected,
    /// Words fed so far.
    seen: usize,
    gathered: Vec<u32>,
    /// Words that differ from the reference so far, and an account of the first.
    differing: usize,
    first: Option<String>,
}

impl Checker<'_> {
    /// The next `piece` of the output.
    pub(crate) fn feed(&mut self, piece: &[u32]) {
        let offset = self.seen;
        self.seen += piece.len();
        let seen = self.seen;
        let in_reference = |len| offset.min(len)..seen.min(len);
        match self.expected {
            Expected::Exact(expected) => {
                with_scratch(|scratch| {
                    self.count(
                        offset,
                        piece_of(expected, in_reference(expected.len()), scratch),
                        piece,
                        |e, a| e != a,
                        |e, a| format!("expected {e:#010x}, got {a:#010x}{}", never_written(a)),
                    );
                });
            }
            Expected::Approx { values, tolerance } => {
                let tolerance = *tolerance;
                with_scratch(|scratch| {
                    self.count(
                        offset,
                        piece_of(values, in_reference(values.len()), scratch),
                        piece,
                        |e, a| !within(f32::from_bits(a), f32::from_bits(e), tolerance),
                        |e, a| {
                            format!(
                                "expected {}, got {}{}",
                                f32::from_bits(e),
                                f32::from_bits(a),
                                never_written(a)
                            )
                        },
                    );
                });
            }
            Expected::Strided { stride, values } => {
                let stride = *stride;
                let first = offset.next_multiple_of(stride);
                for at in (first..self.seen.min(values.len() * stride)).step_by(stride) {
                    let (e, a) = (values[at / stride], piece[at - offset]);
                    if e != a {
                        self.differing += 1;
                        self.first.get_or_insert_with(|| {
                            format!(
                                "first at word {at}: expected {e:#010x}, got {a:#010x}{}",
                                never_written(a)
                            )
                        });
                    }
                }
            }
            Expected::Rule { .. } => self.gathered.extend_from_slice(piece),
        }
    }

    /// Counts the words of a piece starting at word `offset` that `differs` from
    /// their reference, on all cores, and keeps an `account` of the first.
    fn count<T: Copy + Sync>(
        &mut self,
        offset: usize,
        expected: &[T],
        piece: &[u32],
        differs: impl Fn(T, u32) -> bool + Sync,
        account: impl Fn(T, u32) -> String,
    ) {
        const PART: usize = 1 << 20;
        let parts: Vec<_> = (0..expected.len().div_ceil(PART))
            .into_par_iter()
            .map(|part| {
                let start = part * PART;
                let end = (start + PART).min(expected.len());
                let mut differing = (start..end).filter(|&i| differs(expected[i], piece[i]));
                let first = differing.next();
                (first, first.map_or(0, |_| 1 + differing.count()))
            })
            .collect();
        for (first, count) in parts {
            self.differing += count;
            if let (None, Some(i)) = (&self.first, first) {
                self.first = Some(format!(
                    "first at word {}: {}",
                    offset + i,
                    account(expected[i], piece[i])
                ));
            }
        }
    }

    /// `Ok` if the whole output was what was expected.
    pub(crate) fn finish(self) -> Result<(), String> {
        let expected_words = self.expected.len_words();
        if self.seen != expected_words {
            return Err(format!(
                "output is {} words, expected {expected_words}",
                self.seen
            ));
        }
        match (self.expected, self.first) {
            (Expected::Rule { rule, .. }, _) => rule(&self.gathered),
            (_, None) => Ok(()),
            (Expected::Approx { tolerance, .. }, Some(first)) => Err(format!(
                "{} of {expected_words} values beyond the tolerance {tolerance:e}; {first}",
                self.differing
            )),
            (Expected::Exact(_), Some(first)) => Err(format!(
                "{} of {expected_words} words differ; {first}",
                self.differing
            )),
            (Expected::Strided { stride, values }, Some(first)) => Err(format!(
                "{} of {} words at a stride of {stride} differ; {first}",
                self.differing,
                values.len()
            )),
        }
    }
}

/// Whether `actual` is within `tolerance` of `expected`, relative to max(1, |expected|);
/// a NaN never is.
fn within(actual: f32, expected: f32, tolerance: f32) -> bool {
    (actual - expected).abs() <= tolerance * expected.abs().max(1.0)
}

fn never_written(word: u32) -> &'static str {
    if word == POISON {
        " (never written)"
    } else {
        ""
    }
}

/// The word every output buffer holds before a verification run: never a value any
/// kernel of the suite produces from its inputs (as f32 it is -6.3e18).
pub(crate) const POISON: u32 = 0xDEAD_BEEF;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_check_names_first_mismatch_and_poison() {
        let expected = vec![1u32, 2, 3];
        assert!(
            Expected::Exact(expected.clone().into())
                .check(&expected)
                .is_ok()
        );
        let made = Expected::Exact(Words::made(3, |i| u32::try_from(i).unwrap() + 1));
        assert!(made.check(&expected).is_ok());
        let actual = [1u32, POISON, 4];
        assert!(made.check(&actual).is_err());
        let err = Expected::Exact(expected.into())
            .check(&actual)
            .err()
            .unwrap_or_default();
        assert!(
            err.starts_with("2 of 3 words differ; first at word 1"),
            "{err}"
        );
        assert!(err.contains("never written"), "{err}");
    }

    #[test]
    fn pieces_are_checked_as_the_whole_output() {
        let reference: Vec<u32> = (1..=10).collect();
        let mut actual = reference.clone();
        actual[3] = POISON;
        actual[8] = 0;
        let rule: Rule = Box::new(|words: &[u32]| {
            (words.iter().map(|&w| u64::from(w)).sum::<u64>() == 55)
                .then_some(())
                .ok_or_else(|| "sum".to_owned())
        });
        let expectations = [
            Expected::Exact(reference.clone().into()),
            Expected::approx(reference.iter().map(|&w| w as f32), 0.0),
            Expected::Rule { words: 10, rule },
            Expected::Strided {
                stride: 2,
                values: reference.iter().step_by(2).copied().collect(),
            },
        ];
        let as_f32 =
            |words: &[u32]| -> Vec<u32> { words.iter().map(|&w| (w as f32).to_bits()).collect() };
        for expected in &expectations {
            for output in [reference.clone(), actual.clone(), reference[..9].to_vec()] {
                let output = match expected {
                    Expected::Approx { .. } => as_f32(&output),
                    _ => output,
                };
                let whole = expected.check(&output);
                for piece in [1, 3, 4, 16] {
                    let mut checker = expected.checker();
                    output.chunks(piece).for_each(|p| checker.feed(p));
                    assert_eq!(checker.finish(), whole, "pieces of {piece}");
                }
            }
        }
        let err = expectations[0].check(&actual).err().unwrap_or_default();
        assert!(
            err.starts_with("2 of 10 words differ; first at word 3"),
            "{err}"
        );
        // Word 3 lies between the strided words; word 8 is one of them.
        let err = expectations[3].check(&actual).err().unwrap_or_default();
        assert!(
            err.starts_with("1 of 5 words at a stride of 2 differ; first at word 8"),
            "{err}"
        );
    }

    #[test]
    fn approx_check_is_relative_above_one_and_rejects_nan() {
        let expected = Expected::approx([0.5, 1000.0], 1e-3);
        let bits = |a: f32, b: f32| [a.to_bits(), b.to_bits()];
        assert!(expected.check(&bits(0.5009, 1000.9)).is_ok());
        assert!(expected.check(&bits(0.502, 1000.0)).is_err());
        assert!(expected.check(&bits(0.5, 1001.1)).is_err());
        assert!(expected.check(&bits(f32::NAN, 1000.0)).is_err());
        assert!(expected.check(&[0.5f32.to_bits()]).is_err());
    }
}
