//! Each device's own kernels (`membench kernel`) placed against its memory: a chart per
//! device and setting with `kernel` rows, each row's GB/s at its footprint (both
//! logarithmic) over the device's measured bandwidth levels drawn as a staircase. The
//! levels come from the device's own rows where they hold the hierarchy sweeps (a
//! kernels file joins its GPU's results file, `results::load`), else from another
//! input of the same model.

use std::path::Path;

use plotters::prelude::*;

use super::axis::{Axis, Scale};
use super::legend::Entry;
use super::loglog::{clipped, log_log_svg};
use super::sweep::bytes_label;
use super::{Chart, Stroke, chart_error, draw_marker, style};
use crate::error::Result;
use crate::kernel::place::device_levels;
use crate::results::levels::{Level, Sense, levels_text};
use crate::results::{DeviceResults, Row, Status, slug};
use crate::suite::{Family, Key, Setting};

/// One input's kernel rows and the levels they are placed against.
#[derive(Debug)]
pub(crate) struct Placed<'d> {
    /// The input whose `kernel` rows these are.
    pub(crate) device: &'d DeviceResults,
    /// Its kernel rows, in file order.
    pub(crate) rows: Vec<&'d Row>,
    /// The device's bandwidth levels; empty where no input of it holds them.
    pub(crate) levels: Vec<Level>,
    /// The file and setting the levels were found in.
    pub(crate) source: Option<(&'d Path, Setting)>,
}

/// Every input with `kernel` rows, placed against its device's levels.
pub(crate) fn placed(devices: &[DeviceResults]) -> Vec<Placed<'_>> {
    devices
        .iter()
        .filter_map(|device| {
            let rows: Vec<&Row> = device
                .rows
                .iter()
                .filter(|row| row.family == Family::Kernel)
                .collect();
            if rows.is_empty() {
                return None;
            }
            let (levels, source) = levels_of(devices, device);
            Some(Placed {
                device,
                rows,
                levels,
                source,
            })
        })
        .collect()
}

