//! The page's tables: the devices, each family's cases across devices, the launch and
//! compute figures the summary names, and each input's kernels against its levels.

use maud::{Markup, html};

use crate::results::join::Line;
use crate::results::{self, DeviceResults, Status};
use crate::suite::{Family, Key};

use super::charts::Placed;
use super::compare::number;

pub(super) fn device_table(devices: &[DeviceResults]) -> Markup {
    html! {
        h2 id="devices" { "Devices" } "\n"
        div class="scroll" { table {
            "\n"
            tr {
                th { "#" } th { "device" } th { "vendor" } th { "backend" } th { "driver" }
                th { "subgroup size" } th { "api / build" } th { "cases ok / failed / skipped" }
                th { "run" } th { "file" }
            }
            "\n"
            @for (index, device) in devices.iter().enumerate() {
                @if let Some(row) = device.metadata() {
                    tr {
                        td { (index + 1) }
                        td { b { (device.label) } }
                        td { (row.vendor) }
                        td { (row.backend) }
                        td { (row.driver) }
                        td { (row.subgroup_size) }
                        td { (device.setting) }
                        td class="num" {
                            (count(device, Status::Ok)) " / " (count(device, Status::Failed)) " / "
                            (count(device, Status::Skipped))
                        }
                        td {
                            (row.timestamp_utc) ", membench " (row.membench_version)
                            " (" (row.git_commit) ")"
                        }
                        td {
                            @for (index, path) in device.files().enumerate() {
                                @if index > 0 { ", " }
                                code { (path.display()) }
                            }
                        }
                    }
                    "\n"
                }
            }
        } }
        "\n"
    }
}

/// How many of the device's cases have `status`.
pub(super) fn count(device: &DeviceResults, status: Status) -> usize {
    device.rows.iter().filter(|r| r.status == status).count()
}

/// What the run's summary names of `family` per device file, if it names anything: the
/// launch costs, or the compute peaks and the ridge point.
pub(super) fn named_figures(family: Family, devices: &[DeviceResults]) -> Option<Markup> {
    let named = |rows: &[results::Row]| match family {
        Family::Launch => results::launch::summary_lines(rows),
        Family::Compute => results::compute::summary_lines(rows),
        _ => String::new(),
    };
    let lines: Vec<(&str, String)> = devices
        .iter()
        .flat_map(|device| {
            let text = named(&device.rows);
            let lines: Vec<String> = text.lines().map(str::to_owned).collect();
            lines
                .into_iter()
                .map(move |line| (device.label.as_str(), line))
        })
        .collect();
    (!lines.is_empty()).then(|| {
        html! {
            ul class="named" {
                "\n"
                @for (device, line) in &lines {
                    li { (device) ": " (line) } "\n"
                }
            }
            "\n"
        }
    })
}

/// Every case of a family, folded away: each device's GB/s, ratio to the baseline
/// and prediction.
pub(super) fn case_table(family: Family, devices: &[DeviceResults], lines: &[&Line<'_>]) -> Markup {
    let unit = results::unit(family);
    html! {
        details {
            summary { "All " (lines.len()) " " (family) " cases" } "\n"
            div class="scroll" { table {
                "\n"
                tr {
                    th { "variant" } th { "param" }
                    @for (index, device) in devices.iter().enumerate() {
                        th { (device.label) br; (unit) }
                        @if index > 0 {
                            th { (device.label) br; "÷ baseline" }
                        }
                        th { (device.label) br; "predicted " (unit) }
                    }
                }
                "\n"
                @for line in lines {
                    (case_row(line, devices.len())) "\n"
                }
            } }
            "\n"
        }
        "\n"
    }
}

pub(super) fn case_row(line: &Line<'_>, device_count: usize) -> Markup {
    html! {
        tr {
            td { (line.variant) }
            td { code { (line.params) } }
            @for index in 0..device_count {
                @match line.gbps(index) {
                    Some(gbps) => td class="num" { (in_unit(line.family, Some(gbps))) },
                    None => td class="absent" title=(absent_note(line, index)) {
                        (line.status(index))
                    },
                }
                @if index > 0 {
                    td class="num" { (number(line.ratio(index), 3)) }
                }
                td class="num" {
                    (in_unit(line.family, line.sim_gbps(index)))
                    @if let Some(bound) = line.sim_bound(index) {
                        br; span class="bound" { (bound.describe()) }
                    }
                }
            }
        }
    }
}

/// One input's kernel rows: each one's footprint, GB/s, the level its footprint fits,
/// the share of that level's plateau it reaches, and the simulator's prediction.
pub(super) fn kernel_table(placed: &Placed<'_>) -> Markup {
    html! {
        div class="scroll" { table {
            caption { (placed.device.label) ": its kernels against its memory levels" }
            "\n"
            tr {
                th { "kernel" } th { "param" } th { "footprint" } th { "GB/s" }
                th { "level it fits" } th { "% of the level's plateau" } th { "simulator" }
            }
            "\n"
            @for row in &placed.rows {
                @let footprint = row.params.number(Key::Footprint);
                @let level = footprint.and_then(|f| crate::kernel::place::level_of(f, &placed.levels));
                tr {
                    td { (row.variant) }
                    td { code { (row.params) } }
                    td class="num" { (footprint.map(results::levels::bytes_text).unwrap_or_default()) }
                    @match super::charts::kernels::point(row) {
                        Some((_, gbps)) => td class="num" { (number(Some(gbps), 1)) },
                        None => td class="absent" title=(row.note) { (row.status) },
                    }
                    td { (level.map(|l| l.name.as_str()).unwrap_or_default()) }
                    td class="num" {
                        (number(level.zip(super::charts::kernels::point(row)).map(|(l, (_, gbps))| 100.0 * gbps / l.value), 0))
                    }
                    @match crate::kernel::place::prediction_text(row) {
                        Some(text) => td { (text) },
                        None => td class="absent" title=(row.note) { "no prediction" },
                    }
                }
                "\n"
            }
        } }
        "\n"
    }
}

/// A speed of `family` in its unit (GB/s, or ns per load), one decimal; nothing where
/// there is none.
pub(super) fn in_unit(family: Family, gbps: Option<f64>) -> String {
    number(gbps.map(|gbps| results::in_unit(family, gbps)), 1)
}

/// Why a device has no bandwidth for the case, where its row says.
fn absent_note<'a>(line: &Line<'a>, device: usize) -> &'a str {
    line.cells[device]
        .map(|row| row.note.as_str())
        .unwrap_or_default()
}
