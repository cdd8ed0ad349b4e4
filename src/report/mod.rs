//! `membench report`: a static HTML page of several devices' results — a summary of
//! each family's finding, the claims as a matrix of verdicts, the devices, the
//! toolchain's tax, and per family its charts and full comparison table — and each
//! chart again as a standalone SVG file.
//!
//! The page needs no network and no scripts: the charts are inline SVG, the style is
//! inline CSS. It is a `maud` template, so every text is escaped where it is written.
//! Everything is built in memory first, so bad input writes nothing, and written whole
//! ([`write()`]), so a failed write leaves the old report as it was.
//!
//! Ratios are to the first device given (`--baseline` picks another; without files,
//! GPUs come before a software adapter). Results of different sizings are charted
//! apart (`sizing`); family charts show each device in its plainest setting and the one
//! closest to the hardware, the tax chart the rest.
//!
//! This file builds the report; `page.rs` renders the page and its sections,
//! `verdicts.rs` the findings and the claims matrix, `tables.rs` the tables.
//!
//! [`fleet_page`] is the page of `membench fleet`: a strip plot per case with an
//! outlier GPU, and every case's median and MAD.

pub mod charts;
pub mod claims;
pub mod compare;
mod fleet;
mod page;
pub mod sizing;
mod tables;
mod verdicts;
mod write;

pub(crate) use fleet::fleet_page;
pub(crate) use write::destination;
pub use write::{MANIFEST, write};

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::results::DeviceResults;
use crate::results::join::{Line, join, taxes};
use crate::suite::Family;
use crate::validate;
use charts::{Chart, Panel};
use page::Page;
use validate::Validation;
use verdicts::device_name;

/// The page and its charts, not yet written.
#[derive(Debug)]
pub struct Report {
    /// The HTML page.
    pub html: String,
    /// The charts the page links to.
    pub charts: Vec<Chart>,
}

/// Every `*.csv` directly in `dir` that holds anything, by name: the default input of
/// `membench report`.
pub fn default_inputs(dir: &Path) -> Result<Vec<PathBuf>> {
    let io = Error::io(dir);
    let mut paths = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(&io)? {
        let path = entry.map_err(&io)?.path();
        let filled = std::fs::metadata(&path).is_ok_and(|m| m.is_file() && m.len() > 0);
        if path.extension().is_some_and(|e| e == "csv") && filled {
            paths.push(path);
        }
    }
    // By stem, so that `x.csv` comes before `x-unchecked.csv`.
    paths.sort_by_key(|path| path.file_stem().map(|s| s.to_os_string()));
    if paths.is_empty() {
        return Err(Error::Results {
            path: dir.to_owned(),
            message: "no results CSV here; name the CSVs to report on".to_owned(),
        });
    }
    Ok(paths)
}

/// `devices` with the baseline of the ratios first: the device whose label is
/// `baseline`, or the only file whose labels contain it (ignoring case), and the
/// rest of its file after it.
pub(crate) fn with_baseline(
    mut devices: Vec<DeviceResults>,
    baseline: &str,
) -> Result<Vec<DeviceResults>> {
    let wanted = baseline.to_lowercase();
    let exact = devices.iter().position(|d| d.label == baseline);
    let matching: Vec<usize> = (0..devices.len())
        .filter(|&i| devices[i].label.to_lowercase().contains(&wanted))
        .collect();
    let mut files: Vec<&Path> = matching
        .iter()
        .map(|&i| devices[i].path.as_path())
        .collect();
    files.dedup();
    let chosen = match (exact, matching.first(), files.len()) {
        (Some(index), _, _) => index,
        (None, Some(&index), 1) => index,
        (None, _, count) => {
            let labels: Vec<&str> = devices.iter().map(|d| d.label.as_str()).collect();
            let why = if count == 0 {
                "matches no device"
            } else {
                "matches devices of several files"
            };
            return Err(Error::Results {
                path: PathBuf::from("--baseline"),
                message: format!("{baseline:?} {why}; the devices: {}", labels.join("; ")),
            });
        }
    };
    let file = devices[chosen].path.clone();
    let label = devices[chosen].label.clone();
    // Stable: the others keep their order.
    devices.sort_by_key(|d| (d.label != label, d.path != file));
    Ok(devices)
}

