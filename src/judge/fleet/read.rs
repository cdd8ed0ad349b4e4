//! A fleet's inputs: the files named (each once, however it is spelled), each read in
//! parallel into its parts (one per setting and sizing), each part naming its GPU by
//! [`GpuId`] and keeping, per case, the measurement that is judged.

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::{Path, PathBuf};

use rayon::prelude::*;

use super::{Merge, Merged, Skipped};
use crate::error::{Error, Result};
pub(super) use crate::results::known;
use crate::results::{self, GpuId, Row, Status};
use crate::suite::{CaseId, RunSizing, Setting};
use crate::text::shown_path as shown;

/// What a group is keyed by: GPUs measured alike.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(super) struct GroupKey {
    pub(super) device: String,
    pub(super) backend: String,
    pub(super) setting: Setting,
    pub(super) sizing: Option<RunSizing>,
}

/// One measurement of a case, as judged: its status, its bandwidth on an `ok` row,
/// and a fingerprint of its run (`timestamp_utc`), which tells a second run from a
/// copy of the first.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Measurement {
    pub(super) status: Status,
    pub(super) gbps: Option<f64>,
    pub(super) run: u64,
}

impl Measurement {
    /// Whether `other` is this very measurement (read again from a copy).
    pub(super) fn same(&self, other: &Measurement) -> bool {
        self.run == other.run
            && self.status == other.status
            && self.gbps.map(f64::to_bits) == other.gbps.map(f64::to_bits)
    }
}

/// One file's rows of one setting and sizing.
pub(super) struct Part {
    pub(super) key: GroupKey,
    pub(super) gpu: GpuId,
    pub(super) file: PathBuf,
    pub(super) host: String,
    pub(super) gpu_uuid: String,
    pub(super) pci_bus_id: String,
    pub(super) cases: Vec<(CaseId, Measurement)>,
}

/// What the inputs came to: the parts read, the files read, those not read and those
/// read once for two names.
pub(super) struct Read {
    pub(super) parts: Vec<Part>,
    pub(super) files: usize,
    pub(super) skipped: Vec<Skipped>,
    pub(super) merged: Vec<Merged>,
}

/// Reads `paths` (files, and directories for the `*.csv` files in them) in parallel.
/// A file that cannot be read is skipped, with why; none read at all is an error.
pub(super) fn read(paths: &[PathBuf]) -> Result<Read> {
    let (files, mut skipped, merged) = inputs(paths)?;
    let outcomes: Vec<(&PathBuf, Result<Vec<Part>>)> = files
        .par_iter()
        .map(|path| (path, read_parts(path)))
        .collect();
    let mut parts = Vec::new();
    let mut count = 0;
    for (path, outcome) in outcomes {
        match outcome {
            Ok(file_parts) => {
                count += 1;
                parts.extend(file_parts);
            }
            Err(error) => skipped.push(Skipped {
                path: path.clone(),
                why: reason(error),
            }),
        }
    }
    skipped.sort_by(|a, b| a.path.cmp(&b.path));
    if parts.is_empty() {
        return Err(nothing_read(paths, &skipped));
    }
    Ok(Read {
        parts,
        files: count,
        skipped,
        merged,
    })
}

/// The error of inputs of which no file could be read.
fn nothing_read(paths: &[PathBuf], skipped: &[Skipped]) -> Error {
    let path = paths.first().cloned().unwrap_or_default();
    if skipped.is_empty() {
        return Error::Results {
            path,
            message: "no results CSV here: name the files, or a directory of them".to_owned(),
        };
    }
    let first: Vec<String> = skipped
        .iter()
        .take(3)
        .map(|s| format!("{}: {}", shown(&s.path), s.why))
        .collect();
    Error::Results {
        path,
        message: format!(
            "no results file read ({} skipped: {})",
            skipped.len(),
            first.join("; ")
        ),
    }
}

