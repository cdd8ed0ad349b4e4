//! Health: a run's rows against what a healthy GPU of the model reaches, from an
//! expectation file (a CSV of `device,case,min_gbps,reason`). One file per model is
//! shipped under `results/expect/`, derived from the committed campaigns.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::results::{LATENCY_FAMILIES, MAX_FILE_BYTES, Row, Status};
use crate::suite::{CaseId, Family, Setting};

/// The setting health is measured and judged in: what a plain wgpu program gets, the
/// one build that also moves data to and from the host.
pub const SETTING: Setting = Setting::WGPU;

/// One line of an expectation file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Expectation {
    /// The model, as the results' `device` column names it.
    pub device: String,
    /// The case (`family/variant/param`), measured in [`SETTING`].
    pub case: String,
    /// The least a healthy GPU of the model reaches, in GB/s.
    pub min_gbps: f64,
    /// Where the figure comes from.
    pub reason: String,
}

/// What a check found wrong with one case.
#[derive(Clone, Debug, PartialEq)]
pub enum Problem {
    /// Measured, verified, and slower than the expectation.
    Below {
        measured_gbps: f64,
        expectation: Expectation,
    },
    /// Failed (verification or timing) or was skipped: the GPU could not show its health.
    NotMeasured { why: String },
    /// The run has no row of the case.
    Missing,
}

/// The verdict on a run: each expected case's problem, where it has one.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Verdict {
    pub checked: usize,
    pub problems: Vec<(CaseId, Problem)>,
}

impl Verdict {
    /// Whether every expected case was measured and reached its figure.
    pub fn healthy(&self) -> bool {
        self.problems.is_empty()
    }

    /// Whether a case could not be measured (which says nothing of the GPU's speed).
    pub fn incomplete(&self) -> bool {
        self.problems
            .iter()
            .any(|(_, p)| !matches!(p, Problem::Below { .. }))
    }

    /// One line per problem, and a last line saying what came of it.
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
                    expectation.reason
                ),
                Problem::NotMeasured { why } => format!("not measured: {case}: {why}"),
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

/// Reads an expectation file; each case must parse, each figure be positive.
pub fn read(path: &Path) -> Result<Vec<Expectation>> {
    let error = |message: String| Error::Results {
        path: path.to_owned(),
        message,
    };
    let file = std::fs::File::open(path).map_err(Error::io(path))?;
    let bytes = crate::files::read_bounded(path, &file, MAX_FILE_BYTES)?;
    let mut reader = csv::Reader::from_reader(bytes.as_slice());
    let mut expectations = Vec::new();
    for (index, record) in reader.deserialize::<Expectation>().enumerate() {
        let line = index + 2;
        let expectation = record.map_err(|e| error(format!("line {line}: {e}")))?;
        if let Err(why) = expectation.case.parse::<CaseId>() {
            return Err(error(format!("line {line}: {why}")));
        }
        if !(expectation.min_gbps.is_finite() && expectation.min_gbps > 0.0) {
            return Err(error(format!(
                "line {line}: min_gbps {} is not a positive bandwidth",
                expectation.min_gbps
            )));
        }
        expectations.push(expectation);
    }
    if expectations.is_empty() {
        return Err(error("no expectation in it".to_owned()));
    }
    Ok(expectations)
}

/// Checks `rows` (a run's) against `expectations` of their device: an error where the
/// file is of another model.
pub fn check(path: &Path, expectations: &[Expectation], rows: &[Row]) -> Result<Verdict> {
    if let (Some(row), Some(expected)) = (rows.first(), expectations.first())
        && row.device != expected.device
    {
        return Err(Error::Results {
            path: path.to_owned(),
            message: format!(
                "expectations of `{}` where this run measured `{}`",
                expected.device, row.device
            ),
        });
    }
    let mut verdict = Verdict {
        checked: expectations.len(),
        problems: Vec::new(),
    };
    for expectation in expectations {
        let Ok(case) = expectation.case.parse::<CaseId>() else {
            continue;
        };
        let row = rows
            .iter()
            .find(|row| row.setting() == SETTING && row.id() == case);
        let problem = match row {
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
        if let Some(problem) = problem {
            verdict.problems.push((case, problem));
        }
    }
    Ok(verdict)
}

/// The share of a healthy GPU's measured bandwidth it must reach again: transfers vary
/// with the host (its memory, its PCIe slot, a fresh process's page faults), the GPU's
/// own memory much less. One healthy H100 read back 6.2 GB/s in a health run and 7.9 GB/s
/// in the full run minutes later (docs/cluster.md).
fn fraction(family: Family) -> f64 {
    if family == Family::Transfer { 0.5 } else { 0.9 }
}

/// Expectations from a campaign's `rows` (of one device) for the cases `cases`: each a
/// fraction of the measured median, the file and commit named.
pub fn derive(source: &str, rows: &[Row], cases: &[CaseId]) -> Vec<Expectation> {
    cases
        .iter()
        .filter_map(|case| {
            let row = rows.iter().find(|row| {
                row.setting() == SETTING && row.id() == *case && row.status == Status::Ok
            })?;
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
                case: case.to_string(),
                min_gbps: significant(measured * share),
                reason: format!("{figure}measured in {source} at {})", row.git_commit),
            })
        })
        .collect()
}

/// `x` rounded down to four significant digits: a figure to read, not a measurement.
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suite::{Profile, Sizing, select};

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
            "nvidia-h100-80gb-hbm3-539de1f2-vulkan",
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
            assert_eq!(read(&expect).unwrap(), derived);
        }
    }

    #[test]
    fn a_slow_failed_or_missing_case_is_a_problem_and_another_model_an_error() {
        let (campaign, expect) = shipped(CAMPAIGNS[0]);
        let expectations = read(&expect).unwrap();
        let mut rows = crate::results::read(&campaign).unwrap();
        let verdict = check(&expect, &expectations, &rows).unwrap();
        assert!(verdict.healthy(), "{}", verdict.text());
        let peak = |row: &Row| row.id().to_string() == "copy/peak/launch=vec4";
        for row in rows
            .iter_mut()
            .filter(|r| r.setting() == SETTING && peak(r))
        {
            row.gbps_median = row.gbps_median.map(|g| g * 0.8);
        }
        let verdict = check(&expect, &expectations, &rows).unwrap();
        assert!(!verdict.healthy() && !verdict.incomplete());
        assert!(
            verdict
                .text()
                .contains("below expectation: copy/peak/launch=vec4")
        );
        rows.retain(|row| !row.id().to_string().starts_with("bank/stride/stride=1;"));
        let verdict = check(&expect, &expectations, &rows).unwrap();
        assert!(verdict.incomplete(), "{}", verdict.text());
        for row in &mut rows {
            row.device = "Another GPU".to_owned();
        }
        let message = check(&expect, &expectations, &rows)
            .unwrap_err()
            .to_string();
        assert!(
            message.contains("where this run measured `Another GPU`"),
            "{message}"
        );
    }
}
