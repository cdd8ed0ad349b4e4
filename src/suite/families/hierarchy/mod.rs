//! hierarchy — each memory level's bandwidth against the data set's size.
//!
//! Reproduces the bandwidth staircase of the memory-hierarchy microbenchmarks (Mei and
//! Chu, "Dissecting GPU Memory Hierarchy through Microbenchmarking"; Jia et al.,
//! "Dissecting the NVIDIA Volta GPU Architecture via Microbenchmarking"; BabelStream's
//! read/write/copy split): the same wide reads served by the L1 while the data fits an
//! SM's L1, by the L2 while it fits the L2, then by DRAM. The texts expect each level's
//! bandwidth to be a plateau that ends near its capacity, and each plateau to be well
//! below the one before (an H100's and an H200's: docs/hierarchy.md).
//!
//! Every input is words with all 32 bits random (not a fixed exponent, which a
//! compressing memory system might exploit), every access a vec4<u32>, every read
//! summed (wrapping) into one word per workgroup, which the CPU reference computes
//! from prefix or block sums rather than by repeating the reads. `copy_zero` breaks the
//! suite's rule that inputs are never all zeros, on purpose: see [`COPY_ZERO`].
//! [`crate::results::levels`] names the plateaus of `window` and `shared`.

use bytemuck::{Pod, Zeroable};
use rayon::prelude::*;

use crate::params;
use crate::suite::families::copy;
use crate::suite::{
    Buffer, Case, CaseData, CudaLaunch, Expected, Experiment, Family, Grid, Measure, Params,
    Sizing, Twin, Words, mix,
};

const WORKGROUP: u32 = 256;
const VEC4_BYTES: u64 = 16;
/// Bytes a workgroup reads in one step: one vec4 per invocation, and `shared`'s chunk.
const CHUNK_BYTES: u64 = WORKGROUP as u64 * VEC4_BYTES;

/// Workgroups of `window` and `shared`: many more than a big GPU keeps resident (132
/// SMs × 8 of 256 on an H100), so every SM reads to the end; few on software adapters
/// and with `--quick`, where only correctness counts.
const FULL_WORKGROUPS: u32 = 8192;
const SMALL_WORKGROUPS: u32 = 32;
/// Loads per invocation of `window` and passes of `shared` at full size: 8192 × 256
/// invocations × 512 vec4s is 17 GB a dispatch, and `shared`'s 8.6 GB: a few ms on a big
/// GPU at the rates docs/hierarchy.md shows for each level.
const FULL_WINDOW_LOADS: u32 = 512;
const FULL_SHARED_PASSES: u32 = 256;
const SMALL_REPEATS: u32 = 16;

/// `window` sweeps 4 KiB to 1 MiB (or `--buffer-mib`, if smaller) in steps of
/// 2^(1/4) (≈ 1.19), rounded to [`WINDOW_ROUNDING_BYTES`].
const WINDOW_MIN_BYTES: u64 = 4 << 10;
const WINDOW_MAX_BYTES: u64 = 1 << 20;
const WINDOW_STEPS_PER_OCTAVE: u32 = 4;
const WINDOW_ROUNDING_BYTES: u64 = 256;
/// vec4s between neighbouring workgroups' starting points in the window: not a power
/// of two, so starts spread over every window size.
const WINDOW_ROTATION: u32 = 257;

/// `shared` sweeps 1 MiB to 1 GiB in steps of 2^(1/5) (≈ 1.149), rounded to whole
/// chunks; at most 64 MiB on software adapters, 4 MiB with `--quick`.
const SHARED_MIN_BYTES: u64 = 1 << 20;
const SHARED_FULL_MAX_BYTES: u64 = 1 << 30;
const SHARED_SOFTWARE_MAX_BYTES: u64 = 64 << 20;
const SHARED_QUICK_MAX_BYTES: u64 = 4 << 20;
const SHARED_STEPS_PER_OCTAVE: u32 = 5;
/// The chunks a workgroup moves on between passes, as a share of all chunks: the
/// golden ratio's fractional part keeps a workgroup's neighbours (on its SM) from
/// coming back to its chunks for many passes.
const SHARED_STEP_SHARE: f64 = 0.618_034;

/// The DRAM experiments' buffer: the largest `shared` size, the device's binding limit
/// at most.
const DRAM_FULL_BYTES: u64 = SHARED_FULL_MAX_BYTES;
/// Workgroups of the grid-stride DRAM kernels: as `copy/peak`'s grid-stride launch,
/// fewer on small buffers so that every invocation loops at least this many times.
const DRAM_WORKGROUPS: u64 = 4096;
const DRAM_MIN_ITERATIONS: u64 = 8;

