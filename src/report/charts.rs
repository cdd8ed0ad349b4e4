//! The report's charts, drawn with plotters into SVG text.
//!
//! Sweeps over a numeric param are line charts: one solid line per device (measured),
//! the same colour dashed for the simulator's prediction. Every other case of a family
//! is a horizontal grouped bar: one bar per device, the prediction as a black tick
//! across it, and the status written where a device has no bandwidth. [`SWEEPS`] and
//! [`BAR_SPLITS`] are the tables that say which cases get which chart; any family not
//! named there still gets bars, so every family present has a chart.

use std::collections::BTreeMap;

use plotters::coord::Shift;
use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::error::{Error, Result};
use crate::report::compare::{DeviceResults, Line, natural_cmp};
use crate::results::{param_value, slug};

/// One chart, ready to be written as `file` and inlined in the page.
#[derive(Clone, Debug)]
pub struct Chart {
    pub family: String,
    /// File name in the report directory, e.g. `copy-offset.svg`.
    pub file: String,
    pub title: String,
    pub svg: String,
}

/// How a sweep's y axis reads its cases.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Axis {
    /// Effective bandwidth, GB/s.
    Gbps,
    /// Time relative to the sweep's first point: `gbps(first) / gbps(x)`.
    Slowdown,
}

/// A line chart over the numeric value of one param key.
struct Sweep {
    family: &'static str,
    /// One variant: one chart with a line per device. `None`: every variant of the
    /// family that has the key, one chart per device with a line per variant.
    variant: Option<&'static str>,
    key: &'static str,
    title: &'static str,
    x_label: &'static str,
    axis: Axis,
    /// Logarithmic x and y axes.
    log: bool,
    reference: Option<Reference>,
}

/// A curve the texts predict, drawn dotted in black beside the measurements.
struct Reference {
    label: &'static str,
    curve: fn(f64) -> f64,
}

/// The line charts of the report, in the order they appear within a family.
static SWEEPS: &[Sweep] = &[
    Sweep {
        family: "copy",
        variant: Some("offset"),
        key: "offset",
        title: "copy: bandwidth vs offset",
        x_label: "offset (4-byte words)",
        axis: Axis::Gbps,
        log: false,
        reference: None,
    },
    Sweep {
        family: "copy",
        variant: Some("stride"),
        key: "stride",
        title: "copy: bandwidth vs stride",
        x_label: "stride (4-byte words)",
        axis: Axis::Gbps,
        log: false,
        reference: None,
    },
    Sweep {
        family: "bank",
        variant: Some("stride"),
        key: "stride",
        title: "bank: time vs stride, against gcd(s, 32)-way conflicts (s = 0: broadcast)",
        x_label: "stride s (4-byte words)",
        axis: Axis::Slowdown,
        log: false,
        reference: Some(Reference {
            label: "gcd(s, 32), 1 for the broadcast s = 0: the ways the texts predict",
            curve: predicted_ways,
        }),
    },
    Sweep {
        family: "transfer",
        variant: None,
        key: "size",
        title: "transfer: bandwidth vs size",
        x_label: "transfer size (bytes)",
        axis: Axis::Gbps,
        log: true,
        reference: None,
    },
];

/// Families whose bar charts are split by a param key: one chart per value (one per
/// problem size), the key left out of the bar labels.
static BAR_SPLITS: &[(&str, &str)] = &[("transpose", "size"), ("reduce", "n"), ("stencil", "n")];

/// gcd(stride, 32), except that stride 0, every lane at one word, is a broadcast.
fn predicted_ways(stride: f64) -> f64 {
    let (mut a, mut b) = (stride.round().max(0.0) as u64, 32u64);
    if a == 0 {
        return 1.0;
    }
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a as f64
}

/// Colours of devices (or of variants, on a per-device chart), in order.
const PALETTE: [RGBColor; 8] = [
    RGBColor(0x1f, 0x77, 0xb4),
    RGBColor(0xd6, 0x27, 0x28),
    RGBColor(0x2c, 0xa0, 0x2c),
    RGBColor(0xff, 0x7f, 0x0e),
    RGBColor(0x94, 0x67, 0xbd),
    RGBColor(0x8c, 0x56, 0x4b),
    RGBColor(0xe3, 0x77, 0xc2),
    RGBColor(0x17, 0xbe, 0xcf),
];

