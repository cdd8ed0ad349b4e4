//! The local-memory claim: a private array indexed at run time is slower than one in
//! registers.

use super::{Claim, Finding, Kind, at_each, at_most, ratio};
use crate::suite::Family;
use crate::suite::families::localmem::{DYNAMIC_INDEX, REGISTER_ARRAY};

/// The family's finding in the report's summary: dynamic index ÷ register array.
pub(super) const FINDING: Finding = Finding {
    claim: &DYNAMIC_INDEX_SLOWER,
    what: "dynamic index ÷ register array",
};

/// localmem-dynamic-index, the claim the family's finding shows.
const DYNAMIC_INDEX_SLOWER: Claim = Claim {
    id: "localmem-dynamic-index",
    family: Family::Localmem,
    claim: "a private array indexed at run time may be placed in local memory and be slower \
                than one the compiler keeps in registers",
    rule: "dynamic_index runs at 0.9 × register_array or slower",
    kind: Kind::Bandwidth,
    experiments: &[&REGISTER_ARRAY, &DYNAMIC_INDEX],
    decide: |cases| {
        at_each(cases, &REGISTER_ARRAY, |params| {
            let (value, detail) =
                ratio(cases, (&DYNAMIC_INDEX, params), (&REGISTER_ARRAY, params))?;
            Ok(at_most(value, 0.9, detail))
        })
    },
};

/// The localmem claims, in checklist order.
pub(super) const CLAIMS: &[Claim] = &[DYNAMIC_INDEX_SLOWER];

#[cfg(test)]
mod tests {
    use super::CLAIMS;
    use crate::params;
    use crate::report::claims::testing::{self, Threshold, row};
    use crate::suite::families::localmem::{DYNAMIC_INDEX, REGISTER_ARRAY};

    static THRESHOLDS: &[Threshold] = &[Threshold {
        id: "localmem-dynamic-index",
        rows: |x| {
            vec![
                row(&REGISTER_ARRAY, params!(N => 64u32), 100.0),
                row(&DYNAMIC_INDEX, params!(N => 64u32), 100.0 * x),
            ]
        },
        sides: &[(0.89, true), (0.91, false)],
    }];

    crate::threshold_tests!(CLAIMS, THRESHOLDS);
}
