//! bank — shared-memory bank conflicts on u32 tiles in workgroup memory.
//!
//! Reproduces the shared-memory experiments of "Professional CUDA C Programming"
//! (chapter 5: `setRowReadRow`, `setColReadCol`, `setRowReadCol`, the dynamic and padded
//! versions, the rectangular tiles) and the classic stride sweep. Workgroup memory has 32
//! banks of 4 bytes; the words one subgroup request touches in one bank are served one
//! after another. The texts expect: a row of a 32-wide tile is conflict-free; a column is
//! a 32-way conflict (16-way on a 32 × 16 tile read in transposed order); one word of
//! padding per row (two on the 32 × 16 tile) removes it; lane l reading word l·s has
//! gcd(s, 32)-way conflicts.
//!
//! Measuring it: each invocation writes one word of the tile, then reads its pattern
//! `r` times (1024 by default) so that workgroup memory, not launch or global memory,
//! takes the time; each read moves the whole subgroup to another column by the same XOR
//! (the banks are permuted, the ways unchanged) and is folded into the result in order,
//! so no read can be hoisted, merged or dropped, and the output, verified bit for bit,
//! depends on every one. Bytes are workgroup-memory bytes (the one write and `r`
//! reads per invocation): the family's GB/s is on-chip throughput, not DRAM bandwidth.

use bytemuck::{Pod, Zeroable};
use rayon::prelude::*;

use crate::params;
use crate::suite::{
    Buffer, Case, CaseData, Expected, Experiment, Family, Grid, Key, Measure, Params, Sizing, Twin,
    f32_data, words,
};

/// Banks of workgroup memory (every current GPU): a tile row is one bank-wide, and the
/// reads' column shifts cycle through this many values.
const BANKS: u32 = 32;

/// Each read is folded as `acc = acc * MIX + value` (wrapping): MIX is odd, so every
/// read's value changes the result. The kernels take it as an override.
pub(super) const MIX: u32 = 0x0100_0193;

/// Invocations of every full-size case of the on-chip families (bank, constant): 16
/// workgroups of 1024 per SM of a 132-SM GPU (H100/H200), which is 8 full waves of 2
/// resident workgroups per SM.
const FULL_INVOCATIONS: u32 = 2112 * 1024;
const SOFTWARE_INVOCATIONS: u32 = 64 * 1024;
const QUICK_INVOCATIONS: u32 = 2 * 1024;

/// Reads per invocation; multiples of [`BANKS`], so that every column shift is read
/// equally often.
const FULL_READS: u32 = 1024;
const SOFTWARE_READS: u32 = 256;
const QUICK_READS: u32 = 32;

#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
struct TileParams {
    r: u32,
    shift_mask: u32,
}

#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
struct StrideParams {
    r: u32,
    shift_mask: u32,
    stride: u32,
}

/// The order in which a workgroup's invocations walk a tile.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Order {
    /// Invocation i touches element i in row-major order: a subgroup is a tile row.
    Rows,
    /// Element i in column-major order: a subgroup walks down one or two columns.
    Columns,
}

/// A tile of `rows` × [`BANKS`] words with `pad` unused words after each row.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Tile {
    rows: u32,
    pad: u32,
    /// The kernel sizes the tile from a `PAD` override (else its WGSL fixes `pad`).
    pad_override: bool,
    write: Order,
    read: Order,
}

/// Which words an invocation writes once and then reads.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Pattern {
    Tile(Tile),
    /// A flat tile of [`STRIDE_WORDS`]: invocation l writes word l and reads word
    /// (l·stride) mod the tile size.
    Stride(u32),
}

/// Words of the stride sweep's tile (and invocations of its workgroup).
const STRIDE_WORDS: u32 = 1024;

impl Tile {
    /// The word of element i in `order`, its column XOR-ed with `shift` (< [`BANKS`]),
    /// as the shaders' `element` and read loop compute it.
    fn word(self, i: u32, order: Order, shift: u32) -> usize {
        let (row, column) = match order {
            Order::Rows => (i / BANKS, i % BANKS),
            Order::Columns => (i % self.rows, i / self.rows),
        };
        (row * (BANKS + self.pad) + (column ^ shift)) as usize
    }
}