fn colour(index: usize) -> RGBColor {
    PALETTE[index % PALETTE.len()]
}

const WIDTH: u32 = 960;
const FONT: &str = "sans-serif";

/// Every chart for the joined cases, family by family in case order.
pub fn charts(devices: &[DeviceResults], lines: &[Line<'_>]) -> Result<Vec<Chart>> {
    let mut families: Vec<&str> = Vec::new();
    for line in lines {
        if !families.contains(&line.family) {
            families.push(line.family);
        }
    }
    let mut charts = Vec::new();
    for family in families {
        let family_lines: Vec<&Line<'_>> = lines.iter().filter(|l| l.family == family).collect();
        let mut swept = vec![false; family_lines.len()];
        for sweep in SWEEPS.iter().filter(|s| s.family == family) {
            let mine: Vec<usize> = (0..family_lines.len())
                .filter(|&i| {
                    let line = family_lines[i];
                    sweep.variant.is_none_or(|v| v == line.variant)
                        && param_value(line.param, sweep.key)
                            .and_then(|v| v.parse::<f64>().ok())
                            .is_some()
                })
                .collect();
            let chosen: Vec<&Line<'_>> = mine.iter().map(|&i| family_lines[i]).collect();
            let drawn = sweep_charts(sweep, devices, &chosen)?;
            if !drawn.is_empty() {
                for i in mine {
                    swept[i] = true;
                }
                charts.extend(drawn);
            }
        }
        let rest: Vec<&Line<'_>> = family_lines
            .iter()
            .zip(&swept)
            .filter(|(_, swept)| !**swept)
            .map(|(line, _)| *line)
            .collect();
        charts.extend(bar_charts(family, devices, &rest)?);
    }
    Ok(charts)
}

/// A line of a line chart.
#[derive(Clone)]
struct Series {
    label: String,
    colour: RGBColor,
    /// The point shape of a measured line, [`marker`] index: devices that measured the
    /// same numbers stay told apart where their lines lie on top of each other.
    marker: usize,
    style: Stroke,
    points: Vec<(f64, f64)>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Stroke {
    Solid,
    Dashed,
    Dotted,
}

/// The charts of one sweep: one, or one per device when lines are variants.
fn sweep_charts(
    sweep: &Sweep,
    devices: &[DeviceResults],
    lines: &[&Line<'_>],
) -> Result<Vec<Chart>> {
    // Lines of one series share everything but the swept key.
    let series_key = |line: &Line<'_>| {
        let rest: Vec<&str> = line
            .param
            .split(';')
            .filter(|pair| {
                pair.split_once('=')
                    .is_none_or(|(k, _)| k.trim() != sweep.key)
            })
            .collect();
        (line.variant.to_owned(), rest.join(";"))
    };
    let mut groups: BTreeMap<(String, String), Vec<&Line<'_>>> = BTreeMap::new();
    for line in lines {
        groups.entry(series_key(line)).or_default().push(line);
    }
    // The rest of the param names a line only where it differs between lines.
    let mut rests: Vec<&str> = groups.keys().map(|(_, rest)| rest.as_str()).collect();
    rests.sort_unstable();
    rests.dedup();
    let label_of = |(variant, rest): &(String, String)| {
        let mut label = if sweep.variant.is_some() {
            String::new()
        } else {
            variant.clone()
        };
        if rests.len() > 1 && !rest.is_empty() {
            if !label.is_empty() {
                label.push(' ');
            }
            label.push_str(rest);
        }
        label
    };
    let x_of = |line: &Line<'_>| {
        param_value(line.param, sweep.key)
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or(f64::NAN)
    };
    // Points of one device's series, measured or predicted, on the chart's axis.
    let points = |group: &[&Line<'_>], device: usize, predicted: bool| {
        let mut points: Vec<(f64, f64)> = group
            .iter()
            .filter_map(|line| {
                let value = if predicted {
                    line.sim_gbps(device)
                } else {
                    line.gbps(device)
                }?;
                Some((x_of(line), value))
            })
            .filter(|(x, y)| x.is_finite() && y.is_finite() && *y > 0.0)
            .collect();
        points.sort_by(|a, b| a.0.total_cmp(&b.0));
        if sweep.axis == Axis::Slowdown {
            let first = points.first().map_or(1.0, |p| p.1);
            for point in &mut points {
                point.1 = first / point.1;
            }
        }
        if sweep.log {
            points.retain(|(x, _)| *x > 0.0);
        }
        points
    };

    let mut charts = Vec::new();
    let per_device = sweep.variant.is_none();
    let chart_count = if per_device { devices.len() } else { 1 };
    for chart_index in 0..chart_count {
        let mut series = Vec::new();
        for (group_index, (key, group)) in groups.iter().enumerate() {
            let device_range = if per_device {
                chart_index..chart_index + 1
            } else {
                0..devices.len()
            };
            for device in device_range {
                let marker = if per_device { group_index } else { device };
                let (colour, name) = if per_device {
                    (colour(group_index), label_of(key))
                } else {
                    let suffix = label_of(key);
                    let name = if suffix.is_empty() {
                        devices[device].label.clone()
                    } else {
                        format!("{} {suffix}", devices[device].label)
                    };
                    (self::colour(device), name)
                };
                let measured = points(group, device, false);
                if measured.len() >= 2 {
                    series.push(Series {
                        label: name.clone(),
                        colour,
                        marker,
                        style: Stroke::Solid,
                        points: measured,
                    });
                }
                let predicted = points(group, device, true);
                if predicted.len() >= 2 {
                    series.push(Series {
                        label: format!("{name}, predicted"),
                        colour,
                        marker,
                        style: Stroke::Dashed,
                        points: predicted,
                    });
                }
            }
        }
        if !series.iter().any(|s| s.style == Stroke::Solid) {
            continue;
        }
        if let Some(Reference { label, curve }) = sweep.reference {
            let mut xs: Vec<f64> = series
                .iter()
                .flat_map(|s| s.points.iter().map(|p| p.0))
                .collect();
            xs.sort_by(f64::total_cmp);
            xs.dedup();
            series.push(Series {
                label: label.to_owned(),
                colour: RGBColor(0, 0, 0),
                marker: 0,
                style: Stroke::Dotted,
                points: xs.into_iter().map(|x| (x, curve(x))).collect(),
            });
        }
        let (title, file) = if per_device {
            (
                format!("{} — {}", sweep.title, devices[chart_index].label),
                format!(
                    "{}-{}-{}.svg",
                    sweep.family,
                    sweep.key,
                    slug(&devices[chart_index].label)
                ),
            )
        } else {
            (
                sweep.title.to_owned(),
                format!(
                    "{}-{}.svg",
                    sweep.family,
                    sweep.variant.unwrap_or(sweep.key)
                ),
            )
        };
        let y_label = match sweep.axis {
            Axis::Gbps => "GB/s (10⁹ B/s)",
            Axis::Slowdown => "time relative to the first stride (×)",
        };
        let svg = line_svg(
            &title,
            sweep.x_label,
            y_label,
            sweep.key == "size",
            sweep.log,
            &series,
        )
        .map_err(|message| chart_error(&file, message))?;
        charts.push(Chart {
            family: sweep.family.to_owned(),
            file,
            title,
            svg,
        });
    }
    Ok(charts)
}

fn chart_error(file: &str, message: String) -> Error {
    Error::Results {
        path: file.into(),
        message: format!("drawing the chart: {message}"),
    }
}

/// Bytes as `4 KiB`, `256 MiB`.
fn bytes_label(bytes: f64) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut value = bytes;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < units.len() {
        value /= 1024.0;
        unit += 1;
    }
    if (value - value.round()).abs() < 0.05 {
        format!("{value:.0} {}", units[unit])
    } else {
        format!("{value:.1} {}", units[unit])
    }
}

