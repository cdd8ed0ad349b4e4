//! `membench fleet`: many GPUs, one results file each, read side by side to find the
//! sick ones. GPUs of one model, backend, api/build and sizing form a group; per case
//! of a group the median and MAD of `gbps_median` say what is typical, and a GPU slower
//! than the median by more than the threshold and the noise is an outlier, named by
//! host, UUID and bus id. A GPU missing a case or failing one the others measured is
//! an outlier too. `docs/fleet.md` gives the rule and the formats.

mod render;
#[cfg(test)]
mod tests;

pub(crate) use render::{conclusion, gbps_text, introduction};
pub use render::{render, write};

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use rayon::prelude::*;

use super::{Difference, Rule, Side};
use crate::error::{Error, Result};
use crate::results::{self, Row, Status};
use crate::suite::{CaseId, RunSizing, Setting};

/// The threshold when none is given: 5 % slower than the median.
pub const DEFAULT_THRESHOLD: f64 = 0.05;

/// How many robust sigmas of the fleet's noise a difference must exceed to count.
pub const SIGMAS: f64 = 3.5;

/// The MAD times this is the standard deviation of a normal sample: the robust sigma.
pub const MAD_SCALE: f64 = 1.4826;

/// The fewest GPUs a group's cases are judged among.
pub const MIN_MEMBERS: usize = 3;

/// The exit status of a fleet with an outlier beyond the threshold.
pub const EXIT_OUTLIER: u8 = 3;

/// An input that was not read, and why.
#[derive(Clone, Debug)]
pub struct Skipped {
    pub path: PathBuf,
    pub why: String,
}

/// One GPU in one group: one file's rows of one api/build (and sizing).
#[derive(Clone, Debug)]
pub struct Member {
    pub file: PathBuf,
    /// The GPU as tables name it: its UUID, else host and bus id, else the file name.
    pub gpu: String,
    pub host: String,
    pub gpu_uuid: String,
    pub pci_bus_id: String,
    /// Its group, an index into [`Fleet::groups`].
    pub group: usize,
    /// Cases it is slower in than the median by more than the threshold and the noise.
    pub slower: usize,
    /// Cases it has no row for where most of its group has one.
    pub missing: usize,
    /// Cases it failed or skipped where most of its group measured them.
    pub failed: usize,
    /// Cases it is faster in beyond the threshold and the noise: reported, no failure.
    pub faster: usize,
    /// Its slowest case against the median: the case's index in its group's cases,
    /// and the distance ((x − median) / median).
    pub worst: Option<(usize, f64)>,
}

impl Member {
    /// The cases it is an outlier in: slower, missing or failed.
    pub fn outliers(&self) -> usize {
        self.slower + self.missing + self.failed
    }

    /// `host / short UUID` for a chart's label: the UUID's first eight digits, else the
    /// bus id, else the GPU's name.
    pub fn short_label(&self) -> String {
        let uuid = self.gpu_uuid.trim_start_matches("GPU-");
        let short = if known(uuid) {
            uuid.chars().take(8).collect()
        } else if known(&self.pci_bus_id) {
            self.pci_bus_id.clone()
        } else {
            self.gpu.clone()
        };
        if known(&self.host) {
            format!("{} / {short}", self.host)
        } else {
            short
        }
    }
}

/// GPUs measured alike: one model (`device`), backend, api/build and sizing.
#[derive(Clone, Debug)]
pub struct Group {
    pub device: String,
    pub backend: String,
    pub setting: Setting,
    /// `None` for files that did not record it (schema version 2 and older).
    pub sizing: Option<RunSizing>,
    /// Its GPUs, indices into [`Fleet::members`], in file order.
    pub members: Vec<usize>,
    /// Every case any of its GPUs has a row for, in case order.
    pub cases: Vec<Case>,
}

impl Group {
    /// Whether it has GPUs enough to judge them ([`MIN_MEMBERS`]).
    pub fn judged(&self) -> bool {
        self.members.len() >= MIN_MEMBERS
    }

    /// `NVIDIA H100 (vulkan), wgpu/default, sizing default`.
    pub fn label(&self) -> String {
        format!(
            "{} ({}), {}, sizing {}",
            self.device,
            self.backend,
            self.setting,
            sizing_text(self.sizing)
        )
    }
}

/// `default`, or the sizing's settings; `unrecorded` for old files.
pub fn sizing_text(sizing: Option<RunSizing>) -> String {
    sizing.map_or_else(|| "unrecorded".to_owned(), |s| s.to_string())
}

