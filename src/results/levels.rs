//! Memory levels named from a sweep: the plateaus of bandwidth (or latency) against
//! the data set's size, where each ends, and which level of the hierarchy each is.
//!
//! A sweep's points are taken in order of size. A point joins the current plateau
//! unless it is more than the sense's step ([`Sense::step`]) worse than the plateau's
//! median (bandwidth lower, latency higher), or as much better: then it starts a new
//! one. A plateau of fewer than the sweep's `min_points`, or a bandwidth plateau
//! spanning less than a doubling of the size, is a transition between levels (or an
//! outlier), not a level; neighbours it separated that are within the step of
//! each other are one plateau again. The levels are named in
//! order: the first L1, the last DRAM, those between L2 (two of them: the near and far
//! partitions of a split L2). The names are by order alone: a sweep that stops inside
//! the L2 (`--quick`) names its last plateau L2, and a device whose L1 does not cache
//! these loads would have its L2 called L1.

use super::Row;
use crate::suite::families::{hierarchy, latency};
use crate::suite::{Experiment, Key, Setting};

/// Points a bandwidth plateau needs: the sweeps step by 1.19 and 1.15, and a
/// transition between levels spans two or three of them.
pub(crate) const BANDWIDTH_MIN_POINTS: usize = 3;
/// Points a latency plateau needs: the chase steps by 4 where the L1 ends.
pub(crate) const LATENCY_MIN_POINTS: usize = 2;

/// What a sweep's values are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sense {
    /// GB/s: higher is better, a level ends where it drops.
    Bandwidth,
    /// ns per load: lower is better, a level ends where it rises.
    Latency,
}

impl Sense {
    /// How much worse than its plateau's median a point must be to start a new plateau.
    /// Bandwidth wobbles within a level; the chase's time per load is steadier, and a
    /// split L2's far level is not much faster than DRAM in wgpu (docs/hierarchy.md,
    /// The levels).
    pub fn step(self) -> f64 {
        match self {
            Sense::Bandwidth => 0.25,
            Sense::Latency => 0.15,
        }
    }

    /// The factor of sizes a level spans at least, first point to last. A bandwidth
    /// level holds at least twice what the level before it holds (a split L2's far
    /// half: both halves), so its points span at least 2 ÷ the sweeps' step of 1.19:
    /// 1.68. In wgpu's default build an H100's sweeps (GPU-c2d267a9, e511d62) fell
    /// from the L2 to DRAM through four sizes at 5.0 TB/s between 55.7 and 84.4 MiB,
    /// a slope of span 1.52 that a count of points alone took for a level. The
    /// chase's few coarse steps are levels by their count.
    fn min_span(self) -> f64 {
        match self {
            Sense::Bandwidth => 1.6,
            Sense::Latency => 1.0,
        }
    }
}

/// One level found in a sweep.
#[derive(Clone, Debug, PartialEq)]
pub struct Level {
    /// The level's name (`L1`, `L2`, `DRAM`, …).
    pub name: String,
    /// The median of the plateau's values (GB/s or ns).
    pub value: f64,
    /// The smallest and the largest size that belong to it, in bytes.
    pub(crate) first_bytes: u64,
    pub(crate) last_bytes: u64,
}

