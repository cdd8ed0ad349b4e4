//! Writing results: a file updated under its lock ([`update`]), what this process has
//! saved ([`saved`]), or rows printed in a format.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use super::read::parse_with_lines;
use super::summary::{SUMMARY_HEADER, SUMMARY_TEXT_COLUMNS, summary_cells};
use super::{MAX_FILE_BYTES, Row};
use crate::error::{Error, Result};
use crate::files;

/// `new` rows replace the rows of `old` with the same key; the others stay, so a
/// filtered run adds to a device's file instead of truncating it.
pub(crate) fn merge(old: Vec<Row>, new: &[Row]) -> Vec<Row> {
    let replaced: HashSet<_> = new.iter().map(Row::key).collect();
    let mut merged: Vec<Row> = old
        .into_iter()
        .filter(|row| !replaced.contains(&row.key()))
        .collect();
    merged.extend_from_slice(new);
    merged
}

/// Writes `rows` as the whole file `path` names ([`files::replace`]): a crash never
/// leaves half a CSV, and a failed write (a full disk) leaves the file as it was.
pub fn write(path: &Path, rows: &[Row]) -> Result<()> {
    files::replace(path, |file| write_csv(file, rows))
}

/// Adds `rows` to the results file `path` names, under its lock from read to rename:
/// the rows it holds now, checked by `admit` (their identity), stay where `rows` has
/// none of the same case and setting. Writers of one file take turns, so none loses
/// another's rows. No rows write nothing. Rows that cannot be added are kept in a file
/// of their own, which the error names ([`rescue`]).
pub(crate) fn update(
    path: &Path,
    rows: &[Row],
    admit: impl FnOnce(Vec<(u64, Row)>) -> Result<Vec<Row>>,
) -> Result<()> {
    if rows.is_empty() {
        return Ok(());
    }
    add(path, rows, admit).map_err(|failed| rescue(rows, failed))?;
    let mut saved = SAVED.lock().unwrap_or_else(PoisonError::into_inner);
    match saved.iter_mut().find(|(file, _)| file == path) {
        Some((_, count)) => *count = rows.len(),
        None => saved.push((path.to_owned(), rows.len())),
    }
    Ok(())
}

/// [`update`]'s work, under the lock.
fn add(
    path: &Path,
    rows: &[Row],
    admit: impl FnOnce(Vec<(u64, Row)>) -> Result<Vec<Row>>,
) -> Result<()> {
    let locked = files::lock(path)?;
    let bytes = locked.read(MAX_FILE_BYTES)?;
    // Empty where the lock made the file (this writer, or one stopped before its rename).
    let old = if bytes.is_empty() {
        Vec::new()
    } else {
        admit(parse_with_lines(locked.path(), &bytes)?)?
    };
    locked.replace(|file| write_csv(file, &merge(old, rows)))
}

/// Each file [`update`] has saved rows to in this process, with how many rows of the
/// last update: the rows of a run so far, as a run saves them all each time.
static SAVED: Mutex<Vec<(PathBuf, usize)>> = Mutex::new(Vec::new());

/// What this process has saved, as a message says it: `no rows were saved`, or `12 rows
/// were saved to a.csv` (and to each other file).
pub fn saved() -> String {
    let saved = SAVED.lock().unwrap_or_else(PoisonError::into_inner);
    if saved.is_empty() {
        return "no rows were saved".to_owned();
    }
    let each: Vec<String> = saved
        .iter()
        .map(|(path, rows)| {
            format!(
                "{rows} row{} {} saved to {}",
                crate::plural(*rows),
                if *rows == 1 { "was" } else { "were" },
                path.display()
            )
        })
        .collect();
    each.join(", ")
}

/// `rows` as CSV, header first, into `out`.
pub(super) fn write_csv(out: impl std::io::Write, rows: &[Row]) -> std::io::Result<()> {
    let mut writer = csv::Writer::from_writer(out);
    for row in rows {
        writer.serialize(row)?;
    }
    writer.flush()
}

/// How a command prints its answer (`--format`); each command takes those its answer
/// has ([`Format::taken_by`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Aligned columns for a terminal (a run: its summary).
    Table,
    /// CSV (a run: the results file's rows).
    Csv,
    /// A JSON array of objects named by the CSV's columns (a run's rows).
    Json,
    /// One JSON object per line, keys the CSV's columns: files of many runs concatenate.
    Jsonl,
    /// A Markdown table.
    Markdown,
}