/// The files `paths` name: each file, and each directory's `*.csv` files, sorted; empty
/// files and paths that are not there are skipped, with why. A file named twice
/// (`d/x.csv` and `d/./x.csv`, or through a link) is read once, under its first name.
pub fn inputs(paths: &[PathBuf]) -> Result<(Vec<PathBuf>, Vec<Skipped>, Vec<Merged>)> {
    let mut named = Vec::new();
    let mut skipped = Vec::new();
    let mut consider = |path: PathBuf, metadata: std::io::Result<std::fs::Metadata>| {
        let why = match metadata {
            Ok(metadata) if metadata.is_file() && metadata.len() > 0 => {
                named.push(path);
                return;
            }
            Ok(metadata) if metadata.is_file() => {
                "empty (a run that is still writing it?)".to_owned()
            }
            Ok(_) => "not a regular file".to_owned(),
            Err(error) => error.to_string(),
        };
        skipped.push(Skipped { path, why });
    };
    for path in paths {
        if std::fs::metadata(path).is_ok_and(|m| m.is_dir()) {
            let io = Error::io(path);
            for entry in std::fs::read_dir(path).map_err(&io)? {
                let entry = entry.map_err(&io)?.path();
                if entry.extension().is_some_and(|e| e == "csv") {
                    let metadata = std::fs::metadata(&entry);
                    consider(entry, metadata);
                }
            }
        } else {
            consider(path.clone(), std::fs::metadata(path));
        }
    }
    named.sort();
    named.dedup();
    skipped.sort_by(|a, b| a.path.cmp(&b.path));
    let (files, merged) = once_each(named);
    Ok((files, skipped, merged))
}

/// `named` with each file once: a second name of a file already named (its canonical
/// path the same) is left out, and said.
fn once_each(named: Vec<PathBuf>) -> (Vec<PathBuf>, Vec<Merged>) {
    let mut first: HashMap<PathBuf, PathBuf> = HashMap::new();
    let mut files = Vec::new();
    let mut merged = Vec::new();
    for path in named {
        let canonical = std::fs::canonicalize(&path).unwrap_or_else(|_| path.clone());
        match first.get(&canonical) {
            Some(earlier) => merged.push(Merged {
                path,
                into: earlier.clone(),
                how: Merge::SameFile,
            }),
            None => {
                first.insert(canonical, path.clone());
                files.push(path);
            }
        }
    }
    (files, merged)
}

/// An error's words without the path it names: the skipped list names it.
fn reason(error: Error) -> String {
    match error {
        Error::Results { message, .. } => message,
        Error::Io { error, .. } => error.to_string(),
        other => other.to_string(),
    }
}

/// The parts of one results file, in the order their settings first appear.
fn read_parts(path: &Path) -> Result<Vec<Part>> {
    let mut parts: Vec<Part> = Vec::new();
    for (_, row) in results::read_device(path)? {
        let index = match parts
            .iter()
            .position(|p| p.key.setting == row.setting() && p.key.sizing == row.sizing)
        {
            Some(index) => index,
            None => {
                parts.push(new_part(path, &row));
                parts.len() - 1
            }
        };
        let run = fingerprint(&row.timestamp_utc);
        // The case's strings move out of the row: nothing is copied per row.
        let Row {
            family,
            variant,
            params,
            status,
            gbps_median,
            ..
        } = row;
        let id = CaseId {
            family,
            variant,
            params,
        };
        let gbps = gbps_median.filter(|_| status == Status::Ok);
        parts[index]
            .cases
            .push((id, Measurement { status, gbps, run }));
    }
    Ok(parts)
}

/// A short fingerprint of a run's start time: equal for rows of one run.
fn fingerprint(timestamp: &str) -> u64 {
    let mut hasher = DefaultHasher::new();
    timestamp.hash(&mut hasher);
    hasher.finish()
}

/// A part for `row`'s setting and sizing, its GPU named by `row`.
fn new_part(path: &Path, row: &Row) -> Part {
    Part {
        key: GroupKey {
            device: row.device.clone(),
            backend: row.backend.clone(),
            setting: row.setting(),
            sizing: row.sizing,
        },
        gpu: GpuId::of(row),
        file: path.to_owned(),
        host: row.host.clone(),
        gpu_uuid: row.gpu_uuid.clone(),
        pci_bus_id: row.pci_bus_id.clone(),
        cases: Vec::new(),
    }
}
