//! Bar charts of the cases no sweep drew: one horizontal group per case, a bar per
//! device, the prediction as a black tick across it, and the status written where a
//! device has no bandwidth. [`BAR_SPLITS`] splits a family's bars into one chart per
//! problem size, by a typed key; bar labels and titles print params through their
//! `Display`.

use plotters::coord::Shift;
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::axis::{Axis, Ticked};
use super::legend::{Entry, draw_legend, legend_height};
use super::{Chart, FONT, Panel, Stroke, WIDTH, chart_error, colour, gbps_unit, number_label};
use crate::error::Result;
use crate::results::join::Line;
use crate::results::slug;
use crate::suite::{Family, Key, Params, Value as ParamValue};

/// Families whose bar charts are split by a param key: one chart per value (one per
/// problem size), the key left out of the bar labels.
pub(super) static BAR_SPLITS: &[(Family, Key)] = &[
    (Family::Transpose, Key::Size),
    (Family::Reduce, Key::N),
    (Family::Stencil, Key::N),
];

/// The bar charts of a family's cases that no sweep drew.
pub(super) fn bar_charts(
    family: Family,
    panel: &Panel<'_>,
    lines: &[&Line<'_>],
) -> Result<Vec<Chart>> {
    let split = BAR_SPLITS
        .iter()
        .find(|(f, _)| *f == family)
        .map(|(_, key)| *key);
    let mut charts = Vec::new();
    for (value, group) in group_by_split(lines, split) {
        // A chart of cases no device measured would be empty: the tables show them.
        if !group
            .iter()
            .any(|line| (0..panel.devices.len()).any(|d| line.gbps(d).is_some()))
        {
            continue;
        }
        let chart = ChartCases {
            family,
            split,
            value: value.as_ref(),
            group: &group,
        };
        charts.push(chart.draw(panel)?);
    }
    Ok(charts)
}

/// Cases by the split key's value, in value order; cases without it last.
pub(super) fn group_by_split<'l, 'a>(
    lines: &[&'l Line<'a>],
    split: Option<Key>,
) -> Vec<(Option<ParamValue>, Vec<&'l Line<'a>>)> {
    let mut groups: Vec<(Option<ParamValue>, Vec<&Line<'_>>)> = Vec::new();
    for line in lines {
        let value = split.and_then(|key| line.params.get(key).cloned());
        match groups.iter_mut().find(|(v, _)| *v == value) {
            Some((_, group)) => group.push(line),
            None => groups.push((value, vec![line])),
        }
    }
    groups.sort_by(|a, b| match (&a.0, &b.0) {
        (Some(x), Some(y)) => x.cmp(y),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => std::cmp::Ordering::Equal,
    });
    groups
}

/// Each bar of a family's bar charts that a device has no bandwidth or no prediction
/// for, and the cases of a split family that lack the split key.
#[cfg(test)]
pub(super) fn gaps(
    family: Family,
    devices: &[&crate::results::DeviceResults],
    lines: &[&Line<'_>],
) -> Vec<String> {
    let split = BAR_SPLITS
        .iter()
        .find(|(f, _)| *f == family)
        .map(|(_, key)| *key);
    let mut gaps = Vec::new();
    for (value, group) in group_by_split(lines, split) {
        if let (Some(key), None) = (split, &value) {
            gaps.push(format!("{family}: {} cases without `{key}=`", group.len()));
        }
        for line in group {
            for (index, device) in devices.iter().enumerate() {
                let case = format!("{}/{}/{}", line.family, line.variant, line.params);
                if line.gbps(index).is_none() {
                    gaps.push(format!("{case}: no bar on {}", device.label));
                }
                if line.sim_gbps(index).is_none() {
                    gaps.push(format!("{case}: no prediction on {}", device.label));
                }
            }
        }
    }
    gaps
}

/// The cases of one bar chart.
struct ChartCases<'g, 'l, 'a> {
    family: Family,
    /// The family's split key, if it has one.
    split: Option<Key>,
    /// The split key's value for this chart; `None` for cases without the key.
    value: Option<&'g ParamValue>,
    group: &'g [&'l Line<'a>],
}

impl ChartCases<'_, '_, '_> {
    fn draw(&self, panel: &Panel<'_>) -> Result<Chart> {
        let shared = self.shared_pairs();
        let (title, file) = self.title_and_file(panel, &shared);
        // A device with no row for any of the chart's cases (a partial file) is left
        // out, rather than drawn as a column of `missing`.
        let present: Vec<usize> = (0..panel.devices.len())
            .filter(|&d| self.group.iter().any(|line| line.cells[d].is_some()))
            .collect();
        let bars: Vec<Bar> = self
            .group
            .iter()
            .map(|line| Bar {
                label: bar_label(line, self.split, &shared),
                values: present
                    .iter()
                    .map(|&d| match line.gbps(d) {
                        Some(gbps) => Value::Measured(gbps, line.sim_gbps(d)),
                        None => Value::Absent(absent_text(line, d)),
                    })
                    .collect(),
            })
            .collect();
        let legend = present
            .iter()
            .map(|&d| (d, panel.devices[d].label.as_str()))
            .collect::<Vec<_>>();
        let words = BarWords {
            title: &title,
            unit: gbps_unit(self.family),
        };
        let svg =
            bars_svg(&words, &legend, &bars).map_err(|message| chart_error(&file, message))?;
        Ok(Chart {
            family: Some(self.family),
            file,
            title,
            svg,
        })
    }

    /// Pairs every case of the chart shares: they go to the title, not to each bar.
    fn shared_pairs(&self) -> Params {
        let Some(first) = self.group.first().map(|line| line.params) else {
            return Params::new();
        };
        first
            .iter()
            .filter(|(key, _)| self.split != Some(*key))
            .filter(|(key, value)| {
                let pair = Params::new().with(*key, value.clone());
                self.group.iter().all(|line| line.params.contains(&pair))
            })
            .fold(Params::new(), |shared, (key, value)| {
                shared.with(*key, value.clone())
            })
    }

    fn title_and_file(&self, panel: &Panel<'_>, shared: &Params) -> (String, String) {
        let family = self.family;
        let shared_text = if shared.is_empty() {
            String::new()
        } else {
            format!(" ({shared})")
        };
        let (title, stem) = match (self.split, self.value) {
            (Some(key), Some(value)) => (
                format!("{family}: each variant at {key}={value}{shared_text}"),
                format!("{family}-{key}-{}", slug(&value.to_string())),
            ),
            (Some(_), None) => (
                format!("{family}: {}{shared_text}", variant_list(self.group)),
                format!("{family}-other"),
            ),
            (None, _) => (
                format!("{family}: {}{shared_text}", variant_list(self.group)),
                format!("{family}-bars"),
            ),
        };
        panel.names(title, &stem)
    }
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

/// `variant param`, without the split key and the pairs the title names (a param
/// that does not parse as it stands).
fn bar_label(line: &Line<'_>, split: Option<Key>, shared: &Params) -> String {
    let rest = line
        .params
        .iter()
        .filter(|(key, _)| split != Some(*key))
        .filter(|(key, value)| !shared.contains(&Params::new().with(*key, value.clone())))
        .fold(Params::new(), |rest, (key, value)| {
            rest.with(*key, value.clone())
        })
        .to_string();
    if rest.is_empty() {
        line.variant.to_owned()
    } else {
        format!("{} {rest}", line.variant)
    }
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

/// A bar chart's title and the words of its value axis.
struct BarWords<'w> {
    title: &'w str,
    unit: &'w str,
}

/// `legend`: each device drawn, by its index among the panel's (its colour) and label.
fn bars_svg(
    words: &BarWords<'_>,
    legend: &[(usize, &str)],
    bars: &[Bar],
) -> Result<String, String> {
    let entries = legend_entries(legend, bars);
    let layout = BarLayout::new(legend, bars, legend_height(&entries));
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, layout.height)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let (plot, legend_area) = root.split_vertically(layout.plot_height);
        let mut painter = BarPainter {
            root: &root,
            chart: row_axes(
                &plot,
                (words.title, 22),
                words.unit,
                &layout.axis,
                layout.label_width,
                layout.rows,
            )?,
            layout: &layout,
            unit: 1.0 / f64::from(layout.group_height),
            value_font: (FONT, 13).into_font().color(&RGBColor(0x33, 0x33, 0x33)),
        };
        for (index, bar) in bars.iter().enumerate() {
            painter.bar(index, bar)?;
        }
        draw_legend(&legend_area, &entries)?;
        root.present().map_err(|e| e.to_string())?;
    }
    Ok(svg)
}

