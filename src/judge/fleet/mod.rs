//! `membench fleet`: many GPUs' results files read side by side to find the sick ones.
//! A GPU is one physical GPU ([`GpuId`]: its UUID, else host and bus id), however many
//! files hold it; GPUs of one model, backend, api/build and sizing form a group. Per
//! case of a group the median and MAD of the GPUs' `gbps_median` say what is typical,
//! and a GPU beyond the threshold and the noise ([`super::NoiseRule`]) is slower in it.
//!
//! A GPU is named sick only on evidence that spans cases: a family or a sweep in which
//! the median of its cases is slower than its siblings' ([`Span`]), a case that stays
//! slow when measured again (two runs of the GPU, slow in both), or a case it misses or
//! fails that most of its group measured. A case slow once, alone, is unsteady: it is
//! reported with the command that measures it again. `docs/fleet.md` gives the rule,
//! the formats and the exit statuses.

mod cases;
mod read;
mod render;
mod spans;
#[cfg(test)]
mod tests;
mod text;

pub use crate::results::GpuId;
pub use cases::Cell;
pub use cases::GroupCase;
pub(crate) use cases::Standing;
pub use read::inputs;
pub use render::{render, write};
pub(crate) use spans::Span;
pub(crate) use text::{conclusion, gbps_text, introduction, merged_line, remeasure, spans_text};

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use rayon::prelude::*;

use crate::error::{Error, Result};
use crate::suite::{CaseId, RunSizing, Setting};
use read::{GroupKey, Measurement, Part};

/// The threshold when none is given: 5 % slower than the median.
pub const DEFAULT_THRESHOLD: f64 = 0.05;

/// How many robust sigmas of the fleet's noise a difference must exceed to count.
pub(crate) const SIGMAS: f64 = 3.5;

/// The MAD times this is the standard deviation of a normal sample: the robust sigma.
pub(crate) const MAD_SCALE: f64 = 1.4826;

/// The fewest distinct GPUs a group is judged among.
pub(crate) const MIN_MEMBERS: usize = 3;

/// The exit status of a fleet with a sick GPU.
pub(crate) const EXIT_SICK: u8 = 3;

/// The exit status of a fleet with no sick GPU but an unsteady case: measure it again.
pub(crate) const EXIT_UNSTEADY: u8 = 4;

/// The exit status of a fleet judged only in part: a GPU in a group of fewer than
/// [`MIN_MEMBERS`], or a file not read (unless skips are allowed).
pub(crate) const EXIT_INCOMPLETE: u8 = 5;

/// How a fleet is judged.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Options {
    /// The fraction slower than the median that counts (beyond the noise too).
    pub threshold: f64,
    /// Whether a file that cannot be read leaves the gate open (otherwise the fleet is
    /// incomplete).
    pub allow_skips: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            threshold: DEFAULT_THRESHOLD,
            allow_skips: false,
        }
    }
}

/// An input that was not read, and why.
#[derive(Clone, Debug)]
pub struct Skipped {
    /// The file.
    pub path: PathBuf,
    /// Why it was not read.
    pub why: String,
}

/// A file that holds a GPU already read: read once, or merged into it.
#[derive(Clone, Debug)]
pub struct Merged {
    /// The file.
    pub path: PathBuf,
    /// The file it joins.
    pub into: PathBuf,
    /// Why it joins: the same run read twice, or another run of the GPU.
    pub how: Merge,
}

/// How a file joins another.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Merge {
    /// The same file under another name (`d/./x.csv`, a link): read once.
    SameFile,
    /// Another file of the GPU with the same run's rows (a copy): counted once.
    SameRun(GpuId),
    /// Another run of the GPU: its cases count as measured again.
    AnotherRun(GpuId),
}

/// What the fleet says of one GPU in its group.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Condition {
    /// Judged, and nothing against it.
    Healthy,
    /// Slower in a case once, alone: measure it again.
    Unsteady,
    /// Slower across a family or sweep, or in a case that stays slow when measured
    /// again, or missing or failing a case most of its group measured.
    Sick,
    /// In a group of fewer than [`MIN_MEMBERS`] GPUs.
    Unjudged,
}

impl Condition {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Condition::Healthy => "healthy",
            Condition::Unsteady => "unsteady",
            Condition::Sick => "sick",
            Condition::Unjudged => "unjudged",
        }
    }
}

