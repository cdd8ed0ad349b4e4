//! What a results file is of: one device through one backend, at one sizing (and, for
//! `--concurrent`, beside how many adapters). The default file name says all of it, and
//! rows of another identity are never merged in.

use std::ffi::OsString;
use std::fmt;
use std::path::{Path, PathBuf};

use super::Row;
use crate::error::{Error, Result};
use crate::suite::{Api, RunSizing};

/// One results file's identity: the device, the wgpu backend it was driven through
/// (the CUDA rows of the same GPU say `cuda`), and the sizing. The api and the build
/// are columns within the file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Identity {
    /// The adapter's name.
    pub device: String,
    /// The physical GPU's UUID (`-` where it has none): two GPUs of one model are two
    /// identities.
    pub gpu_uuid: String,
    /// wgpu's name of the backend, lower case (`vulkan`).
    pub backend: String,
    /// The sizing the file's cases were measured at.
    pub sizing: RunSizing,
}

impl Identity {
    /// `results/<device>[-<short uuid>]-<backend>[-<sizing>].csv`, e.g.
    /// `results/nvidia-h100-80gb-hbm3-8f2e1c3a-vulkan.csv` or
    /// `results/llvmpipe-llvm-15-0-6-256-bits-vulkan-quick.csv`: two GPUs of one model
    /// never share a file, and a run never lands in the file of another sizing.
    pub fn default_path(&self) -> PathBuf {
        let uuid = self.short_uuid();
        let name = match uuid.is_empty() {
            true => format!("{} {}", self.device, self.backend),
            false => format!("{} {uuid} {}", self.device, self.backend),
        };
        PathBuf::from("results").join(format!(
            "{}{}.csv",
            super::slug(&name),
            file_suffix(self.sizing)
        ))
    }

    /// The file of `membench kernel`'s rows beside [`Identity::default_path`]: its stem
    /// and `-kernels`.
    pub(crate) fn kernels_path(&self) -> PathBuf {
        let path = self.default_path();
        let stem = path.file_stem().unwrap_or_default().to_string_lossy();
        path.with_file_name(format!("{stem}-kernels.csv"))
    }

    /// The GPU's UUID's first eight hex digits (after `GPU-`), as file names and
    /// `--out`'s `{uuid}` say it; empty for a GPU without one.
    pub(crate) fn short_uuid(&self) -> String {
        let digits = self.gpu_uuid.trim_start_matches("GPU-");
        digits
            .chars()
            .filter(char::is_ascii_hexdigit)
            .take(8)
            .collect()
    }

    /// What `--out`'s `{uuid}` says: the short UUID, or for a GPU without one the
    /// device's name as a slug, a word every run of the adapter repeats.
    pub(crate) fn uuid_word(&self) -> String {
        let uuid = self.short_uuid();
        if !uuid.is_empty() {
            return uuid;
        }
        match super::slug(&self.device) {
            device if device.is_empty() => "gpu".to_owned(),
            device => device,
        }
    }

    /// What differs between this identity and `row`'s, if anything. A row that records
    /// no UUID (schema 4 and older) is of any GPU of the model.
    fn difference(&self, row: &Row) -> Option<String> {
        if row.device != self.device {
            return Some(format!(
                "rows of device `{}` where this run measures `{}`",
                row.device, self.device
            ));
        }
        if !row.gpu_uuid.is_empty() && row.gpu_uuid != self.gpu_uuid {
            return Some(format!(
                "rows of GPU `{}` where this run measures `{}`",
                row.gpu_uuid, self.gpu_uuid
            ));
        }
        if row.api == Api::Wgpu && !row.backend.eq_ignore_ascii_case(&self.backend) {
            return Some(format!(
                "rows of backend `{}` where this run measures `{}`",
                row.backend, self.backend
            ));
        }
        match row.sizing {
            Some(sizing) if sizing != self.sizing => Some(format!(
                "rows of sizing `{sizing}` where this run's is `{}`",
                self.sizing
            )),
            _ => None,
        }
    }

    /// The rows of the file at `path` (`rows`, each with its line), if they are of this
    /// identity, ready to merge with this run's: a file of another identity is refused
    /// with one line saying what differs. Rows of a file that records no sizing
    /// (schema version 1 or 2) are of this sizing where each row of a case in
    /// `cases` (the rows this sizing gives, nothing measured) has that case's elements
    /// and bytes; they take this sizing.
    pub(crate) fn admit(
        &self,
        path: &Path,
        rows: Vec<(u64, Row)>,
        cases: &[Row],
    ) -> Result<Vec<Row>> {
        let refuse = |line: u64, what: String| Error::Results {
            path: path.to_owned(),
            message: format!(
                "line {line}: {what}; a results file holds one GPU, backend and sizing: \
                 choose another --out (this run's default is {}) or move the file away",
                self.default_path().display()
            ),
        };
        rows.into_iter()
            .map(|(line, mut row)| {
                if let Some(what) = self.difference(&row) {
                    return Err(refuse(line, what));
                }
                if row.sizing.is_none() {
                    let case = cases.iter().find(|case| {
                        (&case.family, &case.variant, &case.params)
                            == (&row.family, &row.variant, &row.params)
                    });
                    if let Some(case) =
                        case.filter(|c| (c.elements, c.bytes) != (row.elements, row.bytes))
                    {
                        return Err(refuse(
                            line,
                            format!(
                                "{}/{}/{} moves {} bytes where this run's sizing `{}` gives {} \
                                 (the file records no sizing)",
                                row.family,
                                row.variant,
                                row.params,
                                row.bytes,
                                self.sizing,
                                case.bytes
                            ),
                        ));
                    }
                    row.sizing = Some(self.sizing);
                }
                Ok(row)
            })
            .collect()
    }
}

