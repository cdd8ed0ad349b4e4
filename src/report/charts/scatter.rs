//! The simulator's validation of one device as a scatter: each judged row a point at
//! its predicted (x) and measured (y) GB/s, both axes logarithmic over the same
//! extent, one colour and shape per family, the calibration rows ringed, and the line
//! y = x where a prediction is exact (above it the device beats the model).

use plotters::element::DashedPathElement;
use plotters::prelude::*;

use super::axis::{Axis, Scale};
use super::legend::{Entry, draw_legend, legend_height};
use super::{Chart, FONT, Stroke, WIDTH, chart_error, draw_marker, number_label, style};
use crate::error::Result;
use crate::results::slug;
use crate::suite::Family;
use crate::validate::{Role, Validation};

/// The scatter of `validation`'s judged rows.
pub(crate) fn scatter_chart(validation: &Validation) -> Result<Chart> {
    let title = format!(
        "simulator on {}: measured vs predicted GB/s, {} rows",
        validation.label(),
        validation.judged.len()
    );
    // Named after the results file: two files of one device (two builds) differ.
    let stem = validation.path.file_stem().unwrap_or_default();
    let file = super::file_name(&format!("simulator-{}", slug(&stem.to_string_lossy())));
    let svg = scatter_svg(&title, validation).map_err(|message| chart_error(&file, message))?;
    Ok(Chart {
        family: None,
        file,
        title,
        svg,
    })
}

/// The colour and shape index of a family: its place in the registry's order, so a
/// family looks the same on every device's scatter.
fn family_style(family: Family) -> usize {
    Family::ALL.iter().position(|f| *f == family).unwrap_or(0)
}

fn scatter_svg(title: &str, validation: &Validation) -> Result<String, String> {
    let mut families: Vec<Family> = validation.judged.iter().map(|j| j.id.family).collect();
    families.sort_by_key(|f| family_style(*f));
    families.dedup();
    let mut entries: Vec<Entry> = families
        .iter()
        .map(|&family| {
            let (colour, marker) = style(family_style(family));
            Entry {
                label: family.to_string(),
                colour,
                style: Stroke::Solid,
                marker: Some(marker),
            }
        })
        .collect();
    entries.push(Entry {
        label: "y = x: predicted exactly".to_owned(),
        colour: BLACK,
        style: Stroke::Dashed,
        marker: None,
    });
    let calibration = validation
        .judged
        .iter()
        .any(|j| j.role == Role::Calibration);
    if calibration {
        entries.push(Entry {
            label: "ringed: a calibration row (fitted, not predicted)".to_owned(),
            colour: BLACK,
            style: Stroke::Dotted,
            marker: None,
        });
    }
    // One extent for both axes, so that y = x is the diagonal.
    let values = validation
        .judged
        .iter()
        .flat_map(|j| [j.measured_gbps, j.predicted_gbps]);
    let (low, high) = values
        .filter(|v| v.is_finite() && *v > 0.0)
        .fold((f64::INFINITY, 0.0f64), |(l, h), v| (l.min(v), h.max(v)));
    // Without a value, the axis widens itself around 1.
    let axis = Axis::new(Scale::Log(10.0), low / 1.5, high * 1.5);
    let legend_height = legend_height(&entries);
    let plot_height = 620;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, plot_height + legend_height))
            .into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let (plot, legend) = root.split_vertically(plot_height);
        // A square plot: the same pixels per decade on both axes.
        let side = plot_height as i32 - 40;
        let margin = (WIDTH as i32 - side - 78) / 2;
        let mut context = ChartBuilder::on(&plot)
            .caption(title, (FONT, 20))
            .margin(12)
            .margin_left(margin.max(12) as u32)
            .margin_right(margin.max(12) as u32)
            .x_label_area_size(48)
            .y_label_area_size(78)
            .build_cartesian_2d(axis.coord(), axis.coord())
            .map_err(|e| e.to_string())?;
        let format = |v: &f64| number_label(axis.value(*v));
        super::loglog::draw_mesh(
            &mut context,
            ("predicted GB/s (simulator)", "measured GB/s (median)"),
            (&format, &format),
        )?;
        let range = axis.range();
        context
            .draw_series(std::iter::once(DashedPathElement::new(
                [(range.start, range.start), (range.end, range.end)],
                7,
                4,
                BLACK.stroke_width(1),
            )))
            .map_err(|e| e.to_string())?;
        for judged in &validation.judged {
            let at = (
                axis.at(judged.predicted_gbps),
                axis.at(judged.measured_gbps),
            );
            let (colour, marker) = style(family_style(judged.id.family));
            draw_marker(context.plotting_area(), at, marker, colour)?;
            if judged.role == Role::Calibration {
                context
                    .plotting_area()
                    .draw(&Circle::new(at, 9, BLACK.stroke_width(1)))
                    .map_err(|e| e.to_string())?;
            }
        }
        draw_legend(&legend, &entries)?;
        root.present().map_err(|e| e.to_string())?;
    }
    Ok(svg)
}