const WINDOW_SEED: u64 = 41;
const SHARED_SEED: u64 = 42;
const DRAM_SEED: u64 = 43;

#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
struct WindowParams {
    vec4s: u32,
    loads: u32,
    rotation: u32,
}

#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
struct SharedParams {
    chunks: u32,
    passes: u32,
    step: u32,
}

#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
struct Vec4sParams {
    vec4s: u32,
}

mod persist;
mod staged;

pub(crate) use persist::PERSIST;
pub(crate) use staged::{
    STAGED, STAGED_4, STAGED_8, STAGED_16, STAGED_ASYNC_4, STAGED_ASYNC_8, STAGED_ASYNC_16,
};

/// The family's experiments, in the order runs and reports show them.
pub const EXPERIMENTS: &[Experiment] = &[
    WINDOW,
    WINDOW_CARVEOUT,
    SHARED,
    SHARED_L1_BYPASS,
    DRAM_READ,
    DRAM_WRITE,
    DRAM_COPY,
    COPY_ZERO,
    STAGED_4,
    STAGED_8,
    STAGED_16,
    STAGED_ASYNC_4,
    STAGED_ASYNC_8,
    STAGED_ASYNC_16,
    PERSIST,
];

/// Every workgroup re-reads the same window (`footprint=<bytes>`, 4 KiB to 1 MiB),
/// each from its own rotation: each SM's L1 serves its copy while the window fits, then
/// the L2. Bytes are the bytes read.
pub const WINDOW: Experiment = Experiment {
    family: Family::Hierarchy,
    variant: "window",
    kernel: Some("hierarchy_window"),
    cases: window_cases,
    measure: Measure::Kernel,
    twin: Twin::cuda("hierarchy_window"),
};

/// `window`'s kernel and sweep with the CUDA twin's preferred shared-memory carve-out
/// set (`carveout=0`: the most L1, `carveout=100`: the most shared memory, the L1 what
/// is left). The window's L1 plateau should end later at 0 than at 100. WebGPU has no
/// carve-out: wgpu skips it, and the simulator predicts it as `window`.
pub(crate) const WINDOW_CARVEOUT: Experiment = Experiment {
    family: Family::Hierarchy,
    variant: "window_carveout",
    kernel: Some("hierarchy_window"),
    cases: window_carveout_cases,
    measure: Measure::Kernel,
    twin: Twin::cuda("hierarchy_window"),
};

/// The carve-outs `window_carveout` compares, percent: the most L1, the most shared.
pub(crate) const CARVEOUTS: [u32; 2] = [0, 100];

/// Every workgroup reads a different 4 KiB chunk of one buffer (`footprint=<bytes>`,
/// 1 MiB to 1 GiB) a pass, the chunk rotating between passes so no SM re-reads its
/// own: the L2 serves while it holds the buffer (a split L2's near partition first:
/// docs/hierarchy.md, The levels), then DRAM. Bytes are the bytes read. Plain loads,
/// which an L1 may still serve now and then; `shared_l1_bypass` is the CUDA twin with
/// the L1 bypassed.
pub(crate) const SHARED: Experiment = Experiment {
    family: Family::Hierarchy,
    variant: "shared",
    kernel: Some("hierarchy_shared"),
    cases: shared_cases,
    measure: Measure::Kernel,
    twin: Twin::cuda("hierarchy_shared"),
};

/// `shared` with its CUDA twin's loads `__ldcg` (cached in the L2 only). WGSL has no
/// cache hint: its WGSL is `shared`'s, and wgpu skips it with the reason.
pub(crate) const SHARED_L1_BYPASS: Experiment = Experiment {
    family: Family::Hierarchy,
    variant: "shared_l1_bypass",
    kernel: Some("hierarchy_shared_l1_bypass"),
    cases: shared_cases,
    measure: Measure::Kernel,
    twin: Twin::cuda_only("hierarchy_shared", "an L1 bypass hint (__ldcg)"),
};

/// Reads a 1 GiB buffer (`size=<bytes>`, the binding limit at most) once, vec4 by
/// vec4, summing per workgroup. Bytes are the bytes read.
pub(crate) const DRAM_READ: Experiment = Experiment {
    family: Family::Hierarchy,
    variant: "dram_read",
    kernel: Some("hierarchy_dram_read"),
    cases: dram_read_cases,
    measure: Measure::Kernel,
    twin: Twin::cuda("hierarchy_dram_read"),
};

