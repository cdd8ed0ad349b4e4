//! The one registry of experiments, and the vocabulary every family declares itself in.
//!
//! An [`Experiment`] is a kernel (a WGSL file in `shaders/`), its binding signature, the
//! claim it tests, how it is measured ([`Measure`]: a kernel on the GPU clock, or a
//! host↔device transfer on the host clock) and a function that expands it into
//! [`Case`]s sized for a device. A
//! case is cheap to list and declares its buffers' sizes; its data ([`CaseData`]:
//! inputs and the CPU reference) is built only when the case runs. The CLI, the benches and the tests all
//! iterate [`REGISTRY`]; nothing lists experiments a second time.

pub mod families;
pub mod shaders;

use families::{bank, constant, copy, localmem, reduce, stencil, subgroup, transfer, transpose};

use std::sync::Arc;

/// Every experiment of the suite, in the order runs and reports show them.
pub static REGISTRY: &[Experiment] = &[
    copy::OFFSET,
    copy::STRIDE,
    copy::PEAK,
    copy::LAUNCH,
    transpose::COPY_ROW,
    transpose::COPY_COL,
    transpose::NAIVE_ROW,
    transpose::NAIVE_COL,
    transpose::NAIVE_ROW_UNROLL4,
    transpose::NAIVE_COL_UNROLL4,
    transpose::DIAGONAL_ROW,
    transpose::DIAGONAL_COL,
    transpose::SMEM,
    transpose::SMEM_PAD,
    transpose::SMEM_UNROLL_PAD,
    transpose::SMEM_PAD_VEC4,
    reduce::NEIGHBORED,
    reduce::NEIGHBORED_LESS,
    reduce::INTERLEAVED,
    reduce::UNROLL2,
    reduce::UNROLL4,
    reduce::UNROLL8,
    reduce::UNROLL8_LASTWARP,
    reduce::SMEM,
    reduce::SMEM_OVERRIDE,
    reduce::SMEM_UNROLL4,
    reduce::SUBGROUP_SHUFFLE,
    reduce::SUBGROUP_ADD,
    subgroup::BROADCAST,
    subgroup::SHUFFLE_UP,
    subgroup::SHUFFLE_DOWN,
    subgroup::SHUFFLE_XOR,
    subgroup::SWAP,
    bank::ROW_ROW,
    bank::COL_COL,
    bank::ROW_COL,
    bank::ROW_COL_OVERRIDE,
    bank::ROW_COL_PAD,
    bank::ROW_COL_OVERRIDE_PAD,
    bank::RECT_ROW_ROW,
    bank::RECT_ROW_COL,
    bank::RECT_ROW_COL_PAD,
    bank::STRIDE,
    constant::UNIFORM,
    constant::STORAGE,
    stencil::UNIFORM_COEF,
    stencil::STORAGE_COEF,
    stencil::CONST_COEF,
    stencil::GLOBAL_DIRECT,
    localmem::REGISTER_ARRAY,
    localmem::DYNAMIC_INDEX,
    transfer::UPLOAD_WRITE_BUFFER,
    transfer::UPLOAD_STAGING,
    transfer::UPLOAD_STAGING_POOLED,
    transfer::UPLOAD_MAPPABLE,
    transfer::READBACK,
    transfer::DEVICE_COPY,
    transfer::OVERLAP_SERIAL,
    transfer::OVERLAP_INTERLEAVED,
];

/// One experiment: one kernel (or a transfer) and the cases it is measured at.
pub struct Experiment {
    pub family: &'static str,
    pub variant: &'static str,
    /// Shader file stem in `shaders/`; also the pipeline label. `None` for a pure
    /// transfer, which runs no kernel (and so is neither reflected nor simulated).
    pub kernel: Option<&'static str>,
    /// Binding signature, in `@binding(i)` order (all in `@group(0)`).
    pub bindings: &'static [Binding],
    /// Size in bytes of the uniform struct at the kernel's uniform binding, if any.
    pub uniform_bytes: Option<u64>,
    /// What the classic texts expect this experiment to show.
    pub claim: &'static str,
    /// Expands the experiment into cases sized for a device.
    pub cases: fn(&Sizing) -> Vec<Case>,
    /// What is timed, and on which clock.
    pub measure: Measure,
}

