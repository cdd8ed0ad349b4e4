//! The table a run ends with: per row the case, its bandwidth (or latency), its share
//! of its reference (the copy peak, or a transfer's link) and the prediction beside;
//! and how every table shows a speed in its family's unit.

use super::Row;
use crate::sim::link::pcie_link_gbps;
use crate::suite::Family;
use crate::suite::families::{latency, transfer};

/// The fastest measured `copy/peak` among `rows`: the practical ceiling.
pub(crate) fn copy_peak_gbps(rows: &[Row]) -> Option<f64> {
    rows.iter()
        .filter(|row| row.family == Family::Copy && row.variant == "peak")
        .filter_map(|row| row.gbps_median)
        .reduce(f64::max)
}

/// Families whose bytes are on-chip traffic (workgroup memory, the constant and L1
/// caches), not DRAM: their GB/s is on-chip throughput, which a share of `copy/peak`
/// does not describe.
pub(crate) const ON_CHIP_FAMILIES: &[Family] = &[Family::Bank, Family::Constant];

/// Families whose result is a latency: one dependent load per element, so their GB/s
/// (the 4 bytes of each load over the time) says little; the summary shows the time
/// per element, in ns.
pub(crate) const LATENCY_FAMILIES: &[Family] = &[Family::Latency];

/// Nanoseconds per element of a row moving `bytes` at `gbps` (measured or predicted):
/// for a pointer chase, the latency of one load.
pub(crate) fn ns_per_element(row: &Row, gbps: Option<f64>) -> Option<f64> {
    gbps.filter(|&gbps| gbps > 0.0 && row.elements > 0)
        .map(|gbps| row.bytes as f64 / gbps / row.elements as f64)
}

/// The words of the unit `family`'s speed is read in: GB/s, on-chip GB/s, or for a
/// latency family ns per load.
pub fn unit(family: Family) -> &'static str {
    if LATENCY_FAMILIES.contains(&family) {
        "ns per load"
    } else if ON_CHIP_FAMILIES.contains(&family) {
        "on-chip GB/s"
    } else {
        "GB/s"
    }
}

/// A speed of `family` (its GB/s, measured or predicted) in the family's [`unit`].
pub(crate) fn in_unit(family: Family, gbps: f64) -> f64 {
    if LATENCY_FAMILIES.contains(&family) {
        latency::ns_per_load(gbps)
    } else {
        gbps
    }
}

/// A speed as a table of many families shows it, with one decimal: `2983.4` (GB/s), or
/// `612.3 ns` (per load) for a latency family, never a latency as `0.0` GB/s.
pub(crate) fn speed_text(family: Family, gbps: f64) -> String {
    let value = in_unit(family, gbps);
    if LATENCY_FAMILIES.contains(&family) {
        format!("{value:.1} ns")
    } else {
        format!("{value:.1}")
    }
}

/// What the summary's share column reads a row against.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Reference {
    /// The run's fastest `copy/peak`, GB/s: the practical ceiling of device memory.
    CopyPeak(f64),
    /// The host link the GPU's identity names, GB/s: a transfer's ceiling.
    Link(f64),
    /// A word instead of a share: `on-chip` throughput, a latency `per load`.
    Word(&'static str),
    /// Nothing to read it against (a device copy on the host clock, a transfer where
    /// the link is unknown, a run without a copy peak).
    Nothing,
}

impl Reference {
    /// The reference of `row` in a run whose fastest copy peak is `peak`.
    fn of(row: &Row, peak: Option<f64>) -> Reference {
        let known = |reference: fn(f64) -> Reference, gbps: Option<f64>| {
            gbps.map_or(Reference::Nothing, reference)
        };
        if ON_CHIP_FAMILIES.contains(&row.family) {
            Reference::Word("on-chip")
        } else if LATENCY_FAMILIES.contains(&row.family) {
            Reference::Word("per load")
        } else if row.family == Family::Transfer && row.variant == transfer::DEVICE_COPY.variant {
            Reference::Nothing
        } else if row.family == Family::Transfer {
            known(Reference::Link, pcie_link_gbps(&row.pcie_link))
        } else {
            known(Reference::CopyPeak, peak)
        }
    }

    /// The share cell of a row measured at `gbps`: `75.0`, `41.2 link`, a word or `-`.
    fn cell(self, gbps: Option<f64>) -> String {
        match (self, gbps) {
            (Reference::Word(word), _) => word.to_owned(),
            (Reference::CopyPeak(peak), Some(gbps)) => format!("{:.1}", 100.0 * gbps / peak),
            (Reference::Link(link), Some(gbps)) => format!("{:.1} link", 100.0 * gbps / link),
            _ => "-".to_owned(),
        }
    }
}

/// The summary's columns that name the case; numbers and the status follow.
pub(super) const SUMMARY_TEXT_COLUMNS: usize = 4;

/// The summary's columns.
pub(super) const SUMMARY_HEADER: [&str; 10] = [
    "family",
    "variant",
    "param",
    "api/build",
    "GB/s",
    "% peak",
    "cv %",
    "sim GB/s",
    "meas/sim",
    "status",
];