/// One GPU in one group: its files' rows of one api/build (and sizing).
#[derive(Clone, Debug)]
pub(crate) struct Member {
    /// Its files in the order read; more than one where it was measured again.
    pub files: Vec<PathBuf>,
    pub gpu: GpuId,
    pub host: String,
    pub gpu_uuid: String,
    pub pci_bus_id: String,
    /// Its group, an index into [`Fleet::groups`].
    pub group: usize,
    pub(crate) condition: Condition,
    /// The spans it is slower in than its siblings: the span's index in its group's
    /// spans, and its distance.
    pub(crate) slow_spans: Vec<(usize, f64)>,
    /// Cases it is slower in, as evidence: in a slow span, or slow in every run.
    pub slower: usize,
    /// Cases slower once, alone: measure them again.
    pub unsteady: usize,
    /// Cases it has no row for where most of its group has one.
    pub missing: usize,
    /// Cases it failed or skipped where most of its group measured them.
    pub failed: usize,
    /// Cases it is faster in beyond the threshold and the noise: reported, no failure.
    pub faster: usize,
    /// Its slowest case against the median: the case's index in its group's cases,
    /// and the distance ((x − median) / median).
    pub(crate) worst: Option<(usize, f64)>,
}

impl Member {
    /// The cases that name it sick: slower, missing or failed.
    pub(crate) fn outliers(&self) -> usize {
        self.slower + self.missing + self.failed
    }

    /// The file it is shown by: its first.
    pub(crate) fn file(&self) -> &Path {
        self.files.first().map_or(Path::new(""), PathBuf::as_path)
    }

    /// `host / short UUID` for a chart's label: the UUID's first eight digits, else the
    /// bus id, else the GPU's name.
    pub(crate) fn short_label(&self) -> String {
        let uuid = self.gpu_uuid.trim_start_matches("GPU-");
        let short = if read::known(uuid) {
            uuid.chars().take(8).collect()
        } else if read::known(&self.pci_bus_id) {
            self.pci_bus_id.clone()
        } else {
            self.gpu.to_string()
        };
        if read::known(&self.host) {
            format!("{} / {short}", self.host)
        } else {
            short
        }
    }
}

/// GPUs measured alike: one model (`device`), backend, api/build and sizing.
#[derive(Clone, Debug)]
pub struct Group {
    /// The model, as the adapter names it.
    pub device: String,
    /// The graphics API wgpu ran on.
    pub backend: String,
    /// The api and build.
    pub setting: Setting,
    /// `None` for files that did not record it (schema version 2 and older).
    pub sizing: Option<RunSizing>,
    /// Its GPUs, indices into [`Fleet::members`], in the order first read.
    pub(crate) members: Vec<usize>,
    /// Every case any of its GPUs has a row for, in case order.
    pub cases: Vec<GroupCase>,
    /// Its families and sweeps of [`MIN_SPAN_CASES`] cases or more.
    pub(crate) spans: Vec<Span>,
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
pub(crate) fn sizing_text(sizing: Option<RunSizing>) -> String {
    sizing.map_or_else(|| "unrecorded".to_owned(), |s| s.to_string())
}

/// Every GPU read, grouped and judged.
#[derive(Clone, Debug)]
pub struct Fleet {
    /// The fraction slower than the median that counts.
    pub threshold: f64,
    /// Whether unread files leave the gate open.
    pub allow_skips: bool,
    /// The files read.
    pub files: usize,
    /// The inputs not read, and why.
    pub skipped: Vec<Skipped>,
    /// The files read once for two names, or merged into another file of their GPU.
    pub(crate) merged: Vec<Merged>,
    pub(crate) members: Vec<Member>,
    /// The groups of GPUs measured alike.
    pub groups: Vec<Group>,
}

/// What the gate concludes, the most serious first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Conclusion {
    /// A GPU is sick: exit [`EXIT_SICK`].
    Sick,
    /// No GPU is sick, but a case was slow once: exit [`EXIT_UNSTEADY`].
    Unsteady,
    /// Nothing found, but not every GPU was judged: exit [`EXIT_INCOMPLETE`].
    Incomplete,
    /// Every GPU judged, none sick or unsteady: exit 0.
    Healthy,
}

impl Conclusion {
    pub(crate) fn exit_code(self) -> u8 {
        match self {
            Conclusion::Sick => EXIT_SICK,
            Conclusion::Unsteady => EXIT_UNSTEADY,
            Conclusion::Incomplete => EXIT_INCOMPLETE,
            Conclusion::Healthy => 0,
        }
    }

    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Conclusion::Sick => "sick",
            Conclusion::Unsteady => "unsteady",
            Conclusion::Incomplete => "incomplete",
            Conclusion::Healthy => "healthy",
        }
    }
}

