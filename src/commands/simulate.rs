//! `simulate`: every case predicted on a device preset, no GPU needed; and
//! `simulate --validate`, the simulator judged against results files.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::results;
use crate::run;
use crate::sim::device::{self as sim_device, DeviceModel};
use crate::suite::{self, RunSizing, Sizing};
use crate::validate::{self, StageProgress};

/// The preset `simulate` predicts on without `--device` (or `--validate`).
pub(crate) const DEFAULT_PRESET: &str = "h100";

/// What `--device` takes besides a preset's name: the list of presets.
pub const LIST: &str = "list";

/// The preset named `name`; an error where there is none.
fn preset(name: &str) -> Result<&'static DeviceModel> {
    sim_device::preset(name).ok_or_else(|| {
        Error::Usage(format!(
            "unknown device preset {name:?} (`simulate --device {LIST}` names them)"
        ))
    })
}

/// `simulate --device list`: each preset, what it describes and where its numbers
/// come from, one line each.
fn list(out: &mut dyn Write) -> Result<()> {
    let width = sim_device::presets()
        .iter()
        .map(|d| d.name.len())
        .max()
        .unwrap_or(0);
    for d in sim_device::presets() {
        out!(
            out,
            "{:<width$}  {}: {}\n",
            d.name,
            d.description,
            d.sources
        )?;
    }
    Ok(())
}

/// `simulate`: the summary of every case `filters` select (at `quick` sizes) predicted
/// on the preset named `device` (default [`DEFAULT_PRESET`]).
pub fn simulate(
    out: &mut dyn Write,
    device: Option<&str>,
    filters: &[String],
    quick: bool,
) -> Result<()> {
    let model = match device {
        Some(LIST) => return list(out),
        Some(name) => preset(name)?,
        None => sim_device::preset(DEFAULT_PRESET)
            .ok_or_else(|| Error::Usage(format!("no device preset {DEFAULT_PRESET:?}")))?,
    };
    // Sized as for a large GPU (or --quick), without touching a device.
    let cases = suite::select(&Sizing::nominal(quick), filters)?;
    stderrln!(
        "membench: simulating {} cases on the {} preset ({})",
        cases.len(),
        model.name,
        model.description
    );
    let stage = StageProgress::stderr().stage("predicting the cases", cases.len());
    let predictions = run::predict_cases(&cases, model, &|| stage.step());
    drop(stage);
    let sizing = RunSizing {
        quick,
        ..RunSizing::default()
    };
    let rows = run::predicted_rows(&cases, sizing, &predictions, model);
    let names = model.level_names();
    out!(out, "{}", results::summary_named(&rows, Some(&names)))
}

/// What `simulate --validate` judges, and how.
#[derive(Debug)]
pub struct Validating<'a> {
    /// Results files, one per device.
    pub files: &'a [PathBuf],
    /// The preset to predict on (default: the one closest to each file's device).
    pub device: Option<&'a str>,
    /// Only the cases whose id contains one of these are judged.
    pub filters: &'a [String],
    /// Calibrate on this file's rows instead of each file's own.
    pub calibrate_from: Option<&'a Path>,
    /// The presets alone, calibrated from nothing.
    pub no_calibrate: bool,
    /// Every judged row too.
    pub verbose: bool,
    /// How the table is printed.
    pub format: results::Format,
}

/// `simulate --validate`: every file read first (a bad one stops before anything is
/// predicted), then validated in turn.
pub fn validate(out: &mut dyn Write, asked: &Validating) -> Result<()> {
    let preset = asked.device.map(preset).transpose()?;
    asked
        .format
        .taken_by("simulate --validate", validate::FORMATS)?;
    suite::check_filters(asked.filters)?;
    let files: Vec<(&Path, Vec<results::Row>)> = asked
        .files
        .iter()
        .map(|path| {
            let rows = results::read_device(path)?;
            Ok((
                path.as_path(),
                rows.into_iter().map(|(_, row)| row).collect(),
            ))
        })
        .collect::<Result<_>>()?;
    let from_rows = asked.calibrate_from.map(results::read).transpose()?;
    let calibrating = match (asked.calibrate_from, &from_rows) {
        (Some(path), Some(rows)) => validate::Calibrating::From { path, rows },
        _ if asked.no_calibrate => validate::Calibrating::Nothing,
        _ => validate::Calibrating::OwnRows,
    };
    let modelling = validate::Modelling {
        preset,
        calibrating,
        predictions: validate::Predictions::Afresh,
    };
    let progress = StageProgress::stderr();
    let validations: Vec<validate::Validation> = files
        .iter()
        .enumerate()
        .map(|(index, (path, rows))| {
            let progress = progress.tagged(validate::file_tag(index, files.len(), path));
            validate::validate(path, rows, modelling, asked.filters, &progress)
        })
        .collect();
    // As for a run, a filter that matches nothing is an error, not an empty table.
    let ids: Vec<String> = validations
        .iter()
        .flat_map(|v| {
            let judged = v.judged.iter().map(|j| j.id.to_string());
            judged.chain(v.unjudged.iter().map(|(id, _)| id.to_string()))
        })
        .collect();
    if let Some(filter) = suite::unmatched(asked.filters, &ids) {
        return Err(Error::Usage(format!(
            "--filter `{filter}` matches no measured row of the files"
        )));
    }
    out!(
        out,
        "{}",
        validate::render(&validations, asked.format, asked.verbose)
    )
}
