//! Each device's roofline for the `compute` family, one chart per results file and
//! setting: operations per second against operations per byte, both logarithmic. The
//! compute ceiling of each element type is its peak (dashed, its colour), the memory
//! roof the line y = DRAM bandwidth × x (black), and the measured rows are points.

use plotters::element::DashedPathElement;
use plotters::prelude::*;

use super::axis::{Axis, Scale};
use super::legend::Entry;
use super::loglog::{clipped, log_log_svg};
use super::{Chart, Stroke, chart_error, draw_marker, number_label, style};
use crate::error::Result;
use crate::results::compute::{dram_gbps, peak};
use crate::results::{DeviceResults, Status, slug};
use crate::suite::families::compute::Element;
use crate::suite::{Family, Key};

/// One element type's series: its measured points (operations per byte, 10^9
/// operations per second) and its ceiling.
struct Series {
    element: Element,
    points: Vec<(f64, f64)>,
    ceiling: Option<f64>,
}

/// The roofline of each of `devices` with a measured `compute` row.
pub(crate) fn roofline_charts(devices: &[DeviceResults]) -> Result<Vec<Chart>> {
    devices
        .iter()
        .filter_map(|device| {
            let series = series(device);
            (!series.is_empty()).then(|| roofline_chart(device, &series))
        })
        .collect()
}

/// The element types `device` measured, each with its points and peak.
fn series(device: &DeviceResults) -> Vec<Series> {
    Element::ALL
        .into_iter()
        .filter_map(|element| {
            let variant = element.experiment().variant;
            let points: Vec<(f64, f64)> = device
                .rows
                .iter()
                .filter(|row| {
                    row.family == Family::Compute
                        && row.variant == variant
                        && row.status == Status::Ok
                })
                .filter_map(|row| {
                    let per_byte = element.ops_per_byte(row.params.number(Key::Rounds)?);
                    Some((per_byte, row.gbps_median? * per_byte))
                })
                .collect();
            (!points.is_empty()).then(|| Series {
                element,
                points,
                ceiling: peak(&device.rows, element, device.setting).map(|p| p.gops),
            })
        })
        .collect()
}

/// GFLOP/s, or Gop/s for the integer multiply-add.
fn unit(element: Element) -> &'static str {
    match element {
        Element::Int => "Gop/s",
        Element::F32 | Element::F16 => "GFLOP/s",
    }
}

fn roofline_chart(device: &DeviceResults, series: &[Series]) -> Result<Chart> {
    let title = format!(
        "compute: roofline on {}, operations per second vs per byte",
        device.label
    );
    let file = super::file_name(&format!("compute-roofline-{}", slug(&device.label)));
    let dram = dram_gbps(&device.rows, device.setting);
    let svg = roofline_svg(&title, series, dram).map_err(|message| chart_error(&file, message))?;
    Ok(Chart {
        family: Some(Family::Compute),
        file,
        title,
        svg,
    })
}

