//! `membench report`: a static HTML page of several devices' results — the devices,
//! the claims checklist, one or more charts per family and the full comparison
//! tables — and each chart again as a standalone SVG file.
//!
//! The page needs no network and no scripts: the charts are inline SVG, the style is
//! inline CSS. It is a `maud` template, so every text is escaped where it is written.
//! Everything is built in memory first, so bad input writes nothing.

pub mod charts;
pub mod claims;
pub mod compare;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use maud::{DOCTYPE, Markup, PreEscaped, html};

use crate::error::{Error, Result};
use crate::results::Status;
use crate::suite::REGISTRY;
use claims::{CLAIMS, Cases, Claim, Kind, Source, Verdict};
use compare::{DeviceResults, Line, number};

/// Marks a page as written by this command: only such a directory's old charts are
/// removed when the report is written again.
const GENERATOR: &str = r#"<meta name="generator" content="membench report">"#;

/// The page's style sheet.
const STYLE: &str = r#"
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2em auto; max-width: 1180px; padding: 0 1em; color: #1a1a1a; line-height: 1.45; }
h1 { margin-bottom: 0.2em; }
h2 { border-bottom: 1px solid #ccc; padding-bottom: 0.2em; margin-top: 2em; }
nav { margin: 1em 0; }
code { font-size: 0.92em; }
table { border-collapse: collapse; margin: 0.8em 0; font-size: 0.92em; }
th, td { border: 1px solid #d0d0d0; padding: 0.3em 0.55em; vertical-align: top; text-align: left; }
th { background: #f4f4f4; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.absent { color: #888; text-align: right; }
.claims td.rule { font-size: 0.95em; color: #333; }
.verdict { min-width: 11em; }
.verdict .mark { font-weight: 600; white-space: nowrap; }
.verdict.yes { background: #e3f4e6; }
.verdict.no { background: #fbe3e4; }
.verdict.na { background: #f3f3f3; color: #666; }
.detail { font-size: 0.85em; color: #444; margin-top: 0.2em; overflow-wrap: anywhere; }
.model { font-size: 0.85em; margin-top: 0.3em; color: #333; }
.split { font-size: 0.85em; color: #8a4b00; white-space: nowrap; }
figure { margin: 1.2em 0; }
figure svg { max-width: 100%; height: auto; border: 1px solid #e4e4e4; }
figcaption { font-size: 0.9em; color: #444; }
details { margin: 1em 0; }
summary { cursor: pointer; font-weight: 600; }
"#;

/// The page and its charts, not yet written.
pub struct Report {
    pub html: String,
    pub charts: Vec<charts::Chart>,
}

/// Every `*.csv` directly in `dir`, by name: the default input of `membench report`.
pub fn default_inputs(dir: &Path) -> Result<Vec<PathBuf>> {
    let io = |source| Error::Io {
        path: dir.to_owned(),
        source,
    };
    let mut paths = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(io)? {
        let path = entry.map_err(io)?.path();
        if path.extension().is_some_and(|e| e == "csv") && path.is_file() {
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

/// Builds the page and its charts for `devices` (in the order given; ratios are to
/// the first).
pub fn build(devices: &[DeviceResults]) -> Result<Report> {
    let lines = compare::join(devices);
    let charts = charts::charts(devices, &lines)?;
    let mut families: Vec<&str> = Vec::new();
    for line in &lines {
        if !families.contains(&line.family) {
            families.push(line.family);
        }
    }
    let page = Page {
        devices,
        lines: &lines,
        charts: &charts,
        families: &families,
    };
    Ok(Report {
        html: page.render().into_string(),
        charts,
    })
}

/// Writes `index.html` and every chart into `dir`, each file atomically. Charts an
/// earlier report left there and this one no longer has are removed.
pub fn write(report: &Report, dir: &Path) -> Result<()> {
    let io = |path: &Path| {
        let path = path.to_owned();
        move |source| Error::Io { path, source }
    };
    std::fs::create_dir_all(dir).map_err(io(dir))?;
    let index = dir.join("index.html");
    let ours = std::fs::read_to_string(&index).is_ok_and(|text| text.contains(GENERATOR));
    if ours {
        let keep: BTreeSet<&str> = report.charts.iter().map(|c| c.file.as_str()).collect();
        for entry in std::fs::read_dir(dir).map_err(io(dir))? {
            let path = entry.map_err(io(dir))?.path();
            let name = path
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or_default();
            if path.extension().is_some_and(|e| e == "svg") && !keep.contains(name) {
                std::fs::remove_file(&path).map_err(io(&path))?;
            }
        }
    }
    for chart in &report.charts {
        write_atomically(&dir.join(&chart.file), chart.svg.as_bytes())?;
    }
    write_atomically(&index, report.html.as_bytes())
}

fn write_atomically(path: &Path, bytes: &[u8]) -> Result<()> {
    let temporary = path.with_extension("tmp");
    let io = |source| Error::Io {
        path: path.to_owned(),
        source,
    };
    std::fs::write(&temporary, bytes).map_err(io)?;
    std::fs::rename(&temporary, path).map_err(io)
}

/// What the page is drawn from.
struct Page<'p> {
    devices: &'p [DeviceResults],
    lines: &'p [Line<'p>],
    charts: &'p [charts::Chart],
    /// The families of `lines`, in case order.
    families: &'p [&'p str],
}

// The templates write a line break after each block, so that the page reads (and
// diffs) a block a line.
impl Page<'_> {
    fn render(&self) -> Markup {
        html! {
            (DOCTYPE) "\n"
            html lang="en" {
                "\n" (head()) "\n"
                body {
                    "\n"
                    h1 { "membench report" } "\n"
                    (introduction(self.devices)) "\n"
                    (contents(self.families)) "\n"
                    (device_table(self.devices))
                    (claims_table(self.devices, self.families))
                    (tax_section(self.devices, self.lines))
                    @for family in self.families {
                        (self.family_section(family))
                    }
                }
                "\n"
            }
            "\n"
        }
    }

    /// A family's experiments, its charts and all its cases.
    fn family_section(&self, family: &str) -> Markup {
        let experiments: Vec<_> = REGISTRY
            .iter()
            .filter(|e| e.family.as_str() == family)
            .collect();
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
            @for chart in self.charts.iter().filter(|c| c.family == family) {
                figure {
                    "\n" (PreEscaped(svg_body(&chart.svg))) "\n"
                    figcaption {
                        (chart.title) " — standalone: " a href=(chart.file) { (chart.file) }
                    }
                    "\n"
                }
                "\n"
            }
            (case_table(family, self.devices, &lines))
        }
    }
}

fn head() -> Markup {
    html! {
        head {
            "\n"
            meta charset="utf-8"; "\n"
            (PreEscaped(GENERATOR)) "\n"
            meta name="viewport" content="width=device-width, initial-scale=1"; "\n"
            title { "membench report" } "\n"
            style { (PreEscaped(STYLE)) } "\n"
        }
    }
}

fn introduction(devices: &[DeviceResults]) -> Markup {
    html! {
        p {
            "Effective bandwidth in GB/s (10" sup { "9" } " bytes per second: bytes the kernel \
             must read plus bytes it must write, over the median time) of " (devices.len())
            " device" @if devices.len() != 1 { "s" } ", beside the simulator's prediction. \
             Ratios are to the first device. Written by " code { "membench report" } " from "
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

/// Per device measured in several settings, every GPU-clock case in each, with the
/// ratios to the setting closest to the hardware.
fn tax_section(devices: &[DeviceResults], lines: &[Line<'_>]) -> Markup {
    let taxes = compare::taxes(devices, lines);
    html! {
        @if !taxes.is_empty() {
            h2 id="tax" { "The toolchain's tax" } "\n"
            p {
                "The same kernels in each api and build a device was measured with: "
                b { "default" } " is what a plain wgpu program gets (naga's barrier scopes, \
                 wgpu's runtime checks), " b { "tax-free" } " has the checks off and every \
                 barrier at the memory scope the WGSL spec defines, " b { "cuda" } " is the \
                 kernel's CUDA C twin. A ratio below 1 is what the toolchain costs; the claims \
                 above are decided per column, and flagged where the columns disagree."
            }
            "\n"
            @for tax in &taxes {
                @let setting = |c: usize| devices[c].setting.to_string();
                h3 { (tax.device) } "\n"
                details {
                    summary {
                        (tax.lines.len()) " cases, GB/s per api/build and the ratio to "
                        (setting(tax.reference))
                    }
                    "\n"
                    table {
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
                                td { (line.family) } td { (line.variant) } td { code { (line.param) } }
                                @for &column in &tax.columns {
                                    td class="num" { (number(line.gbps(column), 1)) }
                                }
                                @for column in tax.ratio_columns() {
                                    td class="num" { (number(compare::tax_ratio(tax, line, column), 2)) }
                                }
                            }
                            "\n"
                        }
                    }
                    "\n"
                }
                "\n"
            }
        }
    }
}

fn contents(families: &[&str]) -> Markup {
    html! {
        nav {
            "Contents: " a href="#devices" { "devices" } " · " a href="#claims" { "claims" }
            " · " a href="#tax" { "toolchain tax" }
            @for family in families {
                " · " a href={ "#family-" (family) } { (family) }
            }
        }
    }
}

fn device_table(devices: &[DeviceResults]) -> Markup {
    html! {
        h2 id="devices" { "Devices" } "\n"
        table {
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
        }
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

fn claims_table(devices: &[DeviceResults], families: &[&str]) -> Markup {
    html! {
        h2 id="claims" { "Claims checklist" } "\n"
        p {
            "Each claim of the classic texts, decided per device by the rule beside it: "
            b { "✓ reproduced" } ", " b { "✗ not reproduced" } ", or " b { "– not measured" }
            " (a row the rule needs is absent, skipped or failed). " i { "model" } " is the same \
             rule applied to the simulator's predictions: whether the memory model expects the \
             claim too. Rules live in " code { "src/report/claims/" } ", a file per family."
        }
        "\n"
        table class="claims" {
            "\n"
            tr {
                th { "family" } th { "claim" } th { "rule" }
                @for device in devices {
                    th { (device.label) }
                }
            }
            "\n"
            @for family in families {
                @for claim in CLAIMS.iter().filter(|c| c.family.as_str() == *family) {
                    (claim_row(claim, devices)) "\n"
                }
            }
        }
        "\n"
        (absent_claims(families))
    }
}

/// The claims of families no file has: their words only, folded away.
fn absent_claims(families: &[&str]) -> Markup {
    let absent: Vec<&Claim> = CLAIMS
        .iter()
        .filter(|c| !families.contains(&c.family.as_str()))
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
                table class="claims" {
                    "\n"
                    tr { th { "family" } th { "claim" } th { "rule" } } "\n"
                    @for claim in absent {
                        tr id={ "claim-" (claim.id) } { (claim_words(claim)) } "\n"
                    }
                }
                "\n"
            }
            "\n"
        }
    }
}

/// A claim's family, words and rule, as the first cells of its row.
fn claim_words(claim: &Claim) -> Markup {
    html! {
        td { (claim.family) }
        td { (claim.claim) }
        td class="rule" { (claim.rule) }
    }
}

/// One claim's row: its words, then each device's verdict and the model's; flagged
/// where one device's settings disagree (the toolchain, not the hardware, decides).
fn claim_row(claim: &Claim, devices: &[DeviceResults]) -> Markup {
    let verdicts: Vec<Verdict> = devices
        .iter()
        .map(|device| claim.decide(&Cases::new(&device.rows, Source::Measured)))
        .collect();
    let split = split_by_setting(devices, &verdicts);
    html! {
        tr id={ "claim-" (claim.id) } {
            (claim_words(claim))
            @for (device, verdict) in devices.iter().zip(&verdicts) {
                (verdict_cell(claim, device, verdict, split.contains(&device_name(device))))
            }
        }
    }
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

/// A device's verdict on a claim and, for a bandwidth rule, the model's; `split`
/// where another setting of the device decides the other way.
fn verdict_cell(claim: &Claim, device: &DeviceResults, measured: &Verdict, split: bool) -> Markup {
    let (mark, class) = verdict_mark(measured);
    let predicted = (claim.kind == Kind::Bandwidth)
        .then(|| claim.decide(&Cases::new(&device.rows, Source::Predicted)));
    html! {
        td class={ "verdict " (class) } {
            span class="mark" { (mark) " " (measured.label()) }
            @if split {
                " " span class="split" title="another api/build of this device decides the other way: the toolchain, not the memory system, decides this claim here" { "⚑ depends on the build" }
            }
            div class="detail" { (measured.detail()) }
            @if let Some(predicted) = predicted {
                div class="model" title=(predicted.detail()) {
                    "model: " (verdict_mark(&predicted).0) " " (predicted.label())
                }
            }
        }
    }
}

/// Every case of a family, folded away: each device's GB/s, ratio to the first and
/// prediction.
fn case_table(family: &str, devices: &[DeviceResults], lines: &[&Line<'_>]) -> Markup {
    html! {
        details {
            summary { "All " (lines.len()) " " (family) " cases" } "\n"
            table {
                "\n"
                tr {
                    th { "variant" } th { "param" }
                    @for (index, device) in devices.iter().enumerate() {
                        th { (device.label) br; "GB/s" }
                        @if index > 0 {
                            th { (device.label) br; "÷ first" }
                        }
                        th { (device.label) br; "predicted GB/s" }
                    }
                }
                "\n"
                @for line in lines {
                    (case_row(line, devices.len())) "\n"
                }
            }
            "\n"
        }
        "\n"
    }
}

fn case_row(line: &Line<'_>, device_count: usize) -> Markup {
    html! {
        tr {
            td { (line.variant) }
            td { code { (line.param) } }
            @for index in 0..device_count {
                @match line.gbps(index) {
                    Some(gbps) => td class="num" { (format!("{gbps:.1}")) },
                    None => td class="absent" title=(absent_note(line, index)) {
                        (line.status(index))
                    },
                }
                @if index > 0 {
                    td class="num" { (number(line.ratio(index), 3)) }
                }
                td class="num" { (number(line.sim_gbps(index), 1)) }
            }
        }
    }
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
            Verdict::NotReproduced(String::new()),
            Verdict::Reproduced(String::new()),
            Verdict::Reproduced(String::new()),
            Verdict::NotMeasured(String::new()),
        ];
        assert_eq!(split_by_setting(&devices, &verdicts), ["A"]);
    }

    #[test]
    fn the_page_escapes_what_it_reads_and_says_who_wrote_it() {
        let row = Row {
            family: "copy".into(),
            variant: "offset".into(),
            param: "offset=0".into(),
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
        let page = build(&[device]).unwrap().html;
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
