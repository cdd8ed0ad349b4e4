//! The claims checklist: what the classic texts say each experiment shows, and the
//! explicit rule that decides, per device, whether a measurement reproduces it.
//!
//! [`CLAIMS`] is the one table, assembled from one file per family (`copy.rs`,
//! `transpose.rs`, …). Each entry names its family, the claim in words, the rule in
//! words and a small decision function that applies exactly that rule to one device's
//! rows. A rule whose rows are absent (not run, skipped, failed) answers "not measured"
//! and says which row it lacked. The same rule is applied to the simulator's
//! predictions, which tells whether the model expects the claim too.
//!
//! This file holds the vocabulary the rules are written in: [`Verdict`], [`Kind`],
//! [`Claim`], [`Source`], [`Cases`] and the small helpers (`ratio`, `at_each`, …). A
//! rule reaches a device's rows only through the accessors of [`Cases`]: `gbps`,
//! `row`, `params` and `family`.
//!
//! Case names follow the experiment catalogue; where a family is renamed, only the
//! `family/variant` strings and params of its file change.

mod bank;
mod constant;
mod copy;
mod localmem;
mod reduce;
mod stencil;
mod subgroup;
mod transfer;
mod transpose;

use crate::report::compare::natural_cmp;
use crate::results::Row;

/// What a rule concluded for one device.
#[derive(Clone, Debug, PartialEq)]
pub enum Verdict {
    /// The rule holds; the text shows the numbers it was decided on.
    Reproduced(String),
    NotReproduced(String),
    /// A row the rule needs is absent, skipped or failed; the text says which.
    NotMeasured(String),
}

impl Verdict {
    pub fn label(&self) -> &'static str {
        match self {
            Verdict::Reproduced(_) => "reproduced",
            Verdict::NotReproduced(_) => "not reproduced",
            Verdict::NotMeasured(_) => "not measured",
        }
    }

    pub fn detail(&self) -> &str {
        match self {
            Verdict::Reproduced(detail)
            | Verdict::NotReproduced(detail)
            | Verdict::NotMeasured(detail) => detail,
        }
    }
}

/// Whether a rule is about bandwidth (and so can be asked of the predictions too) or
/// about correctness.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Bandwidth,
    Verification,
}

/// One claim of the catalogue and the rule that decides it.
#[derive(Clone, Copy)]
pub struct Claim {
    /// Stable name, also the HTML anchor: `family-what`.
    pub id: &'static str,
    pub family: &'static str,
    /// What the classic texts say.
    pub claim: &'static str,
    /// The decision rule in words; `decide` implements exactly this.
    pub rule: &'static str,
    pub kind: Kind,
    decide: fn(&Cases<'_>) -> Outcome,
}

impl Claim {
    /// The rule applied to one device's rows (or their predictions).
    pub fn decide(&self, cases: &Cases<'_>) -> Verdict {
        if self.kind == Kind::Verification && cases.source == Source::Predicted {
            return Verdict::NotMeasured("a correctness check: nothing to predict".to_owned());
        }
        (self.decide)(cases).unwrap_or_else(Verdict::NotMeasured)
    }
}

/// A decision, or why it could not be made (a row it needs is not measured).
type Outcome = Result<Verdict, String>;

/// Which number of a row the rules read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// `gbps_median` of rows that were verified and timed.
    Measured,
    /// `sim_gbps`: the simulator's prediction.
    Predicted,
}

/// One device's rows as the rules see them.
pub struct Cases<'a> {
    rows: &'a [Row],
    source: Source,
}

impl<'a> Cases<'a> {
    pub fn new(rows: &'a [Row], source: Source) -> Self {
        Cases { rows, source }
    }