/// A legend entry per device, and one for the prediction's tick where a bar has one.
fn legend_entries(legend: &[(usize, &str)], bars: &[Bar]) -> Vec<Entry> {
    let mut entries: Vec<Entry> = legend
        .iter()
        .map(|&(index, label)| Entry {
            label: label.to_owned(),
            colour: colour(index),
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
    entries
}

/// The sizes of a bar chart, in pixels and in the chart's coordinates.
struct BarLayout {
    /// The panel index of each device drawn, in bar order: its colour.
    devices: Vec<usize>,
    /// A case's bars and the gap below them.
    group_height: u32,
    plot_height: u32,
    /// The plot and the legend below it.
    height: u32,
    /// Room for the case labels left of the bars.
    label_width: u32,
    /// The value axis, over every measurement and prediction.
    axis: Axis,
    /// The y axis' end: one unit per case.
    rows: f64,
}

impl BarLayout {
    #[expect(
        clippy::cast_possible_truncation,
        reason = "counts of devices and bars a page draws: far below 2^32"
    )]
    fn new(legend: &[(usize, &str)], bars: &[Bar], legend_height: u32) -> Self {
        let device_count = legend.len().max(1) as u32;
        let group_height = device_count * BAR_HEIGHT + BAR_GAP;
        let plot_height = 110 + bars.len() as u32 * group_height;
        let label_width = super::label_width(bars.iter().map(|bar| bar.label.as_str()));
        let axis = Axis::bars(
            bars.iter()
                .flat_map(|bar| &bar.values)
                .flat_map(|value| match value {
                    Value::Measured(gbps, sim) => vec![Some(*gbps), *sim],
                    Value::Absent(_) => Vec::new(),
                })
                .flatten(),
        );
        BarLayout {
            devices: legend.iter().map(|(index, _)| *index).collect(),
            group_height,
            plot_height,
            height: plot_height + legend_height,
            label_width,
            axis,
            rows: bars.len() as f64,
        }
    }
}

