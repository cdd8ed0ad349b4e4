//! Fleets written from the fixture: healthy ones, one with a slow GPU, one with a
//! missing or failed case, two models side by side; and the committed five-H100 fleet:
//! as it is (two unsteady cases, no GPU sick), with a GPU planted 8 % slow, with one
//! GPU's file twice, with a case measured again, and with a file named twice.

use std::path::{Path, PathBuf};

use super::cases::{difference, median_mad, stand};
use super::*;
use crate::judge::Difference;
use crate::results::tests::scratch;
use crate::results::{Format, Row, Status};
use crate::suite::Family;

/// The fixture's rows, with a sizing (schema 5 requires one).
fn fixture() -> Vec<Row> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/gpu-a.csv");
    crate::results::read(&path)
        .unwrap()
        .into_iter()
        .map(|row| Row {
            sizing: Some(RunSizing::default()),
            ..row
        })
        .collect()
}

fn host(n: usize) -> String {
    format!("node{n:02}")
}

fn uuid(n: usize) -> String {
    format!("GPU-{n:08x}-1111-2222-3333-444455556666")
}

fn bus(n: usize) -> String {
    format!("00000000:{:02X}:00.0", n + 0x10)
}

/// GPU `n`'s rows: its identity, and each bandwidth within ±0.3 % of the fixture's.
fn gpu(rows: &[Row], n: usize) -> Vec<Row> {
    rows.iter()
        .enumerate()
        .map(|(i, row)| {
            let jitter = ((n * 7 + i * 13) % 5) as f64 - 2.0;
            Row {
                host: host(n),
                gpu_uuid: uuid(n),
                pci_bus_id: bus(n),
                ..row.scaled(1.0 + 0.0015 * jitter)
            }
        })
        .collect()
}

/// Writes each GPU's rows as `gpu-N.csv` into a fresh directory.
fn fleet_dir(name: &str, gpus: &[Vec<Row>]) -> PathBuf {
    let dir = scratch(name);
    for (n, rows) in gpus.iter().enumerate() {
        crate::results::write(&dir.join(format!("gpu-{n}.csv")), rows).unwrap();
    }
    dir
}

fn healthy(count: usize) -> Vec<Vec<Row>> {
    let rows = fixture();
    (0..count).map(|n| gpu(&rows, n)).collect()
}

fn load(dir: &Path) -> Fleet {
    Fleet::load(&[dir.to_owned()], Options::default()).unwrap()
}

#[test]
fn medians_and_mads() {
    assert_eq!(
        median_mad(&mut [1.0, 2.0, 3.0, 4.0, 100.0]),
        Some((3.0, 1.0))
    );
    assert_eq!(median_mad(&mut [4.0, 1.0, 3.0, 2.0]), Some((2.5, 1.0)));
    assert_eq!(median_mad(&mut [7.0, 7.0, 7.0]), Some((7.0, 0.0)));
    assert_eq!(median_mad(&mut []), None);
    let fleet = difference(92.0, 100.0, 1.0);
    assert!((fleet.relative + 0.08).abs() < 1e-12);
    assert!((fleet.z().unwrap() + 8.0 / MAD_SCALE).abs() < 1e-12);
    assert_eq!(difference(92.0, 100.0, 0.0).z(), None);
}

#[test]
fn an_outlier_is_beyond_the_threshold_and_the_noise() {
    let at = |relative, sigma| stand(Difference { relative, sigma }, 0.05);
    // Beyond both.
    assert_eq!(at(-0.08, 0.008), Standing::Slower);
    // Beyond the threshold, within the noise of a noisy case.
    assert_eq!(at(-0.08, 0.04), Standing::Within);
    // Beyond the noise of a quiet case, within the threshold.
    assert_eq!(at(-0.03, 0.0015), Standing::Within);
    // No MAD: the threshold alone decides.
    assert_eq!(at(-0.06, 0.0), Standing::Slower);
    assert_eq!(at(-0.04, 0.0), Standing::Within);
    // Faster is reported, and no failure.
    assert_eq!(at(0.08, 0.008), Standing::Faster);
    assert!(!Standing::Faster.is_outlier());
    assert!(Standing::Slower.is_outlier() && Standing::Missing.is_outlier());
}