/// Writes a known pattern to a 1 GiB buffer, reading nothing. Bytes are the bytes
/// written.
pub(crate) const DRAM_WRITE: Experiment = Experiment {
    family: Family::Hierarchy,
    variant: "dram_write",
    kernel: Some("hierarchy_dram_write"),
    cases: dram_write_cases,
    measure: Measure::Kernel,
    twin: Twin::cuda("hierarchy_dram_write"),
};

/// Copies a 1 GiB buffer. Bytes are the bytes read plus written.
pub(crate) const DRAM_COPY: Experiment = Experiment {
    family: Family::Hierarchy,
    variant: "dram_copy",
    kernel: Some("hierarchy_dram_copy"),
    cases: dram_copy_cases,
    measure: Measure::Kernel,
    twin: Twin::cuda("hierarchy_dram_copy"),
};

/// `copy/peak`'s grid-stride kernel and launch at the DRAM size on all-zero input
/// (`data=zero`) beside input with all 32 bits random (`data=random`). The suite's
/// inputs are never all zeros, because a memory system that compresses (NVIDIA's
/// compressible memory, some DRAM controllers) could move zeros faster than data; this
/// pair breaks that rule on purpose, to show whether it does here.
pub(crate) const COPY_ZERO: Experiment = Experiment {
    family: Family::Hierarchy,
    variant: "copy_zero",
    kernel: Some("copy_peak"),
    cases: copy_zero_cases,
    measure: Measure::Kernel,
    twin: Twin::cuda("copy_peak"),
};

/// The staged and persist experiments' stream at most ([`staged_bytes`]).
const STAGED_FULL_BYTES: u64 = 256 << 20;

/// Words with all 32 bits random, made piece by piece: never held whole.
fn random_words(words: usize, seed: u64) -> Words {
    Words::made(words, move |i| (mix(i, seed) & 0xFFFF_FFFF) as u32)
}

/// The wrapping sum of the four words of each vec4 of `words`.
fn vec4_sums(words: &Words) -> Vec<u32> {
    block_sums(words, 4)
}

/// Sizes from `min` to `max` bytes in `steps_per_octave` geometric steps, each rounded
/// to a multiple of `rounding`; no size twice.
#[expect(
    clippy::cast_possible_truncation,
    reason = "a size between `min` and `max`, both u64, rounded to a multiple of `rounding`"
)]
fn geometric_sizes(min: u64, max: u64, steps_per_octave: u32, rounding: u64) -> Vec<u64> {
    let mut sizes: Vec<u64> = (0..)
        .map(|step| {
            let exact = min as f64 * 2f64.powf(f64::from(step) / f64::from(steps_per_octave));
            ((exact / rounding as f64).round() as u64).max(1) * rounding
        })
        .take_while(|&bytes| bytes <= max)
        .collect();
    sizes.dedup();
    sizes
}

/// Workgroups of `window` and `shared`, and their loads (or passes) at full size.
fn workgroups_and_repeats(sizing: &Sizing, full_repeats: u32) -> (u32, u32) {
    if sizing.quick || sizing.software {
        (SMALL_WORKGROUPS, SMALL_REPEATS)
    } else {
        (FULL_WORKGROUPS, full_repeats)
    }
}

/// Why a working set of `bytes` cannot be bound here, if it cannot.
fn binding_skip(bytes: u64, sizing: &Sizing) -> Option<String> {
    (bytes > sizing.max_binding_bytes).then(|| {
        format!(
            "{bytes} bytes exceed the device's largest buffer binding of {} bytes",
            sizing.max_binding_bytes
        )
    })
}

fn window_sizes(sizing: &Sizing) -> Vec<u64> {
    let max = sizing
        .buffer_bytes
        .unwrap_or(WINDOW_MAX_BYTES)
        .clamp(WINDOW_MIN_BYTES, WINDOW_MAX_BYTES);
    geometric_sizes(
        WINDOW_MIN_BYTES,
        max,
        WINDOW_STEPS_PER_OCTAVE,
        WINDOW_ROUNDING_BYTES,
    )
}

fn window_cases(sizing: &Sizing) -> Vec<Case> {
    window_sizes(sizing)
        .into_iter()
        .map(|bytes| window_case(sizing, bytes, CudaLaunch::Plain))
        .collect()
}

