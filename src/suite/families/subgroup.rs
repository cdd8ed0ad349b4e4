//! subgroup — shuffle semantics: broadcast, shuffle up, down and xor, and the swap of
//! array elements between lanes; each verified against its definition, then timed.
//!
//! Reproduces the warp-shuffle experiments of "Professional CUDA C Programming"
//! (Cheng, Grossman and McKercher, ch. 5: `__shfl`, `__shfl_up`, `__shfl_down`,
//! `__shfl_xor` and the array swap `test_shfl_swap`) with WGSL's subgroup builtins.
//! The texts expect a shuffle to move a register between the lanes of a warp without
//! touching memory, faster than the same exchange through shared memory.
//!
//! Each invocation applies `rounds` rounds to its value (round r uses the offset
//! 2^(r mod log2 s), s the subgroup size) and writes the result; the value of a lane
//! after the rounds depends on the source lane of every round, so one comparison
//! checks them all. WGSL leaves the subgroup size to the driver (8 on lavapipe, 32 on
//! NVIDIA, 32 or 64 on AMD, chosen per pipeline on some): each workgroup records the
//! size it ran with, and the CPU twin of the kernel replays the rounds for that size.
//! The cases are throughput cases: bytes = invocations × rounds × 4, the bytes that
//! travel between lanes (the kernel's own loads and stores are a small fraction). A
//! round is one shuffle and a few integer operations (the lane's own term, the next
//! offset), like a step of a reduction or a scan. The simulator models memory only:
//! its prediction for these cases is the memory bound, far above any shuffle rate.

use bytemuck::{Pod, Zeroable};
use rayon::prelude::*;

use crate::params;
use crate::suite::{
    Buffer, Case, CaseData, Expected, Experiment, Family, Grid, Measure, Sizing, Twin, f32_data,
    words,
};

/// A multiple of every subgroup size (at most 128), so that every subgroup is full.
const WORKGROUP: u32 = 256;
const ROUNDS: u32 = 256;
/// Invocations at full size: 2^28 lane exchanges, a few tens of µs on a large GPU and
/// well under a second to replay on the host.
const FULL_INVOCATIONS: u64 = 1 << 20;
/// The broadcast's source lane, the `SOURCE_LANE` const of its shader (subgroupBroadcast
/// takes a const-expression, not an override; a test holds the two equal).
const SOURCE_LANE: u32 = 3;
/// The elements the swap exchanges, those of the CUDA text.
const SWAP_FIRST: u32 = 0;
const SWAP_SECOND: u32 = 3;
/// Words each lane holds: one, or the swap's array of four.
const SWAP_WORDS: usize = 4;

#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
struct Params {
    rounds: u32,
}

#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
struct SwapParams {
    rounds: u32,
    first: u32,
    second: u32,
}

/// What one round does to the values of one subgroup.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Broadcast,
    ShuffleUp,
    ShuffleDown,
    ShuffleXor,
    Swap,
}

impl Op {
    fn words_per_lane(self) -> usize {
        match self {
            Op::Swap => SWAP_WORDS,
            _ => 1,
        }
    }

    /// One round on a subgroup's values (`words_per_lane` consecutive words per lane,
    /// the subgroup size is `values.len() / words_per_lane`), as the kernel does it.
    fn round(self, round: u32, values: &mut [u32], scratch: &mut Vec<u32>) {
        let size = values.len() / self.words_per_lane();
        let offset = 1usize << (round % size.trailing_zeros().max(1));
        scratch.clear();
        scratch.extend_from_slice(values);
        let old = scratch.as_slice();
        let source = |lane: usize| -> usize {
            match self {
                Op::Broadcast => SOURCE_LANE as usize,
                Op::ShuffleUp if lane >= offset => lane - offset,
                Op::ShuffleDown if lane + offset < size => lane + offset,
                Op::ShuffleUp | Op::ShuffleDown => lane,
                Op::ShuffleXor | Op::Swap => lane ^ offset,
            }
        };
        if self == Op::Swap {
            let (first, second) = (SWAP_FIRST as usize, SWAP_SECOND as usize);
            for lower in (0..size).filter(|lane| lane & offset == 0) {
                let upper = source(lower);
                values[SWAP_WORDS * lower + first] = old[SWAP_WORDS * upper + second];
                values[SWAP_WORDS * upper + second] = old[SWAP_WORDS * lower + first];
            }
        } else {
            for (lane, value) in values.iter_mut().enumerate() {
                *value = old[source(lane)].wrapping_add(old[lane].rotate_left(1));
            }
        }
    }
}