/// Which physical GPU a file's rows are of: its UUID; where it has none, its host and
/// PCI bus id; where those are unknown too, its host and model (the one adapter of
/// the model on that host, as a software adapter is). Never the file.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum GpuId {
    /// The GPU's UUID.
    Uuid(String),
    /// Its host and PCI bus id.
    Bus {
        /// The host name.
        host: String,
        /// The PCI bus id.
        bus: String,
    },
    /// Its host and model.
    Adapter {
        /// The host name.
        host: String,
        /// The adapter's name.
        device: String,
    },
}

impl GpuId {
    /// The identity `row` records.
    pub(crate) fn of(row: &Row) -> GpuId {
        if known(&row.gpu_uuid) {
            GpuId::Uuid(row.gpu_uuid.clone())
        } else if known(&row.pci_bus_id) {
            GpuId::Bus {
                host: host_text(&row.host),
                bus: row.pci_bus_id.clone(),
            }
        } else {
            GpuId::Adapter {
                host: host_text(&row.host),
                device: row.device.clone(),
            }
        }
    }
}

impl fmt::Display for GpuId {
    /// The UUID, `host bus-id`, or `host model`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GpuId::Uuid(uuid) => f.write_str(uuid),
            GpuId::Bus { host, bus } => write!(f, "{host} {bus}"),
            GpuId::Adapter { host, device } => write!(f, "{host} {device}"),
        }
    }
}

/// A host as an identity shows it: its name, or `unknown host`.
fn host_text(host: &str) -> String {
    if known(host) {
        host.to_owned()
    } else {
        "unknown host".to_owned()
    }
}

/// Whether an identity column names something: not empty and not `-`.
pub(crate) fn known(text: &str) -> bool {
    !text.is_empty() && text != "-"
}

/// `-quick`, `-buffer-64mib`, `-quick-concurrent-2`, …: what the default file name adds
/// for `sizing` (nothing for the default one).
fn file_suffix(sizing: RunSizing) -> String {
    if sizing == RunSizing::default() {
        String::new()
    } else {
        format!("-{}", super::slug(&sizing.to_string()))
    }
}

/// `paths`, with the index appended to the stem of every path that occurs twice.
pub(crate) fn distinct_paths(paths: Vec<PathBuf>) -> Vec<PathBuf> {
    paths
        .iter()
        .enumerate()
        .map(|(index, path)| {
            if paths.iter().filter(|p| *p == path).count() == 1 {
                return path.clone();
            }
            let mut name = path.file_stem().unwrap_or_default().to_owned();
            name.push(format!("-{index}.csv"));
            path.with_file_name(name)
        })
        .collect()
}

/// `path` with each field of `fields` replaced by its value, on the path's bytes: the
/// rest of the path, UTF-8 or not, stays as it is.
pub(crate) fn replace_in_path(path: &Path, fields: &[(&str, &str)]) -> PathBuf {
    let mut bytes = path.as_os_str().as_encoded_bytes().to_vec();
    for (field, value) in fields {
        bytes = replace_bytes(&bytes, field.as_bytes(), value.as_bytes());
    }
    // SAFETY: the path's own bytes, split only around the fields (UTF-8 text, not
    // empty) and joined with UTF-8 values: what `from_encoded_bytes_unchecked` takes.
    PathBuf::from(unsafe { OsString::from_encoded_bytes_unchecked(bytes) })
}

