//! A results file as `compare`, `report` and `simulate --validate` read it: rows of one
//! device, one entry per setting (api and build), each labelled for the tables.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use super::{GpuId, Row, read_with_lines};
use crate::error::{Error, Result};
use crate::suite::{Family, RunSizing, Setting};

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
    /// The kernels files (`membench kernel`) of the same device whose rows joined
    /// these ([`load`]), after the file's own.
    pub kernel_files: Vec<PathBuf>,
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
                kernel_files: Vec::new(),
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

    /// The files the rows were read from: its own, then the kernels files joined.
    pub fn files(&self) -> impl Iterator<Item = &Path> {
        std::iter::once(self.path.as_path()).chain(self.kernel_files.iter().map(PathBuf::as_path))
    }

    /// Whether a software adapter measured it (lavapipe): it has no GPU UUID.
    pub(crate) fn is_software(&self) -> bool {
        self.metadata().is_some_and(|row| row.gpu_uuid == "-")
    }
}

/// Reads every file, stopping at the first bad one, joins each kernels file to its
/// device's results file (`join_kernels`) and makes the labels unique.
pub fn load(paths: &[PathBuf]) -> Result<Vec<DeviceResults>> {
    let read: Vec<DeviceResults> = paths
        .iter()
        .map(|path| DeviceResults::read(path))
        .collect::<Result<Vec<_>>>()?
        .into_iter()
        .flatten()
        .collect();
    let mut devices = join_kernels(read);
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

/// What makes two entries one device: the physical GPU, the adapter and the backend
/// it was driven through, the sizing and the setting; `None` for an entry of no rows.
type DeviceKey = (GpuId, String, String, Option<RunSizing>, Setting);

fn device_key(device: &DeviceResults) -> Option<DeviceKey> {
    let row = device.metadata()?;
    Some((
        GpuId::of(row),
        row.device.clone(),
        row.backend.clone(),
        row.sizing,
        device.setting,
    ))
}

/// `devices` with each entry of `kernel` rows only (a kernels file's, `membench
/// kernel`) joined to the one entry of other rows of the same device, where there is
/// one: a GPU is one device however many files hold its rows. A kernels file with no
/// such entry, or several, stays a device of its own.
fn join_kernels(mut devices: Vec<DeviceResults>) -> Vec<DeviceResults> {
    let only_kernels =
        |device: &DeviceResults| device.rows.iter().all(|row| row.family == Family::Kernel);
    let keys: Vec<Option<DeviceKey>> = devices.iter().map(device_key).collect();
    let suites: Vec<bool> = devices.iter().map(|d| !only_kernels(d)).collect();
    let mut joined = vec![false; devices.len()];
    for kernels in (0..devices.len()).filter(|&k| !suites[k] && keys[k].is_some()) {
        let same: Vec<usize> = (0..devices.len())
            .filter(|&s| suites[s] && keys[s] == keys[kernels])
            .collect();
        if let [suite] = same[..] {
            let rows = std::mem::take(&mut devices[kernels].rows);
            let path = devices[kernels].path.clone();
            devices[suite].rows.extend(rows);
            devices[suite].kernel_files.push(path);
            joined[kernels] = true;
        }
    }
    devices
        .into_iter()
        .zip(joined)
        .filter_map(|(device, joined)| (!joined).then_some(device))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_device_without_a_gpu_uuid_is_software() {
        let device = |uuid: &str| DeviceResults {
            path: PathBuf::new(),
            kernel_files: Vec::new(),
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