/// The family's experiments, in the order runs and reports show them.
pub const EXPERIMENTS: &[Experiment] = &[BROADCAST, SHUFFLE_UP, SHUFFLE_DOWN, SHUFFLE_XOR, SWAP];

/// subgroupBroadcast from lane 3 hands one register to every lane without memory;
/// throughput of bytes received by lanes.
pub(crate) const BROADCAST: Experiment = Experiment {
    family: Family::Subgroup,
    variant: "broadcast",
    kernel: Some("subgroup_broadcast"),
    measure: Measure::Kernel,
    twin: Twin::cuda("subgroup_broadcast"),
    cases: |sizing| cases(sizing, Op::Broadcast),
};

/// subgroupShuffleUp: lane l takes lane l - d (the lowest d lanes keep their own);
/// throughput of bytes received by lanes.
pub(crate) const SHUFFLE_UP: Experiment = Experiment {
    family: Family::Subgroup,
    variant: "shuffle_up",
    kernel: Some("subgroup_shuffle_up"),
    measure: Measure::Kernel,
    twin: Twin::cuda("subgroup_shuffle"),
    cases: |sizing| cases(sizing, Op::ShuffleUp),
};

/// subgroupShuffleDown: lane l takes lane l + d (the highest d lanes keep their own);
/// throughput of bytes received by lanes.
pub(crate) const SHUFFLE_DOWN: Experiment = Experiment {
    family: Family::Subgroup,
    variant: "shuffle_down",
    kernel: Some("subgroup_shuffle_down"),
    measure: Measure::Kernel,
    twin: Twin::cuda("subgroup_shuffle"),
    cases: |sizing| cases(sizing, Op::ShuffleDown),
};

/// subgroupShuffleXor (butterfly): lane l takes lane l ^ m; throughput of bytes
/// received by lanes.
pub(crate) const SHUFFLE_XOR: Experiment = Experiment {
    family: Family::Subgroup,
    variant: "shuffle_xor",
    kernel: Some("subgroup_shuffle_xor"),
    measure: Measure::Kernel,
    twin: Twin::cuda("subgroup_shuffle"),
    cases: |sizing| cases(sizing, Op::ShuffleXor),
};

/// The array swap between lanes (element 0 of lane l with element 3 of lane l ^ m, one
/// shuffle between two local swaps of dynamically indexed elements); throughput of
/// bytes received by lanes.
pub(crate) const SWAP: Experiment = Experiment {
    family: Family::Subgroup,
    variant: "swap",
    kernel: Some("subgroup_swap"),
    measure: Measure::Kernel,
    twin: Twin::cuda("subgroup_swap"),
    cases: |sizing| cases(sizing, Op::Swap),
};

/// Invocations of this run: [`FULL_INVOCATIONS`] at full size; one per 256 words of
/// the streaming buffer (at least a workgroup) where the run is quick, on a software
/// adapter or sized by `--buffer-mib`: the simulator, which runs every workgroup of a
/// small grid, then adds seconds to a quick run, not minutes.
fn invocations(sizing: &Sizing) -> u64 {
    if sizing.quick || sizing.software || sizing.buffer_bytes.is_some() {
        let words = sizing.stream_buffer_bytes() / 4;
        (words / 256 / u64::from(WORKGROUP)).max(1) * u64::from(WORKGROUP)
    } else {
        FULL_INVOCATIONS
    }
}

fn cases(sizing: &Sizing, op: Op) -> Vec<Case> {
    let invocations = invocations(sizing);
    let groups = invocations / u64::from(WORKGROUP);
    let lane_words = op.words_per_lane();
    let value_words = crate::host_len(invocations) * lane_words;
    let uniform = match op {
        Op::Swap => words(SwapParams {
            rounds: ROUNDS,
            first: SWAP_FIRST,
            second: SWAP_SECOND,
        }),
        _ => words(Params { rounds: ROUNDS }),
    };
    let sizes = sizing.subgroup_sizes.unwrap_or((1, 128));
    let exchanges = invocations * u64::from(ROUNDS);
    vec![
        Case::builder(sizing, params!(N => invocations, Rounds => ROUNDS))
            .needs_subgroups(true)
            .workgroup([WORKGROUP, 1, 1], 0)
            .grid(Grid::OneD, groups)
            .constant("WORKGROUP_SIZE", f64::from(WORKGROUP))
            .moves(exchanges, 4 * exchanges)
            .buffers(vec![
                Buffer::Uniform(uniform),
                Buffer::Input(value_words),
                Buffer::Output(value_words + crate::host_len(groups)),
            ])
            .data(move || {
                let input = f32_data(value_words, 11 + op as u64);
                let expected = expected(op, input.clone(), sizes);
                CaseData {
                    inputs: vec![input.into()],
                    expected: vec![expected],
                }
            }),
    ]
}

