//! One case of a fleet's group: each GPU's runs of it merged into a cell, the median
//! and MAD of the GPUs' figures, and where each GPU stands by the noise rule.

use super::read::Measurement;
use super::{Entry, MAD_SCALE, MIN_MEMBERS, Member, SIGMAS};
use crate::judge::{Difference, NoiseRule, Side};
use crate::results::Status;
use crate::suite::CaseId;

/// One case of a group: what is typical and where each GPU stands.
#[derive(Clone, Debug)]
pub struct GroupCase {
    /// The case.
    pub id: CaseId,
    /// The median of the GPUs' figures, where at least [`MIN_MEMBERS`] have one.
    pub(crate) median_gbps: Option<f64>,
    /// The median absolute deviation from it, unscaled.
    pub(crate) mad_gbps: Option<f64>,
    /// The GPUs with a bandwidth for it.
    pub measured: usize,
    /// One per GPU of the group, in the group's order.
    pub cells: Vec<Cell>,
}

impl GroupCase {
    /// The robust sigma relative to the median (1.4826 MAD / median).
    pub(crate) fn sigma(&self) -> Option<f64> {
        self.median_gbps
            .zip(self.mad_gbps)
            .map(|(median, mad)| MAD_SCALE * mad / median)
    }

    /// The GPUs it names sick.
    pub(crate) fn outliers(&self) -> usize {
        self.cells
            .iter()
            .filter(|c| c.standing.is_outlier())
            .count()
    }

    /// The GPUs slower in it once, alone.
    pub fn unsteady(&self) -> usize {
        self.cells
            .iter()
            .filter(|c| c.standing == Standing::Unsteady)
            .count()
    }

    /// The smallest and largest distance from the median among its GPUs.
    pub(crate) fn extent(&self) -> Option<(f64, f64)> {
        self.cells
            .iter()
            .filter_map(|c| c.distance)
            .fold(None, |extent, d| match extent {
                None => Some((d, d)),
                Some((low, high)) => Some((f64::min(low, d), f64::max(high, d))),
            })
    }
}

/// One GPU in one case: its runs of the case merged.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Cell {
    /// Its rows' status (`failed` where any run failed, else `ok` where any measured);
    /// `None` where it has no row for the case.
    pub status: Option<Status>,
    /// The fastest of its runs' `gbps_median`: the figure it is judged by, so that a
    /// case slower in it is slower in every run.
    pub gbps: Option<f64>,
    /// Its distinct runs with a bandwidth: two or more where it was measured again.
    pub runs: usize,
    /// (x − median) / median: −0.08 is 8 % slower.
    pub(crate) distance: Option<f64>,
    /// (x − median) / (1.4826 MAD); none where the MAD is 0.
    pub z: Option<f64>,
    pub(crate) standing: Standing,
}

impl Cell {
    const EMPTY: Cell = Cell {
        status: None,
        gbps: None,
        runs: 0,
        distance: None,
        z: None,
        standing: Standing::Unjudged,
    };
}

/// Where a GPU stands in a case.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Standing {
    /// Within the threshold or the noise of the median.
    Within,
    /// Slower beyond the threshold and the noise, as evidence: in a family or sweep
    /// the GPU is slower in, or in every run of the case.
    Slower,
    /// Slower beyond the threshold and the noise once, alone: measure it again.
    Unsteady,
    /// Faster beyond the threshold and the noise: reported, not a failure.
    Faster,
    /// No row where most of the group has one.
    Missing,
    /// Failed where most of the group measured it.
    Failed,
    /// Skipped where most of the group measured it.
    Skipped,
    /// Nothing to judge: too few GPUs measured it, or most did not.
    Unjudged,
}

impl Standing {
    /// The text form, as in the CSV.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Standing::Within => "within",
            Standing::Slower => "slower",
            Standing::Unsteady => "unsteady",
            Standing::Faster => "faster",
            Standing::Missing => "missing",
            Standing::Failed => "failed",
            Standing::Skipped => "skipped",
            Standing::Unjudged => "unjudged",
        }
    }

    /// Whether it names the GPU sick.
    pub(crate) fn is_outlier(self) -> bool {
        matches!(
            self,
            Standing::Slower | Standing::Missing | Standing::Failed | Standing::Skipped
        )
    }
}