/// The levels of `device`'s GPU: of the inputs of the same device (by name, as the
/// report joins devices), the kernel rows' own first, then those of the same GPU
/// (UUID), each in the kernel rows' setting first, then wgpu's default build.
fn levels_of<'d>(
    devices: &'d [DeviceResults],
    device: &DeviceResults,
) -> (Vec<Level>, Option<(&'d Path, Setting)>) {
    let Some(identity) = device.metadata() else {
        return (Vec::new(), None);
    };
    let mut candidates: Vec<&DeviceResults> = devices
        .iter()
        .filter(|other| {
            other
                .metadata()
                .is_some_and(|row| row.device == identity.device)
        })
        .collect();
    candidates.sort_by_key(|other| {
        let uuid = other.metadata().map(|row| row.gpu_uuid.as_str());
        (
            other.path != device.path,
            uuid != Some(identity.gpu_uuid.as_str()),
            other.setting != device.setting,
            other.setting != Setting::WGPU,
        )
    });
    candidates
        .into_iter()
        .map(|other| {
            (
                device_levels(&other.rows, other.setting),
                (other.path.as_path(), other.setting),
            )
        })
        .find(|(levels, _)| !levels.is_empty())
        .map_or((Vec::new(), None), |(levels, source)| {
            (levels, Some(source))
        })
}

/// The chart of each input with a measured kernel row.
pub(crate) fn kernel_charts(placed: &[Placed<'_>]) -> Result<Vec<Chart>> {
    placed
        .iter()
        .filter(|one| one.rows.iter().any(|row| point(row).is_some()))
        .map(kernel_chart)
        .collect()
}

/// A row's footprint in bytes and its GB/s, where it was measured.
pub(crate) fn point(row: &Row) -> Option<(u64, f64)> {
    let gbps = row.gbps_median.filter(|_| row.status == Status::Ok)?;
    Some((row.params.number(Key::Footprint)?, gbps))
}

fn kernel_chart(placed: &Placed<'_>) -> Result<Chart> {
    let levels = match placed.source {
        Some((path, setting)) => {
            format!("levels of {} in {setting}", crate::text::shown_path(path))
        }
        None => "no measured levels of this GPU in the inputs: \
                 `membench run --profile levels` measures them"
            .to_owned(),
    };
    let title = format!(
        "kernel: GB/s vs footprint on {}, over its memory levels ({levels})",
        placed.device.label
    );
    let file = super::file_name(&format!("kernel-levels-{}", slug(&placed.device.label)));
    let svg = kernel_svg(&title, placed).map_err(|message| chart_error(&file, message))?;
    Ok(Chart {
        family: Some(Family::Kernel),
        file,
        title,
        svg,
    })
}

fn kernel_svg(title: &str, placed: &Placed<'_>) -> Result<String, String> {
    let mut names: Vec<&str> = Vec::new();
    for row in &placed.rows {
        if point(row).is_some() && !names.contains(&row.variant.as_str()) {
            names.push(&row.variant);
        }
    }
    let mut entries: Vec<Entry> = names
        .iter()
        .enumerate()
        .map(|(index, name)| {
            let (colour, marker) = style(index);
            Entry {
                label: (*name).to_owned(),
                colour,
                style: Stroke::Solid,
                marker: Some(marker),
            }
        })
        .collect();
    if !placed.levels.is_empty() {
        entries.push(Entry {
            label: format!(
                "measured levels: {}",
                levels_text(&placed.levels, Sense::Bandwidth)
            ),
            colour: BLACK,
            style: Stroke::Solid,
            marker: None,
        });
    }
    let points: Vec<(&str, f64, f64)> = placed
        .rows
        .iter()
        .filter_map(|row| {
            let (bytes, gbps) = point(row)?;
            Some((row.variant.as_str(), bytes as f64, gbps))
        })
        .collect();
    let level_bytes = placed
        .levels
        .iter()
        .flat_map(|l| [l.first_bytes as f64, l.last_bytes as f64]);
    let x = extent(
        points.iter().map(|p| p.1).chain(level_bytes),
        Scale::Log(2.0),
    );
    let y = extent(
        points
            .iter()
            .map(|p| p.2)
            .chain(placed.levels.iter().map(|l| l.value)),
        Scale::Log(10.0),
    );
    log_log_svg(
        title,
        (
            "footprint: bytes of all bindings (log)",
            "GB/s (10⁹ B/s; log)",
        ),
        (x, y),
        bytes_label,
        &entries,
        |plot| {
            let range = x.range();
            // Each level reaches to its last size: a footprint up to there fits it.
            let mut stairs = Vec::new();
            let mut from = range.start;
            for (index, level) in placed.levels.iter().enumerate() {
                let to = if index + 1 == placed.levels.len() {
                    range.end
                } else {
                    x.at(level.last_bytes as f64)
                };
                stairs.push((from, y.at(level.value)));
                stairs.push((to, y.at(level.value)));
                from = to;
            }
            for pair in stairs.windows(2) {
                if let Some(line) = clipped(plot, pair[0], pair[1]) {
                    plot.draw_series(std::iter::once(PathElement::new(
                        line,
                        BLACK.stroke_width(2),
                    )))
                    .map_err(|e| e.to_string())?;
                }
            }
            for &(name, bytes, gbps) in &points {
                let index = names.iter().position(|n| *n == name).unwrap_or(0);
                let (colour, marker) = style(index);
                draw_marker(
                    plot.plotting_area(),
                    (x.at(bytes), y.at(gbps)),
                    marker,
                    colour,
                )?;
            }
            Ok(())
        },
    )
}

/// An axis of `scale` over the finite positive `values`, with a margin.
fn extent(values: impl Iterator<Item = f64>, scale: Scale) -> Axis {
    let (low, high) = values
        .filter(|v| v.is_finite() && *v > 0.0)
        .fold((f64::INFINITY, 0.0f64), |(l, h), v| (l.min(v), h.max(v)));
    Axis::new(scale, low / 1.5, high * 1.5)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suite::families::hierarchy;

    fn row(family: Family, variant: &str, params: &str, gbps: f64) -> Row {
        Row {
            family,
            device: "GPU".into(),
            gpu_uuid: "GPU-1".into(),
            ..crate::results::tests::row(variant, params, gbps)
        }
    }

    fn input(path: &str, rows: Vec<Row>) -> DeviceResults {
        DeviceResults {
            path: path.into(),
            kernel_files: Vec::new(),
            label: format!("GPU [{path}]"),
            setting: Setting::WGPU,
            rows,
        }
    }

    /// The window sweep of a device with three levels: 20000, 5000 and 2000 GB/s.
    fn hierarchy_file() -> DeviceResults {
        let window = |kib: u64, gbps| {
            let w = &hierarchy::WINDOW;
            row(
                w.family,
                w.variant,
                &format!("footprint={}", kib << 10),
                gbps,
            )
        };
        let mut rows: Vec<Row> = [1, 2, 4, 8].map(|k| window(k, 20_000.0)).into();
        rows.extend([64, 128, 256, 512].map(|k| window(k, 5000.0)));
        rows.extend([8 << 10, 16 << 10, 32 << 10].map(|k| window(k, 2000.0)));
        input("gpu.csv", rows)
    }

    fn kernels_file(rows: Vec<Row>) -> DeviceResults {
        input("gpu-kernels.csv", rows)
    }

    #[test]
    fn kernels_are_drawn_over_the_levels_of_the_same_gpus_results_file() {
        let devices = [
            hierarchy_file(),
            kernels_file(vec![
                row(
                    Family::Kernel,
                    "saxpy",
                    "size=n:1024;footprint=8192",
                    4000.0,
                ),
                row(
                    Family::Kernel,
                    "transpose",
                    "size=n:4096;footprint=67108864",
                    900.0,
                ),
            ]),
        ];
        let placed = placed(&devices);
        assert_eq!(placed.len(), 1);
        assert_eq!(placed[0].levels.len(), 3);
        assert_eq!(
            placed[0].source,
            Some((Path::new("gpu.csv"), Setting::WGPU))
        );
        let charts = kernel_charts(&placed).unwrap();
        assert_eq!(charts.len(), 1);
        let chart = &charts[0];
        assert_eq!(chart.family, Some(Family::Kernel));
        assert!(chart.title.contains("levels of gpu.csv"), "{}", chart.title);
        for label in [
            "saxpy",
            "transpose",
            "measured levels: L1 20.0 TB/s to 8 KiB",
        ] {
            assert!(chart.svg.contains(label), "{label} missing");
        }
    }

    #[test]
    fn a_gpu_without_levels_says_so_and_no_measured_kernel_draws_nothing() {
        let other_gpu = DeviceResults {
            rows: hierarchy_file()
                .rows
                .into_iter()
                .map(|r| Row {
                    device: "Other GPU".into(),
                    ..r
                })
                .collect(),
            ..hierarchy_file()
        };
        let devices = [
            other_gpu,
            kernels_file(vec![row(
                Family::Kernel,
                "saxpy",
                "size=n:1024;footprint=8192",
                4000.0,
            )]),
        ];
        let placed = placed(&devices);
        assert!(placed[0].levels.is_empty());
        let chart = &kernel_charts(&placed).unwrap()[0];
        assert!(
            chart.title.contains("no measured levels"),
            "{}",
            chart.title
        );
        assert!(!chart.svg.contains("measured levels:"));

        let mut failed = row(
            Family::Kernel,
            "saxpy",
            "size=n:1024;footprint=8192",
            4000.0,
        );
        failed.status = Status::Failed;
        let devices = [hierarchy_file(), kernels_file(vec![failed])];
        let placed = super::placed(&devices);
        assert_eq!(placed.len(), 1);
        assert!(kernel_charts(&placed).unwrap().is_empty());
        assert!(super::placed(&[hierarchy_file()]).is_empty());
    }
}
