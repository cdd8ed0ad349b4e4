//! The judges that decide measurements against a reference: [`baseline`] (each case of
//! a run against an earlier run, `membench compare --baseline`) and [`fleet`] (each GPU
//! of many against its model's median, `membench fleet`). Health
//! ([`crate::health`]), the simulator's validation ([`crate::validate`]) and the claims
//! ([`crate::report::claims`]) judge too, from their own modules for now.
//!
//! Both judges here apply one noise rule, [`NoiseRule`]: **a difference counts when it is
//! beyond the threshold and beyond `sigmas` times its noise.** Each names its statistic
//! as a [`Difference`] (the relative difference and its noise) and its `sigmas`:
//!
//! - the baseline: x / base − 1 against √(cv² + `cv_base`²), the two rows' spreads of
//!   samples together, at [`baseline::SIGMAS`] (1);
//! - the fleet: (x − median) / median against 1.4826 MAD / median, the robust sigma of
//!   the GPUs' figures, at [`fleet::SIGMAS`] (3.5).
//!
//! The renderers (`report`, the commands) only show what a judge decided.

pub mod baseline;
pub mod fleet;

/// A difference from a reference and the noise it is read against, both as fractions
/// of the reference.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Difference {
    /// (x − reference) / reference: −0.08 is 8 % below it.
    pub relative: f64,
    /// One standard deviation of the noise, as a fraction of the reference; 0 where
    /// there is none to read (then the threshold alone decides).
    pub(crate) sigma: f64,
}

impl Difference {
    /// The difference in sigmas; none where the noise is 0.
    pub(crate) fn z(&self) -> Option<f64> {
        (self.sigma > 0.0).then(|| self.relative / self.sigma)
    }
}

/// Where a difference lies, by a [`NoiseRule`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Side {
    /// Within the threshold or within the noise.
    Within,
    /// Below the reference, beyond both.
    Below,
    /// Above the reference, beyond both.
    Above,
}

/// The noise rule: a difference counts when it is beyond `threshold` and beyond
/// `sigmas` times its noise.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct NoiseRule {
    /// A fraction of the reference: 0.05 for 5 %.
    pub threshold: f64,
    /// How many sigmas of noise a difference must exceed.
    pub(crate) sigmas: f64,
}

impl NoiseRule {
    /// Which side of the reference `difference` lies on, where it counts.
    pub(crate) fn side(&self, difference: Difference) -> Side {
        let size = difference.relative.abs();
        if size <= self.threshold || size <= self.sigmas * difference.sigma {
            Side::Within
        } else if difference.relative < 0.0 {
            Side::Below
        } else {
            Side::Above
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_difference_counts_beyond_the_threshold_and_the_noise() {
        let rule = NoiseRule {
            threshold: 0.05,
            sigmas: 3.5,
        };
        let side = |relative, sigma| rule.side(Difference { relative, sigma });
        // Beyond both.
        assert_eq!(side(-0.08, 0.008), Side::Below);
        assert_eq!(side(0.08, 0.008), Side::Above);
        // Beyond the threshold, within the noise of a noisy figure.
        assert_eq!(side(-0.08, 0.04), Side::Within);
        // Beyond the noise of a quiet figure, within the threshold.
        assert_eq!(side(-0.03, 0.001), Side::Within);
        // No noise to read: the threshold alone decides.
        assert_eq!(side(-0.06, 0.0), Side::Below);
        assert_eq!(side(-0.04, 0.0), Side::Within);
    }
}
