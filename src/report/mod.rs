//! `membench report`: a static HTML page of several devices' results — a summary of
//! each family's finding, the claims as a matrix of verdicts, the devices, the
//! toolchain's tax, and per family its charts and full comparison table — and each
//! chart again as a standalone SVG file.
//!
//! The page needs no network and no scripts: the charts are inline SVG, the style is
//! inline CSS. It is a `maud` template, so every text is escaped where it is written.
//! Everything is built in memory first, so bad input writes nothing, and written whole
//! ([`write()`]), so a failed write leaves the old report as it was.
//!
//! Ratios are to the first device given (`--baseline` picks another; without files,
//! GPUs come before a software adapter). Results of different sizings are charted
//! apart (`sizing`); family charts show each device in its plainest setting and the one
//! closest to the hardware, the tax chart the rest.
//!
//! [`fleet_page`] is the page of `membench fleet`: a strip plot per case with an
//! outlier GPU, and every case's median and MAD.

pub mod charts;
pub mod claims;
pub mod compare;
mod fleet;
pub mod sizing;
mod write;

pub(crate) use fleet::fleet_page;
pub(crate) use write::destination;
pub use write::{MANIFEST, write};

use std::path::{Path, PathBuf};

use maud::{DOCTYPE, Markup, PreEscaped, html};

use crate::error::{Error, Result};
use crate::results::join::{Line, Tax, join, tax_ratio, taxes};
use crate::results::{self, DeviceResults, Status};
use crate::suite::{Family, Key, REGISTRY};
use crate::validate;
use charts::{Chart, Panel, Placed};
use claims::{CLAIMS, Cases, Claim, FINDINGS, Kind, Source, Verdict, ratio_text};
use compare::number;
use validate::{Role, Validation};

/// Marks a page as written by this command.
const GENERATOR: &str = r#"<meta name="generator" content="membench report">"#;

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

/// The page and its charts, not yet written.
#[derive(Debug)]
pub struct Report {
    /// The HTML page.
    pub html: String,
    /// The charts the page links to.
    pub charts: Vec<Chart>,
}

/// Every `*.csv` directly in `dir` that holds anything, by name: the default input of
/// `membench report`.
pub fn default_inputs(dir: &Path) -> Result<Vec<PathBuf>> {
    let io = Error::io(dir);
    let mut paths = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(&io)? {
        let path = entry.map_err(&io)?.path();
        let filled = std::fs::metadata(&path).is_ok_and(|m| m.is_file() && m.len() > 0);
        if path.extension().is_some_and(|e| e == "csv") && filled {
            paths.push(path);
        }
    }
    // By stem, so that `x.csv` comes before `x-unchecked.csv`.
    paths.sort_by_key(|path| path.file_stem().map(|s| s.to_os_string()));
    if paths.is_empty() {
        return Err(Error::Results {
            path: dir.to_owned(),
            message: "no results CSV here; name the CSVs to report on".to_owned(),
        });
    }
    Ok(paths)
}

/// `devices` with the baseline of the ratios first: the device whose label is
/// `baseline`, or the only file whose labels contain it (ignoring case), and the
/// rest of its file after it.
pub(crate) fn with_baseline(
    mut devices: Vec<DeviceResults>,
    baseline: &str,
) -> Result<Vec<DeviceResults>> {
    let wanted = baseline.to_lowercase();
    let exact = devices.iter().position(|d| d.label == baseline);
    let matching: Vec<usize> = (0..devices.len())
        .filter(|&i| devices[i].label.to_lowercase().contains(&wanted))
        .collect();
    let mut files: Vec<&Path> = matching
        .iter()
        .map(|&i| devices[i].path.as_path())
        .collect();
    files.dedup();
    let chosen = match (exact, matching.first(), files.len()) {
        (Some(index), _, _) => index,
        (None, Some(&index), 1) => index,
        (None, _, count) => {
            let labels: Vec<&str> = devices.iter().map(|d| d.label.as_str()).collect();
            let why = if count == 0 {
                "matches no device"
            } else {
                "matches devices of several files"
            };
            return Err(Error::Results {
                path: PathBuf::from("--baseline"),
                message: format!("{baseline:?} {why}; the devices: {}", labels.join("; ")),
            });
        }
    };
    let file = devices[chosen].path.clone();
    let label = devices[chosen].label.clone();
    // Stable: the others keep their order.
    devices.sort_by_key(|d| (d.label != label, d.path != file));
    Ok(devices)
}