/// What a fleet comes to: the counts the conclusion is drawn from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tally {
    /// Input files.
    pub files: usize,
    pub(crate) skipped_files: usize,
    pub(crate) merged_files: usize,
    /// Distinct GPUs (by [`Member::gpu`]).
    pub(crate) gpus: usize,
    /// Distinct models (`device`).
    pub(crate) models: usize,
    /// Groups of GPUs measured alike.
    pub groups: usize,
    /// Distinct GPUs in a group judged.
    pub(crate) judged_gpus: usize,
    /// Distinct GPUs in groups too small to judge.
    pub(crate) unjudged_gpus: usize,
    /// Distinct GPUs named sick.
    pub sick_gpus: usize,
    /// Distinct GPUs with an unsteady case and none sick.
    pub(crate) unsteady_gpus: usize,
    /// Cases that name GPUs sick (slower, missing or failed), over every GPU.
    pub(crate) outliers: usize,
    /// Unsteady cases, over every GPU.
    pub unsteady: usize,
    /// Cases faster than the median beyond the threshold, over every GPU.
    pub faster: usize,
    pub(crate) skips_allowed: bool,
}

impl Tally {
    /// The gate's conclusion.
    pub(crate) fn conclusion(&self) -> Conclusion {
        let skipped = self.skipped_files > 0 && !self.skips_allowed;
        if self.sick_gpus > 0 {
            Conclusion::Sick
        } else if self.unsteady_gpus > 0 {
            Conclusion::Unsteady
        } else if self.unjudged_gpus > 0 || skipped {
            Conclusion::Incomplete
        } else {
            Conclusion::Healthy
        }
    }
}

impl Fleet {
    /// Reads `paths` (files, and directories for the `*.csv` files in them) in
    /// parallel and judges every group by `options`. A file that cannot be read is
    /// skipped and listed; none read at all is an error.
    pub fn load(paths: &[PathBuf], options: Options) -> Result<Fleet> {
        check_threshold(options.threshold)?;
        let read = read::read(paths)?;
        let mut fleet = analyse(read.parts, options.threshold);
        fleet.allow_skips = options.allow_skips;
        fleet.files = read.files;
        fleet.skipped = read.skipped;
        fleet.merged.splice(0..0, read.merged);
        Ok(fleet)
    }

