//! latency — the pointer chase: load latency against working-set size.
//!
//! Reproduces the pointer-chase microbenchmark of the GPU memory-hierarchy texts (Saavedra
//! and Smith's chase, brought to GPUs by Wong et al., "Demystifying GPU
//! Microarchitecture through Microbenchmarking", and Mei and Chu, "Dissecting GPU
//! Memory Hierarchy through Microbenchmarking"): one thread follows a chain of
//! dependent loads `i = next[i]`, so only one load is ever in flight and the time per
//! load is the latency of the level that holds the chain. Swept over footprints from
//! 4 KiB to 1 GiB (in steps of ≤ 1.15× between 8 and 256 MiB, where the L2 ends), the
//! time per load climbs a staircase: L1, then L2 (50 MiB on an
//! H100, 60 MiB on an H200), then DRAM, then DRAM with TLB misses. The texts measure
//! a DRAM latency of about twice the L2's or more.
//!
//! The buffer is an array of u32 indices with one slot per 128-byte line (every 32nd
//! word), so each step touches a new line; the slots' order is one random cycle
//! (Sattolo's algorithm), which no prefetcher can guess. The other words are non-zero
//! filler the chase never reads. One dispatch takes `steps` steps and resumes where the
//! previous one stopped (see `shaders/latency_chase.wgsl`), so the timed dispatches
//! walk the whole cycle. Footprints up to [`WARMED_MAX_BYTES`] are walked whole by
//! every dispatch: their lines are cached, as the staircase needs, from the
//! verification on (on software adapters at most [`SOFTWARE_MAX_STEPS`] a dispatch,
//! llvmpipe's loop limit). Larger ones take [`MIN_STEPS`] per dispatch; up to
//! [`WALKED_MAX_BYTES`] their cycle is walked once, untimed, before the samples
//! ([`Case::untimed_first`]), so that the timed loads find what the L2 keeps of it.
//!
//! Bytes are the 4 bytes of each load, elements the loads: the row's GB/s is 4 / (ns
//! per load), and the summary shows the time per load instead
//! ([`crate::results::LATENCY_FAMILIES`]).

use bytemuck::{Pod, Zeroable};

use crate::params;
use crate::suite::{
    Buffer, Case, CaseData, Expected, Experiment, Family, Measure, Sizing, Twin, Words, mix,
};

/// Bytes of one load of the chase (a u32 index): the bytes of a case per element.
pub(crate) const LOAD_BYTES: u64 = 4;

/// A chase's time per load, ns, from its bandwidth in GB/s: every step loads
/// [`LOAD_BYTES`].
pub fn ns_per_load(gbps: f64) -> f64 {
    LOAD_BYTES as f64 / gbps
}
/// One slot per line of this many bytes.
const LINE_BYTES: u64 = 128;
const SLOT_WORDS: usize = (LINE_BYTES / 4) as usize;

/// Smallest footprint of the sweep; each next one is [`FOOTPRINT_STEP`] times larger,
/// except between [`FINE_MIN_BYTES`] and [`FINE_MAX_BYTES`], where the L2 ends (and an
/// L2 split in two partitions ends twice): there 2^(1/[`FINE_STEPS_PER_OCTAVE`]) times
/// (≈ 1.149), rounded to whole lines.
const MIN_FOOTPRINT_BYTES: u64 = 4 << 10;
const FOOTPRINT_STEP: u64 = 4;
const FINE_MIN_BYTES: u64 = 8 << 20;
const FINE_MAX_BYTES: u64 = 256 << 20;
const FINE_STEPS_PER_OCTAVE: u32 = 5;
/// Largest footprint of a full run (far past any L2, and into TLB misses), of a
/// `--quick` run, and on software adapters (whose binding limit is 128 MiB).
const FULL_MAX_BYTES: u64 = 1 << 30;
const QUICK_MAX_BYTES: u64 = 4 << 20;
const SOFTWARE_MAX_BYTES: u64 = 64 << 20;

/// Fewest loads of a dispatch: about 2.5 ms at a DRAM latency of 0.6 µs, and every
/// slot of the smallest footprints visited many times.
pub(crate) const MIN_STEPS: u32 = 4096;
/// Footprints up to this (a third of an H100's L2) are walked whole by every dispatch.
const WARMED_MAX_BYTES: u64 = 16 << 20;
/// Larger footprints up to this (past an H200's 60 MiB L2 by two sweep steps, so that
/// the sweep shows where the L2 ends) are walked whole once before timing (what that
/// costs: docs/method.md, What a run costs). Past it every footprint is DRAM's.
const WALKED_MAX_BYTES: u64 = 96 << 20;
/// llvmpipe ends every shader's loops after 65535 iterations in all
/// (`LP_MAX_TGSI_LOOP_ITERATIONS`, Mesa's gallivm): a longer walk stopped there and
/// failed verification (at 16 MiB it stopped after exactly 65535 of its 131072 steps).
const SOFTWARE_MAX_STEPS: u32 = 65535;