fn number_label(value: f64) -> String {
    if value.abs() >= 100.0 || (value - value.round()).abs() < 1e-9 {
        format!("{value:.0}")
    } else if value.abs() >= 1.0 {
        format!("{value:.1}")
    } else {
        format!("{value:.2}")
    }
}

/// One entry of a legend: a sample of the line (or bar) and its text.
struct Entry {
    label: String,
    colour: RGBColor,
    style: Stroke,
    /// The marker drawn on the sample, if any.
    marker: Option<usize>,
}

/// Rows of legend entries below a chart, wrapped to the width.
fn legend_rows(entries: &[Entry]) -> Vec<Vec<usize>> {
    let mut rows: Vec<Vec<usize>> = vec![Vec::new()];
    let mut used = 0;
    for (index, entry) in entries.iter().enumerate() {
        let width = legend_entry_width(&entry.label);
        if used + width > WIDTH as usize - 40 && !rows.last().is_some_and(Vec::is_empty) {
            rows.push(Vec::new());
            used = 0;
        }
        if let Some(row) = rows.last_mut() {
            row.push(index);
        }
        used += width;
    }
    rows
}

/// Pixels one legend entry takes: a 30-pixel sample, a gap, its text (about 7 pixels a
/// character at the legend's font size), a gap.
fn legend_entry_width(label: &str) -> usize {
    30 + 8 + 7 * label.chars().count() + 24
}

