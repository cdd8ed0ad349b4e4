//! Health: a run's rows against what a healthy GPU of the model reaches, from an
//! expectation file (a CSV of `device,case,min_gbps,reason`). One file per model is
//! shipped under `results/expect/`, derived from the committed campaigns; `run --bless`
//! derives one from a run of the user's own GPU.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::error::{Error, Result};
use crate::results::{self, LATENCY_FAMILIES, Row, Status};
use crate::suite::{CaseId, Family, Setting};
use crate::text::shown;

/// The setting health is measured and judged in: what a plain wgpu program gets, the
/// one build that also moves data to and from the host.
pub const SETTING: Setting = Setting::WGPU;

/// The columns of an expectation file, in order.
const COLUMNS: [&str; 4] = ["device", "case", "min_gbps", "reason"];

/// One line of an expectation file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Expectation {
    /// The model, as the results' `device` column names it.
    pub device: String,
    /// The case, measured in [`SETTING`].
    #[serde(serialize_with = "case_text", deserialize_with = "case_id")]
    pub case: CaseId,
    /// The least a healthy GPU of the model reaches, in GB/s.
    pub min_gbps: f64,
    /// Where the figure comes from.
    pub reason: String,
}

fn case_text<S: Serializer>(case: &CaseId, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.collect_str(case)
}

fn case_id<'de, D: Deserializer<'de>>(deserializer: D) -> Result<CaseId, D::Error> {
    let text = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
    text.parse().map_err(serde::de::Error::custom)
}

/// An expectation file as read: one model's, each case once.
#[derive(Clone, Debug, PartialEq)]
pub struct Expectations {
    /// The file, as errors name it.
    pub path: PathBuf,
    /// The model every line is of.
    pub device: String,
    /// Its lines, in the file's order.
    pub lines: Vec<Expectation>,
}

/// What a check found wrong with one case.
#[derive(Clone, Debug, PartialEq)]
pub enum Problem {
    /// Measured, verified, and slower than the expectation.
    Below {
        /// The bandwidth measured, in GB/s.
        measured_gbps: f64,
        /// What a healthy GPU of the model reaches.
        expectation: Expectation,
    },
    /// Failed (verification or timing) or was skipped: the GPU could not show its health.
    NotMeasured {
        /// The row's status and note.
        why: String,
    },
    /// The run has no row of the case.
    Missing,
}

/// The checkup of a run: each expected case's problem, where it has one.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Checkup {
    /// Expected cases checked.
    pub checked: usize,
    /// Each case with a problem, and the problem.
    pub problems: Vec<(CaseId, Problem)>,
}

impl Checkup {
    /// Whether every expected case was measured and reached its figure.
    pub fn healthy(&self) -> bool {
        self.problems.is_empty()
    }

    /// Whether a case could not be measured (which says nothing of the GPU's speed).
    pub(crate) fn incomplete(&self) -> bool {
        self.problems
            .iter()
            .any(|(_, p)| !matches!(p, Problem::Below { .. }))
    }

    /// One line per problem, and a last line saying what came of it. What the file and
    /// the driver wrote is [`shown`]: it cannot start a line of its own.
    pub fn text(&self) -> String {
        let mut text = String::new();
        for (case, problem) in &self.problems {
            let line = match problem {
                Problem::Below {
                    measured_gbps,
                    expectation,
                } => format!(
                    "below expectation: {case} at {measured_gbps:.1} GB/s, {:.1} % under the \
                     {:.1} GB/s expected ({})",
                    100.0 * (1.0 - measured_gbps / expectation.min_gbps),
                    expectation.min_gbps,
                    shown(&expectation.reason)
                ),
                Problem::NotMeasured { why } => format!("not measured: {case}: {}", shown(why)),
                Problem::Missing => format!("not measured: {case}: the run has no such row"),
            };
            text.push_str(&line);
            text.push('\n');
        }
        let outcome = if self.healthy() {
            "healthy".to_owned()
        } else {
            format!("{} of them with a problem", self.problems.len())
        };
        text.push_str(&format!(
            "health: {} cases against their expectation, {outcome}\n",
            self.checked
        ));
        text
    }
}

