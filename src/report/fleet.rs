//! The fleet page (`membench fleet --report DIR`): the conclusion, the files merged or
//! skipped, the sick GPUs with their evidence, the unsteady ones with the command that
//! measures them again, and per group a strip plot of each case with a sick or unsteady
//! GPU (or of a few headline cases where there is none), with the median and MAD of
//! every case in a table below.

use std::collections::HashSet;

use maud::{DOCTYPE, Markup, html};

use super::Report;
use super::charts::{Chart, strip_chart};
use super::page::{figure, head};
use crate::error::Result;
use crate::judge::fleet::{
    Condition, Fleet, Group, MIN_MEMBERS, Member, conclusion, gbps_text, introduction, merged_line,
    remeasure, spans_text,
};
use crate::results::slug;
use crate::suite::Family;
use crate::text::shown_path as shown;

/// Strip plots of one group's cases with a sick or unsteady GPU; the rest are in its
/// table.
const MAX_OUTLIER_CHARTS: usize = 24;

/// Strip plots of a group without outliers: its headline cases.
const HEADLINE_CHARTS: usize = 4;

/// Sick or unsteady GPUs the page lists.
const MAX_GPU_ROWS: usize = 500;

/// The fleet page and its strip plots, for [`super::write`].
pub(crate) fn fleet_page(fleet: &Fleet) -> Result<Report> {
    let mut names = HashSet::new();
    let mut charts: Vec<(usize, Chart)> = Vec::new();
    for (g, group) in fleet.groups.iter().enumerate() {
        for case in charted_cases(group) {
            let stem = format!(
                "fleet-{}-{}",
                g + 1,
                slug(&group.cases[case].id.to_string())
            );
            let mut file = super::charts::file_name(&stem);
            let mut copy = 1;
            while !names.insert(file.clone()) {
                copy += 1;
                file = super::charts::file_name(&format!("{stem}-{copy}"));
            }
            charts.push((g, strip_chart(fleet, g, case, file)?));
        }
    }
    let html = page(fleet, &charts).into_string();
    Ok(Report {
        html,
        charts: charts.into_iter().map(|(_, chart)| chart).collect(),
    })
}

/// The cases of `group` that get a strip plot: those with a sick or unsteady GPU, the
/// most first; where there are none, the headline cases (copy/peak, then the widest
/// spread).
fn charted_cases(group: &Group) -> Vec<usize> {
    if !group.judged() {
        return Vec::new();
    }
    let named = |c: usize| group.cases[c].outliers() + group.cases[c].unsteady();
    let mut outlying: Vec<usize> = (0..group.cases.len()).filter(|&c| named(c) > 0).collect();
    if !outlying.is_empty() {
        outlying.sort_by_key(|&c| std::cmp::Reverse(named(c)));
        outlying.truncate(MAX_OUTLIER_CHARTS);
        return outlying;
    }
    let mut headline: Vec<usize> = (0..group.cases.len())
        .filter(|&c| group.cases[c].median_gbps.is_some())
        .collect();
    let peak = |c: usize| {
        let id = &group.cases[c].id;
        id.family == Family::Copy && id.variant == "peak"
    };
    headline.sort_by(|&a, &b| {
        let spread = |c: usize| group.cases[c].sigma().unwrap_or(0.0);
        peak(b).cmp(&peak(a)).then(spread(b).total_cmp(&spread(a)))
    });
    headline.truncate(HEADLINE_CHARTS);
    headline
}

fn page(fleet: &Fleet, charts: &[(usize, Chart)]) -> Markup {
    let tally = fleet.tally();
    let of = |condition| -> Vec<&Member> {
        let mut gpus: Vec<&Member> = fleet
            .members
            .iter()
            .filter(|m| m.condition == condition)
            .collect();
        gpus.sort_by_key(|m| std::cmp::Reverse(m.outliers() + m.unsteady));
        gpus
    };
    let (sick, unsteady) = (of(Condition::Sick), of(Condition::Unsteady));
    html! {
        (DOCTYPE) "\n"
        html lang="en" {
            "\n" (head("membench fleet")) "\n"
            body {
                "\n"
                h1 { "membench fleet" } "\n"
                p { (introduction(fleet, &tally)) } "\n"
                p { b { (conclusion(&tally)) } } "\n"
                (files(fleet))
                @if !sick.is_empty() {
                    h2 id="sick" { "Sick GPUs" } "\n"
                    (sick_table(fleet, &sick)) "\n"
                }
                @if !unsteady.is_empty() {
                    h2 id="unsteady" { "Unsteady GPUs: measure again" } "\n"
                    p { "Each was slower in a case once, alone. Run the command on its host; the next "
                        code { "membench fleet" } " merges the new file as a second run." } "\n"
                    (unsteady_list(fleet, &unsteady)) "\n"
                }
                @for (g, group) in fleet.groups.iter().enumerate() {
                    (group_section(g, group, charts))
                }
            }
            "\n"
        }
        "\n"
    }
}