const LEGEND_ROW: u32 = 22;

fn draw_legend(area: &DrawingArea<SVGBackend<'_>, Shift>, entries: &[Entry]) -> Result<(), String> {
    let text = (FONT, 15).into_font().color(&BLACK);
    for (row_index, row) in legend_rows(entries).iter().enumerate() {
        let y = 12 + row_index as i32 * LEGEND_ROW as i32;
        let mut x = 40;
        for &index in row {
            let entry = &entries[index];
            let style =
                entry
                    .colour
                    .stroke_width(if entry.style == Stroke::Dotted { 2 } else { 3 });
            let sample = [(x, y), (x + 30, y)];
            match entry.style {
                Stroke::Solid => area.draw(&PathElement::new(sample, style)),
                Stroke::Dashed => area.draw(&DashedPathElement::new(sample, 7, 4, style)),
                Stroke::Dotted => area.draw(&DashedPathElement::new(sample, 2, 4, style)),
            }
            .map_err(|e| e.to_string())?;
            if let Some(shape) = entry.marker {
                draw_marker(area, (x + 15, y), shape, entry.colour)?;
            }
            area.draw(&Text::new(
                entry.label.clone(),
                (x + 38, y),
                text.clone().pos(Pos::new(HPos::Left, VPos::Center)),
            ))
            .map_err(|e| e.to_string())?;
            x += legend_entry_width(&entry.label) as i32;
        }
    }
    Ok(())
}

/// Point shapes in order: circle, triangle, square, cross, then again.
fn draw_marker<C: plotters::coord::CoordTranslate>(
    area: &DrawingArea<SVGBackend<'_>, C>,
    at: C::From,
    shape: usize,
    colour: RGBColor,
) -> Result<(), String> {
    let style = colour.filled();
    match shape % 4 {
        0 => area.draw(&Circle::new(at, 4, style)),
        1 => area.draw(&TriangleMarker::new(at, 6, style)),
        2 => area.draw(&(EmptyElement::at(at) + Rectangle::new([(-4, -4), (4, 4)], style))),
        _ => area.draw(&Cross::new(at, 5, colour.stroke_width(2))),
    }
    .map_err(|e| e.to_string())
}

