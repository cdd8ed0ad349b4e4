//! `membench compare`: the results CSVs of several devices side by side.
//!
//! Rows are joined on (family, variant, param). A case one file lacks stays in the
//! table as `missing`; a case a device failed or skipped shows its status. Bandwidth
//! ratios are to the first file's device, predictions stand beside each device's
//! measurement, and a device measured in several settings gets its toolchain tax; every
//! format shows all of it.
//!
//! With a baseline file, each case of the other files is judged against it instead:
//! same, faster or slower, within the noise of both measurements or beyond it.

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use comfy_table::{CellAlignment, Table, TableStyle};

use crate::error::{Error, Result};
use crate::results::{self, DeviceResults, Format, Row, markdown_table};
use crate::suite::{Family, Params, REGISTRY};

/// One case across devices.
#[derive(Clone, Debug)]
pub struct Line<'a> {
    pub family: Family,
    pub variant: &'a str,
    pub param: &'a Params,
    /// One per device, in file order; `None` where the file has no row for the case.
    pub cells: Vec<Option<&'a Row>>,
}

impl Line<'_> {
    /// The device's measured GB/s, where it measured the case.
    pub fn gbps(&self, device: usize) -> Option<f64> {
        self.cells.get(device)?.as_ref()?.gbps_median
    }

    /// The device's predicted GB/s.
    pub fn sim_gbps(&self, device: usize) -> Option<f64> {
        self.cells.get(device)?.as_ref()?.sim_gbps
    }

    /// What bounds the prediction of `device`, where its row records it.
    pub fn sim_bound(&self, device: usize) -> Option<crate::sim::model::Bound> {
        self.cells.get(device)?.as_ref()?.sim_bound
    }

    /// The device's GB/s over the first device's.
    pub fn ratio(&self, device: usize) -> Option<f64> {
        let first = self.gbps(0).filter(|&gbps| gbps > 0.0)?;
        Some(self.gbps(device)? / first)
    }

    /// `ok`, `failed`, `skipped`, or `missing` where the file has no row.
    pub fn status(&self, device: usize) -> &str {
        match self.cells.get(device) {
            Some(Some(row)) => row.status.as_str(),
            _ => "missing",
        }
    }

    /// The three cells that name the case, as the text and CSV tables start a row.
    fn case_cells(&self) -> Vec<String> {
        vec![
            self.family.to_string(),
            self.variant.to_owned(),
            self.param.to_string(),
        ]
    }

    /// The measured speed as the tables print it (GB/s, or ns per load for a latency
    /// family: [`results::speed_text`]), or the status where there is none.
    fn gbps_text(&self, device: usize) -> String {
        let throttled = self
            .cells
            .get(device)
            .and_then(|row| *row)
            .is_some_and(Row::throttled);
        self.gbps(device).map_or_else(
            || self.status(device).to_owned(),
            |gbps| {
                let mark = if throttled { THROTTLED } else { "" };
                format!("{}{mark}", results::speed_text(self.family, gbps))
            },
        )
    }

    /// The predicted speed as the tables print it; nothing where there is none.
    fn sim_text(&self, device: usize) -> String {
        self.sim_gbps(device)
            .map_or_else(String::new, |gbps| results::speed_text(self.family, gbps))
    }
}

/// What marks a bandwidth measured while the GPU was throttled.
const THROTTLED: &str = " *";

/// Every case of every device, joined on (family, variant, param), in case order.
pub fn join(devices: &[DeviceResults]) -> Vec<Line<'_>> {
    let mut lines: BTreeMap<CaseKey<'_>, Vec<Option<&Row>>> = BTreeMap::new();
    for (index, device) in devices.iter().enumerate() {
        for row in &device.rows {
            let cells = lines
                .entry(CaseKey(row.family, &row.variant, &row.param))
                .or_insert_with(|| vec![None; devices.len()]);
            cells[index] = Some(row);
        }
    }
    lines
        .into_iter()
        .map(|(CaseKey(family, variant, param), cells)| Line {
            family,
            variant,
            param,
            cells,
        })
        .collect()
}