impl Pattern {
    /// Invocations of one workgroup: one per tile element.
    fn lanes(self) -> u32 {
        match self {
            Pattern::Tile(tile) => BANKS * tile.rows,
            Pattern::Stride(_) => STRIDE_WORDS,
        }
    }

    fn workgroup_size(self) -> [u32; 3] {
        match self {
            Pattern::Tile(tile) => [BANKS, tile.rows, 1],
            Pattern::Stride(_) => [STRIDE_WORDS, 1, 1],
        }
    }

    fn tile_words(self) -> u32 {
        match self {
            Pattern::Tile(tile) => tile.rows * (BANKS + tile.pad),
            Pattern::Stride(_) => STRIDE_WORDS,
        }
    }

    fn write_word(self, i: u32) -> usize {
        match self {
            Pattern::Tile(tile) => tile.word(i, tile.write, 0),
            Pattern::Stride(_) => i as usize,
        }
    }

    /// The word invocation `i` reads with column shift `shift` (< [`BANKS`]).
    fn read_word(self, i: u32, shift: u32) -> usize {
        match self {
            Pattern::Tile(tile) => tile.word(i, tile.read, shift),
            Pattern::Stride(stride) => ((i * stride % STRIDE_WORDS) ^ shift) as usize,
        }
    }

    fn overrides(self) -> Vec<(&'static str, f64)> {
        let mut overrides = vec![("MIX", f64::from(MIX))];
        match self {
            Pattern::Tile(tile) => {
                overrides.extend([
                    ("ROWS", f64::from(tile.rows)),
                    (
                        "WRITE_COLUMNS",
                        f64::from(u8::from(tile.write == Order::Columns)),
                    ),
                    (
                        "READ_COLUMNS",
                        f64::from(u8::from(tile.read == Order::Columns)),
                    ),
                ]);
                if tile.pad_override {
                    overrides.push(("PAD", f64::from(tile.pad)));
                }
            }
            Pattern::Stride(_) => overrides.push(("WORDS", f64::from(STRIDE_WORDS))),
        }
        overrides
    }

    fn uniform(self, r: u32) -> Vec<u32> {
        let shift_mask = BANKS - 1;
        match self {
            Pattern::Tile(_) => words(TileParams { r, shift_mask }),
            Pattern::Stride(stride) => words(StrideParams {
                r,
                shift_mask,
                stride,
            }),
        }
    }
}

/// `acc = acc * MIX + read(k)` for k = 0..r (wrapping), as the on-chip kernels fold
/// their reads, where read k only depends on k mod `period`: computed a period at a
/// time, so that the reference of a million invocations of 1024 reads takes
/// milliseconds.
pub(super) fn fold_periodic(r: u32, period: u32, read: impl Fn(u32) -> u32) -> u32 {
    let step = |acc: u32, k: u32| acc.wrapping_mul(MIX).wrapping_add(read(k));
    let cycle = (0..period).fold(0u32, step);
    let mix_cycle = MIX.wrapping_pow(period);
    let whole = (0..r / period).fold(0u32, |acc, _| {
        acc.wrapping_mul(mix_cycle).wrapping_add(cycle)
    });
    (0..r % period).fold(whole, step)
}

/// A 32-wide tile of `rows` rows with `pad` words of padding.
const fn tile(rows: u32, pad: u32, pad_override: bool, write: Order, read: Order) -> Pattern {
    Pattern::Tile(Tile {
        rows,
        pad,
        pad_override,
        write,
        read,
    })
}

