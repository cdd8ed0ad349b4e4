//! hierarchy/staged*: global memory staged into workgroup memory tile by tile, through
//! registers (WGSL and CUDA) or by CUDA's asynchronous copy (`cp.async`).

use rayon::prelude::*;

use super::{DRAM_SEED, Vec4sParams, WORKGROUP, block_sums, random_words, staged_bytes};
use crate::params;
use crate::suite::{
    Buffer, Case, CaseData, Expected, Experiment, Family, Grid, Measure, Sizing, Twin, Words,
};

/// What the asynchronous staging uses that WebGPU has no API for.
const ASYNC_COPY: &str = "an asynchronous global-to-shared copy (cp.async)";

/// Stages the DRAM experiments' buffer (`size=<bytes>`) tile by tile into workgroup
/// memory, 4-byte elements (u32), `stages=1` (load, barrier, sum) or `stages=2` (the
/// next tile loaded while the current one is summed), and sums every element once.
/// Bytes are the bytes read. The synchronous staging the CUDA texts start from;
/// `staged_async_*` is its CUDA twin with `cp.async`.
pub(crate) const STAGED_4: Experiment = staged(
    "staged_4",
    "hierarchy_staged_4",
    staged_4_cases,
    Twin::cuda("hierarchy_staged"),
);
/// `staged_4` with 8-byte elements (vec2<u32>).
pub(crate) const STAGED_8: Experiment = staged(
    "staged_8",
    "hierarchy_staged_8",
    staged_8_cases,
    Twin::cuda("hierarchy_staged"),
);
/// `staged_4` with 16-byte elements (vec4<u32>).
pub(crate) const STAGED_16: Experiment = staged(
    "staged_16",
    "hierarchy_staged_16",
    staged_16_cases,
    Twin::cuda("hierarchy_staged"),
);
/// `staged_4` with the CUDA twin's staging asynchronous (`cp.async.ca`, 4 bytes, one
/// commit group per tile). WebGPU has no asynchronous copy: wgpu skips it, and the
/// simulator predicts it as the synchronous staging (its WGSL is `staged_4`'s).
pub(crate) const STAGED_ASYNC_4: Experiment = staged(
    "staged_async_4",
    "hierarchy_staged_async_4",
    staged_4_cases,
    Twin::cuda_only("hierarchy_staged", ASYNC_COPY),
);
/// `staged_async_4` with 8-byte elements.
pub(crate) const STAGED_ASYNC_8: Experiment = staged(
    "staged_async_8",
    "hierarchy_staged_async_8",
    staged_8_cases,
    Twin::cuda_only("hierarchy_staged", ASYNC_COPY),
);
/// `staged_async_4` with 16-byte elements.
pub(crate) const STAGED_ASYNC_16: Experiment = staged(
    "staged_async_16",
    "hierarchy_staged_async_16",
    staged_16_cases,
    Twin::cuda_only("hierarchy_staged", ASYNC_COPY),
);

/// The staged experiments, synchronous then asynchronous, by element width.
pub(crate) const STAGED: [(&Experiment, &Experiment); 3] = [
    (&STAGED_4, &STAGED_ASYNC_4),
    (&STAGED_8, &STAGED_ASYNC_8),
    (&STAGED_16, &STAGED_ASYNC_16),
];

const fn staged(
    variant: &'static str,
    kernel: &'static str,
    cases: fn(&Sizing) -> Vec<Case>,
    twin: Twin,
) -> Experiment {
    Experiment {
        family: Family::Hierarchy,
        variant,
        kernel: Some(kernel),
        cases,
        measure: Measure::Kernel,
        twin,
    }
}

/// Tiles staged at once by `staged_*`.
const STAGES: [u32; 2] = [1, 2];
/// Tiles per workgroup at least, and workgroups at most, of the staged grid-stride loop.
const STAGED_MIN_TILES: u64 = 8;
const STAGED_WORKGROUPS: u64 = 4096;