pub(super) type BarChart<'p, 'b> =
    ChartContext<'p, SVGBackend<'b>, Cartesian2d<Ticked, RangedCoordf64>>;

/// The caption (`title` at `title_size`), the x axis described by `unit` and its mesh
/// over `rows` rows; no y labels: the caller writes them beside its rows. The frame of
/// every chart of horizontal rows (bars, the tax's dots).
pub(super) fn row_axes<'p, 'b>(
    plot: &'p DrawingArea<SVGBackend<'b>, Shift>,
    (title, title_size): (&str, u32),
    unit: &str,
    axis: &Axis,
    label_width: u32,
    rows: f64,
) -> Result<BarChart<'p, 'b>, String> {
    let mut chart = ChartBuilder::on(plot)
        .caption(title, (FONT, title_size))
        .margin(12)
        .margin_right(28)
        .x_label_area_size(48)
        .y_label_area_size(label_width.min(WIDTH / 2))
        .build_cartesian_2d(axis.coord(), 0.0..rows)
        .map_err(|e| e.to_string())?;
    let x_format = |v: &f64| number_label(axis.value(*v));
    chart
        .configure_mesh()
        .disable_y_mesh()
        .y_labels(0)
        .x_desc(unit)
        .x_label_formatter(&x_format)
        .label_style((FONT, 15))
        .axis_desc_style((FONT, 16))
        .bold_line_style(RGBColor(0xe4, 0xe4, 0xe4))
        .draw()
        .map_err(|e| e.to_string())?;
    Ok(chart)
}

/// Where one device's bar lies within its case's group, in chart coordinates.
struct Slot {
    top: f64,
    bottom: f64,
    middle: f64,
}

/// Draws the cases' bars: case `i` (first on top) spans `rows - i - 1 .. rows - i` of
/// the y axis, its devices' bars stacked down from the top of that span.
struct BarPainter<'p, 'b> {
    /// The whole picture: the texts may run beyond the plotting area.
    root: &'p DrawingArea<SVGBackend<'b>, Shift>,
    chart: BarChart<'p, 'b>,
    layout: &'p BarLayout,
    /// One pixel of a case's group, in chart coordinates.
    unit: f64,
    value_font: TextStyle<'static>,
}

