//! reduce — parallel reduction: the sum of n i32, one partial sum per workgroup.
//!
//! Reproduces the reduction experiments of "Professional CUDA C Programming" (Cheng,
//! Grossman and McKercher, ch. 3 and 5) and of Harris's "Optimizing Parallel Reduction
//! in CUDA": a tree of neighbouring pairs (divergent lanes), the same with the active
//! lanes packed (`neighbored_less`), interleaved pairs, workgroups that first add 2, 4
//! or 8 blocks, the last subgroup unrolled, the tree in workgroup memory (static and
//! override-sized), and subgroup operations. The texts expect less divergence to be
//! faster, interleaved to beat neighboured, unrolling to raise bandwidth, workgroup
//! memory to beat the in-place global tree, static and override-sized workgroup arrays
//! to be equal, and the subgroup versions to be fastest.
//!
//! Every case writes one i32 partial per workgroup; the final sum is an untimed host
//! sum of the partials. Verification compares every partial with the CPU's and checks
//! that the partials add up to the sum of the whole input. Bytes = n × 4: the input,
//! read once (the partials are negligible, the classic trees' scratch traffic is what
//! the measurement shows).
//!
//! The classic variants keep the original index math: one or `unroll` scalar loads per
//! invocation, n / (workgroup × unroll) workgroups. Their in-place global trees run in
//! a scratch buffer, since the input is bound read-only: the first step reads the input
//! and writes scratch, as the original's first step writes its input. The fast variants
//! (`smem_unroll4`, `subgroup_shuffle`, `subgroup_add`) read vec4s in a grid-stride
//! loop with four loads in flight per invocation, over a grid that keeps every SM of a
//! large GPU busy, and differ only in how a workgroup combines its invocations' sums:
//! a workgroup-memory tree, a `subgroupShuffleXor` butterfly, or `subgroupAdd`.
//! `smem_unroll4` and `subgroup_add` are also swept over workgroup sizes.

use bytemuck::{Pod, Zeroable};
use rayon::prelude::*;

use crate::params;
use crate::suite::{
    Buffer, Case, CaseData, Expected, Experiment, Family, Grid, Measure, Params, Sizing, Twin,
    Words, mix, words,
};

/// The element counts of a full run: the classic 2^24, and 2^28 (1 GiB, far beyond
/// any L2).
const FULL_ELEMENTS: [u64; 2] = [1 << 24, 1 << 28];

/// Workgroup size of the classic variants and of the fast ones. The texts use 512 for
/// the classic ladder; 256, which their CUDA twins use, measured faster.
const CLASSIC_WORKGROUP: u32 = 256;
const STREAM_WORKGROUP: u32 = 256;
/// Workgroup sizes of the sweep of `smem_unroll4` and `subgroup_add`.
pub const SWEEP_WORKGROUPS: [u32; 5] = [64, 128, 256, 512, 1024];

/// Invocations of a fast variant's grid: about eight times what an H200 keeps resident
/// (132 SMs × 2048), so that the last wave is a small part of the run (as copy/peak's
/// grid-stride launch); fewer on small inputs, so that each invocation still reads
/// [`MIN_VEC4S_PER_INVOCATION`].
const STREAM_INVOCATIONS: u64 = 1 << 21;
const MIN_VEC4S_PER_INVOCATION: u64 = 16;

/// Words of `reduce_smem`'s statically sized tile (its `TILE_WORDS`).
const STATIC_TILE_WORDS: u32 = 1024;

#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
struct BlockParams {
    /// Workgroups with data: a 2-D grid's overhang returns at once.
    blocks: u32,
}

#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
struct StreamParams {
    vec4s: u32,
}

/// How a variant's kernel covers its input; grid, buffers and reference follow.
#[derive(Clone, Copy, Debug)]
enum Kind {
    /// A workgroup sums `unroll` consecutive blocks of its size, then runs a tree in a
    /// global scratch buffer of one block per workgroup.
    Global { unroll: u32 },
    /// One element per invocation into a workgroup array of `tile_words` words
    /// (`None`: one per invocation, sized by the override).
    Tile { tile_words: Option<u32> },
    /// Grid-stride vec4 loads; one word of workgroup memory per invocation.
    Stream,
}