/// A case's key, ordered as `membench list` shows cases: experiments in registry order
/// (unknown ones after, by name), params in natural order (`offset=2` before
/// `offset=10`).
#[derive(PartialEq, Eq)]
struct CaseKey<'a>(Family, &'a str, &'a Params);

impl Ord for CaseKey<'_> {
    fn cmp(&self, other: &Self) -> Ordering {
        experiment_order(self.0, self.1)
            .cmp(&experiment_order(other.0, other.1))
            .then_with(|| self.2.cmp(other.2))
    }
}

impl PartialOrd for CaseKey<'_> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// Sorts experiments: families in their order, variants in registry order, a variant
/// the registry lacks (from another version) after, by name.
pub fn experiment_order(family: Family, variant: &str) -> (Family, usize, &str) {
    let variant_index = REGISTRY
        .iter()
        .position(|e| e.family == family && e.variant == variant)
        .unwrap_or(usize::MAX);
    (family, variant_index, variant)
}

/// One device measured in several settings: per case, each setting's GB/s and its
/// ratio to the setting closest to the hardware — the toolchain's tax beside the
/// memory system.
pub struct Tax<'l, 'r> {
    pub device: &'r str,
    /// Indexes of this device's settings among the compared ones, in setting order.
    pub columns: Vec<usize>,
    /// The column the others are divided by: CUDA where it was measured, else the
    /// last wgpu build (tax-free before unchecked before default).
    pub reference: usize,
    /// The cases measured on the GPU clock in at least two of the settings.
    pub lines: Vec<&'l Line<'r>>,
}

impl Tax<'_, '_> {
    /// The columns other than the reference, each divided by it.
    pub fn ratio_columns(&self) -> impl Iterator<Item = usize> + '_ {
        self.columns
            .iter()
            .copied()
            .filter(|&c| c != self.reference)
    }
}

/// The tax of every device compared in more than one setting, in file order.
pub fn taxes<'l, 'r>(devices: &'r [DeviceResults], lines: &'l [Line<'r>]) -> Vec<Tax<'l, 'r>> {
    let mut names: Vec<&str> = Vec::new();
    for device in devices.iter().filter_map(|d| d.metadata()) {
        if !names.contains(&device.device.as_str()) {
            names.push(&device.device);
        }
    }
    names
        .into_iter()
        .filter_map(|name| {
            let mut columns: Vec<usize> = (0..devices.len())
                .filter(|&i| devices[i].metadata().is_some_and(|row| row.device == name))
                .collect();
            columns.sort_by_key(|&i| devices[i].setting);
            let reference = *columns
                .iter()
                .max_by_key(|&&i| devices[i].setting.closeness())?;
            let lines: Vec<&Line<'_>> = lines
                .iter()
                .filter(|line| {
                    columns
                        .iter()
                        .filter(|&&c| {
                            line.cells[c].is_some_and(|row| row.timer == "gpu")
                                && line.gbps(c).is_some()
                        })
                        .count()
                        >= 2
                })
                .collect();
            (columns.len() >= 2 && !lines.is_empty()).then_some(Tax {
                device: name,
                columns,
                reference,
                lines,
            })
        })
        .collect()
}

/// A case's GB/s in `column` over its GB/s in the reference.
pub fn tax_ratio(tax: &Tax<'_, '_>, line: &Line<'_>, column: usize) -> Option<f64> {
    let reference = line.gbps(tax.reference).filter(|&g| g > 0.0)?;
    Some(line.gbps(column)? / reference)
}

/// One tax as a table: its title, header, and per case its line and number cells.
struct TaxTable<'l, 'r> {
    title: String,
    header: Vec<String>,
    rows: Vec<(&'l Line<'r>, Vec<String>)>,
}

/// The tax tables of `devices`: per device its GB/s in each setting and the ratios to
/// the reference setting.
fn tax_tables<'l, 'r>(
    devices: &'r [DeviceResults],
    lines: &'l [Line<'r>],
) -> Vec<TaxTable<'l, 'r>> {
    taxes(devices, lines)
        .iter()
        .map(|tax| {
            let setting = |c: usize| devices[c].setting.to_string();
            let mut header = case_header();
            header.extend(tax.columns.iter().map(|&c| setting(c)));
            header.extend(
                tax.ratio_columns()
                    .map(|c| format!("{} ÷ {}", setting(c), setting(tax.reference))),
            );
            let rows = tax
                .lines
                .iter()
                .map(|&line| {
                    let mut cells: Vec<String> =
                        tax.columns.iter().map(|&c| line.gbps_text(c)).collect();
                    cells.extend(
                        tax.ratio_columns()
                            .map(|c| number(tax_ratio(tax, line, c), 2)),
                    );
                    (line, cells)
                })
                .collect();
            TaxTable {
                title: format!(
                    "the toolchain's tax on {} (GB/s per api/build; ratios to {})",
                    tax.device,
                    setting(tax.reference)
                ),
                header,
                rows,
            }
        })
        .collect()
}

