//! The results CSV: one row per case, measured beside predicted, with every setting
//! that changes a measurement. `docs/results-format.md` documents each column.
//!
//! Only regular files of bounded size are read or written as results. A file is
//! updated under its lock, whole ([`crate::files`]). Reading checks what the rest of
//! membench relies on, naming the file, line and column of the first problem.

pub mod compute;
mod device;
mod identity;
pub mod join;
pub mod launch;
pub mod levels;
mod read;
mod summary;
mod write;

pub(crate) use device::read_device;
pub use device::{DeviceResults, load};
pub(crate) use identity::known;
pub use identity::{GpuId, Identity};
pub(crate) use identity::{distinct_paths, replace_in_path};
pub(crate) use read::{csv_message, field_message, unsafe_text};
pub(crate) use read::{file_bytes, read_existing, read_with_lines};
pub use read::{parse, parse_with_lines, read};
pub(crate) use summary::{
    LATENCY_FAMILIES, ON_CHIP_FAMILIES, copy_peak_gbps, in_unit, ns_per_element, speed_text,
    summary_named,
};
pub use summary::{summary, unit};
pub use write::{Format, body, head, render, rescue, saved, write};
pub(crate) use write::{markdown_table, update};

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::sim::model::Bound;
use crate::suite::id::names;
use crate::suite::{Api, Build, CaseId, Family, Params, RunSizing, Setting};

/// Bumped whenever a column changes meaning, appears or disappears.
pub const SCHEMA_VERSION: u32 = 6;

/// Version 5 had no `sim_sector_use` column: its rows read with it empty.
/// Version 4 had no columns of the GPU's identity (`host` to `pcie_link`) or of the
/// clocks, power and temperature while a case ran (`sm_clock_mhz_min` to `throttle`):
/// its rows read with them empty.
/// Version 3 had, besides, no `sim_bound` column: its rows read with the bound unrecorded.
/// Version 2 had, besides, no `sizing` column: its rows read with the sizing unrecorded (a run
/// that adds to such a file checks the sizes of its cases, see [`Identity::admit`]).
/// Version 1 had, besides, one `bounds_checks` column (`on`/`off`) where version 2 has
/// `api` and `build`: its rows read as wgpu rows of the `default` or `unchecked` build.
const OLDEST_SCHEMA_VERSION: u32 = 1;

/// What the `throttle` column says where nothing but idleness held the clocks.
pub(crate) const NO_THROTTLE: &str = "none";

/// The first schema version with a `sizing` column.
const SIZING_SCHEMA_VERSION: u32 = 3;

/// The first schema version with a `sim_bound` column.
const BOUND_SCHEMA_VERSION: u32 = 4;

/// The first schema version with the identity and telemetry columns.
const IDENTITY_SCHEMA_VERSION: u32 = 5;

/// The columns schema version 5 added: the GPU's identity, and its telemetry while a
/// case ran.
const IDENTITY_COLUMNS: [&str; 11] = [
    "host",
    "gpu_uuid",
    "pci_bus_id",
    "pcie_link",
    "sm_clock_mhz_min",
    "sm_clock_mhz_max",
    "mem_clock_mhz_min",
    "mem_clock_mhz_max",
    "power_w_max",
    "temperature_c_max",
    "throttle",
];

/// The largest results file read: a full run of every api and build is under 1 MiB.
pub(crate) const MAX_FILE_BYTES: u64 = 64 << 20;

names! {
    /// What became of a case.
    #[derive(Default)]
    Status {
        /// Verified and timed.
        Ok = "ok",
        /// Not verified (or not timed): a row nobody measured is never `ok`.
        #[default]
        Failed = "failed",
        /// The device cannot run the case; the note says why.
        Skipped = "skipped",
        /// Predicted only (`membench simulate`, never in a results file).
        Simulated = "simulated",
        /// A transfer `membench simulate` has no model for.
        NotSimulated = "not simulated",
    }
}

impl Status {
    /// Whether a results file may hold it: a file holds what a device did.
    fn measured(self) -> bool {
        matches!(self, Status::Ok | Status::Failed | Status::Skipped)
    }
}