impl BarPainter<'_, '_> {
    fn bar(&mut self, index: usize, bar: &Bar) -> Result<(), String> {
        // First bar on top.
        let top = self.layout.rows - index as f64 - f64::from(BAR_GAP / 2) * self.unit;
        self.label(&bar.label, top)?;
        for (slot_index, value) in bar.values.iter().enumerate() {
            let slot = self.slot(top, slot_index);
            let device = self.layout.devices[slot_index];
            match value {
                Value::Measured(gbps, sim) => self.measured(device, &slot, *gbps, *sim)?,
                Value::Absent(status) => self.absent(device, &slot, status)?,
            }
        }
        Ok(())
    }

    fn slot(&self, top: f64, index: usize) -> Slot {
        let y_top = top - index as f64 * f64::from(BAR_HEIGHT) * self.unit;
        let y_bottom = y_top - f64::from(BAR_HEIGHT - 2) * self.unit;
        Slot {
            top: y_top,
            bottom: y_bottom,
            middle: (y_top + y_bottom) / 2.0,
        }
    }

    /// The case's label, right-aligned left of the axis, centred on its bars.
    #[expect(
        clippy::cast_possible_truncation,
        reason = "a count of devices a page draws: far below 2^32"
    )]
    fn label(&self, label: &str, top: f64) -> Result<(), String> {
        let bars_height = f64::from(self.layout.devices.len() as u32 * BAR_HEIGHT) * self.unit;
        let (x, y) = self
            .chart
            .backend_coord(&(self.layout.axis.range().start, top - bars_height / 2.0));
        self.root
            .draw(&Text::new(
                label.to_owned(),
                (x - 8, y),
                (FONT, 15)
                    .into_font()
                    .color(&BLACK)
                    .pos(Pos::new(HPos::Right, VPos::Center)),
            ))
            .map_err(|e| e.to_string())
    }

    /// A bar from the axis' start to `end` (axis coordinates) in the device's colour.
    fn fill(&mut self, device: usize, slot: &Slot, end: f64) -> Result<(), String> {
        let start = self.layout.axis.range().start;
        self.chart
            .draw_series(std::iter::once(Rectangle::new(
                [(start, slot.bottom), (end, slot.top)],
                colour(device).filled(),
            )))
            .map_err(|e| e.to_string())?;
        Ok(())
    }

    /// The measured bar, its number and the prediction's tick.
    fn measured(
        &mut self,
        device: usize,
        slot: &Slot,
        gbps: f64,
        sim: Option<f64>,
    ) -> Result<(), String> {
        let axis = self.layout.axis;
        self.fill(device, slot, axis.at(gbps))?;
        let sim = sim.filter(|s| s.is_finite()).map(|s| axis.at(s));
        self.number(slot, gbps, sim)?;
        if let Some(sim) = sim {
            self.chart
                .draw_series(std::iter::once(PathElement::new(
                    [(sim, slot.bottom - self.unit), (sim, slot.top + self.unit)],
                    BLACK.stroke_width(3),
                )))
                .map_err(|e| e.to_string())?;
        }
        Ok(())
    }

    /// The bar's number, clear of the prediction's tick (`sim`, axis coordinates).
    fn number(&self, slot: &Slot, gbps: f64, sim: Option<f64>) -> Result<(), String> {
        let text = format!("{gbps:.1}");
        let axis = &self.layout.axis;
        let pixel = |at: f64| self.chart.backend_coord(&(at, slot.middle));
        let (start, _) = pixel(axis.range().start);
        let (end, middle) = pixel(axis.at(gbps));
        let tick = sim.map(|s| pixel(s).0);
        let place = number_place(start, end, tick, text_width(&text));
        let ink = if place.inside {
            WHITE
        } else {
            RGBColor(0x33, 0x33, 0x33)
        };
        self.root
            .draw(&Text::new(
                text,
                (place.x, middle),
                self.value_font
                    .clone()
                    .color(&ink)
                    .pos(Pos::new(place.anchor(), VPos::Center)),
            ))
            .map_err(|e| e.to_string())
    }

    /// A thin bar of the device's colour says whose status is written beside it.
    fn absent(&mut self, device: usize, slot: &Slot, status: &str) -> Result<(), String> {
        let range = self.layout.axis.range();
        self.fill(
            device,
            slot,
            range.start + (range.end - range.start) * 0.004,
        )?;
        let (x, y) = self.chart.backend_coord(&(range.start, slot.middle));
        self.root
            .draw(&Text::new(
                status.to_owned(),
                (x + 8, y),
                self.value_font
                    .clone()
                    .color(&RGBColor(0x77, 0x77, 0x77))
                    .pos(Pos::new(HPos::Left, VPos::Center)),
            ))
            .map_err(|e| e.to_string())
    }
}

