//! Line charts of sweeps: a case's bandwidth (or time) over the numeric value of one
//! param key, one solid line per device and the same colour dashed for its prediction.
//! [`SWEEPS`] says which cases are drawn so, by the registry's experiments and typed
//! keys; the rest of a family goes to the bars.

use std::collections::BTreeMap;

use plotters::coord::Shift;
use plotters::prelude::*;

use super::axis::{Axis, Scale};
use super::legend::{Entry, draw_legend, legend_height};
use super::{
    Chart, FONT, Panel, Stroke, WIDTH, chart_error, draw_marker, gbps_unit, number_label, style,
};
use crate::error::Result;
use crate::results::DeviceResults;
use crate::results::join::Line;
use crate::results::slug;
use crate::suite::families::{bank, copy, latency};
use crate::suite::{Experiment, Family, Key};

/// How a sweep's y axis reads its cases.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum YAxis {
    /// Effective bandwidth, GB/s.
    Gbps,
    /// Time relative to the sweep's first point: `gbps(first) / gbps(x)`.
    Slowdown,
}

/// Which cases a sweep draws.
pub(super) enum Swept {
    /// One experiment's: one chart with a line per device.
    One(&'static Experiment),
    /// Those of every experiment of the family that has the key: one chart per device
    /// with a line per variant.
    Each(Family),
}

/// A line chart over the numeric value of one param key.
pub(super) struct Sweep {
    pub(super) swept: Swept,
    key: Key,
    title: &'static str,
    x_label: &'static str,
    y: YAxis,
    /// A logarithmic x axis (sizes in bytes).
    log_x: bool,
    reference: Option<Reference>,
    /// A second plot under the first, on its x axis: this pointer chase's time per load
    /// over the same key, so that a level's bandwidth and its latency are read together.
    beneath: Option<&'static Experiment>,
}

/// The words of the plot [`Sweep::beneath`] draws.
const BENEATH_X_LABEL: &str = "chase footprint (bytes)";
const BENEATH_Y_LABEL: &str = "ns per load (pointer chase)";

/// A curve the texts predict, drawn dotted in black beside the measurements.
struct Reference {
    label: &'static str,
    curve: fn(f64) -> f64,
}

/// The line charts of the report, in the order they appear within a family.
pub(super) static SWEEPS: &[Sweep] = &[
    Sweep {
        swept: Swept::One(&copy::OFFSET),
        key: Key::Offset,
        title: "copy: bandwidth vs offset",
        x_label: "offset (4-byte words)",
        y: YAxis::Gbps,
        log_x: false,
        reference: None,
        beneath: None,
    },
    Sweep {
        swept: Swept::One(&copy::STRIDE),
        key: Key::Stride,
        title: "copy: bandwidth vs stride",
        x_label: "stride (4-byte words)",
        y: YAxis::Gbps,
        log_x: false,
        reference: None,
        beneath: None,
    },
    Sweep {
        swept: Swept::One(&bank::STRIDE),
        key: Key::Stride,
        title: "bank: time vs stride, against gcd(s, 32)-way conflicts (s = 0: broadcast)",
        x_label: "stride s (4-byte words)",
        y: YAxis::Slowdown,
        log_x: false,
        reference: Some(Reference {
            label: "gcd(s, 32), 1 for the broadcast s = 0: the ways the texts predict",
            curve: predicted_ways,
        }),
        beneath: None,
    },
    Sweep {
        swept: Swept::One(&latency::CHASE),
        key: Key::Footprint,
        title: "latency: time per load vs footprint (L1, L2, DRAM, TLB)",
        x_label: "footprint (bytes)",
        y: YAxis::Slowdown,
        log_x: true,
        reference: None,
        beneath: None,
    },
    Sweep {
        swept: Swept::Each(Family::Hierarchy),
        key: Key::Footprint,
        title: "hierarchy: bandwidth and latency vs size (L1, L2, DRAM)",
        x_label: "data set: window or shared buffer (bytes)",
        y: YAxis::Gbps,
        log_x: true,
        reference: None,
        beneath: Some(&latency::CHASE),
    },
    Sweep {
        swept: Swept::Each(Family::Transfer),
        key: Key::Size,
        title: "transfer: bandwidth vs size",
        x_label: "transfer size (bytes)",
        y: YAxis::Gbps,
        log_x: true,
        reference: None,
        beneath: None,
    },
];

/// gcd(stride, 32), except that stride 0, every lane at one word, is a broadcast.
#[expect(
    clippy::cast_possible_truncation,
    reason = "`stride` is a case's stride parameter, a u64"
)]
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

