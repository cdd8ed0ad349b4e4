//! `membench simulate --validate`: every measured row of a results file predicted
//! again, now, by the current simulator, and judged against its measurement.
//!
//! Per file (one device): the rows of the build closest to the hardware
//! ([`hardware_build`]), the device's closest preset (or a forced one) calibrated from
//! the [`CALIBRATION`] rows ([`calibrate`]), each measured `ok` row's case rebuilt from
//! the registry at the row's sizing and predicted on that model. A row whose case the
//! registry no longer has (or sizes differently, so that the kernel would not be the
//! one measured) is skipped and listed, never an error. Transfer rows (wgpu's, of the
//! default build that measures them, and CUDA's) are predicted by the transfer model
//! ([`crate::sim::transfer`]) for their api, calibrated from CUDA's pinned uploads.
//!
//! The predictions are made afresh ([`Predictions::Afresh`]: `simulate --validate`,
//! `report --resimulate`), or taken from the `sim_*` columns the run recorded beside
//! each measurement ([`Predictions::Recorded`]: `report`, in seconds), a row that
//! recorded none predicted now. [`progress`] shows each file's stages on stderr.
//!
//! The judgement ([`stats`]) is of measured ÷ predicted bandwidth per row (the
//! `measured_over_sim` column's ratio), summarised per family for the held-out rows
//! and, apart, for the calibration rows (the `all` line of the kernel families: the
//! transfer model is judged on its own line), and of the order within each ladder and sweep
//! ([`rank_groups`]). `membench report` draws the same [`Validation`] as its
//! "Simulator" section.

mod groups;
pub mod progress;
pub mod published;
mod render;
pub(crate) mod stats;

use std::path::{Path, PathBuf};

use crate::calibrate::{
    CALIBRATION, Calibration, CalibrationRow, TRANSFER_BUILD, calibrate, hardware_build,
};
use crate::results::DeviceResults;
use crate::results::{Row, Status};
use crate::sim::device::{self as sim_device, DeviceModel};
use crate::sim::model::Bound;
use crate::suite::selects;
use crate::suite::{Api, Build, CaseId, Family, Rebuilder, Rebuilt, Unmatched};
pub(crate) use progress::Stage;
pub use progress::StageProgress;

/// Whether `row` is one [`validate`] judges: a kernel row of the wgpu `build` closest
/// to the hardware, or a transfer row (wgpu's of the default build, the one that
/// measures transfers, or CUDA's).
fn judged_row(row: &Row, build: Option<Build>) -> bool {
    if row.family == Family::Transfer {
        row.api == Api::Cuda || (row.api == Api::Wgpu && row.build == TRANSFER_BUILD)
    } else {
        row.api == Api::Wgpu && Some(row.build) == build
    }
}
pub(crate) use groups::{GroupKind, RankGroup, rank_groups};
pub use render::render;
pub(crate) use render::{FORMATS, accuracy_table};
pub(crate) use stats::RANK_TIES;
use stats::{Accuracy, flat, rank_agreement};

/// What the device model of a validated file is calibrated from.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Calibrating<'a> {
    /// The file's own [`CALIBRATION`] rows, which are then judged apart.
    OwnRows,
    /// Nothing: the preset alone; every row is held out.
    Nothing,
    /// Another file's rows (`path`): every row of the validated files is held out,
    /// and every row of `path`, where it is validated too, counts as calibration.
    From { path: &'a Path, rows: &'a [Row] },
}

/// Where the predictions judged come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Predictions {
    /// Every row predicted now by the current simulator: minutes for a full run's file.
    Afresh,
    /// The predictions the run recorded beside each measurement (`sim_gbps`,
    /// `sim_bound`): seconds. A row that recorded none is predicted now.
    Recorded,
}

/// How the model of each validated file is made.
#[derive(Clone, Copy, Debug)]
pub struct Modelling<'a> {
    /// The preset; `None` for the one closest to each file's device.
    pub preset: Option<&'static DeviceModel>,
    pub(crate) calibrating: Calibrating<'a>,
    /// Whether the rows' predictions are made afresh or read from the file.
    pub predictions: Predictions,
}

impl Modelling<'_> {
    /// The closest preset, calibrated from each file's own rows, every row predicted
    /// now: what a run does.
    pub(crate) const OWN: Modelling<'static> = Modelling {
        preset: None,
        calibrating: Calibrating::OwnRows,
        predictions: Predictions::Afresh,
    };
}

