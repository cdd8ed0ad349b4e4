//! compute — the compute ceiling and the ridge point: an arithmetic-intensity sweep.
//!
//! mixbench's and gpu-benches' `gpu-roofline` experiment: each invocation loads one
//! vec4, performs k multiply-adds per element on four independent chains and stores
//! the vec4, for k = 1 to 1024 in powers of four. The texts expect the time to stay at the memory's
//! (the bytes do not change) until the arithmetic catches up, then to grow with k: the
//! flat part is the DRAM bandwidth, the rising part the peak FLOP/s, and their ratio
//! the ridge point (flop per byte) past which a kernel is compute-bound. f32 uses
//! `fma`; the integer variant a wrapping u32 multiply-add.
//!
//! The references are exact: x → a·x + b composed k times is one affine map, made once
//! per case, and `a = -1`, `b = 3` keep every f32 step exact (x and 3 − x alternate).

#![expect(
    clippy::cast_possible_truncation,
    reason = "casts not yet reviewed: issue 51, item 5"
)]

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
pub(crate) enum Element {
    F32,
    Int,
}

impl Element {
    /// Operations per multiply-add: a fused multiply-add is two flops; the integer one
    /// a multiply and an add.
    pub(crate) const OPS_PER_FMA: u64 = 2;
}

/// The family's experiments, in the order runs and reports show them.
pub const EXPERIMENTS: &[Experiment] = &[F32, INT];

/// f32 `fma`: GFLOP/s against flop per byte.
pub(crate) const F32: Experiment = declare("f32", "compute_f32", |s| cases(s, Element::F32));
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

/// Operations (flops, or integer operations) per byte moved at `fmas` multiply-adds
/// per element: each element is 4 bytes read and 4 written.
pub(crate) fn ops_per_byte(fmas: u64) -> f64 {
    (Element::OPS_PER_FMA * fmas) as f64 / 8.0
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
    let vec4s = words / 4;
    let (a, b) = match element {
        Element::F32 => (F32_A.to_bits(), F32_B.to_bits()),
        Element::Int => (INT_A, INT_B),
    };
    FMAS.iter()
        .map(|&fmas| {
            Case::builder(sizing, params!(Rounds => fmas))
                .workgroup([WORKGROUP, 1, 1], 0)
                .grid(Grid::TwoD, (vec4s as u64).div_ceil(u64::from(WORKGROUP)))
                .constants([
                    ("WORKGROUP_SIZE", f64::from(WORKGROUP)),
                    ("FMAS", f64::from(fmas)),
                ])
                .moves(words as u64, 8 * words as u64)
                .buffers(vec![
                    Buffer::uniform(ComputeParams {
                        n: vec4s as u32,
                        a,
                        b,
                    }),
                    Buffer::Input(words),
                    Buffer::Output(words),
                ])
                .data(move || CaseData {
                    inputs: vec![f32_words(words, SEED)],
                    expected: vec![Expected::Exact(reference(element, words, fmas))],
                })
        })
        .collect()
}

/// What `fmas` multiply-adds leave of each input word.
fn reference(element: Element, words: usize, fmas: u32) -> Words {
    match element {
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
        assert_eq!(ops_per_byte(1024), 256.0);
    }
}
