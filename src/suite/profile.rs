//! Profiles: named sets of cases a run can take instead of the whole registry. `health`
//! is the few cases that show a sick memory system, measured in seconds; `tax` the
//! families where wgpu's runtime checks cost most, in the builds that price each check.

use super::families::transpose;
use super::families::{bank, copy, hierarchy, latency, localmem, reduce, stencil, transfer};
use super::{Build, Case, Experiment, Key, Params};
use crate::params;

/// A named set of cases.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Profile {
    /// The cases that show a sick memory system: copy peak, a tiled transpose, the
    /// best reduction, latency in L1, L2 and DRAM, upload and readback, conflict-free
    /// workgroup memory.
    Health,
    /// Where wgpu's runtime checks cost most (the L1 window, bank conflicts, the
    /// reductions, local memory, the stencils, the tiled transposes), in wgpu's default
    /// and unchecked builds and with each check off alone (docs/tax.md).
    Tax,
    /// The device's memory levels, quickly: the hierarchy's window and shared-buffer
    /// sweeps and the latency chase at every other step, in wgpu's default build. What
    /// `membench kernel` places a kernel against.
    Levels,
}

/// The builds the tax profile measures, all in wgpu: every check on, each one off, all
/// off.
pub(crate) const TAX_BUILDS: [Build; 5] = [
    Build::Default,
    Build::NoBoundsChecks,
    Build::NoLoopBounding,
    Build::NoIntDivChecks,
    Build::Unchecked,
];

/// The tax profile's experiments: every case of each.
const TAX: &[&Experiment] = &[
    &hierarchy::WINDOW,
    &bank::ROW_ROW,
    &bank::COL_COL,
    &bank::ROW_COL,
    &bank::ROW_COL_OVERRIDE,
    &bank::ROW_COL_PAD,
    &bank::ROW_COL_OVERRIDE_PAD,
    &bank::RECT_ROW_ROW,
    &bank::RECT_ROW_COL,
    &bank::RECT_ROW_COL_PAD,
    &reduce::NEIGHBORED,
    &reduce::NEIGHBORED_LESS,
    &reduce::INTERLEAVED,
    &reduce::UNROLL2,
    &reduce::UNROLL4,
    &reduce::UNROLL8,
    &reduce::UNROLL8_LASTWARP,
    &reduce::SMEM,
    &reduce::SMEM_OVERRIDE,
    &reduce::SMEM_UNROLL4,
    &reduce::SUBGROUP_SHUFFLE,
    &reduce::SUBGROUP_ADD,
    &localmem::REGISTER_ARRAY,
    &localmem::DYNAMIC_INDEX,
    &stencil::UNIFORM_COEF,
    &stencil::STORAGE_COEF,
    &stencil::CONST_COEF,
    &stencil::GLOBAL_DIRECT,
    &transpose::SMEM,
    &transpose::SMEM_PAD,
    &transpose::SMEM_UNROLL_PAD,
    &transpose::SMEM_PAD_VEC4,
];

/// The sweeps of the levels profile.
const LEVELS: &[&Experiment] = &[&hierarchy::WINDOW, &hierarchy::SHARED, &latency::CHASE];

/// One entry of a profile: the experiment's case with these params, whatever the
/// sizing makes its size (the largest such case).
struct Entry {
    experiment: &'static Experiment,
    /// The params besides the size keys ([`SIZE_KEYS`]).
    params: fn() -> Params,
}

/// The keys a sizing sets: a profile's entry leaves them to the sizing.
const SIZE_KEYS: [Key; 2] = [Key::Size, Key::N];

/// The health profile: each a figure a healthy GPU of the model reaches.
const HEALTH: &[Entry] = &[
    Entry {
        experiment: &copy::PEAK,
        params: || params!(Launch => "vec4"),
    },
    Entry {
        experiment: &transpose::SMEM_PAD,
        params: || params!(Block => (32u32, 8u32)),
    },
    Entry {
        experiment: &reduce::SUBGROUP_ADD,
        params: Params::new,
    },
    Entry {
        experiment: &latency::CHASE,
        params: || params!(Footprint => 16u64 << 10),
    },
    Entry {
        experiment: &latency::CHASE,
        params: || params!(Footprint => 16u64 << 20),
    },
    Entry {
        experiment: &latency::CHASE,
        params: || params!(Footprint => 1u64 << 30),
    },
    Entry {
        experiment: &transfer::UPLOAD_WRITE_BUFFER,
        params: || params!(Chunks => 1u32),
    },
    Entry {
        experiment: &transfer::READBACK,
        params: || params!(Chunks => 1u32),
    },
    Entry {
        experiment: &bank::STRIDE,
        params: || params!(Stride => 1u32, Repeats => 1024u32),
    },
];