/// Which rows a statistic is of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// Rows the model was not fitted to: its predictions.
    HeldOut,
    /// Rows the model was calibrated from: a fit, not a prediction.
    Calibration,
}

impl Role {
    /// The word the tables use.
    pub fn label(self) -> &'static str {
        match self {
            Role::HeldOut => "held-out",
            Role::Calibration => "calibration",
        }
    }
}

/// One measured row beside its new prediction.
#[derive(Clone, Debug)]
pub struct Judged {
    /// The case.
    pub id: CaseId,
    /// The api that measured it (CUDA's only among transfers).
    pub api: Api,
    /// Whether the model was fitted to it.
    pub role: Role,
    /// The measured bandwidth, in GB/s.
    pub measured_gbps: f64,
    /// The case's bytes over the predicted time: the same bytes as the measurement's.
    pub predicted_gbps: f64,
    /// What bounds the prediction; `None` where a recorded one did not say (files of
    /// schema version 3 and older).
    pub bound: Option<Bound>,
}

impl Judged {
    /// `row`, judged in `role` against a prediction of `predicted_gbps`.
    fn of(row: &Row, role: Role, predicted_gbps: f64, bound: Option<Bound>) -> Judged {
        Judged {
            id: row.id(),
            api: row.api,
            role,
            measured_gbps: row.gbps_median.unwrap_or_default(),
            predicted_gbps,
            bound,
        }
    }

    /// Measured ÷ predicted bandwidth (= predicted ÷ measured time).
    pub fn ratio(&self) -> f64 {
        self.measured_gbps / self.predicted_gbps
    }
}

/// Why a measured row was not judged.
#[derive(Clone, Debug, PartialEq)]
pub enum Unjudged {
    /// The registry has no kernel of the row's case to predict.
    Unmatched(Unmatched),
    /// The simulator could not run the kernel.
    Failed(String),
    /// The simulator predicts no time (no modelled traffic): no ratio.
    NoTime,
    /// The model has no term for the case ([`crate::sim::unmodelled`]): why.
    NotSimulated(&'static str),
}

impl std::fmt::Display for Unjudged {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unjudged::Unmatched(why) => why.fmt(f),
            Unjudged::Failed(why) => write!(f, "simulator: {why}"),
            Unjudged::NoTime => f.write_str("the simulator predicts no time (bound `none`)"),
            Unjudged::NotSimulated(why) => write!(f, "not simulated: {why}"),
        }
    }
}

/// One file's validation.
#[derive(Clone, Debug)]
pub struct Validation {
    /// The results file.
    pub path: PathBuf,
    /// Its adapter's name.
    pub device: String,
    /// The wgpu build whose rows were judged; `None` where the file has no wgpu row.
    pub build: Option<Build>,
    /// The model the predictions were made on.
    pub model: DeviceModel,
    /// What the model was calibrated from, in words.
    pub calibrated: String,
    /// Each judged row, measured beside predicted.
    pub judged: Vec<Judged>,
    /// The measured rows of the build not judged, by case, and why.
    pub unjudged: Vec<NotJudged>,
    /// Seconds the predictions took.
    pub seconds: f64,
}

