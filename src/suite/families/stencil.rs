//! stencil — a 1-D stencil of radius 4 and where its coefficients live.
//!
//! Reproduces the 1-D stencil of "Professional CUDA C Programming" (chapter 5,
//! `stencil_1d` with constant memory and `stencil_1d_read_only`): the 8th-order central
//! difference `out[i] = Σ_{k=1..4} c[k]·(in[i+k] − in[i−k])` over n = 2^26 f32. Neighbours
//! outside the array read as 0 at both ends. Three variants stage the workgroup's inputs
//! and a 4-element halo on each side in workgroup memory and differ only in where the
//! coefficients live: a uniform buffer (constant memory), a read-only storage buffer
//! (the read-only cache), compile-time constants. `global_direct` reads all 8
//! neighbours straight from storage with the compile-time coefficients, so that beside
//! `const_coef` it isolates the tile. The texts expect broadcast coefficients to belong
//! in constant memory and the tile to remove redundant global reads; on cached GPUs the
//! L1 catches most of the re-reads, so the tile may gain little. Bytes are n reads and
//! n writes.
//!
//! `texture` is `global_direct` with its neighbour reads through the texture path: the
//! input in an `r32float` 2-D texture [`TEXTURE_WIDTH`] texels wide, row by row, read
//! with `textureLoad` (CUDA: a texel fetch from a texture object over a CUDA array). Row by row
//! keeps the neighbours i ± k on one texture row (but where a row ends), so the texture
//! cache's 2-D locality is offered the 1-D stencil's own locality and nothing else; its
//! params name the width (docs/texture.md).

use bytemuck::{Pod, Zeroable};

use super::copy::{DEFAULT_GRID, DEFAULT_WORKGROUP};
use crate::params;
use crate::suite::{
    Buffer, Case, CaseData, Expected, Experiment, Family, Measure, Sizing, Twin, Words, f32_word,
    f32_words,
};

const RADIUS: usize = 4;

/// Texels per row of `texture`'s input: 2^13, so that the full 2^26 elements make a
/// square 8192 × 8192 texture, and a power of two, so that a texel's row and column are
/// a shift and a mask.
const TEXTURE_WIDTH: u32 = 8192;

/// c[1..=4]: the 8th-order central-difference coefficients of a first derivative, as
/// the CUDA texts' stencil uses them.
const COEFFICIENTS: [f32; RADIUS] = [4.0 / 5.0, -1.0 / 5.0, 4.0 / 105.0, -1.0 / 280.0];

/// Allowed error, relative to max(1, |reference|). The inputs lie in [1, 2), so each
/// difference is exact (Sterbenz; and x − 0 at the ends) and below 2 in magnitude; the
/// 4 products and 4 sums each round once by at most 2^-24 of a value below 2.1 in
/// magnitude, in whatever order or FMA contraction the driver picks: under 8 × 2.1 ×
/// 2^-24 ≈ 1e-6 against the exact (f64) reference. 4e-6 leaves a margin and still
/// sees a wrong or missing neighbour, which moves a result by at least about
/// |c[4]| × |in[j] − in[j']| (1e-3 for typical inputs) or, at a halo, by |c[k]| × 1.
const TOLERANCE: f32 = 4e-6;

#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
struct Params {
    n: u32,
}

/// `stencil_uniform_coef`'s uniform: `n`, then the coefficients as a vec4 on the next
/// 16-byte row.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
struct UniformParams {
    n: u32,
    _align: [u32; 3],
    c: [f32; RADIUS],
}

/// Where a variant's coefficients come from, and whether it stages a tile.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Variant {
    UniformCoef,
    StorageCoef,
    ConstCoef,
    GlobalDirect,
    Texture,
}

/// The family's experiments, in the order runs and reports show them.
pub const EXPERIMENTS: &[Experiment] = &[
    UNIFORM_COEF,
    STORAGE_COEF,
    CONST_COEF,
    GLOBAL_DIRECT,
    TEXTURE,
];

/// Coefficients in a uniform buffer (constant memory), read by every lane at once: a
/// broadcast at register speed.
pub(crate) const UNIFORM_COEF: Experiment = Experiment {
    family: Family::Stencil,
    variant: "uniform_coef",
    kernel: Some("stencil_uniform_coef"),
    measure: Measure::Kernel,
    twin: Twin::cuda("stencil"),
    cases: |sizing| cases(sizing, Variant::UniformCoef),
};

