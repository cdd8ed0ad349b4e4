//! A fleet in each format: the outliers first (or a line saying there are none), then
//! per group and case the median and MAD. CSV holds one row per GPU per case; JSON
//! holds those rows, the GPUs, the cases and the counts. Tables and Markdown show the
//! first outlier cases; CSV and JSON hold every one.

use std::io::Write;
use std::path::{Path, PathBuf};

use comfy_table::{CellAlignment, Table, TableStyle};
use serde::Serialize;
use serde::ser::Serializer;

use super::{Case, Cell, Fleet, Group, MAD_SCALE, MIN_MEMBERS, Member, SIGMAS, Tally};
use crate::error::{Error, Result};
use crate::plural;
use crate::results::{Format, markdown_table};

/// The outlier cases a table or Markdown shows; CSV and JSON hold every one.
const SHOWN_CASES: usize = 50;

/// The GPUs with outliers a table or Markdown shows.
const SHOWN_GPUS: usize = 100;

/// The skipped inputs a table or Markdown names.
const SHOWN_SKIPPED: usize = 5;

/// `fleet` in `format`.
pub fn render(fleet: &Fleet, format: Format) -> Result<String> {
    let mut out = Vec::new();
    write(fleet, format, &mut out)?;
    String::from_utf8(out).map_err(|e| failed(e.to_string()))
}

/// `fleet` in `format`, into `out` (a CSV of a large fleet is hundreds of megabytes:
/// written as it is made).
pub fn write(fleet: &Fleet, format: Format, out: &mut dyn Write) -> Result<()> {
    // Its writer is stdout: a closed pipe ends the command quietly.
    let io = Error::Stdout;
    match format {
        Format::Table | Format::Markdown => {
            let markdown = format == Format::Markdown;
            out.write_all(text(fleet, markdown).as_bytes()).map_err(io)
        }
        Format::Csv => {
            let texts = Texts::of(fleet);
            let mut writer = csv::Writer::from_writer(out);
            for record in cell_records(fleet, &texts) {
                writer
                    .serialize(record)
                    .map_err(|e| failed(e.to_string()))?;
            }
            writer.flush().map_err(io)
        }
        Format::Jsonl => {
            let texts = Texts::of(fleet);
            for record in cell_records(fleet, &texts) {
                serde_json::to_writer(&mut *out, &record).map_err(|e| failed(e.to_string()))?;
                out.write_all(b"\n").map_err(io)?;
            }
            Ok(())
        }
        Format::Json => {
            let texts = Texts::of(fleet);
            let document = Document {
                summary: Summary::of(fleet),
                skipped: fleet
                    .skipped
                    .iter()
                    .map(|s| SkippedRecord {
                        file: super::shown(&s.path),
                        why: &s.why,
                    })
                    .collect(),
                gpus: fleet
                    .members
                    .iter()
                    .enumerate()
                    .map(|(index, member)| gpu_record(fleet, &texts, index, member))
                    .collect(),
                cases: Lazy(|| case_records(fleet, &texts)),
                rows: Lazy(|| cell_records(fleet, &texts)),
            };
            serde_json::to_writer_pretty(&mut *out, &document)
                .map_err(|e| failed(e.to_string()))?;
            out.write_all(b"\n").map_err(io)
        }
    }
}

fn failed(message: String) -> Error {
    Error::Results {
        path: PathBuf::from("<stdout>"),
        message,
    }
}

/// The texts rows repeat, made once: per group its setting and sizing, per GPU its
/// file, per case its parameters.
struct Texts {
    settings: Vec<String>,
    sizings: Vec<String>,
    files: Vec<String>,
    params: Vec<Vec<String>>,
}

impl Texts {
    fn of(fleet: &Fleet) -> Self {
        Texts {
            settings: fleet.groups.iter().map(|g| g.setting.to_string()).collect(),
            sizings: fleet
                .groups
                .iter()
                .map(|g| super::sizing_text(g.sizing))
                .collect(),
            files: fleet
                .members
                .iter()
                .map(|m| super::shown(&m.file))
                .collect(),
            params: fleet
                .groups
                .iter()
                .map(|g| g.cases.iter().map(|c| c.id.params.to_string()).collect())
                .collect(),
        }
    }
}

/// A sequence serialized as it is made.
struct Lazy<F>(F);

impl<F, I> Serialize for Lazy<F>
where
    F: Fn() -> I,
    I: Iterator,
    I::Item: Serialize,
{
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        serializer.collect_seq((self.0)())
    }
}