fn staged_4_cases(sizing: &Sizing) -> Vec<Case> {
    staged_cases(sizing, 4)
}

fn staged_8_cases(sizing: &Sizing) -> Vec<Case> {
    staged_cases(sizing, 8)
}

fn staged_16_cases(sizing: &Sizing) -> Vec<Case> {
    staged_cases(sizing, 16)
}

/// The staged cases of elements of `element_bytes`: the DRAM buffer, one case per
/// number of stages.
#[expect(
    clippy::cast_possible_truncation,
    reason = "`element_bytes` is 4, 8 or 16"
)]
fn staged_cases(sizing: &Sizing, element_bytes: u64) -> Vec<Case> {
    let bytes = staged_bytes(sizing);
    let words = (bytes / 4) as usize;
    let tile_bytes = u64::from(WORKGROUP) * element_bytes;
    let tiles = bytes / tile_bytes;
    let groups = (tiles / STAGED_MIN_TILES).clamp(1, STAGED_WORKGROUPS) as u32;
    STAGES
        .into_iter()
        .map(|stages| {
            let tile_elems = stages * WORKGROUP;
            Case::builder(sizing, params!(Size => bytes, Stages => stages))
                .workgroup(
                    [WORKGROUP, 1, 1],
                    tile_elems * element_bytes as u32 + 4 * WORKGROUP,
                )
                .grid(Grid::OneD, groups.into())
                .constants([
                    ("WORKGROUP_SIZE", f64::from(WORKGROUP)),
                    ("STAGES", f64::from(stages)),
                    ("TILE_ELEMS", f64::from(tile_elems)),
                ])
                .moves(bytes / element_bytes, bytes)
                .buffers(vec![
                    Buffer::uniform(Vec4sParams {
                        vec4s: crate::suite::count(tiles),
                    }),
                    Buffer::Input(words),
                    Buffer::Output(groups as usize),
                ])
                .data(move || {
                    let src = random_words(words, DRAM_SEED);
                    let sums = staged_reference(&src, (tile_bytes / 4) as usize, groups);
                    CaseData {
                        inputs: vec![src],
                        expected: vec![Expected::Exact(sums.into())],
                    }
                })
        })
        .collect()
}

/// Each workgroup's sum: workgroup g sums tiles g, g + groups, … whole, whatever the
/// stages and the order within a tile.
fn staged_reference(src: &Words, tile_words: usize, groups: u32) -> Vec<u32> {
    let mut tiles = block_sums(src, tile_words);
    // A partial tile at the end is not read.
    tiles.truncate(src.len() / tile_words);
    (0..groups as usize)
        .into_par_iter()
        .map(|group| {
            tiles
                .iter()
                .skip(group)
                .step_by(groups as usize)
                .fold(0u32, |sum, &t| sum.wrapping_add(t))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The staged reference sums each workgroup's tiles, whatever the element width.
    #[test]
    fn staged_cases_cover_the_buffer_and_the_reference_sums_each_tile_once() {
        for sizing in [Sizing::nominal(false), Sizing::nominal(true)] {
            for cases in [staged_4_cases(&sizing), staged_16_cases(&sizing)] {
                assert_eq!(cases.len(), STAGES.len());
                for case in &cases {
                    assert_eq!(case.bytes, staged_bytes(&sizing));
                    assert!(case.skip.is_none(), "{}", case.params);
                }
            }
        }
        let src = random_words(256 * 2 * 7, 9);
        let sums = staged_reference(&src, 256 * 2, 3);
        let src = src.whole();
        let whole = src.iter().fold(0u32, |s, &w| s.wrapping_add(w));
        assert_eq!(sums.iter().fold(0u32, |s, &w| s.wrapping_add(w)), whole);
        let first: u32 = (0..3)
            .map(|t| t * 3)
            .flat_map(|t| src[t * 512..(t + 1) * 512].iter().copied())
            .fold(0u32, u32::wrapping_add);
        assert_eq!(sums[0], first);
    }
}
