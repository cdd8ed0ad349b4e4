//! The charts' axes: linear or logarithmic, chosen from the values drawn, and their
//! ticks. Ticks are computed here, a bounded number for any finite input, and handed
//! to plotters as fixed key points: its own key-point search loops without end on
//! extreme ranges (a value of 1e-307 beside one of 100).
//!
//! A chart draws in axis coordinates: the value itself on a linear axis, its logarithm
//! on a logarithmic one, so that plotters only ever sees a plain linear range.

use std::ops::Range;

use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint, Ranged};
use plotters::coord::types::RangedCoordf64;

/// At most this many ticks on an axis, whatever its range.
const MAX_TICKS: usize = 12;

/// How values map to an axis.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Scale {
    Linear,
    /// The logarithm to this base: 10 for bandwidths, 2 for sizes in bytes.
    Log(f64),
}

/// One axis: its scale and the extent it shows, in values.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Axis {
    pub(super) scale: Scale,
    low: f64,
    high: f64,
}

impl Axis {
    /// An axis over `low..=high` (values), widened where it has no width.
    pub(super) fn new(scale: Scale, low: f64, high: f64) -> Self {
        let valid = |v: f64| v.is_finite() && (scale == Scale::Linear || v > 0.0);
        let (low, high) = match (valid(low), valid(high)) {
            (true, true) => (low.min(high), low.max(high)),
            (true, false) => (low, low),
            (false, true) => (high, high),
            (false, false) => (1.0, 1.0),
        };
        let mut axis = Axis { scale, low, high };
        if axis.at(high) - axis.at(low) <= axis.at(high).abs() * 1e-9 {
            axis.widen();
        }
        axis
    }

    /// A bar chart's axis over `values`: from zero, or logarithmic where they span more
    /// than a decade (a bar then starts at the axis' low end).
    pub(super) fn bars(values: impl Iterator<Item = f64>) -> Self {
        let (low, high) = positive_extent(values);
        if high / low > 10.0 {
            Axis::new(Scale::Log(10.0), low / 1.5, high * 1.5)
        } else {
            Axis::new(Scale::Linear, 0.0, high * 1.12)
        }
    }

    /// A line chart's axis over `values`: logarithmic where they span more than a
    /// decade, else linear around them, so that a difference of a few percent is seen.
    pub(super) fn lines(values: impl Iterator<Item = f64>) -> Self {
        let (low, high) = positive_extent(values);
        if high / low > 10.0 {
            Axis::new(Scale::Log(10.0), low / 1.3, high * 1.3)
        } else {
            let pad = (high - low) * 0.1;
            Axis::new(Scale::Linear, (low - pad).max(0.0), high + pad)
        }
    }

    /// Doubles a one-value extent (around it; to 1 where it is 0).
    fn widen(&mut self) {
        match self.scale {
            Scale::Linear if self.high == 0.0 => self.high = 1.0,
            Scale::Linear => {
                let half = self.high.abs() * 0.5;
                (self.low, self.high) = (self.low - half, self.high + half);
            }
            Scale::Log(_) => {
                (self.low, self.high) = (self.low / 2.0, self.high * 2.0);
                if !self.high.is_finite() {
                    (self.low, self.high) = (f64::MAX / 4.0, f64::MAX);
                }
            }
        }
        if !(self.high - self.low).is_finite() {
            (self.low, self.high) = (f64::MIN / 4.0, f64::MAX / 4.0);
        }
    }

    /// Where a value lies, in axis coordinates; a value a logarithmic axis cannot show
    /// lies at its low end.
    pub(super) fn at(&self, value: f64) -> f64 {
        match self.scale {
            Scale::Linear => value,
            Scale::Log(base) if value > 0.0 => value.log(base),
            Scale::Log(base) => self.low.log(base),
        }
    }

    /// The value at a point of the axis.
    pub(super) fn value(&self, at: f64) -> f64 {
        match self.scale {
            Scale::Linear => at,
            Scale::Log(base) => base.powf(at),
        }
    }

    /// The extent, in axis coordinates.
    pub(super) fn range(&self) -> Range<f64> {
        self.at(self.low)..self.at(self.high)
    }

    /// What plotters draws the axis on: the extent and its ticks, in axis coordinates.
    pub(super) fn coord(&self) -> Ticked {
        Ticked {
            range: self.range().into(),
            ticks: self.ticks(),
        }
    }

    /// At most [`MAX_TICKS`] ticks within the extent, in axis coordinates: round
    /// numbers on a linear axis, powers of the base (and 2× and 5× within a decade or
    /// two) on a logarithmic one.
    #[expect(
        clippy::cast_possible_truncation,
        reason = "exponents of a log axis over finite f64s: within ±324"
    )]
    pub(super) fn ticks(&self) -> Vec<f64> {
        let Range { start, end } = self.range();
        let ticks = match self.scale {
            Scale::Linear => round_steps(start, end),
            Scale::Log(base) => {
                let powers = power_steps(start, end);
                if base == 10.0 && powers.len() < 4 {
                    let within: Vec<f64> = (start.floor() as i64..=end.ceil() as i64)
                        .take(MAX_TICKS)
                        .flat_map(|power| {
                            [1.0, 2.0, 5.0].map(|m| (m * 10f64.powi(power as i32)).log10())
                        })
                        .filter(|t| (start..=end).contains(t))
                        .collect();
                    if within.len() <= MAX_TICKS {
                        within
                    } else {
                        powers
                    }
                } else {
                    powers
                }
            }
        };
        let ticks: Vec<f64> = ticks
            .into_iter()
            .filter(|t| (start..=end).contains(t))
            .collect();
        if ticks.len() >= 2 {
            ticks
        } else {
            vec![start, end]
        }
    }
}