/// The line charts of one family's cases, and the cases they leave to the bar charts.
pub(super) fn family_sweeps<'l, 'a>(
    family: Family,
    panel: &Panel<'_>,
    lines: &[&'l Line<'a>],
) -> Result<(Vec<Chart>, Vec<&'l Line<'a>>)> {
    let mut charts = Vec::new();
    let mut swept = vec![false; lines.len()];
    for sweep in SWEEPS.iter().filter(|s| s.family() == family) {
        let covered = sweep.covered(panel.devices.len(), lines);
        let chosen: Vec<&Line<'_>> = covered.iter().map(|&i| lines[i]).collect();
        let drawn = sweep.charts(panel, &chosen)?;
        if !drawn.is_empty() {
            for i in covered {
                swept[i] = true;
            }
            charts.extend(drawn);
        }
    }
    let rest = lines
        .iter()
        .zip(&swept)
        .filter(|(_, swept)| !**swept)
        .map(|(line, _)| *line)
        .collect();
    Ok((charts, rest))
}

/// A line of a line chart.
struct Series {
    label: String,
    colour: RGBColor,
    /// The point shape of a measured line, [`draw_marker`] index: devices that measured
    /// the same numbers stay told apart where their lines lie on top of each other.
    marker: usize,
    style: Stroke,
    points: Vec<(f64, f64)>,
}

/// What tells a sweep's series apart: the variant, and the param without the swept key.
type SeriesKey = (String, String);

/// A sweep's lines by series, in key order.
type Groups<'l, 'a> = BTreeMap<SeriesKey, Vec<&'l Line<'a>>>;

impl Sweep {
    pub(super) fn family(&self) -> Family {
        match self.swept {
            Swept::One(experiment) => experiment.family,
            Swept::Each(family) => family,
        }
    }

    /// The swept key's value, where the case has it as a number.
    fn x_of(&self, line: &Line<'_>) -> Option<f64> {
        line.params.number(self.key).map(|x| x as f64)
    }