/// What `compare` prints (the table numbers devices in a legend above it).
pub const FORMATS: &[Format] = &[Format::Table, Format::Csv, Format::Markdown];

/// The comparison in `format`, one of [`FORMATS`].
pub fn render(devices: &[DeviceResults], format: Format) -> Result<String> {
    let lines = join(devices);
    match format {
        Format::Table => Ok(table(devices, &lines)),
        Format::Markdown => Ok(markdown(devices, &lines)),
        Format::Csv => csv_text(devices, &lines),
        Format::Json | Format::Jsonl => Err(format.refused("compare", FORMATS)),
    }
}

/// `value` with `digits` decimals; nothing where there is no value.
pub(super) fn number(value: Option<f64>, digits: usize) -> String {
    value.map_or_else(String::new, |v| format!("{v:.digits$}"))
}

/// One device's columns: measured, ratio to the first (not for the first), predicted.
fn device_cells(line: &Line<'_>, device: usize) -> Vec<String> {
    let mut cells = vec![line.gbps_text(device)];
    if device > 0 {
        cells.push(number(line.ratio(device), 3));
    }
    cells.push(line.sim_text(device));
    cells
}

/// The header cells of the three columns that name a case.
fn case_header() -> Vec<String> {
    ["family", "variant", "param"].map(str::to_owned).to_vec()
}

/// The three columns that name a case; the devices' numbers follow.
const CASE_COLUMNS: usize = 3;

/// A table of `header` and `rows`, drawn in `style` with `padding` around each cell:
/// case names to the left, numbers to the right.
fn aligned_table(
    style: TableStyle,
    padding: (u16, u16),
    header: Vec<String>,
    rows: Vec<Vec<String>>,
) -> Table {
    let mut table = Table::new();
    table.load_style(style).set_header(header).add_rows(rows);
    for (index, column) in table.column_iter_mut().enumerate() {
        column.set_padding(padding);
        if index >= CASE_COLUMNS {
            column.set_cell_alignment(CellAlignment::Right);
        }
    }
    table
}

