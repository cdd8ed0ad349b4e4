//! transpose — an nx × ny f32 matrix, the classic sequence of the CUDA texts.
//!
//! The row and column copies bound it from above and below; the naive transposes read
//! rows and write columns or the reverse; unrolling puts four elements per invocation
//! in flight; the diagonal remap spreads concurrent workgroups over DRAM partitions;
//! the tile kernels stage a block in workgroup memory so that both the read and the
//! write are coalesced, with and without padding against bank conflicts (one word per
//! row for tiles 32 rows tall, `32 / rows` words for shorter ones: see [`pad_words`]).
//! `naive_col` and `smem_pad` are also swept over workgroup shapes, and `smem_pad`
//! over rows per invocation (several loads in flight, as fast native transposes do).
//! `naive_texture` is `naive_col` with its column reads through the texture path (an
//! `r32float` 2-D texture read with `textureLoad`; CUDA: a texel fetch from a texture object),
//! at the same sizes and blocks, so that each of its rows has a `naive_col` row beside
//! it (docs/texture.md).
//!
//! Every case's param names the matrix (`size=NXxNY`) and the workgroup
//! (`block=WxH`); `rows=R` appears where an invocation moves R tile rows.

use bytemuck::{Pod, Zeroable};

use crate::params;
use crate::suite::{
    Buffer, Case, CaseData, Expected, Experiment, Family, Measure, Sizing, Twin, Words, f32_word,
    f32_words,
};

/// The workgroup of every variant outside the sweeps.
const DEFAULT_BLOCK: (u32, u32) = (32, 16);
/// The block sweep of the texts: square, then thinner and wider blocks.
const SWEEP_BLOCKS: [(u32, u32); 6] = [(32, 32), (32, 16), (32, 8), (64, 16), (64, 8), (128, 8)];
/// Rows per invocation tried for `smem_pad`, on 32 × 8 workgroups (tiles 32 × 8R).
const SWEEP_ROWS: [u32; 2] = [2, 4];
/// The workgroup of `smem_pad_vec4` outside its sweep: 8 vec4s across a 32-wide tile,
/// 32 rows, one vec4 in and out per invocation; the fastest on an H100 (docs/findings.md,
/// The padded tile reaches the row copy only without the checks).
const VEC4_BLOCK: (u32, u32) = (8, 32);

/// The classic size, and a larger one whose 256 MiB matrices leave every cache behind.
const FULL_SIZES: [(u32, u32); 2] = [(4096, 4096), (8192, 8192)];
/// Software adapters move about 1 GB/s: one small matrix shows that the suite runs.
const SOFTWARE_SIZES: [(u32, u32); 1] = [(1024, 1024)];
/// Neither square nor a multiple of any tile: every edge path is verified.
/// (A multiple of 4, so the vec4 variant runs too.)
const QUICK_SIZES: [(u32, u32); 1] = [(332, 200)];

#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
struct Params {
    nx: u32,
    ny: u32,
}

/// How a variant maps invocations to elements.
#[derive(Clone, Copy, Debug)]
enum Method {
    /// `transpose_naive`: one read and one write per element, no tile;
    /// `transpose_naive_texture` where the input is a texture.
    Direct {
        read_rows: bool,
        write_rows: bool,
        unroll: u32,
        diagonal: bool,
        texture: bool,
    },
    /// `transpose_tile`: through a tile of workgroup memory; `tiles_x` tiles side by
    /// side per workgroup, rows padded or not (see [`pad_words`]).
    Tile { tiles_x: u32, padded: bool },
    /// `transpose_tile_vec4`: a padded 32 x 32 tile filled and drained with vec4s.
    TileVec4,
}

impl Method {
    const fn direct(read_rows: bool, write_rows: bool, unroll: u32, diagonal: bool) -> Method {
        Method::Direct {
            read_rows,
            write_rows,
            unroll,
            diagonal,
            texture: false,
        }
    }

    /// The same direct method, its input read through a texture.
    const fn through_texture(self) -> Method {
        match self {
            Method::Direct {
                read_rows,
                write_rows,
                unroll,
                diagonal,
                ..
            } => Method::Direct {
                read_rows,
                write_rows,
                unroll,
                diagonal,
                texture: true,
            },
            other => other,
        }
    }

    /// What the output holds in terms of the input.
    fn output(self) -> Output {
        match self {
            Method::Direct {
                read_rows,
                write_rows,
                ..
            } if read_rows == write_rows => Output::Copy,
            Method::Direct {
                read_rows: false, ..
            } => Output::TransposeOfColumns,
            Method::Direct { .. } | Method::Tile { .. } | Method::TileVec4 => {
                Output::TransposeOfRows
            }
        }
    }
}