/// Coefficients through the read-only (L1) path: about as fast as constant memory for a
/// broadcast; the stencil stays DRAM-bound.
pub(crate) const STORAGE_COEF: Experiment = Experiment {
    family: Family::Stencil,
    variant: "storage_coef",
    kernel: Some("stencil_storage_coef"),
    measure: Measure::Kernel,
    twin: Twin::cuda("stencil"),
    cases: |sizing| cases(sizing, Variant::StorageCoef),
};

/// Coefficients compiled into the code: no load at all, the bound for the other
/// coefficient placements.
pub(crate) const CONST_COEF: Experiment = Experiment {
    family: Family::Stencil,
    variant: "const_coef",
    kernel: Some("stencil_const_coef"),
    measure: Measure::Kernel,
    twin: Twin::cuda("stencil"),
    cases: |sizing| cases(sizing, Variant::ConstCoef),
};

/// No tile: every input is read 9 times from storage, slower than `const_coef` where
/// the caches do not absorb the re-reads.
pub(crate) const GLOBAL_DIRECT: Experiment = Experiment {
    family: Family::Stencil,
    variant: "global_direct",
    kernel: Some("stencil_global_direct"),
    measure: Measure::Kernel,
    twin: Twin::cuda("stencil"),
    cases: |sizing| cases(sizing, Variant::GlobalDirect),
};

/// `global_direct` with every neighbour read through the texture path: the texts
/// expect the texture cache to serve the re-reads at least as well as the L1.
pub(crate) const TEXTURE: Experiment = Experiment {
    family: Family::Stencil,
    variant: "texture",
    kernel: Some("stencil_texture"),
    measure: Measure::Kernel,
    twin: Twin::cuda("stencil"),
    cases: |sizing| cases(sizing, Variant::Texture),
};

fn cases(sizing: &Sizing, variant: Variant) -> Vec<Case> {
    vec![case(sizing, variant)]
}

fn case(sizing: &Sizing, variant: Variant) -> Case {
    let n = (sizing.stream_buffer_bytes() / 4) as usize;
    let workgroup = DEFAULT_WORKGROUP;
    #[expect(clippy::cast_possible_truncation, reason = "RADIUS is 4")]
    let tile_bytes = match variant {
        Variant::GlobalDirect | Variant::Texture => 0,
        _ => 4 * (workgroup + 2 * RADIUS as u32),
    };
    // The texture's rows: the last one partly beyond n, never read.
    let texture = (
        TEXTURE_WIDTH,
        crate::suite::count(n as u64).div_ceil(TEXTURE_WIDTH).max(1),
    );
    let params = Params {
        n: crate::suite::count(n as u64),
    };
    let coefficient_words: Vec<u32> = COEFFICIENTS.iter().map(|c| c.to_bits()).collect();
    let mut buffers = match variant {
        Variant::UniformCoef => vec![Buffer::uniform(UniformParams {
            n: params.n,
            _align: [0; 3],
            c: COEFFICIENTS,
        })],
        Variant::StorageCoef => vec![Buffer::uniform(params), Buffer::Input(RADIUS)],
        Variant::ConstCoef | Variant::GlobalDirect | Variant::Texture => {
            vec![Buffer::uniform(params)]
        }
    };
    let (input, case_params) = match variant {
        Variant::Texture => (
            Buffer::Texture {
                width: texture.0,
                height: texture.1,
            },
            params!(N => n, Width => TEXTURE_WIDTH),
        ),
        _ => (Buffer::Input(n), params!(N => n)),
    };
    let input_words = input.words();
    buffers.extend([input, Buffer::Output(n)]);
    let mut overrides = vec![("WORKGROUP_SIZE", f64::from(workgroup))];
    if variant == Variant::Texture {
        overrides.push(("TEXTURE_WIDTH", f64::from(TEXTURE_WIDTH)));
    }
    if matches!(
        variant,
        Variant::ConstCoef | Variant::GlobalDirect | Variant::Texture
    ) {
        overrides.extend(
            ["C1", "C2", "C3", "C4"]
                .into_iter()
                .zip(COEFFICIENTS.map(f64::from)),
        );
    }
    Case::builder(sizing, case_params)
        .workgroup([workgroup, 1, 1], tile_bytes)
        .skip_if(
            (variant == Variant::Texture)
                .then(|| sizing.texture_skip(texture.0, texture.1))
                .flatten(),
        )
        .grid(DEFAULT_GRID, (n as u64).div_ceil(u64::from(workgroup)))
        .constants(overrides)
        .moves(n as u64, 8 * n as u64)
        .buffers(buffers)
        .data(move || {
            // A texture's words beyond n fill its last row; the first n are the input
            // every variant gets.
            let src = f32_words(input_words, SEED);
            let point = move |i| point(i, n, |j| f32_word(j, SEED)).to_bits();
            let expected = Expected::Approx {
                values: Words::made(n, point),
                tolerance: TOLERANCE,
            };
            let inputs = match variant {
                Variant::StorageCoef => vec![coefficient_words.clone().into(), src],
                _ => vec![src],
            };
            CaseData {
                inputs,
                expected: vec![expected],
            }
        })
}