/// `bytes` with every `from` (not empty) replaced by `to`.
fn replace_bytes(mut bytes: &[u8], from: &[u8], to: &[u8]) -> Vec<u8> {
    let mut replaced = Vec::with_capacity(bytes.len());
    while let Some((&first, rest)) = bytes.split_first() {
        match bytes.strip_prefix(from).filter(|_| !from.is_empty()) {
            Some(after) => {
                replaced.extend_from_slice(to);
                bytes = after;
            }
            None => {
                replaced.push(first);
                bytes = rest;
            }
        }
    }
    replaced
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::{SCHEMA_VERSION, Status};
    use crate::suite::Family;

    #[test]
    fn adapters_sharing_a_results_file_get_their_index() {
        let paths = [
            "results/gpu-vulkan.csv",
            "results/gpu-gl.csv",
            "results/gpu-vulkan.csv",
        ]
        .map(PathBuf::from)
        .to_vec();
        let names: Vec<String> = distinct_paths(paths)
            .iter()
            .map(|p| p.display().to_string())
            .collect();
        assert_eq!(
            names,
            [
                "results/gpu-vulkan-0.csv",
                "results/gpu-gl.csv",
                "results/gpu-vulkan-2.csv"
            ]
        );
    }

    #[test]
    fn sizings_read_back_and_name_their_files() {
        let lavapipe = |sizing| Identity {
            device: "llvmpipe (LLVM 15.0.6, 256 bits)".into(),
            gpu_uuid: "-".into(),
            backend: "vulkan".into(),
            sizing,
        };
        for (sizing, text, path) in [
            (
                RunSizing::default(),
                "default",
                "llvmpipe-llvm-15-0-6-256-bits-vulkan.csv",
            ),
            (
                RunSizing {
                    quick: true,
                    ..RunSizing::default()
                },
                "quick",
                "llvmpipe-llvm-15-0-6-256-bits-vulkan-quick.csv",
            ),
            (
                RunSizing {
                    quick: false,
                    buffer_bytes: Some(64 << 20),
                    matrix: Some((1000, 3000)),
                    concurrent: None,
                },
                "buffer=64MiB;size=1000x3000",
                "llvmpipe-llvm-15-0-6-256-bits-vulkan-buffer-64mib-size-1000x3000.csv",
            ),
            (
                RunSizing {
                    quick: true,
                    concurrent: Some(2),
                    ..RunSizing::default()
                },
                "quick;concurrent=2",
                "llvmpipe-llvm-15-0-6-256-bits-vulkan-quick-concurrent-2.csv",
            ),
        ] {
            assert_eq!(sizing.to_string(), text);
            assert_eq!(text.parse::<RunSizing>(), Ok(sizing));
            assert_eq!(
                lavapipe(sizing).default_path(),
                Path::new("results").join(path)
            );
        }
        for bad in [
            "",
            "quick;quick",
            "buffer=0MiB",
            "size=3x",
            "fast",
            "concurrent=1",
            "concurrent=two",
        ] {
            assert!(bad.parse::<RunSizing>().is_err(), "{bad}");
        }
    }

    fn row(sizing: Option<RunSizing>, bytes: u64) -> Row {
        Row {
            family: Family::Copy,
            variant: "peak".into(),
            params: "launch=vec4".parse().unwrap(),
            status: Status::Ok,
            bytes,
            device: "GPU".into(),
            backend: "vulkan".into(),
            sizing,
            schema_version: SCHEMA_VERSION,
            ..Row::default()
        }
    }

    #[test]
    fn a_file_of_another_device_backend_or_sizing_is_refused() {
        let quick = RunSizing {
            quick: true,
            ..RunSizing::default()
        };
        let run = Identity {
            device: "GPU".into(),
            gpu_uuid: "GPU-1234".into(),
            backend: "vulkan".into(),
            sizing: RunSizing::default(),
        };
        let other_device = Row {
            device: "Other GPU".into(),
            ..row(Some(RunSizing::default()), 8)
        };
        let other_backend = Row {
            backend: "gl".into(),
            ..row(Some(RunSizing::default()), 8)
        };
        for (old, expected) in [
            (
                other_device,
                "line 2: rows of device `Other GPU` where this run measures `GPU`",
            ),
            (other_backend, "rows of backend `gl`"),
            (
                Row {
                    gpu_uuid: "GPU-5678".into(),
                    ..row(Some(RunSizing::default()), 8)
                },
                "rows of GPU `GPU-5678` where this run measures `GPU-1234`",
            ),
            (
                row(Some(quick), 8),
                "rows of sizing `quick` where this run's is `default`",
            ),
            (
                row(
                    Some(RunSizing {
                        concurrent: Some(2),
                        ..RunSizing::default()
                    }),
                    80,
                ),
                "rows of sizing `concurrent=2` where this run's is `default`",
            ),
            (
                row(None, 8),
                "moves 8 bytes where this run's sizing `default` gives 80",
            ),
        ] {
            let message = run
                .admit(Path::new("gpu.csv"), vec![(2, old)], &[row(None, 80)])
                .unwrap_err()
                .to_string();
            assert!(message.contains(expected), "{message}");
            assert!(
                message.contains(
                    "choose another --out (this run's default is results/gpu-1234-vulkan.csv)"
                ),
                "{message}"
            );
        }
        // A file that records no sizing, of the same sizes, takes this run's.
        let admitted = run
            .admit(
                Path::new("gpu.csv"),
                vec![(2, row(None, 80))],
                &[row(None, 80)],
            )
            .unwrap();
        assert_eq!(admitted[0].sizing, Some(RunSizing::default()));
        // CUDA rows of the same GPU say backend `cuda`.
        let cuda = Row {
            api: Api::Cuda,
            backend: "cuda".into(),
            ..row(Some(RunSizing::default()), 80)
        };
        assert!(
            run.admit(Path::new("gpu.csv"), vec![(2, cuda)], &[])
                .is_ok()
        );
    }
}