#[test]
fn no_outlier_among_eight_alike_gpus() {
    let dir = fleet_dir("fleet-healthy", &healthy(8));
    let fleet = load(&dir);
    let tally = fleet.tally();
    let conclusion = tally.conclusion();
    assert_eq!(
        conclusion,
        Conclusion::Healthy,
        "{}",
        render(&fleet, Format::Table).unwrap()
    );
    assert_eq!(conclusion.exit_code(), 0);
    assert_eq!((tally.files, tally.gpus, tally.models), (8, 8, 1));
    assert_eq!((tally.groups, tally.skipped_files), (1, 0));
    let group = &fleet.groups[0];
    assert_eq!(group.members.len(), 8);
    assert_eq!(group.cases.len(), fixture().len());
    let measured = group
        .cases
        .iter()
        .filter(|c| c.median_gbps.is_some())
        .count();
    assert_eq!(
        measured,
        fixture().iter().filter(|r| r.status == Status::Ok).count()
    );
    let table = render(&fleet, Format::Table).unwrap();
    assert!(
        table.contains("healthy: no GPU named sick or unsteady among 8 GPUs of 1 model (exit 0)"),
        "{table}"
    );
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_gpu_with_copy_rows_eight_percent_slower_is_named_and_fails_the_fleet() {
    let mut gpus = healthy(8);
    let sick = 5;
    gpus[sick] = gpus[sick]
        .iter()
        .map(|row| {
            if row.family == Family::Copy {
                row.scaled(0.92)
            } else {
                row.clone()
            }
        })
        .collect();
    let dir = fleet_dir("fleet-sick", &gpus);
    let fleet = load(&dir);
    let tally = fleet.tally();
    assert_eq!(tally.conclusion(), Conclusion::Sick);
    assert_eq!(tally.conclusion().exit_code(), EXIT_SICK);
    assert_eq!(tally.sick_gpus, 1);
    let copies = fixture()
        .iter()
        .filter(|r| r.family == Family::Copy && r.status == Status::Ok)
        .count();
    assert_eq!(tally.outliers, copies);
    let named: Vec<&Member> = fleet.members.iter().filter(|m| m.outliers() > 0).collect();
    assert_eq!(named.len(), 1);
    let member = named[0];
    assert_eq!(
        (&member.host, &member.gpu_uuid, &member.pci_bus_id),
        (&host(sick), &uuid(sick), &bus(sick))
    );
    assert_eq!(member.gpu, GpuId::Uuid(uuid(sick)));
    // The copy family and its sweeps of three cases or more are its evidence.
    let spans: Vec<String> = member
        .slow_spans
        .iter()
        .map(|&(span, _)| fleet.groups[0].spans[span].to_string())
        .collect();
    assert_eq!(spans, ["copy/launch", "copy/offset", "copy/stride", "copy"]);
    assert_eq!(
        (member.slower, member.missing, member.failed),
        (copies, 0, 0)
    );
    let (case, distance) = member.worst.unwrap();
    assert_eq!(fleet.groups[0].cases[case].id.family, Family::Copy);
    assert!((distance + 0.08).abs() < 0.01, "{distance}");
    for format in [Format::Table, Format::Markdown] {
        let text = render(&fleet, format).unwrap();
        for name in [host(sick), uuid(sick), bus(sick)] {
            assert!(text.contains(&name), "{name} not in {text}");
        }
        assert!(text.contains("sick: 1 GPU of 8 named"), "{text}");
    }
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_missing_or_failed_case_is_an_outlier() {
    let mut gpus = healthy(6);
    let dropped = gpus[2].remove(3).id();
    let failed = gpus[4][7].id();
    let row = &mut gpus[4][7];
    (row.status, row.verified, row.note) = (Status::Failed, false, "lost".into());
    (row.time_us_median, row.time_us_min, row.time_us_max) = (None, None, None);
    (row.gbps_median, row.gbps_best, row.cv) = (None, None, None);
    let dir = fleet_dir("fleet-missing", &gpus);
    let fleet = load(&dir);
    assert_eq!(fleet.tally().conclusion(), Conclusion::Sick);
    assert_eq!(fleet.tally().outliers, 2);
    let group = &fleet.groups[0];
    let at = |id: &CaseId| group.cases.iter().position(|c| c.id == *id).unwrap();
    let missing = fleet.cell(group.members[2], at(&dropped)).unwrap();
    assert_eq!(
        (missing.status, missing.standing),
        (None, Standing::Missing)
    );
    assert_eq!(fleet.members[group.members[2]].condition, Condition::Sick);
    let lost = fleet.cell(group.members[4], at(&failed)).unwrap();
    assert_eq!(lost.standing, Standing::Failed);
    assert_eq!(fleet.members[group.members[2]].missing, 1);
    assert_eq!(fleet.members[group.members[4]].failed, 1);
    let csv = render(&fleet, Format::Csv).unwrap();
    assert!(
        csv.lines()
            .any(|l| l.contains(",missing,") && l.ends_with(",missing,true"))
    );
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn models_are_not_mixed() {
    let rows = fixture();
    let other: Vec<Row> = rows
        .iter()
        .map(|row| Row {
            device: "Fixture GPU B".into(),
            ..row.scaled(0.7)
        })
        .collect();
    let mut gpus: Vec<Vec<Row>> = (0..4).map(|n| gpu(&rows, n)).collect();
    gpus.extend((4..8).map(|n| gpu(&other, n)));
    // Two GPUs of a third model: too few to judge, even though one is slow.
    let third: Vec<Row> = rows
        .iter()
        .map(|row| Row {
            device: "Fixture GPU C".into(),
            ..row.clone()
        })
        .collect();
    gpus.push(gpu(&third, 8));
    gpus.push(gpu(
        &third.iter().map(|r| r.scaled(0.5)).collect::<Vec<_>>(),
        9,
    ));
    let dir = fleet_dir("fleet-models", &gpus);
    let fleet = load(&dir);
    let tally = fleet.tally();
    // Nothing against the judged GPUs, but two were not judged: not a healthy fleet.
    assert_eq!(
        tally.conclusion(),
        Conclusion::Incomplete,
        "{}",
        render(&fleet, Format::Table).unwrap()
    );
    assert_eq!(tally.conclusion().exit_code(), EXIT_INCOMPLETE);
    assert_eq!((tally.models, tally.groups, tally.gpus), (3, 3, 10));
    assert_eq!((tally.unjudged_gpus, tally.judged_gpus), (2, 8));
    let sizes: Vec<(&str, usize, bool)> = fleet
        .groups
        .iter()
        .map(|g| (g.device.as_str(), g.members.len(), g.judged()))
        .collect();
    assert_eq!(
        sizes,
        [
            ("Fixture GPU A", 4, true),
            ("Fixture GPU B", 4, true),
            ("Fixture GPU C", 2, false)
        ]
    );
    let markdown = render(&fleet, Format::Markdown).unwrap();
    assert!(
        markdown.contains("not judged: 3 GPUs are needed"),
        "{markdown}"
    );
    assert!(
        markdown.contains("not judged: 2 GPUs in groups of fewer than 3 (exit 5)"),
        "{markdown}"
    );
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn unreadable_files_are_skipped_and_counted() {
    let dir = fleet_dir("fleet-skipped", &healthy(4));
    std::fs::write(dir.join("empty.csv"), "").unwrap();
    std::fs::write(dir.join("garbage.csv"), "not,a,results\nfile,at,all\n").unwrap();
    std::fs::write(dir.join("notes.txt"), "not read").unwrap();
    let absent = dir.join("absent.csv");
    let inputs = [dir.clone(), absent];
    let fleet = Fleet::load(&inputs, Options::default()).unwrap();
    let tally = fleet.tally();
    assert_eq!((tally.files, tally.skipped_files), (4, 3));
    // A file not read fails the gate, unless skips are allowed.
    assert_eq!(tally.conclusion(), Conclusion::Incomplete);
    let allowing = Options {
        allow_skips: true,
        ..Options::default()
    };
    let allowed = Fleet::load(&inputs, allowing).unwrap();
    assert_eq!(allowed.tally().conclusion(), Conclusion::Healthy);
    let whys: Vec<(String, &str)> = fleet
        .skipped
        .iter()
        .map(|s| {
            (
                crate::text::shown_path(Path::new(s.path.file_name().unwrap())),
                s.why.as_str(),
            )
        })
        .collect();
    assert_eq!(whys[0].0, "absent.csv");
    assert!(whys[1].1.starts_with("empty"), "{whys:?}");
    assert!(whys[2].1.contains("not a membench results CSV"), "{whys:?}");
    let table = render(&fleet, Format::Table).unwrap();
    assert!(table.contains("3 inputs skipped"), "{table}");
    // Nothing read at all is an error.
    let error = Fleet::load(&[dir.join("garbage.csv")], Options::default()).unwrap_err();
    assert!(
        error
            .to_string()
            .contains("no results file read (1 skipped"),
        "{error}"
    );
    let zero = Options {
        threshold: 0.0,
        ..Options::default()
    };
    assert!(Fleet::load(std::slice::from_ref(&dir), zero).is_err());
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_gpu_without_a_uuid_is_named_by_host_and_bus_else_by_host_and_model() {
    let rows = fixture();
    let mut gpus = healthy(4);
    gpus[1] = gpu(&rows, 1)
        .into_iter()
        .map(|row| Row {
            gpu_uuid: "-".into(),
            ..row
        })
        .collect();
    // Two files of one software adapter on one host, each of two builds: one GPU,
    // never one per file, and each file merged once.
    let software = |n| {
        let default: Vec<Row> = gpu(&rows, n)
            .into_iter()
            .map(|row| Row {
                gpu_uuid: "-".into(),
                pci_bus_id: String::new(),
                host: "box".into(),
                ..row
            })
            .collect();
        let tax_free = default.iter().map(|row| Row {
            build: crate::suite::Build::TaxFree,
            ..row.clone()
        });
        default.iter().cloned().chain(tax_free).collect()
    };
    gpus[2] = software(2);
    gpus[3] = software(3);
    let dir = fleet_dir("fleet-names", &gpus);
    let fleet = load(&dir);
    let names: Vec<String> = fleet.groups[0]
        .members
        .iter()
        .map(|&m| fleet.members[m].gpu.to_string())
        .collect();
    assert_eq!(
        names,
        [
            uuid(0),
            format!("{} {}", host(1), bus(1)),
            "box Fixture GPU A".into()
        ]
    );
    assert_eq!(fleet.members[2].files.len(), 2);
    assert_eq!(fleet.merged.len(), 1);
    assert_eq!(fleet.members[0].short_label(), "node00 / 00000000");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn every_format_holds_every_gpu_and_case() {
    let mut gpus = healthy(4);
    gpus[0] = gpus[0].iter().map(|r| r.scaled(0.9)).collect();
    let dir = fleet_dir("fleet-formats", &gpus);
    let fleet = load(&dir);
    let cases = fleet.groups[0].cases.len();
    let csv = render(&fleet, Format::Csv).unwrap();
    let mut reader = csv::Reader::from_reader(csv.as_bytes());
    let header: Vec<String> = reader
        .headers()
        .unwrap()
        .iter()
        .map(str::to_owned)
        .collect();
    assert_eq!(
        header,
        [
            "device",
            "backend",
            "setting",
            "sizing",
            "gpu",
            "host",
            "gpu_uuid",
            "pci_bus_id",
            "file",
            "family",
            "variant",
            "param",
            "status",
            "runs",
            "gbps",
            "median_gbps",
            "mad_gbps",
            "measured",
            "distance",
            "z",
            "standing",
            "outlier"
        ]
    );
    assert_eq!(reader.records().count(), 4 * cases);
    let json: serde_json::Value =
        serde_json::from_str(&render(&fleet, Format::Json).unwrap()).unwrap();
    assert_eq!(json["summary"]["passes"], false);
    assert_eq!(json["summary"]["conclusion"], "sick");
    assert_eq!(json["summary"]["exit_status"], 3);
    assert_eq!(json["summary"]["sick_gpus"], 1);
    assert_eq!(json["gpus"][0]["condition"], "sick");
    assert_eq!(json["gpus"][0]["slow_spans"][0]["span"], "copy/launch");
    assert_eq!(json["summary"]["threshold"], 0.05);
    assert_eq!(json["gpus"].as_array().unwrap().len(), 4);
    assert_eq!(json["gpus"][0]["host"], host(0));
    assert_eq!(json["cases"].as_array().unwrap().len(), cases);
    assert_eq!(json["rows"].as_array().unwrap().len(), 4 * cases);
    assert_eq!(json["rows"][0]["setting"], "wgpu/default");
    assert_eq!(json["rows"][0]["sizing"], "default");
    let markdown = render(&fleet, Format::Markdown).unwrap();
    assert!(markdown.starts_with("# membench fleet\n"));
    assert!(
        markdown.contains("| host | gpu_uuid | pci_bus_id |"),
        "{markdown}"
    );
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn the_fleet_page_plots_the_outlier_cases_and_labels_the_gpu() {
    let mut gpus = healthy(6);
    let sick = 3;
    gpus[sick] = gpus[sick]
        .iter()
        .map(|row| {
            if row.family == Family::Copy && row.variant == "offset" {
                row.scaled(0.9)
            } else {
                row.clone()
            }
        })
        .collect();
    let dir = fleet_dir("fleet-page", &gpus);
    let fleet = load(&dir);
    let report = crate::report::fleet_page(&fleet).unwrap();
    assert!(!report.charts.is_empty());
    for chart in &report.charts {
        assert!(
            chart.file.starts_with("fleet-1-copy-offset-"),
            "{}",
            chart.file
        );
        assert!(chart.svg.contains("node03 / 00000003"), "{}", chart.file);
    }
    assert!(report.html.contains("Sick GPUs"));
    assert!(report.html.contains(&uuid(sick)));
    let out = dir.join("report");
    crate::report::write(&report, &out).unwrap();
    assert!(out.join("index.html").is_file());
    // A healthy group still gets its headline cases.
    let dir2 = fleet_dir("fleet-page-healthy", &healthy(4));
    let report = crate::report::fleet_page(&load(&dir2)).unwrap();
    assert!(!report.charts.is_empty() && report.charts.len() <= 4);
    assert!(report.charts[0].file.starts_with("fleet-1-copy-peak"));
    std::fs::remove_dir_all(dir).unwrap();
    std::fs::remove_dir_all(dir2).unwrap();
}

/// The committed example: five H100s' files.
fn committed() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("results/fleet")
}

/// The committed files' rows, by file name.
fn committed_rows() -> Vec<(String, Vec<Row>)> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(committed())
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|path| {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            (name, crate::results::read(&path).unwrap())
        })
        .collect()
}

/// Writes `files` (name, rows) into a fresh directory.
fn written(name: &str, files: &[(String, Vec<Row>)]) -> PathBuf {
    let dir = scratch(name);
    for (file, rows) in files {
        crate::results::write(&dir.join(file), rows).unwrap();
    }
    dir
}

/// Each GPU (short UUID) with its cases of `standing`.
fn standing(fleet: &Fleet, standing: Standing) -> Vec<(String, String)> {
    let group = &fleet.groups[0];
    let mut found = Vec::new();
    for case in &group.cases {
        for (&member, cell) in group.members.iter().zip(&case.cells) {
            if cell.standing == standing {
                let uuid = &fleet.members[member].gpu_uuid;
                found.push((uuid[4..12].to_owned(), case.id.to_string()));
            }
        }
    }
    found.sort();
    found
}

/// The two cases of the committed example that ran slow once on one GPU each.
fn transients() -> Vec<(String, String)> {
    vec![
        (
            "6b8ff325".into(),
            "reduce/subgroup_add/n=268435456;wg=1024".into(),
        ),
        ("ea1619d6".into(), "copy/offset/offset=15".into()),
    ]
}

#[test]
fn the_committed_fleet_names_no_gpu_sick_and_its_two_transients_unsteady() {
    let fleet = load(&committed());
    let tally = fleet.tally();
    assert_eq!(
        (tally.conclusion(), tally.sick_gpus, tally.unsteady_gpus),
        (Conclusion::Unsteady, 0, 2),
        "{}",
        render(&fleet, Format::Table).unwrap()
    );
    assert_eq!(tally.conclusion().exit_code(), EXIT_UNSTEADY);
    assert_eq!(standing(&fleet, Standing::Unsteady), transients());
    assert!(standing(&fleet, Standing::Slower).is_empty());
    // Each unsteady GPU gets the command that measures its case again.
    let table = render(&fleet, Format::Table).unwrap();
    for command in [
        "membench run --adapter GPU-ea1619d6-5922-441f-2366-f3abcc337bc2 --api wgpu \
         --build tax-free --filter 'copy/offset/offset=15$' --out ",
        "--filter 'reduce/subgroup_add/n=268435456;wg=1024$' --out ",
    ] {
        assert!(table.contains(command), "{command}\n{table}");
    }
    assert!(table.contains("vm-ea1619d6-again.csv"), "{table}");
    assert!(table.contains("(exit 4)"), "{table}");
}

#[test]
fn a_gpu_planted_eight_percent_slow_is_named_and_the_transients_stay_unsteady() {
    let mut files = committed_rows();
    let planted = files
        .iter()
        .position(|(name, _)| name == "vm-771c78b8.csv")
        .unwrap();
    files[planted].1 = files[planted].1.iter().map(|r| r.scaled(0.92)).collect();
    let dir = written("fleet-planted", &files);
    let fleet = load(&dir);
    let tally = fleet.tally();
    assert_eq!(tally.conclusion(), Conclusion::Sick);
    assert_eq!(tally.conclusion().exit_code(), EXIT_SICK);
    let sick: Vec<&str> = fleet
        .members
        .iter()
        .filter(|m| m.condition == Condition::Sick)
        .map(|m| m.gpu_uuid.as_str())
        .collect();
    assert_eq!(sick, ["GPU-771c78b8-f20d-3d29-44f7-1492450d394c"]);
    // Every case of the planted GPU is slower; the transients stay unsteady.
    let slower = standing(&fleet, Standing::Slower);
    assert_eq!(slower.len(), fleet.groups[0].cases.len());
    assert!(slower.iter().all(|(gpu, _)| gpu == "771c78b8"));
    assert_eq!(standing(&fleet, Standing::Unsteady), transients());
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn two_files_of_one_gpu_are_one_gpu_and_a_group_of_two_is_not_judged() {
    let files = committed_rows();
    let of = |name: &str| files.iter().find(|(n, _)| n == name).unwrap().1.clone();
    let copies = [
        ("c1.csv".to_owned(), of("vm-ea1619d6.csv")),
        ("c2.csv".to_owned(), of("vm-ea1619d6.csv")),
        ("vm-539de1f2.csv".to_owned(), of("vm-539de1f2.csv")),
    ];
    let dir = written("fleet-copies", &copies);
    let fleet = load(&dir);
    let tally = fleet.tally();
    assert_eq!((tally.files, tally.gpus, tally.unjudged_gpus), (3, 2, 2));
    assert_eq!(tally.conclusion(), Conclusion::Incomplete);
    assert_eq!(tally.conclusion().exit_code(), EXIT_INCOMPLETE);
    assert_eq!(fleet.groups[0].members.len(), 2);
    assert!(matches!(
        &fleet.merged[..],
        [Merged {
            how: Merge::SameRun(_),
            ..
        }]
    ));
    let table = render(&fleet, Format::Table).unwrap();
    assert!(!table.contains("no outlier"), "{table}");
    assert!(
        table.contains("c2.csv: GPU-ea1619d6-5922-441f-2366-f3abcc337bc2 again, the same run"),
        "{table}"
    );
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_case_slow_in_two_runs_names_the_gpu_and_one_fast_again_clears_it() {
    let files = committed_rows();
    let again = |offset_15: f64| {
        let (_, rows) = files.iter().find(|(n, _)| n == "vm-ea1619d6.csv").unwrap();
        let rows: Vec<Row> = rows
            .iter()
            .filter(|r| r.id().to_string() == "copy/offset/offset=15")
            .map(|r| Row {
                timestamp_utc: "2026-11-28T09:00:00Z".into(),
                ..r.scaled(offset_15)
            })
            .collect();
        ("vm-ea1619d6-again.csv".to_owned(), rows)
    };
    // Slow again: the case stays slow, so the GPU is named.
    let dir = written(
        "fleet-slow-again",
        &[files.clone(), vec![again(1.0)]].concat(),
    );
    let fleet = load(&dir);
    assert_eq!(fleet.tally().conclusion(), Conclusion::Sick);
    assert_eq!(
        standing(&fleet, Standing::Slower),
        [("ea1619d6".to_owned(), "copy/offset/offset=15".to_owned())]
    );
    assert!(matches!(
        &fleet.merged[..],
        [Merged {
            how: Merge::AnotherRun(_),
            ..
        }]
    ));
    let case = fleet.groups[0]
        .cases
        .iter()
        .position(|c| c.id.to_string() == "copy/offset/offset=15")
        .unwrap();
    let member = fleet
        .members
        .iter()
        .position(|m| m.files.len() == 2)
        .unwrap();
    assert_eq!(fleet.cell(member, case).unwrap().runs, 2);
    std::fs::remove_dir_all(dir).unwrap();
    // At full speed again (the median's 2131.6 GB/s over its 1427.4): the transient
    // is gone, and the other GPU's stays unsteady.
    let dir = written(
        "fleet-fast-again",
        &[files.clone(), vec![again(1.5)]].concat(),
    );
    let fleet = load(&dir);
    assert_eq!(fleet.tally().conclusion(), Conclusion::Unsteady);
    assert_eq!(standing(&fleet, Standing::Unsteady), transients()[..1]);
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_file_named_twice_is_read_once() {
    let dir = written("fleet-spellings", &committed_rows());
    let file = dir.join("vm-539de1f2.csv");
    let link = dir.join("link.csv");
    std::os::unix::fs::symlink(&file, &link).unwrap();
    let parent = dir.file_name().unwrap();
    let roundabout = dir.join("..").join(parent).join("vm-539de1f2.csv");
    let fleet = Fleet::load(&[dir.clone(), roundabout, file], Options::default()).unwrap();
    let tally = fleet.tally();
    assert_eq!((tally.files, tally.gpus, tally.merged_files), (5, 5, 2));
    assert!(fleet.merged.iter().all(|m| m.how == Merge::SameFile));
    assert_eq!(fleet.groups[0].members.len(), 5);
    assert_eq!(tally.conclusion(), Conclusion::Unsteady);
    std::fs::remove_dir_all(dir).unwrap();
}