fn table(devices: &[DeviceResults], lines: &[Line<'_>]) -> String {
    let mut out = String::from(
        "devices (GB/s measured, or ns per load for latency; [n]/[1] = ratio of speeds to \
         device 1; sim = predicted):\n",
    );
    for (index, device) in devices.iter().enumerate() {
        let about = device.metadata().map_or(String::new(), |row| {
            format!(
                "driver {}, subgroup {}, commit {}",
                row.driver, row.subgroup_size, row.git_commit
            )
        });
        out.push_str(&format!(
            "  [{}] {}  {}  ({about})\n",
            index + 1,
            device.label,
            device.path.display()
        ));
    }
    out.push('\n');
    let mut header = case_header();
    for index in 0..devices.len() {
        let n = index + 1;
        header.push(format!("GB/s [{n}]"));
        if index > 0 {
            header.push(format!("[{n}]/[1]"));
        }
        header.push(format!("sim [{n}]"));
    }
    let body: Vec<Vec<String>> = lines
        .iter()
        .map(|line| {
            let mut cells = line.case_cells();
            for index in 0..devices.len() {
                cells.extend(device_cells(line, index));
            }
            cells
        })
        .collect();
    // No borders: columns two spaces apart, as a terminal reads them.
    let table = aligned_table(TableStyle::new(), (0, 2), header, body);
    out.push_str(&table.trim_fmt());
    out.push('\n');
    if lines
        .iter()
        .any(|line| line.cells.iter().flatten().any(|row| row.throttled()))
    {
        out.push_str(&format!(
            "{THROTTLED} measured while a throttle held the clocks down (its note says which)\n"
        ));
    }
    for tax in tax_tables(devices, lines) {
        out.push_str(&format!("\n{}:\n", tax.title));
        let rows = tax
            .rows
            .into_iter()
            .map(|(line, numbers)| [line.case_cells(), numbers].concat())
            .collect();
        let table = aligned_table(TableStyle::new(), (0, 2), tax.header, rows);
        out.push_str(&table.trim_fmt());
        out.push('\n');
    }
    out
}

fn markdown(devices: &[DeviceResults], lines: &[Line<'_>]) -> String {
    let mut out = String::new();
    for device in devices {
        out.push_str(&format!(
            "- **{}**: `{}`\n",
            device.label,
            device.path.display()
        ));
    }
    out.push('\n');
    let first = devices.first().map_or("", |d| d.label.as_str());
    let mut header = case_header();
    for (index, device) in devices.iter().enumerate() {
        header.push(format!("{} GB/s", device.label));
        if index > 0 {
            header.push(format!("÷ {first}"));
        }
        header.push(format!("{} predicted GB/s", device.label));
    }
    let rows: Vec<Vec<String>> = lines
        .iter()
        .map(|line| {
            let mut cells = markdown_case_cells(line);
            for index in 0..devices.len() {
                cells.extend(device_cells(line, index));
            }
            cells
        })
        .collect();
    out.push_str(&markdown_table(&header, &rows, CASE_COLUMNS));
    for tax in tax_tables(devices, lines) {
        let rows: Vec<Vec<String>> = tax
            .rows
            .into_iter()
            .map(|(line, numbers)| [markdown_case_cells(line), numbers].concat())
            .collect();
        out.push_str(&format!("\n**{}**\n\n", tax.title));
        out.push_str(&markdown_table(&tax.header, &rows, CASE_COLUMNS));
    }
    out
}

/// The case cells as Markdown shows them: the param as code.
fn markdown_case_cells(line: &Line<'_>) -> Vec<String> {
    vec![
        line.family.to_string(),
        line.variant.to_owned(),
        format!("`{}`", line.param),
    ]
}

fn csv_text(devices: &[DeviceResults], lines: &[Line<'_>]) -> Result<String> {
    let failed = |message: String| Error::Results {
        path: PathBuf::from("<stdout>"),
        message,
    };
    let mut writer = csv::Writer::from_writer(Vec::new());
    let mut header = case_header();
    for (index, device) in devices.iter().enumerate() {
        header.push(format!("{} status", device.label));
        header.push(format!("{} gbps", device.label));
        if index > 0 {
            header.push(format!("{} ratio", device.label));
        }
        header.push(format!("{} sim_gbps", device.label));
    }
    // The tax: each device's ratios of its settings to its reference, full precision.
    let taxes = taxes(devices, lines);
    for tax in &taxes {
        header.extend(tax.ratio_columns().map(|c| {
            format!(
                "{} {} ÷ {}",
                tax.device, devices[c].setting, devices[tax.reference].setting
            )
        }));
    }
    writer
        .write_record(&header)
        .map_err(|e| failed(e.to_string()))?;
    for line in lines {
        let mut cells = line.case_cells();
        for index in 0..devices.len() {
            cells.push(line.status(index).to_owned());
            // Full precision: a CSV is read by programs.
            cells.push(line.gbps(index).map_or_else(String::new, |v| v.to_string()));
            if index > 0 {
                cells.push(
                    line.ratio(index)
                        .map_or_else(String::new, |v| v.to_string()),
                );
            }
            cells.push(
                line.sim_gbps(index)
                    .map_or_else(String::new, |v| v.to_string()),
            );
        }
        for tax in &taxes {
            let taxed = tax.lines.iter().any(|taxed| std::ptr::eq(*taxed, line));
            cells.extend(tax.ratio_columns().map(|c| {
                taxed
                    .then(|| tax_ratio(tax, line, c))
                    .flatten()
                    .map_or_else(String::new, |v| v.to_string())
            }));
        }
        writer
            .write_record(&cells)
            .map_err(|e| failed(e.to_string()))?;
    }
    crate::results::csv_text(writer).map_err(failed)
}

/// What a case did against the baseline.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// The difference is within the noise of the two measurements.
    Same,
    Faster,
    Slower,
    /// Measured in the baseline, failed here.
    Failed,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Same => "same",
            Verdict::Faster => "faster",
            Verdict::Slower => "slower",
            Verdict::Failed => "failed",
        }
    }
}

