//! The toolchain's tax of one device as a dot plot: a row per kernel (family/variant),
//! a dot per setting at its GB/s over the reference setting's (the one closest to the
//! hardware), the median over the kernel's cases; a dashed line at 1.

use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::axis::Axis;
use super::bars::row_axes;
use super::legend::{Entry, draw_legend, legend_height};
use super::{Chart, FONT, Stroke, WIDTH, chart_error, draw_marker, style};
use crate::error::Result;
use crate::results::join::{Line, Tax, tax_ratio};
use crate::results::{DeviceResults, slug};

/// One row of the plot: a kernel and, per ratio column, its median ratio.
struct Kernel {
    name: String,
    ratios: Vec<Option<f64>>,
}

const ROW_HEIGHT: u32 = 18;

/// The dot plot of `tax`, one of `results::join::taxes(devices, …)`.
pub(crate) fn tax_chart(devices: &[DeviceResults], tax: &Tax<'_, '_>) -> Result<Chart> {
    let setting = |column: usize| devices[column].setting.to_string();
    let columns: Vec<usize> = tax.ratio_columns().collect();
    let kernels = kernels(tax, &columns);
    let title = format!(
        "the toolchain's tax on {}: GB/s ÷ {}, median of each kernel's cases",
        tax.device,
        setting(tax.reference)
    );
    let file = super::file_name(&format!("tax-{}", slug(tax.device)));
    let entries: Vec<Entry> = columns
        .iter()
        .enumerate()
        .map(|(index, &column)| {
            let (colour, marker) = style(index);
            Entry {
                label: format!("{} ÷ {}", setting(column), setting(tax.reference)),
                colour,
                style: Stroke::Solid,
                marker: Some(marker),
            }
        })
        .collect();
    let svg =
        dot_plot(&title, &kernels, &entries).map_err(|message| chart_error(&file, message))?;
    Ok(Chart {
        family: None,
        file,
        title,
        svg,
    })
}

/// The kernels of the tax's cases in case order, each with its median ratio per column.
fn kernels(tax: &Tax<'_, '_>, columns: &[usize]) -> Vec<Kernel> {
    let mut groups: Vec<(String, Vec<&Line<'_>>)> = Vec::new();
    for &line in &tax.lines {
        let name = format!("{}/{}", line.family, line.variant);
        match groups.iter_mut().find(|(n, _)| *n == name) {
            Some((_, group)) => group.push(line),
            None => groups.push((name, vec![line])),
        }
    }
    groups
        .into_iter()
        .map(|(name, group)| Kernel {
            name,
            ratios: columns
                .iter()
                .map(|&column| median(group.iter().filter_map(|line| tax_ratio(tax, line, column))))
                .collect(),
        })
        .filter(|kernel| kernel.ratios.iter().any(Option::is_some))
        .collect()
}

/// The median of the finite values, if any.
fn median(values: impl Iterator<Item = f64>) -> Option<f64> {
    let finite: Vec<f64> = values.filter(|v| v.is_finite()).collect();
    crate::measure::Stats::of(&finite).map(|stats| stats.median)
}

fn dot_plot(title: &str, kernels: &[Kernel], entries: &[Entry]) -> Result<String, String> {
    let legend_height = legend_height(entries);
    let plot_height = 110 + u32::try_from(kernels.len()).map_err(|e| e.to_string())? * ROW_HEIGHT;
    let label_width = super::label_width(kernels.iter().map(|k| k.name.as_str()));
    let ratios = kernels
        .iter()
        .flat_map(|k| k.ratios.iter().flatten().copied());
    let axis = Axis::lines(ratios.chain([1.0]));
    let rows = kernels.len().max(1) as f64;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, plot_height + legend_height))
            .into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let (plot, legend) = root.split_vertically(plot_height);
        let mut chart = row_axes(
            &plot,
            (title, 20),
            "GB/s of the setting ÷ GB/s of the reference (below 1: the toolchain's cost)",
            &axis,
            label_width,
            rows,
        )?;
        let one = axis.at(1.0);
        chart
            .draw_series(std::iter::once(DashedPathElement::new(
                [(one, 0.0), (one, rows)],
                6,
                4,
                BLACK.stroke_width(1),
            )))
            .map_err(|e| e.to_string())?;
        let range = axis.range();
        for (index, kernel) in kernels.iter().enumerate() {
            // First kernel on top.
            let y = rows - index as f64 - 0.5;
            chart
                .draw_series(std::iter::once(PathElement::new(
                    [(range.start, y), (range.end, y)],
                    RGBColor(0xf0, 0xf0, 0xf0).stroke_width(1),
                )))
                .map_err(|e| e.to_string())?;
            let (x, pixel_y) = chart.backend_coord(&(range.start, y));
            root.draw(&Text::new(
                kernel.name.clone(),
                (x - 8, pixel_y),
                (FONT, 14)
                    .into_font()
                    .color(&BLACK)
                    .pos(Pos::new(HPos::Right, VPos::Center)),
            ))
            .map_err(|e| e.to_string())?;
            for (column, ratio) in kernel.ratios.iter().enumerate() {
                if let Some(ratio) = ratio {
                    let (colour, marker) = style(column);
                    draw_marker(chart.plotting_area(), (axis.at(*ratio), y), marker, colour)?;
                }
            }
        }
        draw_legend(&legend, entries)?;
        root.present().map_err(|e| e.to_string())?;
    }
    Ok(svg)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians() {
        assert_eq!(median([3.0, 1.0, 2.0].into_iter()), Some(2.0));
        assert_eq!(median([4.0, 1.0].into_iter()), Some(2.5));
        assert_eq!(median([f64::NAN].into_iter()), None);
    }
}