/// How an experiment is measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Measure {
    /// Build the kernel, verify one dispatch, time dispatches on the GPU clock
    /// ([`crate::backend::wgpu::timing`]).
    Kernel,
    /// Move bytes between host and device (or within the device) along a path, verify
    /// what arrived, and time it from the call to the moment the data is usable
    /// ([`crate::backend::wgpu::transfer`]).
    Transfer(TransferPath),
}

/// The ways bytes travel between host and device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TransferPath {
    /// `queue.write_buffer` into a storage buffer.
    WriteBuffer,
    /// A staging buffer created mapped, filled, unmapped and copied; `pooled`: one kept
    /// and mapped again after each use instead of a fresh one per transfer.
    Staging { pooled: bool },
    /// Storage the host maps and fills directly (`MAP_WRITE | STORAGE`, which needs
    /// `Features::MAPPABLE_PRIMARY_BUFFERS`).
    MappableStorage,
    /// A copy into a mapped staging buffer, mapped and read by the host.
    Readback,
    /// `copy_buffer_to_buffer` between two storage buffers.
    DeviceCopy,
    /// Chunks each uploaded and then processed by the experiment's kernel.
    Overlap(Schedule),
}

/// The order of a chunked upload-and-process workload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Schedule {
    /// Every chunk uploaded, then every chunk processed.
    Serial,
    /// Chunk by chunk: upload, then process, each chunk in its own submission.
    Interleaved,
}

impl Experiment {
    /// `family/variant`, the prefix of every case id.
    pub fn name(&self) -> String {
        format!("{}/{}", self.family, self.variant)
    }
}

/// How a kernel sees one buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Binding {
    Uniform,
    ReadOnly,
    ReadWrite,
}

/// The limits and settings that size cases for one device.
#[derive(Clone, Debug)]
pub struct Sizing {
    /// Shrink every working set for a fast correctness run (CI, lavapipe).
    pub quick: bool,
    /// Requested size of the main buffer of streaming experiments, in bytes.
    pub buffer_bytes: Option<u64>,
    /// A software adapter (lavapipe): its timings only show that the suite runs.
    pub software: bool,
    pub max_binding_bytes: u64,
    pub max_workgroup_invocations: u32,
    pub max_workgroups_per_dimension: u32,
    /// Bytes of `var<workgroup>` storage one workgroup may use.
    pub max_workgroup_storage_bytes: u32,
    /// Storage buffers the host may map (`Features::MAPPABLE_PRIMARY_BUFFERS`).
    pub mappable_storage: bool,
    /// The adapter's subgroup sizes (smallest, largest); `None` without
    /// `Features::SUBGROUP`.
    pub subgroup_sizes: Option<(u32, u32)>,
    /// Requested matrix size (columns, rows) of the 2-D experiments (`--size`).
    pub matrix: Option<(u32, u32)>,
}

impl Sizing {
    /// Default bytes per buffer for streaming (DRAM) experiments: far beyond any L2
    /// (50-60 MB on H100/H200) at full size, small with `--quick`.
    const FULL_BUFFER_BYTES: u64 = 256 << 20;
    /// Software adapters run a scalar copy at about 1 GB/s on a few cores: a full run
    /// at GPU sizes would take most of an hour.
    const SOFTWARE_BUFFER_BYTES: u64 = 16 << 20;
    const QUICK_BUFFER_BYTES: u64 = 4 << 20;

    /// Nominal limits of a large GPU, for listing cases without a device.
    pub fn nominal(quick: bool) -> Self {
        Sizing {
            quick,
            buffer_bytes: None,
            software: false,
            max_binding_bytes: 2 << 30,
            max_workgroup_invocations: 1024,
            max_workgroups_per_dimension: 65535,
            max_workgroup_storage_bytes: 48 << 10,
            mappable_storage: true,
            subgroup_sizes: Some((32, 32)),
            matrix: None,
        }
    }

    /// Why a kernel that needs subgroup operations cannot run here, if it cannot.
    pub fn subgroup_skip(&self) -> Option<String> {
        self.subgroup_sizes
            .is_none()
            .then(|| "the adapter does not offer subgroup operations (Features::SUBGROUP)".into())
    }