/// The JSON document.
#[derive(Serialize)]
#[serde(bound(serialize = "Lazy<C>: Serialize, Lazy<R>: Serialize"))]
struct Document<'a, C, R> {
    summary: Summary,
    skipped: Vec<SkippedRecord<'a>>,
    gpus: Vec<GpuRecord<'a>>,
    cases: Lazy<C>,
    rows: Lazy<R>,
}

/// The counts and the rule, JSON's `summary`.
#[derive(Serialize)]
struct Summary {
    passes: bool,
    files: usize,
    skipped_files: usize,
    gpus: usize,
    models: usize,
    groups: usize,
    unjudged_gpus: usize,
    outlier_gpus: usize,
    outliers: usize,
    faster: usize,
    threshold: f64,
    z_limit: f64,
    mad_scale: f64,
    min_gpus: usize,
}

impl Summary {
    fn of(fleet: &Fleet) -> Self {
        let tally = fleet.tally();
        Summary {
            passes: tally.passes(),
            files: tally.files,
            skipped_files: tally.skipped_files,
            gpus: tally.gpus,
            models: tally.models,
            groups: tally.groups,
            unjudged_gpus: tally.unjudged_gpus,
            outlier_gpus: tally.outlier_gpus,
            outliers: tally.outliers,
            faster: tally.faster,
            threshold: fleet.threshold,
            z_limit: SIGMAS,
            mad_scale: MAD_SCALE,
            min_gpus: MIN_MEMBERS,
        }
    }
}

#[derive(Serialize)]
struct SkippedRecord<'a> {
    file: String,
    why: &'a str,
}

/// One GPU in one group, JSON's `gpus`.
#[derive(Serialize)]
struct GpuRecord<'a> {
    device: &'a str,
    backend: &'a str,
    setting: &'a str,
    sizing: &'a str,
    gpu: &'a str,
    host: &'a str,
    gpu_uuid: &'a str,
    pci_bus_id: &'a str,
    file: &'a str,
    outliers: usize,
    slower: usize,
    missing: usize,
    failed: usize,
    faster: usize,
    worst_case: Option<String>,
    worst_distance: Option<f64>,
}

fn gpu_record<'a>(
    fleet: &'a Fleet,
    texts: &'a Texts,
    index: usize,
    member: &'a Member,
) -> GpuRecord<'a> {
    let group = &fleet.groups[member.group];
    GpuRecord {
        device: &group.device,
        backend: &group.backend,
        setting: &texts.settings[member.group],
        sizing: &texts.sizings[member.group],
        gpu: &member.gpu,
        host: &member.host,
        gpu_uuid: &member.gpu_uuid,
        pci_bus_id: &member.pci_bus_id,
        file: &texts.files[index],
        outliers: member.outliers(),
        slower: member.slower,
        missing: member.missing,
        failed: member.failed,
        faster: member.faster,
        worst_case: member
            .worst
            .map(|(case, _)| group.cases[case].id.to_string()),
        worst_distance: member.worst.map(|(_, distance)| distance),
    }
}

/// One case of one group, JSON's `cases`.
#[derive(Serialize)]
struct CaseRecord<'a> {
    device: &'a str,
    backend: &'a str,
    setting: &'a str,
    sizing: &'a str,
    family: &'static str,
    variant: &'a str,
    param: &'a str,
    gpus: usize,
    measured: usize,
    median_gbps: Option<f64>,
    mad_gbps: Option<f64>,
    sigma: Option<f64>,
    outliers: usize,
}

fn case_records<'a>(fleet: &'a Fleet, texts: &'a Texts) -> impl Iterator<Item = CaseRecord<'a>> {
    fleet.groups.iter().enumerate().flat_map(move |(g, group)| {
        group
            .cases
            .iter()
            .enumerate()
            .map(move |(c, case)| CaseRecord {
                device: &group.device,
                backend: &group.backend,
                setting: &texts.settings[g],
                sizing: &texts.sizings[g],
                family: case.id.family.as_str(),
                variant: &case.id.variant,
                param: &texts.params[g][c],
                gpus: group.members.len(),
                measured: case.measured,
                median_gbps: case.median_gbps,
                mad_gbps: case.mad_gbps,
                sigma: case.sigma(),
                outliers: case.outliers(),
            })
    })
}