    /// The indices of the lines this sweep draws: those it covers that are a point of a
    /// series with two points at least, for some device. A case alone in its series on
    /// every device (a transfer batched into chunks, an overlap workload) would draw no
    /// line: it stays with the bars.
    pub(super) fn covered(&self, devices: usize, lines: &[&Line<'_>]) -> Vec<usize> {
        let covered: Vec<usize> = (0..lines.len())
            .filter(|&i| self.covers(lines[i]))
            .collect();
        let groups = self.group(&covered.iter().map(|&i| lines[i]).collect::<Vec<_>>());
        // Per series, each device's points, measured and predicted: counted once, not
        // once per line of the series.
        let counts: BTreeMap<&SeriesKey, Vec<[usize; 2]>> = groups
            .iter()
            .map(|(key, group)| {
                let per_device = (0..devices)
                    .map(|device| [false, true].map(|p| self.points(group, device, p).len()))
                    .collect();
                (key, per_device)
            })
            .collect();
        covered
            .into_iter()
            .filter(|&i| {
                let Some(counts) = counts.get(&self.series_key(lines[i])) else {
                    return false;
                };
                (0..devices).any(|device| {
                    [false, true].into_iter().enumerate().any(|(p, predicted)| {
                        counts[device][p] >= 2
                            && !self.points(&[lines[i]], device, predicted).is_empty()
                    })
                })
            })
            .collect()
    }

    fn covers(&self, line: &Line<'_>) -> bool {
        let drawn = match self.swept {
            Swept::One(experiment) => {
                line.family == experiment.family && line.variant == experiment.variant
            }
            Swept::Each(family) => line.family == family,
        };
        drawn && self.x_of(line).is_some()
    }

    /// One chart per device, a line per variant; or one chart, a line per device.
    fn per_device(&self) -> bool {
        matches!(self.swept, Swept::Each(_))
    }

    /// The devices each chart draws, as indices in `devices`: one chart per results file
    /// where lines are variants, so that a GPU's apis and builds share its axes (wgpu's
    /// transfer paths beside CUDA's); else one chart of every device.
    pub(super) fn chart_devices(&self, devices: &[&DeviceResults]) -> Vec<Vec<usize>> {
        if !self.per_device() {
            return vec![(0..devices.len()).collect()];
        }
        let mut files: Vec<Vec<usize>> = Vec::new();
        for (index, device) in devices.iter().enumerate() {
            match files.iter_mut().find(|f| devices[f[0]].path == device.path) {
                Some(file) => file.push(index),
                None => files.push(vec![index]),
            }
        }
        files
    }

    /// The charts of this sweep over `lines`: one, or one per results file when lines
    /// are variants. A chart without a measured line is left out.
    fn charts(&self, panel: &Panel<'_>, lines: &[&Line<'_>]) -> Result<Vec<Chart>> {
        let groups = self.group(lines);
        let rests_differ = rests_differ(&groups);
        let mut charts = Vec::new();
        for (chart_index, chart_devices) in self.chart_devices(&panel.devices).iter().enumerate() {
            let mut series =
                self.chart_series(&panel.devices, &groups, rests_differ, chart_devices, 0);
            let measured = series.iter().filter(|s| s.style == Stroke::Solid).count();
            if measured == 0 {
                continue;
            }
            if let Some(reference) = &self.reference {
                series.push(reference_series(reference, &series));
            }
            let mut plots = vec![Plot {
                x_label: self.x_label,
                y_label: self.y_label(),
                series,
            }];
            let beneath =
                self.beneath_series(&panel.devices, &panel.lines, chart_devices, measured);
            if !beneath.is_empty() {
                plots.push(Plot {
                    x_label: BENEATH_X_LABEL,
                    y_label: BENEATH_Y_LABEL,
                    series: beneath,
                });
            }
            let (title, file) = self.names(panel, chart_index);
            let layout = LineChart {
                title: &title,
                x_bytes: matches!(self.key, Key::Size | Key::Footprint),
                log_x: self.log_x,
                plots,
            };
            let svg = line_svg(&layout).map_err(|message| chart_error(&file, message))?;
            charts.push(Chart {
                family: Some(self.family()),
                file,
                title,
                svg,
            });
        }
        Ok(charts)
    }

    /// Lines of one series share everything but the swept key.
    fn group<'l, 'a>(&self, lines: &[&'l Line<'a>]) -> Groups<'l, 'a> {
        let mut groups: Groups<'l, 'a> = BTreeMap::new();
        for line in lines {
            groups.entry(self.series_key(line)).or_default().push(line);
        }
        groups
    }

    /// The variant, and the param without the swept key.
    fn series_key(&self, line: &Line<'_>) -> SeriesKey {
        let rest = line.params.without(self.key).to_string();
        (line.variant.to_owned(), rest)
    }

    /// A series' name: its variant where lines are variants, and the rest of the param
    /// where that differs between series.
    fn series_label(&self, (variant, rest): &SeriesKey, rests_differ: bool) -> String {
        let mut label = if self.per_device() {
            variant.clone()
        } else {
            String::new()
        };
        if rests_differ && !rest.is_empty() {
            if !label.is_empty() {
                label.push(' ');
            }
            label.push_str(rest);
        }
        label
    }

    /// The series of a chart of `chart_devices`: each group's measured line and
    /// prediction, per device. Where lines are variants, each line drawn gets a style of
    /// its own, from style `first` on (a plot beneath goes on from the chart's), and
    /// names its setting where lines of several settings are drawn.
    fn chart_series(
        &self,
        devices: &[&DeviceResults],
        groups: &Groups<'_, '_>,
        rests_differ: bool,
        chart_devices: &[usize],
        first: usize,
    ) -> Vec<Series> {
        let mut series = Vec::new();
        // Where lines are variants: the style of the next line drawn, and whether lines of
        // more than one of the chart's devices are drawn (then each names its setting).
        let mut drawn = first;
        let with_lines = chart_devices
            .iter()
            .filter(|&&device| {
                groups
                    .values()
                    .any(|group| self.points(group, device, false).len() >= 2)
            })
            .count();
        for (key, group) in groups {
            let label = self.series_label(key, rests_differ);
            for &device in chart_devices {
                let (index, name) = if self.per_device() {
                    if self.points(group, device, false).len() < 2 {
                        continue;
                    }
                    drawn += 1;
                    let name = if with_lines > 1 {
                        format!("{label} ({})", devices[device].setting)
                    } else {
                        label.clone()
                    };
                    (drawn - 1, name)
                } else {
                    let name = if label.is_empty() {
                        devices[device].label.clone()
                    } else {
                        format!("{} {label}", devices[device].label)
                    };
                    (device, name)
                };
                let (colour, marker) = style(index);
                let measured = Series {
                    label: name,
                    colour,
                    marker,
                    style: Stroke::Solid,
                    points: self.points(group, device, false),
                };
                series.extend(self.with_prediction(measured, group, device));
            }
        }
        series
    }