/// What the cases of one variant depend on.
struct Variant {
    kind: Kind,
    /// Needs `Features::SUBGROUP`.
    subgroups: bool,
    /// Also swept over [`SWEEP_WORKGROUPS`] at the largest n.
    sweep: bool,
}

impl Variant {
    const fn global(unroll: u32) -> Variant {
        Variant {
            kind: Kind::Global { unroll },
            subgroups: false,
            sweep: false,
        }
    }

    const fn tile(tile_words: Option<u32>) -> Variant {
        Variant {
            kind: Kind::Tile { tile_words },
            subgroups: false,
            sweep: false,
        }
    }

    const fn stream(subgroups: bool, sweep: bool) -> Variant {
        Variant {
            kind: Kind::Stream,
            subgroups,
            sweep,
        }
    }
}

const NEIGHBORED_VARIANT: Variant = Variant::global(1);
const UNROLL2_VARIANT: Variant = Variant::global(2);
const UNROLL4_VARIANT: Variant = Variant::global(4);
const UNROLL8_VARIANT: Variant = Variant::global(8);
const LASTWARP_VARIANT: Variant = Variant {
    subgroups: true,
    ..Variant::global(8)
};
const SMEM_VARIANT: Variant = Variant::tile(Some(STATIC_TILE_WORDS));
const SMEM_OVERRIDE_VARIANT: Variant = Variant::tile(None);
const SMEM_UNROLL4_VARIANT: Variant = Variant::stream(false, true);
const SHUFFLE_VARIANT: Variant = Variant::stream(true, false);
const SUBGROUP_ADD_VARIANT: Variant = Variant::stream(true, true);

/// The family's experiments, in the order runs and reports show them.
pub const EXPERIMENTS: &[Experiment] = &[
    NEIGHBORED,
    NEIGHBORED_LESS,
    INTERLEAVED,
    UNROLL2,
    UNROLL4,
    UNROLL8,
    UNROLL8_LASTWARP,
    SMEM,
    SMEM_OVERRIDE,
    SMEM_UNROLL4,
    SUBGROUP_SHUFFLE,
    SUBGROUP_ADD,
];

/// Each experiment's variant, in the order of [`EXPERIMENTS`].
const VARIANTS: [&Variant; 12] = [
    &NEIGHBORED_VARIANT,
    &NEIGHBORED_VARIANT,
    &NEIGHBORED_VARIANT,
    &UNROLL2_VARIANT,
    &UNROLL4_VARIANT,
    &UNROLL8_VARIANT,
    &LASTWARP_VARIANT,
    &SMEM_VARIANT,
    &SMEM_OVERRIDE_VARIANT,
    &SMEM_UNROLL4_VARIANT,
    &SHUFFLE_VARIANT,
    &SUBGROUP_ADD_VARIANT,
];

/// Every experiment of the family at `n` elements in workgroups of `workgroup`
/// invocations, whether or not a run sweeps its workgroup: the shapes each kernel must
/// be correct at.
pub fn every_variant_at(
    sizing: &Sizing,
    n: u64,
    workgroup: u32,
) -> Vec<(&'static Experiment, Case)> {
    EXPERIMENTS
        .iter()
        .zip(VARIANTS)
        .map(|(experiment, variant)| {
            (
                experiment,
                case(sizing, variant, n, workgroup, Params::new()),
            )
        })
        .collect()
}

/// The baseline: a global-memory tree of neighbouring pairs (`lid % (2*stride) == 0`),
/// which keeps most lanes of every subgroup idle but scheduled.
pub(crate) const NEIGHBORED: Experiment = Experiment {
    family: Family::Reduce,
    variant: "neighbored",
    kernel: Some("reduce_neighbored"),
    measure: Measure::Kernel,
    twin: Twin::cuda("reduce_global"),
    cases: |sizing| cases(sizing, &NEIGHBORED_VARIANT),
};

