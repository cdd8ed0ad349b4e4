//! copy — coalescing: the classic offset and stride copies, and the peak copy.
//!
//! Reproduces the "offset copy" and "stride copy" experiments of the CUDA best-practice
//! texts: one f32 per invocation, `out[i + offset] = in[i + offset]` and
//! `out[i * s] = in[i * s]`. The texts expect a misaligned copy to need 5 instead of 4
//! 32-byte sectors per 32-lane request (about 4/5 of the aligned bandwidth, softened
//! by caching), and a stride-s copy to fall to 1/s efficiency until every lane needs a
//! sector of its own (1/8 for 4-byte words). `peak` is the fastest vec4 copy the suite
//! has: the practical ceiling every other case is read against.
//!
//! The one-element-per-invocation kernels stay faithful to the originals; the host
//! side (workgroup size, 1-D or 2-D grid) is ours, and `launch` measures its choices.

use std::sync::Arc;

use bytemuck::{Pod, Zeroable};

use crate::params;
use crate::suite::{
    Buffer, Case, CaseData, Expected, Experiment, Family, Grid, Measure, POISON, Params, Sizing,
    Twin, Words, f32_word, f32_words,
};

/// Workgroup size and grid of the one-element-per-invocation kernels: the fastest
/// that `launch` measured (docs/method.md, Cases and families; 1-D and 2-D equal where
/// both fit).
pub(crate) const DEFAULT_WORKGROUP: u32 = 512;
pub(crate) const DEFAULT_GRID: Grid = Grid::TwoD;

/// The offsets of `copy/offset`, in words: one period of the 32-byte sector (0 to 8),
/// then its multiples to a 128-byte line; the offsets between repeat a period's
/// pattern (runs before 30e2ed7 measured all 33: docs/method.md). Every offset copies
/// the same element count.
const OFFSETS: [u32; 12] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 16, 24, 32];
const MAX_OFFSET: u32 = OFFSETS[OFFSETS.len() - 1];
/// The strides of `copy/stride`, in words: each to 8, where a lane's sector becomes its
/// own, then coarser to 32 (past 8 a request fetches one sector a lane at every stride).
const STRIDES: [u32; 12] = [1, 2, 3, 4, 5, 6, 7, 8, 12, 16, 24, 32];

/// Workgroups of the grid-stride peak copy: more than any current GPU keeps resident
/// (132 SMs x 4 workgroups of 512 on an H100), so every SM stays busy to the end;
/// fewer on small buffers, so that every invocation loops at least this many times.
const GRID_STRIDE_WORKGROUPS: u64 = 4096;
const GRID_STRIDE_MIN_ITERATIONS: u64 = 8;

#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
struct OffsetParams {
    n: u32,
    offset: u32,
}

#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
struct StrideParams {
    n: u32,
    stride: u32,
}

#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
struct PeakParams {
    n: u32,
}

/// The family's experiments, in the order runs and reports show them.
pub const EXPERIMENTS: &[Experiment] = &[OFFSET, STRIDE, PEAK, LAUNCH];

/// `out[i + offset] = in[i + offset]` at offsets 0 to 32 words ([`OFFSETS`]). At offset
/// 0 or a multiple of 8 words a 32-lane request needs 4 sectors, at any other offset 5.
pub const OFFSET: Experiment = Experiment {
    family: Family::Copy,
    variant: "offset",
    kernel: Some("copy_offset"),
    cases: offset_cases,
    measure: Measure::Kernel,
    twin: Twin::cuda("copy_offset"),
};

/// `out[i * s] = in[i * s]` at strides 1 to 32 words ([`STRIDES`]).
pub(crate) const STRIDE: Experiment = Experiment {
    family: Family::Copy,
    variant: "stride",
    kernel: Some("copy_stride"),
    cases: stride_cases,
    measure: Measure::Kernel,
    twin: Twin::cuda("copy_stride"),
};