/// The output of a variant, in terms of its input.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Output {
    Copy,
    /// The input is ny rows of nx: `out[ix*ny + iy] = in[iy*nx + ix]`.
    TransposeOfRows,
    /// The input is nx rows of ny (read by columns): `out[iy*nx + ix] = in[ix*ny + iy]`.
    TransposeOfColumns,
}

/// A transpose experiment; its CUDA twin is the file of the same name as its kernel.
const fn declare(
    variant: &'static str,
    kernel: &'static str,
    cases: fn(&Sizing) -> Vec<Case>,
) -> Experiment {
    Experiment {
        family: Family::Transpose,
        variant,
        kernel: Some(kernel),
        cases,
        measure: Measure::Kernel,
        twin: Twin::cuda(kernel),
    }
}

const NAIVE: &str = "transpose_naive";
const NAIVE_TEXTURE_KERNEL: &str = "transpose_naive_texture";
const TILE: &str = "transpose_tile";
const TILE_VEC4: &str = "transpose_tile_vec4";

/// The family's experiments, in the order runs and reports show them.
pub const EXPERIMENTS: &[Experiment] = &[
    COPY_ROW,
    COPY_COL,
    NAIVE_ROW,
    NAIVE_COL,
    NAIVE_TEXTURE,
    NAIVE_ROW_UNROLL4,
    NAIVE_COL_UNROLL4,
    DIAGONAL_ROW,
    DIAGONAL_COL,
    SMEM,
    SMEM_PAD,
    SMEM_UNROLL_PAD,
    SMEM_PAD_VEC4,
];

/// Rows read and rows written, both coalesced: the upper bound of every transpose.
pub(crate) const COPY_ROW: Experiment = declare("copy_row", NAIVE, |s| {
    cases(s, Method::direct(true, true, 1, false), Sweep::None)
});
/// Columns read and columns written, neither coalesced: the lower bound.
pub(crate) const COPY_COL: Experiment = declare("copy_col", NAIVE, |s| {
    cases(s, Method::direct(false, false, 1, false), Sweep::None)
});
/// Reads rows, writes columns.
pub(crate) const NAIVE_ROW: Experiment = declare("naive_row", NAIVE, |s| {
    cases(s, Method::direct(true, false, 1, false), Sweep::None)
});
/// Reads columns, writes rows; also swept over workgroup shapes at the largest size.
pub(crate) const NAIVE_COL: Experiment = declare("naive_col", NAIVE, |s| {
    cases(s, Method::direct(false, true, 1, false), Sweep::Blocks)
});
/// `naive_col` with its column reads through the texture path: the texts expect the
/// texture cache's 2-D locality to serve the column reads better than storage reads
/// do. Swept over the same blocks as `naive_col`; its twin is `naive_col`'s, its
/// input a texture object.
pub(crate) const NAIVE_TEXTURE: Experiment = Experiment {
    twin: Twin::cuda(NAIVE),
    ..declare("naive_texture", NAIVE_TEXTURE_KERNEL, |s| {
        cases(
            s,
            Method::direct(false, true, 1, false).through_texture(),
            Sweep::Blocks,
        )
    })
};
/// `naive_row` with four elements per invocation in flight.
pub(crate) const NAIVE_ROW_UNROLL4: Experiment = declare("naive_row_unroll4", NAIVE, |s| {
    cases(s, Method::direct(true, false, 4, false), Sweep::None)
});
/// `naive_col` with four elements per invocation in flight.
pub(crate) const NAIVE_COL_UNROLL4: Experiment = declare("naive_col_unroll4", NAIVE, |s| {
    cases(s, Method::direct(false, true, 4, false), Sweep::None)
});
/// `naive_row` with workgroups visited along diagonals, against DRAM partition camping.
pub(crate) const DIAGONAL_ROW: Experiment = declare("diagonal_row", NAIVE, |s| {
    cases(s, Method::direct(true, false, 1, true), Sweep::None)
});
/// `naive_col` with workgroups visited along diagonals, against DRAM partition camping.
pub(crate) const DIAGONAL_COL: Experiment = declare("diagonal_col", NAIVE, |s| {
    cases(s, Method::direct(false, true, 1, true), Sweep::None)
});
/// A tile in workgroup memory makes both the read and the write coalesced, though the
/// tile's column read conflicts on one bank.
pub(crate) const SMEM: Experiment = declare("smem", TILE, |s| {
    cases(
        s,
        Method::Tile {
            tiles_x: 1,
            padded: false,
        },
        Sweep::None,
    )
});
/// `smem` with each tile row padded, which removes the bank conflicts; also swept over
/// workgroup shapes and rows per invocation at the largest size, where the texts expect
/// thinner blocks and several rows per invocation to go faster still.
pub(crate) const SMEM_PAD: Experiment = declare("smem_pad", TILE, |s| {
    cases(
        s,
        Method::Tile {
            tiles_x: 1,
            padded: true,
        },
        Sweep::BlocksAndRows,
    )
});
/// Two padded tiles per workgroup: more loads in flight than `smem_pad`, which the
/// texts expect to be faster.
pub(crate) const SMEM_UNROLL_PAD: Experiment = declare("smem_unroll_pad", TILE, |s| {
    cases(
        s,
        Method::Tile {
            tiles_x: 2,
            padded: true,
        },
        Sweep::None,
    )
});

