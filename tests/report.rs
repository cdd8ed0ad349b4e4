//! `membench compare` and `membench report` on the fixture CSVs of two made-up
//! devices, their answers to bad input, and the results reader under malformed input.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::mpsc;
use std::time::Duration;

use membench::report;
use membench::report::compare;
use membench::results::{self, DeviceResults, Format, Row};
use membench::suite::Family;
use proptest::prelude::*;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

fn fixtures() -> membench::Result<Vec<DeviceResults>> {
    results::load(&[fixture("gpu-a.csv"), fixture("gpu-b.csv")])
}

/// A fresh empty directory under the system's temporary one.
fn scratch(name: &str) -> std::io::Result<PathBuf> {
    let dir = std::env::temp_dir().join(format!("membench-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}

/// Runs the binary; whether it succeeded, stdout and stderr.
fn membench(args: &[&str]) -> std::io::Result<(bool, String, String)> {
    let output = Command::new(env!("CARGO_BIN_EXE_membench"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()?;
    Ok((
        output.status.success(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    ))
}

#[test]
fn devices_are_named_from_the_metadata() {
    let devices = fixtures().unwrap();
    assert_eq!(devices[0].label, "Fixture GPU A (wgpu)");
    assert_eq!(devices[1].label, "Fixture GPU B (wgpu)");
}

#[test]
fn compare_gives_the_ratios_to_the_first_device() {
    let devices = fixtures().unwrap();
    let lines = results::join::join(&devices);
    let line = |family: &str, variant: &str, param: &str| {
        lines
            .iter()
            .find(|l| {
                l.family.as_str() == family && l.variant == variant && l.params.to_string() == param
            })
            .unwrap_or_else(|| panic!("{family}/{variant}/{param} missing"))
    };
    // Fixture values: A 1000 and B 500 GB/s at offset 0; stride 2 A 500, B 400.
    let offset = line("copy", "offset", "offset=0");
    assert_eq!(offset.gbps(0), Some(1000.0));
    assert_eq!(offset.ratio(1), Some(0.5));
    assert_eq!(offset.ratio(0), Some(1.0));
    assert_eq!(offset.sim_gbps(1), Some(600.0));
    assert_eq!(line("copy", "stride", "stride=2").ratio(1), Some(0.8));
    // Only A ran the 8192x8192 transpose: kept, B missing.
    let only_a = line("transpose", "naive_row", "size=8192x8192");
    assert_eq!(only_a.status(1), "missing");
    assert_eq!(only_a.ratio(1), None);
    // B failed a case A measured.
    let failed = line("reduce", "subgroup_add", "n=16777216");
    assert_eq!((failed.status(0), failed.status(1)), ("ok", "failed"));
    // Every row of either file is in the join once.
    let rows: usize = devices.iter().map(|d| d.rows.len()).sum();
    let cells: usize = lines.iter().map(|l| l.cells.iter().flatten().count()).sum();
    assert_eq!(cells, rows);
}

#[test]
fn compare_orders_params_naturally() {
    let devices = fixtures().unwrap();
    let strides: Vec<String> = results::join::join(&devices)
        .into_iter()
        .filter(|l| l.family == Family::Copy && l.variant == "stride")
        .map(|l| l.params.to_string())
        .collect();
    assert_eq!(
        strides,
        [
            "stride=1",
            "stride=2",
            "stride=3",
            "stride=4",
            "stride=8",
            "stride=16",
            "stride=32"
        ]
    );
}

#[test]
fn compare_formats_show_ratios_and_missing_rows() {
    let devices = fixtures().unwrap();
    let table = compare::render(&devices, Format::Table).unwrap();
    let offset = table
        .lines()
        .find(|l| l.starts_with("copy") && l.contains("offset=0 "))
        .unwrap();
    assert!(
        offset.contains("1000.0") && offset.contains("500.0") && offset.contains("0.500"),
        "{offset}"
    );
    assert!(table.contains("[2] Fixture GPU B (wgpu)"), "{table}");
    let transpose = table
        .lines()
        .find(|l| l.contains("naive_row") && l.contains("size=8192x8192"))
        .unwrap();
    assert!(transpose.contains("missing"), "{transpose}");

    let markdown = compare::render(&devices, Format::Markdown).unwrap();
    // Cells are padded to their column's width: compared with single spaces.
    let single_spaced = markdown
        .split(' ')
        .filter(|word| !word.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    assert!(
        single_spaced
            .contains("| copy | offset | `offset=0` | 1000.0 | 1200.0 | 500.0 | 0.500 | 600.0 |"),
        "{markdown}"
    );

    let csv = compare::render(&devices, Format::Csv).unwrap();
    let mut reader = csv::Reader::from_reader(csv.as_bytes());
    let header = reader.headers().unwrap().clone();
    let ratio = header
        .iter()
        .position(|h| h == "Fixture GPU B (wgpu) ratio")
        .unwrap();
    let record = reader
        .records()
        .map(Result::unwrap)
        .find(|r| &r[2] == "stride=2")
        .unwrap();
    assert_eq!(record[ratio].parse::<f64>().unwrap(), 0.8);
}

#[test]
fn compare_command_prints_the_table() {
    let (ok, stdout, stderr) = membench(&[
        "compare",
        "tests/fixtures/gpu-a.csv",
        "tests/fixtures/gpu-b.csv",
        "--format",
        "markdown",
    ])
    .unwrap();
    assert!(ok, "{stderr}");
    assert!(stdout.contains(" 0.500 |"), "{stdout}");
}

#[test]
fn compare_needs_two_devices_or_settings() {
    let (ok, _, stderr) = membench(&["compare", "tests/fixtures/gpu-a.csv"]).unwrap();
    assert!(!ok);
    assert!(
        stderr.contains("gpu-a.csv holds one device in one api/build: compare needs two"),
        "{stderr}"
    );
    // One file of the H100 in three settings: the settings side by side, and the tax.
    let (ok, stdout, stderr) = membench(&[
        "compare",
        "results/nvidia-h100-80gb-hbm3-c7018ded-vulkan.csv",
    ])
    .unwrap();
    assert!(ok, "{stderr}");
    assert!(
        stdout.contains("the toolchain's tax on NVIDIA H100 80GB HBM3"),
        "{stdout}"
    );
}

#[test]
fn report_has_a_chart_for_every_family_and_no_scripts() {
    let devices = fixtures().unwrap();
    let built = report::build(&devices, &[]).unwrap();
    let mut families: Vec<Family> = devices
        .iter()
        .flat_map(|d| d.rows.iter().map(|r| r.family))
        .collect();
    families.sort_unstable();
    families.dedup();
    assert_eq!(families.len(), 9, "{families:?}");
    for family in &families {
        assert!(
            built.charts.iter().any(|c| c.family == Some(*family)),
            "no chart for {family}"
        );
        assert!(built.html.contains(&format!("id=\"family-{family}\"")));
    }
    // The charts the issue names.
    for file in [
        "copy-offset.svg",
        "copy-stride.svg",
        "bank-stride.svg",
        "transpose-size-4096x4096.svg",
        "reduce-n-16777216.svg",
        "transfer-size-fixture-gpu-a-wgpu.svg",
    ] {
        assert!(
            built.charts.iter().any(|c| c.file == file),
            "{file} missing"
        );
    }
    // Every chart is inline, and the page loads nothing.
    assert_eq!(built.html.matches("<svg").count(), built.charts.len());
    assert!(!built.html.contains("<script"));
    for attribute in ["src=\"http", "href=\"http", "url(http", "@import"] {
        assert!(!built.html.contains(attribute), "{attribute}");
    }
    // Every claim of the catalogue is in the checklist.
    for claim in report::claims::CLAIMS {
        assert!(built.html.contains(&format!("id=\"claim-{}\"", claim.id)));
    }
    // One line per device, dashed predictions, on the offset chart.
    let offset = built
        .charts
        .iter()
        .find(|c| c.file == "copy-offset.svg")
        .unwrap();
    assert!(offset.svg.contains("Fixture GPU A (wgpu), predicted"));
    assert!(offset.svg.contains("Fixture GPU B (wgpu)"));
}

#[test]
fn report_shows_the_simulator_table_and_scatter() {
    // A validation of a made-up device: three held-out rows of two families and one
    // calibration row, each measured at a ratio × its prediction.
    let validation = {
        use membench::sim::model::Bound;
        use membench::validate::{Judged, Role, Unjudged, Validation};
        let judged = |id: &str, role, predicted_gbps: f64, ratio: f64| Judged {
            id: id.parse().unwrap(),
            api: membench::suite::Api::Wgpu,
            role,
            measured_gbps: predicted_gbps * ratio,
            predicted_gbps,
            bound: Some(Bound::Dram),
        };
        Validation {
            path: "made-up.csv".into(),
            device: "Made-up GPU".to_owned(),
            build: Some(membench::suite::Build::TaxFree),
            model: *membench::sim::device::preset("h100").unwrap(),
            calibrated: "calibrated from copy/peak/launch=vec4 of its own rows".to_owned(),
            judged: vec![
                judged("copy/offset/offset=0", Role::HeldOut, 3000.0, 0.9),
                judged("copy/offset/offset=1", Role::HeldOut, 2400.0, 0.75),
                judged("reduce/smem/n=16777216", Role::HeldOut, 2000.0, 1.5),
                judged("copy/peak/launch=vec4", Role::Calibration, 3100.0, 1.0),
            ],
            unjudged: vec![(
                "copy/gone/offset=0".parse().unwrap(),
                Unjudged::Unmatched(membench::suite::Unmatched::Gone),
            )],
            seconds: 0.0,
        }
    };
    let built = report::build(&fixtures().unwrap(), &[validation]).unwrap();
    let html = &built.html;
    assert!(
        html.contains("<h2 id=\"simulator\">Simulator</h2>"),
        "no section"
    );
    assert!(html.contains("href=\"#simulator\""));
    // The held-out table: copy's two rows at errors 10 % and 25 %, all three rows.
    let table = &html[html.find("<h3>Made-up GPU (wgpu tax-free)</h3>").unwrap()..];
    assert!(
        table.contains("<td>copy</td><td class=\"num\">2</td><td class=\"num\">17.5</td>"),
        "{table}"
    );
    assert!(
        table.contains("<td>all</td><td class=\"num\">3</td>"),
        "{table}"
    );
    assert!(table.contains(
        "Calibration rows (fitted, so not judged above): <code>copy/peak/launch=vec4</code>"
    ));
    assert!(table.contains("<code>copy/gone/offset=0</code>: no such case"));
    let scatter = built
        .charts
        .iter()
        .find(|c| c.file == "simulator-made-up.svg")
        .expect("the scatter");
    assert!(html.contains("href=\"simulator-made-up.svg\""));
    for words in [
        "y = x",
        "copy",
        "reduce",
        "ringed: a calibration row",
        "predicted GB/s",
    ] {
        assert!(scatter.svg.contains(words), "{words}");
    }
    // Every chart inline, the scatter too.
    assert_eq!(html.matches("<svg").count(), built.charts.len());
    // Without validations, no section.
    let plain = report::build(&fixtures().unwrap(), &[]).unwrap();
    assert!(!plain.html.contains("id=\"simulator\""));
}

#[test]
fn report_checklist_decides_the_fixtures() {
    let built = report::build(&fixtures().unwrap(), &[]).unwrap();
    let row = |id: &str| {
        let start = built.html.find(&format!("id=\"claim-{id}\"")).unwrap();
        let end = start + built.html[start..].find("</tr>").unwrap();
        built.html[start..end].to_owned()
    };
    // A: offset 1 at 0.90 of offset 0; B: at 0.98.
    let offset = row("copy-offset-misaligned");
    let a = offset.find("class=\"verdict yes\"").unwrap();
    let b = offset.find("class=\"verdict no\"").unwrap();
    assert!(a < b, "{offset}");
    // B has no constant family.
    assert!(row("constant-serialises").contains("class=\"verdict na\""));
}

#[test]
fn report_command_writes_the_page_and_charts() {
    let dir = scratch("report-out").unwrap();
    let out = dir.join("report");
    let (ok, _, stderr) = membench(&[
        "report",
        "tests/fixtures/gpu-a.csv",
        "tests/fixtures/gpu-b.csv",
        "--out",
        out.to_str().unwrap(),
    ])
    .unwrap();
    assert!(ok, "{stderr}");
    let html = std::fs::read_to_string(out.join("index.html")).unwrap();
    let svgs: Vec<_> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "svg"))
        .collect();
    assert_eq!(svgs.len(), html.matches("<svg").count());
    for svg in &svgs {
        let text = std::fs::read_to_string(svg).unwrap();
        assert!(text.starts_with("<svg") && text.trim_end().ends_with("</svg>"));
        let link = format!("href=\"{}\"", svg.file_name().unwrap().to_string_lossy());
        assert!(html.contains(&link), "{link}");
    }

    // A second report of one device removes the charts that are no longer drawn.
    std::fs::write(out.join("notes.txt"), "kept").unwrap();
    let (ok, _, stderr) = membench(&[
        "report",
        "tests/fixtures/gpu-a.csv",
        "--out",
        out.to_str().unwrap(),
    ])
    .unwrap();
    assert!(ok, "{stderr}");
    assert!(!out.join("transfer-size-fixture-gpu-b-wgpu.svg").exists());
    assert!(out.join("transfer-size-fixture-gpu-a-wgpu.svg").exists());
    assert!(out.join("notes.txt").exists());
    std::fs::remove_dir_all(dir).unwrap();
}

/// Runs `work` on a thread of its own: its answer, or `None` where it takes longer than
/// `limit` (the thread is left to spin; the test fails instead of hanging).
fn within<T: Send + 'static>(
    limit: Duration,
    work: impl FnOnce() -> T + Send + 'static,
) -> Option<T> {
    let (send, receive) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = send.send(work());
    });
    receive.recv_timeout(limit).ok()
}

#[test]
fn a_vanishing_bandwidth_draws_in_bounded_time() {
    let mut devices = fixtures().unwrap();
    for row in devices[0]
        .rows
        .iter_mut()
        .filter(|r| r.family == Family::Transfer)
    {
        row.gbps_median = Some(1e-307);
        row.sim_gbps = Some(1e300);
    }
    let built = within(Duration::from_secs(30), move || {
        report::build(&devices, &[]).map(|r| r.charts.len())
    });
    assert!(built.expect("the report did not finish").unwrap() > 0);
}

#[test]
fn ratios_are_to_the_baseline_chosen_or_the_first_file_given() {
    let dir = scratch("baseline").unwrap();
    let report = |args: &[&str]| -> String {
        let out = dir.join("report");
        let mut all = vec!["report", "--out", out.to_str().unwrap()];
        all.extend(args);
        let (ok, _, stderr) = membench(&all).unwrap();
        assert!(ok, "{stderr}");
        std::fs::read_to_string(out.join("index.html")).unwrap()
    };
    let baseline = |html: &str| {
        let start = html.find("Ratios are to the baseline, <b>").unwrap() + 31;
        html[start..start + html[start..].find("</b>").unwrap()].to_owned()
    };
    let (a, b) = ("tests/fixtures/gpu-a.csv", "tests/fixtures/gpu-b.csv");
    assert_eq!(baseline(&report(&[b, a])), "Fixture GPU B (wgpu)");
    assert_eq!(baseline(&report(&[a, b])), "Fixture GPU A (wgpu)");
    let chosen = report(&[a, b, "--baseline", "gpu b"]);
    assert_eq!(baseline(&chosen), "Fixture GPU B (wgpu)");
    // The case tables' ratios are to B: A's offset 0 (1000 GB/s) is 2.000 of B's (500).
    assert!(
        chosen.contains("<td class=\"num\">2.000</td>"),
        "ratio to B"
    );

    let (ok, _, stderr) = membench(&["report", a, b, "--baseline", "Fixture GPU"]).unwrap();
    assert!(!ok);
    assert!(
        stderr.contains("matches devices of several files"),
        "{stderr}"
    );
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn results_of_another_sizing_are_charted_apart() {
    let mut devices = fixtures().unwrap();
    // B as a quick run: every case at a sixteenth of the elements.
    for row in &mut devices[1].rows {
        row.elements /= 16;
    }
    let built = report::build(&devices, &[]).unwrap();
    let offset = |file: &str| {
        let chart = built.charts.iter().find(|c| c.file == file);
        chart.unwrap_or_else(|| panic!("no {file}")).svg.clone()
    };
    let full = offset("copy-offset.svg");
    let quick = offset("copy-offset-sizing-2.svg");
    assert!(full.contains("Fixture GPU A") && !full.contains("Fixture GPU B"));
    assert!(quick.contains("Fixture GPU B") && !quick.contains("Fixture GPU A"));
    // No chart draws a device without a row for its cases as `missing`.
    assert!(built.charts.iter().all(|c| !c.svg.contains(">missing<")));
}

/// The files directly in `dir` (hidden ones too) and their bytes, by name.
fn listing(dir: &Path) -> std::io::Result<Vec<(String, Vec<u8>)>> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        files.push((name, std::fs::read(entry.path()).unwrap_or_default()));
    }
    files.sort();
    Ok(files)
}

/// `membench report` of `inputs` into `out` where no file may grow past 64 KiB (EFBIG,
/// the signal ignored), as on a full disk: whether it succeeded.
#[cfg(target_os = "linux")]
fn report_on_a_full_disk(inputs: &[&str], out: &Path) -> std::io::Result<bool> {
    let output = Command::new("bash")
        .arg("-c")
        .arg("trap '' XFSZ; ulimit -f 64; exec \"$0\" \"$@\"")
        .arg(env!("CARGO_BIN_EXE_membench"))
        .arg("report")
        .args(inputs)
        .arg("--out")
        .arg(out)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()?;
    Ok(output.status.success())
}

/// A report whose files cannot all be written (a full disk, here a file-size limit)
/// fails and leaves the earlier report byte for byte as it was, though the new one
/// would have put another baseline's numbers under the same chart names; into a new
/// directory it leaves nothing, not even empty files.
#[test]
#[cfg(target_os = "linux")]
fn a_failed_write_leaves_the_old_report_whole_and_no_debris() {
    let dir = scratch("full-disk").unwrap();
    let out = dir.join("report");
    let (a, b) = ("tests/fixtures/gpu-a.csv", "tests/fixtures/gpu-b.csv");
    let (ok, _, stderr) = membench(&["report", a, b, "--out", out.to_str().unwrap()]).unwrap();
    assert!(ok, "{stderr}");
    std::fs::write(out.join("top.png"), "the user's screenshot").unwrap();
    let before = listing(&out).unwrap();
    let written = report_on_a_full_disk(&[b, a], &out).unwrap();
    assert!(!written, "the limited write succeeded");
    assert_eq!(listing(&out).unwrap(), before, "the earlier report changed");
    let beside: Vec<String> = listing(&dir).unwrap().into_iter().map(|(n, _)| n).collect();
    assert_eq!(beside, ["report"]);

    let new = dir.join("new/report");
    let written = report_on_a_full_disk(&[b, a], &new).unwrap();
    assert!(!written, "the limited write succeeded");
    assert!(!dir.join("new").exists(), "{:?}", listing(&dir.join("new")));
    std::fs::remove_dir_all(dir).unwrap();
}

/// A device whose name fills most of a file name's 255 bytes: the report is written,
/// every chart under a name of bounded length, each still its own.
#[test]
fn a_long_device_name_makes_short_chart_names() {
    let dir = scratch("long-name").unwrap();
    let long = format!("Fixture GPU {}", "with a very long name ".repeat(10));
    let file = edited(&dir, "long.csv", |text| {
        text.replace("Fixture GPU A", &long)
    })
    .unwrap();
    let out = dir.join("report");
    let (ok, _, stderr) = membench(&[
        "report",
        "--no-simulator",
        &file,
        "--out",
        out.to_str().unwrap(),
    ])
    .unwrap();
    assert!(ok, "{stderr}");
    let names: Vec<String> = listing(&out).unwrap().into_iter().map(|(n, _)| n).collect();
    assert!(
        names
            .iter()
            .any(|n| n.starts_with("transfer-size-fixture-gpu-with-a-very"))
    );
    for name in &names {
        assert!(name.len() <= 104, "{name}");
    }
    let html = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert_eq!(html.matches("<svg").count(), names.len() - 2, "{names:?}");
    std::fs::remove_dir_all(dir).unwrap();
}

/// A pointer chase's bandwidth is 4 bytes a load: its rows read in ns per load in
/// `compare` and the report, never as 0.0 GB/s.
#[test]
fn a_latency_reads_in_ns_per_load() {
    let device = |name: &str, ns: f64| DeviceResults {
        path: format!("{name}.csv").into(),
        kernel_files: Vec::new(),
        label: name.to_owned(),
        setting: membench::suite::Setting::WGPU,
        rows: vec![Row {
            family: Family::Latency,
            variant: "chase".into(),
            params: "footprint=1073741824".parse().unwrap(),
            status: results::Status::Ok,
            elements: 4096,
            bytes: 4 * 4096,
            gbps_median: Some(4.0 / ns),
            sim_gbps: Some(4.0 / 500.0),
            device: name.to_owned(),
            ..Row::default()
        }],
    };
    let devices = [device("GPU A", 600.0), device("GPU B", 300.0)];
    for format in [Format::Table, Format::Markdown] {
        let text = compare::render(&devices, format).unwrap();
        assert!(
            text.contains("600.0 ns") && text.contains("500.0 ns"),
            "{text}"
        );
        let mut cells = text.split(|c: char| c.is_whitespace() || c == '|');
        assert!(!cells.any(|cell| cell == "0.0"), "{text}");
    }
    let html = report::build(&devices, &[]).unwrap().html;
    let table = &html[html.find("All 1 latency cases").unwrap()..];
    assert!(table.contains("GPU A<br>ns per load"), "{table}");
    assert!(table.contains("<td class=\"num\">600.0</td>"), "{table}");
}

/// The fixture with one edit, written to a scratch file.
fn edited(dir: &Path, name: &str, edit: impl Fn(&str) -> String) -> std::io::Result<String> {
    let text = std::fs::read_to_string(fixture("gpu-a.csv"))?;
    let path = dir.join(name);
    std::fs::write(&path, edit(&text))?;
    Ok(path.to_string_lossy().into_owned())
}

/// `membench report` (and `compare`) on the fixture of B and `bad`: fails with one
/// line containing every one of `expected`, and writes nothing.
fn assert_refused(dir: &Path, bad: &str, expected: &[&str]) -> std::io::Result<()> {
    let stem = Path::new(bad)
        .file_stem()
        .unwrap_or_default()
        .to_string_lossy();
    let out = dir
        .join(format!("out-{stem}"))
        .to_string_lossy()
        .into_owned();
    let (ok, _, stderr) = membench(&["report", "tests/fixtures/gpu-b.csv", bad, "--out", &out])?;
    assert!(!ok, "accepted {bad}");
    for part in expected {
        assert!(stderr.contains(part), "{part:?} not in {stderr}");
    }
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(!Path::new(&out).exists(), "wrote {out}");
    let (ok, _, compare_stderr) = membench(&["compare", "tests/fixtures/gpu-b.csv", bad])?;
    assert!(!ok);
    assert_eq!(compare_stderr, stderr);
    Ok(())
}

#[test]
fn bad_input_is_refused_with_file_line_and_column() {
    let dir = scratch("bad-input").unwrap();
    let missing = dir.join("absent.csv").to_string_lossy().into_owned();
    assert_refused(&dir, &missing, &["absent.csv", "No such file"]).unwrap();

    let renamed = edited(&dir, "renamed.csv", |t| {
        t.replacen("gbps_median", "gbps", 1)
    })
    .unwrap();
    assert_refused(
        &dir,
        &renamed,
        &["renamed.csv: line 1", "column 16 (`gbps`)", "not a column"],
    )
    .unwrap();

    let dropped = edited(&dir, "dropped.csv", |t| {
        t.lines()
            .map(|line| {
                let mut fields: Vec<&str> = line.split(',').collect();
                fields.remove(4);
                fields.join(",")
            })
            .collect::<Vec<_>>()
            .join("\n")
    })
    .unwrap();
    assert_refused(
        &dir,
        &dropped,
        &["dropped.csv: line 1", "missing", "`elements`"],
    )
    .unwrap();

    let word = edited(&dir, "word.csv", |t| t.replacen(",1000.0,", ",fast,", 1)).unwrap();
    assert_refused(
        &dir,
        &word,
        &["word.csv: line 2, column 16 (`gbps_median`)", "`fast`"],
    )
    .unwrap();

    let short = edited(&dir, "short.csv", |t| {
        let mut lines: Vec<String> = t.lines().map(str::to_owned).collect();
        lines[3] = lines[3].rsplitn(3, ',').nth(2).unwrap().to_owned();
        lines.join("\n")
    })
    .unwrap();
    assert_refused(&dir, &short, &["short.csv: line 4", "31 fields", "33"]).unwrap();

    let mixed = edited(&dir, "mixed.csv", |t| {
        let mut lines: Vec<String> = t.lines().map(str::to_owned).collect();
        lines[5] = lines[5].replace(",0.1.0,1,", ",0.1.0,2,");
        lines.join("\n")
    })
    .unwrap();
    assert_refused(
        &dir,
        &mixed,
        &[
            "mixed.csv: line 6, column 30 (`schema_version`)",
            "schema version 2",
        ],
    )
    .unwrap();

    let negative = edited(&dir, "negative.csv", |t| {
        t.replacen(",1000.0,", ",-1000.0,", 1)
    })
    .unwrap();
    assert_refused(&dir, &negative, &["line 2, column 16 (`gbps_median`)"]).unwrap();

    let unknown = edited(&dir, "status.csv", |t| t.replacen(",ok,", ",measured,", 1)).unwrap();
    assert_refused(
        &dir,
        &unknown,
        &["line 2, column 4 (`status`)", "`measured`"],
    )
    .unwrap();

    let twice = edited(&dir, "twice.csv", |t| {
        let second = t.lines().nth(1).unwrap();
        format!("{t}{second}\n")
    })
    .unwrap();
    assert_refused(&dir, &twice, &["twice.csv: line 134", "first on line 2"]).unwrap();

    let empty = edited(&dir, "empty.csv", |_| String::new()).unwrap();
    assert_refused(&dir, &empty, &["empty.csv: line 1: no header"]).unwrap();

    let header_only = edited(&dir, "header.csv", |t| t.lines().next().unwrap().to_owned()).unwrap();
    assert_refused(&dir, &header_only, &["header.csv: no rows"]).unwrap();

    let two_devices = edited(&dir, "two.csv", |t| {
        let mut lines: Vec<String> = t.lines().map(str::to_owned).collect();
        lines[7] = lines[7].replace("Fixture GPU A", "Fixture GPU C");
        lines.join("\n")
    })
    .unwrap();
    assert_refused(&dir, &two_devices, &["two.csv: line 8", "Fixture GPU C"]).unwrap();
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_file_of_another_schema_says_so() {
    let future = results::SCHEMA_VERSION + 1;
    let text = std::fs::read_to_string(fixture("gpu-a.csv"))
        .unwrap()
        .replace(",0.1.0,1,", &format!(",0.9.0,{future},"))
        .replacen("sim_bank_ways,", "sim_bank_conflicts,", 1);
    let error = results::parse(Path::new("future.csv"), text.as_bytes())
        .unwrap_err()
        .to_string();
    let expected = format!(
        "future.csv: line 2: schema version {future} where this membench reads 1 to {}",
        results::SCHEMA_VERSION
    );
    assert!(error.starts_with(&expected), "{error}");
}

#[test]
fn report_defaults_to_every_results_csv() {
    let (ok, _, stderr) =
        membench(&["report", "--out", "/dev/null/report", "--no-simulator"]).unwrap();
    // Writing under /dev/null fails, after the committed results were read.
    assert!(!ok);
    assert!(stderr.contains("/dev/null/report"), "{stderr}");
    let inputs =
        report::default_inputs(&Path::new(env!("CARGO_MANIFEST_DIR")).join("results")).unwrap();
    assert!(!inputs.is_empty());
    assert!(
        inputs
            .iter()
            .all(|p| p.extension().is_some_and(|e| e == "csv"))
    );
}

/// The fixture's bytes, to mutate.
fn fixture_bytes() -> std::io::Result<Vec<u8>> {
    std::fs::read(fixture("gpu-b.csv"))
}

/// One edit of a byte string: overwrite, insert, delete or truncate at a position
/// taken modulo the length.
#[derive(Clone, Debug)]
enum Edit {
    Overwrite(usize, u8),
    Insert(usize, u8),
    Delete(usize),
    Truncate(usize),
}

fn edit_strategy() -> impl Strategy<Value = Edit> {
    // Bytes that matter to CSV and numbers are drawn more often than the rest.
    let byte = prop_oneof![
        3 => any::<u8>(),
        2 => prop::sample::select(b",\"\n\r;=.-eE0123456789 ".to_vec()),
    ];
    prop_oneof![
        4 => (any::<usize>(), byte.clone()).prop_map(|(at, b)| Edit::Overwrite(at, b)),
        2 => (any::<usize>(), byte).prop_map(|(at, b)| Edit::Insert(at, b)),
        2 => any::<usize>().prop_map(Edit::Delete),
        1 => any::<usize>().prop_map(Edit::Truncate),
    ]
}

fn apply(bytes: &mut Vec<u8>, edit: &Edit) {
    let len = bytes.len().max(1);
    match *edit {
        Edit::Overwrite(at, b) if !bytes.is_empty() => bytes[at % len] = b,
        Edit::Insert(at, b) => bytes.insert(at % (bytes.len() + 1), b),
        Edit::Delete(at) if !bytes.is_empty() => {
            bytes.remove(at % len);
        }
        Edit::Truncate(at) => bytes.truncate(at % (bytes.len() + 1)),
        _ => {}
    }
}

/// Names that would leave a directory, drive a terminal or run in a page.
fn hostile_name() -> impl Strategy<Value = String> {
    prop_oneof![
        "(\\.\\./){1,4}[a-z]{1,6}",
        "/tmp/[a-z]{1,6}",
        "[a-z]{1,3}[/\\\\][a-z]{1,3}",
        "[a-z]{0,3}\u{1b}\\[[0-9]{1,2}m[a-z]{0,3}",
        "[a-z]{0,3}\u{1b}\\]0;[a-z]{1,4}\u{7}",
        "[a-z]{1,3}[\u{0}-\u{1f}\u{7f}\u{80}-\u{9f}][a-z]{0,3}",
        "<script>[a-z]{1,5}</script>",
        "\"[a-z ,]{1,5}\"",
    ]
}

/// The fixture with field `column` of data line `line` (wrapping) set to `value`,
/// written as a CSV writer quotes it.
fn with_field(
    line: usize,
    column: &str,
    value: &str,
) -> Result<Vec<u8>, Box<dyn std::error::Error>> {
    let bytes = fixture_bytes()?;
    let mut reader = csv::Reader::from_reader(bytes.as_slice());
    let header = reader.headers()?.clone();
    let index = header
        .iter()
        .position(|name| name == column)
        .ok_or("no such column")?;
    let records = reader.records().collect::<Result<Vec<_>, _>>()?;
    let target = line % records.len();
    let mut writer = csv::Writer::from_writer(Vec::new());
    writer.write_record(&header)?;
    for (number, record) in records.iter().enumerate() {
        let fields = record.iter().enumerate().map(|(i, field)| {
            if number == target && i == index {
                value
            } else {
                field
            }
        });
        writer.write_record(fields)?;
    }
    Ok(writer.into_inner()?)
}

/// [`read_anything`] within a second: no input may hang the reader, compare or report.
fn read_anything_quickly(bytes: &[u8]) -> Result<(), TestCaseError> {
    let owned = bytes.to_vec();
    match within(Duration::from_secs(1), move || read_anything(&owned)) {
        Some(answer) => answer,
        None => Err(TestCaseError::fail(format!(
            "took more than a second on {:?}",
            String::from_utf8_lossy(bytes)
        ))),
    }
}

/// Whatever the bytes, the reader answers rows or an error naming the file; where it
/// answers rows, comparing and reporting them works too.
fn read_anything(bytes: &[u8]) -> Result<(), TestCaseError> {
    let path = Path::new("fuzzed.csv");
    match results::parse_with_lines(path, bytes) {
        Err(error) => {
            let message = error.to_string();
            prop_assert!(message.starts_with("fuzzed.csv: "), "{}", message);
        }
        Ok(rows) => {
            for (line, row) in &rows {
                prop_assert!(*line >= 2);
                prop_assert_eq!(row.schema_version, results::SCHEMA_VERSION);
            }
            let rows: Vec<Row> = rows.into_iter().map(|(_, row)| row).collect();
            if rows.is_empty() {
                return Ok(());
            }
            let device = DeviceResults {
                path: path.to_owned(),
                kernel_files: Vec::new(),
                label: "fuzzed".to_owned(),
                setting: membench::suite::Setting::WGPU,
                rows,
            };
            let first = fixtures().map_err(|e| TestCaseError::fail(e.to_string()))?;
            let devices = [first[0].clone(), device];
            for format in [Format::Table, Format::Csv, Format::Markdown] {
                let text = compare::render(&devices, format);
                prop_assert!(text.is_ok());
                // Nothing read reaches a terminal as a control sequence.
                let text = text.unwrap_or_default();
                prop_assert!(
                    !text.chars().any(|c| c.is_control() && c != '\n'),
                    "{:?}",
                    text
                );
            }
            let built = report::build(&devices, &[]);
            prop_assert!(built.is_ok());
            let built = built.map_err(|e| TestCaseError::fail(e.to_string()))?;
            // Every file the report writes is a plain name inside its directory.
            for chart in &built.charts {
                prop_assert!(
                    chart
                        .file
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
                        && !chart.file.starts_with('.'),
                    "{}",
                    chart.file
                );
            }
            prop_assert!(!built.html.contains("<script"), "a script in the page");
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn mutated_fixture_never_panics(edits in prop::collection::vec(edit_strategy(), 1..8)) {
        let mut bytes = fixture_bytes().unwrap();
        for edit in &edits {
            apply(&mut bytes, edit);
        }
        read_anything_quickly(&bytes)?;
    }

    #[test]
    fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..600)) {
        read_anything_quickly(&bytes)?;
    }

    #[test]
    fn any_field_replaced_never_panics(
        line in 1usize..40,
        field in 0usize..33,
        value in "[ -~]{0,12}|NaN|inf|-0|1e309|1e300|9e307|1e-307|5e-324|18446744073709551616|",
    ) {
        let text = String::from_utf8(fixture_bytes().unwrap()).unwrap();
        let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
        let mut fields: Vec<String> = lines[line].split(',').map(str::to_owned).collect();
        fields[field] = value;
        lines[line] = fields.join(",");
        read_anything_quickly(lines.join("\n").as_bytes())?;
    }

    #[test]
    fn hostile_names_stay_out_of_paths_pages_and_terminals(
        line in 1usize..40,
        column in prop::sample::select(vec![
            "family", "variant", "param", "device", "vendor", "backend", "driver",
            "workgroup", "timer", "git_commit", "note",
        ]),
        value in hostile_name(),
    ) {
        read_anything_quickly(&with_field(line, column, &value).unwrap())?;
    }

    #[test]
    fn written_rows_read_back_equal(
        offset in any::<u64>(),
        note in "\\PC{0,24}",
        gbps in f64::MIN_POSITIVE..1e6,
        device in "[a-zA-Z0-9 ,\"()]{1,20}",
    ) {
        let row = Row {
            family: Family::Copy,
            variant: "offset".into(),
            params: membench::params!(Offset => offset),
            status: membench::results::Status::Ok,
            verified: true,
            bytes: 1,
            gbps_median: Some(gbps),
            device,
            note,
            sizing: Some(membench::suite::RunSizing::default()),
            schema_version: results::SCHEMA_VERSION,
            ..Row::default()
        };
        let dir = std::env::temp_dir().join(format!("membench-roundtrip-{}", std::process::id()));
        let path = dir.join("row.csv");
        results::write(&path, std::slice::from_ref(&row)).unwrap();
        let read = results::read(&path);
        std::fs::remove_dir_all(&dir).unwrap();
        prop_assert_eq!(read.unwrap(), vec![row]);
    }
}
