//! A fleet as a terminal table or Markdown: the rule, the files read once or merged and
//! those skipped, the conclusion with its exit status, the sick GPUs with their
//! evidence, the unsteady GPUs with the command that measures them again, the cases
//! beyond the threshold, then per group and case the median and MAD.

use std::path::Path;

use comfy_table::{CellAlignment, Table, TableStyle};

use super::read::known;
use super::{
    Cell, Conclusion, Fleet, Group, GroupCase, MAD_SCALE, MIN_MEMBERS, Member, Merge, Merged,
    SIGMAS, Standing, Tally,
};
use crate::plural;
use crate::results::markdown_table;
use crate::text::shown_path as shown;

/// The cases beyond the threshold a table or Markdown shows; CSV and JSON hold every one.
const SHOWN_CASES: usize = 50;

/// The sick or unsteady GPUs a table or Markdown shows.
const SHOWN_GPUS: usize = 100;

/// The skipped inputs, and the files merged, a table or Markdown names.
const SHOWN_FILES: usize = 5;

/// The text a terminal or Markdown reader gets.
struct Text {
    out: String,
    markdown: bool,
}

impl Text {
    fn heading(&mut self, title: &str) {
        if self.markdown {
            self.out.push_str(&format!("\n## {title}\n\n"));
        } else {
            self.out.push_str(&format!("\n{title}:\n"));
        }
    }

    /// An item of a list.
    fn item(&mut self, line: &str) {
        let bullet = if self.markdown { "- " } else { "  " };
        self.out.push_str(&format!("{bullet}{line}\n"));
    }

    fn table(&mut self, header: &[&str], rows: Vec<Vec<String>>, left: usize) {
        if self.markdown {
            self.out.push_str(&markdown_table(header, &rows, left));
        } else {
            self.out.push_str(&aligned(header, rows, left));
            self.out.push('\n');
        }
    }

    /// A list of `total` items of which the first `lines` are shown.
    fn list(&mut self, title: String, lines: Vec<String>, total: usize) {
        self.out.push_str(&format!("\n{title}\n"));
        for line in lines.iter().take(SHOWN_FILES) {
            self.item(line);
        }
        if total > SHOWN_FILES {
            self.item(&format!("and {} more", total - SHOWN_FILES));
        }
    }
}

/// The table or Markdown text.
pub(super) fn text(fleet: &Fleet, markdown: bool) -> String {
    let tally = fleet.tally();
    let mut text = Text {
        out: String::new(),
        markdown,
    };
    if markdown {
        text.out.push_str("# membench fleet\n\n");
    }
    text.out
        .push_str(&format!("{}\n", introduction(fleet, &tally)));
    files(&mut text, fleet);
    text.out.push('\n');
    text.out.push_str(&conclusion(&tally));
    sick(&mut text, fleet);
    unsteady(&mut text, fleet);
    let cases = notable_cells(fleet);
    if !cases.is_empty() {
        text.heading("Cases beyond the threshold (sick first, then unsteady, then faster)");
        text.table(&CASE_HEADER, case_rows(fleet, &cases), 9);
        text.out.push_str(&more(cases.len(), SHOWN_CASES, "cases"));
    }
    for (number, group) in fleet.groups.iter().enumerate() {
        let title = format!(
            "Group {}: {}, {} GPU{}",
            number + 1,
            group.label(),
            group.members.len(),
            plural(group.members.len())
        );
        text.heading(&title);
        if group.judged() {
            text.table(&MEDIAN_HEADER, median_rows(group), 3);
        } else {
            text.out
                .push_str(&format!("not judged: {MIN_MEMBERS} GPUs are needed\n"));
        }
    }
    text.out
}