/// Reads an expectation file as a results file is read ([`results::file_bytes`]): a
/// regular file of bounded size, else refused before it is opened.
pub fn read(path: &Path) -> Result<Expectations> {
    parse(path, &results::file_bytes(path)?)
}

/// Parses the bytes of an expectation file; `path` only names the file in errors. Any
/// input gives expectations or an error naming the line, never a panic. Refused: other
/// columns, a field a terminal would act on, a case that does not parse, a figure that is
/// not a positive bandwidth, a line of another model than the first's, a case twice, and
/// no line at all.
pub fn parse(path: &Path, bytes: &[u8]) -> Result<Expectations> {
    let error = |message: String| Error::Results {
        path: path.to_owned(),
        message,
    };
    let mut reader = csv::Reader::from_reader(bytes);
    let header = reader
        .headers()
        .map_err(|e| error(results::csv_message(&e, None)))?
        .clone();
    if header.iter().ne(COLUMNS) {
        return Err(error(format!(
            "line 1: an expectation file's columns are `{}`",
            COLUMNS.join(",")
        )));
    }
    let mut lines: Vec<Expectation> = Vec::new();
    let mut first_line: HashMap<CaseId, u64> = HashMap::new();
    let mut record = csv::StringRecord::new();
    loop {
        match reader.read_record(&mut record) {
            Ok(true) => {}
            Ok(false) => break,
            Err(e) => return Err(error(results::csv_message(&e, Some(&header)))),
        }
        let line = record.position().map_or(0, csv::Position::line);
        // Before any value is quoted in an error: text reaches terminals.
        if let Some((column, why)) = COLUMNS
            .iter()
            .zip(record.iter())
            .find_map(|(column, text)| results::unsafe_text(column, text).map(|w| (column, w)))
        {
            return Err(error(format!("line {line}, column `{column}`: {why}")));
        }
        let expectation: Expectation = record
            .deserialize(Some(&header))
            .map_err(|e| error(results::field_message(&e, &header, &record)))?;
        if let Some(why) = line_problem(&expectation, lines.first(), &first_line) {
            return Err(error(format!("line {line}: {why}")));
        }
        first_line.insert(expectation.case.clone(), line);
        lines.push(expectation);
    }
    let Some(device) = lines.first().map(|first| first.device.clone()) else {
        return Err(error("no expectation in it".to_owned()));
    };
    Ok(Expectations {
        path: path.to_owned(),
        device,
        lines,
    })
}

/// What is wrong with `expectation` where the file's first line is `first` and the lines
/// before it are `earlier` (each case's line), if anything.
fn line_problem(
    expectation: &Expectation,
    first: Option<&Expectation>,
    earlier: &HashMap<CaseId, u64>,
) -> Option<String> {
    if !(expectation.min_gbps.is_finite() && expectation.min_gbps > 0.0) {
        return Some(format!(
            "min_gbps {} is not a positive bandwidth",
            expectation.min_gbps
        ));
    }
    if let Some(first) = first.filter(|first| first.device != expectation.device) {
        return Some(format!(
            "device `{}` where the file's first line has `{}`: one file is one model's",
            expectation.device, first.device
        ));
    }
    earlier
        .get(&expectation.case)
        .map(|line| format!("the case {} again (first on line {line})", expectation.case))
}

impl Expectations {
    /// An error unless the adapter `device` is the file's model and `cases` (what the run
    /// will measure) hold every case of the file: checked before anything is measured.
    pub(crate) fn admit(&self, device: &str, cases: &[CaseId]) -> Result<()> {
        let error = |message: String| Error::Results {
            path: self.path.clone(),
            message,
        };
        if device != self.device {
            return Err(error(format!(
                "expectations of `{}` where this run measures `{device}`",
                self.device
            )));
        }
        match self.lines.iter().find(|line| !cases.contains(&line.case)) {
            Some(line) => Err(error(format!(
                "the case {} is not one of the {} this run measures (a file of another \
                 sizing? `--quick` sizes cases apart)",
                line.case,
                cases.len()
            ))),
            None => Ok(()),
        }
    }