/// Beyond the classic texts: a padded tile moved in vec4s, 16-byte accesses and several
/// in flight per invocation, expected to approach the vec4 copy.
pub(crate) const SMEM_PAD_VEC4: Experiment = declare("smem_pad_vec4", TILE_VEC4, |s| {
    cases(s, Method::TileVec4, Sweep::Vec4Rows)
});

/// Which workgroup shapes a variant is measured at.
#[derive(Clone, Copy)]
enum Sweep {
    /// The default block only.
    None,
    /// The default block at every size, and every sweep block at the largest size.
    Blocks,
    /// As `Blocks`, and several rows per invocation at the largest size.
    BlocksAndRows,
    /// Workgroups of 8 vec4 columns and 32 rows at every size; 16 and 8 rows (2 and 4
    /// tile rows per invocation) at the largest size.
    Vec4Rows,
}

impl Sweep {
    /// The workgroup measured at every size.
    fn default_block(self) -> (u32, u32) {
        match self {
            Sweep::Vec4Rows => VEC4_BLOCK,
            Sweep::None | Sweep::Blocks | Sweep::BlocksAndRows => DEFAULT_BLOCK,
        }
    }

    /// The shapes measured at the largest size only.
    fn extra(self) -> Vec<Shape> {
        let blocks = |blocks: &[(u32, u32)]| -> Vec<Shape> {
            let others = blocks.iter().filter(|&&b| b != self.default_block());
            others.map(|&block| Shape { block, rows: 1 }).collect()
        };
        match self {
            Sweep::None => Vec::new(),
            Sweep::Blocks => blocks(&SWEEP_BLOCKS),
            Sweep::BlocksAndRows => {
                let rows = SWEEP_ROWS.map(|rows| Shape {
                    block: (32, 8),
                    rows,
                });
                [blocks(&SWEEP_BLOCKS), rows.to_vec()].concat()
            }
            Sweep::Vec4Rows => blocks(&[(8, 16), (8, 8)]),
        }
    }
}

/// The matrices a run measures: `--size`, or the defaults for the adapter.
fn sizes(sizing: &Sizing) -> Vec<(u32, u32)> {
    match sizing.matrix {
        Some(size) => vec![size],
        None if sizing.quick => QUICK_SIZES.to_vec(),
        None if sizing.software => SOFTWARE_SIZES.to_vec(),
        None => FULL_SIZES.to_vec(),
    }
}

/// One launch shape: workgroup `block`, `rows` tile rows per invocation.
#[derive(Clone, Copy)]
struct Shape {
    block: (u32, u32),
    rows: u32,
}

fn cases(sizing: &Sizing, method: Method, sweep: Sweep) -> Vec<Case> {
    let sizes = sizes(sizing);
    let Some(&largest) = sizes.last() else {
        return Vec::new();
    };
    let default = Shape {
        block: sweep.default_block(),
        rows: 1,
    };
    let mut shapes: Vec<((u32, u32), Shape)> = sizes.iter().map(|&size| (size, default)).collect();
    shapes.extend(sweep.extra().into_iter().map(|shape| (largest, shape)));
    shapes
        .into_iter()
        .map(|(size, shape)| case(sizing, method, size, shape))
        .collect()
}