/// One case's result. Failed and skipped cases have a row too, with no bandwidth.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Row {
    /// The case, checked at read: a known family and parameters, a variant of the
    /// registry's grammar ([`crate::suite::check_variant`]).
    pub family: Family,
    /// The experiment's variant: the shader or its CUDA twin.
    pub variant: String,
    /// The CSV column is `param`, as it always was.
    #[serde(rename = "param")]
    pub params: Params,
    /// Whether the case ran, failed or was skipped.
    pub status: Status,
    /// Useful elements the kernel moves (transfers: 4-byte words).
    pub elements: u64,
    /// Bytes the kernel must read plus write: the numerator of every bandwidth.
    pub bytes: u64,
    /// The workgroup size (`X` or `XxY`); empty for a transfer.
    pub workgroup: String,
    /// Whether the output matched the CPU reference.
    pub verified: bool,
    /// The clock that timed it: GPU timestamps, or the host clock where none.
    pub timer: String,
    /// Timed samples kept, warm-up dropped.
    pub samples: u32,
    /// Dispatches each sample times back to back.
    pub dispatches_per_sample: u32,
    /// Median time of one dispatch, in microseconds.
    pub time_us_median: Option<f64>,
    /// Fastest dispatch, in microseconds.
    pub time_us_min: Option<f64>,
    /// Slowest dispatch, in microseconds.
    pub time_us_max: Option<f64>,
    /// Coefficient of variation of the samples.
    pub cv: Option<f64>,
    /// Bandwidth at the median time, in GB/s (10^9 bytes).
    pub gbps_median: Option<f64>,
    /// Bandwidth at the fastest time, in GB/s.
    pub gbps_best: Option<f64>,
    /// The simulator's predicted bandwidth, in GB/s.
    pub sim_gbps: Option<f64>,
    /// What bounds the predicted time (`Bound::name`); `None` without a prediction,
    /// and in files of schema version 3 and older, which did not record it.
    #[serde(default, with = "bound_column")]
    pub sim_bound: Option<Bound>,
    /// DRAM bytes the simulator predicts.
    pub sim_dram_bytes: Option<u64>,
    /// Predicted 32-byte sectors per memory request.
    pub sim_sectors_per_request: Option<f64>,
    /// The predicted share of the fetched sectors' bytes that the lanes use; empty in
    /// files of schema version 5 and older.
    pub sim_sector_use: Option<f64>,
    /// Predicted shared-memory bank ways per request.
    pub sim_bank_ways: Option<f64>,
    /// Measured over predicted bandwidth (`gbps_median / sim_gbps`).
    pub measured_over_sim: Option<f64>,
    /// The adapter's name.
    pub device: String,
    /// The adapter's vendor.
    pub vendor: String,
    /// The graphics API wgpu ran on (Vulkan, Metal, …).
    pub backend: String,
    /// The driver and its version.
    pub driver: String,
    /// The adapter's subgroup size (`min-max` where the driver chooses).
    pub subgroup_size: String,
    /// Absent from schema version 1 (see [`LEGACY_SCHEMA_VERSION`]).
    #[serde(default)]
    pub api: Api,
    /// The api's build the kernel was made with.
    #[serde(default)]
    pub build: Build,
    /// The sizing the case was measured at; `None` only in files of schema version 1
    /// and 2, which did not record it.
    #[serde(default)]
    pub sizing: Option<RunSizing>,
    /// Schema version 1's column, read and never written.
    #[serde(default, skip_serializing)]
    pub bounds_checks: Option<String>,
    /// The membench version that wrote the row.
    pub membench_version: String,
    /// The results format's version (docs/results-format.md).
    pub schema_version: u32,
    /// The commit membench was built from.
    pub git_commit: String,
    /// When the run started, UTC.
    pub timestamp_utc: String,
    /// The machine that measured (its host name).
    #[serde(default)]
    pub host: String,
    /// The GPU's UUID (`GPU-…` where NVML or CUDA names it; Vulkan's device UUID
    /// otherwise); `-` for an adapter that has none (a software one).
    #[serde(default)]
    pub gpu_uuid: String,
    /// The GPU's PCI bus id (`00000000:07:00.0`); `-` where the adapter has none.
    #[serde(default)]
    pub pci_bus_id: String,
    /// The link to the host, as NVML reports it now (`gen5x16`); empty where unknown.
    #[serde(default)]
    pub pcie_link: String,
    /// The GPU's slowest and fastest SM clock while the case ran, in MHz (NVML,
    /// sampled during the case); empty where it cannot be read, as are the columns
    /// after it.
    #[serde(default)]
    pub sm_clock_mhz_min: Option<u32>,
    /// The fastest SM clock, in MHz.
    #[serde(default)]
    pub sm_clock_mhz_max: Option<u32>,
    /// The slowest memory clock, in MHz.
    #[serde(default)]
    pub mem_clock_mhz_min: Option<u32>,
    /// The fastest memory clock, in MHz.
    #[serde(default)]
    pub mem_clock_mhz_max: Option<u32>,
    /// The highest power draw, in watts.
    #[serde(default)]
    pub power_w_max: Option<f64>,
    /// The highest temperature, in °C.
    #[serde(default)]
    pub temperature_c_max: Option<u32>,
    /// What held the clocks down while the case ran: NVML's reasons joined by `+`
    /// (`none`; `idle` alone is no throttle); empty where unknown.
    #[serde(default)]
    pub throttle: String,
    /// Why a case failed or was skipped, and what else it is worth knowing.
    pub note: String,
}

