//! hierarchy/persist: a hot buffer re-read while a stream passes through the L2, with or
//! without CUDA's L2 persisting access policy window over it.

use bytemuck::{Pod, Zeroable};
use rayon::prelude::*;

use super::{
    CHUNK_BYTES, DRAM_SEED, STAGED_FULL_BYTES, VEC4_BYTES, WORKGROUP, block_sums, dram_workgroups,
    random_words, staged_bytes,
};
use crate::params;
use crate::suite::{
    Buffer, Case, CaseData, CudaLaunch, Expected, Experiment, Family, Grid, Measure, Sizing, Twin,
    Words,
};

/// Reads a 256 MiB streaming buffer once and, beside each of its vec4s, one of a hot
/// buffer (`footprint=<bytes>`, 8 or 30 MiB) read round and round; the streaming reads
/// evict the hot lines from the L2 between their uses. The CUDA twin may set an L2
/// persisting access policy window over the hot buffer (`window=<bytes>`,
/// `hit=<percent>` of its accesses persisting, `setaside=<bytes>` of the L2 reserved):
/// the texts expect the hot reads then to stay in the L2, and the kernel to run faster.
/// Without a window (the baseline) wgpu measures it too. Bytes are both buffers' reads.
pub(crate) const PERSIST: Experiment = Experiment {
    family: Family::Hierarchy,
    variant: "persist",
    kernel: Some("hierarchy_persist"),
    cases: persist_cases,
    measure: Measure::Kernel,
    twin: Twin::cuda("hierarchy_persist"),
};

/// `persist`'s hot buffers at full size: 8 MiB, which the L2 keeps between its uses
/// anyway, and 30 MiB, whose lines 30 MiB of stream push out of an H100's 50 MiB L2
/// before they come round again, within the 31.25 MiB an H100 lets persist (what a
/// window gains: docs/hierarchy.md, persist); `--quick` and software adapters use
/// 64 KiB. A device that lets less persist skips the window with the reason.
const PERSIST_HOT_BYTES: [u64; 2] = [8 << 20, 30 << 20];
const PERSIST_SMALL_HOT_BYTES: u64 = 64 << 10;
/// The persisting shares of the window: all of its accesses, and half.
const PERSIST_HIT_PERCENTS: [u32; 2] = [100, 50];
const PERSIST_SEED: u64 = 44;

#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
struct PersistParams {
    vec4s: u32,
    hot_vec4s: u32,
}

/// Per hot size: no window, then a window over the whole hot buffer at each share,
/// with as much of the L2 set aside as the window holds.
fn persist_cases(sizing: &Sizing) -> Vec<Case> {
    let bytes = staged_bytes(sizing);
    let hot_sizes = if bytes < STAGED_FULL_BYTES {
        vec![PERSIST_SMALL_HOT_BYTES.min(bytes)]
    } else {
        PERSIST_HOT_BYTES.to_vec()
    };
    hot_sizes
        .into_iter()
        .flat_map(|hot| {
            let windows = PERSIST_HIT_PERCENTS.map(|hit_percent| CudaLaunch::PersistingWindow {
                // The hot buffer: the second storage argument, after the stream.
                buffer: 1,
                bytes: hot,
                hit_percent,
                set_aside: hot,
            });
            std::iter::once(CudaLaunch::Plain)
                .chain(windows)
                .map(move |launch| persist_case(sizing, bytes, hot, launch))
        })
        .collect()
}

