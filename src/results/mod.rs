//! The results CSV: one row per case, measured beside predicted, with every setting
//! that changes a measurement. `results/README.md` documents each column.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::suite::{Api, Build, Setting};

/// Bumped whenever a column changes meaning, appears or disappears.
pub const SCHEMA_VERSION: u32 = 2;

/// Version 1 had one `bounds_checks` column (`on`/`off`) where version 2 has `api` and
/// `build`: its rows still read, as wgpu rows of the `default` or `unchecked` build.
const LEGACY_SCHEMA_VERSION: u32 = 1;

/// What became of a case.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase", try_from = "String")]
pub enum Status {
    /// Verified and timed.
    Ok,
    /// Not verified (or not timed): a row nobody measured is never `ok`.
    #[default]
    Failed,
    /// The device cannot run the case; the note says why.
    Skipped,
    /// Predicted only (`membench simulate`, never in a results file).
    Simulated,
    /// A transfer `membench simulate` has no model for.
    #[serde(rename = "not simulated")]
    NotSimulated,
}

impl Status {
    /// The text form, as in the CSV.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Failed => "failed",
            Status::Skipped => "skipped",
            Status::Simulated => "simulated",
            Status::NotSimulated => "not simulated",
        }
    }

    /// Whether a results file may hold it: a file holds what a device did.
    fn measured(self) -> bool {
        matches!(self, Status::Ok | Status::Failed | Status::Skipped)
    }
}

impl TryFrom<String> for Status {
    type Error = String;

    /// Read through a string, so that a bad value is reported with its column.
    fn try_from(text: String) -> std::result::Result<Self, String> {
        [
            Status::Ok,
            Status::Failed,
            Status::Skipped,
            Status::Simulated,
            Status::NotSimulated,
        ]
        .into_iter()
        .find(|status| status.as_str() == text)
        .ok_or_else(|| format!("unknown status `{text}`"))
    }
}

impl std::fmt::Display for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One case's result. Failed and skipped cases have a row too, with no bandwidth.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Row {
    pub family: String,
    pub variant: String,
    pub param: String,
    pub status: Status,
    pub elements: u64,
    pub bytes: u64,
    pub workgroup: String,
    pub verified: bool,
    pub timer: String,
    pub samples: u32,
    pub dispatches_per_sample: u32,
    pub time_us_median: Option<f64>,
    pub time_us_min: Option<f64>,
    pub time_us_max: Option<f64>,
    pub cv: Option<f64>,
    pub gbps_median: Option<f64>,
    pub gbps_best: Option<f64>,
    pub sim_gbps: Option<f64>,
    pub sim_dram_bytes: Option<u64>,
    pub sim_sectors_per_request: Option<f64>,
    pub sim_bank_ways: Option<f64>,
    /// Measured over predicted bandwidth (`gbps_median / sim_gbps`).
    pub measured_over_sim: Option<f64>,
    pub device: String,
    pub vendor: String,
    pub backend: String,
    pub driver: String,
    pub subgroup_size: String,
    /// Absent from schema version 1 (see [`LEGACY_SCHEMA_VERSION`]).
    #[serde(default)]
    pub api: Api,
    #[serde(default)]
    pub build: Build,
    /// Schema version 1's column, read and never written.
    #[serde(default, skip_serializing)]
    pub bounds_checks: Option<String>,
    pub membench_version: String,
    pub schema_version: u32,
    pub git_commit: String,
    pub timestamp_utc: String,
    /// Why a case failed or was skipped.
    pub note: String,
}

/// The columns that describe the device and the run, the same on every row.
#[derive(Clone, Debug, Default)]
pub struct RunInfo {
    pub device: String,
    pub vendor: String,
    pub backend: String,
    pub driver: String,
    pub subgroup_size: String,
    pub setting: Setting,
    pub timestamp_utc: String,
}

impl Row {
    /// The key rows are merged on: the case and the setting it was measured in.
    pub fn key(&self) -> (String, String, String, Setting) {
        (
            self.family.clone(),
            self.variant.clone(),
            self.param.clone(),
            self.setting(),
        )
    }

    /// The api and build the row was measured with.
    pub fn setting(&self) -> Setting {
        Setting {
            api: self.api,
            build: self.build,
        }
    }