/// The vec4 copy, tried both as one vec4 per invocation (`launch=vec4`) and as a
/// grid-stride loop (`launch=gridstride`).
pub(crate) const PEAK: Experiment = Experiment {
    family: Family::Copy,
    variant: "peak",
    kernel: Some("copy_peak"),
    cases: peak_cases,
    measure: Measure::Kernel,
    twin: Twin::cuda("copy_peak"),
};

/// The host-side launch of `copy/offset` at offset 0: workgroup sizes 64 to 1024, each
/// on a 1-D and a 2-D grid.
pub(crate) const LAUNCH: Experiment = Experiment {
    family: Family::Copy,
    variant: "launch",
    kernel: Some("copy_offset"),
    cases: launch_cases,
    measure: Measure::Kernel,
    twin: Twin::cuda("copy_offset"),
};

/// Words in the main buffer of every copy case.
fn buffer_words(sizing: &Sizing) -> usize {
    (sizing.stream_buffer_bytes() / 4) as usize
}

/// The data of every copy case: varied input, and an output that holds the input at
/// `copied` word positions and poison everywhere else.
type Data = Arc<dyn Fn() -> CaseData + Send + Sync>;

fn copy_data(
    words: usize,
    seed: u64,
    copied: impl Fn(usize) -> bool + Send + Sync + 'static,
) -> Data {
    let copied = Arc::new(copied);
    Arc::new(move || {
        let copied = Arc::clone(&copied);
        let expected = move |i| if copied(i) { f32_word(i, seed) } else { POISON };
        CaseData {
            inputs: vec![f32_words(words, seed)],
            expected: vec![Expected::Exact(Words::made(words, expected))],
        }
    })
}

/// A copy case: `invocations` invocations read and write `elements` useful words of
/// a `words`-word buffer, with kernel parameters `params`.
struct CopyCase<P> {
    params: Params,
    uniform: P,
    invocations: usize,
    elements: usize,
    words: usize,
    workgroup: u32,
    grid: Grid,
    data: Data,
}

impl<P: Pod> CopyCase<P> {
    fn case(self, sizing: &Sizing) -> Case {
        let workgroup = self.workgroup;
        let groups = (self.invocations as u64).div_ceil(u64::from(workgroup));
        Case::builder(sizing, self.params)
            .workgroup([workgroup, 1, 1], 0)
            .grid(self.grid, groups)
            .constant("WORKGROUP_SIZE", f64::from(workgroup))
            .moves(self.elements as u64, 2 * 4 * self.elements as u64)
            .buffers(vec![
                Buffer::uniform(self.uniform),
                Buffer::Input(self.words),
                Buffer::Output(self.words),
            ])
            .shared_data(self.data)
    }
}

/// `dst[i + offset] = src[i + offset]` for `i < n` over a buffer of `words`.
fn offset_case(
    sizing: &Sizing,
    params: Params,
    n: usize,
    offset: u32,
    workgroup: u32,
    grid: Grid,
) -> Case {
    let words = buffer_words(sizing);
    let window = offset as usize..offset as usize + n;
    CopyCase {
        params,
        uniform: OffsetParams {
            n: crate::suite::count(n as u64),
            offset,
        },
        invocations: n,
        elements: n,
        words,
        workgroup,
        grid,
        data: copy_data(words, 1, move |i| window.contains(&i)),
    }
    .case(sizing)
}

fn offset_cases(sizing: &Sizing) -> Vec<Case> {
    let n = buffer_words(sizing).saturating_sub(MAX_OFFSET as usize);
    OFFSETS
        .into_iter()
        .map(|offset| {
            offset_case(
                sizing,
                params!(Offset => offset),
                n,
                offset,
                DEFAULT_WORKGROUP,
                DEFAULT_GRID,
            )
        })
        .collect()
}

fn launch_cases(sizing: &Sizing) -> Vec<Case> {
    // As many elements as a 1-D grid of 1024-wide workgroups can cover, so that 1-D
    // and 2-D can be compared at full size at least there.
    let n = buffer_words(sizing)
        .saturating_sub(MAX_OFFSET as usize)
        .min(1024 * sizing.max_workgroups_per_dimension as usize);
    [64, 128, 256, 512, 1024]
        .into_iter()
        .flat_map(|workgroup| [Grid::OneD, Grid::TwoD].map(|grid| (workgroup, grid)))
        .map(|(workgroup, grid)| {
            let params = params!(Wg => workgroup, Grid => grid.label());
            offset_case(sizing, params, n, 0, workgroup, grid)
        })
        .collect()
}