/// Only one invocation chases (see the shader).
const WORKGROUP: u32 = 1;

/// Seed of the cycle of the chase's slots (Sattolo's algorithm).
const SEED: u64 = 71;
/// The exponent of 1.0 under the filler's varied mantissas.
const FILLER: u32 = 0x3F80_0000;

#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
struct Params {
    steps: u32,
    words: u32,
}

/// The family's experiments, in the order runs and reports show them.
pub const EXPERIMENTS: &[Experiment] = &[CHASE];

/// One invocation chasing a random cycle of line-sized slots, at footprints from
/// 4 KiB to 1 GiB (`footprint=<bytes>`), finely between 8 and 256 MiB.
pub const CHASE: Experiment = Experiment {
    family: Family::Latency,
    variant: "chase",
    kernel: Some("latency_chase"),
    measure: Measure::Kernel,
    twin: Twin::cuda("latency_chase"),
    cases,
};

/// The largest footprint of the sweep before device limits.
fn max_footprint_bytes(sizing: &Sizing) -> u64 {
    sizing.sweep_max_bytes(FULL_MAX_BYTES, SOFTWARE_MAX_BYTES, QUICK_MAX_BYTES)
}

/// The footprints of the sweep: 4 KiB, 16 KiB, … 4 MiB, then fine steps to 256 MiB,
/// then 1 GiB, up to the largest; at least the smallest.
#[expect(
    clippy::cast_possible_truncation,
    reason = "a footprint of whole lines between two u64 bounds"
)]
fn footprints(sizing: &Sizing) -> Vec<u64> {
    let max = max_footprint_bytes(sizing).max(MIN_FOOTPRINT_BYTES);
    let coarse = std::iter::successors(Some(MIN_FOOTPRINT_BYTES), |b| Some(b * FOOTPRINT_STEP));
    let fine = (1..).map(|step| {
        let exact =
            FINE_MIN_BYTES as f64 * 2f64.powf(f64::from(step) / f64::from(FINE_STEPS_PER_OCTAVE));
        (exact / LINE_BYTES as f64).round() as u64 * LINE_BYTES
    });
    coarse
        .take_while(|&bytes| bytes <= FINE_MIN_BYTES)
        .chain(fine.take_while(|&bytes| bytes <= FINE_MAX_BYTES))
        .chain(std::iter::successors(
            Some(FINE_MAX_BYTES * FOOTPRINT_STEP),
            |b| Some(b * FOOTPRINT_STEP),
        ))
        .take_while(|&bytes| bytes <= max)
        .collect()
}

/// Loads of one dispatch at `footprint`: the whole cycle where some L2 may hold it, so
/// that every dispatch after the first finds it cached (and the simulator's warm pass
/// over one dispatch does too), else [`MIN_STEPS`]. On software adapters never more
/// than [`SOFTWARE_MAX_STEPS`].
fn steps(footprint: u64, sizing: &Sizing) -> u32 {
    let slots = footprint / LINE_BYTES;
    if footprint > WARMED_MAX_BYTES {
        return MIN_STEPS;
    }
    let whole = u32::try_from(slots).map_or(u32::MAX, |s| s.max(MIN_STEPS));
    if sizing.software {
        whole.min(SOFTWARE_MAX_STEPS)
    } else {
        whole
    }
}

fn cases(sizing: &Sizing) -> Vec<Case> {
    footprints(sizing)
        .into_iter()
        .map(|footprint| {
            let words = (footprint / 4) as usize;
            let steps = steps(footprint, sizing);
            let skip = (footprint > sizing.max_binding_bytes).then(|| {
                format!(
                    "a footprint of {footprint} bytes exceeds the device's largest buffer \
                     binding of {} bytes",
                    sizing.max_binding_bytes
                )
            });
            let params = Params {
                steps,
                words: u32::try_from(words).unwrap_or(u32::MAX),
            };
            // Dispatches of `steps` that walk the cycle once.
            #[expect(
                clippy::cast_possible_truncation,
                reason = "at most WALKED_MAX_BYTES / LINE_BYTES dispatches, under 2^20"
            )]
            let walk = if footprint > WARMED_MAX_BYTES && footprint <= WALKED_MAX_BYTES {
                (footprint / LINE_BYTES).div_ceil(u64::from(steps)) as u32
            } else {
                0
            };
            Case::builder(sizing, params!(Footprint => footprint))
                .workgroup([WORKGROUP, 1, 1], 0)
                .untimed_first(walk)
                .workgroups([1, 1, 1])
                .constant("WORKGROUP_SIZE", f64::from(WORKGROUP))
                .moves(u64::from(steps), LOAD_BYTES * u64::from(steps))
                .skip_if(skip)
                .addresses_from_data()
                .buffers(vec![
                    Buffer::uniform(params),
                    Buffer::Input(words),
                    Buffer::Output(2),
                ])
                .data(move || {
                    let next = chain(words, SEED);
                    let expected = Expected::Exact(reference(&next, steps).to_vec().into());
                    CaseData {
                        inputs: vec![next],
                        expected: vec![expected],
                    }
                })
        })
        .collect()
}

