//! Which cases a run takes: `--filter`'s rules, the one place that says what a filter
//! matches, for `run`, `list`, `simulate` and `simulate --validate` alike.

use super::{Case, Experiment, REGISTRY, Sizing};
use crate::error::{Error, Result};

/// Whether case id `id` matches `filter`: a substring, or with a trailing `$` a suffix
/// (`offset=1$` is offset 1 alone, not 10 to 19).
fn matches(id: &str, filter: &str) -> bool {
    match filter.strip_suffix('$') {
        Some(suffix) => id.ends_with(suffix),
        None => id.contains(filter),
    }
}

/// `filters` as given: an empty one (or `$` alone), which would match everything, is
/// an error.
pub(crate) fn check_filters(filters: &[String]) -> Result<()> {
    if filters
        .iter()
        .any(|filter| filter.strip_suffix('$').unwrap_or(filter).is_empty())
    {
        return Err(Error::EmptyFilter);
    }
    Ok(())
}

/// Whether `filters` select case id `id`: one of them matches it, or there are none.
pub fn selects(filters: &[String], id: &str) -> bool {
    filters.is_empty() || filters.iter().any(|filter| matches(id, filter))
}

/// The first of `filters` that matches none of `ids`.
pub(crate) fn unmatched<'f>(filters: &'f [String], ids: &[String]) -> Option<&'f String> {
    filters
        .iter()
        .find(|filter| !ids.iter().any(|id| matches(id, filter)))
}

/// Every case whose id matches one of `filters` (all cases for none). A filter that
/// matches nothing is an error, not an empty run, and so is an empty one, which would
/// match everything.
pub fn select(sizing: &Sizing, filters: &[String]) -> Result<Vec<(&'static Experiment, Case)>> {
    check_filters(filters)?;
    let all: Vec<_> = REGISTRY
        .iter()
        .flat_map(|experiment| {
            (experiment.cases)(sizing)
                .into_iter()
                .map(move |case| (experiment, case.id(experiment).to_string(), case))
        })
        .collect();
    let ids: Vec<String> = all.iter().map(|(_, id, _)| id.clone()).collect();
    if let Some(filter) = unmatched(filters, &ids) {
        return Err(Error::NoMatch(filter.clone()));
    }
    Ok(all
        .into_iter()
        .filter(|(_, id, _)| selects(filters, id))
        .map(|(experiment, _, case)| (experiment, case))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters_are_substrings_or_anchored_suffixes() {
        let sizing = Sizing::nominal(true);
        let ids = |filter: &str| -> Vec<String> {
            select(&sizing, &[filter.to_owned()])
                .unwrap()
                .iter()
                .map(|(e, c)| c.id(e).to_string())
                .collect()
        };
        // offset=1 and offset=16.
        assert_eq!(ids("copy/offset/offset=1").len(), 2);
        assert_eq!(ids("copy/offset/offset=1$"), ["copy/offset/offset=1"]);
        assert!(matches!(
            select(&sizing, &["nope".into()]),
            Err(Error::NoMatch(_))
        ));
    }

    #[test]
    fn an_empty_filter_is_refused_not_taken_for_every_case() {
        let sizing = Sizing::nominal(true);
        for filters in [
            vec![String::new()],
            vec!["copy".to_owned(), String::new()],
            vec!["$".to_owned()],
        ] {
            assert!(
                matches!(select(&sizing, &filters), Err(Error::EmptyFilter)),
                "{filters:?}"
            );
        }
    }
}