/// One case of a group: what is typical and where each GPU stands.
#[derive(Clone, Debug)]
pub struct Case {
    pub id: CaseId,
    /// The median of the GPUs' `gbps_median`, where at least [`MIN_MEMBERS`] have one.
    pub median_gbps: Option<f64>,
    /// The median absolute deviation from it, unscaled.
    pub mad_gbps: Option<f64>,
    /// The GPUs with a bandwidth for it.
    pub measured: usize,
    /// One per GPU of the group, in the group's order.
    pub cells: Vec<Cell>,
}

impl Case {
    /// The robust sigma relative to the median (1.4826 MAD / median).
    pub fn sigma(&self) -> Option<f64> {
        self.median_gbps
            .zip(self.mad_gbps)
            .map(|(median, mad)| MAD_SCALE * mad / median)
    }

    /// The GPUs it has as outliers.
    pub fn outliers(&self) -> usize {
        self.cells
            .iter()
            .filter(|c| c.standing.is_outlier())
            .count()
    }

    /// The smallest and largest distance from the median among its GPUs.
    pub fn extent(&self) -> Option<(f64, f64)> {
        self.cells
            .iter()
            .filter_map(|c| c.distance)
            .fold(None, |extent, d| match extent {
                None => Some((d, d)),
                Some((low, high)) => Some((f64::min(low, d), f64::max(high, d))),
            })
    }
}

/// One GPU in one case.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Cell {
    /// Its row's status; `None` where it has no row for the case.
    pub status: Option<Status>,
    /// Its `gbps_median`, on an `ok` row.
    pub gbps: Option<f64>,
    /// (x − median) / median: −0.08 is 8 % slower.
    pub distance: Option<f64>,
    /// (x − median) / (1.4826 MAD); none where the MAD is 0.
    pub z: Option<f64>,
    pub standing: Standing,
}

/// Where a GPU stands in a case.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Standing {
    /// Within the threshold or the noise of the median.
    Within,
    /// Slower by more than the threshold and the noise: an outlier.
    Slower,
    /// Faster by more than the threshold and the noise: reported, not a failure.
    Faster,
    /// No row where most of the group has one: an outlier.
    Missing,
    /// Failed where most of the group measured it: an outlier.
    Failed,
    /// Skipped where most of the group measured it: an outlier.
    Skipped,
    /// Nothing to judge: too few GPUs measured it, or most did not.
    Unjudged,
}

impl Standing {
    /// The text form, as in the CSV.
    pub fn as_str(self) -> &'static str {
        match self {
            Standing::Within => "within",
            Standing::Slower => "slower",
            Standing::Faster => "faster",
            Standing::Missing => "missing",
            Standing::Failed => "failed",
            Standing::Skipped => "skipped",
            Standing::Unjudged => "unjudged",
        }
    }

    /// Whether it makes the fleet fail.
    pub fn is_outlier(self) -> bool {
        matches!(
            self,
            Standing::Slower | Standing::Missing | Standing::Failed | Standing::Skipped
        )
    }
}

/// Every GPU read, grouped and judged.
#[derive(Clone, Debug)]
pub struct Fleet {
    /// The fraction slower than the median beyond which a GPU is an outlier.
    pub threshold: f64,
    /// The files read.
    pub files: usize,
    /// The inputs not read, and why.
    pub skipped: Vec<Skipped>,
    pub members: Vec<Member>,
    pub groups: Vec<Group>,
}

/// What a fleet comes to, for the exit status.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tally {
    pub files: usize,
    pub skipped_files: usize,
    /// Distinct GPUs (by [`Member::gpu`]).
    pub gpus: usize,
    /// Distinct models (`device`).
    pub models: usize,
    pub groups: usize,
    /// GPUs in groups too small to judge.
    pub unjudged_gpus: usize,
    /// Distinct GPUs with an outlier case.
    pub outlier_gpus: usize,
    /// Outlier cases, over every GPU.
    pub outliers: usize,
    /// Cases faster than the median beyond the threshold, over every GPU.
    pub faster: usize,
}

impl Tally {
    /// Whether no GPU is an outlier in any case.
    pub fn passes(&self) -> bool {
        self.outliers == 0
    }

    /// 0 where the fleet passes, [`EXIT_OUTLIER`] where it does not.
    pub fn exit_code(&self) -> u8 {
        if self.passes() { 0 } else { EXIT_OUTLIER }
    }
}

