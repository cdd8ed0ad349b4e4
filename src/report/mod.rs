//! `membench report`: a static HTML page of several devices' results — the devices,
//! the claims checklist, one or more charts per family and the full comparison
//! tables — and each chart again as a standalone SVG file.
//!
//! The page needs no network and no scripts: the charts are inline SVG, the style is
//! inline CSS. Everything is built in memory first, so bad input writes nothing.

pub mod charts;
pub mod claims;
pub mod compare;

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::results::Status;
use crate::suite::REGISTRY;
use claims::{CLAIMS, Cases, Kind, Source, Verdict};
use compare::{DeviceResults, Line};

/// Marks a page as written by this command: only such a directory's old charts are
/// removed when the report is written again.
const GENERATOR: &str = r#"<meta name="generator" content="membench report">"#;

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

    let mut html = String::new();
    html.push_str(&head());
    html.push_str("<h1>membench report</h1>\n");
    let _ = writeln!(
        html,
        "<p>Effective bandwidth in GB/s (10<sup>9</sup> bytes per second: bytes the kernel \
         must read plus bytes it must write, over the median time) of {} device{}, beside the \
         simulator's prediction. Ratios are to the first device. Written by <code>membench \
         report</code> from {}.</p>",
        devices.len(),
        if devices.len() == 1 { "" } else { "s" },
        devices
            .iter()
            .map(|d| format!("<code>{}</code>", escape(&d.path.display().to_string())))
            .collect::<Vec<_>>()
            .join(", ")
    );
    html.push_str(
        "<nav>Contents: <a href=\"#devices\">devices</a> · <a href=\"#claims\">claims</a>",
    );
    for family in &families {
        let _ = write!(html, " · <a href=\"#family-{0}\">{0}</a>", escape(family));
    }
    html.push_str("</nav>\n");
    html.push_str(&device_table(devices));
    html.push_str(&claims_table(devices, &families));
    for family in &families {
        html.push_str(&family_section(family, devices, &lines, &charts));
    }
    html.push_str("</body>\n</html>\n");
    Ok(Report { html, charts })
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

/// `<`, `>`, `&` and quotes as entities.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

