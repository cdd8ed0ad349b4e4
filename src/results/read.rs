//! Reading a results CSV: every value checked, the first problem named by file, line and
//! column.

use std::collections::HashMap;
use std::path::Path;

use super::{
    BOUND_SCHEMA_VERSION, IDENTITY_COLUMNS, IDENTITY_SCHEMA_VERSION, MAX_FILE_BYTES,
    OLDEST_SCHEMA_VERSION, Row, SCHEMA_VERSION, SIZING_SCHEMA_VERSION, Status, columns,
};
use crate::error::{Error, Result};
use crate::files;
use crate::sim::model::Bound;
use crate::suite::{Build, CaseId, Family, Setting, check_variant};
use crate::text;

/// How far a bandwidth may be from the bytes over its time: a file written by hand or
/// by another tool may round to four digits.
const BANDWIDTH_TOLERANCE: f64 = 1e-3;

/// Reads a results CSV, naming the file, line and column of the first bad value.
pub fn read(path: &Path) -> Result<Vec<Row>> {
    Ok(read_with_lines(path)?
        .into_iter()
        .map(|(_, row)| row)
        .collect())
}

/// [`read`], each row with the line it starts on, for errors about rows that are
/// well-formed alone but not together.
pub(crate) fn read_with_lines(path: &Path) -> Result<Vec<(u64, Row)>> {
    parse_with_lines(path, &file_bytes(path)?)
}

/// The bytes of the file at `path`, a regular file of at most [`MAX_FILE_BYTES`]: what
/// membench reads a CSV of its own from.
pub(crate) fn file_bytes(path: &Path) -> Result<Vec<u8>> {
    let io = Error::io(path);
    // Checked before opening: opening a FIFO waits for a writer, and a device such as
    // /dev/zero never ends.
    files::refuse_unless_regular(path, &std::fs::metadata(path).map_err(&io)?)?;
    let file = std::fs::File::open(path).map_err(&io)?;
    files::read_bounded(path, &file, MAX_FILE_BYTES)
}

/// The rows of the results file at `path`, each with its line; none where there is no
/// file yet, or an empty one (a writer's lock makes it so until its first rename).
pub(crate) fn read_existing(path: &Path) -> Result<Vec<(u64, Row)>> {
    match std::fs::metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
        Ok(metadata) if metadata.is_file() && metadata.len() == 0 => Ok(Vec::new()),
        _ => read_with_lines(path),
    }
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
    let column_at = |line: u64, index: usize| column_at(&header, line, index);
    // The csv reader takes an unclosed quote's field to the end of the file.
    if let Some((line, field)) = unclosed_quote(bytes) {
        return Err(error(format!(
            "{}: a quoted field that is never closed (the file ends inside it)",
            column_at(line, field)
        )));
    }
    if let Some(index) = header
        .iter()
        .position(|name| unsafe_text("", name).is_some())
    {
        return Err(error(format!(
            "line 1, column {}: a control character in a column name",
            index + 1
        )));
    }
    if let Some(problem) = foreign_header(&header) {
        return Err(error(format!("line 1: {problem}")));
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
    let mut first_line: HashMap<(CaseId, Setting), u64> = HashMap::new();
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
        // Before any value is quoted in an error: text reaches terminals.
        let unsafe_field = header
            .iter()
            .zip(record.iter())
            .find_map(|(column, text)| unsafe_text(column, text).map(|why| (column, why)));
        if let Some((column, why)) = unsafe_field {
            return Err(error(format!("{}: {why}", at(column))));
        }
        // Checked before the row: serde's error for them would not name the column.
        let field = |column: &str| {
            let index = header.iter().position(|name| name == column)?;
            record.get(index)
        };
        if let Some(text) = field("status")
            && let Err(why) = text.parse::<Status>()
        {
            return Err(error(format!("{}: {why}", at("status"))));
        }
        if let Some(text) = field("sim_bound").filter(|text| !text.is_empty())
            && let Err(why) = text.parse::<Bound>()
        {
            return Err(error(format!("{}: {why}", at("sim_bound"))));
        }
        let mut row: Row = record
            .deserialize(Some(&header))
            .map_err(|e| error(field_message(&e, &header, &record)))?;
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
        // The family and the parameters are typed; the variant, which reaches paths
        // and pages, is checked here, once.
        if let Err(why) = check_variant(&row.variant) {
            return Err(error(format!("{}: {why}", at("variant"))));
        }
        if let Some((column, why)) = inconsistency(&row) {
            return Err(error(format!("{}: {why}", at(column))));
        }
        if let Some(earlier) = first_line.insert((row.id(), row.setting()), line) {
            return Err(error(format!(
                "line {line}: the case {}/{}/{} in {} again (first on line {earlier})",
                row.family,
                row.variant,
                row.params,
                row.setting()
            )));
        }
        rows.push((line, row));
    }
    Ok(rows)
}

