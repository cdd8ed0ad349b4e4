//! The legend below a chart: a sample of each line (or bar colour) and its text, in
//! rows wrapped to the chart's width.

use plotters::coord::Shift;
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::{FONT, Stroke, WIDTH, draw_marker};

/// One entry of a legend: a sample of the line (or bar) and its text.
pub(super) struct Entry {
    pub(super) label: String,
    pub(super) colour: RGBColor,
    pub(super) style: Stroke,
    /// The marker drawn on the sample, if any.
    pub(super) marker: Option<usize>,
}

const LEGEND_ROW: u32 = 22;

/// Pixels the legend of `entries` takes below the plot.
#[expect(
    clippy::cast_possible_truncation,
    reason = "legend rows of a chart's entries: far below 2^32"
)]
pub(super) fn legend_height(entries: &[Entry]) -> u32 {
    legend_rows(entries).len() as u32 * LEGEND_ROW + 10
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

#[expect(
    clippy::cast_possible_truncation,
    reason = "legend rows and entry widths of a chart: far below 2^31"
)]
pub(super) fn draw_legend(
    area: &DrawingArea<SVGBackend<'_>, Shift>,
    entries: &[Entry],
) -> Result<(), String> {
    let text = (FONT, 15).into_font().color(&BLACK);
    for (row_index, row) in legend_rows(entries).iter().enumerate() {
        let y = 12 + row_index as i32 * LEGEND_ROW as i32;
        let mut x = 40;
        for &index in row {
            let entry = &entries[index];
            draw_entry(area, entry, (x, y), &text)?;
            x += legend_entry_width(&entry.label) as i32;
        }
    }
    Ok(())
}

/// One entry with its sample starting at `(x, y)`: the line, its marker, its text.
fn draw_entry(
    area: &DrawingArea<SVGBackend<'_>, Shift>,
    entry: &Entry,
    (x, y): (i32, i32),
    text: &TextStyle<'_>,
) -> Result<(), String> {
    let style = entry
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
    .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::charts::colour;

    #[test]
    #[expect(clippy::cast_possible_truncation, reason = "a few legend rows")]
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
        assert_eq!(legend_height(&entries), rows.len() as u32 * LEGEND_ROW + 10);
    }
}
