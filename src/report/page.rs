//! The page itself: its head and style, its sections in order (summary, claims,
//! devices, tax, simulator, families) and the figures and validation blocks they hold.

use std::path::Path;

use maud::{DOCTYPE, Markup, PreEscaped, html};

use crate::results::join::{Line, Tax, tax_ratio};
use crate::results::{self, DeviceResults};
use crate::suite::{Family, REGISTRY};
use crate::validate::{self, Role, Validation};

use super::charts::{Chart, Panel, Placed};
use super::claims::Verdict;
use super::compare::number;
use super::tables::{case_table, device_table, kernel_table, named_figures};
use super::verdicts::{claims_matrix, finding, mark};

/// Marks a page as written by this command.
pub(super) const GENERATOR: &str = r#"<meta name="generator" content="membench report">"#;

/// The page's style sheet.
const STYLE: &str = r#"
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2em auto; max-width: 1360px; padding: 0 1em; color: #1a1a1a; line-height: 1.45; }
h1 { margin-bottom: 0.2em; }
h2 { border-bottom: 1px solid #ccc; padding-bottom: 0.2em; margin-top: 2em; }
p { max-width: 75em; }
nav { margin: 1em 0; }
code { font-size: 0.92em; }
table { border-collapse: collapse; margin: 0.8em 0; font-size: 0.92em; }
th, td { border: 1px solid #d0d0d0; padding: 0.3em 0.55em; vertical-align: top; text-align: left; }
th { background: #f4f4f4; }
td code { white-space: nowrap; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.absent { color: #888; text-align: right; }
td .bound { font-size: 0.8em; color: #666; white-space: normal; }
.scroll { overflow-x: auto; max-width: 100%; }
table.summary { width: 100%; }
.summary td { vertical-align: middle; }
.summary td.chart { width: 62%; }
.summary img { width: 100%; min-width: 480px; height: auto; border: 1px solid #e4e4e4; display: block; }
.finding { margin: 0.15em 0; }
.matrix td.verdict { text-align: center; font-weight: 600; white-space: nowrap; width: 2.2em; }
.matrix tr.family th { background: #fafafa; font-weight: 600; }
.matrix details p, .matrix details ul { margin: 0.3em 0; font-size: 0.9em; color: #333; }
.verdict.yes, .mark.yes { background: #e3f4e6; }
.verdict.no, .mark.no { background: #fbe3e4; }
.verdict.na, .mark.na { background: #f3f3f3; color: #666; }
.split { font-size: 0.85em; color: #8a4b00; }
.devices li { margin: 0.1em 0; }
figure { margin: 1.2em 0; }
figure svg { max-width: 100%; height: auto; border: 1px solid #e4e4e4; }
figcaption { font-size: 0.9em; color: #444; }
details { margin: 0.3em 0; }
summary { cursor: pointer; }
h2 + details > summary, h3 + details > summary, figure + details > summary { font-weight: 600; }
"#;

/// What the page is drawn from.
pub(super) struct Page<'p> {
    pub(super) devices: &'p [DeviceResults],
    pub(super) lines: &'p [Line<'p>],
    pub(super) panels: &'p [Panel<'p>],
    /// Each panel's charts.
    pub(super) charts: &'p [Vec<Chart>],
    pub(super) taxes: &'p [Tax<'p, 'p>],
    /// Each tax's chart.
    pub(super) tax_charts: &'p [Chart],
    /// The simulator judged on each file, and its scatter.
    pub(super) validations: &'p [Validation],
    pub(super) scatters: &'p [Option<Chart>],
    /// The families of `lines`, in case order.
    pub(super) families: &'p [Family],
    /// Each input's own kernels, placed against its device's levels.
    pub(super) placed: &'p [Placed<'p>],
}

// The templates write a line break after each block, so that the page reads (and
// diffs) a block a line.
impl Page<'_> {
    pub(super) fn render(&self) -> Markup {
        html! {
            (DOCTYPE) "\n"
            html lang="en" {
                "\n" (head("membench report")) "\n"
                body {
                    "\n"
                    h1 { "membench report" } "\n"
                    (introduction(self.devices)) "\n"
                    (contents(self.families, !self.validations.is_empty())) "\n"
                    (self.summary())
                    (claims_matrix(self.devices, self.families))
                    (device_table(self.devices))
                    (self.tax_section())
                    (self.simulator_section())
                    @for family in self.families {
                        (self.family_section(*family))
                    }
                }
                "\n"
            }
            "\n"
        }
    }

    /// The charts of `family`, panel by panel.
    fn family_charts<'c>(&'c self, family: Family) -> impl Iterator<Item = &'c Chart> + 'c {
        self.charts
            .iter()
            .flatten()
            .filter(move |c| c.family == Some(family))
    }

    /// Per family its finding on each charted device, and its first chart.
    fn summary(&self) -> Markup {
        let charted: Vec<&DeviceResults> = self
            .panels
            .iter()
            .flat_map(|panel| panel.devices.iter().copied())
            .collect();
        html! {
            h2 id="summary" { "Summary" } "\n"
            p {
                "Per family, the ratio its headline claim is decided on, per device (as the \
                 family charts show them: each in its plainest api/build and the one closest to \
                 the hardware): "
                (mark(&Verdict::Reproduced(String::new().into()))) " the claim reproduced, "
                (mark(&Verdict::NotReproduced(String::new().into()))) " not, "
                (mark(&Verdict::NotMeasured(String::new()))) " not measured. The claims below \
                 give every rule and number."
            }
            "\n"
            div class="scroll" { table class="summary" {
                "\n"
                tr { th { "family" } th { "finding" } th { "key chart" } } "\n"
                @for family in self.families {
                    tr {
                        td { a href={ "#family-" (family) } { (family) } }
                        td { (finding(*family, &charted)) }
                        td class="chart" {
                            @if let Some(chart) = self.family_charts(*family).next() {
                                a href={ "#" (chart.anchor()) } {
                                    img src=(chart.file) alt=(chart.title);
                                }
                            }
                        }
                    }
                    "\n"
                }
            } }
            "\n"
        }
    }

    /// Per device measured in several settings, the tax chart and every GPU-clock case
    /// in each setting, with the ratios to the setting closest to the hardware.
    fn tax_section(&self) -> Markup {
        let devices = self.devices;
        html! {
            @if !self.taxes.is_empty() {
                h2 id="tax" { "The toolchain's tax" } "\n"
                p {
                    "The same kernels in each api and build a device was measured with: "
                    b { "default" } " is what a plain wgpu program gets (naga's barrier scopes, \
                     wgpu's runtime checks), " b { "tax-free" } " has the checks off and every \
                     barrier at the memory scope the WGSL spec defines, " b { "cuda" } " is the \
                     kernel's CUDA C twin. A ratio below 1 is what the toolchain costs; the \
                     claims are decided per column, and flagged where the columns disagree."
                }
                "\n"
                @for (tax, chart) in self.taxes.iter().zip(self.tax_charts) {
                    @let setting = |c: usize| devices[c].setting.to_string();
                    h3 { (tax.device) } "\n"
                    (figure(chart))
                    details {
                        summary {
                            (tax.lines.len()) " cases, GB/s per api/build and the ratio to "
                            (setting(tax.reference))
                        }
                        "\n"
                        div class="scroll" { table {
                            "\n"
                            tr {
                                th { "family" } th { "variant" } th { "param" }
                                @for &column in &tax.columns { th { (setting(column)) br; "GB/s" } }
                                @for column in tax.ratio_columns() {
                                    th { (setting(column)) br; "÷ " (setting(tax.reference)) }
                                }
                            }
                            "\n"
                            @for line in &tax.lines {
                                tr {
                                    td { (line.family) } td { (line.variant) } td { code { (line.params) } }
                                    @for &column in &tax.columns {
                                        td class="num" { (line.gbps(column).map(|gbps| results::speed_text(line.family, gbps)).unwrap_or_default()) }
                                    }
                                    @for column in tax.ratio_columns() {
                                        td class="num" { (number(tax_ratio(tax, line, column), 2)) }
                                    }
                                }
                                "\n"
                            }
                        } }
                        "\n"
                    }
                    "\n"
                }
            }
        }
    }

    /// Per file, the simulator's predictions judged against the measurements:
    /// the accuracy of the held-out rows per family, the calibration rows apart, the
    /// order within each ladder and sweep, and the scatter.
    fn simulator_section(&self) -> Markup {
        html! {
            @if !self.validations.is_empty() {
                h2 id="simulator" { "Simulator" } "\n"
                p {
                    "Every measured case of each file (the wgpu build closest to the hardware) \
                     beside its prediction, as "
                    code { "membench simulate --validate" } " prints it: the prediction its \
                     row recorded when it was measured, or, with "
                    code { "--resimulate" } ", one made again now by the current simulator on \
                     the preset closest to the device, calibrated from the file's calibration \
                     rows; each file's first line says which. Per row the ratio is \
                     measured ÷ predicted GB/s (= predicted ÷ measured time); APE = |ratio − 1| \
                     is the error of the predicted time; the geometric mean is of the ratio \
                     (above 1: the device beats the model). Spearman's ρ is of measured against \
                     predicted GB/s within each ladder (a family's variants at one param) and \
                     sweep (one experiment over one param) of at least 4 cases, "
                    (validate::RANK_TIES) "; "
                    i { "flat" } " marks predictions all within 1 % where the measurements differ \
                     by more than 5 %. Transfers are predicted by the transfer model; the \
                     `all` line is of the kernel families."
                }
                "\n"
                @for (validation, scatter) in self.validations.iter().zip(self.scatters) {
                    (validation_block(validation, scatter.as_ref()))
                }
            }
        }
    }

    /// A family's experiments, its charts and all its cases.
    fn family_section(&self, family: Family) -> Markup {
        let experiments: Vec<_> = REGISTRY.iter().filter(|e| e.family == family).collect();
        let lines: Vec<&Line<'_>> = self.lines.iter().filter(|l| l.family == family).collect();
        html! {
            h2 id={ "family-" (family) } { (family) } "\n"
            @if !experiments.is_empty() {
                ul {
                    "\n"
                    @for experiment in experiments {
                        li { code { (experiment.name()) } ": " (super::claims::summary(experiment)) } "\n"
                    }
                }
                "\n"
            }
            @if let Some(named) = named_figures(family, self.devices) {
                (named)
            }
            @for chart in self.family_charts(family) {
                (figure(chart))
            }
            @if family == Family::Kernel {
                @for placed in self.placed { (kernel_table(placed)) }
            }
            (case_table(family, self.devices, &lines))
        }
    }
}

/// One file's validation: its headline, the held-out accuracy table, the calibration
/// rows, the rank agreement and the rows not judged folded away, and the scatter.
fn validation_block(validation: &Validation, scatter: Option<&Chart>) -> Markup {
    let (header, rows) = validate::accuracy_table(validation);
    let held_out: Vec<&Vec<String>> = rows
        .iter()
        .filter(|r| r[0] == Role::HeldOut.label())
        .collect();
    let calibration: Vec<_> = validation
        .judged
        .iter()
        .filter(|j| j.role == Role::Calibration)
        .collect();
    let ranked = validation.ranked();
    let flat = ranked.iter().filter(|r| r.flat).count();
    html! {
        h3 { (validation.label()) } "\n"
        p { (validation.headline()) } "\n"
        @if held_out.is_empty() {
            p { "No held-out row judged." } "\n"
        } @else {
            div class="scroll" { table {
                "\n"
                tr { @for cell in &header[1..] { th { (cell) } } } "\n"
                @for row in &held_out {
                    tr {
                        td { (row[1]) }
                        @for cell in &row[2..] { td class="num" { (cell) } }
                    }
                    "\n"
                }
            } }
            "\n"
        }
        @if !calibration.is_empty() {
            p {
                "Calibration rows (fitted, so not judged above): "
                @for (index, judged) in calibration.iter().enumerate() {
                    @if index > 0 { "; " }
                    @let family = judged.id.family;
                    @let speed = |gbps| format!("{:.1} {}", results::in_unit(family, gbps), results::unit(family));
                    code { (judged.id) } " measured " (speed(judged.measured_gbps))
                    ", predicted " (speed(judged.predicted_gbps))
                }
            }
            "\n"
        }
        @if !ranked.is_empty() {
            details {
                summary {
                    "Rank agreement in " (ranked.len()) " ladders and sweeps (" (flat) " flat)"
                }
                "\n"
                div class="scroll" { table {
                    "\n"
                    tr { th { "kind" } th { "group" } th { "n" } th { "Spearman ρ" } th { "flat" } } "\n"
                    @for r in &ranked {
                        tr {
                            td { (format!("{:?}", r.group.kind).to_lowercase()) }
                            td { (r.group.name) }
                            td class="num" { (r.group.members.len()) }
                            td class="num" { (number(r.rho, 2)) }
                            td { @if r.flat { "flat" } }
                        }
                        "\n"
                    }
                } }
                "\n"
            }
            "\n"
        }
        @if let Some(scatter) = scatter { (figure(scatter)) }
        @let others = &validation.unjudged;
        @if !others.is_empty() {
            details {
                summary { (others.len()) " measured rows not judged" } "\n"
                ul {
                    @for (id, why) in others { li { code { (id) } ": " (why.to_string()) } "\n" }
                }
                "\n"
            }
            "\n"
        }
    }
}

/// A chart inline, its title and a link to its standalone file.
pub(super) fn figure(chart: &Chart) -> Markup {
    html! {
        figure id=(chart.anchor()) {
            "\n" (PreEscaped(svg_body(&chart.svg))) "\n"
            figcaption {
                (chart.title) " — standalone: " a href=(chart.file) { (chart.file) }
            }
            "\n"
        }
        "\n"
    }
}

/// A page's `<head>`: the report's and the fleet's pages share the style.
pub(super) fn head(page_title: &str) -> Markup {
    html! {
        head {
            "\n"
            meta charset="utf-8"; "\n"
            (PreEscaped(GENERATOR)) "\n"
            meta name="viewport" content="width=device-width, initial-scale=1"; "\n"
            title { (page_title) } "\n"
            style { (PreEscaped(STYLE)) } "\n"
        }
    }
}

pub(super) fn introduction(devices: &[DeviceResults]) -> Markup {
    html! {
        p {
            "Effective bandwidth in GB/s (10" sup { "9" } " bytes per second: bytes the kernel \
             must read plus bytes it must write, over the median time; on-chip GB/s for the \
             families that move workgroup memory and cached constants) of " (devices.len())
            " device" @if devices.len() != 1 { "s" } " and settings, beside the simulator's \
             prediction. Ratios are to the baseline, "
            b { (devices.first().map_or("", |d| d.label.as_str())) }
            " (" code { "--baseline" } " picks another). Written by " code { "membench report" }
            " from "
            @for (index, path) in files(devices).iter().enumerate() {
                @if index > 0 { ", " }
                code { (path.display()) }
            }
            "."
        }
    }
}

/// The files `devices` were read from, kernels files included, each once.
pub(super) fn files(devices: &[DeviceResults]) -> Vec<&Path> {
    let mut paths: Vec<&Path> = Vec::new();
    for path in devices.iter().flat_map(DeviceResults::files) {
        if !paths.contains(&path) {
            paths.push(path);
        }
    }
    paths
}

fn contents(families: &[Family], simulator: bool) -> Markup {
    html! {
        nav {
            "Contents: " a href="#summary" { "summary" } " · " a href="#claims" { "claims" }
            " · " a href="#devices" { "devices" } " · " a href="#tax" { "toolchain tax" }
            @if simulator { " · " a href="#simulator" { "simulator" } }
            @for family in families {
                " · " a href={ "#family-" (family) } { (family) }
            }
        }
    }
}

/// An SVG document as an element to inline: without an XML declaration, if any.
fn svg_body(svg: &str) -> &str {
    svg.find("<svg").map_or(svg, |start| &svg[start..])
}