/// One GPU in one case: CSV's rows, JSON's `rows`.
#[derive(Serialize)]
struct CellRecord<'a> {
    device: &'a str,
    backend: &'a str,
    setting: &'a str,
    sizing: &'a str,
    gpu: &'a str,
    host: &'a str,
    gpu_uuid: &'a str,
    pci_bus_id: &'a str,
    file: &'a str,
    family: &'static str,
    variant: &'a str,
    param: &'a str,
    status: &'static str,
    gbps: Option<f64>,
    median_gbps: Option<f64>,
    mad_gbps: Option<f64>,
    measured: usize,
    distance: Option<f64>,
    z: Option<f64>,
    verdict: &'static str,
    outlier: bool,
}

fn cell_records<'a>(fleet: &'a Fleet, texts: &'a Texts) -> impl Iterator<Item = CellRecord<'a>> {
    fleet.groups.iter().enumerate().flat_map(move |(g, group)| {
        group.cases.iter().enumerate().flat_map(move |(c, case)| {
            group
                .members
                .iter()
                .zip(&case.cells)
                .map(move |(&m, cell)| {
                    let member = &fleet.members[m];
                    CellRecord {
                        device: &group.device,
                        backend: &group.backend,
                        setting: &texts.settings[g],
                        sizing: &texts.sizings[g],
                        gpu: &member.gpu,
                        host: &member.host,
                        gpu_uuid: &member.gpu_uuid,
                        pci_bus_id: &member.pci_bus_id,
                        file: &texts.files[m],
                        family: case.id.family.as_str(),
                        variant: &case.id.variant,
                        param: &texts.params[g][c],
                        status: cell.status.map_or("missing", |s| s.as_str()),
                        gbps: cell.gbps,
                        median_gbps: case.median_gbps,
                        mad_gbps: case.mad_gbps,
                        measured: case.measured,
                        distance: cell.distance,
                        z: cell.z,
                        verdict: cell.standing.as_str(),
                        outlier: cell.standing.is_outlier(),
                    }
                })
        })
    })
}

/// The table or Markdown text: the verdict, the skipped inputs, the GPUs with outliers
/// and their cases, then per group the cases' medians.
fn text(fleet: &Fleet, markdown: bool) -> String {
    let tally = fleet.tally();
    let mut out = String::new();
    let heading = |out: &mut String, title: &str| {
        if markdown {
            out.push_str(&format!("\n## {title}\n\n"));
        } else {
            out.push_str(&format!("\n{title}:\n"));
        }
    };
    if markdown {
        out.push_str("# membench fleet\n\n");
    }
    out.push_str(&format!("{}\n", introduction(fleet, &tally)));
    if !fleet.skipped.is_empty() {
        out.push_str(&format!(
            "\n{} input{} skipped:\n",
            fleet.skipped.len(),
            plural(fleet.skipped.len())
        ));
        for skipped in fleet.skipped.iter().take(SHOWN_SKIPPED) {
            let line = format!("{}: {}", super::shown(&skipped.path), skipped.why);
            out.push_str(&format!("{}{line}\n", if markdown { "- " } else { "  " }));
        }
        if fleet.skipped.len() > SHOWN_SKIPPED {
            out.push_str(&format!(
                "{}and {} more\n",
                if markdown { "- " } else { "  " },
                fleet.skipped.len() - SHOWN_SKIPPED
            ));
        }
    }
    out.push('\n');
    out.push_str(&conclusion(&tally));
    let table = |header: &[&str], rows: Vec<Vec<String>>, left: usize| {
        if markdown {
            markdown_table(header, &rows, left)
        } else {
            aligned(header, rows, left) + "\n"
        }
    };
    let gpus = outlier_gpus(fleet);
    if !gpus.is_empty() {
        heading(&mut out, "GPUs with outliers");
        out.push_str(&table(&GPU_HEADER, gpu_rows(fleet, &gpus), 5));
        out.push_str(&more(gpus.len(), SHOWN_GPUS, "GPUs"));
    }
    let cases = notable_cells(fleet);
    if !cases.is_empty() {
        heading(
            &mut out,
            "Cases beyond the threshold (outliers first, then faster GPUs)",
        );
        out.push_str(&table(&CASE_HEADER, case_rows(fleet, &cases), 9));
        out.push_str(&more(cases.len(), SHOWN_CASES, "cases"));
    }
    for (number, group) in fleet.groups.iter().enumerate() {
        let title = format!(
            "Group {}: {}, {} GPU{}",
            number + 1,
            group.label(),
            group.members.len(),
            plural(group.members.len())
        );
        heading(&mut out, &title);
        if group.judged() {
            out.push_str(&table(&MEDIAN_HEADER, median_rows(group), 3));
        } else {
            out.push_str(&format!(
                "too few GPUs to judge: {MIN_MEMBERS} are needed\n"
            ));
        }
    }
    out
}