/// Validates the measured rows of one file (`path`, `rows`: one device) with a model
/// made as `modelling` says, judging only the cases that match one of `filters` (all
/// for none; calibration reads every row); each stage shows on `progress`.
pub fn validate(
    path: &Path,
    rows: &[Row],
    modelling: Modelling<'_>,
    filters: &[String],
    progress: &StageProgress,
) -> Validation {
    let started = std::time::Instant::now();
    let device = rows.first().map_or_else(String::new, |r| r.device.clone());
    let build = hardware_build(rows);
    let preset = modelling
        .preset
        .unwrap_or_else(|| sim_device::closest_preset(&device));
    let measured = rows
        .iter()
        .filter(|r| judged_row(r, build) && r.status == Status::Ok)
        .filter(|r| r.gbps_median.is_some_and(|g| g > 0.0))
        .filter(|r| selects(filters, &r.id().to_string()));
    // Recorded predictions are taken as they are; the rest are made now.
    let (recorded, unpredicted): (Vec<&Row>, Vec<&Row>) = measured.partition(|r| {
        modelling.predictions == Predictions::Recorded && r.sim_gbps.is_some_and(|g| g > 0.0)
    });
    let mut judged: Vec<Judged> = recorded
        .iter()
        .map(|row| {
            let role = if calibrates(row, build) {
                Role::Calibration
            } else {
                Role::HeldOut
            };
            Judged::of(row, role, row.sim_gbps.unwrap_or_default(), row.sim_bound)
        })
        .collect();
    let recorded_words = "the predictions its rows recorded (sim_gbps)";
    let (model, calibrated, unjudged) = if unpredicted.is_empty() && !recorded.is_empty() {
        (*preset, recorded_words.to_owned(), Vec::new())
    } else {
        let stage = progress.stage(&format!("calibrating the {} preset", preset.name), 0);
        let (calibration, words) = model_of(preset, modelling.calibrating, rows);
        drop(stage);
        let role = |row: &Row| match modelling.calibrating {
            Calibrating::OwnRows
                if calibrates(row, build)
                    && calibration
                        .used
                        .iter()
                        .any(|(id, api)| *id == row.id() && *api == row.api) =>
            {
                Role::Calibration
            }
            Calibrating::From { path: from, .. } if from == path => Role::Calibration,
            _ => Role::HeldOut,
        };
        let (predicted, unjudged) = predict_now(&unpredicted, &calibration.model, &role, progress);
        judged.extend(predicted);
        let words = if recorded.is_empty() {
            words
        } else {
            format!(
                "{recorded_words}; {} rows that recorded none predicted now, {words}",
                unpredicted.len()
            )
        };
        (calibration.model, words, unjudged)
    };
    Validation {
        path: path.to_owned(),
        device,
        build,
        model,
        calibrated,
        judged,
        unjudged,
        seconds: started.elapsed().as_secs_f64(),
    }
}

/// Whether `row` is one a model is calibrated from: a [`CALIBRATION`] row's case in
/// its api (and, for wgpu, the build judged).
fn calibrates(row: &Row, build: Option<Build>) -> bool {
    CALIBRATION
        .iter()
        .any(|calibration| calibration.takes(row, build))
}

/// The model `preset` calibrated as `calibrating` says (from `rows`, the file's own),
/// and what it was calibrated from, in words.
fn model_of(
    preset: &DeviceModel,
    calibrating: Calibrating<'_>,
    rows: &[Row],
) -> (Calibration, String) {
    match calibrating {
        Calibrating::OwnRows => {
            let calibration = calibrate(preset, rows);
            let words = used_words(&calibration, "its own rows");
            (calibration, words)
        }
        Calibrating::Nothing => (
            Calibration {
                model: *preset,
                used: Vec::new(),
            },
            "the preset alone (not calibrated)".to_owned(),
        ),
        Calibrating::From { path: from, rows } => {
            let calibration = calibrate(preset, rows);
            let words = used_words(&calibration, &from.display().to_string());
            (calibration, words)
        }
    }
}

/// `rows` predicted now on `model` and judged, each in its `role`: kernels by the
/// memory model (in parallel, a step of `progress` each), transfers by the transfer
/// model from their rows alone. The rows that cannot be, with why.
fn predict_now(
    rows: &[&Row],
    model: &DeviceModel,
    role: &dyn Fn(&Row) -> Role,
    progress: &StageProgress,
) -> (Vec<Judged>, Vec<NotJudged>) {
    // Transfers need no case rebuilt, nor the measuring host's limits (its cores for
    // the threaded paths) met here.
    let (transfers, kernels): (Vec<&Row>, Vec<&Row>) =
        rows.iter().partition(|r| r.family == Family::Transfer);
    let (found, mut unjudged) = cases_of(&kernels);
    let (found, cases): (Vec<&Row>, Vec<Rebuilt>) = found.into_iter().unzip();
    let unmodelled: Vec<Option<&'static str>> = cases
        .iter()
        .map(|(experiment, case)| crate::sim::unmodelled(experiment, case))
        .collect();
    let stage = (!cases.is_empty())
        .then(|| progress.stage(&format!("predicting {} rows", cases.len()), cases.len()));
    let step = || stage.iter().for_each(Stage::step);
    let predictions = crate::run::predict_cases(&cases, model, &step);
    drop(stage);
    let transfer_predictions = transfers.iter().map(|row| {
        let id = row.id();
        let experiment = crate::suite::REGISTRY
            .iter()
            .find(|e| e.family == id.family && e.variant == id.variant);
        let case = (&id.params, row.bytes);
        let prediction = experiment
            .and_then(|experiment| crate::run::predict_transfer(model, experiment, case, row.api));
        (*row, prediction)
    });
    let mut judged = Vec::new();
    let kernel_predictions = found.into_iter().zip(predictions).zip(unmodelled);
    for ((row, prediction), unmodelled) in
        kernel_predictions.chain(transfer_predictions.map(|judged| (judged, None)))
    {
        match prediction {
            Some(Ok(p)) if p.time_s > 0.0 && p.effective_gbps > 0.0 => {
                judged.push(Judged::of(row, role(row), p.effective_gbps, Some(p.bound)));
            }
            Some(Ok(_)) => unjudged.push((row.id(), Unjudged::NoTime)),
            Some(Err(why)) => unjudged.push((row.id(), Unjudged::Failed(why))),
            None if row.family == Family::Transfer => {
                unjudged.push((row.id(), Unjudged::Unmatched(Unmatched::Gone)));
            }
            None => unjudged.push((
                row.id(),
                unmodelled.map_or(Unjudged::NoTime, Unjudged::NotSimulated),
            )),
        }
    }
    (judged, unjudged)
}

