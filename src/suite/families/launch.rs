//! launch — what a dispatch, a compute pass, a submission and a CUDA launch cost.
//!
//! gpu-benches' `gpu-small-kernels` experiment and its peers: a kernel too small to
//! keep the GPU busy (one workgroup of `dst[i] = scale * src[i]`) issued back to back,
//! so that its time per repetition is the cost of issuing it. The texts expect a
//! launch to cost a few microseconds, CUDA graphs to cut it, and wgpu to add its own:
//! a barrier between dispatches that write one `read_write` buffer (wgpu#2659) and a
//! validation dispatch before each indirect one (wgpu#8332). The scale kernel swept from
//! 4 KiB to 256 MiB gives time = a + V/b, the launch term `a` and the streaming rate
//! `b` (fitted in [`crate::results::launch`]).
//!
//! Only a case's own output is verified (after one plain dispatch); the outputs of its
//! other dispatches run the same kernel on the same input.

use crate::params;
use crate::suite::{
    Buffer, Case, Dispatch, Expected, Experiment, Family, Grid, Measure, Sizing, Twin, Words,
    f32_word, f32_words,
};

/// Invocations of one workgroup of the launch cases, and of every workgroup of the
/// scale sweep.
const TINY_WORDS: u32 = 64;
const SCALE_WORKGROUP: u32 = 256;
/// The scale sweep: 4 KiB to 256 MiB per buffer in steps of 4 (full run), smaller on
/// software adapters and in a quick run.
const SWEEP_MIN_BYTES: u64 = 4 << 10;
const SIZE_STEP: u64 = 4;
const FULL_MAX_BYTES: u64 = 256 << 20;
const SOFTWARE_MAX_BYTES: u64 = 16 << 20;
const QUICK_MAX_BYTES: u64 = 1 << 20;
/// The factor every kernel scales by: a power of two, so the reference is exact.
const FACTOR: f32 = 2.0;
const SEED: u64 = 53;

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct ScaleParams {
    n: u32,
    scale: f32,
}

/// The family's experiments, in the order runs and reports show them.
pub const EXPERIMENTS: &[Experiment] = &[
    APART,
    SHARED,
    PASS,
    INDIRECT,
    SUBMIT_WAIT,
    SUBMIT_BATCH,
    GRAPH,
    SCALE,
    SCALE_GRAPH,
];

/// One workgroup dispatched back to back in one pass, each dispatch writing its own
/// buffer: a dispatch's cost with nothing between dispatches.
pub(crate) const APART: Experiment = declare("apart", |s| tiny(s, Dispatch::Apart));
/// The same, every dispatch writing one `read_write` buffer: wgpu's barrier between
/// them is the difference (CUDA: launches on one stream).
pub(crate) const SHARED: Experiment = declare("shared", |s| tiny(s, Dispatch::Pass));
/// One compute pass per dispatch in one encoder, each writing its own buffer.
pub(crate) const PASS: Experiment = declare("pass", |s| tiny(s, Dispatch::PassEach));
/// As `apart`, every dispatch indirect: wgpu's validation of its arguments added.
pub(crate) const INDIRECT: Experiment = declare("indirect", |s| tiny(s, Dispatch::Indirect));
/// One submission per dispatch, each waited for, on the host clock (CUDA: a launch and
/// a stream synchronisation).
pub(crate) const SUBMIT_WAIT: Experiment =
    declare("submit_wait", |s| tiny(s, Dispatch::SubmitEach));
/// One submission per dispatch, all submitted and then waited for once, on the host
/// clock (CUDA: launches, then one synchronisation).
pub(crate) const SUBMIT_BATCH: Experiment =
    declare("submit_batch", |s| tiny(s, Dispatch::SubmitAll));
/// CUDA: the launches captured in a graph, the graph launched.
pub(crate) const GRAPH: Experiment = declare("graph", |s| tiny(s, Dispatch::Graph));
/// The scale kernel from 4 KiB to 256 MiB, back to back (wgpu: in one pass on one
/// buffer; CUDA: on one stream): time = a + V/b.
pub(crate) const SCALE: Experiment = declare("scale", |s| scale(s, Dispatch::Pass));
/// CUDA: the scale sweep launched from graphs.
pub(crate) const SCALE_GRAPH: Experiment = declare("scale_graph", |s| scale(s, Dispatch::Graph));