/// Builds the page and its charts for `devices` (in the order given; ratios are to
/// the first), with a "Simulator" section of `validations` (of the same files,
/// [`validate::of_results`]) where there are any.
pub fn build(devices: &[DeviceResults], validations: &[Validation]) -> Result<Report> {
    let lines = join(devices);
    let panels = panels(devices, &lines);
    let mut drawn = Vec::new();
    for panel in &panels {
        drawn.push(charts::charts(panel)?);
    }
    // Per results file and setting, not per panel: each device's own roofline.
    drawn.push(charts::roofline_charts(devices)?);
    let placed = charts::kernels::placed(devices);
    drawn.push(charts::kernel_charts(&placed)?);
    let taxes = taxes(devices, &lines);
    let tax_charts = taxes
        .iter()
        .map(|tax| charts::tax_chart(devices, tax))
        .collect::<Result<Vec<_>>>()?;
    // A file with no row judged has no scatter.
    let scatters = validations
        .iter()
        .map(|v| {
            (!v.judged.is_empty())
                .then(|| charts::scatter_chart(v))
                .transpose()
        })
        .collect::<Result<Vec<_>>>()?;
    let mut families: Vec<Family> = Vec::new();
    for line in &lines {
        if !families.contains(&line.family) {
            families.push(line.family);
        }
    }
    let page = Page {
        devices,
        lines: &lines,
        panels: &panels,
        charts: &drawn,
        taxes: &taxes,
        tax_charts: &tax_charts,
        validations,
        scatters: &scatters,
        families: &families,
        placed: &placed,
    };
    let html = page.render().into_string();
    Ok(Report {
        html,
        charts: drawn
            .into_iter()
            .flatten()
            .chain(tax_charts)
            .chain(scatters.into_iter().flatten())
            .collect(),
    })
}

/// The family charts' panels: one per sizing, each device in the settings it is
/// charted in.
fn panels<'d>(devices: &'d [DeviceResults], lines: &[Line<'d>]) -> Vec<Panel<'d>> {
    sizing::groups(devices)
        .into_iter()
        .enumerate()
        .map(|(number, group)| {
            let shown = charted(devices, &group);
            let lines = lines
                .iter()
                .map(|line| Line {
                    cells: shown.iter().map(|&d| line.cells[d]).collect(),
                    ..line.clone()
                })
                .filter(|line| line.cells.iter().any(Option::is_some))
                .collect();
            let names: Vec<&str> = shown.iter().map(|&d| devices[d].label.as_str()).collect();
            Panel {
                devices: shown.iter().map(|&d| &devices[d]).collect(),
                lines,
                sizing: (number > 0).then(|| (number + 1, names.join(", "))),
            }
        })
        .collect()
}

/// Of `group`, what family charts show: per device its plainest setting and the one
/// closest to the hardware (the tax chart shows the rest), in `group`'s order.
fn charted(devices: &[DeviceResults], group: &[usize]) -> Vec<usize> {
    let closeness = |d: usize| devices[d].setting.closeness();
    let same_device = |a: usize, b: usize| device_name(&devices[a]) == device_name(&devices[b]);
    group
        .iter()
        .copied()
        .filter(|&d| {
            let others = group.iter().copied().filter(|&o| same_device(o, d));
            let (least, most) = others.fold((u8::MAX, 0), |(l, m), o| {
                (l.min(closeness(o)), m.max(closeness(o)))
            });
            closeness(d) == least || closeness(d) == most
        })
        .collect()
}

/// What the page is drawn from.
struct Page<'p> {
    devices: &'p [DeviceResults],
    lines: &'p [Line<'p>],
    panels: &'p [Panel<'p>],
    /// Each panel's charts.
    charts: &'p [Vec<Chart>],
    taxes: &'p [Tax<'p, 'p>],
    /// Each tax's chart.
    tax_charts: &'p [Chart],
    /// The simulator judged on each file, and its scatter.
    validations: &'p [Validation],
    scatters: &'p [Option<Chart>],
    /// The families of `lines`, in case order.
    families: &'p [Family],
    /// Each input's own kernels, placed against its device's levels.
    placed: &'p [Placed<'p>],
}