    /// Why a workgroup of `invocations` using `storage_bytes` of workgroup memory
    /// cannot run here, if it cannot.
    pub fn workgroup_skip(&self, invocations: u32, storage_bytes: u32) -> Option<String> {
        if invocations > self.max_workgroup_invocations {
            Some(format!(
                "workgroup of {invocations} exceeds the adapter's {} invocations",
                self.max_workgroup_invocations
            ))
        } else if storage_bytes > self.max_workgroup_storage_bytes {
            Some(format!(
                "{storage_bytes} bytes of workgroup memory exceed the adapter's {}",
                self.max_workgroup_storage_bytes
            ))
        } else {
            None
        }
    }

    /// Bytes of the main buffer of a streaming experiment: the requested size, or the
    /// default capped by the device's binding limit (checked against it elsewhere).
    pub fn stream_buffer_bytes(&self) -> u64 {
        let default = if self.quick {
            Self::QUICK_BUFFER_BYTES
        } else if self.software {
            Self::SOFTWARE_BUFFER_BYTES
        } else {
            Self::FULL_BUFFER_BYTES
        };
        self.buffer_bytes
            .unwrap_or_else(|| default.min(self.max_binding_bytes))
    }
}

/// One measurable configuration of an experiment.
pub struct Case {
    /// `key=value` pairs joined by `;`, e.g. `offset=3` or `wg=256;grid=1d`.
    pub param: String,
    pub workgroup_size: [u32; 3],
    /// Pipeline-overridable constants, by name.
    pub overrides: Vec<(&'static str, f64)>,
    /// Workgroup counts of one dispatch.
    pub workgroups: [u32; 3],
    /// Useful elements the kernel moves (for the CSV).
    pub elements: u64,
    /// Bytes the kernel must read plus bytes it must write: the numerator of its
    /// effective bandwidth.
    pub bytes: u64,
    /// Why this case cannot run on this device, if it cannot.
    pub skip: Option<String>,
    /// The buffers in binding order.
    pub buffers: Vec<Buffer>,
    /// Builds the inputs and the reference outputs; called only when the case runs.
    pub data: Arc<dyn Fn() -> CaseData + Send + Sync>,
}

impl Case {
    /// `WxHxD` with trailing 1s dropped, as the CSV's `workgroup` column.
    pub fn workgroup_label(&self) -> String {
        let [x, y, z] = self.workgroup_size;
        match (y, z) {
            (1, 1) => x.to_string(),
            (_, 1) => format!("{x}x{y}"),
            _ => format!("{x}x{y}x{z}"),
        }
    }
}

/// One binding's buffer as a case declares it: a uniform's contents, or the size of
/// an input or output in 32-bit words (every datum of the suite is a 4-byte f32, u32
/// or i32; uniform structs are whole words).
#[derive(Clone, Debug, PartialEq)]
pub enum Buffer {
    Uniform(Vec<u32>),
    Input(usize),
    /// Written by the kernel: created poisoned, then checked against the reference.
    Output(usize),
}

impl Buffer {
    /// The binding kind this buffer fills.
    pub fn binding(&self) -> Binding {
        match self {
            Buffer::Uniform(_) => Binding::Uniform,
            Buffer::Input(_) => Binding::ReadOnly,
            Buffer::Output(_) => Binding::ReadWrite,
        }
    }

    /// A uniform buffer holding `params` (a `#[repr(C)]` struct of whole words).
    pub fn uniform<P: bytemuck::Pod>(params: P) -> Buffer {
        Buffer::Uniform(words(params))
    }

    pub fn words(&self) -> usize {
        match self {
            Buffer::Uniform(words) => words.len(),
            Buffer::Input(words) | Buffer::Output(words) => *words,
        }
    }

    pub fn len_bytes(&self) -> u64 {
        4 * self.words() as u64
    }
}

/// A case's data: its inputs in binding order, and what each output must hold after
/// one dispatch, in binding order.
pub struct CaseData {
    pub inputs: Vec<Vec<u32>>,
    pub expected: Vec<Expected>,
}

/// A verification rule that only the output can complete (e.g. a result that depends
/// on the subgroup size the driver chose): `Ok`, or a one-line account of the failure.
pub type Rule = Box<dyn Fn(&[u32]) -> Result<(), String> + Send + Sync>;

/// What an output buffer must hold after one dispatch.
pub enum Expected {
    /// Bit for bit, poison included where the kernel must not write.
    Exact(Vec<u32>),
    /// f32 values each within `tolerance` of the reference, relative to
    /// max(1, |reference|): for kernels whose summation order differs from the CPU's.
    Approx { values: Vec<f32>, tolerance: f32 },
    /// `words` words that `rule` accepts.
    Rule { words: usize, rule: Rule },
}

impl Expected {
    pub fn len_words(&self) -> usize {
        match self {
            Expected::Exact(words) => words.len(),
            Expected::Approx { values, .. } => values.len(),
            Expected::Rule { words, .. } => *words,
        }
    }