/// The `sim_bound` column: a bound by its name, empty for none.
mod bound_column {
    use serde::{Deserialize, Deserializer, Serializer};

    use crate::sim::model::Bound;

    pub(crate) fn serialize<S: Serializer>(
        bound: &Option<Bound>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(bound.map_or("", Bound::name))
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Option<Bound>, D::Error> {
        let text = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
        match text.as_ref() {
            "" => Ok(None),
            name => name.parse().map(Some).map_err(serde::de::Error::custom),
        }
    }
}

/// The columns that describe the device and the run, the same on every row.
#[derive(Clone, Debug, Default)]
pub struct RunInfo {
    /// The adapter's name.
    pub device: String,
    /// The adapter's vendor.
    pub vendor: String,
    /// The graphics API wgpu ran on.
    pub backend: String,
    /// The driver and its version.
    pub driver: String,
    /// The adapter's subgroup size (`min-max` where the driver chooses).
    pub subgroup_size: String,
    /// The settings every row of the run shares.
    pub setting: Setting,
    /// When the run started, UTC.
    pub timestamp_utc: String,
    /// The machine and physical GPU.
    pub gpu: GpuIdentity,
}

/// Which machine and physical GPU measured: the `host` to `pcie_link` columns.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GpuIdentity {
    /// The machine's host name.
    pub host: String,
    /// The GPU's UUID; `-` where the adapter has none.
    pub gpu_uuid: String,
    /// The GPU's PCI bus id; `-` where the adapter has none.
    pub pci_bus_id: String,
    pub(crate) pcie_link: String,
}

/// The api/builds of `family`'s measured rows among `rows`, each once, in order.
pub(crate) fn measured_settings(rows: &[Row], family: Family) -> Vec<Setting> {
    let mut settings: Vec<Setting> = rows
        .iter()
        .filter(|row| row.family == family && row.status == Status::Ok)
        .map(Row::setting)
        .collect();
    settings.sort();
    settings.dedup();
    settings
}

impl Row {
    /// The key rows are merged on: the case and the setting it was measured in.
    pub(crate) fn key(&self) -> (Family, &str, &Params, Setting) {
        (self.family, &self.variant, &self.params, self.setting())
    }

    /// The case the row is of.
    pub fn id(&self) -> CaseId {
        CaseId {
            family: self.family,
            variant: self.variant.clone(),
            params: self.params.clone(),
        }
    }

