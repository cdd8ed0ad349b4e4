//! The subgroup claim: the operations return what their definitions say.

use super::{Claim, Kind, Verdict};
use crate::results::Row;
use crate::results::Status;

/// The subgroup claims, in checklist order.
pub(super) const CLAIMS: &[Claim] = &[Claim {
    id: "subgroup-semantics",
    family: "subgroup",
    claim: "broadcast, shuffle up/down/xor and the lane swap return what their definitions \
                say, for the adapter's subgroup size",
    rule: "every subgroup case ran and was verified (status ok); any failed case refutes it",
    kind: Kind::Verification,
    decide: |cases| {
        let rows: Vec<&Row> = cases.family("subgroup").collect();
        let failed: Vec<String> = rows
            .iter()
            .filter(|row| row.status == Status::Failed)
            .map(|row| format!("{} {} failed", row.variant, row.param))
            .collect();
        let ok = rows.iter().filter(|row| row.status == Status::Ok).count();
        if !failed.is_empty() {
            Ok(Verdict::NotReproduced(failed.join("; ")))
        } else if ok == 0 {
            Err("no subgroup case ran".to_owned())
        } else {
            Ok(Verdict::Reproduced(format!(
                "{ok} of {} cases verified",
                rows.len()
            )))
        }
    },
}];

#[cfg(test)]
mod tests {
    use crate::report::claims::testing::{claim, row};
    use crate::report::claims::{Cases, Source};
    use crate::results::Row;
    use crate::results::Status;

    #[test]
    fn subgroup_rule_counts_verified_cases() {
        let claim = claim("subgroup-semantics");
        let mut rows = vec![
            row("subgroup/broadcast", "n=64", 1.0),
            row("subgroup/shuffle_xor", "n=64", 1.0),
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