fn roofline_svg(title: &str, series: &[Series], dram: Option<f64>) -> Result<String, String> {
    let mut entries = Vec::new();
    for (index, one) in series.iter().enumerate() {
        let (colour, marker) = style(index);
        let name = one.element.experiment().variant;
        entries.push(Entry {
            label: format!("{name} measured"),
            colour,
            style: Stroke::Solid,
            marker: Some(marker),
        });
        if let Some(ceiling) = one.ceiling {
            entries.push(Entry {
                label: format!(
                    "{name} peak {} {}",
                    number_label(ceiling),
                    unit(one.element)
                ),
                colour,
                style: Stroke::Dashed,
                marker: None,
            });
        }
    }
    entries.push(Entry {
        label: match dram {
            Some(gbps) => format!(
                "memory roof: copy/peak {} GB/s × flop per byte",
                number_label(gbps)
            ),
            None => "no memory roof: no measured copy/peak in this setting".to_owned(),
        },
        colour: BLACK,
        style: Stroke::Solid,
        marker: None,
    });
    // The ridge points (ceiling ÷ bandwidth) lie within the x axis.
    let ridges = series
        .iter()
        .filter_map(|s| Some(s.ceiling? / dram?))
        .collect::<Vec<f64>>();
    let xs = series.iter().flat_map(|s| s.points.iter().map(|p| p.0));
    let x = extent(xs.chain(ridges.iter().copied()));
    let ys = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.1).chain(s.ceiling));
    let y = extent(ys);
    log_log_svg(
        title,
        (
            "operations per byte moved (flop per byte; log)",
            "10⁹ operations per second (GFLOP/s; int: Gop/s; log)",
        ),
        (x, y),
        number_label,
        &entries,
        |plot| {
            let range = x.range();
            if let Some(gbps) = dram {
                let at = |v: f64| (x.at(v), y.at(gbps * v));
                let from = at(x.value(range.start));
                let to = at(x.value(range.end));
                if let Some(line) = clipped(plot, from, to) {
                    plot.draw_series(std::iter::once(PathElement::new(
                        line,
                        BLACK.stroke_width(2),
                    )))
                    .map_err(|e| e.to_string())?;
                }
            }
            for (index, one) in series.iter().enumerate() {
                let (colour, marker) = style(index);
                if let Some(ceiling) = one.ceiling {
                    let level = y.at(ceiling);
                    plot.draw_series(std::iter::once(DashedPathElement::new(
                        [(range.start, level), (range.end, level)],
                        7,
                        4,
                        colour.stroke_width(2),
                    )))
                    .map_err(|e| e.to_string())?;
                }
                for &(per_byte, gops) in &one.points {
                    draw_marker(
                        plot.plotting_area(),
                        (x.at(per_byte), y.at(gops)),
                        marker,
                        colour,
                    )?;
                }
            }
            Ok(())
        },
    )
}

/// A logarithmic axis over the finite positive `values`, with a margin.
fn extent(values: impl Iterator<Item = f64>) -> Axis {
    let (low, high) = values
        .filter(|v| v.is_finite() && *v > 0.0)
        .fold((f64::INFINITY, 0.0f64), |(l, h), v| (l.min(v), h.max(v)));
    Axis::new(Scale::Log(10.0), low / 1.5, high * 1.5)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::Row;
    use crate::suite::Setting;

    fn row(family: Family, variant: &str, params: &str, gbps: f64) -> Row {
        Row {
            family,
            ..crate::results::tests::row(variant, params, gbps)
        }
    }

    fn device(rows: Vec<Row>) -> DeviceResults {
        DeviceResults {
            path: "gpu.csv".into(),
            kernel_files: Vec::new(),
            label: "GPU".into(),
            setting: Setting::WGPU,
            rows,
        }
    }

    #[test]
    fn a_roofline_draws_each_ceiling_the_memory_roof_and_the_points() {
        let rows = vec![
            row(Family::Copy, "peak", "launch=vec4", 2000.0),
            row(Family::Compute, "f32", "rounds=1", 1900.0),
            // 256 flop per byte at 200 GB/s: 51200 GFLOP/s.
            row(Family::Compute, "f32", "rounds=1024", 200.0),
            row(Family::Compute, "int", "rounds=256", 200.0),
        ];
        let charts = roofline_charts(&[device(rows)]).unwrap();
        assert_eq!(charts.len(), 1);
        let chart = &charts[0];
        assert_eq!(chart.family, Some(Family::Compute));
        assert_eq!(chart.file, "compute-roofline-gpu.svg");
        for label in [
            "f32 measured",
            "f32 peak 51200 GFLOP/s",
            "int measured",
            "int peak 12800 Gop/s",
            "memory roof: copy/peak 2000 GB/s",
        ] {
            assert!(chart.svg.contains(label), "{label} missing");
        }
        assert!(!chart.svg.contains("f16"));
        // Two points of f32 and the legend's sample are circles; int's are triangles.
        assert_eq!(chart.svg.matches("<circle").count(), 3, "{}", chart.svg);
    }

    #[test]
    fn without_a_copy_peak_the_roofline_says_so_and_without_compute_rows_none_is_drawn() {
        let charts =
            roofline_charts(&[device(vec![row(Family::Compute, "f32", "rounds=4", 100.0)])])
                .unwrap();
        assert!(charts[0].svg.contains("no memory roof"));
        let mut failed = row(Family::Compute, "f32", "rounds=4", 100.0);
        failed.status = Status::Failed;
        let none = roofline_charts(&[
            device(vec![row(Family::Copy, "peak", "launch=vec4", 2000.0)]),
            device(vec![failed]),
        ])
        .unwrap();
        assert!(none.is_empty());
    }
}