/// One case of a group of `size` GPUs, from their measurements of it. A slow GPU is
/// [`Standing::Slower`] here; [`count`] tells the evidence from the unsteady.
pub(super) fn judge_case(
    id: CaseId,
    mut entries: Vec<Entry>,
    size: usize,
    threshold: f64,
) -> GroupCase {
    let mut cells = vec![Cell::EMPTY; size];
    entries.sort_by_key(|&(position, _)| position);
    for runs in entries.chunk_by(|a, b| a.0 == b.0) {
        cells[runs[0].0] = merged_cell(runs);
    }
    let mut values: Vec<f64> = cells.iter().filter_map(|c| c.gbps).collect();
    let measured = values.len();
    let with_row = cells.iter().filter(|c| c.status.is_some()).count();
    let judged = size >= MIN_MEMBERS;
    let stats = (judged && measured >= MIN_MEMBERS)
        .then(|| median_mad(&mut values))
        .flatten();
    // A case most GPUs have a row for is expected of every one; one most measured,
    // measured by every one that has its row.
    let expected = judged && with_row * 2 > size;
    let mostly_measured = judged && measured * 2 > with_row;
    for cell in &mut cells {
        cell.standing = match (cell.status, cell.gbps, stats) {
            (None, _, _) if expected => Standing::Missing,
            (Some(Status::Failed), _, _) if mostly_measured => Standing::Failed,
            (Some(Status::Skipped), _, _) if mostly_measured => Standing::Skipped,
            (Some(_), Some(gbps), Some((median, mad))) => {
                let difference = difference(gbps, median, mad);
                cell.distance = Some(difference.relative);
                cell.z = difference.z();
                stand(difference, threshold)
            }
            _ => Standing::Unjudged,
        };
    }
    GroupCase {
        id,
        median_gbps: stats.map(|(median, _)| median),
        mad_gbps: stats.map(|(_, mad)| mad),
        measured,
        cells,
    }
}

/// One GPU's runs of a case as one cell: a copy of a run counts once; a failed run is
/// never outweighed; the figure is the fastest run's.
fn merged_cell(entries: &[Entry]) -> Cell {
    let mut distinct: Vec<&Measurement> = Vec::with_capacity(entries.len());
    for (_, measurement) in entries {
        if !distinct.iter().any(|held| held.same(measurement)) {
            distinct.push(measurement);
        }
    }
    let status = if distinct.iter().any(|m| m.status == Status::Failed) {
        Status::Failed
    } else if distinct.iter().any(|m| m.status == Status::Ok) {
        Status::Ok
    } else {
        Status::Skipped
    };
    let measured = distinct.iter().filter_map(|m| m.gbps);
    Cell {
        status: Some(status),
        gbps: (status == Status::Ok)
            .then(|| measured.clone().reduce(f64::max))
            .flatten(),
        runs: measured.count(),
        ..Cell::EMPTY
    }
}

/// Counts the member at `position` over its group's `cases`, telling its slower cases
/// apart: evidence where a span it is slower in holds the case (`in_slow_span`, by the
/// case's index) or where every run was slow (two runs or more), else unsteady.
pub(super) fn count(
    member: &mut Member,
    position: usize,
    cases: &mut [GroupCase],
    in_slow_span: impl Fn(usize) -> bool,
) {
    for (index, case) in cases.iter_mut().enumerate() {
        let cell = &mut case.cells[position];
        if cell.standing == Standing::Slower && cell.runs < 2 && !in_slow_span(index) {
            cell.standing = Standing::Unsteady;
        }
        match cell.standing {
            Standing::Slower => member.slower += 1,
            Standing::Unsteady => member.unsteady += 1,
            Standing::Faster => member.faster += 1,
            Standing::Missing => member.missing += 1,
            Standing::Failed | Standing::Skipped => member.failed += 1,
            Standing::Within | Standing::Unjudged => {}
        }
        if let Some(distance) = cell.distance
            && member.worst.is_none_or(|(_, worst)| distance < worst)
        {
            member.worst = Some((index, distance));
        }
    }
}

/// The median of `values` and their median absolute deviation from it (unscaled);
/// `None` for no values. Sorts `values`.
pub(crate) fn median_mad(values: &mut [f64]) -> Option<(f64, f64)> {
    let middle = median(values)?;
    let mut deviations: Vec<f64> = values.iter().map(|v| (v - middle).abs()).collect();
    Some((middle, median(&mut deviations)?))
}

/// The median of `values`; `None` for none. Sorts `values`.
pub(super) fn median(values: &mut [f64]) -> Option<f64> {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(values[n / 2]),
        _ => Some((values[n / 2 - 1] + values[n / 2]) / 2.0),
    }
}

/// The fleet's statistic: a GPU's figure against its case's median, (x − median) /
/// median, with the robust sigma 1.4826 MAD / median (`mad` unscaled).
pub(crate) fn difference(gbps: f64, median: f64, mad: f64) -> Difference {
    Difference {
        relative: (gbps - median) / median,
        sigma: MAD_SCALE * mad / median,
    }
}

/// Where a difference stands by the noise rule at `threshold` and [`SIGMAS`].
pub(crate) fn stand(difference: Difference, threshold: f64) -> Standing {
    let rule = NoiseRule {
        threshold,
        sigmas: SIGMAS,
    };
    match rule.side(difference) {
        Side::Within => Standing::Within,
        Side::Below => Standing::Slower,
        Side::Above => Standing::Faster,
    }
}