impl Format {
    /// `self`, or an error where `command` cannot print it (it prints `takes`).
    pub(crate) fn taken_by(self, command: &str, takes: &[Format]) -> Result<Self> {
        if takes.contains(&self) {
            Ok(self)
        } else {
            Err(self.refused(command, takes))
        }
    }

    /// The error of `command`, which prints `takes`, asked for this format.
    pub fn refused(self, command: &str, takes: &[Format]) -> Error {
        let name = |format: &Format| format!("{format:?}").to_lowercase();
        let names: Vec<String> = takes.iter().map(name).collect();
        Error::Usage(format!(
            "{command} prints {}, not {}",
            names.join(", "),
            name(&self)
        ))
    }
}

/// `rows` in `format`: [`head`], then [`body`].
pub fn render(rows: &[Row], format: Format) -> Result<String> {
    Ok(head(format)? + &body(rows, format)?)
}

/// How `format` starts, whatever the rows: `run --out -` prints it before it measures,
/// so that a stdout that takes nothing stops the run before it spends its time.
pub fn head(format: Format) -> Result<String> {
    Ok(match format {
        // The summary's header comes with its widths, in the body.
        Format::Table => String::new(),
        Format::Csv => super::columns()?.join(",") + "\n",
        Format::Json => "[".to_owned(),
        Format::Jsonl => String::new(),
        Format::Markdown => markdown_head(&SUMMARY_HEADER, SUMMARY_TEXT_COLUMNS),
    })
}

/// `rows` in `format`, after its [`head`].
pub fn body(rows: &[Row], format: Format) -> Result<String> {
    let failed = |message: String| Error::Results {
        path: PathBuf::from("<stdout>"),
        message,
    };
    match format {
        Format::Table => Ok(super::summary(rows)),
        Format::Csv => {
            let mut writer = csv::WriterBuilder::new()
                .has_headers(false)
                .from_writer(Vec::new());
            for row in rows {
                writer.serialize(row).map_err(|e| failed(e.to_string()))?;
            }
            super::csv_text(writer).map_err(failed)
        }
        Format::Json if rows.is_empty() => Ok("]\n".to_owned()),
        Format::Json => {
            // Each object as `serde_json` pretty-prints it inside an array.
            let objects = rows
                .iter()
                .map(|row| {
                    let text =
                        serde_json::to_string_pretty(row).map_err(|e| failed(e.to_string()))?;
                    Ok(text
                        .lines()
                        .map(|line| format!("  {line}"))
                        .collect::<Vec<_>>()
                        .join("\n"))
                })
                .collect::<Result<Vec<_>>>()?;
            Ok(format!("\n{}\n]\n", objects.join(",\n")))
        }
        Format::Jsonl => rows
            .iter()
            .map(|row| {
                serde_json::to_string(row)
                    .map(|line| line + "\n")
                    .map_err(|e| failed(e.to_string()))
            })
            .collect(),
        Format::Markdown => Ok(markdown_rows(&summary_cells(rows))),
    }
}

/// A Markdown table: `left` text columns, then numbers aligned right; `|` in a cell is
/// escaped.
pub(crate) fn markdown_table<S: AsRef<str>>(
    header: &[S],
    rows: &[Vec<String>],
    left: usize,
) -> String {
    markdown_head(header, left) + &markdown_rows(rows)
}

/// A Markdown table's header and the line under it: `left` columns aligned left.
fn markdown_head<S: AsRef<str>>(header: &[S], left: usize) -> String {
    let header: Vec<String> = header.iter().map(|cell| cell.as_ref().to_owned()).collect();
    let rule = (0..header.len())
        .map(|index| if index < left { "---" } else { "---:" }.to_owned())
        .collect();
    markdown_rows(&[header, rule])
}

/// A Markdown table's lines, `|` in a cell escaped.
fn markdown_rows(rows: &[Vec<String>]) -> String {
    rows.iter()
        .map(|cells| {
            let cells: Vec<String> = cells.iter().map(|cell| cell.replace('|', "\\|")).collect();
            format!("| {} |\n", cells.join(" | "))
        })
        .collect()
}

