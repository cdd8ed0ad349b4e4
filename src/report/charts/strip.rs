//! One case of a fleet's group as a strip plot: a dot per GPU at its distance from the
//! case's median (in %), spread across the strip so that dots stand apart. The
//! threshold is dashed, the noise band (±3.5 robust sigmas) shaded; sick GPUs' slower
//! cases are red and unsteady ones orange, both labelled with host and short UUID; GPUs
//! faster beyond the threshold are green.

use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::axis::{Axis, Scale};
use super::legend::{Entry, draw_legend, legend_height};
use super::{Chart, FONT, PALETTE, Stroke, WIDTH, chart_error, draw_marker, number_label};
use crate::error::Result;
use crate::judge::fleet::{Fleet, SIGMAS, Standing};

/// Outliers labelled on one chart; the rest are counted.
const MAX_LABELS: usize = 12;

/// GPUs without a bandwidth named below one chart; the rest are counted.
const MAX_UNMEASURED: usize = 6;

const PLOT_HEIGHT: u32 = 300;

const WITHIN: RGBColor = PALETTE[0];
const SLOWER: RGBColor = PALETTE[1];
const FASTER: RGBColor = PALETTE[2];
const UNSTEADY: RGBColor = PALETTE[3];
const BAND: RGBColor = RGBColor(0xec, 0xec, 0xec);

/// The strip plot of case `case` of group `group`, written as `file`.
pub(crate) fn strip_chart(fleet: &Fleet, group: usize, case: usize, file: String) -> Result<Chart> {
    let strip = Strip::of(fleet, group, case);
    let svg = strip_svg(&strip).map_err(|message| chart_error(&file, message))?;
    Ok(Chart {
        family: None,
        file,
        title: strip.title,
        svg,
    })
}

/// What one chart draws, in percent of the median.
struct Strip {
    title: String,
    threshold: f64,
    /// ±this many percent is the noise band; none where the MAD is 0.
    band: Option<f64>,
    /// Each GPU with a distance: its place in the group, distance, standing, label.
    dots: Vec<(usize, f64, Standing, String)>,
    /// The GPUs without a bandwidth that are outliers: label and standing.
    unmeasured: Vec<(String, Standing)>,
}

impl Strip {
    fn of(fleet: &Fleet, group_index: usize, case_index: usize) -> Self {
        let group = &fleet.groups[group_index];
        let case = &group.cases[case_index];
        let title = format!(
            "{} on {}: {} of {} GPUs, median {} GB/s",
            case.id,
            group.label(),
            case.measured,
            group.members.len(),
            case.median_gbps
                .map_or_else(|| "-".to_owned(), number_label)
        );
        let mut dots = Vec::new();
        let mut unmeasured = Vec::new();
        for (position, (&member, cell)) in group.members.iter().zip(&case.cells).enumerate() {
            let label = fleet.members[member].short_label();
            match cell.distance {
                Some(distance) => dots.push((position, 100.0 * distance, cell.standing, label)),
                None if cell.standing.is_outlier() => unmeasured.push((label, cell.standing)),
                None => {}
            }
        }
        // Outliers and unsteady GPUs drawn last, over the rest; the farthest first.
        dots.sort_by(|a, b| {
            (named(a.2), -a.1.abs())
                .partial_cmp(&(named(b.2), -b.1.abs()))
                .unwrap_or(std::cmp::Ordering::Equal)
        });
        Strip {
            title,
            threshold: 100.0 * fleet.threshold,
            band: case
                .sigma()
                .filter(|s| *s > 0.0)
                .map(|s| 100.0 * SIGMAS * s),
            dots,
            unmeasured,
        }
    }

    /// The axis: every dot, the threshold on both sides and the band, with a margin.
    fn axis(&self) -> Axis {
        let reach = self.band.unwrap_or(0.0).max(self.threshold * 1.5);
        let (low, high) = self
            .dots
            .iter()
            .fold((-reach, reach), |(l, h), d| (l.min(d.1), h.max(d.1)));
        let pad = (high - low) * 0.06;
        Axis::new(Scale::Linear, low - pad, high + pad)
    }

    fn entries(&self) -> Vec<Entry> {
        let dot = |label: &str, colour| Entry {
            label: label.to_owned(),
            colour,
            style: Stroke::Solid,
            marker: Some(0),
        };
        vec![
            dot("a GPU within the threshold or the noise", WITHIN),
            dot("slower, as evidence: the GPU is sick", SLOWER),
            dot("slower once, alone: unsteady, measure again", UNSTEADY),
            dot("faster beyond the threshold (no failure)", FASTER),
            Entry {
                label: format!("threshold ±{} %", number_label(self.threshold)),
                colour: SLOWER,
                style: Stroke::Dashed,
                marker: None,
            },
            Entry {
                label: format!("shaded: ±{SIGMAS} robust sigmas"),
                colour: RGBColor(0xc8, 0xc8, 0xc8),
                style: Stroke::Solid,
                marker: None,
            },
        ]
    }

