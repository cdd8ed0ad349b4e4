//! The results CSV: one row per case, measured beside predicted, with every setting
//! that changes a measurement. `results/README.md` documents each column.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// Bumped whenever a column changes meaning, appears or disappears.
pub const SCHEMA_VERSION: u32 = 1;

/// One case's result. Failed and skipped cases have a row too, with no bandwidth.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Row {
    pub family: String,
    pub variant: String,
    pub param: String,
    /// `ok`, `failed` or `skipped`.
    pub status: String,
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
    pub bounds_checks: String,
    pub membench_version: String,
    pub schema_version: u32,
    pub git_commit: String,
    pub timestamp_utc: String,
    /// Why a case failed or was skipped.
    pub note: String,
}

impl Row {
    /// The key rows are merged and compared on.
    pub fn key(&self) -> (String, String, String) {
        (
            self.family.clone(),
            self.variant.clone(),
            self.param.clone(),
        )
    }
}

/// `results/<device-slug>.csv`, e.g. `nvidia-h100-80gb-hbm3-vulkan`.
pub fn default_path(device: &str, backend: &str, unchecked: bool) -> PathBuf {
    let suffix = if unchecked { "-unchecked" } else { "" };
    PathBuf::from("results").join(format!(
        "{}{suffix}.csv",
        slug(&format!("{device} {backend}"))
    ))
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

/// Reads a results CSV, naming the file, line and field of the first bad value.
pub fn read(path: &Path) -> Result<Vec<Row>> {
    let error = |message: String| Error::Results {
        path: path.to_owned(),
        message,
    };
    let mut reader = csv::Reader::from_path(path).map_err(|e| error(e.to_string()))?;
    let mut rows = Vec::new();
    for record in reader.deserialize::<Row>() {
        let row = record.map_err(|e| {
            let line = e
                .position()
                .map_or(String::new(), |p| format!("line {}: ", p.line()));
            error(format!("{line}{}", e.kind_message()))
        })?;
        if row.schema_version != SCHEMA_VERSION {
            return Err(error(format!(
                "schema version {} where this membench writes {SCHEMA_VERSION}",
                row.schema_version
            )));
        }
        rows.push(row);
    }
    Ok(rows)
}

trait KindMessage {
    fn kind_message(&self) -> String;
}

impl KindMessage for csv::Error {
    /// The error without csv's own position prefix, which `read` reports as a line.
    fn kind_message(&self) -> String {
        match self.kind() {
            csv::ErrorKind::Deserialize { err, .. } => match err.field() {
                Some(field) => format!("field {}: {}", field + 1, err.kind()),
                None => err.kind().to_string(),
            },
            _ => self.to_string(),
        }
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
/// crash never leaves half a CSV.
pub fn write(path: &Path, rows: &[Row]) -> Result<()> {
    let io = |source| Error::Io {
        path: path.to_owned(),
        source,
    };
    if let Some(dir) = path.parent().filter(|dir| !dir.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(io)?;
    }
    let temporary = path.with_extension("csv.tmp");
    let mut writer = csv::Writer::from_path(&temporary).map_err(|e| Error::Results {
        path: temporary.clone(),
        message: e.to_string(),
    })?;
    for row in rows {
        writer.serialize(row).map_err(|e| Error::Results {
            path: temporary.clone(),
            message: e.to_string(),
        })?;
    }
    let file = writer.into_inner().map_err(|e| io(e.into_error()))?;
    file.sync_all().map_err(io)?;
    drop(file);
    std::fs::rename(&temporary, path).map_err(io)
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

/// The readable table `membench run` ends with: bandwidth per case, its share of the
/// fastest `copy/peak` among `rows` (`on-chip` for the on-chip families), and the
/// simulator's prediction beside it.
pub fn summary(rows: &[Row]) -> String {
    let peak = copy_peak_gbps(rows);
    let width = |column: fn(&Row) -> &str, least: usize| {
        rows.iter()
            .map(|row| column(row).len())
            .fold(least, usize::max)
    };
    let family = width(|row| &row.family, 10);
    let variant = width(|row| &row.variant, 10);
    let param = width(|row| &row.param, 18);
    let mut table = format!(
        "{:<family$} {:<variant$} {:<param$} {:>10} {:>8} {:>7} {:>10} {:>9}  {}\n",
        "family", "variant", "param", "GB/s", "% peak", "cv %", "sim GB/s", "meas/sim", "status"
    );
    let number = |value: Option<f64>, digits: usize| {
        value.map_or("-".to_owned(), |v| format!("{v:.digits$}"))
    };
    for row in rows {
        let gbps = number(row.gbps_median, 1);
        let share = if ON_CHIP_FAMILIES.contains(&row.family.as_str()) {
            "on-chip".to_owned()
        } else {
            number(row.gbps_median.zip(peak).map(|(g, p)| 100.0 * g / p), 1)
        };
        let cv = number(row.cv.map(|cv| 100.0 * cv), 2);
        let sim = number(row.sim_gbps, 1);
        let ratio = number(row.measured_over_sim, 2);
        let status = if row.note.is_empty() {
            row.status.clone()
        } else {
            format!("{}: {}", row.status, row.note)
        };
        table.push_str(&format!(
            "{:<family$} {:<variant$} {:<param$} {gbps:>10} {share:>8} {cv:>7} {sim:>10} {ratio:>9}  {status}\n",
            row.family, row.variant, row.param
        ));
    }
    table
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(variant: &str, param: &str, gbps: f64) -> Row {
        Row {
            family: "copy".into(),
            variant: variant.into(),
            param: param.into(),
            status: "ok".into(),
            verified: true,
            gbps_median: Some(gbps),
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
        assert!(message.contains("bad.csv: line 2: field 16"), "{message}");
        std::fs::remove_dir_all(dir).unwrap();
    }
}