/// The files merged into a GPU already read, and the inputs skipped.
fn files(fleet: &Fleet) -> Markup {
    html! {
        @if !fleet.merged.is_empty() {
            details {
                summary { (fleet.merged.len()) " files of a GPU already read" } "\n"
                ul { @for merged in &fleet.merged { li { (merged_line(merged)) } "\n" } }
            }
            "\n"
        }
        @if !fleet.skipped.is_empty() {
            details {
                summary {
                    (fleet.skipped.len()) " inputs skipped"
                    @if fleet.allow_skips { " (allowed)" }
                } "\n"
                ul {
                    @for skipped in &fleet.skipped {
                        li { code { (shown(&skipped.path)) } ": " (skipped.why) } "\n"
                    }
                }
            }
            "\n"
        }
    }
}

fn sick_table(fleet: &Fleet, gpus: &[&Member]) -> Markup {
    html! {
        div class="scroll" { table {
            "\n"
            tr {
                th { "host" } th { "GPU UUID" } th { "bus id" } th { "file" } th { "group" }
                th { "slower across" } th { "outliers" } th { "slower" } th { "missing" }
                th { "failed" } th { "worst case" } th { "distance" }
            }
            "\n"
            @for member in gpus.iter().take(MAX_GPU_ROWS) {
                @let group = &fleet.groups[member.group];
                @let worst = member.worst.map(|(c, d)| (&group.cases[c].id, d));
                tr {
                    td { (member.host) } td { code { (member.gpu_uuid) } }
                    td { code { (member.pci_bus_id) } } td { code { (file_name(member)) } }
                    td { a href={ "#group-" (member.group + 1) } { (member.group + 1) } }
                    td { (spans_text(group, member)) }
                    td class="num" { (member.outliers()) } td class="num" { (member.slower) }
                    td class="num" { (member.missing) } td class="num" { (member.failed) }
                    td { @if let Some((id, _)) = worst { (id.to_string()) } }
                    td class="num" { @if let Some((_, d)) = worst { (format!("{:+.1} %", 100.0 * d)) } }
                }
                "\n"
            }
        } }
        @if gpus.len() > MAX_GPU_ROWS {
            p { (gpus.len() - MAX_GPU_ROWS) " more: " code { "--format csv" } " lists every one." }
        }
    }
}

fn unsteady_list(fleet: &Fleet, gpus: &[&Member]) -> Markup {
    html! {
        ul {
            @for member in gpus.iter().take(MAX_GPU_ROWS) {
                li {
                    (member.host) " " code { (member.gpu) } ", group "
                    a href={ "#group-" (member.group + 1) } { (member.group + 1) } ": "
                    (member.unsteady) " unsteady case" @if member.unsteady != 1 { "s" } ". "
                    @if let Some(command) = remeasure(fleet, member) { br; code { (command) } }
                }
                "\n"
            }
        }
        @if gpus.len() > MAX_GPU_ROWS {
            p { (gpus.len() - MAX_GPU_ROWS) " more: " code { "--format json" } " lists every one." }
        }
    }
}

fn group_section(g: usize, group: &Group, charts: &[(usize, Chart)]) -> Markup {
    let number =
        |v: Option<f64>, digits: usize| v.map_or_else(String::new, |v| format!("{v:.digits$}"));
    let signed = |v: Option<f64>| v.map_or_else(String::new, |v| format!("{:+.1}", 100.0 * v));
    html! {
        h2 id={ "group-" (g + 1) } { "Group " (g + 1) ": " (group.label()) } "\n"
        p { (group.members.len()) " GPUs, " (group.cases.len()) " cases." } "\n"
        @if !group.judged() {
            p { "Not judged: " (MIN_MEMBERS) " GPUs are needed." } "\n"
        } @else {
            @for (_, chart) in charts.iter().filter(|(c, _)| *c == g) {
                (figure(chart))
            }
            details {
                summary { (group.cases.len()) " cases: the median and MAD of the GPUs' GB/s" } "\n"
                div class="scroll" { table {
                    "\n"
                    tr {
                        th { "family" } th { "variant" } th { "param" } th { "GPUs" }
                        th { "median GB/s" } th { "MAD GB/s" } th { "sigma %" }
                        th { "slowest %" } th { "fastest %" } th { "outliers" } th { "unsteady" }
                    }
                    "\n"
                    @for case in &group.cases {
                        @let extent = case.extent();
                        tr {
                            td { (case.id.family) } td { (case.id.variant) }
                            td { code { (case.id.params) } }
                            td class="num" { (case.measured) }
                            td class="num" { (gbps_text(case.median_gbps)) }
                            td class="num" { (gbps_text(case.mad_gbps)) }
                            td class="num" { (number(case.sigma().map(|s| 100.0 * s), 2)) }
                            td class="num" { (signed(extent.map(|e| e.0))) }
                            td class="num" { (signed(extent.map(|e| e.1))) }
                            td class="num" { (case.outliers()) }
                            td class="num" { (case.unsteady()) }
                        }
                        "\n"
                    }
                } }
                "\n"
            }
            "\n"
        }
    }
}

/// A GPU's first file by its name alone; the directory is the same for most.
fn file_name(member: &Member) -> String {
    let file = member.file();
    shown(std::path::Path::new(
        file.file_name().unwrap_or(file.as_os_str()),
    ))
}