    /// The counts the conclusion is drawn from.
    pub fn tally(&self) -> Tally {
        let distinct = |keep: &dyn Fn(&Member) -> bool| {
            let gpus: HashSet<&GpuId> = self
                .members
                .iter()
                .filter(|m| keep(m))
                .map(|m| &m.gpu)
                .collect();
            gpus.len()
        };
        let models: HashSet<&str> = self.groups.iter().map(|g| g.device.as_str()).collect();
        let sick = distinct(&|m| m.condition == Condition::Sick);
        let not_healthy =
            distinct(&|m| matches!(m.condition, Condition::Sick | Condition::Unsteady));
        Tally {
            files: self.files,
            skipped_files: self.skipped.len(),
            merged_files: self.merged.len(),
            gpus: distinct(&|_| true),
            models: models.len(),
            groups: self.groups.len(),
            judged_gpus: distinct(&|m| m.condition != Condition::Unjudged),
            unjudged_gpus: distinct(&|m| m.condition == Condition::Unjudged),
            sick_gpus: sick,
            unsteady_gpus: not_healthy - sick,
            outliers: self.members.iter().map(Member::outliers).sum(),
            unsteady: self.members.iter().map(|m| m.unsteady).sum(),
            faster: self.members.iter().map(|m| m.faster).sum(),
            skips_allowed: self.allow_skips,
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
    let judged: Vec<(Group, Vec<Member>, Vec<Merged>)> = grouped
        .into_par_iter()
        .map(|(key, parts)| judge_group(key, parts, threshold))
        .collect();
    let mut fleet = Fleet {
        threshold,
        allow_skips: false,
        files: 0,
        skipped: Vec::new(),
        merged: Vec::new(),
        members: Vec::new(),
        groups: Vec::new(),
    };
    for (number, (mut group, members, merged)) in judged.into_iter().enumerate() {
        let first = fleet.members.len();
        group.members = (first..first + members.len()).collect();
        fleet
            .members
            .extend(members.into_iter().map(|m| Member { group: number, ..m }));
        fleet.groups.push(group);
        // A file of several settings merges in each of their groups: said once.
        for file in merged {
            if !fleet.merged.iter().any(|m| m.path == file.path) {
                fleet.merged.push(file);
            }
        }
    }
    fleet
}

/// A GPU's measurement of a case, as judged: its position in its group, and the
/// measurement.
type Entry = (usize, Measurement);

/// Per case of a group, in case order, every GPU's measurements of it.
type Rows = Vec<(CaseId, Vec<Entry>)>;

/// One group's GPUs (its parts merged by GPU), its cases judged, its spans read, and
/// each GPU's condition.
fn judge_group(
    key: GroupKey,
    parts: Vec<Part>,
    threshold: f64,
) -> (Group, Vec<Member>, Vec<Merged>) {
    let (mut members, rows, merged) = merge(parts);
    let size = members.len();
    let mut cases: Vec<GroupCase> = rows
        .into_par_iter()
        .map(|(id, entries)| cases::judge_case(id, entries, size, threshold))
        .collect();
    let spans = spans::spans_of(&cases);
    let slow = spans::slow_spans(&cases, &spans, size, threshold);
    let judged = size >= MIN_MEMBERS;
    for (position, (member, slow_spans)) in members.iter_mut().zip(slow).enumerate() {
        let in_slow_span = |index: usize| {
            slow_spans
                .iter()
                .any(|&(span, _)| spans[span].cases.contains(&index))
        };
        cases::count(member, position, &mut cases, in_slow_span);
        member.slow_spans = slow_spans;
        member.condition = condition(member, judged);
    }
    let group = Group {
        device: key.device,
        backend: key.backend,
        setting: key.setting,
        sizing: key.sizing,
        members: Vec::new(),
        cases,
        spans,
    };
    (group, members, merged)
}

/// A GPU's condition from its counts.
fn condition(member: &Member, judged: bool) -> Condition {
    if !judged {
        Condition::Unjudged
    } else if !member.slow_spans.is_empty() || member.outliers() > 0 {
        Condition::Sick
    } else if member.unsteady > 0 {
        Condition::Unsteady
    } else {
        Condition::Healthy
    }
}

/// A group's parts merged by GPU: its members in the order first read, per case (in
/// case order) every GPU's measurements, and the files merged into another.
fn merge(parts: Vec<Part>) -> (Vec<Member>, Rows, Vec<Merged>) {
    let mut members: Vec<Member> = Vec::new();
    let mut runs: Vec<HashSet<u64>> = Vec::new();
    let mut position: HashMap<GpuId, usize> = HashMap::new();
    let mut merged = Vec::new();
    let mut rows: Rows = Vec::new();
    let mut column: HashMap<CaseId, usize> = HashMap::new();
    for part in parts {
        let part_runs: HashSet<u64> = part.cases.iter().map(|(_, m)| m.run).collect();
        let at = match position.get(&part.gpu) {
            Some(&at) => {
                let how = if part_runs.is_subset(&runs[at]) {
                    Merge::SameRun(part.gpu.clone())
                } else {
                    Merge::AnotherRun(part.gpu.clone())
                };
                merged.push(Merged {
                    path: part.file.clone(),
                    into: members[at].file().to_owned(),
                    how,
                });
                members[at].files.push(part.file.clone());
                runs[at].extend(part_runs);
                at
            }
            None => {
                position.insert(part.gpu.clone(), members.len());
                runs.push(part_runs);
                members.push(new_member(&part));
                members.len() - 1
            }
        };
        for (id, measurement) in part.cases {
            match column.get(&id) {
                Some(&c) => rows[c].1.push((at, measurement)),
                None => {
                    column.insert(id.clone(), rows.len());
                    rows.push((id, vec![(at, measurement)]));
                }
            }
        }
    }
    rows.sort_by(|(a, _), (b, _)| a.cmp(b));
    (members, rows, merged)
}

/// The member a GPU's first part makes.
fn new_member(part: &Part) -> Member {
    Member {
        files: vec![part.file.clone()],
        gpu: part.gpu.clone(),
        host: part.host.clone(),
        gpu_uuid: part.gpu_uuid.clone(),
        pci_bus_id: part.pci_bus_id.clone(),
        group: 0,
        condition: Condition::Unjudged,
        slow_spans: Vec::new(),
        slower: 0,
        unsteady: 0,
        missing: 0,
        failed: 0,
        faster: 0,
        worst: None,
    }
}