/// Pixels a bar's number takes at its font size, about 8 a character.
#[expect(
    clippy::cast_possible_truncation,
    reason = "the characters of a number: a few dozen"
)]
fn text_width(text: &str) -> i32 {
    8 * text.chars().count() as i32
}

/// Where a bar's number is written: inside the bar (white on the colour, ending at
/// `x`) or after it (starting at `x`).
#[derive(Debug, PartialEq)]
struct NumberPlace {
    x: i32,
    inside: bool,
}

impl NumberPlace {
    /// The pixels the text covers.
    fn span(&self, width: i32) -> std::ops::Range<i32> {
        if self.inside {
            self.x - width..self.x
        } else {
            self.x..self.x + width
        }
    }

    fn anchor(&self) -> HPos {
        if self.inside { HPos::Right } else { HPos::Left }
    }
}

/// A bar's number, from pixels: inside the bar's end where it fits and clears the
/// prediction's tick, else inside left of the tick, else after both bar and tick.
fn number_place(start: i32, end: i32, tick: Option<i32>, width: i32) -> NumberPlace {
    /// Pixels between the text and a bar's end or a tick.
    const GAP: i32 = 5;
    let clear = |place: &NumberPlace| {
        let span = place.span(width);
        tick.is_none_or(|t| t < span.start - GAP || t > span.end + GAP)
    };
    let fits = |right: i32| right - width - GAP > start;
    let inside = |x: i32| NumberPlace { x, inside: true };
    let at_end = inside(end - GAP);
    if fits(at_end.x) && clear(&at_end) {
        return at_end;
    }
    if let Some(tick) = tick.filter(|&t| t < end && fits(t - GAP)) {
        return inside(tick - GAP);
    }
    NumberPlace {
        x: end.max(tick.unwrap_or(end)) + GAP,
        inside: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Wherever the prediction's tick falls, the bar's number does not cover it.
    #[test]
    fn numbers_never_cover_the_prediction_tick() {
        let width = text_width("2217.0");
        for end in [30, 120, 400, 800] {
            for tick in (0..900).step_by(3) {
                let place = number_place(0, end, Some(tick), width);
                let span = place.span(width);
                assert!(
                    tick < span.start - 2 || tick > span.end + 2,
                    "bar to {end}, tick at {tick}: {place:?}"
                );
                if place.inside {
                    assert!(span.start > 0 && span.end <= end, "{place:?}");
                }
            }
        }
        // Without a tick, the number sits inside the bar's end where it fits.
        assert_eq!(
            number_place(0, 400, None, width),
            NumberPlace {
                x: 395,
                inside: true
            }
        );
    }

    #[test]
    fn variants_are_listed_for_the_title() {
        let none = Params::new();
        let line = |variant| Line {
            family: Family::Copy,
            variant,
            params: &none,
            cells: Vec::new(),
        };
        let (peak, launch, other) = (line("peak"), line("launch"), line("offset"));
        assert_eq!(variant_list(&[&peak]), "peak");
        assert_eq!(variant_list(&[&peak, &launch, &peak]), "peak and launch");
        assert_eq!(
            variant_list(&[&peak, &launch, &other]),
            "peak, launch and offset"
        );
    }

    #[test]
    fn bar_labels_leave_out_the_split_key_and_shared_pairs() {
        let param = "size=4096x4096;block=32x16;wg=256".parse().unwrap();
        let line = Line {
            family: Family::Transpose,
            variant: "naive_col",
            params: &param,
            cells: Vec::new(),
        };
        assert_eq!(
            bar_label(&line, Some(Key::Size), &crate::params!(Wg => 256u32)),
            "naive_col block=32x16"
        );
        assert_eq!(
            bar_label(&line, None, &Params::new()),
            "naive_col size=4096x4096;block=32x16;wg=256"
        );
    }
}