/// `window_carveout` sweeps `window`'s range in steps of 2^(1/2): two carve-outs at
/// `window`'s 33 sizes would cost a full run about 5 s more for the same two ends.
const CARVEOUT_STEPS_PER_OCTAVE: u32 = 2;

fn window_carveout_cases(sizing: &Sizing) -> Vec<Case> {
    CARVEOUTS
        .into_iter()
        .flat_map(|percent| {
            window_sizes(sizing)
                .into_iter()
                .step_by((WINDOW_STEPS_PER_OCTAVE / CARVEOUT_STEPS_PER_OCTAVE) as usize)
                .map(move |bytes| window_case(sizing, bytes, CudaLaunch::Carveout { percent }))
        })
        .collect()
}

/// The `window` case of `bytes`, launched by CUDA as `launch` says (and its params
/// with the carve-out, if it sets one).
fn window_case(sizing: &Sizing, bytes: u64, launch: CudaLaunch) -> Case {
    let (groups, loads) = workgroups_and_repeats(sizing, FULL_WINDOW_LOADS);
    let vec4s = crate::suite::count(bytes / VEC4_BYTES);
    // Enough loads for each workgroup's band to cover the whole window.
    let loads = loads.max(vec4s.div_ceil(WORKGROUP));
    let params = WindowParams {
        vec4s,
        loads,
        rotation: WINDOW_ROTATION,
    };
    let case_params = match launch {
        CudaLaunch::Carveout { percent } => params!(Footprint => bytes, Carveout => percent),
        _ => params!(Footprint => bytes),
    };
    summing_case(
        sizing,
        (bytes, case_params, launch),
        groups,
        loads,
        params,
        WINDOW_SEED,
        window_reference,
    )
}

/// Each workgroup's sum: workgroup g reads the vec4s from (g × rotation) mod n on,
/// `WORKGROUP_SIZE` × loads of them round the window, so its sum is whole turns of the
/// window plus one stretch, from prefix sums.
#[expect(
    clippy::cast_possible_truncation,
    reason = "`total` wraps mod 2^32, so `turns` counts mod 2^32 alike"
)]
fn window_reference(src: &Words, params: WindowParams, groups: u32) -> Vec<u32> {
    let n = params.vec4s as u64;
    let mut prefix = Vec::with_capacity(crate::host_len(n) + 1);
    prefix.push(0u32);
    for sum in vec4_sums(src) {
        prefix.push(prefix[prefix.len() - 1].wrapping_add(sum));
    }
    let total = prefix[crate::host_len(n)];
    // The sum of the `len` (< n) vec4s from `start` on, round the window.
    let stretch = |start: u64, len: u64| {
        let end = start + len;
        if end <= n {
            prefix[crate::host_len(end)].wrapping_sub(prefix[crate::host_len(start)])
        } else {
            total
                .wrapping_sub(prefix[crate::host_len(start)])
                .wrapping_add(prefix[crate::host_len(end - n)])
        }
    };
    let read = u64::from(WORKGROUP) * u64::from(params.loads);
    (0..groups)
        .map(|group| {
            let start = (group.wrapping_mul(params.rotation) as u64) % n;
            let turns = (read / n) as u32;
            total
                .wrapping_mul(turns)
                .wrapping_add(stretch(start, read % n))
        })
        .collect()
}

fn shared_sizes(sizing: &Sizing) -> Vec<u64> {
    let max = sizing
        .sweep_max_bytes(
            SHARED_FULL_MAX_BYTES,
            SHARED_SOFTWARE_MAX_BYTES,
            SHARED_QUICK_MAX_BYTES,
        )
        .max(SHARED_MIN_BYTES);
    geometric_sizes(SHARED_MIN_BYTES, max, SHARED_STEPS_PER_OCTAVE, CHUNK_BYTES)
}

#[expect(
    clippy::cast_possible_truncation,
    reason = "the step is SHARED_STEP_SHARE (< 1) of `chunks`, a u32"
)]
fn shared_cases(sizing: &Sizing) -> Vec<Case> {
    let (groups, passes) = workgroups_and_repeats(sizing, FULL_SHARED_PASSES);
    shared_sizes(sizing)
        .into_iter()
        .map(|bytes| {
            let chunks = crate::suite::count(bytes / CHUNK_BYTES);
            let params = SharedParams {
                chunks,
                passes,
                step: (f64::from(chunks) * SHARED_STEP_SHARE) as u32,
            };
            summing_case(
                sizing,
                (bytes, params!(Footprint => bytes), CudaLaunch::Plain),
                groups,
                passes,
                params,
                SHARED_SEED,
                shared_reference,
            )
        })
        .collect()
}