/// An experiment of the family on one tile pattern. Its twin is `bank_tile`, with
/// dynamic shared memory where the WGSL sizes the tile by overrides.
macro_rules! tile_experiment {
    ($variant:literal, $kernel:literal, $pattern:expr) => {
        Experiment {
            family: Family::Bank,
            variant: $variant,
            kernel: Some($kernel),
            measure: Measure::Kernel,
            cases: |sizing| vec![case(sizing, $pattern, Params::new())],
            twin: match $pattern {
                Pattern::Tile(Tile {
                    pad_override: true, ..
                }) => Twin::cuda_dynamic_shared("bank_tile"),
                _ => Twin::cuda("bank_tile"),
            },
        }
    };
}

use Order::{Columns, Rows};

/// The family's experiments, in the order runs and reports show them.
pub const EXPERIMENTS: &[Experiment] = &[
    ROW_ROW,
    COL_COL,
    ROW_COL,
    ROW_COL_OVERRIDE,
    ROW_COL_PAD,
    ROW_COL_OVERRIDE_PAD,
    RECT_ROW_ROW,
    RECT_ROW_COL,
    RECT_ROW_COL_PAD,
    STRIDE,
];

/// Write and read a 32 x 32 tile by rows: every lane its own bank, 1 way.
pub(crate) const ROW_ROW: Experiment =
    tile_experiment!("row_row", "bank_row_col", tile(32, 0, false, Rows, Rows));

/// Write and read a 32 x 32 tile by columns: all lanes in one bank, 32 ways.
pub(crate) const COL_COL: Experiment = tile_experiment!(
    "col_col",
    "bank_row_col",
    tile(32, 0, false, Columns, Columns)
);

/// Write a 32 x 32 tile by rows, read it by columns: the reads are a 32-way conflict.
pub(crate) const ROW_COL: Experiment =
    tile_experiment!("row_col", "bank_row_col", tile(32, 0, false, Rows, Columns));

/// `row_col` on a 1-D override-sized tile with computed indices (dynamic shared
/// memory).
pub(crate) const ROW_COL_OVERRIDE: Experiment = tile_experiment!(
    "row_col_override",
    "bank_row_col_override",
    tile(32, 0, true, Rows, Columns)
);

/// `row_col` with one word of padding per row: the column read is conflict-free.
pub(crate) const ROW_COL_PAD: Experiment = tile_experiment!(
    "row_col_pad",
    "bank_row_col_pad",
    tile(32, 1, false, Rows, Columns)
);

/// `row_col_override` padded by one word per row.
pub(crate) const ROW_COL_OVERRIDE_PAD: Experiment = tile_experiment!(
    "row_col_override_pad",
    "bank_row_col_override",
    tile(32, 1, true, Rows, Columns)
);

/// Write and read a 32-wide x 16-high tile by rows: 1 way.
pub(crate) const RECT_ROW_ROW: Experiment = tile_experiment!(
    "rect_row_row",
    "bank_row_col",
    tile(16, 0, false, Rows, Rows)
);

/// Write a 32 x 16 tile by rows, read it in transposed order: a subgroup's reads fall
/// in 2 banks, a 16-way conflict.
pub(crate) const RECT_ROW_COL: Experiment = tile_experiment!(
    "rect_row_col",
    "bank_row_col",
    tile(16, 0, false, Rows, Columns)
);

/// `rect_row_col` with two words of padding per row.
pub(crate) const RECT_ROW_COL_PAD: Experiment = tile_experiment!(
    "rect_row_col_pad",
    "bank_rect_row_col_pad",
    tile(16, 2, false, Rows, Columns)
);

/// Lane l reads word l*s of a 1024-word tile, s = 0 to 32: gcd(s, 32)-way conflicts, so
/// the time grows with the largest power of two dividing s; s = 0 (one word for all
/// lanes) is a broadcast.
pub(crate) const STRIDE: Experiment = Experiment {
    family: Family::Bank,
    variant: "stride",
    kernel: Some("bank_stride"),
    measure: Measure::Kernel,
    twin: Twin::cuda("bank_stride"),
    cases: stride_cases,
};

/// Largest stride of the sweep.
const MAX_STRIDE: u32 = 32;