/// What was read and the rule.
pub(crate) fn introduction(fleet: &Fleet, tally: &Tally) -> String {
    format!(
        "fleet: {} file{}, {} GPU{} of {} model{} in {} group{} (model, backend, api/build, \
         sizing). An outlier is slower than its case's median by more than {} % and by more \
         than {SIGMAS} robust sigmas ({MAD_SCALE} MAD), or misses or fails a case most of \
         its group measured.",
        tally.files,
        plural(tally.files),
        tally.gpus,
        plural(tally.gpus),
        tally.models,
        plural(tally.models),
        tally.groups,
        plural(tally.groups),
        percent_text(fleet.threshold)
    )
}

/// The line that says whether the fleet passes.
pub(crate) fn conclusion(tally: &Tally) -> String {
    let mut line = if tally.passes() {
        format!(
            "no outlier among {} GPU{} of {} model{}",
            tally.gpus,
            plural(tally.gpus),
            tally.models,
            plural(tally.models)
        )
    } else {
        format!(
            "{} outlier GPU{} of {}, in {} case{}",
            tally.outlier_gpus,
            plural(tally.outlier_gpus),
            tally.gpus,
            tally.outliers,
            plural(tally.outliers)
        )
    };
    if tally.faster > 0 {
        line.push_str(&format!(
            "; {} case{} faster than the median beyond the threshold (not failures)",
            tally.faster,
            plural(tally.faster)
        ));
    }
    if tally.unjudged_gpus > 0 {
        line.push_str(&format!(
            "; {} GPU{} in groups of fewer than {MIN_MEMBERS}, not judged",
            tally.unjudged_gpus,
            plural(tally.unjudged_gpus)
        ));
    }
    line + "\n"
}

/// A fraction as a percentage: `5`, `2.5`.
fn percent_text(fraction: f64) -> String {
    let percent = fraction * 100.0;
    if (percent - percent.round()).abs() < 1e-9 {
        format!("{percent:.0}")
    } else {
        format!("{percent}")
    }
}

/// `… and N more` where a table shows the first `shown` of `total`.
fn more(total: usize, shown: usize, what: &str) -> String {
    if total > shown {
        format!(
            "… and {} more {what}: --format csv or json lists every one\n",
            total - shown
        )
    } else {
        String::new()
    }
}

const GPU_HEADER: [&str; 11] = [
    "host",
    "gpu_uuid",
    "pci_bus_id",
    "file",
    "worst case",
    "distance %",
    "group",
    "outliers",
    "slower",
    "missing",
    "failed",
];

/// The GPUs with an outlier, the most outliers first.
fn outlier_gpus(fleet: &Fleet) -> Vec<usize> {
    let mut gpus: Vec<usize> = (0..fleet.members.len())
        .filter(|&m| fleet.members[m].outliers() > 0)
        .collect();
    gpus.sort_by_key(|&m| std::cmp::Reverse(fleet.members[m].outliers()));
    gpus
}

fn gpu_rows(fleet: &Fleet, gpus: &[usize]) -> Vec<Vec<String>> {
    gpus.iter()
        .take(SHOWN_GPUS)
        .map(|&m| {
            let member = &fleet.members[m];
            let group = &fleet.groups[member.group];
            let worst = member
                .worst
                .map(|(case, distance)| (&group.cases[case].id, distance));
            let mut cells = identity(member);
            cells.extend([
                worst.map_or_else(String::new, |(id, _)| id.to_string()),
                signed(worst.map(|(_, distance)| 100.0 * distance), 1),
                (member.group + 1).to_string(),
                member.outliers().to_string(),
                member.slower.to_string(),
                member.missing.to_string(),
                member.failed.to_string(),
            ]);
            cells
        })
        .collect()
}

/// A GPU's host, UUID, bus id and file name.
fn identity(member: &Member) -> Vec<String> {
    vec![
        member.host.clone(),
        member.gpu_uuid.clone(),
        member.pci_bus_id.clone(),
        super::shown(Path::new(
            member.file.file_name().unwrap_or(member.file.as_os_str()),
        )),
    ]
}

const CASE_HEADER: [&str; 14] = [
    "host",
    "gpu_uuid",
    "pci_bus_id",
    "file",
    "family",
    "variant",
    "param",
    "status",
    "verdict",
    "group",
    "GB/s",
    "median GB/s",
    "distance %",
    "z",
];