/// The levels of a sweep of `(bytes, value)` points (in any order).
pub fn levels(points: &[(u64, f64)], sense: Sense, min_points: usize) -> Vec<Level> {
    let mut points: Vec<(u64, f64)> = points
        .iter()
        .copied()
        .filter(|(_, v)| v.is_finite() && *v > 0.0)
        .collect();
    points.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)));
    let mut plateaus: Vec<Vec<(u64, f64)>> = Vec::new();
    for point in points {
        match plateaus.last_mut() {
            Some(plateau) if !steps(median(plateau), point.1, sense) => plateau.push(point),
            _ => plateaus.push(vec![point]),
        }
    }
    plateaus.retain(|plateau| {
        let span = plateau[plateau.len() - 1].0 as f64 / plateau[0].0 as f64;
        plateau.len() >= min_points.max(1) && span >= sense.min_span()
    });
    let mut merged: Vec<Vec<(u64, f64)>> = Vec::new();
    for plateau in plateaus {
        match merged.last_mut() {
            Some(before) if !steps(median(before), median(&plateau), sense) => {
                before.extend(plateau);
            }
            _ => merged.push(plateau),
        }
    }
    let plateaus = merged;
    let count = plateaus.len();
    plateaus
        .iter()
        .enumerate()
        .map(|(index, plateau)| Level {
            name: name(index, count).to_owned(),
            value: median(plateau),
            first_bytes: plateau[0].0,
            last_bytes: plateau[plateau.len() - 1].0,
        })
        .collect()
}

/// `found` with the names of a hierarchy whose levels are known (a simulator preset's,
/// [`crate::sim::device::DeviceModel::level_names`]) where it has as many levels;
/// else as [`levels`] named them, by order.
pub fn renamed(mut found: Vec<Level>, names: &[&str]) -> Vec<Level> {
    if found.len() == names.len() {
        for (level, name) in found.iter_mut().zip(names) {
            (*name).clone_into(&mut level.name);
        }
    }
    found
}

/// Whether `value` is more than the sense's step worse than a plateau's `typical`
/// value, or as much better: a new plateau.
fn steps(typical: f64, value: f64, sense: Sense) -> bool {
    let step = sense.step();
    let (worse, better) = match sense {
        Sense::Bandwidth => (
            value < typical * (1.0 - step),
            value > typical / (1.0 - step),
        ),
        Sense::Latency => (
            value > typical * (1.0 + step),
            value < typical / (1.0 + step),
        ),
    };
    worse || better
}

/// The name of level `index` of `count`: L1 first, DRAM last (of three or more), L2
/// between.
fn name(index: usize, count: usize) -> &'static str {
    match (index, count) {
        (0, _) => "L1",
        (i, c) if c >= 3 && i == c - 1 => "DRAM",
        (1, 4) => "L2 near",
        (2, 4) => "L2 far",
        _ => "L2",
    }
}

fn median(plateau: &[(u64, f64)]) -> f64 {
    let mut values: Vec<f64> = plateau.iter().map(|p| p.1).collect();
    values.sort_by(f64::total_cmp);
    let middle = values.len() / 2;
    if values.len() % 2 == 1 {
        values[middle]
    } else {
        (values[middle - 1] + values[middle]) / 2.0
    }
}

/// The bandwidth sweeps whose points are named together: the window, then the shared
/// buffer.
pub(crate) const BANDWIDTH_SWEEPS: &[&Experiment] = &[&hierarchy::WINDOW, &hierarchy::SHARED];
/// The latency sweep.
pub(crate) const LATENCY_SWEEPS: &[&Experiment] = &[&latency::CHASE];

/// The `(footprint, value)` points of `experiments`' rows of `setting`: GB/s, or ns per
/// load for a latency sweep; `predicted` reads the simulator's.
pub(crate) fn sweep_points(
    rows: &[Row],
    experiments: &[&Experiment],
    setting: Setting,
    sense: Sense,
    predicted: bool,
) -> Vec<(u64, f64)> {
    rows.iter()
        .filter(|row| row.setting() == setting)
        .filter(|row| {
            experiments
                .iter()
                .any(|e| row.family == e.family && row.variant == e.variant)
        })
        .filter_map(|row| sweep_point(row, sense, predicted))
        .collect()
}

/// One row's point of a sweep: its footprint and its GB/s (or ns per load), measured
/// or predicted.
pub(crate) fn sweep_point(row: &Row, sense: Sense, predicted: bool) -> Option<(u64, f64)> {
    let bytes = row.params.number(Key::Footprint)?;
    let gbps = if predicted {
        row.sim_gbps
    } else {
        row.gbps_median
    };
    let value = match sense {
        Sense::Bandwidth => gbps?,
        Sense::Latency => super::ns_per_element(row, gbps)?,
    };
    Some((bytes, value))
}

