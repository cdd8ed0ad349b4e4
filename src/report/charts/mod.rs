//! The report's charts, drawn with plotters into SVG text.
//!
//! Sweeps over a numeric param are line charts (`sweep`): one solid line per device
//! (measured), the same colour dashed for the simulator's prediction. Every other case
//! of a family is a horizontal grouped bar (`bars`): one bar per device, the
//! prediction as a black tick across it, and the status written where a device has no
//! bandwidth. The toolchain's tax of a device measured in several settings is a dot
//! plot (`tax`), the simulator's validation of a device a scatter of measured against
//! predicted GB/s (`scatter`), a fleet's case a strip plot of its GPUs (`strip`), a
//! device's compute family a roofline (`roofline`) and its own kernels over its memory
//! levels (`kernels`), both on `loglog`'s axes. All
//! draw their `legend` below the plot and their value axis through `axis` (linear or
//! logarithmic, bounded ticks). `SWEEPS` and `BAR_SPLITS` are the
//! tables that say which cases get which chart; any family not named there still
//! gets bars, so every family present has a chart.
//!
//! A [`Panel`] is what one set of family charts draws: the devices of one sizing, in
//! the settings the charts show.

mod axis;
mod bars;
pub(crate) mod kernels;
mod legend;
mod loglog;
mod roofline;
mod scatter;
mod strip;
mod sweep;
mod tax;

use plotters::prelude::*;

use crate::error::{Error, Result};
use crate::results::DeviceResults;
use crate::results::ON_CHIP_FAMILIES;
use crate::results::join::Line;
use crate::suite::Family;

pub(crate) use kernels::{Placed, kernel_charts};
pub(crate) use roofline::roofline_charts;
pub(crate) use scatter::scatter_chart;
pub(crate) use strip::strip_chart;
pub(crate) use tax::tax_chart;

/// One chart, ready to be written as `file` and inlined in the page.
#[derive(Clone, Debug)]
pub struct Chart {
    /// The family it charts; `None` for the tax and simulator charts.
    pub family: Option<Family>,
    /// File name in the report directory, e.g. `copy-offset.svg`.
    pub file: String,
    /// The chart's title.
    pub title: String,
    /// The SVG text.
    pub svg: String,
}

impl Chart {
    /// The chart's anchor in the page.
    pub(crate) fn anchor(&self) -> String {
        format!("chart-{}", self.file.trim_end_matches(".svg"))
    }
}

/// The devices one set of family charts draws, and their cases.
#[derive(Debug)]
pub struct Panel<'d> {
    /// The devices, in the order of their columns.
    pub devices: Vec<&'d DeviceResults>,
    /// Every case of the devices, the cells in the order of `devices`.
    pub lines: Vec<Line<'d>>,
    /// The panel's sizing beyond the first: its number and the devices it holds, for
    /// titles and file names.
    pub sizing: Option<(usize, String)>,
}

impl Panel<'_> {
    /// A chart's title and file name within this panel: those of another sizing say so.
    fn names(&self, title: String, stem: &str) -> (String, String) {
        match &self.sizing {
            None => (title, file_name(stem)),
            Some((number, devices)) => (
                format!("{title} (sizing {number}: {devices})"),
                file_name(&format!("{stem}-sizing-{number}")),
            ),
        }
    }
}

/// The longest stem of a chart's file name, in bytes: far below the 255 a file name
/// may have, so that a long device name never makes a chart unwritable.
const MAX_STEM_BYTES: usize = 100;

/// A chart's file name from `stem`: as it is where it is short; else its first bytes and
/// a digest of the whole, so that two long stems stay apart.
pub fn file_name(stem: &str) -> String {
    if stem.len() <= MAX_STEM_BYTES {
        return format!("{stem}.svg");
    }
    let digest = super::write::digest(stem.as_bytes());
    let mut end = MAX_STEM_BYTES - digest.len() - 1;
    while !stem.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}-{digest}.svg", stem[..end].trim_end_matches('-'))
}

/// How a line (or a legend's sample of it) is drawn.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Stroke {
    Solid,
    Dashed,
    Dotted,
}

/// Colours of series, in order.
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

/// Point shapes, [`draw_marker`]'s: as many as no common divisor with the palette's
/// colours, so that no two of the first 40 series share colour and shape.
pub(super) const MARKERS: usize = 5;