/// The values, replayed per workgroup for the subgroup size it recorded, and the
/// recorded sizes: powers of two within the adapter's `(min, max)` (a max of 0 is
/// unknown) and WebGPU's 4..=128.
fn expected(op: Op, input: Vec<u32>, (min, max): (u32, u32)) -> Expected {
    let (min, max) = (min.max(4), if max == 0 { 128 } else { max.min(128) });
    let lane_words = op.words_per_lane();
    let group_words = WORKGROUP as usize * lane_words;
    let groups = input.len() / group_words;
    Expected::Rule {
        words: input.len() + groups,
        rule: Box::new(move |actual| {
            let (values, sizes) = actual.split_at(input.len());
            if let Some((group, size)) = sizes
                .iter()
                .enumerate()
                .find(|&(_, &size)| !size.is_power_of_two() || size < min || size > max)
            {
                return Err(format!(
                    "workgroup {group} recorded subgroup size {size:#x}; the adapter \
                     reports {min}..={max}"
                ));
            }
            // Each workgroup replayed on its own, on all cores.
            let groups: Vec<_> = sizes
                .par_iter()
                .enumerate()
                .map(|(group, &size)| {
                    let lanes = size as usize * lane_words;
                    let range = group * group_words..(group + 1) * group_words;
                    let mut replay = input[range.clone()].to_vec();
                    let mut scratch = Vec::new();
                    for subgroup in replay.chunks_mut(lanes) {
                        for round in 0..ROUNDS {
                            op.round(round, subgroup, &mut scratch);
                        }
                    }
                    let mut differing = replay
                        .iter()
                        .zip(&values[range.clone()])
                        .enumerate()
                        .filter(|(_, (e, a))| e != a);
                    let first = differing
                        .next()
                        .map(|(word, (e, a))| (range.start + word, size, *e, *a));
                    (first, first.map_or(0, |_| 1 + differing.count()))
                })
                .collect();
            let wrong: usize = groups.iter().map(|(_, count)| count).sum();
            let first = groups.iter().find_map(|(first, _)| *first);
            match first {
                None => Ok(()),
                Some((word, size, e, a)) => Err(format!(
                    "{wrong} of {} words differ from {ROUNDS} rounds of {op:?} at the \
                     recorded subgroup sizes; first at word {word} (subgroup size \
                     {size}): expected {e:#010x}, got {a:#010x}",
                    values.len()
                )),
            }
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one_round(op: Op, round: u32, values: &[u32]) -> Vec<u32> {
        let mut values = values.to_vec();
        op.round(round, &mut values, &mut Vec::new());
        values
    }

    #[test]
    fn the_broadcast_shader_reads_the_same_source_lane() {
        let source = BROADCAST
            .kernel
            .and_then(crate::suite::shaders::source)
            .unwrap_or_default();
        let module = naga::front::wgsl::parse_str(source).unwrap_or_default();
        let lane = module
            .constants
            .iter()
            .find(|(_, c)| c.name.as_deref() == Some("SOURCE_LANE"))
            .map(|(_, c)| &module.global_expressions[c.init]);
        assert!(
            matches!(lane, Some(naga::Expression::Literal(naga::Literal::U32(l))) if *l == SOURCE_LANE),
            "{lane:?}"
        );
    }

    #[test]
    fn rounds_follow_their_definitions() {
        let lanes: Vec<u32> = (0..8).map(|l| 100 * l).collect();
        // Round 1 of a subgroup of 8: offset 2; the own term is the value rotated by 1.
        let expect = |source: &dyn Fn(u32) -> u32| -> Vec<u32> {
            (0..8).map(|l| 100 * source(l) + 200 * l).collect()
        };
        assert_eq!(one_round(Op::Broadcast, 1, &lanes), expect(&|_| 3));
        assert_eq!(
            one_round(Op::ShuffleUp, 1, &lanes),
            expect(&|l| if l >= 2 { l - 2 } else { l })
        );
        assert_eq!(
            one_round(Op::ShuffleDown, 1, &lanes),
            expect(&|l| if l + 2 < 8 { l + 2 } else { l })
        );
        assert_eq!(one_round(Op::ShuffleXor, 1, &lanes), expect(&|l| l ^ 2));
        // Offsets cycle through 1, 2, 4 for 8 lanes.
        assert_eq!(one_round(Op::ShuffleXor, 3, &lanes)[0], 100);
    }

    /// After all rounds the lanes still differ, and the result depends on the
    /// subgroup size: the comparison checks every round, not a collapsed constant.
    #[test]
    fn rounds_keep_the_lanes_apart() {
        let input = f32_data(128, 5);
        for op in [
            Op::Broadcast,
            Op::ShuffleUp,
            Op::ShuffleDown,
            Op::ShuffleXor,
        ] {
            let replay = |size: usize| {
                let mut values = input.clone();
                for subgroup in values.chunks_mut(size) {
                    for round in 0..ROUNDS {
                        op.round(round, subgroup, &mut Vec::new());
                    }
                }
                values
            };
            let (at8, at32) = (replay(8), replay(32));
            let mut distinct = at32.clone();
            distinct.sort_unstable();
            distinct.dedup();
            assert!(distinct.len() > 120, "{op:?}: {} distinct", distinct.len());
            // Alike only where the source does not depend on the size: the broadcast's
            // lanes 0..8 of each subgroup of 32, and the lanes without a source that
            // shuffles up (lane 0) and down (lane 31) keep.
            let same = at8.iter().zip(&at32).filter(|(a, b)| a == b).count();
            let expected_same = match op {
                Op::Broadcast => 8 * 4,
                Op::ShuffleUp | Op::ShuffleDown => 4,
                _ => 0,
            };
            assert_eq!(same, expected_same, "{op:?}");
        }
    }

    #[test]
    fn swap_exchanges_first_of_the_lower_lane_with_second_of_the_upper() {
        // Two lanes of four words, offset 1 (round 0).
        let mut values = vec![0u32; 8 * SWAP_WORDS];
        for (i, v) in values.iter_mut().enumerate() {
            *v = u32::try_from(i).unwrap();
        }
        let swapped = one_round(Op::Swap, 0, &values);
        // Lane 0 (lower) element 0 <- lane 1 element 3; lane 1 element 3 <- lane 0 element 0.
        assert_eq!(&swapped[..8], &[7, 1, 2, 3, 4, 5, 6, 0]);
        // Everything else of lanes 2..8 follows the same pattern per pair.
        assert_eq!(swapped[8], values[15]);
        assert_eq!(swapped[15], values[8]);
        // Twice with the same offset restores the values.
        assert_eq!(one_round(Op::Swap, 0, &swapped), values);
    }

    #[test]
    fn rule_replays_per_recorded_size_and_rejects_other_sizes() {
        let input: Vec<u32> = (0..2 * WORKGROUP).map(|i| i * 7 + 1).collect();
        let rule = expected(Op::ShuffleXor, input.clone(), (8, 32));
        let mut output = input.clone();
        for (group, size) in [8usize, 32].into_iter().enumerate() {
            let range = group * WORKGROUP as usize..(group + 1) * WORKGROUP as usize;
            for subgroup in output[range].chunks_mut(size) {
                for round in 0..ROUNDS {
                    Op::ShuffleXor.round(round, subgroup, &mut Vec::new());
                }
            }
        }
        let with_sizes = |sizes: [u32; 2]| [output.clone(), sizes.to_vec()].concat();
        assert!(rule.check(&with_sizes([8, 32])).is_ok());
        // The same values claimed for other sizes, or a size outside the adapter's.
        assert!(rule.check(&with_sizes([32, 8])).is_err());
        let error = rule.check(&with_sizes([8, 64])).err().unwrap_or_default();
        assert!(error.contains("8..=32"), "{error}");
    }

    #[test]
    fn cases_skip_without_subgroups_and_count_exchanged_bytes() {
        let sizing = Sizing::nominal(false);
        let case = cases(&sizing, Op::ShuffleXor).remove(0);
        assert_eq!(case.params.to_string(), "n=1048576;rounds=256");
        assert_eq!(case.bytes, 4 * (1 << 20) * 256);
        assert_eq!(case.buffers[2], Buffer::Output((1 << 20) + (1 << 20) / 256));
        let without = Sizing {
            subgroup_sizes: None,
            ..sizing
        };
        let reason = cases(&without, Op::Swap).remove(0).skip.unwrap_or_default();
        assert!(reason.contains("Features::SUBGROUP"), "{reason}");
        // Quick: 4 MiB of streaming buffer, 16 workgroups.
        let quick = cases(&Sizing::nominal(true), Op::Swap).remove(0);
        assert_eq!(quick.params.to_string(), "n=4096;rounds=256");
        assert_eq!(quick.buffers[1], Buffer::Input(4 * 4096));
    }
}
