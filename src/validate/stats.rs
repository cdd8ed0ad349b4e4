//! The statistics `simulate --validate` judges predictions by: the error of each
//! prediction, summarised over rows ([`Accuracy`]), and the agreement in order within a
//! group of cases ([`rank_agreement`]: [`spearman`] of measurements and predictions
//! [`tied_within`] the measurements' resolution; [`flat`]).
//!
//! Every number is of the ratio measured ÷ predicted *bandwidth* of a row, which, for
//! the same bytes, is predicted ÷ measured *time*: the absolute percentage error of the
//! predicted time, |`t_pred` − `t_meas`| / `t_meas`, is |ratio − 1|.

use crate::measure::Stats;

/// How close a set of predictions came to their measurements.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Accuracy {
    /// Rows judged.
    pub n: usize,
    /// Mean absolute percentage error of the predicted time, as a fraction (0.1 = 10 %).
    pub(crate) mape: f64,
    /// Median absolute percentage error, as a fraction.
    pub(crate) median_ape: f64,
    /// Geometric mean of measured ÷ predicted bandwidth: above 1, the model is
    /// pessimistic (the device beats the prediction); below 1, optimistic.
    pub(crate) geomean_ratio: f64,
    /// Share of rows whose error is at most 10 %, as a fraction.
    pub(crate) within_10: f64,
    /// Share of rows whose error is at most 25 %, as a fraction.
    pub(crate) within_25: f64,
}

/// The absolute percentage error (as a fraction) of a prediction whose measured ÷
/// predicted bandwidth is `ratio`.
pub(crate) fn ape(ratio: f64) -> f64 {
    (ratio - 1.0).abs()
}

impl Accuracy {
    /// The accuracy of predictions with these measured ÷ predicted bandwidth ratios;
    /// `None` for none (or none finite and positive).
    pub fn of(ratios: impl IntoIterator<Item = f64>) -> Option<Accuracy> {
        let ratios: Vec<f64> = ratios
            .into_iter()
            .filter(|r| r.is_finite() && *r > 0.0)
            .collect();
        if ratios.is_empty() {
            return None;
        }
        let n = ratios.len();
        let errors: Vec<f64> = ratios.iter().copied().map(ape).collect();
        let share = |limit: f64| {
            // A hair of slack, so that an error of exactly 10 % counts as within it.
            errors.iter().filter(|&&e| e <= limit + 1e-12).count() as f64 / n as f64
        };
        Some(Accuracy {
            n,
            mape: errors.iter().sum::<f64>() / n as f64,
            // Not empty: checked above.
            median_ape: Stats::of(&errors).map_or(f64::NAN, |stats| stats.median),
            geomean_ratio: (ratios.iter().map(|r| r.ln()).sum::<f64>() / n as f64).exp(),
            within_10: share(0.10),
            within_25: share(0.25),
        })
    }
}

/// The rank of each value, from 1, tied values sharing the average of their ranks.
pub(crate) fn ranks(values: &[f64]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..values.len()).collect();
    order.sort_by(|&a, &b| values[a].total_cmp(&values[b]));
    let mut ranks = vec![0.0; values.len()];
    let mut start = 0;
    while start < order.len() {
        let mut end = start + 1;
        while end < order.len() && values[order[end]] == values[order[start]] {
            end += 1;
        }
        // Positions start..end (0-based) hold ranks start+1..=end: their average.
        let rank = (start + 1 + end) as f64 / 2.0;
        for &index in &order[start..end] {
            ranks[index] = rank;
        }
        start = end;
    }
    ranks
}

/// Measurements closer than this (relative) are the same: repeat runs of one build in
/// one command differ by about this much (docs/simulator.md, Judging the simulator),
/// so a finer order is the noise's.
pub(crate) const MEASURED_RESOLUTION: f64 = 0.005;

/// `values` with every run of neighbours (in sorted order) less than `resolution`
/// (relative) apart given the run's first value: differences below the resolution
/// become ties.
pub(crate) fn tied_within(values: &[f64], resolution: f64) -> Vec<f64> {
    let mut order: Vec<usize> = (0..values.len()).collect();
    order.sort_by(|&a, &b| values[a].total_cmp(&values[b]));
    let mut tied = values.to_vec();
    let mut run_start = f64::NAN;
    let mut previous = f64::NAN;
    for &i in &order {
        let value = values[i];
        let same = previous.is_finite() && value - previous <= resolution * previous.abs();
        if !same {
            run_start = value;
        }
        previous = value;
        tied[i] = run_start;
    }
    tied
}