/// A `window` or `shared` case: `groups` workgroups each reading `repeats` vec4s per
/// invocation out of `bytes` of random words (`seed`) and writing one sum, which
/// `reference` computes; the case's params and its CUDA launch beside `bytes`.
fn summing_case<P: Pod + Send + Sync>(
    sizing: &Sizing,
    (bytes, case_params, launch): (u64, Params, CudaLaunch),
    groups: u32,
    repeats: u32,
    params: P,
    seed: u64,
    reference: fn(&Words, P, u32) -> Vec<u32>,
) -> Case {
    let reads = u64::from(groups) * u64::from(WORKGROUP) * u64::from(repeats);
    let words = (bytes / 4) as usize;
    Case::builder(sizing, case_params)
        .workgroup([WORKGROUP, 1, 1], 4 * WORKGROUP)
        .grid(Grid::OneD, groups.into())
        .constant("WORKGROUP_SIZE", f64::from(WORKGROUP))
        .moves(4 * reads, VEC4_BYTES * reads)
        .skip_if(binding_skip(bytes, sizing))
        .cuda_launch(launch)
        .buffers(vec![
            Buffer::uniform(params),
            Buffer::Input(words),
            Buffer::Output(groups as usize),
        ])
        .data(move || {
            let src = random_words(words, seed);
            let sums = reference(&src, params, groups);
            CaseData {
                inputs: vec![src],
                expected: vec![Expected::Exact(sums.into())],
            }
        })
}

/// The wrapping sum of each block of `block_words` words.
fn block_sums(src: &Words, block_words: usize) -> Vec<u32> {
    src.block_folds(block_words, |block| {
        block.iter().fold(0u32, |sum, &w| sum.wrapping_add(w))
    })
}

/// Each workgroup's sum: the sums of the chunks it reads, (g + pass × step) mod chunks.
fn shared_reference(src: &Words, params: SharedParams, groups: u32) -> Vec<u32> {
    let chunk_sums = block_sums(src, (CHUNK_BYTES / 4) as usize);
    (0..groups)
        .into_par_iter()
        .map(|group| {
            let mut chunk = group % params.chunks;
            let mut sum = 0u32;
            for _ in 0..params.passes {
                sum = sum.wrapping_add(chunk_sums[chunk as usize]);
                chunk += params.step;
                if chunk >= params.chunks {
                    chunk -= params.chunks;
                }
            }
            sum
        })
        .collect()
}

/// Bytes of the DRAM experiments' buffer: a whole number of chunks, within the
/// device's binding limit.
fn dram_bytes(sizing: &Sizing) -> u64 {
    let wanted = sizing.sweep_max_bytes(
        DRAM_FULL_BYTES,
        SHARED_SOFTWARE_MAX_BYTES,
        SHARED_QUICK_MAX_BYTES,
    );
    (wanted.min(sizing.max_binding_bytes) / CHUNK_BYTES).max(1) * CHUNK_BYTES
}

/// The staged experiments' buffer: the DRAM experiments' at most 256 MiB, five times an
/// H200's L2 and so read from DRAM, where 1 GiB made 12 cases cost 4 GiB more of
/// inputs to make and upload.
fn staged_bytes(sizing: &Sizing) -> u64 {
    dram_bytes(sizing).min(STAGED_FULL_BYTES)
}

/// Workgroups of a grid-stride loop over `vec4s`.
fn dram_workgroups(vec4s: u64) -> u32 {
    (vec4s / (u64::from(WORKGROUP) * DRAM_MIN_ITERATIONS)).clamp(1, DRAM_WORKGROUPS) as u32
}

/// A grid-stride DRAM case over `bytes`, of `vec4s` vec4s moving `moved` bytes.
fn dram_case(
    sizing: &Sizing,
    bytes: u64,
    groups: u32,
    moved: u64,
) -> crate::suite::CaseBuilder<'_> {
    let vec4s = bytes / VEC4_BYTES;
    Case::builder(sizing, params!(Size => bytes))
        .workgroup([WORKGROUP, 1, 1], 4 * WORKGROUP)
        .grid(Grid::OneD, groups.into())
        .constant("WORKGROUP_SIZE", f64::from(WORKGROUP))
        .moves(4 * vec4s, moved)
}

