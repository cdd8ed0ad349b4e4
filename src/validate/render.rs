//! How `simulate --validate` prints its judgement: per file the headline, the accuracy
//! per family, the rank agreement of each ladder and sweep and, verbose, every row; as
//! an aligned table, CSV or Markdown.

use super::stats::{Accuracy, RANK_TIES};
use super::{GroupKind, NotJudged, Ranked, Role, Validation};
use crate::results::{Format, speed_text};
use crate::sim::model::Bound;
use crate::suite::Api;

/// The columns of the accuracy table, after `rows` and `family`.
const ACCURACY_HEADER: [&str; 7] = [
    "n",
    "MAPE %",
    "median APE %",
    "gmean meas/pred",
    "within 10 %",
    "within 25 %",
    "",
];

/// An accuracy's cells (percentages with one decimal).
fn accuracy_cells(a: &Accuracy) -> Vec<String> {
    vec![
        a.n.to_string(),
        format!("{:.1}", 100.0 * a.mape),
        format!("{:.1}", 100.0 * a.median_ape),
        format!("{:.3}", a.geomean_ratio),
        format!("{:.0}", 100.0 * a.within_10),
        format!("{:.0}", 100.0 * a.within_25),
    ]
}

/// The accuracy table of a validation: a line per role and family.
pub(crate) fn accuracy_table(validation: &Validation) -> (Vec<String>, Vec<Vec<String>>) {
    let header = ["rows", "family"]
        .into_iter()
        .chain(ACCURACY_HEADER.into_iter().take(6))
        .map(str::to_owned)
        .collect();
    let rows = [Role::HeldOut, Role::Calibration]
        .into_iter()
        .flat_map(|role| {
            validation
                .accuracy(role)
                .into_iter()
                .map(move |(family, accuracy)| {
                    let mut cells = vec![role.label().to_owned(), family];
                    cells.extend(accuracy_cells(&accuracy));
                    cells
                })
        })
        .collect();
    (header, rows)
}

/// The rank table: a line per ladder and sweep.
fn rank_table(ranked: &[Ranked]) -> (Vec<String>, Vec<Vec<String>>) {
    let header = ["kind", "group", "n", "Spearman ρ", "flat"]
        .map(str::to_owned)
        .to_vec();
    let rows = ranked
        .iter()
        .map(|r| {
            vec![
                match r.group.kind {
                    GroupKind::Ladder => "ladder",
                    GroupKind::Sweep => "sweep",
                }
                .to_owned(),
                r.group.name.clone(),
                r.group.members.len().to_string(),
                r.rho
                    .map_or_else(|| "-".to_owned(), |rho| format!("{rho:.2}")),
                if r.flat { "flat" } else { "" }.to_owned(),
            ]
        })
        .collect();
    (header, rows)
}

/// The per-row listing of `--verbose`: a latency in ns per load (`612.3 ns`), as every
/// table shows it.
fn row_table(validation: &Validation) -> (Vec<String>, Vec<Vec<String>>) {
    let header = [
        "case",
        "rows",
        "measured GB/s",
        "predicted GB/s",
        "meas/pred",
        "bound",
    ]
    .map(str::to_owned)
    .to_vec();
    let rows = validation
        .judged
        .iter()
        .map(|j| {
            vec![
                match j.api {
                    Api::Cuda => format!("{} (cuda)", j.id),
                    _ => j.id.to_string(),
                },
                j.role.label().to_owned(),
                speed_text(j.id.family, j.measured_gbps),
                speed_text(j.id.family, j.predicted_gbps),
                format!("{:.3}", j.ratio()),
                j.bound.map_or("-", Bound::name).to_owned(),
            ]
        })
        .collect();
    (header, rows)
}

