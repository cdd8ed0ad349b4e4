//! `membench compare`: the results CSVs of several devices side by side.
//!
//! Rows are joined on (family, variant, param). A case one file lacks stays in the
//! table as `missing`; a case a device failed or skipped shows its status. Bandwidth
//! ratios are to the first file's device, predictions stand beside each device's
//! measurement, and a device measured in several settings gets its toolchain tax; every
//! format shows all of it.
//!
//! With a baseline file, each case of the other files is shown as the baseline judge
//! ([`crate::judge::baseline`]) decided it: same, faster or slower.

use std::path::{Path, PathBuf};

use comfy_table::{CellAlignment, Table, TableStyle};

use crate::error::{Error, Result};
use crate::judge::baseline::{Change, Compared};
use crate::results::join::{Line, join, tax_ratio, taxes};
use crate::results::{self, DeviceResults, Format, Row, markdown_table};

/// How the tables show a case.
impl Line<'_> {
    /// The three cells that name the case, as the text and CSV tables start a row.
    fn case_cells(&self) -> Vec<String> {
        vec![
            self.family.to_string(),
            self.variant.to_owned(),
            self.params.to_string(),
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
pub(crate) const FORMATS: &[Format] = &[Format::Table, Format::Csv, Format::Markdown];

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

/// The files `device`'s rows were read from, each between `quote`s, joined by commas.
fn files_of(device: &DeviceResults, quote: &str) -> String {
    let files: Vec<String> = device
        .files()
        .map(|path| format!("{quote}{}{quote}", path.display()))
        .collect();
    files.join(", ")
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
            files_of(device, "")
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
            "- **{}**: {}\n",
            device.label,
            files_of(device, "`")
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
        format!("`{}`", line.params),
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

/// The judged changes in `format`, against `baseline` (named by its file) with `threshold`
/// (a fraction).
pub(crate) fn render_changes(
    judged: &[Compared<'_>],
    baseline: &Path,
    threshold: f64,
    format: Format,
) -> Result<String> {
    let percent = |value: Option<f64>, digits: usize| number(value.map(|v| 100.0 * v), digits);
    let speed = |row: &Row| {
        row.gbps_median
            .map_or_else(String::new, |gbps| results::speed_text(row.family, gbps))
    };
    let verdict = |j: &Compared<'_>| {
        if j.regression && j.outcome == Change::Slower {
            format!("slower, beyond {}", percent(Some(threshold), 1) + " %")
        } else {
            j.outcome.as_str().to_owned()
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
                j.row.params.to_string(),
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
                        j.row.params.to_string(),
                        j.row.setting().to_string(),
                        j.label.to_owned(),
                        full(j.baseline.gbps_median),
                        full(j.row.gbps_median),
                        full(j.change),
                        j.noise.to_string(),
                        j.outcome.as_str().to_owned(),
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
    use crate::suite::{Build, Family, Params, Setting};

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
            params: "n=1024".parse().unwrap(),
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
            kernel_files: Vec::new(),
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
            params: "offset=0".parse().unwrap(),
            status: crate::results::Status::Ok,
            gbps_median: Some(1.5),
            ..Row::default()
        };
        let devices = [DeviceResults {
            path: "a.csv".into(),
            kernel_files: Vec::new(),
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
}