fn line_svg(
    title: &str,
    x_label: &str,
    y_label: &str,
    x_bytes: bool,
    log: bool,
    series: &[Series],
) -> Result<String, String> {
    let xs = series.iter().flat_map(|s| s.points.iter().map(|p| p.0));
    let ys = series.iter().flat_map(|s| s.points.iter().map(|p| p.1));
    let (x_low, x_high) = extent(xs);
    let (y_low, y_high) = extent(ys);
    let entries: Vec<Entry> = series
        .iter()
        .map(|s| Entry {
            label: s.label.clone(),
            colour: s.colour,
            style: s.style,
            marker: (s.style == Stroke::Solid).then_some(s.marker),
        })
        .collect();
    let legend_height = legend_rows(&entries).len() as u32 * LEGEND_ROW + 10;
    let height = 440 + legend_height;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, height)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let (plot, legend) = root.split_vertically(height - legend_height);
        let label = |v: f64| {
            if x_bytes {
                bytes_label(v)
            } else {
                number_label(v)
            }
        };
        if log {
            // x is drawn as log2 on a linear axis, so that ticks fall on powers of two
            // (4 KiB, 16 KiB, …) rather than on plotters' powers of ten.
            let series: Vec<Series> = series
                .iter()
                .map(|s| Series {
                    points: s.points.iter().map(|&(x, y)| (x.log2(), y)).collect(),
                    label: s.label.clone(),
                    ..*s
                })
                .collect();
            let (low, high) = (x_low.log2(), x_high.log2());
            let x_format = |v: &f64| label(v.exp2());
            let x = low - 0.3..high + 0.3;
            let y = (y_low / 1.5..y_high * 1.5).log_scale();
            let ticks = ((high - low) as usize + 1).clamp(2, 10);
            draw_lines(
                &plot, title, x_label, y_label, &x_format, ticks, x, y, &series,
            )?;
        } else {
            let x_format = |v: &f64| label(*v);
            let pad = ((x_high - x_low) * 0.02).max(0.5);
            let x = x_low - pad..x_high + pad;
            let y = 0.0..(y_high * 1.08).max(1e-9);
            draw_lines(&plot, title, x_label, y_label, &x_format, 12, x, y, series)?;
        }
        draw_legend(&legend, &entries)?;
        root.present().map_err(|e| e.to_string())?;
    }
    Ok(svg)
}

/// Smallest and largest of finite values; a one-value extent is widened.
fn extent(values: impl Iterator<Item = f64>) -> (f64, f64) {
    let (low, high) = values
        .filter(|v| v.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), v| {
            (l.min(v), h.max(v))
        });
    if !low.is_finite() {
        (0.5, 1.0)
    } else if low == high {
        (low * 0.5, if high == 0.0 { 1.0 } else { high * 1.5 })
    } else {
        (low, high)
    }
}

#[expect(clippy::too_many_arguments, reason = "one call site per axis kind")]
fn draw_lines<X, Y>(
    area: &DrawingArea<SVGBackend<'_>, Shift>,
    title: &str,
    x_label: &str,
    y_label: &str,
    x_format: &dyn Fn(&f64) -> String,
    x_ticks: usize,
    x: X,
    y: Y,
    series: &[Series],
) -> Result<(), String>
where
    X: AsRangedCoord<Value = f64>,
    Y: AsRangedCoord<Value = f64>,
    X::CoordDescType: ValueFormatter<f64>,
    Y::CoordDescType: ValueFormatter<f64>,
{
    let mut chart = ChartBuilder::on(area)
        .caption(title, (FONT, 22))
        .margin(12)
        .margin_right(28)
        .x_label_area_size(48)
        .y_label_area_size(78)
        .build_cartesian_2d(x, y)
        .map_err(|e| e.to_string())?;
    let y_format = |v: &f64| number_label(*v);
    chart
        .configure_mesh()
        .x_desc(x_label)
        .y_desc(y_label)
        .x_label_formatter(x_format)
        .x_labels(x_ticks)
        .y_label_formatter(&y_format)
        .label_style((FONT, 15))
        .axis_desc_style((FONT, 16))
        .light_line_style(RGBColor(0xee, 0xee, 0xee))
        .draw()
        .map_err(|e| e.to_string())?;
    for line in series {
        let points = line.points.clone();
        match line.style {
            Stroke::Solid => {
                chart
                    .draw_series(LineSeries::new(points.clone(), line.colour.stroke_width(2)))
                    .map_err(|e| e.to_string())?;
                for point in points {
                    draw_marker(chart.plotting_area(), point, line.marker, line.colour)?;
                }
            }
            Stroke::Dashed => {
                chart
                    .draw_series(DashedLineSeries::new(
                        points,
                        7,
                        4,
                        line.colour.stroke_width(2),
                    ))
                    .map_err(|e| e.to_string())?;
            }
            Stroke::Dotted => {
                chart
                    .draw_series(DashedLineSeries::new(points, 2, 4, BLACK.stroke_width(2)))
                    .map_err(|e| e.to_string())?;
            }
        }
    }
    Ok(())
}

