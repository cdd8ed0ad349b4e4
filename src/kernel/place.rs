//! A kernel's rows placed against this device: the memory level its footprint fits
//! (of the levels the device's hierarchy sweeps show), the share of that level's
//! measured plateau it reaches, the simulator's prediction and bound in one phrase,
//! and the tax between the builds measured.

use std::path::Path;

use crate::results::levels::{self, BANDWIDTH_MIN_POINTS, BANDWIDTH_SWEEPS, Level, Sense};
use crate::results::{self, Row, Status};
use crate::suite::{Family, Key, Setting};

/// The level data of `footprint` bytes lives in: the first whose plateau reaches that
/// size, else the last (DRAM).
pub(crate) fn level_of(footprint: u64, levels: &[Level]) -> Option<&Level> {
    levels
        .iter()
        .find(|level| footprint <= level.last_bytes)
        .or(levels.last())
}

/// The device's bandwidth levels in `setting` from the rows of its results file (the
/// setting's own sweep, else wgpu's default build's).
pub(crate) fn device_levels(rows: &[Row], setting: Setting) -> Vec<Level> {
    [setting, Setting::WGPU]
        .into_iter()
        .map(|setting| {
            let points =
                levels::sweep_points(rows, BANDWIDTH_SWEEPS, setting, Sense::Bandwidth, false);
            levels::levels(&points, Sense::Bandwidth, BANDWIDTH_MIN_POINTS)
        })
        .find(|found| !found.is_empty())
        .unwrap_or_default()
}

/// One line per kernel row of `rows`: its GB/s, footprint and level, the share of the
/// level's plateau, the simulator's phrase and the tax; the levels from the results
/// file at `levels_file`.
pub(crate) fn explain(rows: &[Row], levels_file: &Path) -> String {
    let device_rows = match results::read_existing(levels_file) {
        Ok(rows) => rows.into_iter().map(|(_, row)| row).collect(),
        Err(_) => Vec::new(),
    };
    let shown = crate::text::shown_path(levels_file);
    let mut lines = String::new();
    let mut any_levels = false;
    for row in rows.iter().filter(|r| r.family == Family::Kernel) {
        let found = device_levels(&device_rows, row.setting());
        any_levels |= !found.is_empty();
        lines.push_str(&line(row, &found, rows));
        lines.push('\n');
    }
    if !any_levels && !lines.is_empty() {
        lines.push_str(&format!(
            "no memory levels in {shown}: measure them with `membench run --profile levels` \
             (or give --levels FILE)\n"
        ));
    }
    lines
}

/// The line of one row.
fn line(row: &Row, found: &[Level], rows: &[Row]) -> String {
    let id = format!(
        "{}/{}/{} {}",
        row.family,
        row.variant,
        row.params,
        row.setting()
    );
    let Some(gbps) = row.gbps_median.filter(|_| row.status == Status::Ok) else {
        return format!("{id}: {}", row.status);
    };
    let mut parts = vec![levels::value_text(gbps, Sense::Bandwidth)];
    if let Some(footprint) = row.params.number(Key::Footprint) {
        let fits = match level_of(footprint, found) {
            Some(level) => format!(
                "; footprint {} fits {} ({} plateau): {:.0} % of it",
                levels::bytes_text(footprint),
                level.name,
                levels::value_text(level.value, Sense::Bandwidth),
                100.0 * gbps / level.value
            ),
            None => format!("; footprint {}", levels::bytes_text(footprint)),
        };
        parts.push(fits);
    }
    parts.push(simulated(row));
    if let Some(tax) = tax(row, rows) {
        parts.push(tax);
    }
    format!("{id}: {}", parts.concat())
}

/// `; simulator: 812 GB/s, dram-bound, 4.0 sectors per request: 8 of every 32 bytes
/// used`, or why there is none.
fn simulated(row: &Row) -> String {
    match prediction_text(row) {
        Some(text) => format!("; simulator: {text}"),
        None => "; no prediction (see the row's note)".to_owned(),
    }
}