fn persist_case(sizing: &Sizing, bytes: u64, hot: u64, launch: CudaLaunch) -> Case {
    let vec4s = bytes / VEC4_BYTES;
    let hot_vec4s = hot / VEC4_BYTES;
    let groups = dram_workgroups(vec4s);
    let (words, hot_words) = ((bytes / 4) as usize, (hot / 4) as usize);
    let params = match launch {
        CudaLaunch::PersistingWindow {
            bytes: window,
            hit_percent,
            set_aside,
            ..
        } => {
            params!(Footprint => hot, Window => window, HitRatio => hit_percent, SetAside => set_aside)
        }
        _ => params!(Footprint => hot),
    };
    Case::builder(sizing, params)
        .workgroup([WORKGROUP, 1, 1], 4 * WORKGROUP)
        .grid(Grid::OneD, groups.into())
        .constant("WORKGROUP_SIZE", f64::from(WORKGROUP))
        .moves(2 * vec4s, 2 * bytes)
        .cuda_launch(launch)
        .buffers(vec![
            Buffer::uniform(PersistParams {
                vec4s: crate::suite::count(vec4s),
                hot_vec4s: crate::suite::count(hot_vec4s),
            }),
            Buffer::Input(words),
            Buffer::Input(hot_words),
            Buffer::Output(groups as usize),
        ])
        .data(move || {
            let stream = random_words(words, DRAM_SEED);
            let hot = random_words(hot_words, PERSIST_SEED);
            let sums = persist_reference(&stream, &hot, groups);
            CaseData {
                inputs: vec![stream, hot],
                expected: vec![Expected::Exact(sums.into())],
            }
        })
}

/// Each workgroup's sum: its blocks of `WORKGROUP_SIZE` vec4s of the stream (as
/// `dram_read`), and for each the hot block at the same index modulo the hot buffer's
/// blocks (the hot buffer is whole blocks, so block b of the stream meets hot block
/// b mod blocks).
fn persist_reference(stream: &Words, hot: &Words, groups: u32) -> Vec<u32> {
    let block_words = (CHUNK_BYTES / 4) as usize;
    let stream_blocks = block_sums(stream, block_words);
    let hot_blocks = block_sums(hot, block_words);
    (0..groups as usize)
        .into_par_iter()
        .map(|group| {
            (group..stream_blocks.len())
                .step_by(groups as usize)
                .fold(0u32, |sum, b| {
                    sum.wrapping_add(stream_blocks[b])
                        .wrapping_add(hot_blocks[b % hot_blocks.len()])
                })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suite::Key;

    /// The reference is the kernel's loop: vec4 i of the stream and vec4 i mod n of
    /// the hot buffer, into the sum of workgroup (i / WORKGROUP) mod groups.
    #[test]
    fn persist_reference_follows_the_kernels_loop() {
        let (groups, vec4) = (3u32, 4usize);
        let stream = random_words(256 * vec4 * 10, 1);
        let hot = random_words(256 * vec4 * 4, 2);
        let (vec4s, hot_vec4s) = (stream.len() / vec4, hot.len() / vec4);
        let expected_sums = persist_reference(&stream, &hot, groups);
        let (stream, hot) = (stream.whole(), hot.whole());
        let mut expected = vec![0u32; groups as usize];
        for i in 0..vec4s {
            let group = (i / WORKGROUP as usize) % groups as usize;
            let h = i % hot_vec4s;
            for w in 0..vec4 {
                expected[group] = expected[group]
                    .wrapping_add(stream[vec4 * i + w])
                    .wrapping_add(hot[vec4 * h + w]);
            }
        }
        assert_eq!(expected_sums, expected);
    }

    #[test]
    fn persist_cases_put_a_window_on_the_hot_buffer_only_in_cuda() {
        for sizing in [Sizing::nominal(false), Sizing::nominal(true)] {
            let cases = persist_cases(&sizing);
            let windows = cases
                .iter()
                .filter(|c| matches!(c.cuda_launch, CudaLaunch::PersistingWindow { .. }))
                .count();
            assert_eq!(windows, 2 * (cases.len() - windows));
            for case in &cases {
                let hot = case.params.number(Key::Footprint).unwrap();
                assert_eq!(case.buffers[2], Buffer::Input((hot / 4) as usize));
                if let CudaLaunch::PersistingWindow { buffer, bytes, .. } = case.cuda_launch {
                    assert_eq!((buffer, bytes), (1, hot));
                }
            }
        }
    }
}