    /// `Ok` if `actual` is what was expected, else a one-line account of the first
    /// mismatch and how many 32-bit words differ.
    pub fn check(&self, actual: &[u32]) -> Result<(), String> {
        let mut checker = self.checker();
        checker.feed(actual);
        checker.finish()
    }

    /// A check of an output that arrives in pieces, in order (read back through a
    /// staging buffer smaller than the output).
    pub fn checker(&self) -> Checker<'_> {
        Checker {
            expected: self,
            seen: 0,
            gathered: Vec::new(),
            differing: 0,
            first: None,
        }
    }
}

/// [`Expected::check`] of an output fed piece by piece: references are compared
/// piece by piece; a [`Rule`], which needs the whole output, gets it gathered.
pub struct Checker<'a> {
    expected: &'a Expected,
    /// Words fed so far.
    seen: usize,
    gathered: Vec<u32>,
    /// Words that differ from the reference so far, and an account of the first.
    differing: usize,
    first: Option<String>,
}

impl Checker<'_> {
    /// The next `piece` of the output.
    pub fn feed(&mut self, piece: &[u32]) {
        let offset = self.seen;
        self.seen += piece.len();
        let in_reference = |len| offset.min(len)..self.seen.min(len);
        match self.expected {
            Expected::Exact(expected) => {
                let expected = &expected[in_reference(expected.len())];
                self.count(
                    offset,
                    expected,
                    piece,
                    |e, a| e != a,
                    |e, a| format!("expected {e:#010x}, got {a:#010x}{}", never_written(a)),
                );
            }
            Expected::Approx { values, tolerance } => {
                let tolerance = *tolerance;
                let expected = &values[in_reference(values.len())];
                self.count(
                    offset,
                    expected,
                    piece,
                    |e, a| !within(f32::from_bits(a), e, tolerance),
                    |e, a| {
                        format!(
                            "expected {e}, got {}{}",
                            f32::from_bits(a),
                            never_written(a)
                        )
                    },
                );
            }
            Expected::Rule { .. } => self.gathered.extend_from_slice(piece),
        }
    }

    /// Counts the words of a piece starting at word `offset` that `differs` from
    /// their reference, on all cores, and keeps an `account` of the first.
    fn count<T: Copy + Sync>(
        &mut self,
        offset: usize,
        expected: &[T],
        piece: &[u32],
        differs: impl Fn(T, u32) -> bool + Sync,
        account: impl Fn(T, u32) -> String,
    ) {
        const PART: usize = 1 << 20;
        let parts = parallel_map(expected.len().div_ceil(PART), |part| {
            let start = part * PART;
            let end = (start + PART).min(expected.len());
            let mut differing = (start..end).filter(|&i| differs(expected[i], piece[i]));
            let first = differing.next();
            (first, first.map_or(0, |_| 1 + differing.count()))
        });
        for (first, count) in parts {
            self.differing += count;
            if let (None, Some(i)) = (&self.first, first) {
                self.first = Some(format!(
                    "first at word {}: {}",
                    offset + i,
                    account(expected[i], piece[i])
                ));
            }
        }
    }

    /// `Ok` if the whole output was what was expected.
    pub fn finish(self) -> Result<(), String> {
        let expected_words = self.expected.len_words();
        if self.seen != expected_words {
            return Err(format!(
                "output is {} words, expected {expected_words}",
                self.seen
            ));
        }
        match (self.expected, self.first) {
            (Expected::Rule { rule, .. }, _) => rule(&self.gathered),
            (_, None) => Ok(()),
            (Expected::Approx { tolerance, .. }, Some(first)) => Err(format!(
                "{} of {expected_words} values beyond the tolerance {tolerance:e}; {first}",
                self.differing
            )),
            (Expected::Exact(_), Some(first)) => Err(format!(
                "{} of {expected_words} words differ; {first}",
                self.differing
            )),
        }
    }
}