fn case(sizing: &Sizing, method: Method, (nx, ny): (u32, u32), shape: Shape) -> Case {
    let (wg_x, wg_y) = shape.block;
    let mut params = params!(Size => (nx, ny), Block => (wg_x, wg_y));
    if shape.rows > 1 {
        params = params.with(crate::suite::Key::Rows, shape.rows);
    }
    let mut overrides = vec![("WG_Y", f64::from(wg_y))];
    let mut skip = None;
    let (per_x, per_y, tile_bytes) = match method {
        Method::Direct {
            read_rows,
            write_rows,
            unroll,
            diagonal,
            texture: _,
        } => {
            overrides.extend([
                ("WG_X", f64::from(wg_x)),
                ("READ_ROWS", f64::from(u8::from(read_rows))),
                ("WRITE_ROWS", f64::from(u8::from(write_rows))),
                ("UNROLL", f64::from(unroll)),
                ("DIAGONAL", f64::from(u8::from(diagonal))),
            ]);
            (wg_x * unroll, wg_y, 0)
        }
        Method::Tile { tiles_x, padded } => {
            let (tile_x, tile_y) = (wg_x * tiles_x, wg_y * shape.rows);
            let pad = if padded { pad_words(tile_y) } else { 0 };
            let words = tile_y * (tile_x + pad);
            overrides.extend([
                ("WG_X", f64::from(wg_x)),
                ("TILES_X", f64::from(tiles_x)),
                ("ROWS", f64::from(shape.rows)),
                ("PAD", f64::from(pad)),
                ("TILE_WORDS", f64::from(words)),
            ]);
            (tile_x, tile_y, 4 * words)
        }
        Method::TileVec4 => {
            if nx % 4 != 0 || ny % 4 != 0 {
                skip = Some(format!(
                    "vec4 rows need both sides a multiple of 4, not {nx}x{ny}"
                ));
            }
            (32, 32, 4 * 32 * 33)
        }
    };
    let elements = u64::from(nx) * u64::from(ny);
    let words = crate::host_len(elements);
    let workgroups = [nx.div_ceil(per_x), ny.div_ceil(per_y), 1];
    let max = sizing.max_workgroups_per_dimension;
    let output = method.output();
    let input = match method {
        // Rows of the input as read: nx wide when reading rows, else ny wide.
        Method::Direct {
            texture: true,
            read_rows,
            ..
        } => {
            let (width, height) = if read_rows { (nx, ny) } else { (ny, nx) };
            Buffer::Texture { width, height }
        }
        _ => Buffer::Input(words),
    };
    let texture = match input {
        Buffer::Texture { width, height } => Some((width, height)),
        _ => None,
    };
    Case::builder(sizing, params)
        .constants(overrides)
        .skip_if(skip)
        .workgroup([wg_x, wg_y, 1], tile_bytes)
        .skip_if((4 * elements > sizing.max_binding_bytes).then(|| {
            format!(
                "a {nx}x{ny} f32 matrix exceeds the adapter's {} MiB binding limit",
                sizing.max_binding_bytes >> 20
            )
        }))
        .skip_if((workgroups[0] > max || workgroups[1] > max).then(|| {
            format!(
                "a grid of {}x{} workgroups exceeds the limit of {max} per dimension",
                workgroups[0], workgroups[1]
            )
        }))
        .skip_if(texture.and_then(|(width, height)| sizing.texture_skip(width, height)))
        .workgroups(workgroups)
        .moves(elements, 2 * 4 * elements)
        .buffers(vec![
            Buffer::uniform(Params { nx, ny }),
            input,
            Buffer::Output(words),
        ])
        .data(move || {
            let (nx, ny) = (nx as usize, ny as usize);
            let expected = move |k| f32_word(source(k, nx, ny, output), SEED);
            CaseData {
                inputs: vec![f32_words(words, SEED)],
                expected: vec![Expected::Exact(Words::made(words, expected))],
            }
        })
}

/// Seed of the input matrix's values.
const SEED: u64 = 4;

/// Padding per tile row that makes the tile's column read conflict-free on 32 banks.
///
/// A subgroup of 32 reads `32 / tile_y` output rows of `tile_y` elements: lane
/// (q, c) reads word `c * (tile_x + pad) + r + q`, on bank `(c * pad + r + q) % 32`
/// for a `tile_x` that is a multiple of 32. One word suffices for tiles 32 or more rows
/// tall; shorter tiles need `32 / tile_y` words (2 for the default 32 x 16).
fn pad_words(tile_y: u32) -> u32 {
    (32 / tile_y).max(1)
}

