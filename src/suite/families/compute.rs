//! compute — the compute ceiling and the ridge point: an arithmetic-intensity sweep.
//!
//! mixbench's and gpu-benches' `gpu-roofline` experiment: each invocation loads one
//! vec4, performs k multiply-adds per element on four independent chains and stores
//! the vec4, for k = 1 to 1024 in powers of four. The texts expect the time to stay at the memory's
//! (the bytes do not change) until the arithmetic catches up, then to grow with k: the
//! flat part is the DRAM bandwidth, the rising part the peak FLOP/s, and their ratio
//! the ridge point (flop per byte) past which a kernel is compute-bound. f32 uses
//! `fma`; f16 `fma` on a `vec4<f16>` (where the adapter has `SHADER_F16`); the integer
//! variant a wrapping u32 multiply-add.
//!
//! The references are exact: x → a·x + b composed k times is one affine map, made once
//! per case, and `a = -1`, `b = 3` keep every float step exact (x and 3 − x alternate
//! for x in [1, 2), in f32 and in f16).

use crate::params;
use crate::suite::{
    Buffer, Case, CaseData, Expected, Experiment, Family, Grid, Measure, Sizing, Twin, Words,
    f32_word, f32_words,
};

/// Multiply-adds per element: 1 to 1024 in powers of four. Powers of two would add
/// five cases per api/build (about 2 s of a full run's 150) for a ridge the summary
/// already places within a factor of four.
pub(crate) const FMAS: [u32; 6] = [1, 4, 16, 64, 256, 1024];
const WORKGROUP: u32 = 256;
/// Bytes of the input (and of the output): past the L2 of every preset when full, small
/// where a CPU runs the kernels (1024 multiply-adds per element).
const FULL_BYTES: u64 = 64 << 20;
const SOFTWARE_BYTES: u64 = 1 << 20;
const QUICK_BYTES: u64 = 256 << 10;
const SEED: u64 = 11;
/// f32: x → 3 − x, exact for every x in [1, 2).
const F32_A: f32 = -1.0;
const F32_B: f32 = 3.0;
/// f16: the same map, both halves of a word; the kernel unpacks them
/// (`unpack2x16float`), as naga has no `bitcast` from u32 to `vec2<f16>`.
const F16_A: u32 = 0xBC00_BC00;
const F16_B: u32 = 0x4200_4200;
/// f16 1.0: inputs are 1 + m/1024 with ten random mantissa bits.
const F16_ONE: u32 = 0x3C00;
/// u32: the Numerical Recipes LCG step.
const INT_A: u32 = 1_664_525;
const INT_B: u32 = 1_013_904_223;

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct ComputeParams {
    n: u32,
    a: u32,
    b: u32,
}

/// The element type a variant computes in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Element {
    /// f32, by `fma`.
    F32,
    /// f16, by `fma` on a `vec4<f16>`.
    F16,
    /// u32, by a wrapping multiply-add.
    Int,
}

impl Element {
    /// Operations per multiply-add: a fused multiply-add is two flops; the integer one
    /// a multiply and an add.
    pub const OPS_PER_FMA: u64 = 2;
    /// Every element type, in the order the summary names them.
    pub const ALL: [Element; 3] = [Element::F32, Element::F16, Element::Int];

    /// The experiment that sweeps this element type.
    pub(crate) fn experiment(self) -> &'static Experiment {
        match self {
            Element::F32 => &F32,
            Element::F16 => &F16,
            Element::Int => &INT,
        }
    }

    /// Bytes of one element.
    pub(crate) fn bytes(self) -> u64 {
        match self {
            Element::F16 => 2,
            Element::F32 | Element::Int => 4,
        }
    }

    /// Operations (flops, or integer operations) per byte moved at `fmas`
    /// multiply-adds per element: each element is read once and written once.
    pub(crate) fn ops_per_byte(self, fmas: u64) -> f64 {
        (Self::OPS_PER_FMA * fmas) as f64 / (2 * self.bytes()) as f64
    }
}

/// The family's experiments, in the order runs and reports show them.
pub const EXPERIMENTS: &[Experiment] = &[F32, F16, INT];

/// f32 `fma`: GFLOP/s against flop per byte.
pub(crate) const F32: Experiment = declare("f32", "compute_f32", |s| cases(s, Element::F32));
/// f16 `fma` on a `vec4<f16>` per invocation: GFLOP/s against flop per byte.
pub const F16: Experiment = declare("f16", "compute_f16", |s| cases(s, Element::F16));
/// A wrapping u32 multiply-add: integer operations against operations per byte.
pub const INT: Experiment = declare("int", "compute_int", |s| cases(s, Element::Int));

const fn declare(
    variant: &'static str,
    kernel: &'static str,
    cases: fn(&Sizing) -> Vec<Case>,
) -> Experiment {
    Experiment {
        family: Family::Compute,
        variant,
        kernel: Some(kernel),
        cases,
        measure: Measure::Kernel,
        twin: Twin::cuda("compute"),
    }
}

/// The affine map x → a·x + b applied `k` times, as one map `(a_k, b_k)`.
fn composed_u32(a: u32, b: u32, k: u32) -> (u32, u32) {
    (0..k).fold((1, 0), |(ak, bk), _| {
        (a.wrapping_mul(ak), a.wrapping_mul(bk).wrapping_add(b))
    })
}

/// The same in f64: exact for a = −1 and small b.
fn composed_f64(a: f64, b: f64, k: u32) -> (f64, f64) {
    (0..k).fold((1.0, 0.0), |(ak, bk), _| (a * ak, a * bk + b))
}