    /// The row of `id` (`family/variant`) whose param has the pairs of `param`, in any
    /// order.
    fn row(&self, id: &str, param: &str) -> Option<&'a Row> {
        let (family, variant) = id.split_once('/')?;
        self.rows.iter().find(|row| {
            row.family == family && row.variant == variant && same_param(&row.param, param)
        })
    }

    /// The bandwidth of one case, or why there is none.
    fn gbps(&self, id: &str, param: &str) -> Result<f64, String> {
        let Some(row) = self.row(id, param) else {
            return Err(format!("no {id} {param}"));
        };
        match self.source {
            Source::Measured => row.gbps_median.ok_or_else(|| {
                let why = if row.note.is_empty() {
                    String::new()
                } else {
                    format!(": {}", row.note)
                };
                format!("{id} {param} {}{why}", row.status)
            }),
            Source::Predicted => row
                .sim_gbps
                .ok_or_else(|| format!("no prediction for {id} {param}")),
        }
    }

    /// The params of `id`'s rows, in natural order.
    fn params(&self, id: &str) -> Vec<&'a str> {
        let Some((family, variant)) = id.split_once('/') else {
            return Vec::new();
        };
        let mut params: Vec<&str> = self
            .rows
            .iter()
            .filter(|row| row.family == family && row.variant == variant)
            .map(|row| row.param.as_str())
            .collect();
        params.sort_by(|a, b| natural_cmp(a, b));
        params
    }

    /// The rows of `family`.
    fn family(&self, family: &str) -> impl Iterator<Item = &'a Row> {
        let family = family.to_owned();
        self.rows.iter().filter(move |row| row.family == family)
    }
}

/// The same `key=value` pairs, in any order.
fn same_param(a: &str, b: &str) -> bool {
    let pairs = |param: &str| {
        let mut pairs: Vec<(String, String)> = param
            .split(';')
            .filter(|pair| !pair.trim().is_empty())
            .map(|pair| match pair.split_once('=') {
                Some((key, value)) => (key.trim().to_owned(), value.trim().to_owned()),
                None => (pair.trim().to_owned(), String::new()),
            })
            .collect();
        pairs.sort();
        pairs
    };
    pairs(a) == pairs(b)
}

/// `a / b` of two cases, with the numbers it came from.
fn ratio(cases: &Cases<'_>, a: (&str, &str), b: (&str, &str)) -> Result<(f64, String), String> {
    let top = cases.gbps(a.0, a.1)?;
    let bottom = cases.gbps(b.0, b.1)?;
    if bottom <= 0.0 {
        return Err(format!("{} {} has no bandwidth", b.0, b.1));
    }
    let value = top / bottom;
    // Only what tells the two apart: `offset=1 / offset=0`, `naive_col / naive_row`.
    let name = |(id, param): (&str, &str)| {
        if a.0 == b.0 {
            param.to_owned()
        } else if same_param(a.1, b.1) {
            short(id).to_owned()
        } else {
            format!("{} {param}", short(id))
        }
    };
    Ok((
        value,
        format!(
            "{} / {} = {value:.3} ({top:.1} / {bottom:.1} GB/s)",
            name(a),
            name(b)
        ),
    ))
}

/// `transpose/naive_row` → `naive_row`: details are shown under their family.
fn short(id: &str) -> &str {
    id.split_once('/').map_or(id, |(_, variant)| variant)
}

fn between(value: f64, low: f64, high: f64, detail: String) -> Verdict {
    if (low..=high).contains(&value) {
        Verdict::Reproduced(detail)
    } else {
        Verdict::NotReproduced(detail)
    }
}

fn at_least(value: f64, low: f64, detail: String) -> Verdict {
    between(value, low, f64::INFINITY, detail)
}

fn at_most(value: f64, high: f64, detail: String) -> Verdict {
    between(value, f64::NEG_INFINITY, high, detail)
}

/// Every part must hold; a part not measured leaves the whole not measured.
fn all(parts: Vec<Outcome>) -> Outcome {
    let parts = parts.into_iter().collect::<Result<Vec<_>, _>>()?;
    let failed = parts
        .iter()
        .any(|part| matches!(part, Verdict::NotReproduced(_)));
    let detail = parts
        .iter()
        .map(Verdict::detail)
        .collect::<Vec<_>>()
        .join("; ");
    Ok(if failed {
        Verdict::NotReproduced(detail)
    } else {
        Verdict::Reproduced(detail)
    })
}

/// One of the parts must hold (each measured part counts; at least one measured).
fn any(parts: Vec<Outcome>) -> Outcome {
    let mut measured = Vec::new();
    let mut missing = None;
    for part in parts {
        match part {
            Ok(verdict) => measured.push(verdict),
            Err(why) => missing = missing.or(Some(why)),
        }
    }
    if measured.is_empty() {
        return Err(missing.unwrap_or_else(|| "nothing to decide on".to_owned()));
    }
    let held = measured
        .iter()
        .any(|part| matches!(part, Verdict::Reproduced(_)));
    let detail = measured
        .iter()
        .map(Verdict::detail)
        .collect::<Vec<_>>()
        .join("; ");
    Ok(if held {
        Verdict::Reproduced(detail)
    } else {
        Verdict::NotReproduced(detail)
    })
}