fn dram_read_cases(sizing: &Sizing) -> Vec<Case> {
    let bytes = dram_bytes(sizing);
    let vec4s = bytes / VEC4_BYTES;
    let groups = dram_workgroups(vec4s);
    let words = (bytes / 4) as usize;
    vec![
        dram_case(sizing, bytes, groups, bytes)
            .buffers(vec![
                Buffer::uniform(Vec4sParams {
                    vec4s: crate::suite::count(vec4s),
                }),
                Buffer::Input(words),
                Buffer::Output(groups as usize),
            ])
            .data(move || {
                let src = random_words(words, DRAM_SEED);
                let sums = dram_read_reference(&src, groups);
                CaseData {
                    inputs: vec![src],
                    expected: vec![Expected::Exact(sums.into())],
                }
            }),
    ]
}

/// Each workgroup's sum: a grid-stride loop gives workgroup g every `groups`th block
/// of `WORKGROUP_SIZE` vec4s from block g on.
fn dram_read_reference(src: &Words, groups: u32) -> Vec<u32> {
    let blocks = block_sums(src, (CHUNK_BYTES / 4) as usize);
    (0..groups as usize)
        .into_par_iter()
        .map(|group| {
            blocks
                .iter()
                .skip(group)
                .step_by(groups as usize)
                .fold(0u32, |sum, &b| sum.wrapping_add(b))
        })
        .collect()
}

/// The shader's `pattern(i)`: the four words of vec4 `i`.
fn pattern(i: u32) -> [u32; 4] {
    let h = (i ^ 0x9E37_79B9).wrapping_mul(0x85EB_CA6B);
    [h, h ^ 0xC2B2_AE35, h.wrapping_mul(0x27D4_EB2F), !h].map(|w| w | 1)
}

fn dram_write_cases(sizing: &Sizing) -> Vec<Case> {
    let bytes = dram_bytes(sizing);
    let vec4s = bytes / VEC4_BYTES;
    vec![
        dram_case(sizing, bytes, dram_workgroups(vec4s), bytes)
            .buffers(vec![
                Buffer::uniform(Vec4sParams {
                    vec4s: crate::suite::count(vec4s),
                }),
                Buffer::Output((bytes / 4) as usize),
            ])
            .data(move || {
                let expected = |i: usize| pattern(crate::suite::count((i / 4) as u64))[i % 4];
                CaseData {
                    inputs: Vec::new(),
                    expected: vec![Expected::Exact(Words::made(4 * vec4s as usize, expected))],
                }
            }),
    ]
}

fn dram_copy_cases(sizing: &Sizing) -> Vec<Case> {
    let bytes = dram_bytes(sizing);
    let vec4s = bytes / VEC4_BYTES;
    let words = (bytes / 4) as usize;
    vec![
        dram_case(sizing, bytes, dram_workgroups(vec4s), 2 * bytes)
            .buffers(vec![
                Buffer::uniform(Vec4sParams {
                    vec4s: crate::suite::count(vec4s),
                }),
                Buffer::Input(words),
                Buffer::Output(words),
            ])
            .data(move || {
                let src = random_words(words, DRAM_SEED);
                let expected = Expected::Exact(src.clone());
                CaseData {
                    inputs: vec![src],
                    expected: vec![expected],
                }
            }),
    ]
}