/// Builds the page and its charts for `devices` (in the order given; ratios are to
/// the first), with a "Simulator" section of `validations` (of the same files,
/// [`validate::of_results`]) where there are any.
pub fn build(devices: &[DeviceResults], validations: &[Validation]) -> Result<Report> {
    let lines = join(devices);
    let panels = panels(devices, &lines);
    let mut drawn = Vec::new();
    for panel in &panels {
        drawn.push(charts::charts(panel)?);
    }
    // Per results file and setting, not per panel: each device's own roofline.
    drawn.push(charts::roofline_charts(devices)?);
    let placed = charts::kernels::placed(devices);
    drawn.push(charts::kernel_charts(&placed)?);
    let taxes = taxes(devices, &lines);
    let tax_charts = taxes
        .iter()
        .map(|tax| charts::tax_chart(devices, tax))
        .collect::<Result<Vec<_>>>()?;
    // A file with no row judged has no scatter.
    let scatters = validations
        .iter()
        .map(|v| {
            (!v.judged.is_empty())
                .then(|| charts::scatter_chart(v))
                .transpose()
        })
        .collect::<Result<Vec<_>>>()?;
    let mut families: Vec<Family> = Vec::new();
    for line in &lines {
        if !families.contains(&line.family) {
            families.push(line.family);
        }
    }
    let page = Page {
        devices,
        lines: &lines,
        panels: &panels,
        charts: &drawn,
        taxes: &taxes,
        tax_charts: &tax_charts,
        validations,
        scatters: &scatters,
        families: &families,
        placed: &placed,
    };
    let html = page.render().into_string();
    Ok(Report {
        html,
        charts: drawn
            .into_iter()
            .flatten()
            .chain(tax_charts)
            .chain(scatters.into_iter().flatten())
            .collect(),
    })
}