// Rows that could not go where they were going (a stdout that broke, a results file on a
// full disk, a lock given up on) are kept in a file of their own in the temporary
// directory: made exclusively, under a name no one can foresee, so no link planted there
// can take them elsewhere.

/// `failed`, the error that kept `rows` from where they were going, said with what was
/// saved and where the rows are now (or why they could not be kept either).
pub fn rescue(rows: &[Row], failed: Error) -> Error {
    let measured = match rows.len() {
        1 => "the 1 row measured is".to_owned(),
        n => format!("the {n} rows measured are"),
    };
    let kept = match keep(rows) {
        Ok(path) => format!("{measured} in {}", path.display()),
        Err(why) => format!("{measured} lost: {why}"),
    };
    Error::Unsaved {
        error: Box::new(failed),
        kept: format!("{}; {kept}", saved()),
    }
}

/// Writes `rows` as CSV to a new file `membench-rows-XXXXXX.csv` in the temporary
/// directory (`TMPDIR`, which must exist), readable by this user alone; its path. A
/// file not written whole is removed.
fn keep(rows: &[Row]) -> Result<PathBuf> {
    let dir = std::env::temp_dir();
    let mut file = tempfile::Builder::new()
        .prefix("membench-rows-")
        .suffix(".csv")
        .tempfile_in(&dir)
        .map_err(|error| match std::env::var_os("TMPDIR") {
            // Named as the variable: that is what to mend.
            Some(_) => Error::Environment(format!("TMPDIR={}: {error}", dir.display())),
            None => Error::io(&dir)(error),
        })?;
    let io = Error::io(file.path());
    write_csv(file.as_file_mut(), rows).map_err(&io)?;
    file.as_file().sync_all().map_err(&io)?;
    let (_, path) = file.keep().map_err(|e| io(e.error))?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::tests::{row, scratch};
    use crate::results::{parse, read};
    use crate::suite::Build;
    use std::io::Write as _;

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

    /// Admits every row as it is.
    fn any(rows: Vec<(u64, Row)>) -> Result<Vec<Row>> {
        Ok(rows.into_iter().map(|(_, row)| row).collect())
    }

    /// The names in `dir`, sorted.
    fn names(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn write_then_read_round_trips() {
        let dir = scratch("round-trip");
        let path = dir.join("device.csv");
        let rows = vec![
            row("offset", "offset=1", 2.5),
            row("peak", "launch=vec4", 3.5),
        ];
        write(&path, &rows).unwrap();
        assert_eq!(read(&path).unwrap(), rows);
        assert_eq!(names(&dir), ["device.csv"]);
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_failed_write_leaves_the_file_as_it_was_and_no_temporary_file() {
        let dir = scratch("full");
        let path = dir.join("device.csv");
        write(&path, &[row("offset", "offset=1", 2.5)]).unwrap();
        let before = std::fs::read(&path).unwrap();
        let error = files::replace(&path, |file| {
            file.write_all(b"family,")?;
            Err(std::io::Error::from(std::io::ErrorKind::StorageFull))
        })
        .unwrap_err();
        assert!(matches!(error, Error::Io { .. }), "{error}");
        assert_eq!(std::fs::read(&path).unwrap(), before);
        assert_eq!(names(&dir), ["device.csv"]);
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_failed_write_of_a_new_file_leaves_no_file() {
        let dir = scratch("full-new");
        let error = files::replace(&dir.join("device.csv"), |file| {
            file.write_all(b"family,")?;
            Err(std::io::Error::from(std::io::ErrorKind::StorageFull))
        })
        .unwrap_err();
        assert!(matches!(error, Error::Io { .. }), "{error}");
        assert!(names(&dir).is_empty(), "{:?}", names(&dir));
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn rows_that_cannot_be_added_are_kept_apart_and_the_error_says_where() {
        let dir = scratch("kept");
        let rows = [row("offset", "offset=1", 1.0)];
        // A directory where the file should be: refused, the rows kept elsewhere.
        let message = update(&dir, &rows, any).unwrap_err().to_string();
        assert!(
            message.contains("a directory, not a regular file"),
            "{message}"
        );
        let (_, kept) = message
            .split_once("the 1 row measured is in ")
            .unwrap_or_else(|| panic!("{message}"));
        let kept = Path::new(kept);
        assert_eq!(kept.parent(), Some(std::env::temp_dir().as_path()));
        assert_eq!(read(kept).unwrap(), rows);
        std::fs::remove_file(kept).unwrap();
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn writers_of_one_file_keep_each_others_rows() {
        let dir = scratch("writers");
        let path = dir.join("device.csv");
        // Eight writers, each saving its rows one by one as a run does after every case.
        std::thread::scope(|scope| {
            for writer in 0..8 {
                let path = &path;
                scope.spawn(move || {
                    let mut mine = Vec::new();
                    for case in 0..6 {
                        let offset = format!("offset={}", writer * 10 + case);
                        mine.push(row("offset", &offset, 1.0));
                        update(path, &mine, any).unwrap();
                    }
                });
            }
        });
        assert_eq!(read(&path).unwrap().len(), 8 * 6);
        assert_eq!(names(&dir), ["device.csv"]);
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_killed_writers_temporary_file_is_removed_by_the_next_writer() {
        let dir = scratch("stale");
        let path = dir.join("device.csv");
        let stale = dir.join(".device.csv.membench-abc123.tmp");
        let other = dir.join(".device.csv.bak.membench-abc123.tmp");
        std::fs::write(&stale, "family,").unwrap();
        std::fs::write(&other, "family,").unwrap();
        update(&path, &[row("offset", "offset=1", 1.0)], any).unwrap();
        assert_eq!(
            names(&dir),
            [".device.csv.bak.membench-abc123.tmp", "device.csv"]
        );
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn no_rows_write_nothing() {
        let dir = scratch("nothing");
        update(&dir.join("device.csv"), &[], any).unwrap();
        assert!(names(&dir).is_empty());
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn a_link_is_written_through_and_permissions_are_kept() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = scratch("link");
        let target = dir.join("target.csv");
        write(&target, &[row("offset", "offset=1", 1.0)]).unwrap();
        std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o600)).unwrap();
        let link = dir.join("link.csv");
        std::os::unix::fs::symlink("target.csv", &link).unwrap();
        update(&link, &[row("offset", "offset=2", 1.0)], any).unwrap();
        assert!(
            std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(read(&target).unwrap().len(), 2);
        let mode = std::fs::metadata(&target).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        // A read-only file is refused and kept as it was.
        std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o444)).unwrap();
        let before = std::fs::read(&target).unwrap();
        let message = update(&link, &[row("offset", "offset=3", 1.0)], any)
            .unwrap_err()
            .to_string();
        assert!(message.contains("target.csv: read-only"), "{message}");
        assert!(files::check_writable(&link).is_err());
        assert_eq!(std::fs::read(&target).unwrap(), before);
        let mode = std::fs::metadata(&target).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o444);
        assert_eq!(names(&dir), ["link.csv", "target.csv"]);
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn rows_print_as_csv_json_and_markdown() {
        let rows = [
            row("offset", "offset=1", 2.5),
            row("peak", "launch=vec4", 3.5),
        ];
        let csv = render(&rows, Format::Csv).unwrap();
        assert_eq!(parse(Path::new("-"), csv.as_bytes()).unwrap(), rows);
        let json = render(&rows, Format::Json).unwrap();
        assert_eq!(json, serde_json::to_string_pretty(&rows).unwrap() + "\n");
        let value: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(value[0]["variant"], "offset");
        assert_eq!(value[0]["gbps_median"], 2.5);
        assert_eq!(value[0]["sizing"], "default");
        assert_eq!(render(&[], Format::Json).unwrap(), "[]\n");
        let markdown = render(&rows, Format::Markdown).unwrap();
        let lines: Vec<&str> = markdown.lines().collect();
        assert!(lines[0].starts_with("| family | variant | param | api/build | GB/s |"));
        assert!(lines[1].starts_with("| --- | --- | --- | --- | ---: |"));
        assert!(lines[2].starts_with("| copy | offset | offset=1 | wgpu/default | 2.5 |"));
        for format in [Format::Csv, Format::Json, Format::Markdown] {
            assert!(
                render(&rows, format)
                    .unwrap()
                    .starts_with(&head(format).unwrap())
            );
        }
    }
}