/// The files merged or read once, and the inputs skipped.
fn files(text: &mut Text, fleet: &Fleet) {
    if !fleet.merged.is_empty() {
        let count = fleet.merged.len();
        let title = format!("{count} file{} of a GPU already read:", plural(count));
        let lines = fleet.merged.iter().map(merged_line).collect();
        text.list(title, lines, count);
    }
    if !fleet.skipped.is_empty() {
        let count = fleet.skipped.len();
        let allowed = if fleet.allow_skips { " (allowed)" } else { "" };
        let title = format!("{count} input{} skipped{allowed}:", plural(count));
        let lines = fleet
            .skipped
            .iter()
            .map(|s| format!("{}: {}", shown(&s.path), s.why))
            .collect();
        text.list(title, lines, count);
    }
}

/// What became of a file of a GPU already read.
pub(crate) fn merged_line(merged: &Merged) -> String {
    let (path, into) = (shown(&merged.path), shown(&merged.into));
    match &merged.how {
        Merge::SameFile => format!("{path}: the same file as {into}, read once"),
        Merge::SameRun(gpu) => {
            format!("{path}: {gpu} again, the same run as {into}: counted once")
        }
        Merge::AnotherRun(gpu) => format!(
            "{path}: another run of {gpu} ({into}): merged, its cases count as measured again"
        ),
    }
}

/// What was read and the rule.
pub(crate) fn introduction(fleet: &Fleet, tally: &Tally) -> String {
    format!(
        "fleet: {} file{}, {} GPU{} of {} model{} in {} group{} (model, backend, api/build, \
         sizing). A GPU is slower in a case beyond {} % of its median and {SIGMAS} robust \
         sigmas ({MAD_SCALE} MAD). It is named sick when it is slower so across a family or \
         a sweep (the median of {} or more of its cases), in a case slower in every run of \
         it, or when it misses or fails a case most of its group measured; a case slower \
         once, alone, is unsteady: measure it again.",
        tally.files,
        plural(tally.files),
        tally.gpus,
        plural(tally.gpus),
        tally.models,
        plural(tally.models),
        tally.groups,
        plural(tally.groups),
        percent_text(fleet.threshold),
        super::spans::MIN_CASES,
    )
}

/// The line that says what the fleet comes to, ending with the exit status.
pub(crate) fn conclusion(tally: &Tally) -> String {
    let outcome = tally.conclusion();
    let count = |n: usize, what: &str| format!("{n} {what}{}", plural(n));
    let mut line = match outcome {
        Conclusion::Sick => format!(
            "sick: {} of {} named, in {}",
            count(tally.sick_gpus, "GPU"),
            tally.gpus,
            count(tally.outliers, "case")
        ),
        Conclusion::Unsteady => format!(
            "no GPU named sick among {}; unsteady: {} slower in {} once, alone: measure again",
            count(tally.judged_gpus, "GPU"),
            count(tally.unsteady_gpus, "GPU"),
            count(tally.unsteady, "case")
        ),
        Conclusion::Incomplete if tally.judged_gpus == 0 => "incomplete: no GPU judged".to_owned(),
        Conclusion::Incomplete => format!(
            "incomplete: no GPU named sick or unsteady among the {} judged",
            count(tally.judged_gpus, "GPU")
        ),
        Conclusion::Healthy => format!(
            "healthy: no GPU named sick or unsteady among {} of {}",
            count(tally.gpus, "GPU"),
            count(tally.models, "model")
        ),
    };
    if outcome == Conclusion::Sick && tally.unsteady_gpus > 0 {
        let n = tally.unsteady_gpus;
        line.push_str(&format!("; {n} more GPU{} unsteady", plural(n)));
    }
    if tally.unjudged_gpus > 0 {
        line.push_str(&format!(
            "; not judged: {} in groups of fewer than {MIN_MEMBERS}",
            count(tally.unjudged_gpus, "GPU")
        ));
    }
    if tally.skipped_files > 0 {
        let allowed = if tally.skips_allowed {
            " (allowed)"
        } else {
            ""
        };
        line.push_str(&format!(
            "; {} not read{allowed}",
            count(tally.skipped_files, "file")
        ));
    }
    if tally.faster > 0 {
        line.push_str(&format!(
            "; {} faster than the median beyond the threshold (not failures)",
            count(tally.faster, "case")
        ));
    }
    format!("{line} (exit {})\n", outcome.exit_code())
}