/// Stride 0 is the broadcast: every lane reads the same word.
fn stride_cases(sizing: &Sizing) -> Vec<Case> {
    (0..=MAX_STRIDE)
        .map(|stride| case(sizing, Pattern::Stride(stride), params!(Stride => stride)))
        .collect()
}

/// Invocations and reads per invocation of an on-chip case on this device.
pub(super) fn on_chip_size(sizing: &Sizing) -> (u32, u32) {
    if sizing.quick {
        (QUICK_INVOCATIONS, QUICK_READS)
    } else if sizing.software {
        (SOFTWARE_INVOCATIONS, SOFTWARE_READS)
    } else {
        (FULL_INVOCATIONS, FULL_READS)
    }
}

/// The case of `pattern`; its params are `params` then `r=R`.
fn case(sizing: &Sizing, pattern: Pattern, params: Params) -> Case {
    let (invocations, r) = on_chip_size(sizing);
    let lanes = pattern.lanes();
    let words = invocations as usize;
    // One write and r reads of a 4-byte word per invocation.
    let accesses = u64::from(invocations) * (u64::from(r) + 1);
    Case::builder(sizing, params.with(Key::Repeats, r))
        .workgroup(pattern.workgroup_size(), 4 * pattern.tile_words())
        .grid(Grid::OneD, u64::from(invocations / lanes))
        .constants(pattern.overrides())
        .moves(accesses, 4 * accesses)
        .buffers(vec![
            Buffer::Uniform(pattern.uniform(r)),
            Buffer::Input(words),
            Buffer::Output(words),
        ])
        .data(move || {
            let src = f32_data(words, 11);
            let expected = reference(pattern, r, &src);
            CaseData {
                inputs: vec![src.into()],
                expected: vec![Expected::Exact(expected.into())],
            }
        })
}