fn copy_zero_cases(sizing: &Sizing) -> Vec<Case> {
    let bytes = dram_bytes(sizing);
    let words = (bytes / 4) as usize;
    let vec4s = words / 4;
    let invocations = copy::grid_stride_invocations(vec4s);
    let groups = (invocations as u64).div_ceil(u64::from(copy::DEFAULT_WORKGROUP));
    ["zero", "random"]
        .into_iter()
        .map(|data| {
            Case::builder(sizing, params!(Size => bytes, Data => data))
                .workgroup([copy::DEFAULT_WORKGROUP, 1, 1], 0)
                .grid(Grid::TwoD, groups)
                .constant("WORKGROUP_SIZE", f64::from(copy::DEFAULT_WORKGROUP))
                .moves(words as u64, 2 * bytes)
                .buffers(vec![
                    Buffer::uniform(Vec4sParams {
                        vec4s: crate::suite::count(vec4s as u64),
                    }),
                    Buffer::Input(words),
                    Buffer::Output(words),
                ])
                .data(move || {
                    let src = if data == "zero" {
                        Words::made(words, |_| 0)
                    } else {
                        random_words(words, DRAM_SEED)
                    };
                    let expected = Expected::Exact(src.clone());
                    CaseData {
                        inputs: vec![src],
                        expected: vec![expected],
                    }
                })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suite::Key;

    fn footprints(cases: &[Case]) -> Vec<u64> {
        cases
            .iter()
            .map(|c| c.params.number(Key::Footprint).unwrap())
            .collect()
    }

    /// Each size at most `ratio` times the one before, and larger.
    fn assert_steps(sizes: &[u64], ratio: f64) {
        for pair in sizes.windows(2) {
            assert!(pair[1] > pair[0], "{pair:?}");
            assert!(pair[1] as f64 <= ratio * pair[0] as f64, "{pair:?}");
        }
    }

    #[test]
    fn full_sizing_sweeps_the_window_and_the_shared_buffer_in_small_steps() {
        let sizing = Sizing::nominal(false);
        let window = footprints(&window_cases(&sizing));
        assert_eq!(window.len(), 33);
        assert_eq!((window[0], window[32]), (4 << 10, 1 << 20));
        assert_steps(&window, 1.25);
        assert!(window.iter().all(|b| b % WINDOW_ROUNDING_BYTES == 0));
        let shared = footprints(&shared_cases(&sizing));
        assert_eq!(shared.len(), 51);
        assert_eq!((shared[0], shared[50]), (1 << 20, 1 << 30));
        assert_steps(&shared, 1.15);
        assert!(shared.iter().all(|b| b % CHUNK_BYTES == 0));
        for case in window_cases(&sizing).iter().chain(&shared_cases(&sizing)) {
            assert!(case.skip.is_none(), "{}", case.params);
            assert_eq!(case.workgroups, [FULL_WORKGROUPS, 1, 1]);
            assert_eq!(case.buffers[2], Buffer::Output(FULL_WORKGROUPS as usize));
            let footprint = case.params.number(Key::Footprint).unwrap();
            assert_eq!(case.buffers[1].len_bytes(), footprint);
            // Bytes are the bytes read: every invocation's vec4s.
            assert_eq!(case.bytes, 4 * case.elements);
            assert!(case.bytes >= 8 << 30, "{}: {}", case.params, case.bytes);
        }
        for cases in [dram_read_cases(&sizing), dram_write_cases(&sizing)] {
            assert_eq!(cases[0].bytes, 1 << 30);
        }
        assert_eq!(dram_copy_cases(&sizing)[0].bytes, 2 << 30);
        assert_eq!(copy_zero_cases(&sizing).len(), 2);
    }

    #[test]
    fn quick_and_software_sizings_shrink_and_limits_skip() {
        let quick = Sizing::nominal(true);
        assert_eq!(window_cases(&quick).len(), 33);
        assert_eq!(shared_cases(&quick).len(), 11);
        assert_eq!(dram_bytes(&quick), SHARED_QUICK_MAX_BYTES);
        let software = Sizing {
            software: true,
            max_binding_bytes: 32 << 20,
            ..Sizing::nominal(false)
        };
        let shared = shared_cases(&software);
        assert_eq!(footprints(&shared).last(), Some(&SHARED_SOFTWARE_MAX_BYTES));
        for case in shared.iter().chain(&window_cases(&software)) {
            let beyond = case.params.number(Key::Footprint) > Some(32 << 20);
            assert_eq!(case.skip.is_some(), beyond, "{}", case.params);
            assert_eq!(case.workgroups, [SMALL_WORKGROUPS, 1, 1]);
            // Within llvmpipe's 65535 loop iterations.
            assert!(case.elements / 4 / u64::from(SMALL_WORKGROUPS * WORKGROUP) < 65535);
        }
        // The DRAM buffer shrinks to the binding limit rather than skip.
        assert_eq!(dram_bytes(&software), 32 << 20);
        let tiny = Sizing {
            buffer_bytes: Some(64 << 10),
            ..Sizing::nominal(true)
        };
        assert_eq!(footprints(&window_cases(&tiny)).last(), Some(&(64 << 10)));
        assert_eq!(footprints(&shared_cases(&tiny)), [SHARED_MIN_BYTES]);
        assert_eq!(dram_bytes(&tiny), 64 << 10);
    }

    #[test]
    fn carveout_cases_are_the_window_sweep_at_each_carveout() {
        let sizing = Sizing::nominal(false);
        let window = window_cases(&sizing);
        let carveout = window_carveout_cases(&sizing);
        let every_other = window.iter().step_by(2);
        assert_eq!(carveout.len(), CARVEOUTS.len() * every_other.len());
        for (case, plain) in carveout.iter().zip(every_other.cycle()) {
            assert_eq!(
                case.params.number(Key::Footprint),
                plain.params.number(Key::Footprint)
            );
            assert_eq!(case.buffers, plain.buffers);
            assert!(matches!(case.cuda_launch, CudaLaunch::Carveout { .. }));
        }
    }

    #[test]
    fn every_window_workgroup_reads_every_line() {
        for sizing in [Sizing::nominal(false), Sizing::nominal(true)] {
            for case in window_cases(&sizing) {
                let Buffer::Uniform(words) = &case.buffers[0] else {
                    panic!("no uniform");
                };
                let (vec4s, loads) = (words[0], words[1]);
                assert!(loads * WORKGROUP >= vec4s, "{}", case.params);
            }
        }
    }

    /// The shader's loops, run on the CPU for a small grid.
    #[test]
    fn references_agree_with_a_literal_walk() {
        let src = random_words(4 * 300, 5);
        let sums = vec4_sums(&src);
        let window = WindowParams {
            vec4s: 300,
            loads: 3,
            rotation: WINDOW_ROTATION,
        };
        let expected = window_reference(&src, window, 5);
        for group in 0..5u32 {
            let mut sum = 0u32;
            for lid in 0..WORKGROUP {
                let mut at = (group * window.rotation + lid) % window.vec4s;
                for _ in 0..window.loads {
                    sum = sum.wrapping_add(sums[at as usize]);
                    at += WORKGROUP;
                    if at >= window.vec4s {
                        at -= window.vec4s;
                    }
                }
            }
            assert_eq!(sum, expected[group as usize], "window group {group}");
        }
        let src = random_words(4 * 256 * 7, 6);
        let sums = vec4_sums(&src);
        let shared = SharedParams {
            chunks: 7,
            passes: 9,
            step: 4,
        };
        let expected = shared_reference(&src, shared, 10);
        for group in 0..10u32 {
            let mut sum = 0u32;
            let mut chunk = group % shared.chunks;
            for _ in 0..shared.passes {
                for lid in 0..WORKGROUP {
                    sum = sum.wrapping_add(sums[(chunk * WORKGROUP + lid) as usize]);
                }
                chunk = (chunk + shared.step) % shared.chunks;
            }
            assert_eq!(sum, expected[group as usize], "shared group {group}");
        }
        let expected = dram_read_reference(&src, 3);
        assert_eq!(expected.len(), 3);
        for (group, &expected) in expected.iter().enumerate() {
            let grid = 3 * WORKGROUP as usize;
            let mut sum = 0u32;
            for lid in 0..WORKGROUP as usize {
                let mut i = group * WORKGROUP as usize + lid;
                while i < sums.len() {
                    sum = sum.wrapping_add(sums[i]);
                    i += grid;
                }
            }
            assert_eq!(sum, expected, "dram_read group {group}");
        }
    }

    #[test]
    fn data_is_random_and_agrees_with_the_buffers_except_the_zero_case() {
        let sizing = Sizing::nominal(true);
        for experiment in EXPERIMENTS {
            for case in (experiment.cases)(&sizing) {
                let data = (case.data)();
                crate::suite::check_inputs(&case.buffers, &data.inputs).unwrap();
                assert_eq!(data.expected.len(), 1);
                let zero = case.params.get(Key::Data) == Some(&"zero".into());
                for input in &data.inputs {
                    let input = input.whole();
                    let zeros = input.iter().filter(|&&w| w == 0).count();
                    if zero {
                        assert_eq!(zeros, input.len());
                    } else {
                        // All 32 bits random: the exponent's bits vary too.
                        assert!(zeros < 4, "{}: {zeros} zeros", case.params);
                        let tops: std::collections::HashSet<u32> =
                            input.iter().map(|&w| w >> 23).collect();
                        assert!(tops.len() > 64, "{}", case.params);
                    }
                }
            }
        }
        let Expected::Exact(written) = &(dram_write_cases(&sizing)[0].data)().expected[0] else {
            panic!("checked exactly");
        };
        let written = written.whole();
        assert!(written.iter().all(|&w| w != 0));
        assert_eq!(written[4..8], pattern(1));
    }
}
