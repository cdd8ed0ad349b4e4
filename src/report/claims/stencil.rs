//! The stencil claims: coefficients in uniform memory, a haloed tile in workgroup memory.

use super::{Claim, Finding, Kind, at_each, at_least, best_ratio, ratio};
use crate::suite::families::stencil::{
    CONST_COEF, GLOBAL_DIRECT, STORAGE_COEF, TEXTURE, UNIFORM_COEF,
};
use crate::suite::{Family, Key};

/// The family's finding in the report's summary: fastest tiled stencil ÷ direct reads.
pub(super) const FINDING: Finding = Finding {
    claim: &TILE,
    what: "fastest tiled stencil ÷ direct reads",
};

/// stencil-tile, the claim the family's finding shows.
const TILE: Claim = Claim {
    id: "stencil-tile",
    family: Family::Stencil,
    claim: "a tile with halo in workgroup memory removes redundant global reads",
    rule: "the fastest tiled variant (uniform_coef, storage_coef, const_coef) runs at \
               1.05 × global_direct or faster",
    kind: Kind::Bandwidth,
    experiments: &[&UNIFORM_COEF, &STORAGE_COEF, &CONST_COEF, &GLOBAL_DIRECT],
    decide: |cases| {
        at_each(cases, &GLOBAL_DIRECT, |params| {
            let (value, detail) = best_ratio(
                cases,
                &[&UNIFORM_COEF, &STORAGE_COEF, &CONST_COEF],
                &[&GLOBAL_DIRECT],
                params,
            )?;
            Ok(at_least(value, 1.05, detail))
        })
    },
};

/// The stencil claims, in checklist order.
pub(super) const CLAIMS: &[Claim] = &[
    Claim {
        id: "stencil-uniform-coefficients",
        family: Family::Stencil,
        claim: "coefficients every lane reads alike belong in constant (uniform) memory",
        rule: "uniform_coef runs at 0.97 × storage_coef or faster",
        kind: Kind::Bandwidth,
        experiments: &[&UNIFORM_COEF, &STORAGE_COEF],
        decide: |cases| {
            at_each(cases, &UNIFORM_COEF, |params| {
                let (value, detail) =
                    ratio(cases, (&UNIFORM_COEF, params), (&STORAGE_COEF, params))?;
                Ok(at_least(value, 0.97, detail))
            })
        },
    },
    TILE,
    Claim {
        id: "stencil-texture-locality",
        family: Family::Stencil,
        claim: "the texture cache serves a stencil's neighbour re-reads better than storage \
                reads",
        rule: "texture runs at 1.05 × global_direct or faster (the same n; texture's width \
               is its layout)",
        kind: Kind::Bandwidth,
        experiments: &[&GLOBAL_DIRECT, &TEXTURE],
        decide: |cases| {
            at_each(cases, &TEXTURE, |params| {
                let direct = params.without(Key::Width);
                let (value, detail) = ratio(cases, (&TEXTURE, params), (&GLOBAL_DIRECT, &direct))?;
                Ok(at_least(value, 1.05, detail))
            })
        },
    },
];

#[cfg(test)]
mod tests {
    use super::CLAIMS;
    use crate::params;
    use crate::report::claims::testing::{self, Threshold, row};
    use crate::suite::families::stencil::{GLOBAL_DIRECT, STORAGE_COEF, TEXTURE, UNIFORM_COEF};

    static THRESHOLDS: &[Threshold] = &[
        Threshold {
            id: "stencil-uniform-coefficients",
            rows: |x| {
                vec![
                    row(&STORAGE_COEF, params!(N => 64u32), 100.0),
                    row(&UNIFORM_COEF, params!(N => 64u32), 100.0 * x),
                ]
            },
            sides: &[(0.96, false), (0.98, true)],
        },
        Threshold {
            id: "stencil-tile",
            rows: |x| {
                vec![
                    row(&GLOBAL_DIRECT, params!(N => 64u32), 100.0),
                    row(&UNIFORM_COEF, params!(N => 64u32), 100.0 * x),
                ]
            },
            sides: &[(1.04, false), (1.06, true)],
        },
        Threshold {
            id: "stencil-texture-locality",
            rows: |x| {
                vec![
                    row(&GLOBAL_DIRECT, params!(N => 64u32), 100.0),
                    row(&TEXTURE, params!(N => 64u32, Width => 8u32), 100.0 * x),
                ]
            },
            sides: &[(1.04, false), (1.06, true)],
        },
    ];

    crate::threshold_tests!(CLAIMS, THRESHOLDS);
}