/// Every GPU's cases beyond the threshold: (group, case, position in the group),
/// outliers first, each kind the farthest first.
fn notable_cells(fleet: &Fleet) -> Vec<(usize, usize, usize)> {
    let mut cells: Vec<(usize, usize, usize, &Cell)> = Vec::new();
    for (g, group) in fleet.groups.iter().enumerate() {
        for (c, case) in group.cases.iter().enumerate() {
            for (p, cell) in case.cells.iter().enumerate() {
                if cell.standing.is_outlier() || cell.standing == super::Standing::Faster {
                    cells.push((g, c, p, cell));
                }
            }
        }
    }
    // Missing and failed cases (no distance) first among the outliers.
    let key = |cell: &Cell| {
        (
            !cell.standing.is_outlier(),
            cell.distance.map_or(f64::NEG_INFINITY, |d| -d.abs()),
        )
    };
    cells.sort_by(|a, b| {
        let (ka, kb) = (key(a.3), key(b.3));
        ka.0.cmp(&kb.0).then(ka.1.total_cmp(&kb.1))
    });
    cells.into_iter().map(|(g, c, p, _)| (g, c, p)).collect()
}

fn case_rows(fleet: &Fleet, cells: &[(usize, usize, usize)]) -> Vec<Vec<String>> {
    cells
        .iter()
        .take(SHOWN_CASES)
        .map(|&(g, c, p)| {
            let group = &fleet.groups[g];
            let case = &group.cases[c];
            let cell = &case.cells[p];
            let mut cells = identity(&fleet.members[group.members[p]]);
            cells.extend([
                case.id.family.to_string(),
                case.id.variant.clone(),
                case.id.params.to_string(),
                cell.status.map_or("missing", |s| s.as_str()).to_owned(),
                cell.standing.as_str().to_owned(),
                (g + 1).to_string(),
                gbps_text(cell.gbps),
                gbps_text(case.median_gbps),
                signed(cell.distance.map(|d| 100.0 * d), 1),
                signed(cell.z, 1),
            ]);
            cells
        })
        .collect()
}

const MEDIAN_HEADER: [&str; 10] = [
    "family",
    "variant",
    "param",
    "GPUs",
    "median GB/s",
    "MAD GB/s",
    "sigma %",
    "slowest %",
    "fastest %",
    "outliers",
];

fn median_rows(group: &Group) -> Vec<Vec<String>> {
    group.cases.iter().map(median_row).collect()
}

fn median_row(case: &Case) -> Vec<String> {
    let extent = case.extent();
    vec![
        case.id.family.to_string(),
        case.id.variant.clone(),
        case.id.params.to_string(),
        case.measured.to_string(),
        gbps_text(case.median_gbps),
        gbps_text(case.mad_gbps),
        number(case.sigma().map(|s| 100.0 * s), 2),
        signed(extent.map(|(low, _)| 100.0 * low), 1),
        signed(extent.map(|(_, high)| 100.0 * high), 1),
        case.outliers().to_string(),
    ]
}

/// `value` with `digits` decimals; nothing where there is none.
fn number(value: Option<f64>, digits: usize) -> String {
    value.map_or_else(String::new, |v| format!("{v:.digits$}"))
}

/// A bandwidth in four significant digits (at least one decimal): `1498.9`, `15.00`,
/// `0.01230`; nothing where there is none.
pub(crate) fn gbps_text(value: Option<f64>) -> String {
    value.map_or_else(String::new, |v| {
        let magnitude = if v == 0.0 {
            0
        } else {
            v.abs().log10().floor() as i32
        };
        let digits = (3 - magnitude).clamp(1, 9) as usize;
        format!("{v:.digits$}")
    })
}

/// `value` with its sign and `digits` decimals; nothing where there is none.
fn signed(value: Option<f64>, digits: usize) -> String {
    value.map_or_else(String::new, |v| format!("{v:+.digits$}"))
}

/// Aligned columns for a terminal: `left` text columns, then numbers to the right.
fn aligned(header: &[&str], rows: Vec<Vec<String>>, left: usize) -> String {
    let mut table = Table::new();
    table
        .load_style(TableStyle::new())
        .set_header(header.to_vec())
        .add_rows(rows);
    for (index, column) in table.column_iter_mut().enumerate() {
        column.set_padding((0, 2));
        if index >= left {
            column.set_cell_alignment(CellAlignment::Right);
        }
    }
    table.trim_fmt()
}