/// Spearman's rank correlation of `xs` and `ys` (pairs, ties averaged): the Pearson
/// correlation of their ranks. `None` for fewer than two pairs, pairs of unequal
/// count, or where either side has a single rank (all equal): no order to agree with.
pub(crate) fn spearman(xs: &[f64], ys: &[f64]) -> Option<f64> {
    if xs.len() != ys.len() || xs.len() < 2 {
        return None;
    }
    let (rx, ry) = (ranks(xs), ranks(ys));
    let mean = (xs.len() + 1) as f64 / 2.0;
    let (mut covariance, mut var_x, mut var_y) = (0.0, 0.0, 0.0);
    for (x, y) in rx.iter().zip(&ry) {
        covariance += (x - mean) * (y - mean);
        var_x += (x - mean).powi(2);
        var_y += (y - mean).powi(2);
    }
    (var_x > 0.0 && var_y > 0.0).then(|| covariance / (var_x * var_y).sqrt())
}

/// [`rank_agreement`]'s ties in words, as `simulate --validate` and the report say them.
pub(crate) const RANK_TIES: &str = "values within 0.5 % of each other tied, measured (their run-to-run \
                             noise) and predicted alike (an order the measurements cannot \
                             resolve); – where the measurements have no order left, 0 where \
                             the predictions have none";

/// How well `predicted` orders a group of cases as `measured` does: Spearman's ρ of
/// the two, each with its differences below [`MEASURED_RESOLUTION`] tied. The
/// measurements cannot confirm a finer order, so a predicted one is no order either
/// (a model that predicts offsets 1 and 2 of a copy 0.01 % apart does not claim to
/// rank them). `None` where the measurements have no order left; 0 where they have
/// one and the predictions none.
pub(crate) fn rank_agreement(measured: &[f64], predicted: &[f64]) -> Option<f64> {
    let measured = tied_within(measured, MEASURED_RESOLUTION);
    let predicted = tied_within(predicted, MEASURED_RESOLUTION);
    let ordered = |values: &[f64]| values.iter().any(|&v| v != values[0]);
    match (ordered(&measured), ordered(&predicted)) {
        (false, _) => None,
        (true, false) => Some(0.0),
        (true, true) => spearman(&measured, &predicted),
    }
}

/// Predictions flatter than their measurements by this much are [`flat`]: all within
/// 1 % of each other...
const FLAT_PREDICTED: f64 = 1.01;
/// ...while the measurements spread by more than 5 %.
const SPREAD_MEASURED: f64 = 1.05;