/// The successor of each of `slots` slots: one cycle through all of them, uniformly
/// drawn (Sattolo's algorithm: Fisher–Yates with the swap partner strictly below).
fn cycle(slots: usize, seed: u64) -> Vec<u32> {
    let mut successor: Vec<u32> = (0..crate::suite::count(slots as u64)).collect();
    for i in (1..slots).rev() {
        let j = crate::host_len(mix(i, seed) % i as u64);
        successor.swap(i, j);
    }
    successor
}

/// A buffer of `words` words: at each slot (every [`SLOT_WORDS`]th word) the word index
/// of the next slot of one random cycle, non-zero filler elsewhere. Only the cycle is
/// held (a word a slot); the buffer is made piece by piece.
#[expect(
    clippy::cast_possible_truncation,
    reason = "SLOT_WORDS is 32; `at`, a word of one binding, counts in u32 (suite::count)"
)]
fn chain(words: usize, seed: u64) -> Words {
    let successor = cycle(words / SLOT_WORDS, seed);
    Words::made(words, move |at| match successor.get(at / SLOT_WORDS) {
        Some(&slot) if at.is_multiple_of(SLOT_WORDS) => slot * SLOT_WORDS as u32,
        // Filler: f32 bit patterns in [1, 2), varied and never zero; one multiply a
        // word, since a 1 GiB chain is mostly filler.
        _ => FILLER | ((at as u32).wrapping_mul(0x9E37_79B9) >> 9),
    })
}