    /// The verdict on `rows`, a run's of the file's model.
    pub fn check(&self, rows: &[Row]) -> Checkup {
        let problems = self
            .lines
            .iter()
            .filter_map(|expectation| {
                let problem = match row_of(rows, &expectation.case) {
                    None => Some(Problem::Missing),
                    Some(row) if row.status != Status::Ok => Some(Problem::NotMeasured {
                        why: format!("{}: {}", row.status, row.note),
                    }),
                    Some(row) => row
                        .gbps_median
                        .filter(|&gbps| gbps < expectation.min_gbps)
                        .map(|measured_gbps| Problem::Below {
                            measured_gbps,
                            expectation: expectation.clone(),
                        }),
                };
                problem.map(|problem| (expectation.case.clone(), problem))
            })
            .collect();
        Checkup {
            checked: self.lines.len(),
            problems,
        }
    }
}

/// The share of a healthy GPU's measured bandwidth it must reach again: transfers vary
/// with the host (its memory, its PCIe slot, a fresh process's page faults), the GPU's
/// own memory much less: a healthy GPU's readback differed by a fifth between a health
/// run and a full run (docs/cluster.md, What it checks, and how fast).
fn fraction(family: Family) -> f64 {
    if family == Family::Transfer { 0.5 } else { 0.9 }
}

/// The row of `case` in [`SETTING`] among `rows`.
fn row_of<'r>(rows: &'r [Row], case: &CaseId) -> Option<&'r Row> {
    rows.iter()
        .find(|row| row.setting() == SETTING && row.id() == *case)
}

/// Expectations from a campaign's `rows` (of one device) for the cases `cases` it
/// measured: each a fraction of the measured median, the file and commit named.
pub fn derive(source: &str, rows: &[Row], cases: &[CaseId]) -> Vec<Expectation> {
    cases
        .iter()
        .filter_map(|case| {
            let row = row_of(rows, case).filter(|row| row.status == Status::Ok)?;
            let measured = row.gbps_median?;
            let share = fraction(case.family);
            // A pointer chase's figure is its time per load.
            let figure = match crate::results::ns_per_element(row, Some(measured)) {
                Some(ns) if LATENCY_FAMILIES.contains(&case.family) => {
                    format!("{:.1} ns a load at most ({ns:.1} ns ", ns / share)
                }
                _ => format!("{:.0} % of {measured:.1} GB/s (", 100.0 * share),
            };
            Some(Expectation {
                device: row.device.clone(),
                case: case.clone(),
                min_gbps: significant(measured * share),
                reason: format!("{figure}measured in {source} at {})", row.git_commit),
            })
        })
        .collect()
}

/// `x` rounded down to four significant digits: a figure to read, not a measurement.
#[expect(
    clippy::cast_possible_truncation,
    reason = "the floor of a finite f64's log10 lies within ±324"
)]
fn significant(x: f64) -> f64 {
    let scale = 10f64.powi(3 - x.abs().log10().floor() as i32);
    (x * scale).floor() / scale
}

/// `expectations` as an expectation file's text.
pub fn render(expectations: &[Expectation]) -> Result<String> {
    let mut writer = csv::Writer::from_writer(Vec::new());
    let failed = |message: String| Error::Internal(format!("writing expectations: {message}"));
    for expectation in expectations {
        writer
            .serialize(expectation)
            .map_err(|e| failed(e.to_string()))?;
    }
    crate::results::csv_text(writer).map_err(failed)
}

/// An error unless `path` could take a blessed file now, checked before anything is
/// measured: writable, and not the run's results file `results` (whose rows it would
/// replace).
pub(crate) fn check_blessable(path: &Path, results: Option<&Path>) -> Result<()> {
    crate::files::check_writable(path)?;
    let full = |path| {
        crate::files::resolve(path)
            .ok()
            .and_then(|resolved| std::path::absolute(resolved).ok())
    };
    if results.is_some_and(|results| full(results).is_some_and(|r| full(path) == Some(r))) {
        return Err(Error::Usage(
            "--bless names the results file: the expectations would replace its rows".to_owned(),
        ));
    }
    Ok(())
}