fn stride_cases(sizing: &Sizing) -> Vec<Case> {
    let words = buffer_words(sizing);
    STRIDES
        .into_iter()
        .map(|stride| {
            let n = words / stride as usize;
            let s = stride as usize;
            CopyCase {
                params: params!(Stride => stride),
                uniform: StrideParams {
                    n: crate::suite::count(n as u64),
                    stride,
                },
                invocations: n,
                elements: n,
                words,
                workgroup: DEFAULT_WORKGROUP,
                grid: DEFAULT_GRID,
                data: copy_data(words, 2, move |i| i % s == 0 && i / s < n),
            }
            .case(sizing)
        })
        .collect()
}

fn peak_cases(sizing: &Sizing) -> Vec<Case> {
    let words = buffer_words(sizing) / 4 * 4;
    let vec4s = words / 4;
    [
        ("vec4", vec4s),
        ("gridstride", grid_stride_invocations(vec4s)),
    ]
    .into_iter()
    .map(|(launch, invocations)| {
        CopyCase {
            params: params!(Launch => launch),
            uniform: PeakParams {
                n: crate::suite::count(vec4s as u64),
            },
            invocations,
            elements: words,
            words,
            workgroup: DEFAULT_WORKGROUP,
            grid: Grid::TwoD,
            data: copy_data(words, 3, |_| true),
        }
        .case(sizing)
    })
    .collect()
}

/// Invocations of the grid-stride peak copy over `vec4s` vec4s.
pub(crate) fn grid_stride_invocations(vec4s: usize) -> usize {
    let workgroup = u64::from(DEFAULT_WORKGROUP);
    let groups =
        (vec4s as u64 / (workgroup * GRID_STRIDE_MIN_ITERATIONS)).clamp(1, GRID_STRIDE_WORKGROUPS);
    crate::host_len(groups * workgroup)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_accounting_counts_useful_words_read_and_written() {
        let sizing = Sizing::nominal(true);
        let words = buffer_words(&sizing) as u64;
        for case in offset_cases(&sizing) {
            assert_eq!(case.bytes, 8 * (words - u64::from(MAX_OFFSET)));
        }
        let strides = stride_cases(&sizing);
        assert_eq!(strides[0].bytes, 8 * words);
        assert_eq!(strides[7].bytes, 8 * (words / 8));
        for case in peak_cases(&sizing) {
            assert_eq!(case.bytes, 8 * words, "{}", case.params);
        }
    }

    #[test]
    fn offset_reference_writes_only_the_shifted_window() {
        let sizing = Sizing {
            buffer_bytes: Some(256),
            ..Sizing::nominal(true)
        };
        let case = offset_case(&sizing, params!(Offset => 5u32), 32, 5, 32, Grid::TwoD);
        assert_eq!(case.buffers[2], Buffer::Output(64));
        let data = (case.data)();
        let Expected::Exact(expected) = &data.expected[0] else {
            panic!("copy cases are checked exactly");
        };
        let expected = expected.whole();
        assert!(expected[..5].iter().all(|&w| w == POISON));
        assert!(expected[5..37].iter().all(|&w| w != POISON));
        assert!(expected[37..].iter().all(|&w| w == POISON));
    }

    #[test]
    fn launch_sweep_skips_what_the_limits_forbid() {
        let mut sizing = Sizing::nominal(false);
        sizing.max_workgroup_invocations = 256;
        let cases = launch_cases(&sizing);
        assert_eq!(cases.len(), 10);
        let runnable: Vec<_> = cases
            .iter()
            .filter(|c| c.skip.is_none())
            .map(|c| c.params.to_string())
            .collect();
        assert_eq!(
            runnable,
            ["wg=64;grid=2d", "wg=128;grid=2d", "wg=256;grid=2d"]
        );
    }
}