/// The rule at every param of `anchor` (each problem size the device ran): it must
/// hold at each size where it could be decided, and be decidable at one at least.
fn at_each(cases: &Cases<'_>, anchor: &str, rule: impl Fn(&str) -> Outcome) -> Outcome {
    let params = cases.params(anchor);
    if params.is_empty() {
        return Err(format!("no {anchor}"));
    }
    let mut decided = Vec::new();
    let mut missing = None;
    for param in params {
        match rule(param) {
            Ok(verdict) => decided.push((param, verdict)),
            Err(why) => missing = missing.or(Some(why)),
        }
    }
    if decided.is_empty() {
        return Err(missing.unwrap_or_default());
    }
    let failed = decided
        .iter()
        .any(|(_, verdict)| matches!(verdict, Verdict::NotReproduced(_)));
    let detail = decided
        .iter()
        .map(|(param, verdict)| format!("[{param}] {}", verdict.detail()))
        .collect::<Vec<_>>()
        .join("; ");
    Ok(if failed {
        Verdict::NotReproduced(detail)
    } else {
        Verdict::Reproduced(detail)
    })
}

/// The faster of several cases at one param, with its name.
fn fastest<'v>(cases: &Cases<'_>, ids: &[&'v str], param: &str) -> Result<(&'v str, f64), String> {
    let mut best: Option<(&str, f64)> = None;
    let mut missing = None;
    for &id in ids {
        match cases.gbps(id, param) {
            Ok(gbps) if best.is_none_or(|(_, b)| gbps > b) => best = Some((id, gbps)),
            Ok(_) => {}
            Err(why) => missing = missing.or(Some(why)),
        }
    }
    best.ok_or_else(|| missing.unwrap_or_default())
}

/// `best(a) / best(b)` at one param.
fn best_ratio(
    cases: &Cases<'_>,
    a: &[&str],
    b: &[&str],
    param: &str,
) -> Result<(f64, String), String> {
    let (a_id, _) = fastest(cases, a, param)?;
    let (b_id, _) = fastest(cases, b, param)?;
    ratio(cases, (a_id, param), (b_id, param))
}

/// [`all`] over the parts that could be decided; not measured if none could.
fn any_measured_all(parts: Vec<Outcome>, none: &str) -> Outcome {
    let measured: Vec<Outcome> = parts.iter().filter(|p| p.is_ok()).cloned().collect();
    if measured.is_empty() {
        return Err(parts
            .into_iter()
            .find_map(Result::err)
            .unwrap_or_else(|| none.to_owned()));
    }
    all(measured)
}

/// The families' claims in checklist order: the order of the families in the catalogue.
const FAMILIES: &[&[Claim]] = &[
    copy::CLAIMS,
    transpose::CLAIMS,
    reduce::CLAIMS,
    stencil::CLAIMS,
    constant::CLAIMS,
    bank::CLAIMS,
    localmem::CLAIMS,
    subgroup::CLAIMS,
    transfer::CLAIMS,
];

const CLAIM_COUNT: usize = claim_count(FAMILIES);

/// The families' claims as one array, so that [`CLAIMS`] stays one static slice.
static ALL_CLAIMS: [Claim; CLAIM_COUNT] = concatenate(FAMILIES);

/// Every claim of the catalogue with its rule, in family order.
pub static CLAIMS: &[Claim] = &ALL_CLAIMS;

const fn claim_count(families: &[&[Claim]]) -> usize {
    let mut count = 0;
    let mut family = 0;
    while family < families.len() {
        count += families[family].len();
        family += 1;
    }
    count
}

/// `families` one after the other; evaluated at compile time, where `N` is their count.
const fn concatenate<const N: usize>(families: &[&[Claim]]) -> [Claim; N] {
    // Any claim fills the array first: every slot is overwritten below.
    let mut claims = [families[0][0]; N];
    let mut slot = 0;
    let mut family = 0;
    while family < families.len() {
        let mut index = 0;
        while index < families[family].len() {
            claims[slot] = families[family][index];
            slot += 1;
            index += 1;
        }
        family += 1;
    }
    claims
}

/// What the families' tests share: rows to decide on, and the threshold tests.
#[cfg(test)]
mod testing {
    use super::{CLAIMS, Cases, Claim, Kind, Source};
    use crate::results::{Row, SCHEMA_VERSION, Status};