/// Aligned columns: the first `left` to the left, the rest (numbers) to the right.
fn aligned(header: &[String], rows: &[Vec<String>], left: usize) -> String {
    let widths: Vec<usize> = (0..header.len())
        .map(|i| {
            rows.iter()
                .map(|r| r[i].chars().count())
                .chain([header[i].chars().count()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let line = |cells: &[String]| {
        let cells: Vec<String> = cells
            .iter()
            .zip(&widths)
            .enumerate()
            .map(|(i, (cell, &width))| {
                let pad = " ".repeat(width.saturating_sub(cell.chars().count()));
                if i < left {
                    format!("{cell}{pad}")
                } else {
                    format!("{pad}{cell}")
                }
            })
            .collect();
        format!("{}\n", cells.join("  ").trim_end())
    };
    let mut text = line(header);
    for row in rows {
        text.push_str(&line(row));
    }
    text
}

/// `header` and `rows` as CSV text.
fn csv_table(header: &[String], rows: &[Vec<String>]) -> String {
    let mut writer = csv::Writer::from_writer(Vec::new());
    let mut write = || -> csv::Result<()> {
        writer.write_record(header)?;
        for row in rows {
            writer.write_record(row)?;
        }
        writer.flush()?;
        Ok(())
    };
    // Writing to memory fails only on a bug of the csv crate.
    let _ = write();
    crate::results::csv_text(writer).unwrap_or_default()
}

/// The flat groups, in words.
fn flat_line(ranked: &[Ranked]) -> String {
    let flat = ranked.iter().filter(|r| r.flat).count();
    format!(
        "flat predictions: {flat} of {} groups (predicted all within 1 % while the \
         measurements differ by more than 5 %)",
        ranked.len()
    )
}

/// What `simulate --validate` prints.
pub(crate) const FORMATS: &[Format] = &[Format::Table, Format::Csv, Format::Markdown];

/// The validations as `format` (one of [`FORMATS`]) prints them: per file its headline, the accuracy per
/// family (held-out rows, then calibration rows), the rank agreement of each ladder and
/// sweep, the rows not judged and, with `verbose`, every row.
/// CSV holds the accuracy tables only (the rows with `verbose`), a `device` column
/// first.
pub fn render(validations: &[Validation], format: Format, verbose: bool) -> String {
    const LEGEND: &str = "Each row: measured ÷ predicted bandwidth (= predicted ÷ measured \
                          time, for the same bytes); APE = |ratio − 1|, the error of the \
                          predicted time. Rank agreement: Spearman's ρ of measured against \
                          predicted GB/s within each ladder and sweep of at least 4 cases, ";
    if format == Format::Csv {
        let mut header = vec!["device".to_owned()];
        let mut rows = Vec::new();
        for validation in validations {
            let (h, r) = if verbose {
                row_table(validation)
            } else {
                accuracy_table(validation)
            };
            if header.len() == 1 {
                header.extend(h);
            }
            rows.extend(r.into_iter().map(|mut cells| {
                cells.insert(0, validation.device.clone());
                cells
            }));
        }
        return csv_table(&header, &rows);
    }
    let markdown = format == Format::Markdown;
    let table = |(header, rows): (Vec<String>, Vec<Vec<String>>), left: usize| {
        if markdown {
            crate::results::markdown_table(&header, &rows, left)
        } else {
            aligned(&header, &rows, left)
        }
    };
    let mut text = format!("{LEGEND}{RANK_TIES}.\n");
    for validation in validations {
        text.push('\n');
        if markdown {
            text.push_str(&format!("### {}\n\n", validation.label()));
        }
        text.push_str(&validation.headline());
        text.push_str(&format!("; predicted in {:.1} s\n\n", validation.seconds));
        let accuracy = accuracy_table(validation);
        if accuracy.1.is_empty() {
            text.push_str("no row judged\n");
        } else {
            text.push_str(&table(accuracy, 2));
        }
        let ranked = validation.ranked();
        if !ranked.is_empty() {
            text.push('\n');
            text.push_str(&table(rank_table(&ranked), 2));
            text.push_str(&format!("\n{}\n", flat_line(&ranked)));
        }
        let others: Vec<&NotJudged> = validation.unjudged.iter().collect();
        if !others.is_empty() {
            text.push_str("\nnot judged:\n");
            if markdown {
                text.push('\n');
            }
            for (id, why) in others {
                text.push_str(&format!("- {id}: {why}\n"));
            }
        }
        if verbose {
            text.push('\n');
            text.push_str(&table(row_table(validation), 2));
        }
    }
    text
}