/// The bar charts of a family's cases that no sweep drew.
fn bar_charts(family: &str, devices: &[DeviceResults], lines: &[&Line<'_>]) -> Result<Vec<Chart>> {
    let split = BAR_SPLITS
        .iter()
        .find(|(f, _)| *f == family)
        .map(|(_, key)| *key);
    // Charts by the split key's value, in natural order; cases without it last.
    let mut groups: Vec<(Option<&str>, Vec<&Line<'_>>)> = Vec::new();
    for line in lines {
        let value = split.and_then(|key| param_value(line.param, key));
        match groups.iter_mut().find(|(v, _)| *v == value) {
            Some((_, group)) => group.push(line),
            None => groups.push((value, vec![line])),
        }
    }
    groups.sort_by(|a, b| match (a.0, b.0) {
        (Some(x), Some(y)) => natural_cmp(x, y),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => std::cmp::Ordering::Equal,
    });
    let mut charts = Vec::new();
    for (value, group) in groups {
        // A chart of cases no device measured would be empty: the tables show them.
        if !group
            .iter()
            .any(|line| (0..devices.len()).any(|d| line.gbps(d).is_some()))
        {
            continue;
        }
        // Pairs every case of the chart shares go to the title, not to each bar.
        let shared: Vec<&str> = group[0]
            .param
            .split(';')
            .filter(|pair| !pair.is_empty())
            .filter(|pair| split.is_none_or(|key| pair_key(pair) != key))
            .filter(|pair| {
                group
                    .iter()
                    .all(|line| line.param.split(';').any(|p| p == *pair))
            })
            .collect();
        let shared_text = if shared.is_empty() {
            String::new()
        } else {
            format!(" ({})", shared.join(";"))
        };
        let (title, file) = match (split, value) {
            (Some(key), Some(value)) => (
                format!("{family}: each variant at {key}={value}{shared_text}"),
                format!("{family}-{key}-{}.svg", slug(value)),
            ),
            (Some(_), None) => (
                format!("{family}: {}{shared_text}", variant_list(&group)),
                format!("{family}-other.svg"),
            ),
            (None, _) => (
                format!("{family}: {}{shared_text}", variant_list(&group)),
                format!("{family}-bars.svg"),
            ),
        };
        let bars: Vec<Bar> = group
            .iter()
            .map(|line| Bar {
                label: bar_label(line, split, &shared),
                values: (0..devices.len())
                    .map(|d| match line.gbps(d) {
                        Some(gbps) => Value::Measured(gbps, line.sim_gbps(d)),
                        None => Value::Absent(absent_text(line, d)),
                    })
                    .collect(),
            })
            .collect();
        let svg =
            bars_svg(&title, devices, &bars).map_err(|message| chart_error(&file, message))?;
        charts.push(Chart {
            family: family.to_owned(),
            file,
            title,
            svg,
        });
    }
    Ok(charts)
}

/// `peak and launch`, `a, b and c`: the variants of a bar chart, for its title.
fn variant_list(lines: &[&Line<'_>]) -> String {
    let mut variants: Vec<&str> = Vec::new();
    for line in lines {
        if !variants.contains(&line.variant) {
            variants.push(line.variant);
        }
    }
    match variants.split_last() {
        _ if variants.len() > 3 => "each variant".to_owned(),
        Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
        Some((last, _)) => (*last).to_owned(),
        None => String::new(),
    }
}

/// `variant param`, without the split key and the pairs the title names.
fn bar_label(line: &Line<'_>, split: Option<&str>, shared: &[&str]) -> String {
    let rest: Vec<&str> = line
        .param
        .split(';')
        .filter(|pair| !pair.is_empty() && !shared.contains(pair))
        .filter(|pair| split.is_none_or(|key| pair_key(pair) != key))
        .collect();
    if rest.is_empty() {
        line.variant.to_owned()
    } else {
        format!("{} {}", line.variant, rest.join(";"))
    }
}

/// `key` of `key=value`.
fn pair_key(pair: &str) -> &str {
    pair.split_once('=').map_or(pair, |(key, _)| key).trim()
}

/// `skipped: why`, shortened to fit beside the axis.
fn absent_text(line: &Line<'_>, device: usize) -> String {
    let note = line.cells[device].map_or("", |row| row.note.as_str());
    let text = if note.is_empty() {
        line.status(device).to_owned()
    } else {
        format!("{}: {note}", line.status(device))
    };
    const MAX_CHARS: usize = 90;
    if text.chars().count() > MAX_CHARS {
        let short: String = text.chars().take(MAX_CHARS - 1).collect();
        format!("{short}…")
    } else {
        text
    }
}

struct Bar {
    label: String,
    /// One per device.
    values: Vec<Value>,
}

enum Value {
    /// Measured GB/s and the prediction.
    Measured(f64, Option<f64>),
    /// No bandwidth: the status (`failed`, `skipped`, `missing`).
    Absent(String),
}

const BAR_HEIGHT: u32 = 16;
const BAR_GAP: u32 = 12;

fn bars_svg(title: &str, devices: &[DeviceResults], bars: &[Bar]) -> Result<String, String> {
    let device_count = devices.len().max(1) as u32;
    let group_height = device_count * BAR_HEIGHT + BAR_GAP;
    let mut entries: Vec<Entry> = devices
        .iter()
        .enumerate()
        .map(|(i, d)| Entry {
            label: d.label.clone(),
            colour: colour(i),
            style: Stroke::Solid,
            marker: None,
        })
        .collect();
    let predicted = bars
        .iter()
        .flat_map(|bar| &bar.values)
        .any(|value| matches!(value, Value::Measured(_, Some(sim)) if sim.is_finite()));
    if predicted {
        entries.push(Entry {
            label: "predicted (simulator)".to_owned(),
            colour: RGBColor(0, 0, 0),
            style: Stroke::Solid,
            marker: None,
        });
    }
    let legend_height = legend_rows(&entries).len() as u32 * LEGEND_ROW + 10;
    let plot_height = 110 + bars.len() as u32 * group_height;
    let height = plot_height + legend_height;
    let label_width = bars
        .iter()
        .map(|bar| bar.label.chars().count())
        .max()
        .unwrap_or(0) as u32
        * 8
        + 24;
    let x_high = bars
        .iter()
        .flat_map(|bar| &bar.values)
        .filter_map(|value| match value {
            Value::Measured(gbps, sim) => Some(gbps.max(sim.unwrap_or(0.0))),
            Value::Absent(_) => None,
        })
        .filter(|v| v.is_finite())
        .fold(0.0, f64::max)
        .max(1e-9)
        * 1.12;
    let rows = bars.len() as f64;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, height)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let (plot, legend) = root.split_vertically(plot_height);
        let mut chart = ChartBuilder::on(&plot)
            .caption(title, (FONT, 22))
            .margin(12)
            .margin_right(28)
            .x_label_area_size(48)
            .y_label_area_size(label_width.min(WIDTH / 2))
            .build_cartesian_2d(0.0..x_high, 0.0..rows)
            .map_err(|e| e.to_string())?;
        let x_format = |v: &f64| number_label(*v);
        chart
            .configure_mesh()
            .disable_y_mesh()
            .y_labels(0)
            .x_desc("GB/s (10⁹ B/s)")
            .x_label_formatter(&x_format)
            .label_style((FONT, 15))
            .axis_desc_style((FONT, 16))
            .light_line_style(RGBColor(0xee, 0xee, 0xee))
            .draw()
            .map_err(|e| e.to_string())?;
        let unit = 1.0 / f64::from(group_height);
        let value_font = (FONT, 13).into_font().color(&RGBColor(0x33, 0x33, 0x33));
        for (index, bar) in bars.iter().enumerate() {
            // First bar on top.
            let top = rows - index as f64 - f64::from(BAR_GAP / 2) * unit;
            let (x, y) = chart
                .backend_coord(&(0.0, top - f64::from(device_count * BAR_HEIGHT) * unit / 2.0));
            root.draw(&Text::new(
                bar.label.clone(),
                (x - 8, y),
                (FONT, 15)
                    .into_font()
                    .color(&BLACK)
                    .pos(Pos::new(HPos::Right, VPos::Center)),
            ))
            .map_err(|e| e.to_string())?;
            for (device, value) in bar.values.iter().enumerate() {
                let y_top = top - device as f64 * f64::from(BAR_HEIGHT) * unit;
                let y_bottom = y_top - f64::from(BAR_HEIGHT - 2) * unit;
                let y_middle = (y_top + y_bottom) / 2.0;
                match value {
                    Value::Measured(gbps, sim) => {
                        chart
                            .draw_series(std::iter::once(Rectangle::new(
                                [(0.0, y_bottom), (*gbps, y_top)],
                                colour(device).filled(),
                            )))
                            .map_err(|e| e.to_string())?;
                        // The number inside the bar's end where it fits, else after it.
                        let text = format!("{gbps:.1}");
                        let (start, _) = chart.backend_coord(&(0.0, y_middle));
                        let (end, middle) = chart.backend_coord(&(*gbps, y_middle));
                        let inside = end - start > 8 * text.len() as i32 + 12;
                        // Outside, the number also clears the prediction's tick.
                        let tick = sim
                            .filter(|s| s.is_finite())
                            .map_or(end, |s| chart.backend_coord(&(s, y_middle)).0);
                        let (x, pos, ink) = if inside {
                            (end - 5, HPos::Right, WHITE)
                        } else {
                            (end.max(tick) + 5, HPos::Left, RGBColor(0x33, 0x33, 0x33))
                        };
                        root.draw(&Text::new(
                            text,
                            (x, middle),
                            value_font
                                .clone()
                                .color(&ink)
                                .pos(Pos::new(pos, VPos::Center)),
                        ))
                        .map_err(|e| e.to_string())?;
                        if let Some(sim) = sim.filter(|s| s.is_finite()) {
                            chart
                                .draw_series(std::iter::once(PathElement::new(
                                    [(sim, y_bottom - unit), (sim, y_top + unit)],
                                    BLACK.stroke_width(3),
                                )))
                                .map_err(|e| e.to_string())?;
                        }
                    }
                    Value::Absent(status) => {
                        // A thin bar of the device's colour says whose status it is.
                        chart
                            .draw_series(std::iter::once(Rectangle::new(
                                [(0.0, y_bottom), (x_high * 0.004, y_top)],
                                colour(device).filled(),
                            )))
                            .map_err(|e| e.to_string())?;
                        let (x, y) = chart.backend_coord(&(0.0, y_middle));
                        root.draw(&Text::new(
                            status.clone(),
                            (x + 8, y),
                            value_font
                                .clone()
                                .color(&RGBColor(0x77, 0x77, 0x77))
                                .pos(Pos::new(HPos::Left, VPos::Center)),
                        ))
                        .map_err(|e| e.to_string())?;
                    }
                }
            }
        }
        draw_legend(&legend, &entries)?;
        root.present().map_err(|e| e.to_string())?;
    }
    Ok(svg)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gcd_of_strides() {
        assert_eq!(predicted_ways(0.0), 1.0);
        assert_eq!(predicted_ways(1.0), 1.0);
        assert_eq!(predicted_ways(6.0), 2.0);
        assert_eq!(predicted_ways(24.0), 8.0);
        assert_eq!(predicted_ways(32.0), 32.0);
    }

    #[test]
    fn byte_sizes_read_as_binary_units() {
        assert_eq!(bytes_label(4096.0), "4 KiB");
        assert_eq!(bytes_label(1536.0), "1.5 KiB");
        assert_eq!(bytes_label(f64::from(1u32 << 30)), "1 GiB");
    }

    #[test]
    fn legend_wraps_long_rows() {
        let entries: Vec<Entry> = (0..12)
            .map(|i| Entry {
                label: format!("a device with a long name {i}"),
                colour: colour(i),
                style: Stroke::Solid,
                marker: Some(i),
            })
            .collect();
        let rows = legend_rows(&entries);
        assert!(rows.len() > 1);
        assert_eq!(rows.iter().map(Vec::len).sum::<usize>(), 12);
    }
}