/// `neighbored` with the active lanes packed (`index = 2*stride*lid`): no divergence.
pub(crate) const NEIGHBORED_LESS: Experiment = Experiment {
    family: Family::Reduce,
    variant: "neighbored_less",
    kernel: Some("reduce_neighbored_less"),
    measure: Measure::Kernel,
    twin: Twin::cuda("reduce_global"),
    cases: |sizing| cases(sizing, &NEIGHBORED_VARIANT),
};

/// Interleaved pairs (the stride halving): the active lanes packed and their accesses
/// contiguous, expected faster than `neighbored_less` too.
pub(crate) const INTERLEAVED: Experiment = Experiment {
    family: Family::Reduce,
    variant: "interleaved",
    kernel: Some("reduce_interleaved"),
    measure: Measure::Kernel,
    twin: Twin::cuda("reduce_global"),
    cases: |sizing| cases(sizing, &NEIGHBORED_VARIANT),
};

/// Each workgroup first adds 2 blocks: 2 loads in flight per invocation and half the
/// tree work per element.
pub(crate) const UNROLL2: Experiment = Experiment {
    family: Family::Reduce,
    variant: "unroll2",
    kernel: Some("reduce_unroll"),
    measure: Measure::Kernel,
    twin: Twin::cuda("reduce_global"),
    cases: |sizing| cases(sizing, &UNROLL2_VARIANT),
};

/// Each workgroup first adds 4 blocks: expected faster than `unroll2`.
pub(crate) const UNROLL4: Experiment = Experiment {
    family: Family::Reduce,
    variant: "unroll4",
    kernel: Some("reduce_unroll"),
    measure: Measure::Kernel,
    twin: Twin::cuda("reduce_global"),
    cases: |sizing| cases(sizing, &UNROLL4_VARIANT),
};

/// Each workgroup first adds 8 blocks: expected faster than `unroll4`.
pub(crate) const UNROLL8: Experiment = Experiment {
    family: Family::Reduce,
    variant: "unroll8",
    kernel: Some("reduce_unroll"),
    measure: Measure::Kernel,
    twin: Twin::cuda("reduce_global"),
    cases: |sizing| cases(sizing, &UNROLL8_VARIANT),
};

/// `unroll8` with the last subgroup finished without barriers, which saves the tree's
/// last steps (subgroupAdd: the original's volatile warp-synchronous tail is a data
/// race in WGSL); expected faster than `unroll8`.
pub(crate) const UNROLL8_LASTWARP: Experiment = Experiment {
    family: Family::Reduce,
    variant: "unroll8_lastwarp",
    kernel: Some("reduce_unroll8_lastwarp"),
    measure: Measure::Kernel,
    twin: Twin::cuda("reduce_unroll8_lastwarp"),
    cases: |sizing| cases(sizing, &LASTWARP_VARIANT),
};

/// The tree in workgroup memory instead of global memory, every step barrier-separated
/// (the original's volatile last warp is a data race in WGSL).
pub(crate) const SMEM: Experiment = Experiment {
    family: Family::Reduce,
    variant: "smem",
    kernel: Some("reduce_smem"),
    measure: Measure::Kernel,
    twin: Twin::cuda("reduce_smem"),
    cases: |sizing| cases(sizing, &SMEM_VARIANT),
};

/// `smem` with the workgroup array sized by an override constant (WGSL's dynamic shared
/// memory).
pub(crate) const SMEM_OVERRIDE: Experiment = Experiment {
    family: Family::Reduce,
    variant: "smem_override",
    kernel: Some("reduce_smem_override"),
    measure: Measure::Kernel,
    twin: Twin::cuda_dynamic_shared("reduce_smem"),
    cases: |sizing| cases(sizing, &SMEM_OVERRIDE_VARIANT),
};