/// The colour and point shape of series `index`.
fn style(index: usize) -> (RGBColor, usize) {
    (PALETTE[index % PALETTE.len()], index % MARKERS)
}

fn colour(index: usize) -> RGBColor {
    style(index).0
}

const WIDTH: u32 = 960;
const FONT: &str = "sans-serif";

/// Every chart of a panel, family by family in case order.
pub fn charts(panel: &Panel<'_>) -> Result<Vec<Chart>> {
    let mut charts = Vec::new();
    for family in families_in_order(&panel.lines) {
        let family_lines: Vec<&Line<'_>> =
            panel.lines.iter().filter(|l| l.family == family).collect();
        let (swept, rest) = sweep::family_sweeps(family, panel, &family_lines)?;
        charts.extend(swept);
        charts.extend(bars::bar_charts(family, panel, &rest)?);
    }
    Ok(charts)
}

/// The families of `lines`, each once, in the order they first appear.
fn families_in_order(lines: &[Line<'_>]) -> Vec<Family> {
    let mut families: Vec<Family> = Vec::new();
    for line in lines {
        if !families.contains(&line.family) {
            families.push(line.family);
        }
    }
    families
}

/// The bandwidth axis' words: on-chip throughput for the on-chip families.
pub(crate) fn gbps_unit(family: Family) -> &'static str {
    if ON_CHIP_FAMILIES.contains(&family) {
        "on-chip GB/s (workgroup memory and caches, 10⁹ B/s)"
    } else {
        "GB/s (10⁹ B/s)"
    }
}

fn chart_error(file: &str, message: String) -> Error {
    Error::Results {
        path: file.into(),
        message: format!("drawing the chart: {message}"),
    }
}

fn number_label(value: f64) -> String {
    if value != 0.0 && !(0.01..1e7).contains(&value.abs()) {
        format!("{value:.0e}")
    } else if value.abs() >= 100.0 || (value - value.round()).abs() < 1e-9 {
        format!("{value:.0}")
    } else if value.abs() >= 1.0 {
        format!("{value:.1}")
    } else {
        format!("{value:.2}")
    }
}

/// Point shapes in order: circle, triangle, square, cross, diamond.
fn draw_marker<C: plotters::coord::CoordTranslate>(
    area: &DrawingArea<SVGBackend<'_>, C>,
    at: C::From,
    shape: usize,
    colour: RGBColor,
) -> Result<(), String> {
    let style = colour.filled();
    match shape % MARKERS {
        0 => area.draw(&Circle::new(at, 4, style)),
        1 => area.draw(&TriangleMarker::new(at, 6, style)),
        2 => area.draw(&(EmptyElement::at(at) + Rectangle::new([(-4, -4), (4, 4)], style))),
        3 => area.draw(&Cross::new(at, 5, colour.stroke_width(2))),
        _ => area.draw(
            &(EmptyElement::at(at) + Polygon::new(vec![(0, -6), (5, 0), (0, 6), (-5, 0)], style)),
        ),
    }
    .map_err(|e| e.to_string())
}