    /// The plot [`Sweep::beneath`] of a chart of `chart_devices`, over every case of
    /// the panel: the chase's series in ns per load, styled on from the chart's `first`
    /// measured lines. Empty where the chart has no chase to draw.
    fn beneath_series(
        &self,
        devices: &[&DeviceResults],
        lines: &[Line<'_>],
        chart_devices: &[usize],
        first: usize,
    ) -> Vec<Series> {
        let Some(chase) = self.beneath else {
            return Vec::new();
        };
        let chased: Vec<&Line<'_>> = lines
            .iter()
            .filter(|l| l.family == chase.family && l.variant == chase.variant)
            .collect();
        let groups = self.group(&chased);
        let mut series = self.chart_series(
            devices,
            &groups,
            rests_differ(&groups),
            chart_devices,
            first,
        );
        for point in series.iter_mut().flat_map(|s| &mut s.points) {
            point.1 = latency::ns_per_load(point.1);
        }
        series
    }

    /// A device's measured line and its dashed prediction, each where it has the two
    /// points a line needs.
    fn with_prediction(
        &self,
        measured: Series,
        group: &[&Line<'_>],
        device: usize,
    ) -> impl Iterator<Item = Series> {
        let predicted = Series {
            label: format!("{}, predicted", measured.label),
            colour: measured.colour,
            marker: measured.marker,
            style: Stroke::Dashed,
            points: self.points(group, device, true),
        };
        [measured, predicted]
            .into_iter()
            .filter(|s| s.points.len() >= 2)
    }

    /// Points of one device's series, measured or predicted, on the chart's axis.
    fn points(&self, group: &[&Line<'_>], device: usize, predicted: bool) -> Vec<(f64, f64)> {
        let mut points: Vec<(f64, f64)> = group
            .iter()
            .filter_map(|line| {
                let value = if predicted {
                    line.sim_gbps(device)
                } else {
                    line.gbps(device)
                }?;
                Some((self.x_of(line).unwrap_or(f64::NAN), value))
            })
            .filter(|(x, y)| x.is_finite() && y.is_finite() && *y > 0.0)
            .collect();
        points.sort_by(|a, b| a.0.total_cmp(&b.0));
        if self.y == YAxis::Slowdown {
            let first = points.first().map_or(1.0, |p| p.1);
            for point in &mut points {
                point.1 = first / point.1;
            }
        }
        if self.log_x {
            points.retain(|(x, _)| *x > 0.0);
        }
        points
    }

    /// The title and file name of chart `chart_index` of [`Sweep::chart_devices`]: a
    /// file's chart is named by its first device.
    pub(super) fn names(&self, panel: &Panel<'_>, chart_index: usize) -> (String, String) {
        match self.swept {
            Swept::Each(family) => {
                let chart = &self.chart_devices(&panel.devices)[chart_index];
                let device = file_title(&panel.devices, chart);
                let first = &panel.devices[chart[0]].label;
                panel.names(
                    format!("{} — {device}", self.title),
                    &format!("{family}-{}-{}", self.key, slug(first)),
                )
            }
            Swept::One(experiment) => panel.names(
                self.title.to_owned(),
                &format!("{}-{}", experiment.family, experiment.variant),
            ),
        }
    }

    fn y_label(&self) -> &'static str {
        match self.y {
            YAxis::Gbps => gbps_unit(self.family()),
            YAxis::Slowdown if self.key == Key::Footprint => {
                "time per load relative to the smallest footprint (×)"
            }
            YAxis::Slowdown => "time relative to the first stride (×)",
        }
    }
}

#[cfg(test)]
impl Sweep {
    /// Each case this sweep draws that a device has no measurement or no prediction
    /// for: a point missing from its series.
    pub(super) fn gaps(&self, devices: &[&DeviceResults], lines: &[&Line<'_>]) -> Vec<String> {
        let mut gaps = Vec::new();
        for line in self
            .covered(devices.len(), lines)
            .into_iter()
            .map(|i| lines[i])
        {
            for (index, device) in devices.iter().enumerate() {
                let case = format!("{}/{}/{}", line.family, line.variant, line.params);
                if line.gbps(index).is_none() {
                    gaps.push(format!(
                        "{}: {case} not measured on {}",
                        self.title, device.label
                    ));
                }
                if line.sim_gbps(index).is_none() {
                    gaps.push(format!(
                        "{}: {case} not predicted on {}",
                        self.title, device.label
                    ));
                }
            }
        }
        gaps
    }
}

/// A file's chart's device: its one device's label, or the model and every api of its
/// settings (`NVIDIA H100 80GB HBM3 (wgpu and cuda)`).
fn file_title(devices: &[&DeviceResults], chart: &[usize]) -> String {
    let first = devices[chart[0]];
    let (Some(row), true) = (first.rows.first(), chart.len() > 1) else {
        return first.label.clone();
    };
    let mut apis: Vec<&str> = Vec::new();
    for &index in chart {
        if let Some(api) = devices[index].rows.first().map(|r| r.api.as_str())
            && !apis.contains(&api)
        {
            apis.push(api);
        }
    }
    format!("{} ({})", row.device, apis.join(" and "))
}

/// Whether the rest of the param differs between series, and so belongs in their names.
fn rests_differ(groups: &Groups<'_, '_>) -> bool {
    let mut rests: Vec<&str> = groups.keys().map(|(_, rest)| rest.as_str()).collect();
    rests.sort_unstable();
    rests.dedup();
    rests.len() > 1
}

/// The reference curve at every x the chart's series have.
fn reference_series(reference: &Reference, series: &[Series]) -> Series {
    let mut xs: Vec<f64> = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.0))
        .collect();
    xs.sort_by(f64::total_cmp);
    xs.dedup();
    Series {
        label: reference.label.to_owned(),
        colour: RGBColor(0, 0, 0),
        marker: 0,
        style: Stroke::Dotted,
        points: xs.into_iter().map(|x| (x, (reference.curve)(x))).collect(),
    }
}

/// The words and axes of one line chart.
struct LineChart<'s> {
    title: &'s str,
    /// x is a size in bytes: ticks read `4 KiB`.
    x_bytes: bool,
    /// A logarithmic x axis, to the base 2: ticks fall on 4 KiB, 16 KiB, ….
    log_x: bool,
    /// Its plots, top to bottom, on the one x axis.
    plots: Vec<Plot<'s>>,
}

