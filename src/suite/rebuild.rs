//! A measured case rebuilt from the registry: the kernel a results row measured, at the
//! sizing the row records, for the simulator to predict again (validation, calibration).

use std::collections::HashMap;

use super::{Case, CaseId, Experiment, REGISTRY, RunSizing, Sizing};

/// A case rebuilt from the registry, owned.
pub(crate) type Rebuilt = (&'static Experiment, Case);

/// Why a measured case has no kernel in the registry to predict.
#[derive(Clone, Debug, PartialEq)]
pub enum Unmatched {
    /// The registry has no such case (any more).
    Gone,
    /// The registry sizes the case differently at the row's sizing: predicting it
    /// would predict another kernel launch.
    Resized {
        /// The bytes the row records.
        row_bytes: u64,
        /// The bytes the registry's case moves.
        case_bytes: u64,
    },
    /// The registry skips the case at the row's sizing (nominal limits).
    Skipped(String),
}

impl std::fmt::Display for Unmatched {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unmatched::Gone => f.write_str("no such case in the registry any more"),
            Unmatched::Resized {
                row_bytes,
                case_bytes,
            } => write!(
                f,
                "the registry sizes it to {case_bytes} bytes where the row moved {row_bytes}"
            ),
            Unmatched::Skipped(why) => write!(f, "the registry skips it: {why}"),
        }
    }
}

/// The registry's cases at each sizing asked for, made once.
#[derive(Default, Debug)]
pub(crate) struct Rebuilder {
    cases: HashMap<Option<RunSizing>, Vec<HashMap<CaseId, Rebuilt>>>,
}

impl Rebuilder {
    /// The kernel of case `id` as measured at `sizing` (`None`: a file that records
    /// none), over `elements` and moving `bytes`; or why there is none.
    pub(crate) fn find(
        &mut self,
        id: &CaseId,
        sizing: Option<RunSizing>,
        (elements, bytes): (u64, u64),
    ) -> Result<Rebuilt, Unmatched> {
        let cases = self.cases.entry(sizing).or_insert_with(|| {
            sizings(sizing)
                .iter()
                .map(|sizing| {
                    REGISTRY
                        .iter()
                        .flat_map(|e| (e.cases)(sizing).into_iter().map(move |c| (e, c)))
                        .map(|(e, c)| (c.id(e), (e, c)))
                        .collect()
                })
                .collect()
        });
        let candidates: Vec<&Rebuilt> = cases.iter().filter_map(|c| c.get(id)).collect();
        let Some(&(_, case)) = candidates.first() else {
            return Err(Unmatched::Gone);
        };
        match candidates
            .iter()
            .find(|(_, c)| (c.elements, c.bytes) == (elements, bytes))
        {
            Some((_, case)) if case.skip.is_some() => {
                Err(Unmatched::Skipped(case.skip.clone().unwrap_or_default()))
            }
            Some((experiment, case)) => Ok((*experiment, case.clone())),
            None => Err(Unmatched::Resized {
                row_bytes: bytes,
                case_bytes: case.bytes,
            }),
        }
    }
}

/// The sizings a row of `sizing` may have been measured at: nominal limits of a large
/// GPU with the run's settings, then the same for a software adapter (smaller default
/// buffers); for a row of a file that records no sizing (schema 1 and 2), those of the
/// default sizing and of `--quick`. The device's own limits are not recorded; a case
/// they size differently is caught by its bytes.
fn sizings(sizing: Option<RunSizing>) -> Vec<Sizing> {
    let quick = RunSizing {
        quick: true,
        ..RunSizing::default()
    };
    let recorded = match sizing {
        Some(sizing) => vec![sizing],
        None => vec![RunSizing::default(), quick],
    };
    recorded
        .into_iter()
        .flat_map(|sizing| {
            let nominal = Sizing {
                buffer_bytes: sizing.buffer_bytes,
                matrix: sizing.matrix,
                ..Sizing::nominal(sizing.quick)
            };
            let software = Sizing {
                software: true,
                ..nominal.clone()
            };
            [nominal, software]
        })
        .collect()
}