/// A linear range with fixed ticks (its labels are formatted by the chart).
pub(super) struct Ticked {
    range: RangedCoordf64,
    ticks: Vec<f64>,
}

impl Ranged for Ticked {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        self.range.map(value, limit)
    }

    /// The ticks as the bold mesh lines and labels; no light lines between them.
    fn key_points<Hint: KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            Vec::new()
        } else {
            self.ticks.clone()
        }
    }

    fn range(&self) -> Range<f64> {
        self.range.range()
    }
}

/// The smallest and largest finite positive values; `(1, 1)` where there is none.
fn positive_extent(values: impl Iterator<Item = f64>) -> (f64, f64) {
    let (low, high) = values
        .filter(|v| v.is_finite() && *v > 0.0)
        .fold((f64::INFINITY, 0.0f64), |(l, h), v| (l.min(v), h.max(v)));
    if low.is_finite() {
        (low, high)
    } else {
        (1.0, 1.0)
    }
}

/// Multiples of a round step (1, 2 or 5 × a power of ten) within `start..=end`.
fn round_steps(start: f64, end: f64) -> Vec<f64> {
    let raw = (end - start) / (MAX_TICKS - 2) as f64;
    let power = 10f64.powf(raw.log10().floor());
    let Some(step) = [1.0, 2.0, 5.0, 10.0]
        .map(|m| m * power)
        .into_iter()
        .find(|step| *step >= raw)
    else {
        return Vec::new();
    };
    let first = (start / step).ceil() * step;
    if !(step.is_finite() && first.is_finite() && step > 0.0) || first + step == first {
        return Vec::new();
    }
    (0..MAX_TICKS)
        .map(|i| first + i as f64 * step)
        .filter(|t| *t <= end)
        .collect()
}

/// Whole powers within `start..=end` (exponents), every k-th where there are many.
fn power_steps(start: f64, end: f64) -> Vec<f64> {
    let (first, last) = (start.ceil(), end.floor());
    if !(first.is_finite() && last.is_finite()) || last < first {
        return Vec::new();
    }
    let step = ((last - first) / (MAX_TICKS - 1) as f64).ceil().max(1.0);
    (0..MAX_TICKS)
        .map(|i| first + i as f64 * step)
        .filter(|t| *t <= last)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Extreme and degenerate extents still give a few ticks, within the axis.
    #[test]
    fn every_axis_has_a_few_ticks_whatever_its_values() {
        let extremes = [
            (1e-307, 100.0),
            (5e-324, 1e308),
            (0.0, 0.0),
            (1e15, 1e15 + 1.0),
            (1.0, 1.0),
            (f64::MAX, f64::MAX),
            (2143.0, 2217.0),
        ];
        for (low, high) in extremes {
            for axis in [
                Axis::bars([low, high].into_iter()),
                Axis::lines([low, high].into_iter()),
                Axis::new(Scale::Log(2.0), low, high),
                Axis::new(Scale::Linear, low, high),
            ] {
                let ticks = axis.ticks();
                let range = axis.range();
                assert!(range.start < range.end, "{axis:?}");
                assert!(
                    (2..=MAX_TICKS).contains(&ticks.len()),
                    "{axis:?}: {ticks:?}"
                );
                assert!(
                    ticks.iter().all(|t| range.contains(t) || *t == range.end),
                    "{axis:?}: {ticks:?}"
                );
            }
        }
    }

    #[test]
    fn values_spanning_a_decade_get_a_log_axis() {
        assert_eq!(
            Axis::bars([100.0, 3000.0].into_iter()).scale,
            Scale::Log(10.0)
        );
        assert_eq!(Axis::bars([300.0, 2800.0].into_iter()).scale, Scale::Linear);
        assert_eq!(Axis::bars([300.0, 2800.0].into_iter()).range().start, 0.0);
    }

    /// A 3 % difference fills a line chart's axis: it does not start at zero.
    #[test]
    fn a_small_difference_is_seen_on_a_line_chart() {
        let axis = Axis::lines([2143.0, 2217.0].into_iter());
        assert_eq!(axis.scale, Scale::Linear);
        let range = axis.range();
        assert!(
            (2217.0 - 2143.0) / (range.end - range.start) > 0.5,
            "{range:?}"
        );
        let ticks = axis.ticks();
        assert!(ticks.len() >= 4, "{ticks:?}");
    }

    #[test]
    fn log_ticks_fall_on_round_values() {
        let axis = Axis::new(Scale::Log(10.0), 150.0, 3500.0);
        let values: Vec<f64> = axis
            .ticks()
            .iter()
            .map(|t| axis.value(*t).round())
            .collect();
        assert_eq!(values, [200.0, 500.0, 1000.0, 2000.0]);
    }
}