/// `12.3 TB/s` or `812 GB/s`; `245.1 ns`.
pub(crate) fn value_text(value: f64, sense: Sense) -> String {
    match sense {
        Sense::Bandwidth if value >= 1000.0 => format!("{:.1} TB/s", value / 1000.0),
        Sense::Bandwidth if value >= 1.0 || value <= 0.0 => format!("{value:.0} GB/s"),
        // Two significant digits: a software adapter's kernel is not "0 GB/s".
        Sense::Bandwidth => {
            let (mut decimals, mut scaled) = (1, value);
            while scaled < 1.0 && decimals < 12 {
                scaled *= 10.0;
                decimals += 1;
            }
            format!("{value:.decimals$} GB/s")
        }
        Sense::Latency => format!("{value:.1} ns"),
    }
}

/// `192 KiB`, `24.5 MiB`, `1 GiB`.
pub(crate) fn bytes_text(bytes: u64) -> String {
    let (value, unit) = if bytes >= 1 << 30 {
        (bytes as f64 / f64::from(1u32 << 30), "GiB")
    } else if bytes >= 1 << 20 {
        (bytes as f64 / f64::from(1u32 << 20), "MiB")
    } else {
        (bytes as f64 / 1024.0, "KiB")
    };
    if value.fract() == 0.0 || value >= 100.0 {
        format!("{value:.0} {unit}")
    } else {
        format!("{value:.1} {unit}")
    }
}