impl Fleet {
    /// Reads `paths` (files, and directories for the `*.csv` files in them) in
    /// parallel and judges every group at `threshold` (a fraction: 0.05 for 5 %). A
    /// file that cannot be read is skipped and listed; none read at all is an error.
    pub fn load(paths: &[PathBuf], threshold: f64) -> Result<Fleet> {
        check_threshold(threshold)?;
        let (files, mut skipped) = inputs(paths)?;
        let read: Vec<(&PathBuf, Result<Vec<Part>>)> = files
            .par_iter()
            .map(|path| (path, read_parts(path)))
            .collect();
        let mut parts = Vec::new();
        let mut count = 0;
        for (path, outcome) in read {
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
        if parts.is_empty() && skipped.is_empty() {
            return Err(Error::Results {
                path: paths.first().cloned().unwrap_or_default(),
                message: "no results CSV here: name the files, or a directory of them".to_owned(),
            });
        }
        if parts.is_empty() {
            let first = skipped
                .iter()
                .take(3)
                .map(|s| format!("{}: {}", shown(&s.path), s.why))
                .collect::<Vec<_>>();
            return Err(Error::Results {
                path: paths.first().cloned().unwrap_or_default(),
                message: format!(
                    "no results file read ({} skipped{}{})",
                    skipped.len(),
                    if first.is_empty() { "" } else { ": " },
                    first.join("; ")
                ),
            });
        }
        let mut fleet = analyse(parts, threshold);
        fleet.files = count;
        fleet.skipped = skipped;
        Ok(fleet)
    }

    /// The counts the exit status is decided on.
    pub fn tally(&self) -> Tally {
        let distinct = |members: &mut dyn Iterator<Item = &Member>| {
            let mut names: Vec<&str> = members.map(|m| m.gpu.as_str()).collect();
            names.sort_unstable();
            names.dedup();
            names.len()
        };
        let mut models: Vec<&str> = self.groups.iter().map(|g| g.device.as_str()).collect();
        models.sort_unstable();
        models.dedup();
        Tally {
            files: self.files,
            skipped_files: self.skipped.len(),
            gpus: distinct(&mut self.members.iter()),
            models: models.len(),
            groups: self.groups.len(),
            unjudged_gpus: distinct(
                &mut self
                    .members
                    .iter()
                    .filter(|m| !self.groups[m.group].judged()),
            ),
            outlier_gpus: distinct(&mut self.members.iter().filter(|m| m.outliers() > 0)),
            outliers: self.members.iter().map(Member::outliers).sum(),
            faster: self.members.iter().map(|m| m.faster).sum(),
        }
    }

    /// A member's cell in case `case` of its group.
    pub fn cell(&self, member: usize, case: usize) -> Option<&Cell> {
        let group = &self.groups[self.members.get(member)?.group];
        let position = group.members.iter().position(|&m| m == member)?;
        group.cases.get(case)?.cells.get(position)
    }
}

/// An error unless `threshold` is a fraction between 0 and 1.
fn check_threshold(threshold: f64) -> Result<()> {
    if threshold.is_finite() && threshold > 0.0 && threshold < 1.0 {
        Ok(())
    } else {
        Err(Error::Usage(format!(
            "a fleet's threshold is a percentage above 0 and below 100, not {}",
            threshold * 100.0
        )))
    }
}

/// The files `paths` name: each file, and each directory's `*.csv` files; empty
/// files and paths that are not there are skipped, with why. Sorted, each once.
pub fn inputs(paths: &[PathBuf]) -> Result<(Vec<PathBuf>, Vec<Skipped>)> {
    let mut files = Vec::new();
    let mut skipped = Vec::new();
    let mut consider = |path: PathBuf, metadata: std::io::Result<std::fs::Metadata>| {
        let why = match metadata {
            Ok(metadata) if metadata.is_file() && metadata.len() > 0 => {
                files.push(path);
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
    files.sort();
    files.dedup();
    skipped.sort_by(|a, b| a.path.cmp(&b.path));
    Ok((files, skipped))
}

/// An error's words without the path it names: the skipped list names it.
fn reason(error: Error) -> String {
    match error {
        Error::Results { message, .. } => message,
        Error::Io { error, .. } => error.to_string(),
        other => other.to_string(),
    }
}

/// A path as printed: any control character escaped, since file names are not checked.
pub fn shown(path: &Path) -> String {
    path.display()
        .to_string()
        .chars()
        .map(|c| {
            if c.is_control() {
                c.escape_debug().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// Whether an identity column names something: not empty and not `-`.
fn known(text: &str) -> bool {
    !text.is_empty() && text != "-"
}

/// What a group is keyed by.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct GroupKey {
    device: String,
    backend: String,
    setting: Setting,
    sizing: Option<RunSizing>,
}

/// A GPU's row of a case, as judged: the GPU (its file's part, or its position in
/// its group), the status and the bandwidth of an `ok` row.
type Entry = (usize, Status, Option<f64>);

/// One file's rows of one setting and sizing, reduced to what is judged.
struct Part {
    key: GroupKey,
    member: Member,
    cases: Vec<(CaseId, Status, Option<f64>)>,
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
        // The case's strings move out of the row: nothing is copied per row.
        let Row {
            family,
            variant,
            param,
            status,
            gbps_median,
            ..
        } = row;
        let id = CaseId {
            family,
            variant,
            params: param,
        };
        let gbps = gbps_median.filter(|_| status == Status::Ok);
        parts[index].cases.push((id, status, gbps));
    }
    Ok(parts)
}

/// A part for `row`'s setting and sizing, its GPU named by `row`.
fn new_part(path: &Path, row: &Row) -> Part {
    let gpu = if known(&row.gpu_uuid) {
        row.gpu_uuid.clone()
    } else if known(&row.host) && known(&row.pci_bus_id) {
        format!("{} {}", row.host, row.pci_bus_id)
    } else {
        shown(Path::new(path.file_name().unwrap_or(path.as_os_str())))
    };
    Part {
        key: GroupKey {
            device: row.device.clone(),
            backend: row.backend.clone(),
            setting: row.setting(),
            sizing: row.sizing,
        },
        member: Member {
            file: path.to_owned(),
            gpu,
            host: row.host.clone(),
            gpu_uuid: row.gpu_uuid.clone(),
            pci_bus_id: row.pci_bus_id.clone(),
            group: 0,
            slower: 0,
            missing: 0,
            failed: 0,
            faster: 0,
            worst: None,
        },
        cases: Vec::new(),
    }
}

/// The parts grouped and judged; no file counted, none skipped.
fn analyse(parts: Vec<Part>, threshold: f64) -> Fleet {
    let mut index: HashMap<GroupKey, usize> = HashMap::new();
    let mut grouped: Vec<(GroupKey, Vec<Part>)> = Vec::new();
    for part in parts {
        let at = *index.entry(part.key.clone()).or_insert_with(|| {
            grouped.push((part.key.clone(), Vec::new()));
            grouped.len() - 1
        });
        grouped[at].1.push(part);
    }
    grouped.sort_by(|(a, _), (b, _)| {
        (&a.device, &a.backend, a.setting, sizing_text(a.sizing)).cmp(&(
            &b.device,
            &b.backend,
            b.setting,
            sizing_text(b.sizing),
        ))
    });
    let judged: Vec<(Group, Vec<Member>)> = grouped
        .into_par_iter()
        .map(|(key, parts)| judge_group(key, parts, threshold))
        .collect();
    let mut fleet = Fleet {
        threshold,
        files: 0,
        skipped: Vec::new(),
        members: Vec::new(),
        groups: Vec::new(),
    };
    for (number, (mut group, members)) in judged.into_iter().enumerate() {
        let first = fleet.members.len();
        group.members = (first..first + members.len()).collect();
        fleet
            .members
            .extend(members.into_iter().map(|m| Member { group: number, ..m }));
        fleet.groups.push(group);
    }
    fleet
}

/// One group's cases judged, and its GPUs with their counts.
fn judge_group(key: GroupKey, parts: Vec<Part>, threshold: f64) -> (Group, Vec<Member>) {
    let size = parts.len();
    let mut members = Vec::with_capacity(size);
    // Per case, its rows: (position of the GPU, status, bandwidth).
    let mut rows: Vec<(CaseId, Vec<Entry>)> = Vec::new();
    let mut column: HashMap<CaseId, usize> = HashMap::new();
    for (position, part) in parts.into_iter().enumerate() {
        members.push(part.member);
        for (id, status, gbps) in part.cases {
            match column.get(&id) {
                Some(&at) => rows[at].1.push((position, status, gbps)),
                None => {
                    column.insert(id.clone(), rows.len());
                    rows.push((id, vec![(position, status, gbps)]));
                }
            }
        }
    }
    drop(column);
    rows.sort_by(|(a, _), (b, _)| a.cmp(b));
    let cases: Vec<Case> = rows
        .into_par_iter()
        .map(|(id, rows)| judge_case(id, &rows, size, threshold))
        .collect();
    for (index, case) in cases.iter().enumerate() {
        for (member, cell) in members.iter_mut().zip(&case.cells) {
            match cell.standing {
                Standing::Slower => member.slower += 1,
                Standing::Faster => member.faster += 1,
                Standing::Missing => member.missing += 1,
                Standing::Failed | Standing::Skipped => member.failed += 1,
                Standing::Within | Standing::Unjudged => {}
            }
            if let Some(distance) = cell.distance
                && member.worst.is_none_or(|(_, worst)| distance < worst)
            {
                member.worst = Some((index, distance));
            }
        }
    }
    let group = Group {
        device: key.device,
        backend: key.backend,
        setting: key.setting,
        sizing: key.sizing,
        members: Vec::new(),
        cases,
    };
    (group, members)
}

/// One case of a group of `size` GPUs, from the rows they have for it.
fn judge_case(id: CaseId, rows: &[Entry], size: usize, threshold: f64) -> Case {
    let mut cells = vec![
        Cell {
            status: None,
            gbps: None,
            distance: None,
            z: None,
            standing: Standing::Unjudged,
        };
        size
    ];
    for &(position, status, gbps) in rows {
        cells[position].status = Some(status);
        cells[position].gbps = gbps;
    }
    let mut values: Vec<f64> = cells.iter().filter_map(|c| c.gbps).collect();
    let measured = values.len();
    let judged = size >= MIN_MEMBERS;
    let stats = (judged && measured >= MIN_MEMBERS)
        .then(|| median_mad(&mut values))
        .flatten();
    // A case most GPUs have a row for is expected of every one; one most measured,
    // measured by every one that has its row.
    let expected = judged && rows.len() * 2 > size;
    let mostly_measured = judged && measured * 2 > rows.len();
    for cell in &mut cells {
        cell.standing = match (cell.status, cell.gbps, stats) {
            (None, _, _) if expected => Standing::Missing,
            (Some(Status::Failed), _, _) if mostly_measured => Standing::Failed,
            (Some(Status::Skipped), _, _) if mostly_measured => Standing::Skipped,
            (Some(_), Some(gbps), Some((median, mad))) => {
                let difference = difference(gbps, median, mad);
                cell.distance = Some(difference.relative);
                cell.z = difference.z();
                stand(difference, threshold)
            }
            _ => Standing::Unjudged,
        };
    }
    Case {
        id,
        median_gbps: stats.map(|(median, _)| median),
        mad_gbps: stats.map(|(_, mad)| mad),
        measured,
        cells,
    }
}

/// The median of `values` and their median absolute deviation from it (unscaled);
/// `None` for no values. Sorts `values`.
pub fn median_mad(values: &mut [f64]) -> Option<(f64, f64)> {
    let median = median_of_sorted({
        values.sort_by(f64::total_cmp);
        values
    })?;
    let mut deviations: Vec<f64> = values.iter().map(|v| (v - median).abs()).collect();
    deviations.sort_by(f64::total_cmp);
    Some((median, median_of_sorted(&deviations)?))
}

/// The median of sorted values.
fn median_of_sorted(sorted: &[f64]) -> Option<f64> {
    let n = sorted.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(sorted[n / 2]),
        _ => Some((sorted[n / 2 - 1] + sorted[n / 2]) / 2.0),
    }
}

/// The fleet's statistic: a GPU's figure against its case's median, (x − median) /
/// median, with the robust sigma 1.4826 MAD / median (`mad` unscaled).
pub fn difference(gbps: f64, median: f64, mad: f64) -> Difference {
    Difference {
        relative: (gbps - median) / median,
        sigma: MAD_SCALE * mad / median,
    }
}

/// Where a difference stands by the noise rule at `threshold` and [`SIGMAS`].
pub fn stand(difference: Difference, threshold: f64) -> Standing {
    let rule = Rule {
        threshold,
        sigmas: SIGMAS,
    };
    match rule.side(difference) {
        Side::Within => Standing::Within,
        Side::Below => Standing::Slower,
        Side::Above => Standing::Faster,
    }
}