/// One plot of a line chart: its words and series, on a y axis of its own.
struct Plot<'s> {
    x_label: &'s str,
    y_label: &'s str,
    series: Vec<Series>,
}

/// Pixels of a chart's first plot, its title included, and of each plot beneath it.
const PLOT_HEIGHT: u32 = 440;
const BENEATH_HEIGHT: u32 = 300;

impl LineChart<'_> {
    fn x_tick(&self, value: f64) -> String {
        if self.x_bytes {
            bytes_label(value)
        } else {
            number_label(value)
        }
    }

    fn series(&self) -> impl Iterator<Item = &Series> {
        self.plots.iter().flat_map(|p| &p.series)
    }

    /// The x axis over every plot's points, padded on both sides.
    fn x_axis(&self) -> Axis {
        let xs = || self.series().flat_map(|s| s.points.iter().map(|p| p.0));
        let low = xs().fold(f64::INFINITY, f64::min);
        let high = xs().fold(f64::NEG_INFINITY, f64::max);
        if self.log_x {
            Axis::new(Scale::Log(2.0), low / 1.25, high * 1.25)
        } else {
            let pad = ((high - low) * 0.02).max(0.5);
            Axis::new(Scale::Linear, low - pad, high + pad)
        }
    }
}

/// Bytes as `4 KiB`, `256 MiB`.
pub(super) fn bytes_label(bytes: f64) -> String {
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

fn line_svg(chart: &LineChart<'_>) -> Result<String, String> {
    let entries: Vec<Entry> = chart
        .series()
        .map(|s| Entry {
            label: s.label.clone(),
            colour: s.colour,
            style: s.style,
            marker: (s.style == Stroke::Solid).then_some(s.marker),
        })
        .collect();
    let legend_height = legend_height(&entries);
    let beneath = u32::try_from(chart.plots.len().saturating_sub(1)).map_err(|e| e.to_string())?;
    let height = PLOT_HEIGHT + beneath * BENEATH_HEIGHT + legend_height;
    let x = chart.x_axis();
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, height)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let mut rest = root.clone();
        for (index, plot) in chart.plots.iter().enumerate() {
            let first = index == 0;
            let (area, below) =
                rest.split_vertically(if first { PLOT_HEIGHT } else { BENEATH_HEIGHT });
            draw_plot(&area, chart, first.then_some(chart.title), &x, plot)?;
            rest = below;
        }
        draw_legend(&rest, &entries)?;
        root.present().map_err(|e| e.to_string())?;
    }
    Ok(svg)
}