const fn declare(variant: &'static str, cases: fn(&Sizing) -> Vec<Case>) -> Experiment {
    Experiment {
        family: Family::Launch,
        variant,
        kernel: Some("launch_scale"),
        cases,
        measure: Measure::Kernel,
        twin: Twin::cuda("launch_scale"),
    }
}

/// A scale case over buffers of `bytes`, issued as `dispatch`.
fn scale_case(sizing: &Sizing, bytes: u64, workgroup: u32, dispatch: Dispatch) -> Case {
    let words = (bytes / 4) as usize;
    let groups = (words as u64).div_ceil(u64::from(workgroup));
    let skip = (bytes > sizing.max_binding_bytes).then(|| {
        format!(
            "{bytes} bytes exceed the largest storage binding ({})",
            sizing.max_binding_bytes
        )
    });
    Case::builder(sizing, params!(Size => bytes))
        .skip_if(skip)
        .workgroup([workgroup, 1, 1], 0)
        .grid(Grid::TwoD, groups)
        .constant("WORKGROUP_SIZE", f64::from(workgroup))
        .moves(words as u64, 2 * bytes)
        .buffers(vec![
            Buffer::uniform(ScaleParams {
                n: crate::suite::count(words as u64),
                scale: FACTOR,
            }),
            Buffer::Input(words),
            Buffer::Output(words),
        ])
        .dispatch(dispatch)
        .data(move || crate::suite::CaseData {
            inputs: vec![f32_words(words, SEED)],
            expected: vec![Expected::Exact(Words::made(words, |i| {
                (FACTOR * f32::from_bits(f32_word(i, SEED))).to_bits()
            }))],
        })
}

/// One workgroup, issued as `dispatch`.
fn tiny(sizing: &Sizing, dispatch: Dispatch) -> Vec<Case> {
    let bytes = 4 * u64::from(TINY_WORDS);
    vec![scale_case(sizing, bytes, TINY_WORDS, dispatch)]
}

/// The scale sweep, issued as `dispatch`.
fn scale(sizing: &Sizing, dispatch: Dispatch) -> Vec<Case> {
    let max = sizing.sweep_max_bytes(FULL_MAX_BYTES, SOFTWARE_MAX_BYTES, QUICK_MAX_BYTES);
    std::iter::successors(Some(SWEEP_MIN_BYTES), |bytes| Some(bytes * SIZE_STEP))
        .take_while(|&bytes| bytes <= max.max(SWEEP_MIN_BYTES))
        .map(|bytes| scale_case(sizing, bytes, SCALE_WORKGROUP, dispatch))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suite::{Key, wgsl_skip};

    #[test]
    fn the_scale_sweep_runs_from_4_kib_to_256_mib_in_steps_of_4() {
        let sizes: Vec<u64> = scale(&Sizing::nominal(false), Dispatch::Pass)
            .iter()
            .filter_map(|c| c.params.number(Key::Size))
            .collect();
        assert_eq!(sizes.first(), Some(&(4 << 10)));
        assert_eq!(sizes.last(), Some(&(256 << 20)));
        assert_eq!(sizes.len(), 9);
        let quick = scale(&Sizing::nominal(true), Dispatch::Pass);
        assert_eq!(quick.last().map(|c| c.bytes), Some(2 << 20));
    }

    #[test]
    fn one_workgroup_moves_its_words_and_the_reference_is_the_scaled_input() {
        let case = &tiny(&Sizing::nominal(true), Dispatch::Apart)[0];
        assert_eq!(case.workgroups, [1, 1, 1]);
        assert_eq!(case.bytes, 8 * u64::from(TINY_WORDS));
        let data = (case.data)();
        let Expected::Exact(expected) = &data.expected[0] else {
            panic!("the scale kernel is checked exactly");
        };
        let input = f32::from_bits(data.inputs[0].whole()[3]);
        assert_eq!(f32::from_bits(expected.whole()[3]), 2.0 * input);
    }

    #[test]
    fn only_cuda_has_graphs() {
        let sizing = Sizing::nominal(true);
        for experiment in [GRAPH, SCALE_GRAPH] {
            let case = &(experiment.cases)(&sizing)[0];
            assert!(wgsl_skip(&experiment, case).is_some_and(|w| w.contains("graphs")));
        }
        let case = &(APART.cases)(&sizing)[0];
        assert_eq!(wgsl_skip(&APART, case), None);
    }
}