/// Whether the model sees no difference where the device shows one: the predictions
/// all within 1 % (largest ÷ smallest ≤ 1.01) while the measurements differ by more
/// than 5 % (largest ÷ smallest > 1.05). Values must be positive.
pub(crate) fn flat(predicted: &[f64], measured: &[f64]) -> bool {
    let spread = |values: &[f64]| {
        let (low, high) = values
            .iter()
            .fold((f64::INFINITY, 0.0f64), |(l, h), &v| (l.min(v), h.max(v)));
        (low > 0.0 && low.is_finite()).then(|| high / low)
    };
    matches!(
        (spread(predicted), spread(measured)),
        (Some(p), Some(m)) if p <= FLAT_PREDICTED && m > SPREAD_MEASURED
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    /// Ratios worked by hand: errors 0, 0.1, 0.5, 1.0 (ratio 2), 0.2 (ratio 0.8).
    #[test]
    fn accuracy_of_known_ratios() {
        let a = Accuracy::of([1.0, 1.1, 1.5, 2.0, 0.8]).unwrap();
        assert_eq!(a.n, 5);
        assert!(close(a.mape, (0.0 + 0.1 + 0.5 + 1.0 + 0.2) / 5.0), "{a:?}");
        assert!(close(a.median_ape, 0.2), "{a:?}");
        let product: f64 = 1.0 * 1.1 * 1.5 * 2.0 * 0.8;
        assert!(close(a.geomean_ratio, product.powf(0.2)), "{a:?}");
        assert!(close(a.within_10, 2.0 / 5.0), "{a:?}");
        assert!(close(a.within_25, 3.0 / 5.0), "{a:?}");
    }

    #[test]
    fn a_constant_factor_is_its_own_geometric_mean_and_error() {
        let a = Accuracy::of([1.25; 4]).unwrap();
        assert!(close(a.geomean_ratio, 1.25) && close(a.mape, 0.25) && close(a.median_ape, 0.25));
        assert!(close(a.within_25, 1.0) && close(a.within_10, 0.0));
        // An even count's median is the mean of the middle two.
        let b = Accuracy::of([1.0, 1.1, 1.3, 2.0]).unwrap();
        assert!(close(b.median_ape, 0.2), "{b:?}");
        assert_eq!(Accuracy::of([]), None);
        assert_eq!(Accuracy::of([f64::NAN, 0.0, f64::INFINITY]), None);
    }

    #[test]
    fn ties_share_their_average_rank() {
        assert_eq!(ranks(&[10.0, 30.0, 20.0]), [1.0, 3.0, 2.0]);
        assert_eq!(ranks(&[5.0, 1.0, 5.0, 7.0]), [2.5, 1.0, 2.5, 4.0]);
        assert_eq!(ranks(&[3.0, 3.0, 3.0]), [2.0, 2.0, 2.0]);
    }

    #[test]
    fn spearman_of_known_orders() {
        let x = [1.0, 2.0, 3.0, 4.0, 5.0];
        assert!(close(
            spearman(&x, &[2.0, 4.0, 8.0, 16.0, 32.0]).unwrap(),
            1.0
        ));
        assert!(close(
            spearman(&x, &[5.0, 4.0, 3.0, 2.0, 1.0]).unwrap(),
            -1.0
        ));
        // One swap among five: d² = 1 + 1, ρ = 1 − 6·2 / (5·24) = 0.9.
        assert!(close(
            spearman(&x, &[1.0, 3.0, 2.0, 4.0, 5.0]).unwrap(),
            0.9
        ));
        // With ties: ranks x = 1 2 3 4, y = 1.5 1.5 3 4; Pearson of those.
        let rho = spearman(&[1.0, 2.0, 3.0, 4.0], &[7.0, 7.0, 8.0, 9.0]).unwrap();
        let (dx, dy) = ([-1.5, -0.5, 0.5, 1.5], [-1.0, -1.0, 0.5, 1.5]);
        let cov: f64 = dx.iter().zip(&dy).map(|(a, b)| a * b).sum();
        let norm =
            (dx.iter().map(|a| a * a).sum::<f64>() * dy.iter().map(|b| b * b).sum::<f64>()).sqrt();
        assert!(close(rho, cov / norm), "{rho}");
        // No order on one side: undefined.
        assert_eq!(spearman(&x, &[3.0; 5]), None);
        assert_eq!(spearman(&[1.0], &[1.0]), None);
    }

    #[test]
    fn values_within_the_resolution_tie() {
        // 100, 100.3 and 100.6 chain (each within 0.5 % of the one before); 110 does not.
        assert_eq!(
            tied_within(&[100.6, 110.0, 100.0, 100.3], 0.005),
            [100.0, 110.0, 100.0, 100.0]
        );
        assert_eq!(tied_within(&[1.0, 2.0, 4.0], 0.005), [1.0, 2.0, 4.0]);
        // Tied measurements leave no order for the predictions to agree with...
        let noise = tied_within(&[100.0, 100.2, 100.1, 100.4], MEASURED_RESOLUTION);
        assert_eq!(spearman(&noise, &[4.0, 3.0, 2.0, 1.0]), None);
        // ...and the order beyond them is still judged: predictions that swap the two
        // measurements 0.2 % apart are not held to that order (ρ 0.8 untied).
        let raw = [100.0, 100.2, 90.0, 80.0];
        let predicted = [10.0, 9.0, 8.0, 7.0];
        let rho = spearman(&tied_within(&raw, MEASURED_RESOLUTION), &predicted).unwrap();
        assert!(rho > 0.9, "{rho}");
        assert!(close(spearman(&raw, &predicted).unwrap(), 0.8));
        // Predictions against the order beyond the noise still lose.
        let wrong = spearman(
            &tied_within(&raw, MEASURED_RESOLUTION),
            &[7.0, 8.0, 9.0, 10.0],
        );
        assert!(wrong.unwrap() < -0.9);
    }

    #[test]
    fn predicted_differences_below_the_resolution_are_no_order() {
        // One aligned case apart, the rest measured within the noise: predictions that
        // tell the rest apart by 0.01 % rank them as the measurements do.
        let measured = [110.0, 100.0, 100.3, 100.1, 100.2];
        let predicted = [120.0, 100.0, 100.01, 99.99, 100.02];
        assert!(close(rank_agreement(&measured, &predicted).unwrap(), 1.0));
        // Untied, the same predictions order the noise.
        assert!(spearman(&tied_within(&measured, MEASURED_RESOLUTION), &predicted).unwrap() < 0.8);
        // Predictions 1 % apart are an order, held to the measurements'.
        let wrong = [100.0, 120.0, 121.2, 122.4, 123.6];
        assert!(rank_agreement(&measured, &wrong).unwrap() < 0.0);
        // A measured order that the predictions do not see at all: no agreement.
        assert_eq!(
            rank_agreement(&[100.0, 104.0, 108.0, 112.0], &[100.0, 100.1, 100.2, 100.3]),
            Some(0.0)
        );
        // No measured order: nothing to judge.
        assert_eq!(
            rank_agreement(&[100.0, 100.2, 100.1, 100.4], &[1.0, 2.0, 3.0, 4.0]),
            None
        );
    }

    #[test]
    fn flat_predictions_of_differing_measurements() {
        assert!(flat(&[100.0, 100.5, 100.9], &[100.0, 80.0, 60.0]));
        // Measurements within 5 %: nothing to see.
        assert!(!flat(&[100.0, 100.0], &[100.0, 104.0]));
        // Predictions that differ by more than 1 %.
        assert!(!flat(&[100.0, 102.0], &[100.0, 60.0]));
    }
}