/// One case of a compared file, judged against the same case in the same setting
/// (api and build) of the baseline file.
pub struct Judged<'a> {
    /// The compared file's device, as the tables name it.
    pub label: &'a str,
    pub row: &'a Row,
    pub baseline: &'a Row,
    /// GB/s over the baseline's, less one: 0.05 is 5 % faster.
    pub change: Option<f64>,
    /// The relative noise of the two measurements together, √(cv² + cv_baseline²).
    pub noise: f64,
    pub verdict: Verdict,
    /// Slower by more than the threshold (and the noise), or failed: `membench compare`
    /// exits non-zero.
    pub regression: bool,
}

/// Every case of `others` that `baseline` measured in the same setting and at the same
/// size (bytes moved), judged: a change within the combined noise of the two rows is
/// `same`; a case slower by more than `threshold` (a fraction: 0.05 for 5 %) and the
/// noise, or failed, is a regression. A case the other file skipped is not judged.
pub fn judge<'a>(
    baseline: &'a [DeviceResults],
    others: &'a [DeviceResults],
    threshold: f64,
) -> Vec<Judged<'a>> {
    let reference: BTreeMap<_, &Row> = baseline
        .iter()
        .flat_map(|device| &device.rows)
        .filter(|row| row.gbps_median.is_some())
        .map(|row| ((row.key(), row.bytes), row))
        .collect();
    others
        .iter()
        .flat_map(|device| {
            device
                .rows
                .iter()
                .map(move |row| (device.label.as_str(), row))
        })
        .filter_map(|(label, row)| {
            let baseline = *reference.get(&(row.key(), row.bytes))?;
            let noise = row.cv.unwrap_or(0.0).hypot(baseline.cv.unwrap_or(0.0));
            let change = row
                .gbps_median
                .zip(baseline.gbps_median)
                .map(|(gbps, base)| gbps / base - 1.0);
            let verdict = match change {
                Some(change) if change.abs() <= noise => Verdict::Same,
                Some(change) if change > 0.0 => Verdict::Faster,
                Some(_) => Verdict::Slower,
                None if row.status == results::Status::Failed => Verdict::Failed,
                None => return None,
            };
            let regression = verdict == Verdict::Failed
                || change.is_some_and(|change| verdict == Verdict::Slower && -change > threshold);
            Some(Judged {
                label,
                row,
                baseline,
                change,
                noise,
                verdict,
                regression,
            })
        })
        .collect()
}

