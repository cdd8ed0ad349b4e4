//! The results CSV: one row per case, measured beside predicted, with every setting
//! that changes a measurement. `results/README.md` documents each column.
//!
//! Only regular files of bounded size are read or written as results, writes are
//! atomic, and reading checks what the rest of membench relies on, naming the file,
//! line and column of the first problem.

mod identity;

pub use identity::{Identity, RunSizing, distinct_paths};

use std::collections::HashMap;
use std::io::Read as _;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::sim::model::Bound;
use crate::suite::{Api, Build, Setting};

/// Bumped whenever a column changes meaning, appears or disappears.
pub const SCHEMA_VERSION: u32 = 4;

/// Version 3 had no `sim_bound` column: its rows read with the bound unrecorded.
/// Version 2 had, besides, no `sizing` column: its rows read with the sizing unrecorded (a run
/// that adds to such a file checks the sizes of its cases, see [`Identity::admit`]).
/// Version 1 had, besides, one `bounds_checks` column (`on`/`off`) where version 2 has
/// `api` and `build`: its rows read as wgpu rows of the `default` or `unchecked` build.
const OLDEST_SCHEMA_VERSION: u32 = 1;

/// The largest results file read: a full run of every api and build is under 1 MiB.
pub const MAX_FILE_BYTES: u64 = 64 << 20;

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
    /// What bounds the predicted time (`Bound::name`); `None` without a prediction,
    /// and in files of schema version 3 and older, which did not record it.
    #[serde(default, with = "bound_column")]
    pub sim_bound: Option<Bound>,
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
    /// The sizing the case was measured at; `None` only in files of schema version 1
    /// and 2, which did not record it.
    #[serde(default)]
    pub sizing: Option<RunSizing>,
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

/// The `sim_bound` column: a bound by its name, empty for none.
mod bound_column {
    use serde::{Deserialize, Deserializer, Serializer};

    use crate::sim::model::Bound;

    pub fn serialize<S: Serializer>(
        bound: &Option<Bound>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(bound.map_or("", Bound::name))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Option<Bound>, D::Error> {
        let text = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
        match text.as_ref() {
            "" => Ok(None),
            name => name.parse().map(Some).map_err(serde::de::Error::custom),
        }
    }
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
    let io = |source| Error::Io {
        path: path.to_owned(),
        source,
    };
    // Checked before opening: opening a FIFO waits for a writer, and a device such as
    // /dev/zero never ends.
    refuse_unless_regular(path, &std::fs::metadata(path).map_err(io)?)?;
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .map_err(io)?
        .take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(Error::Results {
            path: path.to_owned(),
            message: format!(
                "larger than the {} MiB a results file may have",
                MAX_FILE_BYTES >> 20
            ),
        });
    }
    parse_with_lines(path, &bytes)
}

/// The rows of the results file at `path`, each with its line; none where there is no
/// file yet.
pub fn read_existing(path: &Path) -> Result<Vec<(u64, Row)>> {
    match std::fs::metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
        _ => read_with_lines(path),
    }
}

/// An error unless `metadata` is a regular file's: results are never read from or
/// written to a device, a FIFO or a directory.
fn refuse_unless_regular(path: &Path, metadata: &std::fs::Metadata) -> Result<()> {
    if metadata.is_file() {
        return Ok(());
    }
    let kind = if metadata.is_dir() {
        "a directory"
    } else {
        "a device, FIFO or socket"
    };
    Err(Error::Results {
        path: path.to_owned(),
        message: format!(
            "{kind}, not a regular file: results are read from and written to regular files \
             (`--out -` prints them)"
        ),
    })
}