/// Pixels for a column of row labels: about 8 per character of the longest, and a margin.
#[expect(
    clippy::cast_possible_truncation,
    reason = "the characters of a row label: far below 2^32"
)]
fn label_width<'a>(labels: impl Iterator<Item = &'a str>) -> u32 {
    labels.map(|label| label.chars().count()).max().unwrap_or(0) as u32 * 8 + 24
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::claims::testing::{of, registry_rows, without};
    use crate::results::Row;
    use crate::results::join;
    use crate::suite::REGISTRY;
    use crate::suite::families::{bank, copy};
    use bars::BAR_SPLITS;
    use sweep::SWEEPS;

    /// One device with `rows`.
    fn device(rows: Vec<Row>) -> Vec<DeviceResults> {
        vec![DeviceResults {
            path: "registry.csv".into(),
            kernel_files: Vec::new(),
            label: "Registry GPU".to_owned(),
            setting: crate::suite::Setting::WGPU,
            rows,
        }]
    }

    /// What the report's charts of `devices` leave without data: a sweep or a split
    /// that draws nothing, a family without a chart, a point of a line or a bar that a
    /// device has no measurement or prediction for.
    /// Every device of `devices` in one panel.
    fn panel(devices: &[DeviceResults]) -> Panel<'_> {
        Panel {
            devices: devices.iter().collect(),
            lines: join::join(devices),
            sizing: None,
        }
    }

    fn problems(devices: &[DeviceResults]) -> Vec<String> {
        if let Err(error) = crate::report::build(devices, &[]) {
            return vec![error.to_string()];
        }
        let panel = panel(devices);
        let drawn = match charts(&panel) {
            Ok(drawn) => drawn,
            Err(error) => return vec![error.to_string()],
        };
        let mut problems = Vec::new();
        for family in families_in_order(&panel.lines) {
            let family_lines: Vec<&Line<'_>> =
                panel.lines.iter().filter(|l| l.family == family).collect();
            for sweep in SWEEPS.iter().filter(|s| s.family() == family) {
                problems.extend(sweep.gaps(&panel.devices, &family_lines));
            }
            match sweep::family_sweeps(family, &panel, &family_lines) {
                Ok((_, rest)) => problems.extend(bars::gaps(family, &panel.devices, &rest)),
                Err(error) => problems.push(error.to_string()),
            }
        }
        for sweep in SWEEPS {
            for index in 0..sweep.chart_devices(&panel.devices).len() {
                let (_, file) = sweep.names(&panel, index);
                if !drawn.iter().any(|c| c.file == file) {
                    problems.push(format!("{file} is not drawn"));
                }
            }
        }
        for (family, key) in BAR_SPLITS {
            let prefix = format!("{family}-{key}-");
            if !drawn.iter().any(|c| c.file.starts_with(&prefix)) {
                problems.push(format!("no {prefix}*.svg"));
            }
        }
        for experiment in REGISTRY {
            if !drawn.iter().any(|c| c.family == Some(experiment.family)) {
                problems.push(format!("no chart for {}", experiment.name()));
            }
        }
        problems
    }

    /// Every sweep and split the charts name exists in the registry at default sizing:
    /// one row per registry case draws every chart, with every point and bar measured
    /// and predicted.
    #[test]
    fn every_chart_has_data_on_the_registry_cases() {
        let problems = problems(&device(registry_rows()));
        assert!(problems.is_empty(), "{}", problems.join("\n"));
    }

    /// The test above fails where a chart's cases are missing.
    #[test]
    fn charts_without_their_cases_are_caught() {
        let no_offsets = problems(&device(without(&registry_rows(), &copy::OFFSET)));
        assert_eq!(no_offsets, ["copy-offset.svg is not drawn"]);

        let mut rows = registry_rows();
        for row in rows.iter_mut().filter(|r| of(r, &bank::STRIDE)) {
            row.sim_gbps = None;
        }
        if let Some(row) = rows.iter_mut().find(|r| of(r, &copy::PEAK)) {
            row.gbps_median = None;
        }
        let problems = problems(&device(rows));
        assert!(
            problems.iter().any(|p| p.contains("bank/stride/stride=0;")
                && p.ends_with("not predicted on Registry GPU")),
            "{problems:?}"
        );
        assert!(
            problems.iter().any(
                |p| p.starts_with("copy/peak/launch=") && p.ends_with("no bar on Registry GPU")
            ),
            "{problems:?}"
        );
    }

    #[test]
    fn file_names_stay_short_and_apart() {
        assert_eq!(file_name("copy-offset"), "copy-offset.svg");
        let long = |end: &str| format!("tax-{}-{end}", "a".repeat(220));
        let (one, two) = (file_name(&long("x")), file_name(&long("y")));
        assert_ne!(one, two);
        for name in [&one, &two] {
            assert!(name.len() <= MAX_STEM_BYTES + ".svg".len(), "{name}");
            assert!(
                name.starts_with("tax-aaa") && name.ends_with(".svg"),
                "{name}"
            );
        }
    }

    #[test]
    fn numbers_keep_the_digits_that_matter() {
        assert_eq!(number_label(2221.94), "2222");
        assert_eq!(number_label(12.0), "12");
        assert_eq!(number_label(12.34), "12.3");
        assert_eq!(number_label(0.1234), "0.12");
        assert_eq!(number_label(1e-307), "1e-307");
    }
}
