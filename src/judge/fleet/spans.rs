//! Evidence that spans cases: a GPU slower than its siblings across a family or a sweep
//! (one experiment's cases). Per span, a GPU's figure is the median of its speeds
//! (GB/s over the case's median) over the span's cases; the figures of the group's GPUs
//! are judged as a case's are, by the noise rule at the fleet's threshold and sigmas.
//! One slow case cannot move a median of three or more: a memory fault that slows many
//! cases does.

use std::fmt;
use std::ops::Range;

use super::MIN_MEMBERS;
use super::cases::{GroupCase, Standing, difference, median, median_mad, stand};
use crate::suite::Family;

/// The fewest cases a span holds, and a GPU must have a figure in.
pub(crate) const MIN_CASES: usize = 3;

/// A family, or one experiment (a sweep) of it, of a group's cases.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Span {
    pub family: Family,
    /// The experiment's variant; `None` for the whole family.
    pub variant: Option<String>,
    /// Its cases: indices into the group's cases, which are in case order.
    pub cases: Range<usize>,
}

impl fmt::Display for Span {
    /// `copy` or `copy/offset`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.variant {
            Some(variant) => write!(f, "{}/{variant}", self.family),
            None => write!(f, "{}", self.family),
        }
    }
}

/// The spans of `cases` (in case order): each sweep of [`MIN_CASES`] cases or more, and
/// each family of as many that has more than one sweep.
pub(super) fn spans_of(cases: &[GroupCase]) -> Vec<Span> {
    let mut spans = Vec::new();
    let mut start = 0;
    for family in cases.chunk_by(|a, b| a.id.family == b.id.family) {
        let mut sweeps = 0;
        let mut sweep_start = start;
        for sweep in family.chunk_by(|a, b| a.id.variant == b.id.variant) {
            sweeps += 1;
            if sweep.len() >= MIN_CASES {
                spans.push(Span {
                    family: sweep[0].id.family,
                    variant: Some(sweep[0].id.variant.clone()),
                    cases: sweep_start..sweep_start + sweep.len(),
                });
            }
            sweep_start += sweep.len();
        }
        if sweeps > 1 && family.len() >= MIN_CASES {
            spans.push(Span {
                family: family[0].id.family,
                variant: None,
                cases: start..start + family.len(),
            });
        }
        start += family.len();
    }
    spans
}

/// Per GPU of a group of `size`, the spans it is slower in: the span's index and the
/// distance of its figure from the GPUs' median figure.
pub(super) fn slow_spans(
    cases: &[GroupCase],
    spans: &[Span],
    size: usize,
    threshold: f64,
) -> Vec<Vec<(usize, f64)>> {
    let mut slow = vec![Vec::new(); size];
    if size < MIN_MEMBERS {
        return slow;
    }
    for (index, span) in spans.iter().enumerate() {
        let figures: Vec<Option<f64>> = (0..size)
            .map(|position| figure(&cases[span.cases.clone()], position))
            .collect();
        let mut values: Vec<f64> = figures.iter().flatten().copied().collect();
        if values.len() < MIN_MEMBERS {
            continue;
        }
        let Some((median, mad)) = median_mad(&mut values) else {
            continue;
        };
        for (position, figure) in figures.into_iter().enumerate() {
            let Some(figure) = figure else { continue };
            let difference = difference(figure, median, mad);
            if stand(difference, threshold) == Standing::Slower {
                slow[position].push((index, difference.relative));
            }
        }
    }
    slow
}

/// The GPU's figure over `cases`: the median of its speeds (1 + distance), where it has
/// [`MIN_CASES`] or more.
fn figure(cases: &[GroupCase], position: usize) -> Option<f64> {
    let mut speeds: Vec<f64> = cases
        .iter()
        .filter_map(|case| case.cells[position].distance)
        .map(|distance| 1.0 + distance)
        .collect();
    if speeds.len() < MIN_CASES {
        return None;
    }
    median(&mut speeds)
}