/// Four vec4 loads in flight per invocation (grid-stride) and a workgroup-memory tree:
/// expected close to the read bandwidth.
pub(crate) const SMEM_UNROLL4: Experiment = Experiment {
    family: Family::Reduce,
    variant: "smem_unroll4",
    kernel: Some("reduce_smem_unroll4"),
    measure: Measure::Kernel,
    twin: Twin::cuda("reduce_vec4"),
    cases: |sizing| cases(sizing, &SMEM_UNROLL4_VARIANT),
};

/// `smem_unroll4`'s loads, each subgroup reduced by a subgroupShuffleXor butterfly
/// instead of workgroup-memory steps: expected at least as fast as `smem_unroll4`.
pub(crate) const SUBGROUP_SHUFFLE: Experiment = Experiment {
    family: Family::Reduce,
    variant: "subgroup_shuffle",
    kernel: Some("reduce_subgroup_shuffle"),
    measure: Measure::Kernel,
    twin: Twin::cuda("reduce_vec4"),
    cases: |sizing| cases(sizing, &SHUFFLE_VARIANT),
};

/// `smem_unroll4`'s loads, each subgroup reduced by one subgroupAdd: expected at least
/// 0.9 of `copy/peak`'s effective bandwidth at n = 2^28.
pub(crate) const SUBGROUP_ADD: Experiment = Experiment {
    family: Family::Reduce,
    variant: "subgroup_add",
    kernel: Some("reduce_subgroup_add"),
    measure: Measure::Kernel,
    twin: Twin::cuda("reduce_vec4"),
    cases: |sizing| cases(sizing, &SUBGROUP_ADD_VARIANT),
};

/// The element counts of this run: the classic two at full size; one, a power of two
/// no larger than the streaming buffer, where the run is quick, on a software adapter
/// or sized by `--buffer-mib`.
fn element_counts(sizing: &Sizing) -> Vec<u64> {
    if sizing.quick || sizing.software || sizing.buffer_bytes.is_some() {
        let words = (sizing.stream_buffer_bytes() / 4).max(1);
        vec![1 << words.ilog2()]
    } else {
        FULL_ELEMENTS.to_vec()
    }
}

fn cases(sizing: &Sizing, variant: &Variant) -> Vec<Case> {
    let counts = element_counts(sizing);
    let default_workgroup = match variant.kind {
        Kind::Stream => STREAM_WORKGROUP,
        _ => CLASSIC_WORKGROUP,
    };
    let mut cases: Vec<Case> = counts
        .iter()
        .map(|&n| case(sizing, variant, n, default_workgroup, params!(N => n)))
        .collect();
    // The smallest count (2^24, 64 MiB, near an L2's size) again with cold caches.
    if let Some(first) = cases.first() {
        cases.push(first.clone().cold());
    }
    if let (true, Some(&n)) = (variant.sweep, counts.last()) {
        // The default workgroup's point of the sweep is the plain `n=` case.
        cases.extend(
            SWEEP_WORKGROUPS
                .into_iter()
                .filter(|&w| w != default_workgroup)
                .map(|w| case(sizing, variant, n, w, params!(N => n, Wg => w))),
        );
    }
    cases
}

/// Which input elements each partial sums.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Layout {
    /// Partial `b` sums the `elements` consecutive elements from `b * elements`.
    Blocks { elements: usize },
    /// Partial `g` sums what a grid-stride loop over vec4s, with `invocations` in the
    /// grid, gives the `workgroup` invocations of workgroup `g`.
    Stream {
        workgroup: usize,
        invocations: usize,
    },
}