fn cases(sizing: &Sizing, element: Element) -> Vec<Case> {
    let bytes = sizing
        .sweep_max_bytes(FULL_BYTES, SOFTWARE_BYTES, QUICK_BYTES)
        .min(sizing.max_binding_bytes)
        / 16
        * 16;
    let words = (bytes / 4) as usize;
    // One vec4 of elements per invocation.
    let vec4s = words * 4 / (4 * crate::host_len(element.bytes()));
    let (a, b) = match element {
        Element::F32 => (F32_A.to_bits(), F32_B.to_bits()),
        Element::F16 => (F16_A, F16_B),
        Element::Int => (INT_A, INT_B),
    };
    let skip = (element == Element::F16)
        .then(|| sizing.f16_skip())
        .flatten();
    FMAS.iter()
        .map(|&fmas| {
            Case::builder(sizing, params!(Rounds => fmas))
                .skip_if(skip.clone())
                .workgroup([WORKGROUP, 1, 1], 0)
                .grid(Grid::TwoD, (vec4s as u64).div_ceil(u64::from(WORKGROUP)))
                .constants([
                    ("WORKGROUP_SIZE", f64::from(WORKGROUP)),
                    ("FMAS", f64::from(fmas)),
                ])
                .moves(words as u64, 8 * words as u64)
                .buffers(vec![
                    Buffer::uniform(ComputeParams {
                        n: crate::suite::count(vec4s as u64),
                        a,
                        b,
                    }),
                    Buffer::Input(words),
                    Buffer::Output(words),
                ])
                .data(move || CaseData {
                    inputs: vec![input(element, words)],
                    expected: vec![Expected::Exact(reference(element, words, fmas))],
                })
        })
        .collect()
}

/// Word `i` of the f16 input: two halves 1 + m/1024, ten random mantissa bits each.
fn f16_word(i: usize) -> u32 {
    let bits = f32_word(i, SEED);
    let half = |m: u32| F16_ONE | (m & 0x3FF);
    half(bits) | half(bits >> 10) << 16
}

/// The input words of `element`'s sweep.
fn input(element: Element, words: usize) -> Words {
    match element {
        Element::F16 => Words::made(words, f16_word),
        Element::F32 | Element::Int => f32_words(words, SEED),
    }
}

/// The f16 bits of 3 − x for x = 1 + m/1024: 2 − m/1024, exact.
fn f16_three_minus(x: u32) -> u32 {
    match x & 0x3FF {
        0 => 0x4000,
        m => F16_ONE | (1024 - m),
    }
}

/// What `fmas` multiply-adds leave of each input word.
#[expect(
    clippy::cast_possible_truncation,
    reason = "the map is composed in f64 and rounded once to the f32 the kernel writes"
)]
fn reference(element: Element, words: usize, fmas: u32) -> Words {
    match element {
        // x → 3 − x, so an odd count leaves 3 − x and an even one x.
        Element::F16 if fmas.is_multiple_of(2) => Words::made(words, f16_word),
        Element::F16 => Words::made(words, |i| {
            let word = f16_word(i);
            f16_three_minus(word & 0xFFFF) | f16_three_minus(word >> 16) << 16
        }),
        Element::F32 => {
            let (a, b) = composed_f64(f64::from(F32_A), f64::from(F32_B), fmas);
            Words::made(words, move |i| {
                let x = f64::from(f32::from_bits(f32_word(i, SEED)));
                ((a * x + b) as f32).to_bits()
            })
        }
        Element::Int => {
            let (a, b) = composed_u32(INT_A, INT_B, fmas);
            Words::made(words, move |i| {
                a.wrapping_mul(f32_word(i, SEED)).wrapping_add(b)
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[expect(
        clippy::cast_possible_truncation,
        reason = "the map is composed in f64 and rounded once to f32"
    )]
    fn composing_the_map_is_applying_it_k_times() {
        let x = 0x3F81_2345u32;
        let (a, b) = composed_u32(INT_A, INT_B, 5);
        let stepped = (0..5).fold(x, |x, _| x.wrapping_mul(INT_A).wrapping_add(INT_B));
        assert_eq!(a.wrapping_mul(x).wrapping_add(b), stepped);
        let y = f32::from_bits(x);
        let stepped = (0..7).fold(y, |y, _| y.mul_add(F32_A, F32_B));
        let (a, b) = composed_f64(-1.0, 3.0, 7);
        assert_eq!((a * f64::from(y) + b) as f32, stepped);
        assert_eq!(stepped, 3.0 - y);
    }

    #[test]
    fn the_sweep_doubles_the_work_at_the_same_bytes() {
        let cases = cases(&Sizing::nominal(false), Element::F32);
        assert_eq!(cases.len(), FMAS.len());
        assert!(cases.iter().all(|c| c.bytes == 2 * FULL_BYTES));
        assert_eq!(Element::F32.ops_per_byte(1024), 256.0);
        assert_eq!(Element::F16.ops_per_byte(1024), 512.0);
    }

    #[test]
    fn three_minus_x_in_f16_is_exact() {
        // 1 + 1/1024 → 2 − 1/1024; 1 → 2; 1.5 → 1.5.
        assert_eq!(f16_three_minus(0x3C01), 0x3FFF);
        assert_eq!(f16_three_minus(0x3C00), 0x4000);
        assert_eq!(f16_three_minus(0x3E00), 0x3E00);
        let word = f16_word(7);
        assert_eq!(word & 0xFC00, 0x3C00);
        assert_eq!(word >> 16 & 0xFC00, 0x3C00);
    }
}