/// Writes to `path` the expectations of a run the user declares healthy: `rows` of the
/// cases `cases`, derived as the shipped files are ([`derive`]), `source` named as where
/// they were measured. A case the adapter skipped is left out (it would never be
/// measured); one that failed or has no row refuses the whole, and nothing is written.
pub fn bless(
    path: &Path,
    source: &str,
    rows: &[Row],
    cases: &[CaseId],
) -> Result<Vec<Expectation>> {
    let refused = |message: String| Error::Results {
        path: path.to_owned(),
        message: format!("not blessed: {message}"),
    };
    let unmeasured = |case: &&CaseId| {
        row_of(rows, case).is_none_or(|row| !matches!(row.status, Status::Ok | Status::Skipped))
    };
    if let Some(case) = cases.iter().find(unmeasured) {
        return Err(refused(format!(
            "{case} was not measured, and a healthy GPU measures every case"
        )));
    }
    let expectations = derive(source, rows, cases);
    if expectations.is_empty() {
        return Err(refused("the run measured no case".to_owned()));
    }
    let text = render(&expectations)?;
    crate::files::replace(path, |file| {
        std::io::Write::write_all(file, text.as_bytes())
    })?;
    Ok(expectations)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suite::{Profile, Sizing, select};
    use proptest::prelude::*;

    /// The health profile's cases at full size.
    fn health_cases() -> Vec<CaseId> {
        Profile::Health
            .select(select(&Sizing::nominal(false), &[]).unwrap())
            .iter()
            .map(|(e, c)| c.id(e))
            .collect()
    }

    /// A committed campaign and its shipped expectation file.
    fn shipped((campaign, model): (&str, &str)) -> (std::path::PathBuf, std::path::PathBuf) {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        (
            root.join("results").join(format!("{campaign}.csv")),
            root.join("results/expect").join(format!("{model}.csv")),
        )
    }

    /// The committed campaigns an expectation file is shipped for, and the file's name:
    /// one per model, whichever GPU of it measured the campaign.
    const CAMPAIGNS: [(&str, &str); 2] = [
        (
            "nvidia-h100-80gb-hbm3-c7018ded-vulkan",
            "nvidia-h100-80gb-hbm3-vulkan",
        ),
        ("nvidia-h200-ee128efb-vulkan", "nvidia-h200-vulkan"),
    ];

    #[test]
    fn shipped_expectations_follow_the_committed_campaigns() {
        for name in CAMPAIGNS {
            let (campaign, expect) = shipped(name);
            let rows = crate::results::read(&campaign).unwrap();
            let source = format!("results/{}.csv", name.0);
            let derived = derive(&source, &rows, &health_cases());
            assert_eq!(derived.len(), health_cases().len(), "{name:?}");
            let text = render(&derived).unwrap();
            // MEMBENCH_BLESS=1 writes them anew, after a campaign.
            if std::env::var_os("MEMBENCH_BLESS").is_some() {
                std::fs::create_dir_all(expect.parent().unwrap()).unwrap();
                std::fs::write(&expect, &text).unwrap();
            }
            assert_eq!(std::fs::read_to_string(&expect).unwrap(), text, "{name:?}");
            assert_eq!(read(&expect).unwrap().lines, derived);
        }
    }

    #[test]
    fn a_slow_failed_or_missing_case_is_a_problem_and_another_model_is_refused_at_once() {
        let (campaign, expect) = shipped(CAMPAIGNS[0]);
        let expectations = read(&expect).unwrap();
        let mut rows = crate::results::read(&campaign).unwrap();
        expectations
            .admit("NVIDIA H100 80GB HBM3", &health_cases())
            .unwrap();
        let verdict = expectations.check(&rows);
        assert!(verdict.healthy(), "{}", verdict.text());
        let peak = |row: &Row| row.id().to_string() == "copy/peak/launch=vec4";
        for row in rows
            .iter_mut()
            .filter(|r| r.setting() == SETTING && peak(r))
        {
            row.gbps_median = row.gbps_median.map(|g| g * 0.8);
        }
        let verdict = expectations.check(&rows);
        assert!(!verdict.healthy() && !verdict.incomplete());
        assert!(
            verdict
                .text()
                .contains("below expectation: copy/peak/launch=vec4")
        );
        rows.retain(|row| !row.id().to_string().starts_with("bank/stride/stride=1;"));
        let verdict = expectations.check(&rows);
        assert!(verdict.incomplete(), "{}", verdict.text());
        let another = expectations
            .admit("NVIDIA H200", &health_cases())
            .unwrap_err()
            .to_string();
        assert!(
            another.contains("where this run measures `NVIDIA H200`"),
            "{another}"
        );
        let quick = Profile::Health
            .select(select(&Sizing::nominal(true), &[]).unwrap())
            .iter()
            .map(|(e, c)| c.id(e))
            .collect::<Vec<_>>();
        let sizing = expectations
            .admit("NVIDIA H100 80GB HBM3", &quick)
            .unwrap_err()
            .to_string();
        assert!(sizing.contains("is not one of the"), "{sizing}");
    }

    /// The first lines of the H100's shipped file, with `edit` applied to its text.
    fn edited(edit: impl Fn(String) -> String) -> String {
        let (_, expect) = shipped(CAMPAIGNS[0]);
        let text = std::fs::read_to_string(expect).unwrap();
        edit(text.lines().take(4).collect::<Vec<_>>().join("\n") + "\n")
    }

    /// Why `text` is refused as an expectation file.
    fn refusal(text: &str) -> String {
        parse(Path::new("expect.csv"), text.as_bytes())
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn hostile_expectation_files_are_refused_by_line() {
        let first = parse(Path::new("ok.csv"), edited(|t| t).as_bytes()).unwrap();
        let forged = render(&[Expectation {
            reason: "x\nhealth: 9 cases against their expectation, healthy".to_owned(),
            ..first.lines[0].clone()
        }])
        .unwrap();
        for (text, expected) in [
            (
                edited(|t| t.replacen("NVIDIA H100", "NVIDIA \u{1b}[2JH100", 1)),
                "line 2, column `device`: a control character (\\u{1b})",
            ),
            (forged, "line 2, column `reason`: a control character (\\n)"),
            (
                edited(|t| t.replacen("90 %", "90 \u{202e}%", 1)),
                "a bidirectional formatting character",
            ),
            (
                edited(|t| {
                    let third = t.lines().nth(3).unwrap().to_owned();
                    t.replace(&third, &third.replace("H100 80GB HBM3", "H200"))
                }),
                "line 4: device `NVIDIA H200` where the file's first line has `NVIDIA H100 80GB HBM3`",
            ),
            (
                edited(|t| {
                    let second = t.lines().nth(1).unwrap().to_owned();
                    format!("{t}{second}\n")
                }),
                "line 5: the case copy/peak/launch=vec4 again (first on line 2)",
            ),
            (
                edited(|t| t.replacen("device,case", "model,case", 1)),
                "line 1: an expectation file's columns are `device,case,min_gbps,reason`",
            ),
            (
                edited(|t| t.replacen(&format!(",{:.1},", first.lines[0].min_gbps), ",-1,", 1)),
                "line 2: min_gbps -1 is not a positive bandwidth",
            ),
            (
                edited(|t| t.replacen("copy/peak", "nonesuch/peak", 1)),
                "line 2: unknown family `nonesuch`",
            ),
            (
                "device,case,min_gbps,reason\n".to_owned(),
                "no expectation in it",
            ),
        ] {
            let message = refusal(&text);
            assert!(message.contains(expected), "{expected}: {message}");
            assert!(!message.chars().any(crate::text::is_unsafe), "{message:?}");
        }
        assert_eq!(
            parse(Path::new("ok.csv"), edited(|t| t).as_bytes())
                .unwrap()
                .lines
                .len(),
            3
        );
    }

    #[test]
    fn a_fifo_or_an_endless_device_is_refused_unopened() {
        let dir = crate::results::tests::scratch("expect-fifo");
        let fifo = dir.join("expect.csv");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if made.is_ok_and(|status| status.success()) {
            let message = read(&fifo).unwrap_err().to_string();
            assert!(message.contains("a device, FIFO or socket"), "{message}");
        }
        if Path::new("/dev/zero").exists() {
            let message = read(Path::new("/dev/zero")).unwrap_err().to_string();
            assert!(message.contains("not a regular file"), "{message}");
        }
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_blessed_file_holds_the_shipped_margins_and_a_failed_case_blesses_nothing() {
        let (campaign, _) = shipped(CAMPAIGNS[0]);
        let mut rows = crate::results::read(&campaign).unwrap();
        let dir = crate::results::tests::scratch("bless");
        let path = dir.join("mine.csv");
        let blessed = bless(&path, "mine", &rows, &health_cases()).unwrap();
        assert_eq!(blessed, derive("mine", &rows, &health_cases()));
        assert_eq!(read(&path).unwrap().lines, blessed);
        let before = std::fs::read(&path).unwrap();
        for row in rows.iter_mut().filter(|r| r.family == Family::Bank) {
            row.status = Status::Failed;
        }
        let message = bless(&path, "mine", &rows, &health_cases())
            .unwrap_err()
            .to_string();
        assert!(
            message.contains("not blessed: bank/stride/stride=1;r=1024 was not measured"),
            "{message}"
        );
        assert_eq!(std::fs::read(&path).unwrap(), before);
        std::fs::remove_dir_all(dir).unwrap();
    }

    /// The shipped H100 file's text.
    fn shipped_text() -> String {
        std::fs::read_to_string(shipped(CAMPAIGNS[0]).1).unwrap()
    }

    /// What any expectation file that reads must hold: one model, each case once, fields
    /// a terminal shows as they are, positive figures.
    fn holds_its_promises(expectations: &Expectations) -> std::result::Result<(), TestCaseError> {
        let mut cases = std::collections::HashSet::new();
        for line in &expectations.lines {
            prop_assert_eq!(&line.device, &expectations.device);
            prop_assert!(cases.insert(line.case.clone()), "{} twice", line.case);
            prop_assert!(line.min_gbps.is_finite() && line.min_gbps > 0.0);
            for text in [&line.device, &line.reason] {
                prop_assert!(!text.chars().any(crate::text::is_unsafe), "{:?}", text);
            }
        }
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

        #[test]
        fn any_bytes_give_expectations_that_hold_or_an_error(
            bytes in prop::collection::vec(any::<u8>(), 0..400)
        ) {
            if let Ok(expectations) = parse(Path::new("fuzz.csv"), &bytes) {
                holds_its_promises(&expectations)?;
            }
        }

        #[test]
        fn any_field_of_the_shipped_file_replaced_gives_what_holds_or_one_line(
            line in 1usize..10,
            field in 0usize..4,
            value in "\\PC{0,12}|[\\x00-\\x1f\\u{202e}\\u{2066}]{1,3}|NaN|-0|1e309|copy/peak/launch=vec4|NVIDIA H200",
        ) {
            let text = shipped_text();
            let mut records: Vec<csv::StringRecord> = csv::ReaderBuilder::new()
                .has_headers(false)
                .from_reader(text.as_bytes())
                .records()
                .collect::<std::result::Result<_, _>>()
                .unwrap();
            let mut fields: Vec<String> = records[line].iter().map(str::to_owned).collect();
            fields[field] = value;
            records[line] = csv::StringRecord::from(fields);
            let mut writer = csv::Writer::from_writer(Vec::new());
            for record in &records {
                writer.write_record(record).unwrap();
            }
            let bytes = writer.into_inner().unwrap();
            match parse(Path::new("fuzz.csv"), &bytes) {
                Ok(expectations) => holds_its_promises(&expectations)?,
                Err(error) => {
                    let message = error.to_string();
                    prop_assert!(!message.chars().any(crate::text::is_unsafe), "{:?}", message);
                }
            }
        }
    }
}