/// Whether `actual` is within `tolerance` of `expected`, relative to max(1, |expected|);
/// a NaN never is.
fn within(actual: f32, expected: f32, tolerance: f32) -> bool {
    (actual - expected).abs() <= tolerance * expected.abs().max(1.0)
}

fn never_written(word: u32) -> &'static str {
    if word == POISON {
        " (never written)"
    } else {
        ""
    }
}

/// The word every output buffer holds before a verification run: never a value any
/// kernel of the suite produces from its inputs (as f32 it is -6.3e18).
pub const POISON: u32 = 0xDEAD_BEEF;

/// How a grid wider than one dimension's workgroup limit is laid out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Grid {
    /// One row of workgroups: only possible up to the per-dimension limit.
    OneD,
    /// Rows of at most the per-dimension limit; kernels linearise
    /// `wid.y * nwg.x + wid.x` and drop the overhang with their bounds check.
    TwoD,
}

impl Grid {
    pub fn label(self) -> &'static str {
        match self {
            Grid::OneD => "1d",
            Grid::TwoD => "2d",
        }
    }

    /// Workgroup counts covering `groups` workgroups, or why this layout cannot.
    pub fn workgroups(self, groups: u64, max_per_dimension: u32) -> Result<[u32; 3], String> {
        let max = u64::from(max_per_dimension);
        let (x, y) = match self {
            Grid::OneD if groups <= max => (groups, 1),
            Grid::OneD => {
                return Err(format!(
                    "a 1-D dispatch of {groups} workgroups exceeds the limit of {max} per dimension"
                ));
            }
            Grid::TwoD => {
                let rows = groups.div_ceil(max).max(1);
                (groups.div_ceil(rows), rows)
            }
        };
        match (u32::try_from(x), u32::try_from(y)) {
            (Ok(x), Ok(y)) if y <= max_per_dimension => Ok([x, y, 1]),
            _ => Err(format!("{groups} workgroups do not fit a 2-D dispatch")),
        }
    }
}

/// Varied, non-zero f32 data in [1, 2), as bit patterns: a cheap integer hash of the index and seed,
/// so no two neighbours are equal and no value is zero, NaN or the poison word.
pub fn f32_data(len: usize, seed: u64) -> Vec<u32> {
    let mut data = vec![0u32; len];
    // 23 random mantissa bits under the exponent of 1.0.
    fill_parallel(&mut data, |i| {
        0x3F80_0000 | (mix(i, seed) as u32 & 0x007F_FFFF)
    });
    data
}