    /// The line under the plot naming the outliers without a bandwidth.
    fn unmeasured_line(&self) -> Option<String> {
        if self.unmeasured.is_empty() {
            return None;
        }
        let named: Vec<String> = self
            .unmeasured
            .iter()
            .take(MAX_UNMEASURED)
            .map(|(label, standing)| format!("{label} ({})", standing.as_str()))
            .collect();
        let more = self.unmeasured.len().saturating_sub(MAX_UNMEASURED);
        let tail = if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        };
        Some(format!(
            "outliers without a bandwidth: {}{tail}",
            named.join(", ")
        ))
    }
}

/// Whether a GPU's dot is labelled: slower, as evidence or once.
fn named(standing: Standing) -> bool {
    matches!(standing, Standing::Slower | Standing::Unsteady)
}

/// Where across the strip a GPU's dot lies: a low-discrepancy sequence, the same for
/// a GPU on every chart of its group.
fn across(position: usize) -> f64 {
    let golden = 0.618_033_988_749_895;
    0.08 + 0.84 * (position as f64 * golden).fract()
}

fn strip_svg(strip: &Strip) -> Result<String, String> {
    let entries = strip.entries();
    let note = strip.unmeasured_line();
    let note_height = if note.is_some() { 26 } else { 0 };
    let legend_height = legend_height(&entries);
    let axis = strip.axis();
    let mut svg = String::new();
    {
        let root =
            SVGBackend::with_string(&mut svg, (WIDTH, PLOT_HEIGHT + note_height + legend_height))
                .into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let (plot, rest) = root.split_vertically(PLOT_HEIGHT);
        let (note_area, legend) = rest.split_vertically(note_height);
        let mut chart = ChartBuilder::on(&plot)
            .caption(&strip.title, (FONT, 17))
            .margin(12)
            .margin_right(28)
            .x_label_area_size(48)
            .y_label_area_size(16)
            .build_cartesian_2d(axis.coord(), 0.0..1.0)
            .map_err(|e| e.to_string())?;
        let format = |v: &f64| number_label(axis.value(*v));
        chart
            .configure_mesh()
            .disable_y_mesh()
            .y_labels(0)
            .x_desc("GB/s over the case's median, less one, in % (below 0: slower)")
            .x_label_formatter(&format)
            .label_style((FONT, 15))
            .axis_desc_style((FONT, 16))
            .bold_line_style(RGBColor(0xe4, 0xe4, 0xe4))
            .draw()
            .map_err(|e| e.to_string())?;
        if let Some(band) = strip.band {
            chart
                .draw_series(std::iter::once(Rectangle::new(
                    [(axis.at(-band), 0.0), (axis.at(band), 1.0)],
                    BAND.filled(),
                )))
                .map_err(|e| e.to_string())?;
        }
        chart
            .draw_series(std::iter::once(PathElement::new(
                [(axis.at(0.0), 0.0), (axis.at(0.0), 1.0)],
                BLACK.stroke_width(1),
            )))
            .map_err(|e| e.to_string())?;
        for side in [-1.0, 1.0] {
            let x = axis.at(side * strip.threshold);
            chart
                .draw_series(std::iter::once(DashedPathElement::new(
                    [(x, 0.0), (x, 1.0)],
                    6,
                    4,
                    SLOWER.stroke_width(1),
                )))
                .map_err(|e| e.to_string())?;
        }
        let mut labelled = 0;
        for (position, distance, standing, label) in &strip.dots {
            let colour = match standing {
                Standing::Slower => SLOWER,
                Standing::Unsteady => UNSTEADY,
                Standing::Faster => FASTER,
                _ => WITHIN,
            };
            let at = (axis.at(*distance), across(*position));
            draw_marker(chart.plotting_area(), at, 0, colour)?;
            if named(*standing) && labelled < MAX_LABELS {
                labelled += 1;
                let (x, y) = chart.backend_coord(&at);
                root.draw(&Text::new(
                    label.clone(),
                    (x + 7, y),
                    (FONT, 13)
                        .into_font()
                        .color(&colour)
                        .pos(Pos::new(HPos::Left, VPos::Center)),
                ))
                .map_err(|e| e.to_string())?;
            }
        }
        let slower = strip.dots.iter().filter(|d| named(d.2)).count();
        if slower > labelled {
            plot.draw(&Text::new(
                format!("{} more slower GPUs, not labelled", slower - labelled),
                (80, 40),
                (FONT, 13).into_font().color(&SLOWER),
            ))
            .map_err(|e| e.to_string())?;
        }
        if let Some(note) = note {
            note_area
                .draw(&Text::new(
                    note,
                    (40, 8),
                    (FONT, 14).into_font().color(&SLOWER),
                ))
                .map_err(|e| e.to_string())?;
        }
        draw_legend(&legend, &entries)?;
        root.present().map_err(|e| e.to_string())?;
    }
    Ok(svg)
}