/// `L1 20.1 TB/s to 192 KiB, L2 7.9 TB/s to 24.5 MiB, DRAM 3.1 TB/s to 1 GiB`.
pub(crate) fn levels_text(levels: &[Level], sense: Sense) -> String {
    levels
        .iter()
        .map(|level| {
            format!(
                "{} {} to {}",
                level.name,
                value_text(level.value, sense),
                bytes_text(level.last_bytes)
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The lines a run's summary ends with: per setting that ran a sweep, its levels,
/// named as `names` has them where given ([`renamed`]).
pub(crate) fn summary_lines(rows: &[Row], names: Option<&[&str]>) -> String {
    let mut settings: Vec<Setting> = rows.iter().map(Row::setting).collect();
    settings.sort();
    settings.dedup();
    let mut lines = String::new();
    for setting in settings {
        for (what, experiments, sense, min_points) in [
            (
                "bandwidth",
                BANDWIDTH_SWEEPS,
                Sense::Bandwidth,
                BANDWIDTH_MIN_POINTS,
            ),
            (
                "latency",
                LATENCY_SWEEPS,
                Sense::Latency,
                LATENCY_MIN_POINTS,
            ),
        ] {
            for (source, predicted) in [("measured", false), ("predicted", true)] {
                let points = sweep_points(rows, experiments, setting, sense, predicted);
                if points.is_empty() {
                    continue;
                }
                let mut found = levels(&points, sense, min_points);
                if let Some(names) = names {
                    found = renamed(found, names);
                }
                let text = if found.is_empty() {
                    "no plateau".to_owned()
                } else {
                    levels_text(&found, sense)
                };
                lines.push_str(&format!("levels, {what}, {setting}, {source}: {text}\n"));
            }
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A staircase: (level value, last size) steps over sizes growing by `ratio` from
    /// 4 KiB, each value times 1 + noise from a fixed wobble of ±`noise`.
    #[expect(
        clippy::cast_possible_truncation,
        reason = "whole bytes of a footprint below 2^64"
    )]
    fn staircase(steps: &[(f64, u64)], ratio: f64, noise: f64) -> Vec<(u64, f64)> {
        let mut points = Vec::new();
        let mut bytes = 4096.0;
        let mut index = 0usize;
        for &(value, last) in steps {
            while bytes as u64 <= last {
                let wobble = noise * [1.0, -0.6, 0.3, -1.0, 0.7][index % 5];
                points.push((bytes as u64, value * (1.0 + wobble)));
                bytes *= ratio;
                index += 1;
            }
        }
        points
    }

    fn summary(levels: &[Level]) -> Vec<(&str, u64)> {
        levels
            .iter()
            .map(|l| (l.name.as_str(), l.last_bytes))
            .collect()
    }

    #[test]
    fn a_clean_staircase_names_l1_l2_and_dram() {
        let points = staircase(
            &[
                (20_000.0, 200 << 10),
                (8_000.0, 40 << 20),
                (3_000.0, 1 << 30),
            ],
            1.15,
            0.0,
        );
        let found = levels(&points, Sense::Bandwidth, BANDWIDTH_MIN_POINTS);
        let names: Vec<&str> = found.iter().map(|l| l.name.as_str()).collect();
        assert_eq!(names, ["L1", "L2", "DRAM"]);
        assert_eq!(
            found.iter().map(|l| l.value).collect::<Vec<_>>(),
            [20_000.0, 8_000.0, 3_000.0]
        );
        // Each ends at the last point at or below its capacity.
        for (level, capacity) in found.iter().zip([200u64 << 10, 40 << 20, 1 << 30]) {
            assert!(level.last_bytes <= capacity, "{level:?}");
            assert!(
                level.last_bytes as f64 * 1.15 > capacity as f64,
                "{level:?}"
            );
        }
        assert_eq!(found[0].first_bytes, 4096);
    }

    #[test]
    fn noise_and_a_gradual_transition_make_no_level() {
        // ±10 % wobble, and two points half-way between L1 and L2.
        let mut points = staircase(
            &[
                (20_000.0, 200 << 10),
                (8_000.0, 40 << 20),
                (3_000.0, 1 << 30),
            ],
            1.15,
            0.10,
        );
        points.push((210 << 10, 14_000.0));
        points.push((220 << 10, 11_000.0));
        let found = levels(&points, Sense::Bandwidth, BANDWIDTH_MIN_POINTS);
        assert_eq!(
            found.iter().map(|l| l.name.as_str()).collect::<Vec<_>>(),
            ["L1", "L2", "DRAM"]
        );
        for (level, value) in found.iter().zip([20_000.0, 8_000.0, 3_000.0]) {
            assert!((level.value / value - 1.0).abs() < 0.1, "{level:?}");
        }
    }

    #[test]
    fn a_slope_of_several_sizes_between_l2_and_dram_is_no_level() {
        // As the default build's sweeps on an H100: four sizes from 56 to 84 MiB at
        // 5 TB/s, between an 8.3 TB/s L2 and a 3.3 TB/s DRAM.
        let mut points = staircase(
            &[
                (20_000.0, 200 << 10),
                (8_300.0, 48 << 20),
                (3_300.0, 1 << 30),
            ],
            1.15,
            0.0,
        );
        points.retain(|&(bytes, _)| !(56 << 20..=84 << 20).contains(&bytes));
        for mib in [56, 64, 74, 84] {
            points.push((mib << 20, 5_000.0));
        }
        let found = levels(&points, Sense::Bandwidth, BANDWIDTH_MIN_POINTS);
        assert_eq!(
            found.iter().map(|l| l.name.as_str()).collect::<Vec<_>>(),
            ["L1", "L2", "DRAM"],
            "{found:?}"
        );
        assert!(found[1].last_bytes <= 48 << 20, "{found:?}");
        // A latency plateau of two coarse steps is a level.
        let chase = [
            (1 << 10, 30.0),
            (4 << 10, 30.0),
            (16 << 10, 200.0),
            (20 << 10, 200.0),
        ];
        assert_eq!(levels(&chase, Sense::Latency, LATENCY_MIN_POINTS).len(), 2);
    }

    #[test]
    fn an_outlier_splits_no_plateau() {
        let mut points = staircase(
            &[
                (20_000.0, 200 << 10),
                (8_000.0, 40 << 20),
                (3_000.0, 1 << 30),
            ],
            1.15,
            0.05,
        );
        // One slow sample inside the L1's plateau, one fast inside the L2's.
        points.push((100 << 10, 9_000.0));
        points.push((10 << 20, 15_000.0));
        let found = levels(&points, Sense::Bandwidth, BANDWIDTH_MIN_POINTS);
        assert_eq!(
            found.iter().map(|l| l.name.as_str()).collect::<Vec<_>>(),
            ["L1", "L2", "DRAM"]
        );
        assert_eq!(found[0].first_bytes, 4096);
        assert!(found[1].last_bytes > 30 << 20, "{found:?}");
    }

    #[test]
    fn a_split_l2_shows_as_near_and_far() {
        let points = staircase(
            &[
                (20_000.0, 200 << 10),
                (9_000.0, 24 << 20),
                (6_000.0, 48 << 20),
                (3_000.0, 1 << 30),
            ],
            1.15,
            0.05,
        );
        let found = levels(&points, Sense::Bandwidth, BANDWIDTH_MIN_POINTS);
        let names: Vec<&str> = found.iter().map(|l| l.name.as_str()).collect();
        assert_eq!(names, ["L1", "L2 near", "L2 far", "DRAM"]);
        assert!(found[1].last_bytes <= 24 << 20 && found[2].last_bytes <= 48 << 20);
        assert!(found[2].last_bytes as f64 * 1.15 > f64::from(48u32 << 20));
    }

    #[test]
    fn latency_rises_where_bandwidth_drops() {
        // The chase: ×4 steps, then fine; 40 ns in L1, 250 in L2, 600 in DRAM.
        let points = [
            (4 << 10, 40.0),
            (16 << 10, 41.0),
            (64 << 10, 40.0),
            (256 << 10, 240.0),
            (1 << 20, 250.0),
            (4 << 20, 255.0),
            (32 << 20, 262.0),
            (64 << 20, 590.0),
            (128 << 20, 600.0),
            (256 << 20, 610.0),
        ];
        let found = levels(&points, Sense::Latency, LATENCY_MIN_POINTS);
        assert_eq!(
            summary(&found),
            [("L1", 64 << 10), ("L2", 32 << 20), ("DRAM", 256 << 20)]
        );
        assert_eq!(
            levels_text(&found, Sense::Latency),
            "L1 40.0 ns to 64 KiB, L2 252.5 ns to 32 MiB, DRAM 600.0 ns to 256 MiB"
        );
    }

    #[test]
    #[expect(
        clippy::cast_possible_truncation,
        reason = "whole bytes of footprints of a few MiB"
    )]
    fn a_far_l2_a_fifth_faster_than_dram_is_a_level_of_its_own() {
        // As wgpu's chase on an H100 (docs/hierarchy.md, The levels): the far L2 a
        // fifth faster than DRAM, and the rise from the near level spans three footprints.
        let mut points = staircase(&[(29.0, 16 << 10), (153.0, 18 << 20)], 4.0, 0.01);
        let mib = |m: f64| (m * f64::from(1u32 << 20)) as u64;
        points.extend([
            (mib(21.1), 178.0),
            (mib(24.3), 211.0),
            (mib(27.9), 246.0),
            (mib(32.0), 283.0),
            (mib(36.8), 285.0),
            (mib(42.2), 291.0),
            (mib(48.5), 312.0),
            (mib(55.7), 354.0),
            (mib(64.0), 361.0),
            (mib(97.0), 337.0),
            (mib(256.0), 353.0),
        ]);
        let found = levels(&points, Sense::Latency, LATENCY_MIN_POINTS);
        assert_eq!(
            summary(&found),
            [
                ("L1", 16 << 10),
                ("L2 near", 16 << 20),
                ("L2 far", mib(48.5)),
                ("DRAM", 256 << 20)
            ]
        );
        assert_eq!(found[2].value, 288.0);
    }

    /// The committed H100 file: every api and build names both L2 partitions, the far one
    /// ending at the last step below the 50 MiB L2.
    #[test]
    #[expect(
        clippy::cast_possible_truncation,
        reason = "whole bytes of footprints of a few MiB"
    )]
    fn the_h100_chase_names_a_near_and_a_far_l2_in_every_setting() {
        let path = std::path::Path::new("results/nvidia-h100-80gb-hbm3-c7018ded-vulkan.csv");
        let rows = crate::results::read::read(path).expect("the committed H100 file");
        let mut settings: Vec<Setting> = rows.iter().map(Row::setting).collect();
        settings.sort();
        settings.dedup();
        assert!(settings.len() >= 5, "{settings:?}");
        let mib = |m: f64| (m * f64::from(1u32 << 20)) as u64;
        for setting in settings {
            let points = sweep_points(&rows, LATENCY_SWEEPS, setting, Sense::Latency, false);
            let found = levels(&points, Sense::Latency, LATENCY_MIN_POINTS);
            let names: Vec<&str> = found.iter().map(|l| l.name.as_str()).collect();
            assert_eq!(names, ["L1", "L2 near", "L2 far", "DRAM"], "{setting}");
            assert!(
                (mib(18.0)..=mib(24.3)).contains(&found[1].last_bytes),
                "{setting}: {found:?}"
            );
            assert!(
                (mib(45.0)..=50 << 20).contains(&found[2].last_bytes),
                "{setting}: {found:?}"
            );
        }
    }

    #[test]
    fn a_sweep_that_stops_in_the_l2_has_no_dram() {
        let points = staircase(&[(20_000.0, 200 << 10), (8_000.0, 4 << 20)], 1.19, 0.0);
        let found = levels(&points, Sense::Bandwidth, BANDWIDTH_MIN_POINTS);
        let names: Vec<&str> = found.iter().map(|l| l.name.as_str()).collect();
        assert_eq!(names, ["L1", "L2"]);
        assert!(levels(&[], Sense::Bandwidth, 3).is_empty());
    }

    #[test]
    fn the_summary_names_each_settings_levels() {
        use crate::suite::Family;
        let window = |bytes: u64, gbps: f64| Row {
            family: Family::Hierarchy,
            ..crate::results::tests::row("window", &format!("footprint={bytes}"), gbps)
        };
        let shared = |bytes: u64, gbps: f64| Row {
            variant: "shared".into(),
            ..window(bytes, gbps)
        };
        let rows = [
            window(4 << 10, 20_000.0),
            window(8 << 10, 20_000.0),
            window(16 << 10, 20_000.0),
            window(512 << 10, 8_000.0),
            shared(1 << 20, 8_000.0),
            shared(2 << 20, 8_000.0),
            shared(256 << 20, 3_000.0),
            shared(512 << 20, 3_000.0),
            shared(1 << 30, 3_000.0),
        ];
        assert_eq!(
            summary_lines(&rows, None),
            "levels, bandwidth, wgpu/default, measured: L1 20.0 TB/s to 16 KiB, \
             L2 8.0 TB/s to 2 MiB, DRAM 3.0 TB/s to 1 GiB\n"
        );
        assert_eq!(
            summary_lines(&rows[..1], None),
            "levels, bandwidth, wgpu/default, measured: no plateau\n"
        );
    }

    #[test]
    fn texts_read_well() {
        assert_eq!(bytes_text(192 << 10), "192 KiB");
        assert_eq!(bytes_text(25_690_112), "24.5 MiB");
        assert_eq!(bytes_text(1 << 30), "1 GiB");
        assert_eq!(value_text(20_123.0, Sense::Bandwidth), "20.1 TB/s");
        assert_eq!(value_text(812.4, Sense::Bandwidth), "812 GB/s");
        assert_eq!(value_text(0.4, Sense::Bandwidth), "0.40 GB/s");
        assert_eq!(value_text(0.0123, Sense::Bandwidth), "0.012 GB/s");
        assert_eq!(value_text(0.0, Sense::Bandwidth), "0 GB/s");
    }
}