    /// A measured row of `id` (`family/variant`), predicted at the same bandwidth.
    pub(super) fn row(id: &str, param: &str, gbps: f64) -> Row {
        let (family, variant) = id.split_once('/').unwrap();
        Row {
            family: family.into(),
            variant: variant.into(),
            param: param.into(),
            status: Status::Ok,
            verified: true,
            gbps_median: Some(gbps),
            sim_gbps: Some(gbps),
            schema_version: SCHEMA_VERSION,
            ..Row::default()
        }
    }

    pub(super) fn claim(id: &str) -> &'static Claim {
        CLAIMS.iter().find(|c| c.id == id).unwrap()
    }

    /// One threshold test: rows built around a factor `x`, and the factors on either
    /// side of each threshold with whether the claim then holds.
    pub(super) struct Threshold {
        pub(super) id: &'static str,
        pub(super) rows: fn(f64) -> Vec<Row>,
        pub(super) sides: &'static [(f64, bool)],
    }

    /// Every rule holds, or not, on each side of its thresholds, measured and predicted.
    pub(super) fn assert_thresholds(thresholds: &[Threshold]) {
        for threshold in thresholds {
            let claim = claim(threshold.id);
            for &(x, holds) in threshold.sides {
                let rows = (threshold.rows)(x);
                for source in [Source::Measured, Source::Predicted] {
                    let verdict = claim.decide(&Cases::new(&rows, source));
                    let expected = if holds {
                        "reproduced"
                    } else {
                        "not reproduced"
                    };
                    assert_eq!(
                        verdict.label(),
                        expected,
                        "{} at {x} ({source:?}): {}",
                        threshold.id,
                        verdict.detail()
                    );
                }
            }
        }
    }

    /// Every bandwidth rule of `claims` has a threshold test among `thresholds`.
    pub(super) fn assert_thresholds_cover(claims: &[Claim], thresholds: &[Threshold]) {
        for claim in claims.iter().filter(|c| c.kind == Kind::Bandwidth) {
            assert!(
                thresholds.iter().any(|t| t.id == claim.id),
                "{} has no threshold test",
                claim.id
            );
        }
    }

    /// The threshold tests' rows, skipped or failed, leave each rule not measured.
    pub(super) fn assert_unmeasured_when_skipped_or_failed(thresholds: &[Threshold]) {
        for threshold in thresholds {
            let mut rows = (threshold.rows)(threshold.sides[0].0);
            for (index, row) in rows.iter_mut().enumerate() {
                row.status = if index % 2 == 0 {
                    Status::Skipped
                } else {
                    Status::Failed
                };
                row.gbps_median = None;
            }
            let verdict = claim(threshold.id).decide(&Cases::new(&rows, Source::Measured));
            assert_eq!(verdict.label(), "not measured", "{}", threshold.id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique() {
        for (index, claim) in CLAIMS.iter().enumerate() {
            assert!(
                CLAIMS[..index].iter().all(|c| c.id != claim.id),
                "{} twice",
                claim.id
            );
        }
    }

    #[test]
    fn every_family_file_holds_its_own_claims_in_order() {
        let mut families: Vec<&str> = Vec::new();
        for family in FAMILIES {
            let name = family[0].family;
            assert!(family.iter().all(|c| c.family == name), "{name}");
            assert!(!families.contains(&name), "{name} twice");
            families.push(name);
        }
        let ids: Vec<&str> = FAMILIES
            .iter()
            .flat_map(|f| f.iter().map(|c| c.id))
            .collect();
        let assembled: Vec<&str> = CLAIMS.iter().map(|c| c.id).collect();
        assert_eq!(assembled, ids);
    }

    #[test]
    fn absent_rows_are_not_measured() {
        for claim in CLAIMS {
            let verdict = claim.decide(&Cases::new(&[], Source::Measured));
            assert_eq!(verdict.label(), "not measured", "{}", claim.id);
            assert!(!verdict.detail().is_empty(), "{} says nothing", claim.id);
        }
    }

    #[test]
    fn params_match_in_any_order() {
        assert!(same_param("wg=512;grid=2d", "grid=2d;wg=512"));
        assert!(!same_param("wg=512;grid=2d", "wg=512"));
        assert!(!same_param("offset=1", "offset=10"));
    }
}