impl Profile {
    /// Of `cases` (a sizing's registry), those the profile takes, in registry order:
    /// for each entry the largest case (by bytes moved) of its experiment whose params,
    /// besides the size keys, are the entry's. An entry the sizing has no case for
    /// (a `--quick` run's latency beyond its footprints) takes none.
    pub fn select(
        self,
        cases: Vec<(&'static Experiment, Case)>,
    ) -> Vec<(&'static Experiment, Case)> {
        let entries = match self {
            Profile::Health => HEALTH,
            Profile::Tax => {
                return cases
                    .into_iter()
                    .filter(|(experiment, _)| TAX.iter().any(|e| e.is(experiment)))
                    .collect();
            }
            Profile::Levels => return levels(cases),
        };
        let chosen: Vec<usize> = entries
            .iter()
            .filter_map(|entry| {
                let params = (entry.params)();
                (0..cases.len())
                    .filter(|&i| {
                        let (experiment, case) = &cases[i];
                        let rest = SIZE_KEYS
                            .iter()
                            .fold(case.params.clone(), |rest, key| rest.without(*key));
                        experiment.is(entry.experiment) && rest.same_pairs(&params)
                    })
                    .max_by_key(|&i| cases[i].1.bytes)
            })
            .collect();
        cases
            .into_iter()
            .enumerate()
            .filter(|(index, _)| chosen.contains(index))
            .map(|(_, case)| case)
            .collect()
    }
}

/// Of `cases`, every other case of each sweep of [`LEVELS`] (by footprint, the first
/// and the last kept), in registry order: the steps twice as coarse, each level still
/// several points wide.
fn levels(cases: Vec<(&'static Experiment, Case)>) -> Vec<(&'static Experiment, Case)> {
    let mut kept = Vec::new();
    for sweep in LEVELS {
        let mut footprints: Vec<u64> = cases
            .iter()
            .filter(|(experiment, _)| experiment.is(sweep))
            .filter_map(|(_, case)| case.params.number(Key::Footprint))
            .collect();
        footprints.sort_unstable();
        footprints.dedup();
        let last = footprints.len().saturating_sub(1);
        kept.extend(
            footprints
                .iter()
                .enumerate()
                .filter(|(index, _)| index % 2 == 0 || *index == last)
                .map(|(_, footprint)| (sweep.variant, *footprint)),
        );
    }
    cases
        .into_iter()
        .filter(|(experiment, case)| {
            let footprint = case.params.number(Key::Footprint);
            LEVELS.iter().any(|sweep| experiment.is(sweep))
                && footprint.is_some_and(|f| kept.contains(&(experiment.variant, f)))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suite::{Sizing, select};

    /// The ids the health profile takes at `sizing`.
    fn health(sizing: &Sizing) -> Vec<String> {
        Profile::Health
            .select(select(sizing, &[]).unwrap())
            .iter()
            .map(|(e, c)| c.id(e).to_string())
            .collect()
    }

    #[test]
    fn health_takes_one_case_of_each_entry_at_full_size() {
        let ids = health(&Sizing::nominal(false));
        assert_eq!(
            ids,
            [
                "copy/peak/launch=vec4",
                "transpose/smem_pad/size=8192x8192;block=32x8",
                "reduce/subgroup_add/n=268435456",
                "bank/stride/stride=1;r=1024",
                "latency/chase/footprint=16384",
                "latency/chase/footprint=16777216",
                "latency/chase/footprint=1073741824",
                "transfer/upload_write_buffer/size=268435456;chunks=1",
                "transfer/readback/size=268435456;chunks=1",
            ],
            "{ids:?}"
        );
    }

    #[test]
    fn tax_takes_every_case_of_its_experiments_and_nothing_else() {
        let sizing = Sizing::nominal(false);
        let taken = Profile::Tax.select(select(&sizing, &[]).unwrap());
        for experiment in TAX {
            let all = (experiment.cases)(&sizing).len();
            let kept = taken.iter().filter(|(e, _)| e.is(experiment)).count();
            assert_eq!(kept, all, "{}", experiment.name());
        }
        assert!(taken.iter().all(|(e, _)| TAX.iter().any(|t| t.is(e))));
        assert!(!taken.iter().any(|(e, _)| e.is(&bank::STRIDE)));
    }

    #[test]
    fn levels_take_every_other_step_of_the_sweeps_and_their_ends() {
        let sizing = Sizing::nominal(false);
        let all = select(&sizing, &[]).unwrap();
        let of = |cases: &[(&'static Experiment, Case)], sweep: &Experiment| {
            let mut footprints: Vec<u64> = cases
                .iter()
                .filter(|(e, _)| e.is(sweep))
                .filter_map(|(_, c)| c.params.number(Key::Footprint))
                .collect();
            footprints.sort_unstable();
            footprints.dedup();
            footprints
        };
        let levels = Profile::Levels.select(select(&sizing, &[]).unwrap());
        assert!(levels.iter().all(|(e, _)| LEVELS.iter().any(|s| e.is(s))));
        for sweep in LEVELS {
            let (whole, coarse) = (of(&all, sweep), of(&levels, sweep));
            assert!(coarse.len() < whole.len(), "{}", sweep.name());
            assert!(coarse.len() >= whole.len() / 2, "{}", sweep.name());
            assert_eq!(coarse.first(), whole.first());
            assert_eq!(coarse.last(), whole.last());
        }
    }

    #[test]
    fn health_at_quick_size_takes_what_the_sizing_has() {
        let ids = health(&Sizing::nominal(true));
        assert!(ids.len() >= 6, "{ids:?}");
        assert!(ids.iter().any(|id| id.starts_with("copy/peak/")));
        assert!(ids.iter().any(|id| id.starts_with("transfer/readback/")));
    }
}