/// Every file of `devices` (a report's inputs: one entry per file and setting)
/// validated as a run would predict it (the closest preset, calibrated from the file's
/// own rows), with the predictions `predictions` says, each file's stages on
/// `progress`.
pub fn of_results(
    devices: &[DeviceResults],
    predictions: Predictions,
    progress: &StageProgress,
) -> Vec<Validation> {
    let mut files: Vec<&Path> = Vec::new();
    for device in devices {
        if !files.contains(&device.path.as_path()) {
            files.push(&device.path);
        }
    }
    let modelling = Modelling {
        predictions,
        ..Modelling::OWN
    };
    let count = files.len();
    files
        .into_iter()
        .enumerate()
        .map(|(index, path)| {
            let rows: Vec<Row> = devices
                .iter()
                .filter(|d| d.path == path)
                .flat_map(|d| d.rows.iter().cloned())
                .collect();
            let progress = progress.tagged(file_tag(index, count, path));
            validate(path, &rows, modelling, &[], &progress)
        })
        .collect()
}

/// `[2/3] results/x.csv`: which file of how many, in progress lines.
pub(crate) fn file_tag(index: usize, count: usize, path: &Path) -> String {
    format!("[{}/{count}] {}", index + 1, path.display())
}

/// What `calibration` was fitted to, in words: its rows in `source`, or none.
fn used_words(calibration: &Calibration, source: &str) -> String {
    if calibration.used.is_empty() {
        format!(
            "the preset alone ({source} hold none of the calibration rows: {})",
            ids_text(CALIBRATION.iter().map(CalibrationRow::id))
        )
    } else {
        format!(
            "calibrated from {} of {source}",
            rows_text(calibration.used.iter().cloned())
        )
    }
}

/// Cases as text, `, ` between them.
fn ids_text(ids: impl Iterator<Item = CaseId>) -> String {
    ids.map(|id| id.to_string()).collect::<Vec<_>>().join(", ")
}

/// Calibration rows as text, `, ` between them, each with its api where it is not
/// wgpu (both apis calibrate from some cases).
fn rows_text(rows: impl Iterator<Item = (CaseId, Api)>) -> String {
    rows.map(|(id, api)| match api {
        Api::Wgpu => id.to_string(),
        _ => format!("{id} ({api})"),
    })
    .collect::<Vec<_>>()
    .join(", ")
}

/// A measured row not judged: its case and why.
pub(crate) type NotJudged = (CaseId, Unjudged);