    /// The floating-point columns with their names, for checks that apply to all.
    pub fn numbers(&self) -> [(&'static str, Option<f64>); 10] {
        [
            ("time_us_median", self.time_us_median),
            ("time_us_min", self.time_us_min),
            ("time_us_max", self.time_us_max),
            ("cv", self.cv),
            ("gbps_median", self.gbps_median),
            ("gbps_best", self.gbps_best),
            ("sim_gbps", self.sim_gbps),
            ("sim_sectors_per_request", self.sim_sectors_per_request),
            ("sim_bank_ways", self.sim_bank_ways),
            ("measured_over_sim", self.measured_over_sim),
        ]
    }
}

/// `results/<device-slug>.csv`, e.g. `nvidia-h100-80gb-hbm3-vulkan`: one file per
/// device and backend, holding every api and build measured on it.
pub fn default_path(device: &str, backend: &str) -> PathBuf {
    PathBuf::from("results").join(format!("{}.csv", slug(&format!("{device} {backend}"))))
}

/// `paths`, with the index appended to the stem of every path that occurs twice.
pub fn distinct_paths(paths: Vec<PathBuf>) -> Vec<PathBuf> {
    paths
        .iter()
        .enumerate()
        .map(|(index, path)| {
            if paths.iter().filter(|p| *p == path).count() == 1 {
                return path.clone();
            }
            let stem = path
                .file_stem()
                .map(|s| s.to_string_lossy())
                .unwrap_or_default();
            path.with_file_name(format!("{stem}-{index}.csv"))
        })
        .collect()
}

/// Lower-case letters and digits, every other run of characters one `-`.
pub fn slug(text: &str) -> String {
    let mut slug = String::new();
    for c in text.chars() {
        if c.is_ascii_alphanumeric() {
            slug.push(c.to_ascii_lowercase());
        } else if !slug.is_empty() && !slug.ends_with('-') {
            slug.push('-');
        }
    }
    slug.trim_end_matches('-').to_owned()
}

/// Reads a results CSV, naming the file, line and column of the first bad value.
pub fn read(path: &Path) -> Result<Vec<Row>> {
    Ok(read_with_lines(path)?
        .into_iter()
        .map(|(_, row)| row)
        .collect())
}

/// [`read`], each row with the line it starts on, for errors about rows that are
/// well-formed alone but not together.
pub fn read_with_lines(path: &Path) -> Result<Vec<(u64, Row)>> {
    let bytes = std::fs::read(path).map_err(|source| Error::Io {
        path: path.to_owned(),
        source,
    })?;
    parse_with_lines(path, &bytes)
}

/// Parses the bytes of a results CSV; `path` only names the file in errors. Any input,
/// however malformed, gives rows or an error, never a panic.
///
/// Besides the types of the columns it checks what the rest of membench relies on: the
/// header has every column of this schema and no other, rows are of this schema version,
/// the status is known, an `ok` row has a bandwidth, numbers are finite and not
/// negative, and no case appears twice.
pub fn parse(path: &Path, bytes: &[u8]) -> Result<Vec<Row>> {
    Ok(parse_with_lines(path, bytes)?
        .into_iter()
        .map(|(_, row)| row)
        .collect())
}

/// [`parse`], each row with the line it starts on.
pub fn parse_with_lines(path: &Path, bytes: &[u8]) -> Result<Vec<(u64, Row)>> {
    let error = |message: String| Error::Results {
        path: path.to_owned(),
        message,
    };
    let mut reader = csv::ReaderBuilder::new().from_reader(bytes);
    let header = reader
        .headers()
        .map_err(|e| error(csv_message(&e, None)))?
        .clone();
    let legacy = header.iter().any(|name| name == "bounds_checks");
    let (columns, expected_version) = if legacy {
        (legacy_columns()?, LEGACY_SCHEMA_VERSION)
    } else {
        (columns()?, SCHEMA_VERSION)
    };
    if let Some(problem) = header_problem(&header, &columns, expected_version) {
        // A file of another schema version fails here first: say so, not only which
        // column differs.
        return Err(error(
            match other_schema_version(&mut reader, &header, expected_version) {
                Some((line, version)) => format!(
                    "line {line}: schema version {version} where this membench reads \
                     {SCHEMA_VERSION} (line 1: {problem})"
                ),
                None => format!("line 1: {problem}"),
            },
        ));
    }

    let mut rows = Vec::new();
    let mut first_line: HashMap<(String, String, String, Setting), u64> = HashMap::new();
    let mut record = csv::StringRecord::new();
    loop {
        match reader.read_record(&mut record) {
            Ok(true) => {}
            Ok(false) => break,
            Err(e) => return Err(error(csv_message(&e, Some(&header)))),
        }
        let line = record.position().map_or(0, csv::Position::line);
        let at = |column: &str| {
            let index = header.iter().position(|name| name == column).unwrap_or(0);
            format!("line {line}, column {} (`{column}`)", index + 1)
        };
        // Checked before the row: serde's error for it would not name the column.
        let status = header.iter().position(|name| name == "status");
        if let Some(text) = status.and_then(|index| record.get(index))
            && let Err(why) = Status::try_from(text.to_owned())
        {
            return Err(error(format!("{}: {why}", at("status"))));
        }
        let row: Row = record.deserialize(Some(&header)).map_err(|e| {
            error(match e.kind() {
                csv::ErrorKind::Deserialize { err, .. } => match err.field() {
                    Some(index) => {
                        let index = usize::try_from(index).unwrap_or(usize::MAX);
                        let value = record.get(index).unwrap_or_default();
                        let column = header.get(index).unwrap_or_default();
                        format!("{}: {} in `{value}`", at(column), err.kind())
                    }
                    None => format!("line {line}: {}", err.kind()),
                },
                _ => format!("line {line}: {e}"),
            })
        })?;
        let mut row = row;
        if row.schema_version != expected_version {
            return Err(error(format!(
                "{}: schema version {} where this membench reads {expected_version} with \
                 this header",
                at("schema_version"),
                row.schema_version
            )));
        }
        if legacy {
            row.build = match row.bounds_checks.take().as_deref() {
                Some("on") => Build::Default,
                Some("off") => Build::Unchecked,
                other => {
                    return Err(error(format!(
                        "{}: `{}` is neither on nor off",
                        at("bounds_checks"),
                        other.unwrap_or_default()
                    )));
                }
            };
            row.schema_version = SCHEMA_VERSION;
        }
        for (column, text) in [("family", &row.family), ("variant", &row.variant)] {
            if text.is_empty() {
                return Err(error(format!("{}: empty", at(column))));
            }
        }
        if !row.status.measured() {
            return Err(error(format!(
                "{}: `{}` is none of ok, failed, skipped",
                at("status"),
                row.status
            )));
        }
        if row.status == Status::Ok && row.gbps_median.is_none() {
            return Err(error(format!(
                "{}: empty on an `ok` row",
                at("gbps_median")
            )));
        }
        for (column, value) in row.numbers() {
            if let Some(value) = value.filter(|v| !v.is_finite() || *v < 0.0) {
                return Err(error(format!(
                    "{}: {value} is not a finite number of at least 0",
                    at(column)
                )));
            }
        }
        if let Some(earlier) = first_line.insert(row.key(), line) {
            return Err(error(format!(
                "line {line}: the case {}/{}/{} in {} again (first on line {earlier})",
                row.family,
                row.variant,
                row.param,
                row.setting()
            )));
        }
        rows.push((line, row));
    }
    Ok(rows)
}

/// The columns of this schema, in the order `write` puts them: the header of a
/// serialized row, so that the struct is the one place that lists them.
pub fn columns() -> Result<Vec<String>> {
    let mut writer = csv::Writer::from_writer(Vec::new());
    let failed = |message: String| Error::Results {
        path: PathBuf::from("<schema>"),
        message,
    };
    writer
        .serialize(Row::default())
        .map_err(|e| failed(e.to_string()))?;
    let bytes = writer
        .into_inner()
        .map_err(|e| failed(e.error().to_string()))?;
    let mut reader = csv::Reader::from_reader(bytes.as_slice());
    let header = reader.headers().map_err(|e| failed(e.to_string()))?;
    Ok(header.iter().map(str::to_owned).collect())
}

/// The columns of schema version 1: `bounds_checks` where `api` and `build` are now.
fn legacy_columns() -> Result<Vec<String>> {
    let mut columns = columns()?;
    columns.retain(|column| column != "build");
    if let Some(api) = columns.iter_mut().find(|column| *column == "api") {
        "bounds_checks".clone_into(api);
    }
    Ok(columns)
}

/// What is wrong with a header line, if anything: a column missing, unknown or twice.
fn header_problem(header: &csv::StringRecord, columns: &[String], version: u32) -> Option<String> {
    if header.iter().all(str::is_empty) {
        return Some(format!(
            "no header; a results CSV starts with the {} column names `{},…`",
            columns.len(),
            columns
                .iter()
                .take(3)
                .cloned()
                .collect::<Vec<_>>()
                .join(",")
        ));
    }
    for (index, name) in header.iter().enumerate() {
        if header.iter().take(index).any(|earlier| earlier == name) {
            return Some(format!("column {} (`{name}`) appears twice", index + 1));
        }
        if !columns.iter().any(|column| column == name) {
            return Some(format!(
                "column {} (`{name}`) is not a column of schema version {version}",
                index + 1
            ));
        }
    }
    let missing: Vec<&str> = columns
        .iter()
        .filter(|column| !header.iter().any(|name| name == column.as_str()))
        .map(String::as_str)
        .collect();
    (!missing.is_empty()).then(|| format!("missing column(s) `{}`", missing.join("`, `")))
}

/// The line and value of the first row's `schema_version`, where it is a version other
/// than `expected` (the version of the header's kind).
fn other_schema_version(
    reader: &mut csv::Reader<&[u8]>,
    header: &csv::StringRecord,
    expected: u32,
) -> Option<(u64, u32)> {
    let index = header.iter().position(|name| name == "schema_version")?;
    let mut record = csv::StringRecord::new();
    reader.read_record(&mut record).ok()?;
    let version: u32 = record.get(index)?.trim().parse().ok()?;
    let line = record.position()?.line();
    (version != expected).then_some((line, version))
}

/// A csv reading error as `line L[, column C (`name`)]: what`, without csv's own
/// position prefix.
fn csv_message(e: &csv::Error, header: Option<&csv::StringRecord>) -> String {
    let line = |position: Option<&csv::Position>| {
        position.map_or(String::new(), |p| format!("line {}: ", p.line()))
    };
    match e.kind() {
        csv::ErrorKind::UnequalLengths {
            pos,
            expected_len,
            len,
        } => format!(
            "{}{len} fields where the header has {expected_len}",
            line(pos.as_ref())
        ),
        csv::ErrorKind::Utf8 { pos, err } => {
            let column = err.field() + 1;
            let name = header
                .and_then(|h| h.get(err.field()))
                .map_or(String::new(), |name| format!(" (`{name}`)"));
            match pos {
                Some(p) => format!("line {}, column {column}{name}: not UTF-8", p.line()),
                None => format!("column {column}{name}: not UTF-8"),
            }
        }
        _ => e.to_string(),
    }
}

/// `new` rows replace the rows of `old` with the same key; the others stay, so a
/// filtered run adds to a device's file instead of truncating it.
pub fn merge(old: Vec<Row>, new: &[Row]) -> Vec<Row> {
    let replaced: HashMap<_, _> = new.iter().map(|row| (row.key(), ())).collect();
    let mut merged: Vec<Row> = old
        .into_iter()
        .filter(|row| !replaced.contains_key(&row.key()))
        .collect();
    merged.extend_from_slice(new);
    merged
}

/// Writes `rows` atomically: a temporary file beside `path`, then a rename, so a
/// crash never leaves half a CSV.
pub fn write(path: &Path, rows: &[Row]) -> Result<()> {
    let io = |source| Error::Io {
        path: path.to_owned(),
        source,
    };
    if let Some(dir) = path.parent().filter(|dir| !dir.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(io)?;
    }
    let temporary = path.with_extension("csv.tmp");
    let mut writer = csv::Writer::from_path(&temporary).map_err(|e| Error::Results {
        path: temporary.clone(),
        message: e.to_string(),
    })?;
    for row in rows {
        writer.serialize(row).map_err(|e| Error::Results {
            path: temporary.clone(),
            message: e.to_string(),
        })?;
    }
    let file = writer.into_inner().map_err(|e| io(e.into_error()))?;
    file.sync_all().map_err(io)?;
    drop(file);
    std::fs::rename(&temporary, path).map_err(io)
}

/// The fastest measured `copy/peak` among `rows`: the practical ceiling.
pub fn copy_peak_gbps(rows: &[Row]) -> Option<f64> {
    rows.iter()
        .filter(|row| row.family == "copy" && row.variant == "peak")
        .filter_map(|row| row.gbps_median)
        .reduce(f64::max)
}

/// Families whose bytes are on-chip traffic (workgroup memory, the constant and L1
/// caches), not DRAM: their GB/s is on-chip throughput, which a share of `copy/peak`
/// does not describe.
pub const ON_CHIP_FAMILIES: &[&str] = &["bank", "constant"];

/// The readable table `membench run` ends with: bandwidth per case, its share of the
/// fastest `copy/peak` among `rows` (`on-chip` for the on-chip families), and the
/// simulator's prediction beside it.
pub fn summary(rows: &[Row]) -> String {
    let peak = copy_peak_gbps(rows);
    let width = |column: fn(&Row) -> &str, least: usize| {
        rows.iter()
            .map(|row| column(row).len())
            .fold(least, usize::max)
    };
    let family = width(|row| &row.family, 10);
    let variant = width(|row| &row.variant, 10);
    let param = width(|row| &row.param, 18);
    let mut table = format!(
        "{:<family$} {:<variant$} {:<param$} {:<14} {:>10} {:>8} {:>7} {:>10} {:>9}  {}\n",
        "family",
        "variant",
        "param",
        "api/build",
        "GB/s",
        "% peak",
        "cv %",
        "sim GB/s",
        "meas/sim",
        "status"
    );
    let number = |value: Option<f64>, digits: usize| {
        value.map_or("-".to_owned(), |v| format!("{v:.digits$}"))
    };
    for row in rows {
        let gbps = number(row.gbps_median, 1);
        let share = if ON_CHIP_FAMILIES.contains(&row.family.as_str()) {
            "on-chip".to_owned()
        } else {
            number(row.gbps_median.zip(peak).map(|(g, p)| 100.0 * g / p), 1)
        };
        let cv = number(row.cv.map(|cv| 100.0 * cv), 2);
        let sim = number(row.sim_gbps, 1);
        let ratio = number(row.measured_over_sim, 2);
        let status = if row.note.is_empty() {
            row.status.to_string()
        } else {
            format!("{}: {}", row.status, row.note)
        };
        table.push_str(&format!(
            "{:<family$} {:<variant$} {:<param$} {:<14} {gbps:>10} {share:>8} {cv:>7} {sim:>10} {ratio:>9}  {status}\n",
            row.family,
            row.variant,
            row.param,
            row.setting().to_string()
        ));
    }
    table
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adapters_sharing_a_results_file_get_their_index() {
        let paths = [
            "results/gpu-vulkan.csv",
            "results/gpu-gl.csv",
            "results/gpu-vulkan.csv",
        ]
        .map(PathBuf::from)
        .to_vec();
        let names: Vec<String> = distinct_paths(paths)
            .iter()
            .map(|p| p.display().to_string())
            .collect();
        assert_eq!(
            names,
            [
                "results/gpu-vulkan-0.csv",
                "results/gpu-gl.csv",
                "results/gpu-vulkan-2.csv"
            ]
        );
    }

    fn row(variant: &str, param: &str, gbps: f64) -> Row {
        Row {
            family: "copy".into(),
            variant: variant.into(),
            param: param.into(),
            status: Status::Ok,
            verified: true,
            gbps_median: Some(gbps),
            schema_version: SCHEMA_VERSION,
            ..Row::default()
        }
    }

    #[test]
    fn slug_of_device_and_backend() {
        assert_eq!(
            slug("NVIDIA H100 80GB HBM3 Vulkan"),
            "nvidia-h100-80gb-hbm3-vulkan"
        );
        assert_eq!(
            slug("llvmpipe (LLVM 15.0.6, 256 bits) Vulkan"),
            "llvmpipe-llvm-15-0-6-256-bits-vulkan"
        );
    }

    #[test]
    fn summary_shows_share_of_the_fastest_peak() {
        let rows = [
            row("peak", "launch=vec4", 200.0),
            row("peak", "launch=gridstride", 100.0),
            row("offset", "offset=1", 150.0),
        ];
        let table = summary(&rows);
        let line = table.lines().find(|l| l.contains("offset=1")).unwrap();
        assert!(
            line.contains(" 150.0 ") && line.contains(" 75.0 "),
            "{line}"
        );
    }

    #[test]
    fn summary_labels_on_chip_throughput_and_fits_long_names() {
        let bank = Row {
            family: "bank".into(),
            ..row("row_col_override_pad", "r=1024", 30000.0)
        };
        let rows = [row("peak", "launch=vec4", 200.0), bank];
        let table = summary(&rows);
        let line = table.lines().find(|l| l.starts_with("bank")).unwrap();
        assert!(line.contains(" 30000.0  on-chip "), "{line}");
        let header = table.lines().next().unwrap();
        assert_eq!(header.find("param"), line.find("r=1024"), "{table}");
    }

    #[test]
    fn merge_replaces_same_key_and_keeps_others() {
        let old = vec![
            row("offset", "offset=0", 1.0),
            row("stride", "stride=2", 2.0),
        ];
        let merged = merge(old, &[row("offset", "offset=0", 3.0)]);
        assert_eq!(merged.len(), 2);
        assert_eq!(merged[0].variant, "stride");
        assert_eq!(merged[1].gbps_median, Some(3.0));
    }

    #[test]
    fn merge_keeps_the_other_settings_of_a_case() {
        let default = row("offset", "offset=0", 1.0);
        let tax_free = Row {
            build: Build::TaxFree,
            ..row("offset", "offset=0", 2.0)
        };
        let merged = merge(vec![default.clone()], std::slice::from_ref(&tax_free));
        assert_eq!(merged, [default, tax_free]);
    }

    /// A schema-1 file (the test fixture) with its `bounds_checks` set to `checks`.
    fn legacy_file(checks: &str) -> String {
        let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/gpu-a.csv");
        let text = std::fs::read_to_string(fixture).unwrap();
        assert!(text.contains(",on,0.1.0,1,"));
        text.replace(",on,0.1.0,1,", &format!(",{checks},0.1.0,1,"))
    }

    #[test]
    fn schema_1_files_read_as_wgpu_builds_and_are_written_as_schema_2() {
        for (checks, build) in [("on", Build::Default), ("off", Build::Unchecked)] {
            let rows = parse(Path::new("legacy.csv"), legacy_file(checks).as_bytes()).unwrap();
            assert!(!rows.is_empty());
            for row in &rows {
                assert_eq!(
                    row.setting(),
                    Setting {
                        api: Api::Wgpu,
                        build
                    },
                    "{checks}"
                );
                assert_eq!(row.schema_version, SCHEMA_VERSION);
            }
        }
        let mut writer = csv::Writer::from_writer(Vec::new());
        writer.serialize(row("offset", "offset=0", 1.0)).unwrap();
        let text = String::from_utf8(writer.into_inner().unwrap()).unwrap();
        let header = text.lines().next().unwrap();
        assert!(
            header.contains(",api,build,") && !header.contains("bounds_checks"),
            "{header}"
        );
    }

    #[test]
    fn a_schema_1_row_of_schema_2_or_a_bad_checks_value_is_refused() {
        for (checks, version, expected) in [
            ("maybe", "1", "`maybe` is neither on nor off"),
            ("off", "2", "schema version 2 where this membench reads 1"),
        ] {
            let text = legacy_file(checks).replacen(
                &format!(",{checks},0.1.0,1,"),
                &format!(",{checks},0.1.0,{version},"),
                1,
            );
            let message = parse(Path::new("legacy.csv"), text.as_bytes())
                .unwrap_err()
                .to_string();
            assert!(message.contains(expected), "{message}");
        }
    }

    #[test]
    fn write_then_read_round_trips() {
        let dir = std::env::temp_dir().join(format!("membench-results-{}", std::process::id()));
        let path = dir.join("device.csv");
        let rows = vec![
            row("offset", "offset=1", 2.5),
            row("peak", "launch=vec4", 3.5),
        ];
        write(&path, &rows).unwrap();
        assert_eq!(read(&path).unwrap(), rows);
        assert!(!path.with_extension("csv.tmp").exists());
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn malformed_csv_names_line_and_field() {
        let dir = std::env::temp_dir().join(format!("membench-bad-{}", std::process::id()));
        let path = dir.join("bad.csv");
        write(&path, &[row("offset", "offset=1", 2.5)]).unwrap();
        let text = std::fs::read_to_string(&path)
            .unwrap()
            .replace(",2.5,", ",fast,");
        std::fs::write(&path, text).unwrap();
        let message = read(&path).unwrap_err().to_string();
        assert!(
            message.contains("bad.csv: line 2, column 16 (`gbps_median`)")
                && message.contains("`fast`"),
            "{message}"
        );
        std::fs::remove_dir_all(dir).unwrap();
    }
}
