//! A results file as `compare`, `report` and `simulate --validate` read it: rows of one
//! device, one entry per setting (api and build), each labelled for the tables.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use super::{Row, read_with_lines};
use crate::error::{Error, Result};
use crate::suite::Setting;

/// [`read_with_lines`] of a file that must hold rows of one device, with one backend
/// per setting: what `compare`, `report` and `simulate --validate` read.
pub(crate) fn read_device(path: &Path) -> Result<Vec<(u64, Row)>> {
    let error = |message: String| Error::Results {
        path: path.to_owned(),
        message,
    };
    let rows = read_with_lines(path)?;
    let Some((first_line, first)) = rows.first() else {
        return Err(error("no rows: nothing to compare".to_owned()));
    };
    let mut backends: HashMap<Setting, (u64, &Row)> = HashMap::new();
    for (line, row) in &rows {
        if row.device != first.device {
            return Err(error(format!(
                "line {line}: rows of a second device ({}); one file holds one device \
                 ({} on line {first_line})",
                row.device_label(),
                first.device_label()
            )));
        }
        let (setting_line, setting_first) = *backends.entry(row.setting()).or_insert((*line, row));
        if row.backend != setting_first.backend {
            return Err(error(format!(
                "line {line}: rows of a second backend ({}) in {}; one file holds one backend \
                 per setting ({} on line {setting_line})",
                row.backend,
                row.setting(),
                setting_first.backend
            )));
        }
    }
    Ok(rows)
}

/// One device's rows in one setting (api and build), from one results file.
#[derive(Clone, Debug)]
pub struct DeviceResults {
    /// The file the rows were read from.
    pub path: PathBuf,
    /// The device as the table names it: adapter, api, the build where it is not the
    /// default and the adapters measuring at once where more than one
    /// (`NVIDIA H200 (wgpu, tax-free, concurrent=2)`); the file name is added where
    /// two would otherwise have the same label.
    pub label: String,
    /// The api and build the rows share.
    pub setting: Setting,
    /// The rows, in file order.
    pub rows: Vec<Row>,
}

impl DeviceResults {
    /// Reads one file, which must hold rows of exactly one device: one entry per
    /// setting it holds, in the settings' order.
    pub fn read(path: &Path) -> Result<Vec<Self>> {
        let rows = read_device(path)?;
        let mut settings: BTreeMap<Setting, &Row> = BTreeMap::new();
        for (_, row) in &rows {
            settings.entry(row.setting()).or_insert(row);
        }
        Ok(settings
            .into_iter()
            .map(|(setting, first)| DeviceResults {
                path: path.to_owned(),
                label: first.device_label(),
                setting,
                rows: rows
                    .iter()
                    .filter(|(_, row)| row.setting() == setting)
                    .map(|(_, row)| row.clone())
                    .collect(),
            })
            .collect())
    }

    /// Any row: every row of one device and setting has the same device metadata.
    pub fn metadata(&self) -> Option<&Row> {
        self.rows.first()
    }

    /// Whether a software adapter measured it (lavapipe): it has no GPU UUID.
    pub(crate) fn is_software(&self) -> bool {
        self.metadata().is_some_and(|row| row.gpu_uuid == "-")
    }
}

/// Reads every file, stopping at the first bad one, and makes the labels unique.
pub fn load(paths: &[PathBuf]) -> Result<Vec<DeviceResults>> {
    let mut devices: Vec<DeviceResults> = paths
        .iter()
        .map(|path| DeviceResults::read(path))
        .collect::<Result<Vec<_>>>()?
        .into_iter()
        .flatten()
        .collect();
    let labels: Vec<String> = devices.iter().map(|d| d.label.clone()).collect();
    for (index, device) in devices.iter_mut().enumerate() {
        if labels
            .iter()
            .filter(|label| **label == labels[index])
            .count()
            > 1
        {
            let name = device
                .path
                .file_name()
                .unwrap_or_default()
                .to_string_lossy();
            device.label = format!("{} [{}: {name}]", labels[index], index + 1);
        }
    }
    Ok(devices)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_device_without_a_gpu_uuid_is_software() {
        let device = |uuid: &str| DeviceResults {
            path: PathBuf::new(),
            label: String::new(),
            setting: Setting::default(),
            rows: vec![Row {
                gpu_uuid: uuid.to_owned(),
                ..Row::default()
            }],
        };
        assert!(device("-").is_software());
        assert!(!device("GPU-6663725b-8e8b-bfae-cf37-bd9c1cb699cf").is_software());
    }
}