/// One variant at `n` elements and `workgroup` invocations per workgroup.
fn case(sizing: &Sizing, variant: &Variant, n: u64, workgroup: u32, params: Params) -> Case {
    let w = u64::from(workgroup);
    let mut overrides = vec![("WORKGROUP_SIZE", f64::from(workgroup))];
    // Workgroup memory, and the elements n must be a whole number of: one workgroup's
    // block, or one vec4.
    let (storage_bytes, granule) = match variant.kind {
        Kind::Global { unroll } => {
            if unroll > 1 {
                overrides.push(("UNROLL", f64::from(unroll)));
            }
            // The last-subgroup kernel shares the subgroup size through one word.
            (4 * u32::from(variant.subgroups), w * u64::from(unroll))
        }
        Kind::Tile { tile_words } => (4 * tile_words.unwrap_or(workgroup), w),
        Kind::Stream => (4 * workgroup, 4),
    };
    let (groups, uniform, layout, grid) = match variant.kind {
        Kind::Stream => {
            let vec4s = n / 4;
            let groups = (vec4s / (w * MIN_VEC4S_PER_INVOCATION)).clamp(1, STREAM_INVOCATIONS / w);
            let params = StreamParams {
                vec4s: u32::try_from(vec4s).unwrap_or(u32::MAX),
            };
            let layout = Layout::Stream {
                workgroup: workgroup as usize,
                invocations: crate::host_len(groups * w),
            };
            (groups, words(params), layout, Grid::OneD)
        }
        Kind::Global { .. } | Kind::Tile { .. } => {
            let blocks = n / granule;
            let params = BlockParams {
                blocks: u32::try_from(blocks).unwrap_or(u32::MAX),
            };
            let layout = Layout::Blocks {
                elements: crate::host_len(granule),
            };
            (blocks, words(params), layout, Grid::TwoD)
        }
    };
    let words = crate::host_len(n);
    let partials = crate::host_len(groups);
    let scratch_stride = matches!(variant.kind, Kind::Global { .. }).then_some(workgroup as usize);
    let mut buffers = vec![
        Buffer::Uniform(uniform),
        Buffer::Input(words),
        Buffer::Output(partials),
    ];
    buffers.extend(scratch_stride.map(|stride| Buffer::Output(partials * stride)));
    Case::builder(sizing, params)
        .skip_if((4 * n > sizing.max_binding_bytes).then(|| {
            format!(
                "{} MiB of input exceed the adapter's binding limit of {} MiB",
                (4 * n) >> 20,
                sizing.max_binding_bytes >> 20
            )
        }))
        .needs_subgroups(variant.subgroups)
        .workgroup([workgroup, 1, 1], storage_bytes)
        .skip_if(
            (!n.is_multiple_of(granule))
                .then(|| format!("n={n} is not a whole number of {granule}-element blocks")),
        )
        .grid(grid, groups)
        .constants(overrides)
        .moves(n, 4 * n)
        .buffers(buffers)
        .data(move || reduce_data(words, layout, partials, scratch_stride))
}

/// Varied, non-zero i32 in 1..=4, so that dropping or repeating any element changes a
/// sum, and 2^28 of them (at most 2^30) cannot overflow: two bits of a 64-bit mix of
/// the index.
fn element(i: usize) -> i32 {
    1 + (mix(i, 5) >> 62) as i32
}

/// The input, and what the partials (and the scratch buffer of an in-place tree) must
/// hold after one dispatch.
#[expect(
    clippy::cast_possible_truncation,
    reason = "a partial wraps to the i32 the kernel sums in"
)]
fn reduce_data(
    words: usize,
    layout: Layout,
    partials: usize,
    scratch_stride: Option<usize>,
) -> CaseData {
    let value = |i: usize| i64::from(element(i));
    let sums: Vec<i64> = (0..partials)
        .into_par_iter()
        .map(|g| match layout {
            Layout::Blocks { elements } => (g * elements..(g + 1) * elements).map(value).sum(),
            Layout::Stream {
                workgroup,
                invocations,
            } => (g * workgroup..words / 4)
                .step_by(invocations)
                .flat_map(|row| row..(row + workgroup).min(words / 4))
                .flat_map(|vec4| 4 * vec4..4 * vec4 + 4)
                .map(value)
                .sum(),
        })
        .collect();
    // Summed apart from the partials' reference, so that it checks that reference too.
    let total: i64 = (0..words).into_par_iter().map(value).sum();
    let partial_words: Vec<u32> = sums.iter().map(|&s| s as i32 as u32).collect();
    let mut expected = vec![partials_expected(partial_words.clone(), total)];
    expected.extend(scratch_stride.map(|stride| scratch_expected(partial_words, stride)));
    CaseData {
        inputs: vec![Words::made(words, |i| element(i) as u32)],
        expected,
    }
}

