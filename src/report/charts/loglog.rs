//! A chart on two logarithmic axes with its legend below: what the roofline and the
//! kernels' placement draw on. The caller draws its series in axis coordinates.

use plotters::prelude::*;

use super::axis::{Axis, Ticked};
use super::legend::{Entry, draw_legend, legend_height};
use super::{FONT, WIDTH, number_label};

/// What a log–log chart draws on: plotters' context over the two axes.
pub(super) type Plot<'a, 'b> = ChartContext<'a, SVGBackend<'b>, Cartesian2d<Ticked, Ticked>>;

/// The SVG of a log–log chart titled `title`, its axes described by `descriptions`
/// (x, then y), the x axis' ticks written by `x_label`, its series drawn by `draw`,
/// `entries` in the legend below.
pub(super) fn log_log_svg(
    title: &str,
    descriptions: (&str, &str),
    axes: (Axis, Axis),
    x_label: fn(f64) -> String,
    entries: &[Entry],
    draw: impl FnOnce(&mut Plot<'_, '_>) -> Result<(), String>,
) -> Result<String, String> {
    let (x, y) = axes;
    let legend_height = legend_height(entries);
    let plot_height = 560;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, plot_height + legend_height))
            .into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let (plot, legend) = root.split_vertically(plot_height);
        let mut context = ChartBuilder::on(&plot)
            .caption(title, (FONT, 20))
            .margin(12)
            .margin_right(24)
            .x_label_area_size(48)
            .y_label_area_size(78)
            .build_cartesian_2d(x.coord(), y.coord())
            .map_err(|e| e.to_string())?;
        let x_format = |v: &f64| x_label(x.value(*v));
        let y_format = |v: &f64| number_label(y.value(*v));
        draw_mesh(&mut context, descriptions, (&x_format, &y_format))?;
        draw(&mut context)?;
        draw_legend(&legend, entries)?;
        root.present().map_err(|e| e.to_string())?;
    }
    Ok(svg)
}

/// What writes an axis' tick labels.
pub(super) type Ticks<'f> = dyn Fn(&f64) -> String + 'f;

/// The grid, ticks and axis descriptions of a chart on [`Ticked`] axes, as every chart
/// of the report draws them: `formats` write the x and the y ticks.
pub(super) fn draw_mesh(
    context: &mut Plot<'_, '_>,
    descriptions: (&str, &str),
    formats: (&Ticks<'_>, &Ticks<'_>),
) -> Result<(), String> {
    context
        .configure_mesh()
        .x_desc(descriptions.0)
        .y_desc(descriptions.1)
        .x_label_formatter(formats.0)
        .y_label_formatter(formats.1)
        .label_style((FONT, 15))
        .axis_desc_style((FONT, 16))
        .bold_line_style(RGBColor(0xe4, 0xe4, 0xe4))
        .draw()
        .map_err(|e| e.to_string())
}

/// The part of the line through `from` and `to` (axis coordinates) within the plot's
/// extent, if any: a line plotters would otherwise draw past the axes.
pub(super) fn clipped(
    plot: &Plot<'_, '_>,
    from: (f64, f64),
    to: (f64, f64),
) -> Option<[(f64, f64); 2]> {
    let (xs, ys) = (plot.x_range(), plot.y_range());
    let (dx, dy) = (to.0 - from.0, to.1 - from.1);
    let (mut enter, mut leave) = (0.0f64, 1.0f64);
    for (start, delta, range) in [(from.0, dx, &xs), (from.1, dy, &ys)] {
        if delta == 0.0 {
            if !(range.start..=range.end).contains(&start) {
                return None;
            }
            continue;
        }
        let (a, b) = ((range.start - start) / delta, (range.end - start) / delta);
        enter = enter.max(a.min(b));
        leave = leave.min(a.max(b));
    }
    (enter < leave).then(|| {
        let at = |t: f64| (from.0 + dx * t, from.1 + dy * t);
        [at(enter), at(leave)]
    })
}