    /// The api and build the row was measured with. Reading checks that the api has the
    /// build; a row made in code takes both from a [`Setting`].
    pub fn setting(&self) -> Setting {
        Setting::of(self.api, self.build).unwrap_or_default()
    }

    /// `device (api[, build][, concurrent=N])`: the api that measured (`wgpu`, `cuda`;
    /// the backend under wgpu has its own column), the build where it is not the api's
    /// default, and the adapters that measured at once where it was not alone.
    pub(crate) fn device_label(&self) -> String {
        let mut parts = vec![self.api.to_string()];
        if self.build != Build::Default {
            parts.push(self.build.to_string());
        }
        if let Some(adapters) = self.sizing.and_then(|s| s.concurrent) {
            parts.push(format!("concurrent={adapters}"));
        }
        format!("{} ({})", self.device, parts.join(", "))
    }

    /// The row a GPU `factor` times as fast would have written: bandwidths times
    /// `factor`, times over it (a synthetic fast or slow GPU, for tests and benches).
    pub fn scaled(&self, factor: f64) -> Row {
        let time = |t: Option<f64>| t.map(|t| t / factor);
        let gbps = |g: Option<f64>| g.map(|g| g * factor);
        Row {
            time_us_median: time(self.time_us_median),
            time_us_min: time(self.time_us_min),
            time_us_max: time(self.time_us_max),
            gbps_median: gbps(self.gbps_median),
            gbps_best: gbps(self.gbps_best),
            ..self.clone()
        }
    }

    /// Whether a throttle other than idleness held the clocks down while the row ran.
    pub(crate) fn throttled(&self) -> bool {
        !self.throttle.is_empty() && self.throttle != NO_THROTTLE
    }

    /// The floating-point columns with their names, for checks that apply to all.
    pub fn numbers(&self) -> [(&'static str, Option<f64>); 11] {
        [
            ("time_us_median", self.time_us_median),
            ("time_us_min", self.time_us_min),
            ("time_us_max", self.time_us_max),
            ("cv", self.cv),
            ("gbps_median", self.gbps_median),
            ("gbps_best", self.gbps_best),
            ("sim_gbps", self.sim_gbps),
            ("sim_sectors_per_request", self.sim_sectors_per_request),
            ("sim_sector_use", self.sim_sector_use),
            ("sim_bank_ways", self.sim_bank_ways),
            ("measured_over_sim", self.measured_over_sim),
        ]
    }
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

/// The text an in-memory CSV writer holds, once it is flushed; or what went wrong.
pub(crate) fn csv_text(writer: csv::Writer<Vec<u8>>) -> std::result::Result<String, String> {
    let bytes = writer.into_inner().map_err(|e| e.error().to_string())?;
    String::from_utf8(bytes).map_err(|e| e.to_string())
}

/// The columns of this schema, in the order `write` puts them: the header of a
/// serialized row, so that the struct is the one place that lists them.
pub fn columns() -> Result<Vec<String>> {
    let mut writer = csv::Writer::from_writer(Vec::new());
    let failed = |message: String| Error::Results {
        path: PathBuf::from("<schema>"),
        message,
    };
    writer
        .serialize(Row {
            sizing: Some(RunSizing::default()),
            ..Row::default()
        })
        .map_err(|e| failed(e.to_string()))?;
    let bytes = writer
        .into_inner()
        .map_err(|e| failed(e.error().to_string()))?;
    let mut reader = csv::Reader::from_reader(bytes.as_slice());
    let header = reader.headers().map_err(|e| failed(e.to_string()))?;
    Ok(header.iter().map(str::to_owned).collect())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A fresh directory for one test.
    pub(crate) fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("membench-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    pub(crate) fn row(variant: &str, param: &str, gbps: f64) -> Row {
        Row {
            family: Family::Copy,
            variant: variant.into(),
            params: param.parse().unwrap(),
            status: Status::Ok,
            verified: true,
            bytes: 1_000_000,
            gbps_median: Some(gbps),
            sizing: Some(RunSizing::default()),
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
}