fn head() -> String {
    format!(
        r#"<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
{GENERATOR}
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>membench report</title>
<style>
body {{ font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2em auto; max-width: 1180px; padding: 0 1em; color: #1a1a1a; line-height: 1.45; }}
h1 {{ margin-bottom: 0.2em; }}
h2 {{ border-bottom: 1px solid #ccc; padding-bottom: 0.2em; margin-top: 2em; }}
nav {{ margin: 1em 0; }}
code {{ font-size: 0.92em; }}
table {{ border-collapse: collapse; margin: 0.8em 0; font-size: 0.92em; }}
th, td {{ border: 1px solid #d0d0d0; padding: 0.3em 0.55em; vertical-align: top; text-align: left; }}
th {{ background: #f4f4f4; }}
td.num {{ text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }}
td.absent {{ color: #888; text-align: right; }}
.claims td.rule {{ font-size: 0.95em; color: #333; }}
.verdict {{ min-width: 11em; }}
.verdict .mark {{ font-weight: 600; white-space: nowrap; }}
.verdict.yes {{ background: #e3f4e6; }}
.verdict.no {{ background: #fbe3e4; }}
.verdict.na {{ background: #f3f3f3; color: #666; }}
.detail {{ font-size: 0.85em; color: #444; margin-top: 0.2em; overflow-wrap: anywhere; }}
.model {{ font-size: 0.85em; margin-top: 0.3em; color: #333; }}
figure {{ margin: 1.2em 0; }}
figure svg {{ max-width: 100%; height: auto; border: 1px solid #e4e4e4; }}
figcaption {{ font-size: 0.9em; color: #444; }}
details {{ margin: 1em 0; }}
summary {{ cursor: pointer; font-weight: 600; }}
</style>
</head>
<body>
"#
    )
}

fn device_table(devices: &[DeviceResults]) -> String {
    let mut html = String::from(
        "<h2 id=\"devices\">Devices</h2>\n<table>\n<tr><th>#</th><th>device</th><th>vendor</th>\
         <th>backend</th><th>driver</th><th>subgroup size</th><th>bounds checks</th>\
         <th>cases ok / failed / skipped</th><th>run</th><th>file</th></tr>\n",
    );
    for (index, device) in devices.iter().enumerate() {
        let count = |status| device.rows.iter().filter(|r| r.status == status).count();
        let Some(row) = device.metadata() else {
            continue;
        };
        let _ = writeln!(
            html,
            "<tr><td>{}</td><td><b>{}</b></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>\
             <td>{}</td><td class=\"num\">{} / {} / {}</td><td>{}, membench {} ({})</td>\
             <td><code>{}</code></td></tr>",
            index + 1,
            escape(&device.label),
            escape(&row.vendor),
            escape(&row.backend),
            escape(&row.driver),
            escape(&row.subgroup_size),
            escape(&row.bounds_checks),
            count(Status::Ok),
            count(Status::Failed),
            count(Status::Skipped),
            escape(&row.timestamp_utc),
            escape(&row.membench_version),
            escape(&row.git_commit),
            escape(&device.path.display().to_string()),
        );
    }
    html.push_str("</table>\n");
    html
}

/// The mark, class and words of a verdict.
fn verdict_mark(verdict: &Verdict) -> (&'static str, &'static str) {
    match verdict {
        Verdict::Reproduced(_) => ("✓", "yes"),
        Verdict::NotReproduced(_) => ("✗", "no"),
        Verdict::NotMeasured(_) => ("–", "na"),
    }
}

fn claims_table(devices: &[DeviceResults], families: &[&str]) -> String {
    let mut html = String::from(
        "<h2 id=\"claims\">Claims checklist</h2>\n<p>Each claim of the classic texts, decided per \
         device by the rule beside it: <b>✓ reproduced</b>, <b>✗ not reproduced</b>, or \
         <b>– not measured</b> (a row the rule needs is absent, skipped or failed). \
         <i>model</i> is the same rule applied to the simulator's predictions: whether the \
         memory model expects the claim too. Rules live in <code>src/report/claims.rs</code>.</p>\n\
         <table class=\"claims\">\n<tr><th>family</th><th>claim</th><th>rule</th>",
    );
    for device in devices {
        let _ = write!(html, "<th>{}</th>", escape(&device.label));
    }
    html.push_str("</tr>\n");
    for family in families {
        for claim in CLAIMS.iter().filter(|c| c.family.as_str() == *family) {
            html.push_str(&claim_row(claim, devices));
        }
    }
    html.push_str("</table>\n");
    let absent: Vec<&claims::Claim> = CLAIMS
        .iter()
        .filter(|c| !families.contains(&c.family.as_str()))
        .collect();
    if !absent.is_empty() {
        let mut names: Vec<&str> = absent.iter().map(|c| c.family.as_str()).collect();
        names.dedup();
        let _ = write!(
            html,
            "<details><summary>{} more claims, of families no file has ({}): not \
             measured on any device</summary>\n<table class=\"claims\">\n<tr><th>family</th>\
             <th>claim</th><th>rule</th></tr>\n",
            absent.len(),
            escape(&names.join(", "))
        );
        for claim in absent {
            let _ = writeln!(
                html,
                "<tr id=\"claim-{}\"><td>{}</td><td>{}</td><td class=\"rule\">{}</td></tr>",
                claim.id,
                escape(claim.family.as_str()),
                escape(claim.claim),
                escape(claim.rule)
            );
        }
        html.push_str("</table>\n</details>\n");
    }
    html
}

/// One claim's row: its words, then each device's verdict and the model's.
fn claim_row(claim: &claims::Claim, devices: &[DeviceResults]) -> String {
    let mut html = format!(
        "<tr id=\"claim-{}\"><td>{}</td><td>{}</td><td class=\"rule\">{}</td>",
        claim.id,
        escape(claim.family.as_str()),
        escape(claim.claim),
        escape(claim.rule)
    );
    for device in devices {
        let measured = claim.decide(&Cases::new(&device.rows, Source::Measured));
        let (mark, class) = verdict_mark(&measured);
        let _ = write!(
            html,
            "<td class=\"verdict {class}\"><span class=\"mark\">{mark} {}</span>\
             <div class=\"detail\">{}</div>",
            measured.label(),
            escape(measured.detail())
        );
        if claim.kind == Kind::Bandwidth {
            let predicted = claim.decide(&Cases::new(&device.rows, Source::Predicted));
            let (mark, _) = verdict_mark(&predicted);
            let _ = write!(
                html,
                "<div class=\"model\" title=\"{}\">model: {mark} {}</div>",
                escape(predicted.detail()),
                predicted.label()
            );
        }
        html.push_str("</td>");
    }
    html.push_str("</tr>\n");
    html
}

fn family_section(
    family: &str,
    devices: &[DeviceResults],
    lines: &[Line<'_>],
    charts: &[charts::Chart],
) -> String {
    let mut html = format!("<h2 id=\"family-{0}\">{0}</h2>\n", escape(family));
    let experiments: Vec<_> = REGISTRY
        .iter()
        .filter(|e| e.family.as_str() == family)
        .collect();
    if !experiments.is_empty() {
        html.push_str("<ul>\n");
        for experiment in experiments {
            let _ = writeln!(
                html,
                "<li><code>{}</code>: {}</li>",
                escape(&experiment.name()),
                escape(&claims::summary(experiment))
            );
        }
        html.push_str("</ul>\n");
    }
    for chart in charts.iter().filter(|c| c.family == family) {
        let _ = writeln!(
            html,
            "<figure>\n{}\n<figcaption>{} — standalone: <a href=\"{}\">{}</a></figcaption>\n</figure>",
            svg_body(&chart.svg),
            escape(&chart.title),
            escape(&chart.file),
            escape(&chart.file)
        );
    }
    let family_lines: Vec<&Line<'_>> = lines.iter().filter(|l| l.family == family).collect();
    let _ = write!(
        html,
        "<details><summary>All {} {} cases</summary>\n<table>\n<tr><th>variant</th><th>param</th>",
        family_lines.len(),
        escape(family)
    );
    for (index, device) in devices.iter().enumerate() {
        let label = escape(&device.label);
        let _ = write!(html, "<th>{label}<br>GB/s</th>");
        if index > 0 {
            let _ = write!(html, "<th>{label}<br>÷ first</th>");
        }
        let _ = write!(html, "<th>{label}<br>predicted GB/s</th>");
    }
    html.push_str("</tr>\n");
    for line in family_lines {
        let _ = write!(
            html,
            "<tr><td>{}</td><td><code>{}</code></td>",
            escape(line.variant),
            escape(line.param)
        );
        for index in 0..devices.len() {
            match line.gbps(index) {
                Some(gbps) => {
                    let _ = write!(html, "<td class=\"num\">{gbps:.1}</td>");
                }
                None => {
                    let note = line.cells[index]
                        .map(|row| row.note.as_str())
                        .unwrap_or_default();
                    let _ = write!(
                        html,
                        "<td class=\"absent\" title=\"{}\">{}</td>",
                        escape(note),
                        escape(line.status(index))
                    );
                }
            }
            if index > 0 {
                let ratio = line
                    .ratio(index)
                    .map_or(String::new(), |r| format!("{r:.3}"));
                let _ = write!(html, "<td class=\"num\">{ratio}</td>");
            }
            let sim = line
                .sim_gbps(index)
                .map_or(String::new(), |s| format!("{s:.1}"));
            let _ = write!(html, "<td class=\"num\">{sim}</td>");
        }
        html.push_str("</tr>\n");
    }
    html.push_str("</table>\n</details>\n");
    html
}

/// An SVG document as an element to inline: without an XML declaration, if any.
fn svg_body(svg: &str) -> &str {
    svg.find("<svg").map_or(svg, |start| &svg[start..])
}
