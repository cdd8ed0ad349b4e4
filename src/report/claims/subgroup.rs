//! The subgroup claim: the operations return what their definitions say.

use super::{Claim, Finding, Kind, Verdict};
use crate::results::Status;
use crate::suite::Family;
use crate::suite::families::subgroup::{BROADCAST, SHUFFLE_DOWN, SHUFFLE_UP, SHUFFLE_XOR, SWAP};

/// The family's finding in the report's summary: subgroup operations verified.
pub(super) const FINDING: Finding = Finding {
    claim: &SEMANTICS,
    what: "subgroup operations verified",
};

/// subgroup-semantics, the claim the family's finding shows.
const SEMANTICS: Claim = Claim {
    id: "subgroup-semantics",
    family: Family::Subgroup,
    claim: "broadcast, shuffle up/down/xor and the lane swap return what their definitions \
                say, for the adapter's subgroup size",
    rule: "every subgroup case ran and was verified (status ok); any failed case refutes it",
    kind: Kind::Verification,
    experiments: &[&BROADCAST, &SHUFFLE_UP, &SHUFFLE_DOWN, &SHUFFLE_XOR, &SWAP],
    decide: |cases| {
        let rows: Vec<_> = cases.family(Family::Subgroup).collect();
        let failed: Vec<String> = rows
            .iter()
            .filter(|(_, row)| row.status == Status::Failed)
            .map(|(id, _)| format!("{} {} failed", id.variant, id.params))
            .collect();
        let ok = rows
            .iter()
            .filter(|(_, row)| row.status == Status::Ok)
            .count();
        if !failed.is_empty() {
            Ok(Verdict::NotReproduced(failed.join("; ").into()))
        } else if ok == 0 {
            Err(format!("no {} case ran", Family::Subgroup))
        } else {
            Ok(Verdict::Reproduced(
                format!("{ok} of {} cases verified", rows.len()).into(),
            ))
        }
    },
};

/// The subgroup claims, in checklist order.
pub(super) const CLAIMS: &[Claim] = &[SEMANTICS];

#[cfg(test)]
mod tests {
    use crate::params;
    use crate::report::claims::testing::{claim, row};
    use crate::report::claims::{Cases, Source};
    use crate::results::Row;
    use crate::results::Status;
    use crate::suite::families::subgroup::{BROADCAST, SHUFFLE_XOR};

    #[test]
    fn subgroup_rule_counts_verified_cases() {
        let claim = claim("subgroup-semantics");
        let mut rows = vec![
            row(&BROADCAST, params!(N => 64u32), 1.0),
            row(&SHUFFLE_XOR, params!(N => 64u32), 1.0),
        ];
        let cases = |rows: &[Row]| claim.decide(&Cases::new(rows, Source::Measured));
        assert_eq!(cases(&rows).label(), "reproduced");
        rows[1].status = Status::Failed;
        assert_eq!(cases(&rows).label(), "not reproduced");
        rows[1].status = Status::Skipped;
        rows[0].status = Status::Skipped;
        assert_eq!(cases(&rows).label(), "not measured");
        let predicted = claim.decide(&Cases::new(&rows, Source::Predicted));
        assert_eq!(predicted.label(), "not measured");
    }
}
