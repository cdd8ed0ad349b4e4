//! localmem — private arrays: registers or local memory.
//!
//! Reproduces the local-memory experiment of the CUDA texts (the CUDA C++ Programming
//! Guide, "Local Memory": arrays indexed with quantities the compiler cannot determine
//! are placed in local memory, which lives in DRAM behind the caches): a running mean
//! with a window of W = 32 kept in a private array. `register_array` indexes the window
//! only with loop constants (slot j of an unrolled window loop), which a compiler keeps
//! in registers; `dynamic_index` computes the slot at run time as `(j + n) % W`. The
//! texts expect the dynamic index to be slower wherever the compiler cannot keep the
//! array in registers.
//!
//! The n f32 are `n / 256` series of 256 elements, interleaved (element j of series t
//! at `j * series + t`), one invocation per series: every step of a subgroup reads and
//! writes 32 consecutive words, so both variants make the same ideal global traffic
//! and differ only in where the window lives. A series starts with an all-zero window,
//! so its first 31 means count the missing elements as 0. Bytes are n reads and n
//! writes.

use bytemuck::{Pod, Zeroable};
use rayon::prelude::*;

use crate::params;
use crate::suite::{
    Buffer, Case, CaseData, Expected, Experiment, Family, Grid, Measure, Sizing, Twin, f32_word,
    f32_words,
};

/// Window of the running mean (the shaders' `W`).
const WINDOW: usize = 32;
/// Elements of one series: 8 windows.
const SERIES_LENGTH: usize = 256;
const WORKGROUP: u32 = 256;

/// Allowed error, relative to max(1, |reference|). The kernels do the CPU twin's f32
/// operations in the same order (a subtraction, an addition and an exact multiply by
/// 1/32 per step, nothing to contract into an FMA), so a conforming driver matches it
/// bit for bit; 1e-6 (about 8 ulp of a mean near 1.5) only absorbs a driver that
/// reassociates, and no wrong window: one wrong element moves a mean by |x − y| / 32.
const TOLERANCE: f32 = 1e-6;

/// Seed of the input's values.
const SEED: u64 = 41;

#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
struct Params {
    n: u32,
    series: u32,
}

/// The family's experiments, in the order runs and reports show them.
pub(crate) const EXPERIMENTS: &[Experiment] = &[REGISTER_ARRAY, DYNAMIC_INDEX];

/// A private window indexed by loop constants stays in registers: the running mean runs
/// at streaming bandwidth.
pub(crate) const REGISTER_ARRAY: Experiment = Experiment {
    family: Family::Localmem,
    variant: "register_array",
    kernel: Some("localmem_register_array"),
    measure: Measure::Kernel,
    twin: Twin::cuda("localmem"),
    cases,
};

/// The window indexed at run time (`(j + n) % W`), which may live in local memory.
pub(crate) const DYNAMIC_INDEX: Experiment = Experiment {
    family: Family::Localmem,
    variant: "dynamic_index",
    kernel: Some("localmem_dynamic_index"),
    measure: Measure::Kernel,
    twin: Twin::cuda("localmem"),
    cases,
};

fn cases(sizing: &Sizing) -> Vec<Case> {
    let series = (sizing.stream_buffer_bytes() / 4) as usize / SERIES_LENGTH;
    let n = series * SERIES_LENGTH;
    let params = Params {
        n: crate::suite::count(n as u64),
        series: crate::suite::count(series as u64),
    };
    vec![
        Case::builder(sizing, params!(N => n))
            .workgroup([WORKGROUP, 1, 1], 0)
            .grid(Grid::OneD, (series as u64).div_ceil(u64::from(WORKGROUP)))
            .constant("WORKGROUP_SIZE", f64::from(WORKGROUP))
            .moves(n as u64, 8 * n as u64)
            .buffers(vec![
                Buffer::uniform(params),
                Buffer::Input(n),
                Buffer::Output(n),
            ])
            .data(move || {
                let means = reference(|i| f32_word(i, SEED), n, series);
                let expected = Expected::Approx {
                    values: means.into(),
                    tolerance: TOLERANCE,
                };
                CaseData {
                    inputs: vec![f32_words(n, SEED)],
                    expected: vec![expected],
                }
            }),
    ]
}

/// The running means of `series` interleaved series, each computed as the kernels do:
/// a ring of the last [`WINDOW`] values (zero at first), `sum += x − oldest`, mean =
/// `sum × (1 / W)`, as f32 bits; `word` gives the input's words.
fn reference(word: impl Fn(usize) -> u32 + Sync, n: usize, series: usize) -> Vec<u32> {
    // Row j holds step j of every series: made a row at a time, all series at once, so
    // that nothing but the output and each series' window is held.
    let mut windows = vec![([0f32; WINDOW], 0f32); series];
    let mut out = vec![0u32; n];
    for (j, row) in out.chunks_mut(series.max(1)).enumerate() {
        row.par_iter_mut()
            .zip(&mut windows)
            .enumerate()
            .for_each(|(t, (mean, (window, sum)))| {
                let x = f32::from_bits(word(j * series + t));
                *sum += x - window[j % WINDOW];
                window[j % WINDOW] = x;
                *mean = (*sum * (1.0 / WINDOW as f32)).to_bits();
            });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_is_the_mean_of_the_last_32_of_each_series() {
        let series = 3;
        let src = crate::suite::f32_data(series * SERIES_LENGTH, 5);
        let out: Vec<f32> = reference(|i| src[i], src.len(), series)
            .into_iter()
            .map(f32::from_bits)
            .collect();
        let value = |j: usize, t: usize| f64::from(f32::from_bits(src[j * series + t]));
        for t in 0..series {
            for j in [0, 1, 30, 31, 32, 100, SERIES_LENGTH - 1] {
                let first = j.saturating_sub(WINDOW - 1);
                let mean = (first..=j).map(|i| value(i, t)).sum::<f64>() / WINDOW as f64;
                let got = f64::from(out[j * series + t]);
                assert!(
                    (got - mean).abs() < 1e-5,
                    "series {t} step {j}: {got} vs {mean}"
                );
            }
        }
    }

    #[test]
    fn full_size_is_a_grid_of_series() {
        let [case] = &cases(&Sizing::nominal(false))[..] else {
            panic!("one case");
        };
        assert_eq!(case.params.to_string(), "n=67108864");
        assert_eq!(case.workgroups, [1024, 1, 1]);
        assert_eq!(case.bytes, 8 << 26);
    }
}