/// What every invocation writes: the fold of its `r` reads of its workgroup's tile,
/// which invocation i filled with `src` at its write word.
#[expect(
    clippy::cast_possible_truncation,
    reason = "`i` counts one workgroup's lanes, fewer than `pattern.lanes()`, a u32"
)]
fn reference(pattern: Pattern, r: u32, src: &[u32]) -> Vec<u32> {
    let lanes = pattern.lanes() as usize;
    let workgroups: Vec<&[u32]> = src.chunks(lanes).collect();
    let tiles: Vec<Vec<u32>> = workgroups
        .iter()
        .map(|values| {
            let mut tile = vec![0u32; pattern.tile_words() as usize];
            for (i, &value) in values.iter().enumerate() {
                tile[pattern.write_word(i as u32)] = value;
            }
            tile
        })
        .collect();
    (0..src.len())
        .into_par_iter()
        .map(|g| {
            let tile = &tiles[g / lanes];
            let i = (g % lanes) as u32;
            fold_periodic(r, BANKS, |k| tile[pattern.read_word(i, k)])
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The same fold, one read at a time, as the shaders run it.
    fn fold_literally(r: u32, read: impl Fn(u32) -> u32) -> u32 {
        (0..r).fold(0u32, |acc, k| {
            acc.wrapping_mul(MIX).wrapping_add(read(k & (BANKS - 1)))
        })
    }

    #[test]
    fn fold_by_periods_is_the_literal_fold_and_depends_on_every_read() {
        let value = |k: u32| k.wrapping_mul(2_654_435_761) | 1;
        for r in [0, 5, 32, 96, 1024] {
            assert_eq!(
                fold_periodic(r, BANKS, value),
                fold_literally(r, value),
                "r={r}"
            );
        }
        assert_eq!(
            fold_periodic(40, 256, |k| value(k % 32)),
            fold_literally(40, value)
        );
        // Changing any one read changes the result (MIX is odd, so the fold is a
        // bijection of each read's value).
        let base = fold_literally(96, value);
        for changed in 0..96 {
            let reads: Vec<u32> = (0..96)
                .map(|k| value(k & 31) ^ u32::from(k == changed))
                .collect();
            let folded = reads
                .iter()
                .fold(0u32, |acc, &v| acc.wrapping_mul(MIX).wrapping_add(v));
            assert_ne!(folded, base, "read {changed}");
        }
    }

    /// Ways of one 32-lane request: the most distinct words in one bank.
    fn ways(words: impl Iterator<Item = usize>) -> usize {
        let mut per_bank = vec![std::collections::BTreeSet::new(); BANKS as usize];
        for w in words {
            per_bank[w % BANKS as usize].insert(w);
        }
        per_bank.iter().map(|s| s.len()).max().unwrap_or(0)
    }

    #[test]
    fn patterns_have_the_classic_conflicts_for_every_shift() {
        let gcd = |mut a: u32, mut b: u32| {
            while b != 0 {
                (a, b) = (b, a % b);
            }
            a
        };
        let cases = [
            (tile(32, 0, false, Rows, Rows), 1),
            (tile(32, 0, false, Columns, Columns), 32),
            (tile(32, 0, false, Rows, Columns), 32),
            (tile(32, 1, false, Rows, Columns), 1),
            (tile(16, 0, false, Rows, Rows), 1),
            (tile(16, 0, false, Rows, Columns), 16),
            (tile(16, 2, false, Rows, Columns), 1),
        ]
        .into_iter()
        .chain([(Pattern::Stride(0), 1)])
        .chain((1..=32).map(|s| (Pattern::Stride(s), gcd(s, 32) as usize)));
        for (pattern, want) in cases {
            for subgroup in 0..pattern.lanes() / BANKS {
                let lanes = subgroup * BANKS..(subgroup + 1) * BANKS;
                for shift in 0..BANKS {
                    let got = ways(lanes.clone().map(|i| pattern.read_word(i, shift)));
                    assert_eq!(got, want, "{pattern:?} subgroup {subgroup} shift {shift}");
                }
            }
            // The writes fill the tile's elements, each once.
            let mut written: Vec<usize> = (0..pattern.lanes())
                .map(|i| pattern.write_word(i))
                .collect();
            written.sort_unstable();
            written.dedup();
            assert_eq!(written.len(), pattern.lanes() as usize, "{pattern:?}");
            assert!(written.iter().all(|&w| w < pattern.tile_words() as usize));
        }
    }

    #[test]
    fn cases_count_workgroup_bytes_and_skip_what_the_limits_forbid() {
        let sizing = Sizing::nominal(false);
        let [case] = &(ROW_COL.cases)(&sizing)[..] else {
            panic!("one case");
        };
        assert_eq!(case.params.to_string(), "r=1024");
        assert_eq!(case.workgroups, [2112, 1, 1]);
        assert_eq!(case.bytes, 4 * 2112 * 1024 * 1025);
        let rect = (RECT_ROW_COL.cases)(&sizing);
        assert_eq!(rect[0].workgroups, [4224, 1, 1]);
        let strides = (STRIDE.cases)(&sizing);
        assert_eq!(strides.len(), 33);
        assert_eq!(strides[3].params.to_string(), "stride=3;r=1024");
        let small = Sizing {
            max_workgroup_invocations: 512,
            ..sizing
        };
        assert!((ROW_COL.cases)(&small)[0].skip.is_some());
        assert!((RECT_ROW_COL.cases)(&small)[0].skip.is_none());
    }

    #[test]
    fn reference_of_a_tiny_row_col_reads_the_transposed_tile() {
        // r = 32 reads every column shift once: lane i of row_col reads row i % 32 of
        // the tile, which holds src[32 * (i % 32) ..][..32], in the order col ^ shift.
        let src: Vec<u32> = (0..1024u32).map(|v| v * 7 + 1).collect();
        let out = reference(tile(32, 0, false, Rows, Columns), 32, &src);
        for i in [0u32, 5, 33, 1023] {
            let (row, column) = (i % 32, i / 32);
            let literal = fold_literally(32, |shift| src[(row * 32 + (column ^ shift)) as usize]);
            assert_eq!(out[i as usize], literal, "lane {i}");
        }
    }
}