/// Each row's case rebuilt from the registry at the row's sizing, with its kernel as
/// measured (same elements and bytes), and the rows that have none, with why.
fn cases_of<'r>(rows: &[&'r Row]) -> (Vec<(&'r Row, Rebuilt)>, Vec<NotJudged>) {
    let mut registry = Rebuilder::default();
    let mut found = Vec::new();
    let mut unjudged = Vec::new();
    for &row in rows {
        match registry.find(&row.id(), row.sizing, (row.elements, row.bytes)) {
            Ok(rebuilt) => found.push((row, rebuilt)),
            Err(why) => unjudged.push((row.id(), Unjudged::Unmatched(why))),
        }
    }
    (found, unjudged)
}

/// A rank group judged: Spearman's ρ of measured (tied within their resolution) against
/// predicted bandwidth, and whether the predictions are flat where the measurements
/// are not.
#[derive(Clone, Debug)]
pub(crate) struct Ranked {
    pub group: RankGroup,
    pub(crate) rho: Option<f64>,
    pub flat: bool,
}

impl Validation {
    /// The accuracy of the rows of `role`, per family (in registry order) and of all,
    /// the latter labelled `all`.
    pub fn accuracy(&self, role: Role) -> Vec<(String, Accuracy)> {
        let mut families: Vec<String> = Vec::new();
        for judged in self.judged.iter().filter(|j| j.role == role) {
            let family = judged.id.family.to_string();
            if !families.contains(&family) {
                families.push(family);
            }
        }
        let of = |family: Option<&str>| {
            Accuracy::of(
                self.judged
                    .iter()
                    .filter(|j| j.role == role)
                    .filter(|j| family.is_none_or(|f| j.id.family.as_str() == f))
                    .map(Judged::ratio),
            )
        };
        let mut table: Vec<(String, Accuracy)> = families
            .iter()
            .filter_map(|f| Some((f.clone(), of(Some(f))?)))
            .collect();
        // `all`: the memory model's rows, the kernel families'; not the transfer
        // model's, nor the dispatch model's (`launch`).
        let kernels = Accuracy::of(
            self.judged
                .iter()
                .filter(|j| j.role == role)
                .filter(|j| !matches!(j.id.family, Family::Transfer | Family::Launch))
                .map(Judged::ratio),
        );
        if let Some(all) = kernels {
            table.push(("all".to_owned(), all));
        }
        table
    }

    /// Every ladder and sweep among the judged rows (held out and calibration alike:
    /// order is not what calibration fits), with its ρ and flatness; wgpu's groups,
    /// then CUDA's (transfers of one case measured by both are different paths).
    pub(crate) fn ranked(&self) -> Vec<Ranked> {
        let mut groups = Vec::new();
        for api in [Api::Wgpu, Api::Cuda] {
            let indices: Vec<usize> = (0..self.judged.len())
                .filter(|&i| self.judged[i].api == api)
                .collect();
            let ids: Vec<&CaseId> = indices.iter().map(|&i| &self.judged[i].id).collect();
            groups.extend(rank_groups(&ids).into_iter().map(|mut group| {
                group.members = group.members.iter().map(|&m| indices[m]).collect();
                if api == Api::Cuda {
                    group.name.push_str(" (cuda)");
                }
                group
            }));
        }
        groups
            .into_iter()
            .map(|group| {
                let measured: Vec<f64> = group
                    .members
                    .iter()
                    .map(|&i| self.judged[i].measured_gbps)
                    .collect();
                let predicted: Vec<f64> = group
                    .members
                    .iter()
                    .map(|&i| self.judged[i].predicted_gbps)
                    .collect();
                Ranked {
                    rho: rank_agreement(&measured, &predicted),
                    flat: flat(&predicted, &measured),
                    group,
                }
            })
            .collect()
    }

    /// The device and the build judged: `NVIDIA H200 (wgpu tax-free)`.
    pub fn label(&self) -> String {
        match self.build {
            Some(build) => format!("{} (wgpu {build})", self.device),
            None => self.device.clone(),
        }
    }

    /// One line saying what was judged, on what model (not how long it took: the
    /// report's page stays the same for the same files).
    pub(crate) fn headline(&self) -> String {
        let build = self
            .build
            .map_or_else(|| "no wgpu".to_owned(), |b| format!("wgpu {b}"));
        let transfers = self
            .judged
            .iter()
            .filter(|j| j.id.family == Family::Transfer)
            .count();
        let others = self.unjudged.len();
        format!(
            "{} ({}): {} {build} kernel rows and {transfers} transfer rows judged on the {} \
             preset, {}; not judged: {others} row{}",
            self.device,
            self.path.display(),
            self.judged.len() - transfers,
            self.model.name,
            self.calibrated,
            if others == 1 { "" } else { "s" },
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suite::RunSizing;

    /// Measured rows (at 100 GB/s) of the quick cases matching `filters`, of one device.
    fn rows(filters: &[&str]) -> Vec<Row> {
        let filters: Vec<String> = filters.iter().map(|f| (*f).to_owned()).collect();
        crate::suite::select(&crate::suite::Sizing::nominal(true), &filters)
            .unwrap()
            .iter()
            .map(|(experiment, case)| Row {
                status: Status::Ok,
                verified: true,
                gbps_median: Some(100.0),
                device: "Test GPU".into(),
                sizing: Some(RunSizing {
                    quick: true,
                    ..RunSizing::default()
                }),
                ..crate::run::case_row(experiment, case)
            })
            .collect()
    }

    fn roles(validation: &Validation) -> Vec<(String, Role)> {
        validation
            .judged
            .iter()
            .map(|j| (j.id.to_string(), j.role))
            .collect()
    }

    #[test]
    fn calibration_rows_are_judged_apart_and_what_cannot_be_judged_says_why() {
        let mut transfer = rows(&["transfer/upload_write_buffer/"]);
        let mut rows = rows(&["copy/peak/launch=vec4$", "copy/offset/offset=3$"]);
        let mut gone = rows[0].clone();
        gone.variant = "offset_gone".into();
        let mut resized = rows[0].clone();
        resized.params = "offset=1".parse().unwrap();
        resized.bytes /= 2;
        rows.extend([gone, resized, transfer.remove(0)]);
        let path = Path::new("test.csv");
        let own = validate(path, &rows, Modelling::OWN, &[], &StageProgress::hidden());
        assert_eq!(
            roles(&own),
            [
                ("copy/offset/offset=3".to_owned(), Role::HeldOut),
                ("copy/peak/launch=vec4".to_owned(), Role::Calibration),
                (
                    "transfer/upload_write_buffer/size=4096;chunks=1".to_owned(),
                    Role::HeldOut
                ),
            ]
        );
        assert!(own.model.calibrated && own.calibrated.contains("copy/peak/launch=vec4"));
        let why: Vec<(String, &Unjudged)> = own
            .unjudged
            .iter()
            .map(|(id, w)| (id.to_string(), w))
            .collect();
        assert!(
            matches!(
                (why[0].0.as_str(), why[0].1),
                (
                    "copy/offset_gone/offset=3",
                    Unjudged::Unmatched(Unmatched::Gone)
                )
            ),
            "{why:?}"
        );
        assert!(
            matches!(
                (why[1].0.as_str(), why[1].1),
                (
                    "copy/offset/offset=1",
                    Unjudged::Unmatched(Unmatched::Resized { .. })
                )
            ),
            "{why:?}"
        );
        assert_eq!(why.len(), 2, "{why:?}");
        // Held out and calibration rows are summarised apart; `all` is the kernels'.
        let held_out = own.accuracy(Role::HeldOut);
        assert_eq!(held_out.last().unwrap().1.n, 1);
        assert!(held_out.iter().any(|(f, a)| f == "transfer" && a.n == 1));
        assert_eq!(own.accuracy(Role::Calibration).last().unwrap().1.n, 1);
        // A filter narrows what is judged, not what calibrates.
        let offset = validate(
            path,
            &rows,
            Modelling::OWN,
            &["copy/offset/offset=3".into()],
            &StageProgress::hidden(),
        );
        assert_eq!(roles(&offset), [roles(&own)[0].clone()]);
        assert_eq!(offset.model, own.model);
        assert!(offset.unjudged.is_empty(), "{:?}", offset.unjudged);

        // Calibrated on another file: every row held out; on this one: every row fitted.
        for (from, role) in [
            ("other.csv", Role::HeldOut),
            ("test.csv", Role::Calibration),
        ] {
            let modelling = Modelling {
                preset: None,
                calibrating: Calibrating::From {
                    path: Path::new(from),
                    rows: &rows,
                },
                predictions: Predictions::Afresh,
            };
            let validation = validate(path, &rows, modelling, &[], &StageProgress::hidden());
            assert!(roles(&validation).iter().all(|(_, r)| *r == role), "{from}");
        }
        let alone = Modelling {
            preset: crate::sim::device::preset("h100"),
            calibrating: Calibrating::Nothing,
            predictions: Predictions::Afresh,
        };
        let validation = validate(path, &rows, alone, &[], &StageProgress::hidden());
        assert!(roles(&validation).iter().all(|(_, r)| *r == Role::HeldOut));
        assert!(!validation.model.calibrated && validation.model.name == "h100");
    }

    #[test]
    fn transfer_rows_of_wgpu_and_cuda_are_judged_and_cuda_pinned_calibrates() {
        let mut rows = rows(&[
            "transfer/upload_pinned/size=4096;",
            "transfer/upload_pinned/size=1048576;",
            "transfer/readback/size=4096;",
        ]);
        for row in &mut rows {
            if row.variant == "upload_pinned" {
                row.api = Api::Cuda;
                row.gbps_median = Some(0.5);
            }
        }
        // The tax-free build measures no transfer: such a row is not one to judge.
        let mut tax_free = rows[0].clone();
        assert_eq!(tax_free.variant, "readback");
        tax_free.build = Build::TaxFree;
        rows.push(tax_free);
        let own = validate(
            Path::new("t.csv"),
            &rows,
            Modelling::OWN,
            &[],
            &StageProgress::hidden(),
        );
        let judged: Vec<(String, Api, Role)> = own
            .judged
            .iter()
            .map(|j| (j.id.to_string(), j.api, j.role))
            .collect();
        assert_eq!(
            judged,
            [
                (
                    "transfer/readback/size=4096;chunks=1".to_owned(),
                    Api::Wgpu,
                    Role::HeldOut
                ),
                (
                    "transfer/upload_pinned/size=4096;chunks=1".to_owned(),
                    Api::Cuda,
                    Role::Calibration
                ),
                (
                    "transfer/upload_pinned/size=1048576;chunks=1".to_owned(),
                    Api::Cuda,
                    Role::HeldOut
                ),
            ]
        );
        assert!(own.unjudged.is_empty(), "{:?}", own.unjudged);
        // The 4 KiB row set the overhead: it is reproduced.
        let pinned = &own.judged[1];
        assert!((pinned.ratio() - 1.0).abs() < 1e-6, "{}", pinned.ratio());
        assert!(own.headline().contains("3 transfer rows judged"));
        // wgpu's and CUDA's rows are ranked apart: no group mixes them.
        for ranked in own.ranked() {
            let apis: Vec<Api> = ranked
                .group
                .members
                .iter()
                .map(|&i| own.judged[i].api)
                .collect();
            assert!(
                apis.windows(2).all(|w| w[0] == w[1]),
                "{}",
                ranked.group.name
            );
        }
        let held_out = own.accuracy(Role::HeldOut);
        assert_eq!(held_out.len(), 1, "no kernel row, no `all`: {held_out:?}");
        assert_eq!((held_out[0].0.as_str(), held_out[0].1.n), ("transfer", 2));
    }

    #[test]
    fn recorded_predictions_are_judged_as_they_are_and_only_a_row_without_one_is_predicted() {
        let mut rows = rows(&["copy/peak/launch=vec4$", "copy/offset/offset=3$"]);
        for row in &mut rows {
            let peak = row.variant == "peak";
            row.sim_gbps = Some(if peak { 50.0 } else { 200.0 });
            row.sim_bound = peak.then_some(Bound::Dram);
        }
        let recorded = Modelling {
            predictions: Predictions::Recorded,
            ..Modelling::OWN
        };
        let path = Path::new("recorded.csv");
        let judged = |v: &Validation| -> Vec<(String, Role, f64, Option<Bound>)> {
            let mut judged: Vec<_> = v
                .judged
                .iter()
                .map(|j| (j.id.to_string(), j.role, j.predicted_gbps, j.bound))
                .collect();
            judged.sort_by(|a, b| a.0.cmp(&b.0));
            judged
        };
        let taken = validate(path, &rows, recorded, &[], &StageProgress::hidden());
        assert_eq!(
            judged(&taken),
            [
                (
                    "copy/offset/offset=3".to_owned(),
                    Role::HeldOut,
                    200.0,
                    None
                ),
                (
                    "copy/peak/launch=vec4".to_owned(),
                    Role::Calibration,
                    50.0,
                    Some(Bound::Dram)
                ),
            ]
        );
        // Nothing predicted, so nothing calibrated.
        assert!(!taken.model.calibrated, "{}", taken.calibrated);
        assert!(
            taken
                .headline()
                .contains("the predictions its rows recorded")
        );

        for row in rows.iter_mut().filter(|r| r.variant == "offset") {
            row.sim_gbps = None;
        }
        let partly = validate(path, &rows, recorded, &[], &StageProgress::hidden());
        let afresh = validate(path, &rows, Modelling::OWN, &[], &StageProgress::hidden());
        assert_eq!(judged(&partly)[0], judged(&afresh)[0]);
        assert_eq!(judged(&partly)[1], judged(&taken)[1]);
        assert!(
            partly
                .calibrated
                .contains("1 rows that recorded none predicted now")
        );
    }
}