/// The sick GPUs, the most outlier cases first.
fn sick(text: &mut Text, fleet: &Fleet) {
    let mut gpus: Vec<&Member> = fleet
        .members
        .iter()
        .filter(|m| m.condition == super::Condition::Sick)
        .collect();
    if gpus.is_empty() {
        return;
    }
    gpus.sort_by_key(|m| std::cmp::Reverse(m.outliers()));
    text.heading("Sick GPUs");
    let rows = gpus
        .iter()
        .take(SHOWN_GPUS)
        .map(|member| sick_row(fleet, member))
        .collect();
    text.table(&SICK_HEADER, rows, 7);
    text.out.push_str(&more(gpus.len(), SHOWN_GPUS, "GPUs"));
}

const SICK_HEADER: [&str; 12] = [
    "host",
    "gpu_uuid",
    "pci_bus_id",
    "file",
    "slower across",
    "worst case",
    "distance %",
    "group",
    "outliers",
    "slower",
    "missing",
    "failed",
];

fn sick_row(fleet: &Fleet, member: &Member) -> Vec<String> {
    let group = &fleet.groups[member.group];
    let worst = member
        .worst
        .map(|(case, distance)| (&group.cases[case].id, distance));
    let mut cells = identity(member);
    cells.extend([
        spans_text(group, member),
        worst.map_or_else(String::new, |(id, _)| id.to_string()),
        signed(worst.map(|(_, distance)| 100.0 * distance), 1),
        (member.group + 1).to_string(),
        member.outliers().to_string(),
        member.slower.to_string(),
        member.missing.to_string(),
        member.failed.to_string(),
    ]);
    cells
}