/// The caption (if any), mesh and axes of one plot, then its series, in axis
/// coordinates. Every plot of a chart has the same margins and y label area, so that
/// their x axes line up.
fn draw_plot(
    area: &DrawingArea<SVGBackend<'_>, Shift>,
    chart: &LineChart<'_>,
    caption: Option<&str>,
    x: &Axis,
    plot: &Plot<'_>,
) -> Result<(), String> {
    // The measured lines fill the height (a 3 % effect is seen); a prediction far off
    // is cut at the edge.
    let measured = plot.series.iter().filter(|s| s.style == Stroke::Solid);
    let y = Axis::lines(measured.flat_map(|s| s.points.iter().map(|p| p.1)));
    let mut builder = ChartBuilder::on(area);
    if let Some(caption) = caption {
        builder.caption(caption, (FONT, 22));
    }
    let mut context = builder
        .margin(12)
        .margin_right(28)
        .x_label_area_size(48)
        .y_label_area_size(78)
        .build_cartesian_2d(x.coord(), y.coord())
        .map_err(|e| e.to_string())?;
    let x_format = |v: &f64| chart.x_tick(x.value(*v));
    let y_format = |v: &f64| number_label(y.value(*v));
    super::loglog::draw_mesh(
        &mut context,
        (plot.x_label, plot.y_label),
        (&x_format, &y_format),
    )?;
    for line in &plot.series {
        let points = line
            .points
            .iter()
            .map(|&(px, py)| (x.at(px), y.at(py)))
            .collect();
        draw_series(&mut context, line, points)?;
    }
    Ok(())
}

