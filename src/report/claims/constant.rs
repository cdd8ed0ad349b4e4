//! The constant-memory claims: distinct addresses serialise, a broadcast is as fast as
//! can be.

use super::{Claim, Finding, Kind, at_each, at_least, at_most, ratio};
use crate::suite::families::constant::{READ_BROADCAST, READ_DIVERGENT, STORAGE, UNIFORM};
use crate::suite::{Family, Key, Params, Value};

/// The family's finding in the report's summary: divergent ÷ broadcast uniform reads.
pub(super) const FINDING: Finding = Finding {
    claim: &SERIALISES,
    what: "divergent ÷ broadcast uniform reads",
};

/// constant-serialises, the claim the family's finding shows.
const SERIALISES: Claim = Claim {
    id: "constant-serialises",
    family: Family::Constant,
    claim: "the constant (uniform) path serialises on distinct addresses within a request",
    rule: "uniform read=divergent runs at 0.5 × uniform read=broadcast or slower",
    kind: Kind::Bandwidth,
    experiments: &[&UNIFORM],
    decide: |cases| {
        at_each(cases, &UNIFORM, |params| {
            let divergent = divergent_of(params)?;
            let (value, detail) = ratio(cases, (&UNIFORM, &divergent), (&UNIFORM, params))?;
            Ok(at_most(value, 0.5, detail))
        })
    },
};

/// The constant claims, in checklist order.
pub(super) const CLAIMS: &[Claim] = &[
    SERIALISES,
    Claim {
        id: "constant-broadcast",
        family: Family::Constant,
        claim: "when all lanes read the same address the constant path is as fast as can be",
        rule: "uniform read=broadcast runs at 0.97 × storage read=broadcast or faster",
        kind: Kind::Bandwidth,
        experiments: &[&UNIFORM, &STORAGE],
        decide: |cases| {
            at_each(cases, &UNIFORM, |params| {
                divergent_of(params)?;
                let (value, detail) = ratio(cases, (&UNIFORM, params), (&STORAGE, params))?;
                Ok(at_least(value, 0.97, detail))
            })
        },
    },
];

/// The divergent twin of a `read=broadcast` constant case.
fn divergent_of(params: &Params) -> Result<Params, String> {
    if params.get(Key::Read) == Some(&Value::from(READ_BROADCAST)) {
        Ok(params.replaced(Key::Read, READ_DIVERGENT))
    } else {
        Err(format!("{params} is not a broadcast case"))
    }
}

#[cfg(test)]
mod tests {
    use super::CLAIMS;
    use crate::params;
    use crate::report::claims::testing::{self, Threshold, row};
    use crate::suite::families::constant::{READ_BROADCAST, READ_DIVERGENT, STORAGE, UNIFORM};

    static THRESHOLDS: &[Threshold] = &[
        Threshold {
            id: "constant-serialises",
            rows: |x| {
                vec![
                    row(
                        &UNIFORM,
                        params!(Read => READ_BROADCAST, Repeats => 64u32),
                        100.0,
                    ),
                    row(
                        &UNIFORM,
                        params!(Read => READ_DIVERGENT, Repeats => 64u32),
                        100.0 * x,
                    ),
                ]
            },
            sides: &[(0.49, true), (0.51, false)],
        },
        Threshold {
            id: "constant-broadcast",
            rows: |x| {
                vec![
                    row(
                        &STORAGE,
                        params!(Read => READ_BROADCAST, Repeats => 64u32),
                        100.0,
                    ),
                    row(
                        &UNIFORM,
                        params!(Read => READ_BROADCAST, Repeats => 64u32),
                        100.0 * x,
                    ),
                ]
            },
            sides: &[(0.96, false), (0.98, true)],
        },
    ];

    crate::threshold_tests!(CLAIMS, THRESHOLDS);
}
