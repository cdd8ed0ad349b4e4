//! What a launch costs, read from the `launch` family's rows: per api/build the time of
//! a dispatch in a pass (own buffers, one shared buffer), a pass, a submission, an
//! indirect dispatch's addition and a CUDA graph's launch; and the small-kernel curve
//! fitted as time = a + V/b (gpu-benches' `gpu-small-kernels`).

use super::{Row, Status};
use crate::suite::families::launch;
use crate::suite::{Experiment, Family, Key, Setting};

/// The fit of time = a + V/b over a sweep: the launch term and the streaming rate.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Fit {
    /// The time of an empty launch, µs.
    pub(crate) a_us: f64,
    /// Bytes moved per second once large, GB/s (10^9).
    pub(crate) b_gbps: f64,
}

/// Fits time = a + V/b to `points` (bytes moved, µs per launch), each weighted by its
/// own time so that the small sizes, which set `a`, count as much as the large ones,
/// which set `b`: least squares on the relative error. `None` for fewer than two
/// points or a fit without a positive rate.
pub fn fit(points: &[(f64, f64)]) -> Option<Fit> {
    if points.len() < 2 {
        return None;
    }
    // Minimise Σ ((t − a − c·V) / t)²: the normal equations of a and c = 1/b.
    let (mut s00, mut s01, mut s11, mut r0, mut r1) = (0.0, 0.0, 0.0, 0.0, 0.0);
    for &(bytes, time_us) in points {
        let w = 1.0 / (time_us * time_us);
        s00 += w;
        s01 += w * bytes;
        s11 += w * bytes * bytes;
        r0 += w * time_us;
        r1 += w * bytes * time_us;
    }
    let det = s00 * s11 - s01 * s01;
    if det.abs() < f64::EPSILON * s00 * s11 {
        return None;
    }
    let a_us = (r0 * s11 - r1 * s01) / det;
    let us_per_byte = (s00 * r1 - s01 * r0) / det;
    // Bytes per µs is 10^6 B/s: 10^-3 GB/s.
    (us_per_byte > 0.0).then(|| Fit {
        a_us,
        b_gbps: 1e-3 / us_per_byte,
    })
}

/// The median µs per repetition of `experiment`'s measured row of `setting`.
fn time_us(rows: &[Row], experiment: &Experiment, setting: Setting) -> Option<f64> {
    launch_rows(rows, experiment, setting).find_map(|row| row.time_us_median)
}

fn launch_rows<'a>(
    rows: &'a [Row],
    experiment: &'a Experiment,
    setting: Setting,
) -> impl Iterator<Item = &'a Row> {
    rows.iter().filter(move |row| {
        row.family == Family::Launch
            && row.variant == experiment.variant
            && row.status == Status::Ok
            && row.setting() == setting
    })
}

/// The small-kernel fit of `experiment`'s sweep in `setting`.
pub(crate) fn sweep_fit(rows: &[Row], experiment: &Experiment, setting: Setting) -> Option<Fit> {
    let points: Vec<(f64, f64)> = launch_rows(rows, experiment, setting)
        .filter(|row| row.params.number(Key::Size).is_some())
        .filter_map(|row| Some((row.bytes as f64, row.time_us_median?)))
        .collect();
    fit(&points)
}

/// One line per api/build with launch rows: `launch, wgpu/default: 2.10 µs per dispatch
/// in a pass (5.31 with a shared buffer), 4.02 per pass, 41.3 per submission (9.8
/// submitted together); indirect +1.20; small kernels a = 4.1 µs, b = 2911 GB/s`.
pub(crate) fn summary_lines(rows: &[Row]) -> String {
    let mut lines = String::new();
    for setting in super::measured_settings(rows, Family::Launch) {
        let us = |experiment: &Experiment| time_us(rows, experiment, setting);
        let shown = |value: Option<f64>| value.map_or("-".to_owned(), |v| format!("{v:.2}"));
        let mut parts = vec![format!(
            "{} µs per dispatch in a pass ({} with a shared buffer), {} per pass, {} per \
             submission ({} submitted together)",
            shown(us(&launch::APART).or(us(&launch::SHARED))),
            shown(us(&launch::SHARED)),
            shown(us(&launch::PASS)),
            shown(us(&launch::SUBMIT_WAIT)),
            shown(us(&launch::SUBMIT_BATCH)),
        )];
        if let (Some(indirect), Some(direct)) = (us(&launch::INDIRECT), us(&launch::APART)) {
            parts.push(format!("indirect {:+.2}", indirect - direct));
        }
        if let Some(graph) = us(&launch::GRAPH) {
            parts.push(format!("{graph:.2} per launch in a graph"));
        }
        for (what, sweep) in [
            ("small kernels", &launch::SCALE),
            ("in graphs", &launch::SCALE_GRAPH),
        ] {
            if let Some(fit) = sweep_fit(rows, sweep, setting) {
                parts.push(format!(
                    "{what} a = {:.2} µs, b = {:.0} GB/s",
                    fit.a_us, fit.b_gbps
                ));
            }
        }
        lines.push_str(&format!("launch, {setting}: {}\n", parts.join("; ")));
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::tests::row;
    use crate::suite::Api;

    #[test]
    fn the_fit_recovers_a_launch_term_and_a_rate() {
        // 3 µs a launch, 2000 GB/s (2e3 bytes per ns = 2e6 bytes per µs).
        let points: Vec<(f64, f64)> = (0..9)
            .map(|i| {
                let bytes = 8192.0 * 4f64.powi(i);
                (bytes, 3.0 + bytes / 2e6)
            })
            .collect();
        let fit = fit(&points).unwrap();
        assert!((fit.a_us - 3.0).abs() < 1e-9, "{fit:?}");
        assert!((fit.b_gbps - 2000.0).abs() < 1e-6, "{fit:?}");
        assert_eq!(super::fit(&points[..1]), None);
        // Time falling with size has no positive rate.
        assert_eq!(super::fit(&[(1.0, 5.0), (1e6, 4.0)]), None);
    }

    #[test]
    fn the_summary_names_every_cost_of_a_setting() {
        let launch_row = |variant: &str, param: &str, bytes: u64, time_us: f64| Row {
            family: Family::Launch,
            bytes,
            time_us_median: Some(time_us),
            ..row(variant, param, 1.0)
        };
        let rows = [
            launch_row("apart", "size=256", 512, 2.0),
            launch_row("shared", "size=256", 512, 5.0),
            launch_row("pass", "size=256", 512, 4.0),
            launch_row("indirect", "size=256", 512, 3.5),
            launch_row("submit_wait", "size=256", 512, 40.0),
            launch_row("submit_batch", "size=256", 512, 10.0),
            launch_row("scale", "size=4096", 8192, 3.0 + 8192.0 / 1e6),
            launch_row("scale", "size=1048576", 2 << 20, 3.0 + 2097152.0 / 1e6),
            Row {
                api: Api::Cuda,
                ..launch_row("graph", "size=256", 512, 1.0)
            },
        ];
        let lines = summary_lines(&rows);
        assert!(
            lines.contains(
                "launch, wgpu/default: 2.00 µs per dispatch in a pass (5.00 with a shared \
                 buffer), 4.00 per pass, 40.00 per submission (10.00 submitted together); \
                 indirect +1.50; small kernels a = 3.00 µs, b = 1000 GB/s\n"
            ),
            "{lines}"
        );
        assert!(lines.contains("launch, cuda/default: - µs"), "{lines}");
        assert!(lines.contains("1.00 per launch in a graph"), "{lines}");
    }
}