/// Why `header` is not a results CSV's at all, if it is not: the case's columns are
/// missing, or are there in capitals.
fn foreign_header(header: &csv::StringRecord) -> Option<String> {
    const CASE_COLUMNS: [&str; 3] = ["family", "variant", "param"];
    // No header at all is said by `header_problem`.
    let present = |column: &&str| header.iter().any(|name| name == *column);
    if header.iter().all(str::is_empty) || CASE_COLUMNS.iter().all(present) {
        return None;
    }
    let capitals: Vec<&str> = header
        .iter()
        .filter(|name| CASE_COLUMNS.iter().any(|c| name.eq_ignore_ascii_case(c)))
        .collect();
    Some(match capitals.as_slice() {
        [] => format!(
            "not a membench results CSV: it has no `{}` columns",
            CASE_COLUMNS.join("`, `")
        ),
        named => format!(
            "column names are lower case in a results CSV (`{}`)",
            named.join("`, `")
        ),
    })
}

/// Why the field `text` of `column` is unsafe to print or to name a file by, if it is: a
/// character a terminal acts on ([`text::is_unsafe`]: an ANSI escape, a bidirectional
/// override, a line break outside the note).
pub(crate) fn unsafe_text(column: &str, text: &str) -> Option<String> {
    let allowed = |c: char| column == "note" && matches!(c, '\n' | '\r' | '\t');
    text.chars()
        .find(|&c| text::is_unsafe(c) && !allowed(c))
        .map(text::named)
}

/// `line L, column C (`name`)`: where a field is, as errors name it.
fn column_at(header: &csv::StringRecord, line: u64, index: usize) -> String {
    let name = header.get(index).unwrap_or_default();
    format!("line {line}, column {} (`{name}`)", index + 1)
}

/// A record's deserialization error as the line and column of the field, what is wrong
/// and the value; `header` names the columns.
pub(crate) fn field_message(
    e: &csv::Error,
    header: &csv::StringRecord,
    record: &csv::StringRecord,
) -> String {
    let line = record.position().map_or(0, csv::Position::line);
    match e.kind() {
        csv::ErrorKind::Deserialize { err, .. } => match err.field() {
            Some(index) => {
                let index = usize::try_from(index).unwrap_or(usize::MAX);
                let value = record.get(index).unwrap_or_default();
                format!(
                    "{}: {} in `{value}`",
                    column_at(header, line, index),
                    err.kind()
                )
            }
            None => format!("line {line}: {}", err.kind()),
        },
        _ => format!("line {line}: {e}"),
    }
}

