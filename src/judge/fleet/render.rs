//! A fleet in each format. Tables and Markdown ([`super::text`]) lead with the
//! conclusion and show the first cases beyond the threshold; CSV holds one row per GPU
//! per case, every one; JSON holds those rows, the GPUs (with their condition, the
//! spans they are slower in and the command that measures an unsteady case again), the
//! cases, the files read once or merged, and the counts.

use std::io::Write;
use std::path::PathBuf;

use serde::Serialize;
use serde::ser::Serializer;

use super::spans::MIN_CASES;
use super::text::{remeasure, text};
use super::{Fleet, MAD_SCALE, MIN_MEMBERS, Member, Merge, SIGMAS};
use crate::error::{Error, Result};
use crate::results::Format;
use crate::text::shown_path as shown;

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
                        file: shown(&s.path),
                        why: &s.why,
                    })
                    .collect(),
                merged: fleet.merged.iter().map(MergedRecord::of).collect(),
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
/// name and file, per case its parameters.
struct Texts {
    settings: Vec<String>,
    sizings: Vec<String>,
    gpus: Vec<String>,
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
            gpus: fleet.members.iter().map(|m| m.gpu.to_string()).collect(),
            files: fleet.members.iter().map(|m| shown(m.file())).collect(),
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
    merged: Vec<MergedRecord>,
    gpus: Vec<GpuRecord<'a>>,
    cases: Lazy<C>,
    rows: Lazy<R>,
}

/// The conclusion, the counts and the rule, JSON's `summary`.
#[derive(Serialize)]
struct Summary {
    conclusion: &'static str,
    exit_status: u8,
    passes: bool,
    files: usize,
    skipped_files: usize,
    merged_files: usize,
    gpus: usize,
    models: usize,
    groups: usize,
    unjudged_gpus: usize,
    sick_gpus: usize,
    unsteady_gpus: usize,
    outliers: usize,
    unsteady: usize,
    faster: usize,
    threshold: f64,
    sigmas: f64,
    mad_scale: f64,
    min_gpus: usize,
    min_span_cases: usize,
    allow_skips: bool,
}

impl Summary {
    fn of(fleet: &Fleet) -> Self {
        let tally = fleet.tally();
        let conclusion = tally.conclusion();
        Summary {
            conclusion: conclusion.as_str(),
            exit_status: conclusion.exit_code(),
            passes: conclusion.exit_code() == 0,
            files: tally.files,
            skipped_files: tally.skipped_files,
            merged_files: tally.merged_files,
            gpus: tally.gpus,
            models: tally.models,
            groups: tally.groups,
            unjudged_gpus: tally.unjudged_gpus,
            sick_gpus: tally.sick_gpus,
            unsteady_gpus: tally.unsteady_gpus,
            outliers: tally.outliers,
            unsteady: tally.unsteady,
            faster: tally.faster,
            threshold: fleet.threshold,
            sigmas: SIGMAS,
            mad_scale: MAD_SCALE,
            min_gpus: MIN_MEMBERS,
            min_span_cases: MIN_CASES,
            allow_skips: fleet.allow_skips,
        }
    }
}

#[derive(Serialize)]
struct SkippedRecord<'a> {
    file: String,
    why: &'a str,
}

/// A file read once or merged, JSON's `merged`.
#[derive(Serialize)]
struct MergedRecord {
    file: String,
    into: String,
    /// `same-file`, `same-run` or `another-run`.
    how: &'static str,
    gpu: Option<String>,
}

impl MergedRecord {
    fn of(merged: &super::Merged) -> Self {
        let (how, gpu) = match &merged.how {
            Merge::SameFile => ("same-file", None),
            Merge::SameRun(gpu) => ("same-run", Some(gpu.to_string())),
            Merge::AnotherRun(gpu) => ("another-run", Some(gpu.to_string())),
        };
        MergedRecord {
            file: shown(&merged.path),
            into: shown(&merged.into),
            how,
            gpu,
        }
    }
}

/// A span a GPU is slower in, in JSON's `gpus`.
#[derive(Serialize)]
struct SpanRecord {
    span: String,
    cases: usize,
    distance: f64,
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
    files: Vec<String>,
    condition: &'static str,
    slow_spans: Vec<SpanRecord>,
    outliers: usize,
    slower: usize,
    unsteady: usize,
    missing: usize,
    failed: usize,
    faster: usize,
    worst_case: Option<String>,
    worst_distance: Option<f64>,
    remeasure: Option<String>,
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
        gpu: &texts.gpus[index],
        host: &member.host,
        gpu_uuid: &member.gpu_uuid,
        pci_bus_id: &member.pci_bus_id,
        files: member.files.iter().map(|f| shown(f)).collect(),
        condition: member.condition.as_str(),
        slow_spans: member
            .slow_spans
            .iter()
            .map(|&(span, distance)| SpanRecord {
                span: group.spans[span].to_string(),
                cases: group.spans[span].cases.len(),
                distance,
            })
            .collect(),
        outliers: member.outliers(),
        slower: member.slower,
        unsteady: member.unsteady,
        missing: member.missing,
        failed: member.failed,
        faster: member.faster,
        worst_case: member
            .worst
            .map(|(case, _)| group.cases[case].id.to_string()),
        worst_distance: member.worst.map(|(_, distance)| distance),
        remeasure: remeasure(fleet, member),
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
    unsteady: usize,
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
                unsteady: case.unsteady(),
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
    runs: usize,
    gbps: Option<f64>,
    median_gbps: Option<f64>,
    mad_gbps: Option<f64>,
    measured: usize,
    distance: Option<f64>,
    z: Option<f64>,
    standing: &'static str,
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
                        gpu: &texts.gpus[m],
                        host: &member.host,
                        gpu_uuid: &member.gpu_uuid,
                        pci_bus_id: &member.pci_bus_id,
                        file: &texts.files[m],
                        family: case.id.family.as_str(),
                        variant: &case.id.variant,
                        param: &texts.params[g][c],
                        status: cell.status.map_or("missing", |s| s.as_str()),
                        runs: cell.runs,
                        gbps: cell.gbps,
                        median_gbps: case.median_gbps,
                        mad_gbps: case.mad_gbps,
                        measured: case.measured,
                        distance: cell.distance,
                        z: cell.z,
                        standing: cell.standing.as_str(),
                        outlier: cell.standing.is_outlier(),
                    }
                })
        })
    })
}