/// A 64-bit hash of an index and a seed (splitmix64's finaliser): the one source of
/// varied input data in the suite.
pub fn mix(i: usize, seed: u64) -> u64 {
    let mut x = (i as u64) ^ seed.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// The 32-bit words of a `#[repr(C)]` parameter struct, as a uniform buffer holds them.
pub fn words<P: bytemuck::Pod>(params: P) -> Vec<u32> {
    bytemuck::cast_slice(&[params]).to_vec()
}

/// Fills `out[i] = value(i)` on all cores: inputs of a GiB are made in a blink.
pub fn fill_parallel<T: Send>(out: &mut [T], value: impl Fn(usize) -> T + Sync) {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let chunk = out.len().div_ceil(threads).max(1 << 16);
    std::thread::scope(|scope| {
        for (c, part) in out.chunks_mut(chunk).enumerate() {
            let value = &value;
            scope.spawn(move || {
                for (j, slot) in part.iter_mut().enumerate() {
                    *slot = value(c * chunk + j);
                }
            });
        }
    });
}

/// `[f(0), f(1), ..]` for `len` items on all cores; unlike [`fill_parallel`], for
/// items that are each much work (a whole partial sum, a piece of an output).
pub fn parallel_map<T: Send>(len: usize, f: impl Fn(usize) -> T + Sync) -> Vec<T> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let chunk = len.div_ceil(threads).max(1);
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..len)
            .step_by(chunk)
            .map(|start| {
                let f = &f;
                scope.spawn(move || (start..(start + chunk).min(len)).map(f).collect::<Vec<_>>())
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|worker| {
                worker
                    .join()
                    .unwrap_or_else(|e| std::panic::resume_unwind(e))
            })
            .collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_d_grid_covers_and_stays_within_limits() {
        for groups in [1u64, 65535, 65536, 262_144, 1 << 20, 3_000_001] {
            let [x, y, z] = Grid::TwoD.workgroups(groups, 65535).unwrap_or([0; 3]);
            let total = u64::from(x) * u64::from(y) * u64::from(z);
            assert!(total >= groups, "{groups}: {x}x{y} too small");
            assert!(
                total - groups < u64::from(y),
                "{groups}: {x}x{y} wastes a row"
            );
            assert!(x <= 65535 && y <= 65535);
        }
    }

    #[test]
    fn one_d_grid_refuses_beyond_the_limit() {
        assert_eq!(Grid::OneD.workgroups(65535, 65535), Ok([65535, 1, 1]));
        assert!(Grid::OneD.workgroups(65536, 65535).is_err());
    }

    #[test]
    fn data_is_varied_and_never_zero_or_poison() {
        let data = f32_data(1 << 17, 7);
        assert!(
            data.iter()
                .all(|&v| (1.0..2.0).contains(&f32::from_bits(v)))
        );
        assert!(data.windows(2).filter(|w| w[0] == w[1]).count() < 4);
        assert!(data.iter().all(|&v| v != POISON));
        assert_ne!(f32_data(16, 1), f32_data(16, 2));
    }

    #[test]
    fn exact_check_names_first_mismatch_and_poison() {
        let expected = vec![1u32, 2, 3];
        assert!(Expected::Exact(expected.clone()).check(&expected).is_ok());
        let actual = [1u32, POISON, 4];
        let err = Expected::Exact(expected)
            .check(&actual)
            .err()
            .unwrap_or_default();
        assert!(
            err.starts_with("2 of 3 words differ; first at word 1"),
            "{err}"
        );
        assert!(err.contains("never written"), "{err}");
    }

    #[test]
    fn pieces_are_checked_as_the_whole_output() {
        let reference: Vec<u32> = (1..=10).collect();
        let mut actual = reference.clone();
        actual[3] = POISON;
        actual[8] = 0;
        let rule: Rule = Box::new(|words: &[u32]| {
            (words.iter().map(|&w| u64::from(w)).sum::<u64>() == 55)
                .then_some(())
                .ok_or_else(|| "sum".to_owned())
        });
        let expectations = [
            Expected::Exact(reference.clone()),
            Expected::Approx {
                values: reference.iter().map(|&w| w as f32).collect(),
                tolerance: 0.0,
            },
            Expected::Rule { words: 10, rule },
        ];
        let as_f32 =
            |words: &[u32]| -> Vec<u32> { words.iter().map(|&w| (w as f32).to_bits()).collect() };
        for expected in &expectations {
            for output in [reference.clone(), actual.clone(), reference[..9].to_vec()] {
                let output = match expected {
                    Expected::Approx { .. } => as_f32(&output),
                    _ => output,
                };
                let whole = expected.check(&output);
                for piece in [1, 3, 4, 16] {
                    let mut checker = expected.checker();
                    output.chunks(piece).for_each(|p| checker.feed(p));
                    assert_eq!(checker.finish(), whole, "pieces of {piece}");
                }
            }
        }
        let err = expectations[0].check(&actual).err().unwrap_or_default();
        assert!(
            err.starts_with("2 of 10 words differ; first at word 3"),
            "{err}"
        );
    }

    #[test]
    fn approx_check_is_relative_above_one_and_rejects_nan() {
        let expected = Expected::Approx {
            values: vec![0.5, 1000.0],
            tolerance: 1e-3,
        };
        let bits = |a: f32, b: f32| [a.to_bits(), b.to_bits()];
        assert!(expected.check(&bits(0.5009, 1000.9)).is_ok());
        assert!(expected.check(&bits(0.502, 1000.0)).is_err());
        assert!(expected.check(&bits(0.5, 1001.1)).is_err());
        assert!(expected.check(&bits(f32::NAN, 1000.0)).is_err());
        assert!(expected.check(&[0.5f32.to_bits()]).is_err());
    }
}