/// Point `i` of the stencil in f64 over `n` f32 inputs (`word` gives their bits),
/// neighbours outside the array 0.
#[expect(
    clippy::cast_possible_truncation,
    reason = "the reference sums in f64 and rounds once to the f32 it compares"
)]
fn point(i: usize, n: usize, word: impl Fn(usize) -> u32) -> f32 {
    let x = |j: Option<usize>| -> f64 {
        j.filter(|&j| j < n)
            .map_or(0.0, |j| f64::from(f32::from_bits(word(j))))
    };
    let sum: f64 = (1..=RADIUS)
        .map(|k| f64::from(COEFFICIENTS[k - 1]) * (x(Some(i + k)) - x(i.checked_sub(k))))
        .sum();
    sum as f32
}

/// Seed of the input's values.
const SEED: u64 = 31;

#[cfg(test)]
mod tests {
    use super::*;

    /// The stencil of every point of `src`, the input beyond both ends read as 0.
    fn reference(src: &[u32]) -> Vec<f32> {
        (0..src.len())
            .map(|i| point(i, src.len(), |j| src[j]))
            .collect()
    }

    #[test]
    fn reference_reads_zero_beyond_both_ends() {
        let one = 1f32.to_bits();
        let src = vec![one; 16];
        let out = reference(&src);
        // Inside, equal neighbours cancel; at the ends the missing side counts as 0.
        assert!(out[4..12].iter().all(|&v| v == 0.0));
        let c = |k: usize| f64::from(COEFFICIENTS[k - 1]);
        let close = |got: f32, want: f64| (f64::from(got) - want).abs() < 1e-7;
        assert!(close(out[0], c(1) + c(2) + c(3) + c(4)), "{}", out[0]);
        assert!(close(out[1], c(2) + c(3) + c(4)), "{}", out[1]);
        assert!(close(out[15], -(c(1) + c(2) + c(3) + c(4))), "{}", out[15]);
        assert!(close(out[12], -c(4)), "{}", out[12]);
    }

    #[test]
    fn full_size_is_two_to_the_26_over_a_two_d_grid() {
        let sizing = Sizing::nominal(false);
        for experiment in EXPERIMENTS {
            let [case] = &(experiment.cases)(&sizing)[..] else {
                panic!("one case");
            };
            let width = if experiment.is(&TEXTURE) {
                ";width=8192"
            } else {
                ""
            };
            assert_eq!(case.params.to_string(), format!("n=67108864{width}"));
            assert_eq!(case.bytes, 8 << 26);
            assert!(case.skip.is_none());
            let [x, y, _] = case.workgroups;
            assert!(u64::from(x) * u64::from(y) * 512 >= 1 << 26);
            assert!(experiment.kernel_for(case).is_ok(), "{}", experiment.name());
        }
    }

    #[test]
    fn a_texture_beyond_the_adapter_is_skipped_with_the_reason() {
        let sizing = Sizing {
            max_texture_dimension_2d: 4096,
            ..Sizing::nominal(false)
        };
        let [case] = &(TEXTURE.cases)(&sizing)[..] else {
            panic!("one case");
        };
        assert_eq!(
            case.skip.as_deref(),
            Some("a 8192x8192 texture exceeds the adapter's largest 2-D texture (4096)")
        );
        assert!((GLOBAL_DIRECT.cases)(&sizing)[0].skip.is_none());
    }
}