// The templates write a line break after each block, so that the page reads (and
// diffs) a block a line.
impl Page<'_> {
    fn render(&self) -> Markup {
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
                        li { code { (experiment.name()) } ": " (claims::summary(experiment)) } "\n"
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
fn figure(chart: &Chart) -> Markup {
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

/// A family's finding: its headline claim's ratio per device, devices of one shown
/// value and verdict together.
fn finding(family: Family, devices: &[&DeviceResults]) -> Markup {
    let Some((headline, claim)) = FINDINGS
        .iter()
        .map(|f| (f, f.claim))
        .find(|(_, claim)| claim.family == family)
    else {
        return html! {};
    };
    let mut groups: Vec<(String, Verdict, Vec<&str>)> = Vec::new();
    for device in devices {
        let verdict = claim.decide(&Cases::new(&device.rows, Source::Measured));
        let shown = verdict.ratio().map_or_else(String::new, ratio_text);
        let same = |(text, other, _): &&mut (String, Verdict, Vec<&str>)| {
            *text == shown && other.label() == verdict.label()
        };
        match groups.iter_mut().find(|g| same(g)) {
            Some((_, _, labels)) => labels.push(&device.label),
            None => groups.push((shown, verdict, vec![&device.label])),
        }
    }
    // A device that could not decide (a partial file) says nothing here.
    if groups
        .iter()
        .any(|(_, v, _)| !matches!(v, Verdict::NotMeasured(_)))
    {
        groups.retain(|(_, v, _)| !matches!(v, Verdict::NotMeasured(_)));
    }
    html! {
        b { (headline.what) } ":"
        @for (shown, verdict, labels) in &groups {
            div class="finding" title=(verdict.detail()) {
                (mark(verdict)) " "
                @if !shown.is_empty() { b { (shown) } " " }
                "on " (labels.join(", "))
            }
        }
    }
}

/// A page's `<head>`: the report's and the fleet's pages share the style.
fn head(page_title: &str) -> Markup {
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

fn introduction(devices: &[DeviceResults]) -> Markup {
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

/// The files `devices` were read from, each once.
fn files(devices: &[DeviceResults]) -> Vec<&Path> {
    let mut paths: Vec<&Path> = devices.iter().map(|d| d.path.as_path()).collect();
    paths.dedup();
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

fn device_table(devices: &[DeviceResults]) -> Markup {
    html! {
        h2 id="devices" { "Devices" } "\n"
        div class="scroll" { table {
            "\n"
            tr {
                th { "#" } th { "device" } th { "vendor" } th { "backend" } th { "driver" }
                th { "subgroup size" } th { "api / build" } th { "cases ok / failed / skipped" }
                th { "run" } th { "file" }
            }
            "\n"
            @for (index, device) in devices.iter().enumerate() {
                @if let Some(row) = device.metadata() {
                    tr {
                        td { (index + 1) }
                        td { b { (device.label) } }
                        td { (row.vendor) }
                        td { (row.backend) }
                        td { (row.driver) }
                        td { (row.subgroup_size) }
                        td { (device.setting) }
                        td class="num" {
                            (count(device, Status::Ok)) " / " (count(device, Status::Failed)) " / "
                            (count(device, Status::Skipped))
                        }
                        td {
                            (row.timestamp_utc) ", membench " (row.membench_version)
                            " (" (row.git_commit) ")"
                        }
                        td { code { (device.path.display()) } }
                    }
                    "\n"
                }
            }
        } }
        "\n"
    }
}

/// How many of the device's cases have `status`.
fn count(device: &DeviceResults, status: Status) -> usize {
    device.rows.iter().filter(|r| r.status == status).count()
}

/// The mark and class of a verdict.
fn verdict_mark(verdict: &Verdict) -> (&'static str, &'static str) {
    match verdict {
        Verdict::Reproduced(_) => ("✓", "yes"),
        Verdict::NotReproduced(_) => ("✗", "no"),
        Verdict::NotMeasured(_) => ("–", "na"),
    }
}

/// A verdict's mark, coloured, its label as the title.
fn mark(verdict: &Verdict) -> Markup {
    let (mark, class) = verdict_mark(verdict);
    html! { span class={ "mark " (class) } title=(verdict.label()) { (mark) } }
}

/// The claims as a matrix: a row per claim, a column per device and setting, a mark
/// per cell; the rule and every number folded under the claim.
fn claims_matrix(devices: &[DeviceResults], families: &[Family]) -> Markup {
    html! {
        h2 id="claims" { "Claims" } "\n"
        p {
            "Each claim of the classic texts, decided per device by an explicit rule: "
            b { "✓ reproduced" } ", " b { "✗ not reproduced" } ", " b { "– not measured" }
            " (a row the rule needs is absent, skipped or failed); "
            span class="split" { "⚑" } " where another api/build of the device decides the other \
             way (the toolchain, not the memory system, decides there). Open a claim for its rule, \
             the numbers per device and the " i { "model" } "'s verdict (the rule applied to the \
             simulator's predictions). Rules live in " code { "src/report/claims/" } "."
        }
        "\n"
        ol class="devices" {
            @for device in devices { li { (device.label) } }
        }
        "\n"
        div class="scroll" { table class="matrix" {
            "\n"
            tr {
                th { "claim" }
                @for (index, device) in devices.iter().enumerate() {
                    th title=(device.label) { (index + 1) }
                }
            }
            "\n"
            @for family in families {
                tr class="family" { th colspan=(devices.len() + 1) { (family) } } "\n"
                @for claim in CLAIMS.iter().filter(|c| c.family == *family) {
                    (claim_row(claim, devices)) "\n"
                }
            }
        } }
        "\n"
        (absent_claims(families))
    }
}

/// The claims of families no file has: their words only, folded away.
fn absent_claims(families: &[Family]) -> Markup {
    let absent: Vec<&Claim> = CLAIMS
        .iter()
        .filter(|c| !families.contains(&c.family))
        .collect();
    let mut names: Vec<&str> = absent.iter().map(|c| c.family.as_str()).collect();
    names.dedup();
    html! {
        @if !absent.is_empty() {
            details {
                summary {
                    (absent.len()) " more claims, of families no file has (" (names.join(", "))
                    "): not measured on any device"
                }
                "\n"
                div class="scroll" { table {
                    "\n"
                    tr { th { "family" } th { "claim" } th { "rule" } } "\n"
                    @for claim in absent {
                        tr id={ "claim-" (claim.id) } {
                            td { (claim.family) } td { (claim.claim) } td { (claim.rule) }
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

/// One claim's row: its words (the rule and each device's numbers folded under
/// them), then each device's mark, flagged where one device's settings disagree.
fn claim_row(claim: &Claim, devices: &[DeviceResults]) -> Markup {
    let verdicts: Vec<Verdict> = devices
        .iter()
        .map(|device| claim.decide(&Cases::new(&device.rows, Source::Measured)))
        .collect();
    let split = split_by_setting(devices, &verdicts);
    let predicted = |device: &DeviceResults| {
        (claim.kind == Kind::Bandwidth)
            .then(|| claim.decide(&Cases::new(&device.rows, Source::Predicted)))
    };
    html! {
        tr id={ "claim-" (claim.id) } {
            td {
                details {
                    summary { (claim.claim) }
                    p { "Rule: " (claim.rule) }
                    ul {
                        @for (index, (device, verdict)) in devices.iter().zip(&verdicts).enumerate() {
                            li {
                                (index + 1) ". " (mark(verdict)) " " (verdict.label()) ": "
                                (verdict.detail())
                                @if let Some(model) = predicted(device) {
                                    "; model: " (mark(&model)) " " (model.label())
                                }
                            }
                        }
                    }
                }
            }
            @for (device, verdict) in devices.iter().zip(&verdicts) {
                @let (symbol, class) = verdict_mark(verdict);
                td class={ "verdict " (class) } title={ (device.label) ": " (verdict.label()) " — " (verdict.detail()) } {
                    (symbol)
                    @if split.contains(&device_name(device)) {
                        span class="split" title="another api/build of this device decides the other way" { "⚑" }
                    }
                }
            }
        }
    }
}

/// What the run's summary names of `family` per device file, if it names anything: the
/// launch costs, or the compute peaks and the ridge point.
fn named_figures(family: Family, devices: &[DeviceResults]) -> Option<Markup> {
    let named = |rows: &[results::Row]| match family {
        Family::Launch => results::launch::summary_lines(rows),
        Family::Compute => results::compute::summary_lines(rows),
        _ => String::new(),
    };
    let lines: Vec<(&str, String)> = devices
        .iter()
        .flat_map(|device| {
            let text = named(&device.rows);
            let lines: Vec<String> = text.lines().map(str::to_owned).collect();
            lines
                .into_iter()
                .map(move |line| (device.label.as_str(), line))
        })
        .collect();
    (!lines.is_empty()).then(|| {
        html! {
            ul class="named" {
                "\n"
                @for (device, line) in &lines {
                    li { (device) ": " (line) } "\n"
                }
            }
            "\n"
        }
    })
}

fn device_name(device: &DeviceResults) -> &str {
    device.metadata().map_or("", |row| row.device.as_str())
}

/// The devices on which one setting reproduces a claim and another does not.
fn split_by_setting<'a>(devices: &'a [DeviceResults], verdicts: &[Verdict]) -> Vec<&'a str> {
    let decided = |name: &str, reproduced: bool| {
        devices.iter().zip(verdicts).any(|(device, verdict)| {
            device_name(device) == name
                && match verdict {
                    Verdict::Reproduced(_) => reproduced,
                    Verdict::NotReproduced(_) => !reproduced,
                    Verdict::NotMeasured(_) => false,
                }
        })
    };
    let mut split: Vec<&str> = devices
        .iter()
        .map(device_name)
        .filter(|name| decided(name, true) && decided(name, false))
        .collect();
    split.dedup();
    split
}

/// Every case of a family, folded away: each device's GB/s, ratio to the baseline
/// and prediction.
fn case_table(family: Family, devices: &[DeviceResults], lines: &[&Line<'_>]) -> Markup {
    let unit = results::unit(family);
    html! {
        details {
            summary { "All " (lines.len()) " " (family) " cases" } "\n"
            div class="scroll" { table {
                "\n"
                tr {
                    th { "variant" } th { "param" }
                    @for (index, device) in devices.iter().enumerate() {
                        th { (device.label) br; (unit) }
                        @if index > 0 {
                            th { (device.label) br; "÷ baseline" }
                        }
                        th { (device.label) br; "predicted " (unit) }
                    }
                }
                "\n"
                @for line in lines {
                    (case_row(line, devices.len())) "\n"
                }
            } }
            "\n"
        }
        "\n"
    }
}

fn case_row(line: &Line<'_>, device_count: usize) -> Markup {
    html! {
        tr {
            td { (line.variant) }
            td { code { (line.params) } }
            @for index in 0..device_count {
                @match line.gbps(index) {
                    Some(gbps) => td class="num" { (in_unit(line.family, Some(gbps))) },
                    None => td class="absent" title=(absent_note(line, index)) {
                        (line.status(index))
                    },
                }
                @if index > 0 {
                    td class="num" { (number(line.ratio(index), 3)) }
                }
                td class="num" {
                    (in_unit(line.family, line.sim_gbps(index)))
                    @if let Some(bound) = line.sim_bound(index) {
                        br; span class="bound" { (bound.describe()) }
                    }
                }
            }
        }
    }
}

/// One input's kernel rows: each one's footprint, GB/s, the level its footprint fits
/// and the share of that level's plateau it reaches.
fn kernel_table(placed: &Placed<'_>) -> Markup {
    html! {
        div class="scroll" { table {
            caption { (placed.device.label) ": its kernels against its memory levels" }
            "\n"
            tr {
                th { "kernel" } th { "param" } th { "footprint" } th { "GB/s" }
                th { "level it fits" } th { "% of the level's plateau" }
            }
            "\n"
            @for row in &placed.rows {
                @let footprint = row.params.number(Key::Footprint);
                @let level = footprint.and_then(|f| crate::kernel::place::level_of(f, &placed.levels));
                tr {
                    td { (row.variant) }
                    td { code { (row.params) } }
                    td class="num" { (footprint.map(results::levels::bytes_text).unwrap_or_default()) }
                    @match charts::kernels::point(row) {
                        Some((_, gbps)) => td class="num" { (number(Some(gbps), 1)) },
                        None => td class="absent" title=(row.note) { (row.status) },
                    }
                    td { (level.map(|l| l.name.as_str()).unwrap_or_default()) }
                    td class="num" {
                        (number(level.zip(charts::kernels::point(row)).map(|(l, (_, gbps))| 100.0 * gbps / l.value), 0))
                    }
                }
                "\n"
            }
        } }
        "\n"
    }
}

/// A speed of `family` in its unit (GB/s, or ns per load), one decimal; nothing where
/// there is none.
fn in_unit(family: Family, gbps: Option<f64>) -> String {
    number(gbps.map(|gbps| results::in_unit(family, gbps)), 1)
}

/// Why a device has no bandwidth for the case, where its row says.
fn absent_note<'a>(line: &Line<'a>, device: usize) -> &'a str {
    line.cells[device]
        .map(|row| row.note.as_str())
        .unwrap_or_default()
}

/// An SVG document as an element to inline: without an XML declaration, if any.
fn svg_body(svg: &str) -> &str {
    svg.find("<svg").map_or(svg, |start| &svg[start..])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::{Row, SCHEMA_VERSION};
    use crate::suite::Setting;

    #[test]
    fn a_claim_is_flagged_where_the_settings_of_one_device_disagree() {
        let device = |name: &str, setting: Setting| DeviceResults {
            path: "gpu.csv".into(),
            label: name.into(),
            setting,
            rows: vec![Row {
                device: name.into(),
                ..Row::default()
            }],
        };
        let devices = [
            device("A", Setting::WGPU),
            device("A", Setting::TAX_FREE),
            device("B", Setting::WGPU),
            device("B", Setting::TAX_FREE),
        ];
        let verdicts = [
            Verdict::NotReproduced(String::new().into()),
            Verdict::Reproduced(String::new().into()),
            Verdict::Reproduced(String::new().into()),
            Verdict::NotMeasured(String::new()),
        ];
        assert_eq!(split_by_setting(&devices, &verdicts), ["A"]);
    }

    #[test]
    fn the_compute_section_names_each_devices_peak_and_ridge_point() {
        let row = |family, variant: &str, params: &str, gbps| Row {
            family,
            variant: variant.into(),
            params: params.parse().unwrap(),
            status: crate::results::Status::Ok,
            verified: true,
            gbps_median: Some(gbps),
            schema_version: SCHEMA_VERSION,
            ..Row::default()
        };
        let device = DeviceResults {
            path: "gpu.csv".into(),
            label: "GPU".into(),
            setting: crate::suite::Setting::WGPU,
            rows: vec![
                row(Family::Copy, "peak", "launch=vec4", 2000.0),
                row(Family::Compute, "f32", "rounds=1024", 200.0),
            ],
        };
        let page = build(&[device], &[]).unwrap().html;
        assert!(
            page.contains(
                "<li>GPU: compute, wgpu/default: f32 peak 51200 GFLOP/s (k=1024); ridge point \
                 25.6 flop/byte against 2000 GB/s</li>"
            ),
            "{page}"
        );
        // The roofline is drawn within the compute family's section.
        let section = &page[page.find("id=\"family-compute\"").unwrap()..];
        assert!(
            section.contains("id=\"chart-compute-roofline-gpu\""),
            "{page}"
        );
    }

    #[test]
    fn the_kernel_section_has_its_chart_and_a_table_of_its_rows() {
        let row = |family, variant: &str, params: &str, gbps| Row {
            family,
            device: "GPU".into(),
            ..crate::results::tests::row(variant, params, gbps)
        };
        let window = |kib: u64, gbps| {
            row(
                Family::Hierarchy,
                "window",
                &format!("footprint={}", kib << 10),
                gbps,
            )
        };
        let mut rows: Vec<Row> = [1, 2, 4, 8].map(|k| window(k, 20_000.0)).into();
        rows.extend([8 << 10, 16 << 10, 32 << 10].map(|k| window(k, 2000.0)));
        let device = |path: &str, rows| DeviceResults {
            path: Path::new(path).into(),
            label: format!("GPU {path}"),
            setting: crate::suite::Setting::WGPU,
            rows,
        };
        let devices = [
            device("gpu.csv", rows),
            device(
                "gpu-kernels.csv",
                vec![row(
                    Family::Kernel,
                    "saxpy",
                    "size=n:1024;footprint=8192",
                    4000.0,
                )],
            ),
        ];
        let page = build(&devices, &[]).unwrap().html;
        let section = &page[page.find("id=\"family-kernel\"").unwrap()..];
        assert!(
            section.contains("id=\"chart-kernel-levels-gpu-gpu-kernels-csv\""),
            "{section}"
        );
        // 4000 of the L1's 20000 GB/s.
        assert!(
            section.contains("<td class=\"num\">8 KiB</td><td class=\"num\">4000.0</td><td>L1</td><td class=\"num\">20</td>"),
            "{section}"
        );
    }

    #[test]
    fn the_page_escapes_what_it_reads_and_says_who_wrote_it() {
        let row = Row {
            family: Family::Copy,
            variant: "offset".into(),
            params: "offset=0".parse().unwrap(),
            status: crate::results::Status::Ok,
            verified: true,
            gbps_median: Some(1.5),
            schema_version: SCHEMA_VERSION,
            ..Row::default()
        };
        let device = DeviceResults {
            path: "a&b.csv".into(),
            label: "<i>GPU</i> \"A\"".into(),
            setting: crate::suite::Setting::WGPU,
            rows: vec![row],
        };
        let page = build(&[device], &[]).unwrap().html;
        assert!(page.contains(GENERATOR));
        assert!(
            page.contains("&lt;i&gt;GPU&lt;/i&gt; &quot;A&quot;"),
            "{page}"
        );
        assert!(page.contains("<code>a&amp;b.csv</code>"));
        assert!(!page.contains("<i>GPU"));
        assert!(page.starts_with("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n"));
        assert!(page.ends_with("</body>\n</html>\n"));
    }
}