/// The first column of `row` that contradicts what membench relies on, and why.
fn inconsistency(row: &Row) -> Option<(&'static str, String)> {
    if !row.status.measured() {
        return Some((
            "status",
            format!("`{}` is none of ok, failed, skipped", row.status),
        ));
    }
    if Setting::of(row.api, row.build).is_none() {
        return Some((
            "build",
            format!("`{}` is not a build of {}", row.build, row.api),
        ));
    }
    // A user's kernel may be timed unverified (`--no-verify`, or verified at a
    // smaller size): its note says why. The suite's cases are timed only verified.
    if row.status == Status::Ok && !row.verified && row.family != Family::Kernel {
        return Some((
            "verified",
            "`false` on an `ok` row: only a verified case is timed".to_owned(),
        ));
    }
    if row.status == Status::Ok && row.gbps_median.is_none() {
        return Some(("gbps_median", "empty on an `ok` row".to_owned()));
    }
    if row.status == Status::Ok && row.bytes == 0 {
        return Some((
            "bytes",
            "0 on an `ok` row: a bandwidth is the bytes moved over the time".to_owned(),
        ));
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
    // A bandwidth is the bytes over its time (`measure::gbps`), to rounding.
    for (column, gbps, time_column, time_us) in [
        (
            "gbps_median",
            row.gbps_median,
            "time_us_median",
            row.time_us_median,
        ),
        ("gbps_best", row.gbps_best, "time_us_min", row.time_us_min),
    ] {
        if let Some((gbps, time_us)) = gbps.zip(time_us) {
            let implied = row.bytes as f64 / (time_us * 1e3);
            if (gbps / implied - 1.0).abs() > BANDWIDTH_TOLERANCE {
                return Some((
                    column,
                    format!(
                        "{} where bytes / {time_column} gives {}",
                        short(gbps),
                        short(implied)
                    ),
                ));
            }
        }
    }
    None
}

/// `x` in a few digits: `2.5`, `1e308`.
fn short(x: f64) -> String {
    if x != 0.0 && !(1e-3..1e9).contains(&x.abs()) {
        format!("{x:e}")
    } else {
        format!("{}", (x * 1e4).round() / 1e4)
    }
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

/// The schema version a header is of: 1 has `bounds_checks`, 2 no `sizing`, 3 no
/// `sim_bound`, 4 no `gpu_uuid`, 5 no `sim_sector_use`.
fn schema_version_of(header: &csv::StringRecord) -> u32 {
    let has = |column: &str| header.iter().any(|name| name == column);
    if has("bounds_checks") {
        OLDEST_SCHEMA_VERSION
    } else if !has("sizing") {
        2
    } else if !has("sim_bound") {
        SIZING_SCHEMA_VERSION
    } else if !has("gpu_uuid") {
        BOUND_SCHEMA_VERSION
    } else if !has("sim_sector_use") {
        IDENTITY_SCHEMA_VERSION
    } else {
        SCHEMA_VERSION
    }
}

/// The columns of schema `version`: version 5 lacks `sim_sector_use`, version 4 besides
/// [`IDENTITY_COLUMNS`], version 3
/// besides `sim_bound`, version 2 besides
/// `sizing`, version 1 has besides `bounds_checks` where `api` and `build` are now.
fn columns_of(version: u32) -> Result<Vec<String>> {
    let mut columns = columns()?;
    if version < SCHEMA_VERSION {
        columns.retain(|column| column != "sim_sector_use");
    }
    if version < IDENTITY_SCHEMA_VERSION {
        columns.retain(|column| !IDENTITY_COLUMNS.contains(&column.as_str()));
    }
    if version < BOUND_SCHEMA_VERSION {
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
pub(crate) fn csv_message(e: &csv::Error, header: Option<&csv::StringRecord>) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::tests::{row, scratch};
    use crate::results::{Format, render, write};
    use crate::suite::Api;

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
                    Setting::of(Api::Wgpu, build).unwrap(),
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
        // 1 MB in 400 µs (2.5 GB/s), 250 µs at best (4 GB/s).
        let good = Row {
            time_us_min: Some(250.0),
            time_us_median: Some(400.0),
            time_us_max: Some(500.0),
            gbps_best: Some(4.0),
            ..row("offset", "offset=1", 2.5)
        };
        assert!(
            parse(
                Path::new("good.csv"),
                text_of(std::slice::from_ref(&good)).as_bytes()
            )
            .is_ok()
        );
        // A user's kernel verified at a smaller size: timed, not verified, read back.
        let kernel = Row {
            family: Family::Kernel,
            verified: false,
            ..good.clone()
        };
        let read = parse(Path::new("kernels.csv"), text_of(&[kernel]).as_bytes());
        assert!(read.is_ok(), "{read:?}");
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
                    time_us_min: Some(450.0),
                    ..good.clone()
                },
                "line 2, column 12 (`time_us_median`): 400 is below time_us_min 450",
            ),
            (
                Row {
                    time_us_max: Some(200.0),
                    ..good.clone()
                },
                "line 2, column 14 (`time_us_max`): 200 is below time_us_min 250",
            ),
            (
                Row {
                    gbps_median: Some(1e308),
                    ..good.clone()
                },
                "line 2, column 16 (`gbps_median`): 1e308 where bytes / time_us_median gives 2.5",
            ),
            (
                Row {
                    bytes: 0,
                    ..good.clone()
                },
                "line 2, column 6 (`bytes`): 0 on an `ok` row",
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
                "line 2, column 32 (`sizing`): empty",
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
            message.contains("line 2, column 48 (`note`): a quoted field that is never closed"),
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
        let dropped: Vec<&str> = ["sizing", "sim_bound", "sim_sector_use"]
            .into_iter()
            .chain(IDENTITY_COLUMNS)
            .collect();
        let text = older(&text_of(&[row("offset", "offset=1", 2.5)]), &dropped, 2);
        let rows = parse(Path::new("v2.csv"), text.as_bytes()).unwrap();
        assert_eq!(rows[0].sizing, None);
        assert_eq!(rows[0].schema_version, SCHEMA_VERSION);
    }

    #[test]
    fn schema_3_to_5_files_read_with_what_they_lack_empty() {
        let predicted = Row {
            sim_gbps: Some(2.0),
            sim_bound: Some(Bound::Dram),
            sim_sector_use: Some(0.5),
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
            parse(Path::new("v6.csv"), text.as_bytes()).unwrap(),
            std::slice::from_ref(&predicted)
        );
        let v5 = older(&text, &["sim_sector_use"], 5);
        let predicted = Row {
            sim_sector_use: None,
            ..predicted
        };
        assert_eq!(
            parse(Path::new("v5.csv"), v5.as_bytes()).unwrap(),
            std::slice::from_ref(&predicted)
        );
        let v4 = older(&v5, &IDENTITY_COLUMNS, 4);
        assert_eq!(
            parse(Path::new("v4.csv"), v4.as_bytes()).unwrap(),
            std::slice::from_ref(&predicted)
        );
        let rows = parse(
            Path::new("v3.csv"),
            older(&v4, &["sim_bound"], 3).as_bytes(),
        )
        .unwrap();
        assert_eq!(rows[0].sim_bound, None);
        assert_eq!(rows[0].sim_gbps, Some(2.0));
        assert_eq!(rows[0].schema_version, SCHEMA_VERSION);
        // A v3 file's rows must not claim v4, nor a v4 header's rows v3.
        let message = refusal(&older(&v4, &["sim_bound"], 4));
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
}
