//! The report's charts, drawn with plotters into SVG text.
//!
//! Sweeps over a numeric param are line charts (`sweep`): one solid line per device
//! (measured), the same colour dashed for the simulator's prediction. Every other case
//! of a family is a horizontal grouped bar (`bars`): one bar per device, the
//! prediction as a black tick across it, and the status written where a device has no
//! bandwidth. Both draw their `legend` below the plot. `SWEEPS` and `BAR_SPLITS` are
//! the tables that say which cases get which chart; any family not named there still
//! gets bars, so every family present has a chart.

mod bars;
mod legend;
mod sweep;

use plotters::prelude::*;

use crate::error::{Error, Result};
use crate::report::compare::{DeviceResults, Line};

/// One chart, ready to be written as `file` and inlined in the page.
#[derive(Clone, Debug)]
pub struct Chart {
    pub family: String,
    /// File name in the report directory, e.g. `copy-offset.svg`.
    pub file: String,
    pub title: String,
    pub svg: String,
}

/// How a line (or a legend's sample of it) is drawn.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Stroke {
    Solid,
    Dashed,
    Dotted,
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
    let mut charts = Vec::new();
    for family in families_in_order(lines) {
        let family_lines: Vec<&Line<'_>> = lines.iter().filter(|l| l.family == family).collect();
        let (swept, rest) = sweep::family_sweeps(family, devices, &family_lines)?;
        charts.extend(swept);
        charts.extend(bars::bar_charts(family, devices, &rest)?);
    }
    Ok(charts)
}

/// The families of `lines`, each once, in the order they first appear.
fn families_in_order<'a>(lines: &[Line<'a>]) -> Vec<&'a str> {
    let mut families: Vec<&str> = Vec::new();
    for line in lines {
        if !families.contains(&line.family) {
            families.push(line.family);
        }
    }
    families
}

fn chart_error(file: &str, message: String) -> Error {
    Error::Results {
        path: file.into(),
        message: format!("drawing the chart: {message}"),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_keep_the_digits_that_matter() {
        assert_eq!(number_label(2221.94), "2222");
        assert_eq!(number_label(12.0), "12");
        assert_eq!(number_label(12.34), "12.3");
        assert_eq!(number_label(0.1234), "0.12");
    }
}