/// Every partial as the CPU's, and their host sum (the reduction's result) equal to
/// the sum of the input.
fn partials_expected(partials: Vec<u32>, total: i64) -> Expected {
    let words = partials.len();
    let exact = Expected::Exact(partials.into());
    Expected::Rule {
        words,
        rule: Box::new(move |actual| {
            exact.check(actual)?;
            let sum: i64 = actual.iter().map(|&p| i64::from(p as i32)).sum();
            if sum == total {
                Ok(())
            } else {
                Err(format!(
                    "the partials add up to {sum}, the input to {total}"
                ))
            }
        }),
    }
}

/// An in-place tree leaves its workgroup's sum in the first word of its block, where
/// the original leaves it in its input; the rest of the scratch block is intermediate.
fn scratch_expected(partials: Vec<u32>, stride: usize) -> Expected {
    Expected::Strided {
        stride,
        values: partials,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suite::{Cache, POISON};

    #[test]
    fn full_size_has_both_classic_counts_and_skips_beyond_the_binding_limit() {
        let mut sizing = Sizing::nominal(false);
        sizing.max_binding_bytes = 512 << 20;
        let cases = (SUBGROUP_ADD.cases)(&sizing);
        let params: Vec<String> = cases.iter().map(|c| c.params.to_string()).collect();
        assert_eq!(
            params,
            [
                "n=16777216",
                "n=268435456",
                "n=16777216;cache=cold",
                "n=268435456;wg=64",
                "n=268435456;wg=128",
                "n=268435456;wg=512",
                "n=268435456;wg=1024"
            ]
        );
        assert!(cases[0].skip.is_none() && cases[2].skip.is_none());
        assert!(
            cases
                .iter()
                .all(|c| c.skip.is_some() == (c.elements > 1 << 24))
        );
        // Only the cold copy of 2^24 starts its dispatches cold.
        let cold: Vec<bool> = cases.iter().map(|c| c.cache == Cache::Cold).collect();
        assert_eq!(cold, [false, false, true, false, false, false, false]);
        let reason = cases[1].skip.clone().unwrap_or_default();
        assert!(reason.contains("1024 MiB"), "{reason}");
    }

    #[test]
    fn quick_and_software_sizes() {
        let quick = Sizing::nominal(true);
        let software = Sizing {
            software: true,
            ..Sizing::nominal(false)
        };
        assert_eq!(element_counts(&quick), [1 << 20]);
        assert_eq!(element_counts(&software), [1 << 22]);
    }

    #[test]
    fn classic_grids_cover_n_with_one_partial_per_block() {
        let sizing = Sizing::nominal(false);
        for (experiment, block) in [
            (&NEIGHBORED, 256u64),
            (&UNROLL2, 512),
            (&UNROLL8, 2048),
            (&SMEM, 256),
        ] {
            let case = (experiment.cases)(&sizing).remove(1);
            let blocks = (1u64 << 28) / block;
            let [x, y, z] = case.workgroups;
            assert!(u64::from(x) * u64::from(y) * u64::from(z) >= blocks);
            assert_eq!(
                case.buffers[0],
                Buffer::Uniform(vec![u32::try_from(blocks).unwrap()])
            );
            assert_eq!(
                case.buffers[2],
                Buffer::Output(usize::try_from(blocks).unwrap())
            );
            assert_eq!(case.bytes, 4 << 28, "{}", experiment.name());
        }
    }

    #[test]
    fn fast_grids_read_several_vec4s_per_invocation() {
        let sizing = Sizing::nominal(false);
        for case in (SUBGROUP_ADD.cases)(&sizing) {
            let invocations = u64::from(case.workgroups[0] * case.workgroup_size[0]);
            let vec4s = case.elements / 4;
            assert!(invocations <= STREAM_INVOCATIONS, "{}", case.params);
            assert!(
                vec4s / invocations >= MIN_VEC4S_PER_INVOCATION,
                "{}",
                case.params
            );
            assert_eq!(case.buffers[2], Buffer::Output(case.workgroups[0] as usize));
        }
    }

    #[test]
    fn subgroup_variants_skip_without_subgroups() {
        let sizing = Sizing {
            subgroup_sizes: None,
            ..Sizing::nominal(true)
        };
        for experiment in [&UNROLL8_LASTWARP, &SUBGROUP_SHUFFLE, &SUBGROUP_ADD] {
            for case in (experiment.cases)(&sizing) {
                let reason = case.skip.unwrap_or_default();
                assert!(reason.contains("Features::SUBGROUP"), "{reason}");
            }
        }
        assert!(
            (SMEM_UNROLL4.cases)(&sizing)
                .iter()
                .all(|c| c.skip.is_none())
        );
    }

    /// The references against the kernels' loops written out naively.
    #[test]
    fn references_follow_the_kernels_loops() {
        let words = 1 << 12;
        let (workgroup, groups) = (8, 4);
        let data = reduce_data(
            words,
            Layout::Stream {
                workgroup,
                invocations: groups * workgroup,
            },
            groups,
            None,
        );
        let input: Vec<i32> = data.inputs[0].whole().iter().map(|&w| w as i32).collect();
        let mut partials = vec![0i32; groups];
        for gid in 0..groups * workgroup {
            let mut i = gid;
            while i < words / 4 {
                partials[gid / workgroup] += input[4 * i..4 * i + 4].iter().sum::<i32>();
                i += groups * workgroup;
            }
        }
        let as_words = |p: &[i32]| p.iter().map(|&s| s as u32).collect::<Vec<u32>>();
        assert_eq!(data.expected[0].check(&as_words(&partials)), Ok(()));

        let data = reduce_data(words, Layout::Blocks { elements: 512 }, 8, Some(64));
        let input: Vec<i32> = data.inputs[0].whole().iter().map(|&w| w as i32).collect();
        let partials: Vec<i32> = input.chunks(512).map(|block| block.iter().sum()).collect();
        assert_eq!(data.expected[0].check(&as_words(&partials)), Ok(()));
        let mut scratch = vec![POISON; 8 * 64];
        for (b, &p) in partials.iter().enumerate() {
            scratch[b * 64] = p as u32;
        }
        assert_eq!(data.expected[1].check(&scratch), Ok(()));
    }

    #[test]
    fn partials_rule_rejects_a_wrong_partial_and_poison() {
        let expected = partials_expected(vec![3, 4], 7);
        assert!(expected.check(&[3, 4]).is_ok());
        assert!(expected.check(&[3, 5]).is_err());
        assert!(expected.check(&[3, POISON]).is_err());
        // Partials that match a wrong reference still fail the total.
        let wrong_reference = partials_expected(vec![3, 4], 8);
        let error = wrong_reference.check(&[3, 4]).err().unwrap_or_default();
        assert!(error.contains("add up to 7"), "{error}");
    }

    #[test]
    fn scratch_rule_reads_the_first_word_of_each_block() {
        let expected = scratch_expected(vec![5, 6], 4);
        assert!(expected.check(&[5, 0, 0, 0, 6, POISON, 1, 2]).is_ok());
        let error = expected
            .check(&[5, 0, 0, 0, 7, 0, 0, 0])
            .err()
            .unwrap_or_default();
        assert!(error.contains("first at word 4"), "{error}");
    }

    #[test]
    fn elements_are_varied_small_and_non_zero() {
        let values: Vec<i32> = (0..4096).map(element).collect();
        assert!(values.iter().all(|v| (1..=4).contains(v)));
        for v in 1..=4 {
            let count = values.iter().filter(|&&x| x == v).count();
            assert!((900..1150).contains(&count), "{v}: {count}");
        }
    }
}