/// The verdicts in `format`, against `baseline` (named by its file) with `threshold`
/// (a fraction).
pub fn render_verdicts(
    judged: &[Judged<'_>],
    baseline: &Path,
    threshold: f64,
    format: Format,
) -> Result<String> {
    let percent = |value: Option<f64>, digits: usize| number(value.map(|v| 100.0 * v), digits);
    let speed = |row: &Row| {
        row.gbps_median
            .map_or_else(String::new, |gbps| results::speed_text(row.family, gbps))
    };
    let verdict = |j: &Judged<'_>| {
        if j.regression && j.verdict == Verdict::Slower {
            format!("slower, beyond {}", percent(Some(threshold), 1) + " %")
        } else {
            j.verdict.as_str().to_owned()
        }
    };
    let header: Vec<String> = [
        "family",
        "variant",
        "param",
        "api/build",
        "device",
        "baseline GB/s",
        "GB/s",
        "change %",
        "noise %",
        "verdict",
    ]
    .map(str::to_owned)
    .to_vec();
    let rows: Vec<Vec<String>> = judged
        .iter()
        .map(|j| {
            vec![
                j.row.family.to_string(),
                j.row.variant.clone(),
                j.row.param.to_string(),
                j.row.setting().to_string(),
                j.label.to_owned(),
                speed(j.baseline),
                speed(j.row),
                percent(j.change, 1),
                percent(Some(j.noise), 2),
                verdict(j),
            ]
        })
        .collect();
    let regressions = judged.iter().filter(|j| j.regression).count();
    let conclusion = format!(
        "{regressions} of {} cases slower than {} by more than {} % (or failed)\n",
        judged.len(),
        baseline.display(),
        percent(Some(threshold), 1)
    );
    match format {
        Format::Table => {
            let table = aligned_table(TableStyle::new(), (0, 2), header, rows);
            Ok(format!("{}\n\n{conclusion}", table.trim_fmt()))
        }
        Format::Markdown => Ok(format!(
            "{}\n{conclusion}",
            markdown_table(&header, &rows, 5)
        )),
        Format::Json | Format::Jsonl => Err(format.refused("compare", FORMATS)),
        Format::Csv => {
            let failed = |message: String| Error::Results {
                path: PathBuf::from("<stdout>"),
                message,
            };
            let mut writer = csv::Writer::from_writer(Vec::new());
            writer
                .write_record([
                    "family",
                    "variant",
                    "param",
                    "setting",
                    "device",
                    "baseline_gbps",
                    "gbps",
                    "change",
                    "noise",
                    "verdict",
                    "regression",
                ])
                .map_err(|e| failed(e.to_string()))?;
            for j in judged {
                let full = |value: Option<f64>| value.map_or_else(String::new, |v| v.to_string());
                writer
                    .write_record([
                        j.row.family.to_string(),
                        j.row.variant.clone(),
                        j.row.param.to_string(),
                        j.row.setting().to_string(),
                        j.label.to_owned(),
                        full(j.baseline.gbps_median),
                        full(j.row.gbps_median),
                        full(j.change),
                        j.noise.to_string(),
                        j.verdict.as_str().to_owned(),
                        j.regression.to_string(),
                    ])
                    .map_err(|e| failed(e.to_string()))?;
            }
            crate::results::csv_text(writer).map_err(failed)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suite::{Build, Setting};

    #[test]
    fn labels_say_the_build_and_the_adapters_at_once() {
        let row = |build, concurrent| Row {
            device: "GPU".into(),
            backend: "vulkan".into(),
            build,
            sizing: Some(crate::suite::RunSizing {
                concurrent,
                ..crate::suite::RunSizing::default()
            }),
            ..Row::default()
        };
        assert_eq!(row(Build::Default, None).device_label(), "GPU (wgpu)");
        assert_eq!(
            row(Build::TaxFree, Some(2)).device_label(),
            "GPU (wgpu, tax-free, concurrent=2)"
        );
    }

    #[test]
    fn natural_order_reads_numbers() {
        let mut params: Vec<Params> = [
            "offset=10",
            "offset=2",
            "offset=1",
            "size=8192x8192",
            "size=4096x4096",
        ]
        .map(|p| p.parse().unwrap())
        .to_vec();
        params.sort();
        assert_eq!(
            params.iter().map(Params::to_string).collect::<Vec<_>>(),
            [
                "offset=1",
                "offset=2",
                "offset=10",
                "size=4096x4096",
                "size=8192x8192"
            ]
        );
    }

    /// One device in three settings: a GPU-clock case in each, a host-clock one in two.
    fn taxed_devices() -> [DeviceResults; 3] {
        let row = |variant: &str, setting: Setting, timer: &str, gbps: f64| Row {
            family: Family::Reduce,
            variant: variant.into(),
            param: "n=1024".parse().unwrap(),
            status: crate::results::Status::Ok,
            timer: timer.into(),
            gbps_median: Some(gbps),
            device: "GPU".into(),
            api: setting.api(),
            build: setting.build(),
            ..Row::default()
        };
        let device = |setting: Setting, rows: Vec<Row>| DeviceResults {
            path: "gpu.csv".into(),
            label: format!("GPU {setting}"),
            setting,
            rows,
        };
        [
            device(
                Setting::WGPU,
                vec![
                    row("smem", Setting::WGPU, "gpu", 100.0),
                    row("upload", Setting::WGPU, "host", 5.0),
                ],
            ),
            device(
                Setting::CUDA,
                vec![row("smem", Setting::CUDA, "gpu", 400.0)],
            ),
            device(
                Setting::TAX_FREE,
                vec![
                    row("smem", Setting::TAX_FREE, "gpu", 360.0),
                    row("upload", Setting::TAX_FREE, "host", 5.0),
                ],
            ),
        ]
    }

    #[test]
    fn the_tax_is_read_against_the_setting_closest_to_the_hardware() {
        let devices = taxed_devices();
        let lines = join(&devices);
        let taxes = taxes(&devices, &lines);
        assert_eq!(taxes.len(), 1);
        let tax = &taxes[0];
        // Setting order, CUDA the reference; host-clock cases are not the tax.
        assert_eq!(tax.columns, [0, 2, 1]);
        assert_eq!(tax.reference, 1);
        assert_eq!(tax.lines.len(), 1);
        let ratios: Vec<Option<f64>> = tax
            .ratio_columns()
            .map(|c| tax_ratio(tax, tax.lines[0], c))
            .collect();
        assert_eq!(ratios, [Some(0.25), Some(0.9)]);
        let text = render(&devices, Format::Table).unwrap();
        assert!(
            text.contains(
                "the toolchain's tax on GPU (GB/s per api/build; ratios to cuda/default)"
            ),
            "{text}"
        );
        assert!(text.contains("wgpu/tax-free ÷ cuda/default"), "{text}");
    }

    #[test]
    fn verdicts_read_the_change_against_the_noise_and_the_threshold() {
        let row = |variant: &str, gbps: Option<f64>, cv: f64| Row {
            family: Family::Copy,
            variant: variant.into(),
            param: "offset=0".parse().unwrap(),
            status: if gbps.is_some() {
                crate::results::Status::Ok
            } else {
                crate::results::Status::Failed
            },
            gbps_median: gbps,
            cv: Some(cv),
            ..Row::default()
        };
        let file = |rows: Vec<Row>| {
            vec![DeviceResults {
                path: "gpu.csv".into(),
                label: "GPU".into(),
                setting: Setting::WGPU,
                rows,
            }]
        };
        let baseline = file(
            ["faster", "noisy", "regressed", "slower", "failed"]
                .map(|variant| row(variant, Some(100.0), 0.01))
                .to_vec(),
        );
        let others = file(vec![
            // 1.5 % beyond a combined noise of √2 %.
            row("faster", Some(101.5), 0.01),
            // 7 % within √(1² + 7²) %.
            row("noisy", Some(93.0), 0.07),
            row("regressed", Some(90.0), 0.01),
            row("slower", Some(97.0), 0.01),
            row("failed", None, 0.0),
            row("new", Some(1.0), 0.0),
        ]);
        let judged: Vec<(&str, Verdict, bool)> = judge(&baseline, &others, 0.05)
            .iter()
            .map(|j| (j.row.variant.as_str(), j.verdict, j.regression))
            .collect();
        assert_eq!(
            judged,
            [
                ("faster", Verdict::Faster, false),
                ("noisy", Verdict::Same, false),
                ("regressed", Verdict::Slower, true),
                ("slower", Verdict::Slower, false),
                ("failed", Verdict::Failed, true),
            ]
        );
    }

    #[test]
    fn every_format_shows_the_tax() {
        let devices = taxed_devices();
        let markdown = render(&devices, Format::Markdown).unwrap();
        assert!(
            markdown.contains(
                "**the toolchain's tax on GPU (GB/s per api/build; ratios to cuda/default)**"
            ),
            "{markdown}"
        );
        // The main table's row first, the tax table's last.
        let tax_row = markdown
            .lines()
            .filter(|line| line.starts_with("| reduce | smem | `n=1024` | 100.0 |"))
            .nth(1)
            .unwrap_or_else(|| panic!("{markdown}"));
        assert!(tax_row.ends_with("| 0.25 | 0.90 |"), "{tax_row}");
        let csv = render(&devices, Format::Csv).unwrap();
        let mut reader = csv::Reader::from_reader(csv.as_bytes());
        let header = reader.headers().unwrap().clone();
        let column = header
            .iter()
            .position(|name| name == "GPU wgpu/tax-free ÷ cuda/default")
            .unwrap_or_else(|| panic!("{csv}"));
        let ratios: Vec<String> = reader
            .records()
            .map(|record| record.unwrap()[column].to_owned())
            .collect();
        // smem, then the host-clock upload, which is no tax.
        assert_eq!(ratios, ["0.9", ""]);
    }

    #[test]
    fn markdown_has_a_delimiter_row_and_escapes_bars() {
        let row = Row {
            family: Family::Copy,
            variant: "offset".into(),
            param: "offset=0".parse().unwrap(),
            status: crate::results::Status::Ok,
            gbps_median: Some(1.5),
            ..Row::default()
        };
        let devices = [DeviceResults {
            path: "a.csv".into(),
            label: "A | B".into(),
            setting: Setting::WGPU,
            rows: vec![row],
        }];
        let text = markdown(&devices, &join(&devices));
        let table: Vec<&str> = text.lines().filter(|l| l.starts_with('|')).collect();
        assert!(table[0].contains(" A \\| B GB/s "), "{text}");
        let delimiters: Vec<&str> = table[1]
            .split('|')
            .map(str::trim)
            .filter(|cell| !cell.is_empty())
            .collect();
        assert_eq!(delimiters, ["---", "---", "---", "---:", "---:"]);
        assert_eq!(table.len(), 3);
    }

    #[test]
    fn registry_families_come_first() {
        let order = |family, variant| experiment_order(family, variant);
        assert!(order(Family::Copy, "offset") < order(Family::Copy, "stride"));
        assert!(order(Family::Copy, "launch") < order(Family::Copy, "aaa"));
        assert!(order(Family::Copy, "aaa") < order(Family::Transpose, "naive_row"));
    }
}