/// Parses the bytes of a results CSV; `path` only names the file in errors. Any input,
/// however malformed, gives rows or an error, never a panic.
///
/// Besides the types of the columns it checks what the rest of membench relies on: the
/// header has every column of one schema version and no other, rows are of that
/// version, the status is known, every quoted field is closed, an `ok` row was
/// verified and has a bandwidth, bandwidths are positive, numbers are finite and not
/// negative, times are in the order minimum ≤ median ≤ maximum, and no case appears
/// twice.
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
    let column_at = |line: u64, index: usize| {
        let name = header.get(index).unwrap_or_default();
        format!("line {line}, column {} (`{name}`)", index + 1)
    };
    // The csv reader takes an unclosed quote's field to the end of the file.
    if let Some((line, field)) = unclosed_quote(bytes) {
        return Err(error(format!(
            "{}: a quoted field that is never closed (the file ends inside it)",
            column_at(line, field)
        )));
    }
    let expected_version = schema_version_of(&header);
    let columns = columns_of(expected_version)?;
    if let Some(problem) = header_problem(&header, &columns, expected_version) {
        // A file of another schema version fails here first: say so, not only which
        // column differs.
        return Err(error(
            match other_schema_version(&mut reader, &header, expected_version) {
                Some((line, version)) => format!(
                    "line {line}: schema version {version} where this membench reads \
                     {OLDEST_SCHEMA_VERSION} to {SCHEMA_VERSION} (line 1: {problem})"
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
            column_at(
                line,
                header.iter().position(|name| name == column).unwrap_or(0),
            )
        };
        // Checked before the row: serde's error for them would not name the column.
        let field = |column: &str| {
            let index = header.iter().position(|name| name == column)?;
            record.get(index)
        };
        if let Some(text) = field("status")
            && let Err(why) = Status::try_from(text.to_owned())
        {
            return Err(error(format!("{}: {why}", at("status"))));
        }
        if let Some(text) = field("sim_bound").filter(|text| !text.is_empty())
            && let Err(why) = text.parse::<Bound>()
        {
            return Err(error(format!("{}: {why}", at("sim_bound"))));
        }
        let mut row: Row = record.deserialize(Some(&header)).map_err(|e| {
            error(match e.kind() {
                csv::ErrorKind::Deserialize { err, .. } => match err.field() {
                    Some(index) => {
                        let index = usize::try_from(index).unwrap_or(usize::MAX);
                        let value = record.get(index).unwrap_or_default();
                        format!("{}: {} in `{value}`", column_at(line, index), err.kind())
                    }
                    None => format!("line {line}: {}", err.kind()),
                },
                _ => format!("line {line}: {e}"),
            })
        })?;
        if row.schema_version != expected_version {
            return Err(error(format!(
                "{}: schema version {} where this membench reads {expected_version} with \
                 this header",
                at("schema_version"),
                row.schema_version
            )));
        }
        if expected_version == OLDEST_SCHEMA_VERSION {
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
        }
        if expected_version >= SIZING_SCHEMA_VERSION && row.sizing.is_none() {
            return Err(error(format!("{}: empty", at("sizing"))));
        }
        row.schema_version = SCHEMA_VERSION;
        if let Some((column, why)) = inconsistency(&row) {
            return Err(error(format!("{}: {why}", at(column))));
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

/// The first column of `row` that contradicts what membench relies on, and why.
fn inconsistency(row: &Row) -> Option<(&'static str, String)> {
    for (column, text) in [("family", &row.family), ("variant", &row.variant)] {
        if text.is_empty() {
            return Some((column, "empty".to_owned()));
        }
    }
    if !row.status.measured() {
        return Some((
            "status",
            format!("`{}` is none of ok, failed, skipped", row.status),
        ));
    }
    if row.status == Status::Ok && !row.verified {
        return Some((
            "verified",
            "`false` on an `ok` row: only a verified case is timed".to_owned(),
        ));
    }
    if row.status == Status::Ok && row.gbps_median.is_none() {
        return Some(("gbps_median", "empty on an `ok` row".to_owned()));
    }
    for (column, value) in row.numbers() {
        if let Some(value) = value.filter(|v| !v.is_finite() || *v < 0.0) {
            return Some((
                column,
                format!("{value} is not a finite number of at least 0"),
            ));
        }
    }
    for (column, value) in [
        ("gbps_median", row.gbps_median),
        ("gbps_best", row.gbps_best),
        ("sim_gbps", row.sim_gbps),
    ] {
        if value == Some(0.0) {
            return Some((column, "0 where a bandwidth is positive".to_owned()));
        }
    }
    let times = [
        ("time_us_min", row.time_us_min),
        ("time_us_median", row.time_us_median),
        ("time_us_max", row.time_us_max),
    ];
    for (index, (column, value)) in times.iter().enumerate() {
        for (earlier, before) in &times[..index] {
            if let Some((before, value)) = before.zip(*value).filter(|(b, v)| b > v) {
                return Some((*column, format!("{value} is below {earlier} {before}")));
            }
        }
    }
    None
}

/// Where a quoted field opens that `bytes` never close: its line and field index. A
/// quote opens a field only as its first character; inside, `""` is a quote.
fn unclosed_quote(bytes: &[u8]) -> Option<(u64, usize)> {
    let (mut line, mut field) = (1u64, 0usize);
    let mut open = None;
    let mut at_field_start = true;
    let mut bytes = bytes.iter().peekable();
    while let Some(&byte) = bytes.next() {
        if open.is_some() {
            match byte {
                b'"' if bytes.next_if_eq(&&b'"').is_none() => open = None,
                b'\n' => line += 1,
                _ => {}
            }
            continue;
        }
        match byte {
            b'"' if at_field_start => open = Some((line, field)),
            b',' => field += 1,
            b'\n' => (line, field) = (line + 1, 0),
            _ => {}
        }
        at_field_start = open.is_none() && matches!(byte, b',' | b'\n' | b'\r');
    }
    open
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
        .serialize(Row {
            sizing: Some(RunSizing::default()),
            ..Row::default()
        })
        .map_err(|e| failed(e.to_string()))?;
    let bytes = writer
        .into_inner()
        .map_err(|e| failed(e.error().to_string()))?;
    let mut reader = csv::Reader::from_reader(bytes.as_slice());
    let header = reader.headers().map_err(|e| failed(e.to_string()))?;
    Ok(header.iter().map(str::to_owned).collect())
}

/// The first schema version with a `sizing` column.
const SIZING_SCHEMA_VERSION: u32 = 3;

/// The schema version a header is of: 1 has `bounds_checks`, 2 no `sizing`, 3 no
/// `sim_bound`.
fn schema_version_of(header: &csv::StringRecord) -> u32 {
    let has = |column: &str| header.iter().any(|name| name == column);
    if has("bounds_checks") {
        OLDEST_SCHEMA_VERSION
    } else if !has("sizing") {
        2
    } else if !has("sim_bound") {
        SIZING_SCHEMA_VERSION
    } else {
        SCHEMA_VERSION
    }
}

/// The columns of schema `version`: version 3 lacks `sim_bound`, version 2 besides
/// `sizing`, version 1 has besides `bounds_checks` where `api` and `build` are now.
fn columns_of(version: u32) -> Result<Vec<String>> {
    let mut columns = columns()?;
    if version < SCHEMA_VERSION {
        columns.retain(|column| column != "sim_bound");
    }
    if version < SIZING_SCHEMA_VERSION {
        columns.retain(|column| column != "sizing");
    }
    if version == OLDEST_SCHEMA_VERSION {
        columns.retain(|column| column != "build");
        if let Some(api) = columns.iter_mut().find(|column| *column == "api") {
            "bounds_checks".clone_into(api);
        }
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
/// crash never leaves half a CSV and a failed write (a full disk) leaves the file as it
/// was and no temporary file.
pub fn write(path: &Path, rows: &[Row]) -> Result<()> {
    write_atomically(path, |file| write_csv(file, rows))
}

/// `rows` as CSV, header first, into `out`.
fn write_csv(out: impl std::io::Write, rows: &[Row]) -> std::io::Result<()> {
    let mut writer = csv::Writer::from_writer(out);
    for row in rows {
        writer.serialize(row)?;
    }
    writer.flush()
}

/// Fills a temporary file beside `path` with `fill`, syncs it and renames it over
/// `path`; on any error the temporary file is removed. `path`, where it exists, must
/// be a regular file (renaming over /dev/full would replace the device).
fn write_atomically(
    path: &Path,
    fill: impl FnOnce(&mut std::fs::File) -> std::io::Result<()>,
) -> Result<()> {
    let io = |source| Error::Io {
        path: path.to_owned(),
        source,
    };
    match std::fs::metadata(path) {
        Ok(metadata) => refuse_unless_regular(path, &metadata)?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(io(e)),
    }
    if let Some(dir) = path.parent().filter(|dir| !dir.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(io)?;
    }
    let temporary = Temporary(path.with_extension("csv.tmp"));
    let mut file = std::fs::File::create(&temporary.0).map_err(io)?;
    fill(&mut file).map_err(io)?;
    file.sync_all().map_err(io)?;
    drop(file);
    std::fs::rename(&temporary.0, path).map_err(io)
}

/// A temporary file, removed when dropped: after the rename that put it in place
/// there is nothing left to remove.
struct Temporary(PathBuf);

impl Drop for Temporary {
    fn drop(&mut self) {
        // Best effort: the rename has usually moved it already.
        let _ = std::fs::remove_file(&self.0);
    }
}

/// What `membench run --out -` prints.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// The results CSV, as a results file holds it.
    #[default]
    Csv,
    /// The rows as a JSON array of objects named by the CSV's columns.
    Json,
    /// The summary as a Markdown table.
    Markdown,
}

/// `rows` in `format`.
pub fn render(rows: &[Row], format: Format) -> Result<String> {
    let failed = |message: String| Error::Results {
        path: PathBuf::from("<stdout>"),
        message,
    };
    match format {
        Format::Csv => {
            let mut bytes = Vec::new();
            write_csv(&mut bytes, rows).map_err(|e| failed(e.to_string()))?;
            String::from_utf8(bytes).map_err(|e| failed(e.to_string()))
        }
        Format::Json => serde_json::to_string_pretty(rows)
            .map(|json| json + "\n")
            .map_err(|e| failed(e.to_string())),
        Format::Markdown => {
            let (header, cells) = summary_cells(rows);
            Ok(markdown_table(&header, &cells, SUMMARY_TEXT_COLUMNS))
        }
    }
}

/// A Markdown table: `left` text columns, then numbers aligned right; `|` in a cell is
/// escaped.
pub fn markdown_table<S: AsRef<str>>(header: &[S], rows: &[Vec<String>], left: usize) -> String {
    let line = |cells: &mut dyn Iterator<Item = String>| {
        let cells: Vec<String> = cells.collect();
        format!("| {} |\n", cells.join(" | "))
    };
    let escape = |cell: &str| cell.replace('|', "\\|");
    let mut table = line(&mut header.iter().map(|cell| escape(cell.as_ref())));
    table.push_str(&line(
        &mut (0..header.len()).map(|index| if index < left { "---" } else { "---:" }.to_owned()),
    ));
    for row in rows {
        table.push_str(&line(&mut row.iter().map(|cell| escape(cell))));
    }
    table
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

/// Families whose result is a latency: one dependent load per element, so their GB/s
/// (the 4 bytes of each load over the time) says little; the summary shows the time
/// per element, in ns.
pub const LATENCY_FAMILIES: &[&str] = &["latency"];

/// Nanoseconds per element of a row moving `bytes` at `gbps` (measured or predicted):
/// for a pointer chase, the latency of one load.
pub fn ns_per_element(row: &Row, gbps: Option<f64>) -> Option<f64> {
    gbps.filter(|&gbps| gbps > 0.0 && row.elements > 0)
        .map(|gbps| row.bytes as f64 / gbps / row.elements as f64)
}

/// The summary's columns that name the case; numbers and the status follow.
const SUMMARY_TEXT_COLUMNS: usize = 4;

/// The summary's header and cells: per row the case, its api/build, bandwidth, share
/// of the fastest `copy/peak` among `rows` (`on-chip` for the on-chip families), cv,
/// the simulator's prediction, measured over predicted, and the status. The latency
/// families show ns per load (`612.3 ns`, measured and predicted) where others show
/// GB/s, and `per load` for the share.
fn summary_cells(rows: &[Row]) -> ([&'static str; 10], Vec<Vec<String>>) {
    let peak = copy_peak_gbps(rows);
    let number = |value: Option<f64>, digits: usize| {
        value.map_or("-".to_owned(), |v| format!("{v:.digits$}"))
    };
    let cells = rows
        .iter()
        .map(|row| {
            let latency = LATENCY_FAMILIES.contains(&row.family.as_str());
            let speed = |gbps: Option<f64>| {
                if latency {
                    ns_per_element(row, gbps).map_or("-".to_owned(), |ns| format!("{ns:.1} ns"))
                } else {
                    number(gbps, 1)
                }
            };
            let share = if ON_CHIP_FAMILIES.contains(&row.family.as_str()) {
                "on-chip".to_owned()
            } else if latency {
                "per load".to_owned()
            } else {
                number(row.gbps_median.zip(peak).map(|(g, p)| 100.0 * g / p), 1)
            };
            let status = if row.note.is_empty() {
                row.status.to_string()
            } else {
                format!("{}: {}", row.status, row.note)
            };
            vec![
                row.family.clone(),
                row.variant.clone(),
                row.param.clone(),
                row.setting().to_string(),
                speed(row.gbps_median),
                share,
                number(row.cv.map(|cv| 100.0 * cv), 2),
                speed(row.sim_gbps),
                number(row.measured_over_sim, 2),
                status,
            ]
        })
        .collect();
    let header = [
        "family",
        "variant",
        "param",
        "api/build",
        "GB/s",
        "% peak",
        "cv %",
        "sim GB/s",
        "meas/sim",
        "status",
    ];
    (header, cells)
}

/// The readable table `membench run` ends with: [`summary_cells`] in aligned columns.
pub fn summary(rows: &[Row]) -> String {
    let (header, cells) = summary_cells(rows);
    // Text columns at least this wide, numbers exactly this wide: the status, last,
    // runs on.
    let least = [10, 10, 18, 14, 10, 8, 7, 10, 9];
    let widths: Vec<usize> = least
        .iter()
        .enumerate()
        .map(|(index, &least)| {
            let widest = cells.iter().map(|row| row[index].len()).max().unwrap_or(0);
            if index < SUMMARY_TEXT_COLUMNS {
                widest.max(least)
            } else {
                least
            }
        })
        .collect();
    let line = |cells: &[&str]| {
        let mut line = String::new();
        for (index, width) in widths.iter().enumerate() {
            let cell = cells.get(index).copied().unwrap_or_default();
            if index < SUMMARY_TEXT_COLUMNS {
                line.push_str(&format!("{cell:<width$} "));
            } else {
                line.push_str(&format!("{cell:>width$} "));
            }
        }
        line.push(' ');
        line.push_str(cells.last().copied().unwrap_or_default());
        line.push('\n');
        line
    };
    let mut table = line(&header);
    for row in &cells {
        table.push_str(&line(&row.iter().map(String::as_str).collect::<Vec<_>>()));
    }
    table
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write as _;

    fn row(variant: &str, param: &str, gbps: f64) -> Row {
        Row {
            family: "copy".into(),
            variant: variant.into(),
            param: param.into(),
            status: Status::Ok,
            verified: true,
            gbps_median: Some(gbps),
            sizing: Some(RunSizing::default()),
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
    fn summary_shows_the_latency_per_load() {
        // 4096 loads of 4 bytes in 2.5 ms: 610.4 ns a load (0.0066 GB/s); predicted
        // at twice the speed.
        let chase = Row {
            family: "latency".into(),
            elements: 4096,
            bytes: 4 * 4096,
            sim_gbps: Some(2.0 * 16384.0 / 2.5e6),
            ..row("chase", "footprint=1073741824", 16384.0 / 2.5e6)
        };
        let table = summary(&[row("peak", "launch=vec4", 200.0), chase]);
        let line = table.lines().find(|l| l.starts_with("latency")).unwrap();
        assert!(line.contains(" 610.4 ns per load "), "{line}");
        assert!(line.contains(" 305.2 ns "), "{line}");
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
    fn schema_1_files_read_as_wgpu_builds_and_are_written_in_this_schema() {
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

    /// A results file of `rows` as text.
    fn text_of(rows: &[Row]) -> String {
        render(rows, Format::Csv).unwrap()
    }

    /// The error `parse` gives for `text`.
    fn refusal(text: &str) -> String {
        parse(Path::new("bad.csv"), text.as_bytes())
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn rows_that_contradict_themselves_are_refused_by_line_and_column() {
        let good = Row {
            time_us_min: Some(1.0),
            time_us_median: Some(2.0),
            time_us_max: Some(3.0),
            gbps_best: Some(3.0),
            ..row("offset", "offset=1", 2.5)
        };
        assert!(
            parse(
                Path::new("good.csv"),
                text_of(std::slice::from_ref(&good)).as_bytes()
            )
            .is_ok()
        );
        for (bad, expected) in [
            (
                Row {
                    verified: false,
                    ..good.clone()
                },
                "bad.csv: line 2, column 8 (`verified`): `false` on an `ok` row",
            ),
            (
                Row {
                    time_us_min: Some(4.0),
                    ..good.clone()
                },
                "line 2, column 12 (`time_us_median`): 2 is below time_us_min 4",
            ),
            (
                Row {
                    time_us_max: Some(0.5),
                    ..good.clone()
                },
                "line 2, column 14 (`time_us_max`): 0.5 is below time_us_min 1",
            ),
            (
                Row {
                    gbps_median: Some(0.0),
                    ..good.clone()
                },
                "line 2, column 16 (`gbps_median`): 0 where a bandwidth is positive",
            ),
            (
                Row {
                    sizing: None,
                    ..good.clone()
                },
                "line 2, column 31 (`sizing`): empty",
            ),
        ] {
            let message = refusal(&text_of(&[bad]));
            assert!(message.contains(expected), "{message}");
        }
    }

    #[test]
    fn an_unclosed_quote_in_the_last_field_is_refused() {
        let text = text_of(&[row("offset", "offset=1", 2.5)]);
        let unclosed = format!("{}\"a note", text.trim_end());
        let message = refusal(&unclosed);
        assert!(
            message.contains("line 2, column 36 (`note`): a quoted field that is never closed"),
            "{message}"
        );
        // Closed, with a quote and a line break inside, it reads.
        let closed = format!("{}\"a \"\"note\"\"\nend\"\n", text.trim_end());
        let rows = parse(Path::new("ok.csv"), closed.as_bytes()).unwrap();
        assert_eq!(rows[0].note, "a \"note\"\nend");
    }

    /// `text` (a results CSV) without `dropped` columns, its rows of schema `version`.
    fn older(text: &str, dropped: &[&str], version: u32) -> String {
        let mut reader = csv::Reader::from_reader(text.as_bytes());
        let header = reader.headers().unwrap().clone();
        let kept: Vec<usize> = (0..header.len())
            .filter(|&i| !dropped.contains(&&header[i]))
            .collect();
        let mut writer = csv::Writer::from_writer(Vec::new());
        writer
            .write_record(kept.iter().map(|&i| &header[i]))
            .unwrap();
        for record in reader.records() {
            let record = record.unwrap();
            writer
                .write_record(kept.iter().map(|&i| match &header[i] {
                    "schema_version" => version.to_string(),
                    _ => record[i].to_owned(),
                }))
                .unwrap();
        }
        String::from_utf8(writer.into_inner().unwrap()).unwrap()
    }

    #[test]
    fn schema_2_files_read_with_no_sizing() {
        let text = older(
            &text_of(&[row("offset", "offset=1", 2.5)]),
            &["sizing", "sim_bound"],
            2,
        );
        let rows = parse(Path::new("v2.csv"), text.as_bytes()).unwrap();
        assert_eq!(rows[0].sizing, None);
        assert_eq!(rows[0].schema_version, SCHEMA_VERSION);
    }

    #[test]
    fn schema_3_files_read_with_no_bound_and_this_schema_writes_it() {
        let predicted = Row {
            sim_gbps: Some(2.0),
            sim_bound: Some(Bound::Dram),
            ..row("offset", "offset=1", 2.5)
        };
        let text = text_of(std::slice::from_ref(&predicted));
        let header = text.lines().next().unwrap();
        assert!(
            header.contains(",sim_gbps,sim_bound,sim_dram_bytes,"),
            "{header}"
        );
        assert!(
            text.lines().nth(1).unwrap().contains(",2.0,dram,"),
            "{text}"
        );
        assert_eq!(
            parse(Path::new("v4.csv"), text.as_bytes()).unwrap(),
            std::slice::from_ref(&predicted)
        );
        let rows = parse(
            Path::new("v3.csv"),
            older(&text, &["sim_bound"], 3).as_bytes(),
        )
        .unwrap();
        assert_eq!(rows[0].sim_bound, None);
        assert_eq!(rows[0].sim_gbps, Some(2.0));
        assert_eq!(rows[0].schema_version, SCHEMA_VERSION);
        // A v3 file's rows must not claim v4, nor a v4 header's rows v3.
        let message = refusal(&older(&text, &["sim_bound"], 4));
        assert!(
            message.contains("schema version 4 where this membench reads 3"),
            "{message}"
        );
        let message = refusal(&text.replace(",dram,", ",dragons,"));
        assert!(
            message.contains("column 19 (`sim_bound`): unknown bound `dragons`"),
            "{message}"
        );
    }

    /// A fresh directory for one test.
    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("membench-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn only_regular_files_of_bounded_size_are_results() {
        for device in ["/dev/zero", "/dev/full"] {
            let path = Path::new(device);
            if !path.exists() {
                continue;
            }
            for message in [
                read(path).unwrap_err().to_string(),
                write(path, &[]).unwrap_err().to_string(),
            ] {
                assert!(
                    message.starts_with(&format!(
                        "{device}: a device, FIFO or socket, not a regular file"
                    )),
                    "{message}"
                );
            }
        }
        let dir = scratch("bounded");
        let large = dir.join("large.csv");
        std::fs::File::create(&large)
            .unwrap()
            .set_len(MAX_FILE_BYTES + 1)
            .unwrap();
        let message = read(&large).unwrap_err().to_string();
        assert!(
            message.ends_with("larger than the 64 MiB a results file may have"),
            "{message}"
        );
        let message = read(&dir).unwrap_err().to_string();
        assert!(
            message.contains("a directory, not a regular file"),
            "{message}"
        );
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_failed_write_leaves_the_file_as_it_was_and_no_temporary_file() {
        let dir = scratch("full");
        let path = dir.join("device.csv");
        write(&path, &[row("offset", "offset=1", 2.5)]).unwrap();
        let before = std::fs::read(&path).unwrap();
        let error = write_atomically(&path, |file| {
            file.write_all(b"family,")?;
            Err(std::io::Error::from(std::io::ErrorKind::StorageFull))
        })
        .unwrap_err();
        assert!(matches!(error, Error::Io { .. }), "{error}");
        assert_eq!(std::fs::read(&path).unwrap(), before);
        let names: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|entry| entry.unwrap().file_name())
            .collect();
        assert_eq!(names, ["device.csv"]);
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn rows_print_as_csv_json_and_markdown() {
        let rows = [row("offset", "offset=1", 2.5)];
        let csv = render(&rows, Format::Csv).unwrap();
        assert_eq!(parse(Path::new("-"), csv.as_bytes()).unwrap(), rows);
        let json: serde_json::Value =
            serde_json::from_str(&render(&rows, Format::Json).unwrap()).unwrap();
        assert_eq!(json[0]["variant"], "offset");
        assert_eq!(json[0]["gbps_median"], 2.5);
        assert_eq!(json[0]["sizing"], "default");
        let markdown = render(&rows, Format::Markdown).unwrap();
        let lines: Vec<&str> = markdown.lines().collect();
        assert!(lines[0].starts_with("| family | variant | param | api/build | GB/s |"));
        assert!(lines[1].starts_with("| --- | --- | --- | --- | ---: |"));
        assert!(lines[2].starts_with("| copy | offset | offset=1 | wgpu/default | 2.5 |"));
    }
}
