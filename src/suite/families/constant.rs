//! constant — broadcast vs divergent reads through the constant path and the cached
//! global path.
//!
//! Reproduces the constant-memory experiments of the CUDA texts ("Professional CUDA C
//! Programming", chapter 5; the CUDA C++ Best Practices Guide, "Constant Memory"): a
//! small table read by every invocation, from a uniform buffer (WGSL's constant memory)
//! and from a read-only storage buffer (the read-only/L1 path). The texts expect the
//! constant path to serve one address per clock to a whole subgroup, so a read where all
//! lanes agree costs no more than a register, and a read where every lane wants its own
//! address is serialised (32 addresses, 32 times slower); the storage path coalesces the
//! same divergent read into a few sectors and barely notices.
//!
//! Each invocation folds `r` reads (1024 by default) of a 256-word table into its result
//! in order, reading element `k` (broadcast) or `i + k` (divergent) at step `k`, so no
//! read can be hoisted or dropped and the verified output depends on every one. Bytes
//! are the bytes the lanes read (4 per read): on-chip throughput, not DRAM bandwidth.

use bytemuck::{Pod, Zeroable};

use super::bank::{MIX, fold_periodic, on_chip_size};
use crate::params;
use crate::suite::{
    Buffer, Case, CaseData, Expected, Experiment, Family, Grid, Measure, Sizing, Twin, f32_data,
};

/// Words of the table: small enough for any constant cache (1 KiB), and a power of two
/// so that `index_mask` wraps the walk.
const TABLE_WORDS: u32 = 256;
const WORKGROUP: u32 = 256;

/// The `read=` values: every lane reads the same element, or each its own.
pub(crate) const READ_BROADCAST: &str = "broadcast";
pub(crate) const READ_DIVERGENT: &str = "divergent";

#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
struct Params {
    r: u32,
    index_mask: u32,
}

/// [`Params`] with the table after it, as `constant_uniform` declares them: the
/// table starts at the next 16-byte row.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
struct UniformParams {
    params: Params,
    _align: [u32; 2],
    table: [u32; TABLE_WORDS as usize],
}

/// The family's experiments, in the order runs and reports show them.
pub const EXPERIMENTS: &[Experiment] = &[UNIFORM, STORAGE];

/// The table in a uniform buffer (the constant path), which serves one address per
/// request at register speed (broadcast) and serialises distinct ones: divergent reads
/// of 32 lanes are expected about 32 times slower.
pub(crate) const UNIFORM: Experiment = Experiment {
    family: Family::Constant,
    variant: "uniform",
    kernel: Some("constant_uniform"),
    measure: Measure::Kernel,
    twin: Twin::cuda("constant"),
    cases: |sizing| cases(sizing, Path::Uniform),
};

/// The table in a read-only storage buffer, which coalesces divergent reads of
/// consecutive words into a few sectors: broadcast and divergent are expected to cost
/// about the same.
pub(crate) const STORAGE: Experiment = Experiment {
    family: Family::Constant,
    variant: "storage",
    kernel: Some("constant_storage"),
    measure: Measure::Kernel,
    twin: Twin::cuda("constant"),
    cases: |sizing| cases(sizing, Path::Storage),
};

#[derive(Clone, Copy, Debug, PartialEq)]
enum Path {
    Uniform,
    Storage,
}

/// Seed of the table's data.
const TABLE_SEED: u64 = 21;

fn cases(sizing: &Sizing, path: Path) -> Vec<Case> {
    [false, true]
        .into_iter()
        .map(|divergent| case(sizing, path, divergent))
        .collect()
}

fn case(sizing: &Sizing, path: Path, divergent: bool) -> Case {
    let (invocations, r) = on_chip_size(sizing);
    let params = Params {
        r,
        index_mask: TABLE_WORDS - 1,
    };
    let table = f32_data(TABLE_WORDS as usize, TABLE_SEED);
    let words = invocations as usize;
    let buffers = match path {
        Path::Uniform => {
            let mut uniform = UniformParams {
                params,
                _align: [0; 2],
                table: [0; TABLE_WORDS as usize],
            };
            uniform.table.copy_from_slice(&table);
            vec![Buffer::uniform(uniform), Buffer::Output(words)]
        }
        Path::Storage => vec![
            Buffer::uniform(params),
            Buffer::Input(TABLE_WORDS as usize),
            Buffer::Output(words),
        ],
    };
    let reads = u64::from(invocations) * u64::from(r);
    let read = if divergent {
        READ_DIVERGENT
    } else {
        READ_BROADCAST
    };
    Case::builder(sizing, params!(Read => read, Repeats => r))
        .workgroup([WORKGROUP, 1, 1], 0)
        .grid(Grid::OneD, u64::from(invocations / WORKGROUP))
        .constants([
            ("WORKGROUP_SIZE", f64::from(WORKGROUP)),
            ("DIVERGENT", f64::from(u8::from(divergent))),
            ("MIX", f64::from(MIX)),
        ])
        .moves(reads, 4 * reads)
        .buffers(buffers)
        .data(move || {
            let expected = reference(&table, r, divergent, words);
            CaseData {
                inputs: match path {
                    Path::Uniform => vec![],
                    Path::Storage => vec![table.clone().into()],
                },
                expected: vec![Expected::Exact(expected.into())],
            }
        })
}

/// What each of `words` invocations writes: the fold of its `r` reads, element
/// `(offset + k) mod 256` at step k, where the offset is the invocation's index in its
/// workgroup when divergent and 0 when broadcast. Only `WORKGROUP` distinct results.
fn reference(table: &[u32], r: u32, divergent: bool, words: usize) -> Vec<u32> {
    let mask = TABLE_WORDS - 1;
    let per_lane: Vec<u32> = (0..WORKGROUP)
        .map(|i| {
            let offset = if divergent { i } else { 0 };
            fold_periodic(r, TABLE_WORDS, |k| table[((offset + k) & mask) as usize])
        })
        .collect();
    (0..words)
        .map(|g| per_lane[g % WORKGROUP as usize])
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn broadcast_is_one_value_and_divergent_one_per_lane() {
        let table = f32_data(TABLE_WORDS as usize, TABLE_SEED);
        let broadcast = reference(&table, 64, false, 512);
        assert!(broadcast.iter().all(|&v| v == broadcast[0]));
        let divergent = reference(&table, 64, true, 512);
        assert_eq!(divergent[3], divergent[3 + 256]);
        let distinct: std::collections::BTreeSet<_> = divergent[..256].iter().collect();
        assert_eq!(distinct.len(), 256);
        // Lane 0 of the divergent case reads what every broadcast lane reads.
        assert_eq!(divergent[0], broadcast[0]);
    }

    #[test]
    fn the_uniform_holds_params_then_the_table_on_a_16_byte_row() {
        assert_eq!(size_of::<UniformParams>(), 16 + 4 * TABLE_WORDS as usize);
        let [case, _] = &(UNIFORM.cases)(&Sizing::nominal(false))[..] else {
            panic!("two cases");
        };
        let Buffer::Uniform(words) = &case.buffers[0] else {
            panic!("uniform first");
        };
        assert_eq!(words[..2], [1024, 255]);
        assert_eq!(words[4..], f32_data(TABLE_WORDS as usize, TABLE_SEED)[..]);
        assert_eq!(case.params.to_string(), "read=broadcast;r=1024");
        assert_eq!(case.bytes, 4 * 2112 * 1024 * 1024);
    }
}