/// The family charts' panels: one per sizing, each device in the settings it is
/// charted in.
fn panels<'d>(devices: &'d [DeviceResults], lines: &[Line<'d>]) -> Vec<Panel<'d>> {
    sizing::groups(devices)
        .into_iter()
        .enumerate()
        .map(|(number, group)| {
            let shown = charted(devices, &group);
            let lines = lines
                .iter()
                .map(|line| Line {
                    cells: shown.iter().map(|&d| line.cells[d]).collect(),
                    ..line.clone()
                })
                .filter(|line| line.cells.iter().any(Option::is_some))
                .collect();
            let names: Vec<&str> = shown.iter().map(|&d| devices[d].label.as_str()).collect();
            Panel {
                devices: shown.iter().map(|&d| &devices[d]).collect(),
                lines,
                sizing: (number > 0).then(|| (number + 1, names.join(", "))),
            }
        })
        .collect()
}

/// Of `group`, what family charts show: per device its plainest setting and the one
/// closest to the hardware (the tax chart shows the rest), in `group`'s order.
fn charted(devices: &[DeviceResults], group: &[usize]) -> Vec<usize> {
    let closeness = |d: usize| devices[d].setting.closeness();
    let same_device = |a: usize, b: usize| device_name(&devices[a]) == device_name(&devices[b]);
    group
        .iter()
        .copied()
        .filter(|&d| {
            let others = group.iter().copied().filter(|&o| same_device(o, d));
            let (least, most) = others.fold((u8::MAX, 0), |(l, m), o| {
                (l.min(closeness(o)), m.max(closeness(o)))
            });
            closeness(d) == least || closeness(d) == most
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::page::GENERATOR;
    use super::*;
    use crate::results::{Row, SCHEMA_VERSION};

    #[test]
    fn the_compute_section_names_each_devices_peak_and_ridge_point() {
        let row = |family, variant: &str, params: &str, gbps| Row {
            family,
            variant: variant.into(),
            params: params.parse().unwrap(),
            status: crate::results::Status::Ok,
            verified: true,
            gbps_median: Some(gbps),
            schema_version: SCHEMA_VERSION,
            ..Row::default()
        };
        let device = DeviceResults {
            path: "gpu.csv".into(),
            kernel_files: Vec::new(),
            label: "GPU".into(),
            setting: crate::suite::Setting::WGPU,
            rows: vec![
                row(Family::Copy, "peak", "launch=vec4", 2000.0),
                row(Family::Compute, "f32", "rounds=1024", 200.0),
            ],
        };
        let page = build(&[device], &[]).unwrap().html;
        assert!(
            page.contains(
                "<li>GPU: compute, wgpu/default: f32 peak 51200 GFLOP/s (k=1024); ridge point \
                 25.6 flop/byte against 2000 GB/s</li>"
            ),
            "{page}"
        );
        // The roofline is drawn within the compute family's section.
        let section = &page[page.find("id=\"family-compute\"").unwrap()..];
        assert!(
            section.contains("id=\"chart-compute-roofline-gpu\""),
            "{page}"
        );
    }

    #[test]
    fn the_kernel_section_has_its_chart_and_a_table_of_its_rows() {
        let row = |family, variant: &str, params: &str, gbps| Row {
            family,
            device: "GPU".into(),
            ..crate::results::tests::row(variant, params, gbps)
        };
        let window = |kib: u64, gbps| {
            row(
                Family::Hierarchy,
                "window",
                &format!("footprint={}", kib << 10),
                gbps,
            )
        };
        let mut rows: Vec<Row> = [1, 2, 4, 8].map(|k| window(k, 20_000.0)).into();
        rows.extend([8 << 10, 16 << 10, 32 << 10].map(|k| window(k, 2000.0)));
        let device = |path: &str, rows| DeviceResults {
            path: Path::new(path).into(),
            kernel_files: Vec::new(),
            label: format!("GPU {path}"),
            setting: crate::suite::Setting::WGPU,
            rows,
        };
        let devices = [
            device("gpu.csv", rows),
            device(
                "gpu-kernels.csv",
                vec![Row {
                    sim_gbps: Some(812.0),
                    sim_bound: Some(crate::sim::model::Bound::Dram),
                    sim_sectors_per_request: Some(4.0),
                    sim_sector_use: Some(0.25),
                    ..row(
                        Family::Kernel,
                        "saxpy",
                        "size=n:1024;footprint=8192",
                        4000.0,
                    )
                }],
            ),
        ];
        let page = build(&devices, &[]).unwrap().html;
        let section = &page[page.find("id=\"family-kernel\"").unwrap()..];
        assert!(
            section.contains("id=\"chart-kernel-levels-gpu-gpu-kernels-csv\""),
            "{section}"
        );
        // 4000 of the L1's 20000 GB/s, and the prediction with its counters.
        assert!(
            section.contains("<td class=\"num\">8 KiB</td><td class=\"num\">4000.0</td><td>L1</td><td class=\"num\">20</td><td>812 GB/s, dram-bound, 4.0 sectors per request: 8 of every 32 bytes used</td>"),
            "{section}"
        );
    }

    #[test]
    fn the_page_escapes_what_it_reads_and_says_who_wrote_it() {
        let row = Row {
            family: Family::Copy,
            variant: "offset".into(),
            params: "offset=0".parse().unwrap(),
            status: crate::results::Status::Ok,
            verified: true,
            gbps_median: Some(1.5),
            schema_version: SCHEMA_VERSION,
            ..Row::default()
        };
        let device = DeviceResults {
            path: "a&b.csv".into(),
            kernel_files: Vec::new(),
            label: "<i>GPU</i> \"A\"".into(),
            setting: crate::suite::Setting::WGPU,
            rows: vec![row],
        };
        let page = build(&[device], &[]).unwrap().html;
        assert!(page.contains(GENERATOR));
        assert!(
            page.contains("&lt;i&gt;GPU&lt;/i&gt; &quot;A&quot;"),
            "{page}"
        );
        assert!(page.contains("<code>a&amp;b.csv</code>"));
        assert!(!page.contains("<i>GPU"));
        assert!(page.starts_with("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n"));
        assert!(page.ends_with("</body>\n</html>\n"));
    }

    #[test]
    fn a_kernels_file_joins_its_gpus_device_and_the_baseline_names_it() {
        let dir = crate::results::tests::scratch("kernels-join");
        let row = |family, variant: &str, params: &str, uuid: &str| Row {
            family,
            device: "GPU".into(),
            backend: "vulkan".into(),
            gpu_uuid: uuid.into(),
            ..crate::results::tests::row(variant, params, 100.0)
        };
        let uuid = "GPU-6663725b-8e8b-bfae-cf37-bd9c1cb699cf";
        let write = |name: &str, rows: &[Row]| {
            let path = dir.join(name);
            crate::results::write(&path, rows).unwrap();
            path
        };
        let suite = write("gpu.csv", &[row(Family::Copy, "offset", "offset=0", uuid)]);
        let saxpy = "size=n:1024;footprint=8192";
        let kernels = write(
            "gpu-kernels.csv",
            &[row(Family::Kernel, "saxpy", saxpy, uuid)],
        );
        // Another GPU of the model: its kernels file has no suite file beside it.
        let other_uuid = "GPU-0000725b-8e8b-bfae-cf37-bd9c1cb699cf";
        let other = write(
            "other-kernels.csv",
            &[row(Family::Kernel, "saxpy", saxpy, other_uuid)],
        );
        let devices = crate::results::load(&[suite.clone(), kernels.clone()]).unwrap();
        let [gpu] = &devices[..] else {
            panic!("one device expected: {devices:#?}");
        };
        assert_eq!(
            (gpu.label.as_str(), &gpu.path, &gpu.kernel_files),
            ("GPU (wgpu)", &suite, &vec![kernels.clone()])
        );
        assert_eq!(
            gpu.rows.iter().map(|r| r.family).collect::<Vec<_>>(),
            [Family::Copy, Family::Kernel]
        );
        // The device's name is one device's: the baseline resolves.
        assert_eq!(
            with_baseline(devices.clone(), "GPU").unwrap()[0].path,
            suite
        );
        // Its kernel rows are charted and listed as the device's own.
        let page = build(&devices, &[]).unwrap().html;
        let section = &page[page.find("id=\"family-kernel\"").unwrap()..];
        assert!(
            section.contains("id=\"chart-kernel-levels-gpu-wgpu\""),
            "{section}"
        );
        assert!(page.contains("gpu-kernels.csv</code>"), "{page}");
        // Another GPU's kernels file stays a device of its own.
        let devices = crate::results::load(&[suite, kernels, other.clone()]).unwrap();
        assert_eq!(devices.len(), 2, "{devices:#?}");
        assert_eq!(
            (&devices[1].path, devices[1].kernel_files.len()),
            (&other, 0)
        );
    }
}