/// One series: solid with a marker at each point, dashed, or dotted in black.
fn draw_series<X, Y>(
    context: &mut ChartContext<'_, SVGBackend<'_>, Cartesian2d<X, Y>>,
    line: &Series,
    points: Vec<(f64, f64)>,
) -> Result<(), String>
where
    X: Ranged<ValueType = f64>,
    Y: Ranged<ValueType = f64>,
{
    match line.style {
        Stroke::Solid => {
            context
                .draw_series(LineSeries::new(points.clone(), line.colour.stroke_width(2)))
                .map_err(|e| e.to_string())?;
            for point in points {
                draw_marker(context.plotting_area(), point, line.marker, line.colour)?;
            }
        }
        Stroke::Dashed => {
            context
                .draw_series(DashedLineSeries::new(
                    points,
                    7,
                    4,
                    line.colour.stroke_width(2),
                ))
                .map_err(|e| e.to_string())?;
        }
        Stroke::Dotted => {
            context
                .draw_series(DashedLineSeries::new(points, 2, 4, BLACK.stroke_width(2)))
                .map_err(|e| e.to_string())?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::claims::testing::{registry_rows, without};
    use crate::results::Row;
    use crate::suite::Setting;

    /// No two measured lines of a chart look alike, those of the plot beneath included:
    /// each has its own colour or shape (the transfer chart draws nine paths).
    #[test]
    fn no_two_lines_of_a_chart_share_colour_and_shape() {
        let owned: Vec<DeviceResults> = (0..3)
            .map(|index| DeviceResults {
                path: format!("gpu-{index}.csv").into(),
                kernel_files: Vec::new(),
                label: format!("GPU {index}"),
                setting: crate::suite::Setting::WGPU,
                rows: registry_rows(),
            })
            .collect();
        let devices: Vec<&DeviceResults> = owned.iter().collect();
        let joined = crate::results::join::join(&owned);
        for sweep in SWEEPS {
            let family: Vec<&Line<'_>> = joined
                .iter()
                .filter(|l| l.family == sweep.family())
                .collect();
            let groups = sweep.group(&family);
            for chart in sweep.chart_devices(&devices) {
                let mut series =
                    sweep.chart_series(&devices, &groups, rests_differ(&groups), &chart, 0);
                let measured = series.iter().filter(|s| s.style == Stroke::Solid).count();
                series.extend(sweep.beneath_series(&devices, &joined, &chart, measured));
                let looks: Vec<(RGBColor, usize)> = series
                    .iter()
                    .filter(|s| s.style == Stroke::Solid)
                    .map(|s| (s.colour, s.marker % crate::report::charts::MARKERS))
                    .collect();
                assert!(looks.len() >= 3, "{}: {} lines", sweep.title, looks.len());
                for (index, look) in looks.iter().enumerate() {
                    assert!(
                        !looks[..index].contains(look),
                        "{}: line {index} looks like an earlier one",
                        sweep.title
                    );
                }
            }
        }
    }

    #[test]
    fn a_files_settings_share_its_transfer_chart() {
        let setting = |setting| DeviceResults {
            path: "gpu.csv".into(),
            kernel_files: Vec::new(),
            label: format!("GPU ({setting})"),
            setting,
            rows: registry_rows(),
        };
        let owned = [
            setting(crate::suite::Setting::WGPU),
            setting(crate::suite::Setting::CUDA),
            DeviceResults {
                path: "other.csv".into(),
                ..setting(crate::suite::Setting::WGPU)
            },
        ];
        let devices: Vec<&DeviceResults> = owned.iter().collect();
        let transfer = SWEEPS
            .iter()
            .find(|s| s.family() == Family::Transfer)
            .unwrap();
        assert_eq!(transfer.chart_devices(&devices), [vec![0, 1], vec![2]]);
        let joined = crate::results::join::join(&owned);
        let lines: Vec<&Line<'_>> = joined
            .iter()
            .filter(|l| l.family == Family::Transfer)
            .collect();
        let groups = transfer.group(&lines);
        let labels: Vec<String> = transfer
            .chart_series(&devices, &groups, rests_differ(&groups), &[0, 1], 0)
            .into_iter()
            .map(|s| s.label)
            .collect();
        assert!(
            labels.iter().any(|l| l.ends_with("(wgpu/default)")),
            "{labels:?}"
        );
        assert!(
            labels.iter().any(|l| l.ends_with("(cuda/default)")),
            "{labels:?}"
        );
        let alone = transfer.chart_series(&devices, &groups, rests_differ(&groups), &[2], 0);
        assert!(alone.iter().all(|s| !s.label.contains("/default")));
    }

    /// The hierarchy chart of a file draws its settings' chase beneath, in ns per load;
    /// a file without the chase gets no plot beneath.
    #[test]
    fn the_hierarchy_chart_draws_the_chase_beneath() {
        let hierarchy = SWEEPS
            .iter()
            .find(|s| s.family() == Family::Hierarchy)
            .unwrap();
        let svg = |rows: Vec<Row>| {
            let owned = [Setting::WGPU, Setting::CUDA].map(|setting| DeviceResults {
                path: "gpu.csv".into(),
                kernel_files: Vec::new(),
                label: format!("GPU ({setting})"),
                setting,
                rows: rows.clone(),
            });
            let panel = Panel {
                devices: owned.iter().collect(),
                lines: crate::results::join::join(&owned),
                sizing: None,
            };
            let family: Vec<&Line<'_>> = panel
                .lines
                .iter()
                .filter(|l| l.family == Family::Hierarchy)
                .collect();
            let charts = hierarchy.charts(&panel, &family).unwrap();
            assert_eq!(charts.len(), 1);
            charts[0].svg.clone()
        };
        let with_chase = svg(registry_rows());
        for text in [
            BENEATH_Y_LABEL,
            "chase (wgpu/default)",
            "chase (cuda/default)",
        ] {
            assert!(with_chase.contains(text), "no {text:?}");
        }
        let no_chase = svg(without(&registry_rows(), &latency::CHASE));
        assert!(!no_chase.contains(BENEATH_Y_LABEL) && !no_chase.contains("chase ("));
        assert!(no_chase.contains("persist (wgpu/default)"));
    }

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
}