/// The row's prediction with its bound and the counters behind it: `812 GB/s,
/// dram-bound, 4.0 sectors per request: 8 of every 32 bytes used`; `None` without one.
pub(crate) fn prediction_text(row: &Row) -> Option<String> {
    let (gbps, bound) = row.sim_gbps.zip(row.sim_bound)?;
    let mut text = format!(
        "{}, {bound}-bound",
        levels::value_text(gbps, Sense::Bandwidth)
    );
    if let Some(sectors) = row.sim_sectors_per_request {
        text.push_str(&format!(", {sectors:.1} sectors per request"));
        if let Some(used) = row.sim_sector_use {
            text.push_str(&format!(": {}", use_text(used)));
        }
    }
    if let Some(ways) = row.sim_bank_ways.filter(|&w| w > 1.0) {
        text.push_str(&format!(", {ways:.1}-way bank conflicts"));
    }
    Some(text)
}

/// What share of the bytes fetched the lanes use, per 32 bytes: `8 of every 32 bytes
/// used`.
fn use_text(share: f64) -> String {
    let used = 32.0 * share;
    if used >= 31.95 {
        "every byte fetched used".to_owned()
    } else if used >= 1.0 {
        format!("{used:.0} of every 32 bytes used")
    } else {
        format!("{used:.1} of every 32 bytes used")
    }
}

/// `; default 1.08× slower than tax-free`: the toolchain's tax on this kernel, where
/// its row in wgpu's default build and another build's were both measured.
fn tax(row: &Row, rows: &[Row]) -> Option<String> {
    if row.setting() != Setting::WGPU {
        return None;
    }
    let gbps = row.gbps_median?;
    let other = rows.iter().find(|other| {
        other.family == row.family
            && other.variant == row.variant
            && other.params == row.params
            && other.setting() != Setting::WGPU
            && other.gbps_median.is_some()
    })?;
    let ratio = other.gbps_median? / gbps;
    Some(format!("; tax: {} at {ratio:.2}× default", other.setting()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::model::Bound;

    fn level(name: &str, value: f64, last_bytes: u64) -> Level {
        Level {
            name: name.to_owned(),
            value,
            first_bytes: 0,
            last_bytes,
        }
    }

    #[test]
    fn a_footprint_fits_the_first_level_that_reaches_it_and_dram_beyond_all() {
        let levels = [
            level("L1", 20_000.0, 192 << 10),
            level("L2", 8_000.0, 24 << 20),
            level("DRAM", 3_000.0, 1 << 30),
        ];
        let name = |bytes| level_of(bytes, &levels).map(|l| l.name.as_str());
        assert_eq!(name(64 << 10), Some("L1"));
        assert_eq!(name(192 << 10), Some("L1"));
        assert_eq!(name((192 << 10) + 1), Some("L2"));
        assert_eq!(name(16 << 20), Some("L2"));
        assert_eq!(name(256 << 20), Some("DRAM"));
        assert_eq!(name(4 << 30), Some("DRAM"));
        assert_eq!(level_of(1, &[]), None);
    }

    #[test]
    fn a_row_says_its_level_and_share_of_the_plateau() {
        let row = Row {
            family: Family::Kernel,
            variant: "saxpy".to_owned(),
            params: "size=n:1024;footprint=8192".parse().unwrap(),
            status: Status::Ok,
            gbps_median: Some(4_000.0),
            ..Row::default()
        };
        let levels = [level("L1", 20_000.0, 192 << 10)];
        let text = line(&row, &levels, std::slice::from_ref(&row));
        assert_eq!(
            text,
            "kernel/saxpy/size=n:1024;footprint=8192 wgpu/default: 4.0 TB/s; footprint 8 KiB \
             fits L1 (20.0 TB/s plateau): 20 % of it; no prediction (see the row's note)"
        );
    }

    #[test]
    fn a_prediction_says_its_bound_and_the_share_of_each_sector_used() {
        let row = Row {
            sim_gbps: Some(812.0),
            sim_bound: Some(Bound::Dram),
            sim_sectors_per_request: Some(18.0),
            sim_sector_use: Some(0.25),
            ..Row::default()
        };
        assert_eq!(
            simulated(&row),
            "; simulator: 812 GB/s, dram-bound, 18.0 sectors per request: 8 of every 32 \
             bytes used"
        );
        let whole = |share| {
            simulated(&Row {
                sim_sector_use: Some(share),
                ..row.clone()
            })
        };
        assert!(
            whole(1.0).ends_with(": every byte fetched used"),
            "{}",
            whole(1.0)
        );
        assert!(
            whole(0.01).ends_with(": 0.3 of every 32 bytes used"),
            "{}",
            whole(0.01)
        );
    }
}