/// The input word a variant writes to output word `k` of an `nx` × `ny` matrix.
fn source(k: usize, nx: usize, ny: usize, output: Output) -> usize {
    // Transposing an r x c matrix: out[j*r + i] = in[i*c + j].
    let (r, c) = match output {
        Output::Copy => return k,
        Output::TransposeOfRows => (ny, nx),
        Output::TransposeOfColumns => (nx, ny),
    };
    (k % r) * c + k / r
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The CPU result of a variant on `src`.
    fn reference(src: &[u32], nx: usize, ny: usize, output: Output) -> Vec<u32> {
        (0..src.len())
            .map(|k| src[source(k, nx, ny, output)])
            .collect()
    }

    #[test]
    fn reference_transposes_a_small_non_square_matrix() {
        // 3 columns, 2 rows: [[0 1 2] [3 4 5]].
        let src: Vec<u32> = (0..6).collect();
        assert_eq!(
            reference(&src, 3, 2, Output::TransposeOfRows),
            [0, 3, 1, 4, 2, 5]
        );
        // Read by columns, the same words are 3 rows of 2: [[0 1] [2 3] [4 5]].
        assert_eq!(
            reference(&src, 3, 2, Output::TransposeOfColumns),
            [0, 2, 4, 1, 3, 5]
        );
        assert_eq!(reference(&src, 3, 2, Output::Copy), src);
    }

    #[test]
    fn sweeps_cover_the_blocks_at_the_largest_size() {
        let sizing = Sizing::nominal(false);
        let params: Vec<String> = (NAIVE_COL.cases)(&sizing)
            .into_iter()
            .map(|c| c.params.to_string())
            .collect();
        assert_eq!(params.len(), FULL_SIZES.len() + SWEEP_BLOCKS.len() - 1);
        for (w, h) in SWEEP_BLOCKS {
            assert!(
                params.contains(&format!("size=8192x8192;block={w}x{h}")),
                "{params:?}"
            );
        }
        let smem_pad = (SMEM_PAD.cases)(&sizing);
        assert!(
            smem_pad
                .iter()
                .any(|c| c.params.to_string() == "size=8192x8192;block=32x8;rows=4")
        );
        assert_eq!((COPY_ROW.cases)(&sizing).len(), FULL_SIZES.len());
    }

    #[test]
    fn what_the_adapter_cannot_run_is_skipped_with_the_reason() {
        let mut sizing = Sizing::nominal(false);
        sizing.max_binding_bytes = 128 << 20;
        for case in (SMEM_PAD.cases)(&sizing) {
            let reason = case.skip.unwrap_or_default();
            if case.params.to_string().starts_with("size=8192x8192") {
                assert!(
                    reason.contains("binding limit"),
                    "{}: {reason}",
                    case.params
                );
            } else {
                assert!(reason.is_empty(), "{}: {reason}", case.params);
            }
        }
        sizing.max_binding_bytes = 2 << 30;
        sizing.max_workgroup_invocations = 256;
        let big = (NAIVE_COL.cases)(&sizing)
            .into_iter()
            .find(|c| c.params.to_string().ends_with("block=32x32"))
            .and_then(|c| c.skip);
        assert!(big.is_some_and(|r| r.contains("1024 exceeds the adapter's 256")));
    }

    #[test]
    fn the_texture_transpose_has_naive_cols_cases_and_reads_columns_as_rows() {
        let sizing = Sizing::nominal(false);
        let params = |e: &Experiment| -> Vec<String> {
            (e.cases)(&sizing)
                .iter()
                .map(|c| c.params.to_string())
                .collect()
        };
        assert_eq!(params(&NAIVE_TEXTURE), params(&NAIVE_COL));
        let quick = (NAIVE_TEXTURE.cases)(&Sizing::nominal(true));
        let Some(case) = quick.first() else {
            panic!("a quick case");
        };
        // 332 columns of 200: read by columns, the input is 332 rows of 200 texels.
        assert_eq!(
            case.buffers[1],
            Buffer::Texture {
                width: 200,
                height: 332
            }
        );
        assert!(NAIVE_TEXTURE.kernel_for(case).is_ok());
        let small = Sizing {
            max_texture_dimension_2d: 4096,
            ..sizing
        };
        let skips: Vec<Option<String>> = (NAIVE_TEXTURE.cases)(&small)
            .into_iter()
            .map(|c| c.skip)
            .collect();
        assert_eq!(skips[0], None);
        assert_eq!(
            skips[1].as_deref(),
            Some("a 8192x8192 texture exceeds the adapter's largest 2-D texture (4096)")
        );
    }

    #[test]
    fn tile_words_cover_the_padded_tile() {
        let sizing = Sizing::nominal(false);
        for case in (SMEM_UNROLL_PAD.cases)(&sizing) {
            let get = |name| case.overrides.iter().find(|(n, _)| *n == name).map(|o| o.1);
            // Two 32-wide tiles of 16 rows, each row padded by two words.
            assert_eq!(get("TILE_WORDS"), Some(16.0 * 66.0));
        }
    }
}