/// The summary's cells: per row the case, its api/build, bandwidth, share of its
/// [`Reference`] (the fastest `copy/peak` among `rows`, a transfer's link, or a word),
/// cv, the simulator's prediction, measured over predicted, and the status. The
/// latency families show ns per load (`612.3 ns`, measured and predicted) where others
/// show GB/s ([`speed_text`]).
pub(super) fn summary_cells(rows: &[Row]) -> Vec<Vec<String>> {
    let peak = copy_peak_gbps(rows);
    let number = |value: Option<f64>, digits: usize| {
        value.map_or("-".to_owned(), |v| format!("{v:.digits$}"))
    };
    rows.iter()
        .map(|row| {
            let speed = |gbps: Option<f64>| {
                gbps.filter(|&gbps| gbps > 0.0)
                    .map_or("-".to_owned(), |gbps| speed_text(row.family, gbps))
            };
            let share = Reference::of(row, peak).cell(row.gbps_median);
            let status = if row.note.is_empty() {
                row.status.to_string()
            } else {
                // A note is a driver's or a compiler's words: one line, shown.
                format!("{}: {}", row.status, crate::text::shown(&row.note))
            };
            vec![
                row.family.to_string(),
                row.variant.clone(),
                row.params.to_string(),
                row.setting().to_string(),
                speed(row.gbps_median),
                share,
                number(row.cv.map(|cv| 100.0 * cv), 2),
                speed(row.sim_gbps),
                number(row.measured_over_sim, 2),
                status,
            ]
        })
        .collect()
}

/// The readable table `membench run` ends with: [`summary_cells`] in aligned columns,
/// then the memory levels its sweeps show ([`super::levels::summary_lines`]) and what a
/// launch costs ([`super::launch::summary_lines`]), the compute peak and the ridge point
/// ([`super::compute::summary_lines`]).
pub fn summary(rows: &[Row]) -> String {
    summary_named(rows, None)
}

/// [`summary`] with the memory levels named as `level_names` has them, where the sweeps
/// show as many (a simulator preset's hierarchy).
pub(crate) fn summary_named(rows: &[Row], level_names: Option<&[&str]>) -> String {
    let (header, cells) = (SUMMARY_HEADER, summary_cells(rows));
    // Text columns at least this wide, numbers exactly this wide: the status, last,
    // runs on.
    let least = [10, 10, 18, 14, 10, 9, 7, 10, 9];
    let widths: Vec<usize> = least
        .iter()
        .enumerate()
        .map(|(index, &least)| {
            let widest = cells.iter().map(|row| row[index].len()).max().unwrap_or(0);
            if index < SUMMARY_TEXT_COLUMNS {
                widest.max(least)
            } else {
                least
            }
        })
        .collect();
    let line = |cells: &[&str]| {
        let mut line = String::new();
        for (index, width) in widths.iter().enumerate() {
            let cell = cells.get(index).copied().unwrap_or_default();
            if index < SUMMARY_TEXT_COLUMNS {
                line.push_str(&format!("{cell:<width$} "));
            } else {
                line.push_str(&format!("{cell:>width$} "));
            }
        }
        line.push(' ');
        line.push_str(cells.last().copied().unwrap_or_default());
        line.push('\n');
        line
    };
    let mut table = line(&header);
    for row in &cells {
        table.push_str(&line(&row.iter().map(String::as_str).collect::<Vec<_>>()));
    }
    table.push_str(&super::levels::summary_lines(rows, level_names));
    table.push_str(&super::launch::summary_lines(rows));
    table.push_str(&super::compute::summary_lines(rows));
    table
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::tests::row;

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
            family: Family::Bank,
            ..row("row_col_override_pad", "r=1024", 30000.0)
        };
        let rows = [row("peak", "launch=vec4", 200.0), bank];
        let table = summary(&rows);
        let line = table.lines().find(|l| l.starts_with("bank")).unwrap();
        assert!(line.contains(" 30000.0   on-chip "), "{line}");
        let header = table.lines().next().unwrap();
        assert_eq!(header.find("param"), line.find("r=1024"), "{table}");
    }

    #[test]
    fn summary_shows_the_latency_per_load() {
        // 4096 loads of 4 bytes in 2.5 ms: 610.4 ns a load (0.0066 GB/s); predicted
        // at twice the speed.
        let chase = Row {
            family: Family::Latency,
            elements: 4096,
            bytes: 4 * 4096,
            sim_gbps: Some(2.0 * 16384.0 / 2.5e6),
            ..row("chase", "footprint=1073741824", 16384.0 / 2.5e6)
        };
        let table = summary(&[row("peak", "launch=vec4", 200.0), chase]);
        let line = table.lines().find(|l| l.starts_with("latency")).unwrap();
        assert!(line.contains(" 610.4 ns  per load "), "{line}");
        assert!(line.contains(" 305.2 ns "), "{line}");
    }

    #[test]
    fn a_transfer_is_read_against_its_link_never_the_copy_peak() {
        // Transfers 15 times the copy peak: a share of it would read 1500 %.
        let transfer = |variant: &str, link: &str| Row {
            family: Family::Transfer,
            pcie_link: link.to_owned(),
            ..row(variant, "size=4096;chunks=1", 30.0)
        };
        let link = crate::sim::link::PCIE5_X16_GBPS;
        let rows = [
            row("peak", "launch=vec4", 2.0),
            transfer("upload_pinned", "gen5x16"),
            transfer("upload_mappable", ""),
            transfer(transfer::DEVICE_COPY.variant, "gen5x16"),
        ];
        let shares: Vec<String> = summary_cells(&rows)
            .into_iter()
            .map(|r| r[5].clone())
            .collect();
        let of_link = format!("{:.1} link", 100.0 * 30.0 / link);
        assert_eq!(shares, ["100.0", of_link.as_str(), "-", "-"]);
    }
}