/// The shader's chase from slot 0 (a fresh, poisoned output): where `steps` loads
/// stop, and the wrapping sum of the indices they loaded.
fn reference(next: &Words, steps: u32) -> [u32; 2] {
    let mut i = 0u32;
    let mut sum = 0u32;
    for _ in 0..steps {
        i = next.get(i as usize);
        sum = sum.wrapping_add(i);
    }
    [i, sum]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cycle_visits_every_slot_once() {
        for slots in [1, 2, 3, 32, 1000, 1 << 16] {
            let successor = cycle(slots, 3);
            let mut seen = vec![false; slots];
            let mut slot = 0;
            for _ in 0..slots {
                assert!(!seen[slot], "{slots} slots: slot {slot} twice");
                seen[slot] = true;
                slot = successor[slot] as usize;
            }
            assert_eq!(slot, 0, "{slots} slots: not back at the start");
            assert!(seen.iter().all(|&s| s));
        }
        // Not the identity's neighbour walk: a prefetcher sees no stride.
        let successor = cycle(1 << 12, 3);
        let sequential = (0..successor.len())
            .filter(|&s| successor[s] as usize == (s + 1) % successor.len())
            .count();
        assert!(sequential < 8, "{sequential} sequential steps");
    }

    #[test]
    fn the_chain_links_slots_and_fills_the_rest() {
        let words = 64 << 10;
        let next = chain(words, SEED).whole().into_owned();
        let mut links_to_start = 0;
        for (at, &word) in next.iter().enumerate() {
            if at.is_multiple_of(SLOT_WORDS) {
                assert!((word as usize) < words && (word as usize).is_multiple_of(SLOT_WORDS));
                links_to_start += usize::from(word == 0);
            } else {
                assert!(f32::from_bits(word) >= 1.0, "filler at {at}: {word:#x}");
            }
        }
        // The only zero word is the link of the cycle's last slot back to slot 0.
        assert_eq!(links_to_start, 1);
        assert_eq!(next.iter().filter(|&&w| w == 0).count(), 1);
    }

    #[test]
    fn the_reference_walks_the_chain() {
        // Slots 0 -> 2 -> 1 -> 0 (words 0, 64, 32).
        let mut next = vec![7u32; 3 * SLOT_WORDS];
        next[0] = 64;
        next[64] = 32;
        next[32] = 0;
        let next = Words::from(next);
        assert_eq!(reference(&next, 1), [64, 64]);
        assert_eq!(reference(&next, 2), [32, 96]);
        assert_eq!(reference(&next, 3), [0, 96]);
        assert_eq!(reference(&next, 4), [64, 160]);
    }

    #[test]
    fn default_sizing_sweeps_4_kib_to_1_gib() {
        let cases = cases(&Sizing::nominal(false));
        let footprints: Vec<String> = cases.iter().map(|c| c.params.to_string()).collect();
        // 4 KiB to 4 MiB in 6, 25 fine steps past 8 MiB to 256 MiB, then 1 GiB.
        assert_eq!(footprints.len(), 32);
        assert_eq!(footprints[0], "footprint=4096");
        assert_eq!(footprints[5], "footprint=4194304");
        assert_eq!(footprints[30], "footprint=268435456");
        assert_eq!(footprints[31], "footprint=1073741824");
        let bytes: Vec<u64> = cases
            .iter()
            .map(|c| c.params.number(crate::suite::Key::Footprint).unwrap())
            .collect();
        for pair in bytes.windows(2) {
            let fine = pair[0] >= FINE_MIN_BYTES && pair[1] <= FINE_MAX_BYTES;
            let most = if fine { 1.15 } else { FOOTPRINT_STEP as f64 };
            assert!(
                pair[1] > pair[0] && pair[1] as f64 <= most * pair[0] as f64,
                "{pair:?}"
            );
            assert!(pair[1].is_multiple_of(LINE_BYTES), "{pair:?}");
        }
        for case in &cases {
            let footprint = case.params.number(crate::suite::Key::Footprint).unwrap();
            assert!(case.skip.is_none(), "{}", case.params);
            assert_eq!(case.buffers[1], Buffer::Input((footprint / 4) as usize));
            assert_eq!(case.workgroups, [1, 1, 1]);
            assert_eq!(case.bytes, LOAD_BYTES * case.elements);
            let steps = case.elements;
            let slots = footprint / LINE_BYTES;
            assert!(steps >= u64::from(MIN_STEPS));
            // Caches the chase could fit in are walked whole by every dispatch, or
            // once before the samples.
            let walked = steps * u64::from(case.untimed_first);
            match footprint {
                f if f <= WARMED_MAX_BYTES => assert!(steps >= slots, "{}", case.params),
                f if f <= WALKED_MAX_BYTES => assert!(walked >= slots, "{}", case.params),
                _ => assert_eq!(walked, 0, "{}", case.params),
            }
        }
        // 16 MiB: its 131072 slots; past it and at 1 GiB: the fewest.
        assert_eq!(cases[10].params.to_string(), "footprint=16777216");
        assert_eq!(cases[10].elements, 131072);
        assert_eq!(cases[11].elements, u64::from(MIN_STEPS));
        assert_eq!(cases[31].elements, u64::from(MIN_STEPS));
    }

    #[test]
    fn quick_software_and_small_sizings_stop_early_and_limits_skip() {
        let largest = |sizing: &Sizing| {
            cases(sizing)
                .iter()
                .filter_map(|c| c.params.number(crate::suite::Key::Footprint))
                .max()
        };
        assert_eq!(largest(&Sizing::nominal(true)), Some(QUICK_MAX_BYTES));
        let software = Sizing {
            software: true,
            max_binding_bytes: 32 << 20,
            ..Sizing::nominal(false)
        };
        assert_eq!(largest(&software), Some(SOFTWARE_MAX_BYTES));
        for case in cases(&software) {
            let beyond = case.params.number(crate::suite::Key::Footprint) > Some(32 << 20);
            assert_eq!(case.skip.is_some(), beyond, "{}", case.params);
            // Within llvmpipe's loop limit.
            assert!(
                case.elements <= u64::from(SOFTWARE_MAX_STEPS),
                "{}",
                case.params
            );
        }
        let tiny = Sizing {
            buffer_bytes: Some(64 << 10),
            ..Sizing::nominal(true)
        };
        assert_eq!(largest(&tiny), Some(64 << 10));
        let smaller = Sizing {
            buffer_bytes: Some(256),
            ..Sizing::nominal(true)
        };
        assert_eq!(largest(&smaller), Some(MIN_FOOTPRINT_BYTES));
    }

    #[test]
    fn data_and_reference_agree_with_the_declared_buffers() {
        let sizing = Sizing::nominal(true);
        for case in cases(&sizing) {
            let data = (case.data)();
            crate::suite::check_inputs(&case.buffers, &data.inputs).unwrap();
            let Expected::Exact(expected) = &data.expected[0] else {
                panic!("the chase is checked exactly");
            };
            assert_eq!(expected.len(), 2);
        }
    }
}