/// The spans a GPU is slower in: `copy/offset −8.0 % (33 cases)`, joined by `; `.
pub(crate) fn spans_text(group: &Group, member: &Member) -> String {
    member
        .slow_spans
        .iter()
        .map(|&(span, distance)| {
            let span = &group.spans[span];
            format!(
                "{span} {:+.1} % ({} cases)",
                100.0 * distance,
                span.cases.len()
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// The unsteady GPUs, each with its cases and the command that measures them again.
fn unsteady(text: &mut Text, fleet: &Fleet) {
    let gpus: Vec<(usize, &Member)> = fleet
        .members
        .iter()
        .enumerate()
        .filter(|(_, m)| m.unsteady > 0)
        .collect();
    if gpus.is_empty() {
        return;
    }
    text.heading("Unsteady: slower in a case once, alone; measure it again on the GPU's host");
    for &(index, member) in gpus.iter().take(SHOWN_GPUS) {
        let cases = unsteady_cases(fleet, index)
            .into_iter()
            .map(|(case, cell)| {
                format!(
                    "{} {}",
                    case.id,
                    signed(cell.distance.map(|d| 100.0 * d), 1) + " %"
                )
            })
            .collect::<Vec<_>>()
            .join(", ");
        let command = remeasure(fleet, member).unwrap_or_default();
        if text.markdown {
            text.item(&format!(
                "{} `{}`: {cases}\n  `{command}`",
                member.host, member.gpu
            ));
        } else {
            text.item(&format!("{} {}: {cases}", member.host, member.gpu));
            text.item(&format!("  {command}"));
        }
    }
    text.out.push_str(&more(gpus.len(), SHOWN_GPUS, "GPUs"));
}

/// The cases the member at `index` is unsteady in, with its cells.
fn unsteady_cases(fleet: &Fleet, index: usize) -> Vec<(&GroupCase, &Cell)> {
    let group = &fleet.groups[fleet.members[index].group];
    let Some(position) = group.members.iter().position(|&m| m == index) else {
        return Vec::new();
    };
    group
        .cases
        .iter()
        .map(|case| (case, &case.cells[position]))
        .filter(|(_, cell)| cell.standing == Standing::Unsteady)
        .collect()
}

/// The `membench run` command that measures a GPU's unsteady cases again, on its host,
/// into a file of their own beside its first (`…-again.csv`) that the next `fleet`
/// merges as a second run; none where it has no unsteady case.
pub(crate) fn remeasure(fleet: &Fleet, member: &Member) -> Option<String> {
    let index = fleet.members.iter().position(|m| std::ptr::eq(m, member))?;
    let cases = unsteady_cases(fleet, index);
    if cases.is_empty() {
        return None;
    }
    let group = &fleet.groups[member.group];
    let adapter = if known(&member.gpu_uuid) {
        &member.gpu_uuid
    } else if known(&member.pci_bus_id) {
        &member.pci_bus_id
    } else {
        &group.device
    };
    let filter: Vec<String> = cases
        .iter()
        .map(|(case, _)| format!("{}$", case.id))
        .collect();
    let mut words = vec![
        "membench".to_owned(),
        "run".to_owned(),
        "--adapter".to_owned(),
        quoted(adapter),
        "--api".to_owned(),
        group.setting.api().to_string(),
        "--build".to_owned(),
        group.setting.build().to_string(),
    ];
    if let Some(sizing) = group.sizing {
        if sizing.quick {
            words.push("--quick".to_owned());
        }
        if let Some(bytes) = sizing.buffer_bytes.filter(|b| b % (1 << 20) == 0) {
            words.extend(["--buffer-mib".to_owned(), (bytes >> 20).to_string()]);
        }
        if let Some((columns, rows)) = sizing.matrix {
            words.extend(["--size".to_owned(), format!("{columns}x{rows}")]);
        }
    }
    words.extend([
        "--filter".to_owned(),
        quoted(&filter.join(",")),
        "--out".to_owned(),
        quoted(&shown(&again(member.file()))),
    ]);
    Some(words.join(" "))
}

/// The file beside `file` that a GPU's cases measured again go to: `x-again.csv`.
fn again(file: &Path) -> std::path::PathBuf {
    let stem = file.file_stem().unwrap_or_default().to_string_lossy();
    file.with_file_name(format!("{stem}-again.csv"))
}

/// `word` as a POSIX shell reads it back: bare where it is plain, else single-quoted.
fn quoted(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-=:,+@%".contains(c));
    if plain {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// A fraction as a percentage: `5`, `2.5`.
fn percent_text(fraction: f64) -> String {
    let percent = fraction * 100.0;
    if (percent - percent.round()).abs() < 1e-9 {
        format!("{percent:.0}")
    } else {
        format!("{percent}")
    }
}

/// `… and N more` where a table shows the first `shown` of `total`.
fn more(total: usize, shown: usize, what: &str) -> String {
    if total > shown {
        format!(
            "… and {} more {what}: --format csv or json lists every one\n",
            total - shown
        )
    } else {
        String::new()
    }
}

/// A GPU's host, UUID, bus id and file name (and how many more files it has).
fn identity(member: &Member) -> Vec<String> {
    let file = member.file();
    let mut name = shown(Path::new(file.file_name().unwrap_or(file.as_os_str())));
    if member.files.len() > 1 {
        name.push_str(&format!(" (+{})", member.files.len() - 1));
    }
    vec![
        member.host.clone(),
        member.gpu_uuid.clone(),
        member.pci_bus_id.clone(),
        name,
    ]
}

const CASE_HEADER: [&str; 14] = [
    "host",
    "gpu_uuid",
    "pci_bus_id",
    "file",
    "family",
    "variant",
    "param",
    "status",
    "standing",
    "group",
    "GB/s",
    "median GB/s",
    "distance %",
    "z",
];

/// Every GPU's cases beyond the threshold: (group, case, position in the group); the
/// sick GPUs' first, then the unsteady, then the faster, each the farthest first.
fn notable_cells(fleet: &Fleet) -> Vec<(usize, usize, usize)> {
    let rank = |standing: Standing| match standing {
        s if s.is_outlier() => Some(0),
        Standing::Unsteady => Some(1),
        Standing::Faster => Some(2),
        _ => None,
    };
    let mut cells: Vec<(u8, f64, (usize, usize, usize))> = Vec::new();
    for (g, group) in fleet.groups.iter().enumerate() {
        for (c, case) in group.cases.iter().enumerate() {
            for (p, cell) in case.cells.iter().enumerate() {
                if let Some(rank) = rank(cell.standing) {
                    // Missing and failed cases (no distance) first in their rank.
                    let far = cell.distance.map_or(f64::NEG_INFINITY, |d| -d.abs());
                    cells.push((rank, far, (g, c, p)));
                }
            }
        }
    }
    cells.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)));
    cells.into_iter().map(|(_, _, at)| at).collect()
}

fn case_rows(fleet: &Fleet, cells: &[(usize, usize, usize)]) -> Vec<Vec<String>> {
    cells
        .iter()
        .take(SHOWN_CASES)
        .map(|&(g, c, p)| {
            let group = &fleet.groups[g];
            let case = &group.cases[c];
            let cell = &case.cells[p];
            let mut cells = identity(&fleet.members[group.members[p]]);
            cells.extend([
                case.id.family.to_string(),
                case.id.variant.clone(),
                case.id.params.to_string(),
                cell.status.map_or("missing", |s| s.as_str()).to_owned(),
                cell.standing.as_str().to_owned(),
                (g + 1).to_string(),
                gbps_text(cell.gbps),
                gbps_text(case.median_gbps),
                signed(cell.distance.map(|d| 100.0 * d), 1),
                signed(cell.z, 1),
            ]);
            cells
        })
        .collect()
}

const MEDIAN_HEADER: [&str; 11] = [
    "family",
    "variant",
    "param",
    "GPUs",
    "median GB/s",
    "MAD GB/s",
    "sigma %",
    "slowest %",
    "fastest %",
    "outliers",
    "unsteady",
];

fn median_rows(group: &Group) -> Vec<Vec<String>> {
    group.cases.iter().map(median_row).collect()
}

fn median_row(case: &GroupCase) -> Vec<String> {
    let extent = case.extent();
    vec![
        case.id.family.to_string(),
        case.id.variant.clone(),
        case.id.params.to_string(),
        case.measured.to_string(),
        gbps_text(case.median_gbps),
        gbps_text(case.mad_gbps),
        number(case.sigma().map(|s| 100.0 * s), 2),
        signed(extent.map(|(low, _)| 100.0 * low), 1),
        signed(extent.map(|(_, high)| 100.0 * high), 1),
        case.outliers().to_string(),
        case.unsteady().to_string(),
    ]
}

/// `value` with `digits` decimals; nothing where there is none.
fn number(value: Option<f64>, digits: usize) -> String {
    value.map_or_else(String::new, |v| format!("{v:.digits$}"))
}

/// A bandwidth in four significant digits (at least one decimal): `1498.9`, `15.00`,
/// `0.01230`; nothing where there is none.
#[expect(
    clippy::cast_possible_truncation,
    reason = "the floor of a finite f64's log10 lies within ±324"
)]
pub(crate) fn gbps_text(value: Option<f64>) -> String {
    value.map_or_else(String::new, |v| {
        let magnitude = if v == 0.0 {
            0
        } else {
            v.abs().log10().floor() as i32
        };
        let digits = (3 - magnitude).clamp(1, 9) as usize;
        format!("{v:.digits$}")
    })
}

/// `value` with its sign and `digits` decimals; nothing where there is none.
fn signed(value: Option<f64>, digits: usize) -> String {
    value.map_or_else(String::new, |v| format!("{v:+.digits$}"))
}

/// Aligned columns for a terminal: `left` text columns, then numbers to the right.
fn aligned(header: &[&str], rows: Vec<Vec<String>>, left: usize) -> String {
    let mut table = Table::new();
    table
        .load_style(TableStyle::new())
        .set_header(header.to_vec())
        .add_rows(rows);
    for (index, column) in table.column_iter_mut().enumerate() {
        column.set_padding((0, 2));
        if index >= left {
            column.set_cell_alignment(CellAlignment::Right);
        }
    }
    table.trim_fmt()
}
