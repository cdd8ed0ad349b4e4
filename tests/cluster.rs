//! Many GPUs, as a cluster runs membench: one process per GPU writing through an `--out`
//! template, `fleet` over the files (a case slow once is unsteady, slow again the GPU is
//! sick; the committed fleet, one GPU's file twice and an unreadable file), and the
//! health profile against an expectation file, each with the exit status a scheduler
//! reads.

use std::error::Error;
use std::path::Path;
use std::process::{Command, ExitStatus};

use membench::results::{self, Row};

mod common;
use common::{ONE_CASE, no_adapter, outcome, scratch};

/// What a helper's failure is: the test that called it fails with it.
type Outcome<T> = Result<T, Box<dyn Error>>;

/// The binary with `args` in `dir`, on Vulkan: its status, stdout and stderr.
fn membench(dir: &Path, args: &[&str]) -> Outcome<(ExitStatus, String, String)> {
    Ok(outcome(
        Command::new(env!("CARGO_BIN_EXE_membench"))
            .args(args)
            .current_dir(dir)
            .env("WGPU_BACKEND", "vulkan")
            .env("MEMBENCH_HOST", "node-1"),
    )?)
}

/// `rows` as a GPU `factor` times as fast would have written them.
fn scaled(rows: &[Row], factor: f64) -> Vec<Row> {
    rows.iter().map(|row| row.scaled(factor)).collect()
}

#[test]
fn a_fleet_of_one_file_per_gpu_names_the_slow_one() {
    let dir = scratch("fleet").unwrap();
    let (status, _, stderr) = membench(
        &dir,
        &[
            "run",
            "--quick",
            "--build",
            "default",
            "--filter",
            ONE_CASE,
            "--out",
            "runs/{host}-{uuid}-{adapter}.csv",
        ],
    )
    .unwrap();
    if no_adapter(&stderr) {
        return;
    }
    assert!(status.success(), "{stderr}");
    let written = std::fs::read_dir(dir.join("runs"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect::<Vec<_>>();
    let rows = results::read(&written[0]).unwrap();
    assert!(rows.iter().all(|r| r.host == "node-1" && r.gpu_uuid == "-"));
    // lavapipe has no UUID: `{uuid}` is its device's name.
    let device = results::slug(&rows[0].device);
    assert_eq!(written, [dir.join(format!("runs/node-1-{device}-0.csv"))]);
    // Eight GPUs of one model, as eight files of one run's rows, none slow.
    let fleet = dir.join("fleet");
    std::fs::create_dir_all(&fleet).unwrap();
    for gpu in 0..8 {
        let rows: Vec<Row> = scaled(&rows, 1.0 + 0.001 * f64::from(gpu))
            .into_iter()
            .map(|row| Row {
                host: format!("node-{gpu}"),
                gpu_uuid: format!("GPU-0000000{gpu}-0000-0000-0000-000000000000"),
                pci_bus_id: format!("0000:0{gpu}:00.0"),
                ..row
            })
            .collect();
        results::write(&fleet.join(format!("gpu-{gpu}.csv")), &rows).unwrap();
    }
    let (status, stdout, stderr) = membench(&dir, &["fleet", "fleet"]).unwrap();
    assert!(status.success(), "{stdout}{stderr}");
    assert!(stdout.contains("healthy: no GPU named sick"), "{stdout}");
    // GPU 5's one case 8 % slower, once: unsteady, exit 4, with the command that
    // measures it again.
    let slow = fleet.join("gpu-5.csv");
    let rows = scaled(&results::read(&slow).unwrap(), 0.92);
    results::write(&slow, &rows).unwrap();
    let (status, stdout, stderr) = membench(&dir, &["fleet", "fleet"]).unwrap();
    assert_eq!(status.code(), Some(4), "{stdout}{stderr}");
    let again = "membench run --adapter GPU-00000005-0000-0000-0000-000000000000 --api wgpu \
                 --build default --quick --filter 'copy/peak/launch=vec4$' \
                 --out fleet/gpu-5-again.csv";
    assert!(stdout.contains(again), "{stdout}");
    // Measured again, and slow again: sick, named by host, UUID and bus, exit 3.
    let rows: Vec<Row> = rows
        .into_iter()
        .map(|row| Row {
            timestamp_utc: "2026-12-01T00:00:00Z".into(),
            ..row
        })
        .collect();
    results::write(&fleet.join("gpu-5-again.csv"), &rows).unwrap();
    let (status, stdout, stderr) = membench(&dir, &["fleet", "fleet", "--report", "page"]).unwrap();
    assert_eq!(status.code(), Some(3), "{stdout}{stderr}");
    for name in ["node-5", "GPU-00000005", "0000:05:00.0", "another run of"] {
        assert!(stdout.contains(name), "{name}: {stdout}");
    }
    assert!(dir.join("page/index.html").exists());
    let (status, stdout, _) = membench(&dir, &["fleet", "fleet", "--format", "jsonl"]).unwrap();
    assert_eq!(status.code(), Some(3));
    assert!(
        stdout
            .lines()
            .all(|l| serde_json::from_str::<serde_json::Value>(l).is_ok())
    );
    // A threshold beyond 100 % is a usage error.
    let (status, _, stderr) = membench(&dir, &["fleet", "fleet", "--threshold", "150"]).unwrap();
    assert_eq!(status.code(), Some(2), "{stderr}");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn the_gate_tells_a_sick_gpu_from_an_unsteady_case_and_an_incomplete_fleet() {
    let dir = scratch("gate").unwrap();
    let committed = Path::new(env!("CARGO_MANIFEST_DIR")).join("results/fleet");
    let fleet = |args: &[&str]| {
        let (status, stdout, stderr) = membench(&dir, &[&["fleet"][..], args].concat()).unwrap();
        (status.code(), stdout + &stderr)
    };
    let committed_text = committed.to_str().unwrap();
    // The committed five H100s: no GPU sick, two cases slow once each, exit 4.
    let (code, out) = fleet(&[committed_text]);
    assert_eq!(code, Some(4), "{out}");
    assert!(!out.contains("sick:"), "{out}");
    for filter in [
        "--filter 'copy/offset/offset=15$'",
        "--filter 'reduce/subgroup_add/n=268435456;wg=1024$'",
    ] {
        assert!(out.contains(filter), "{filter}: {out}");
    }
    // One GPU's file twice and another GPU: two GPUs, not judged, exit 5.
    let copies = dir.join("d");
    std::fs::create_dir_all(&copies).unwrap();
    for (from, to) in [
        ("vm-ea1619d6.csv", "c1.csv"),
        ("vm-ea1619d6.csv", "c2.csv"),
        ("vm-539de1f2.csv", "vm-539de1f2.csv"),
    ] {
        std::fs::copy(committed.join(from), copies.join(to)).unwrap();
    }
    let (code, out) = fleet(&["d"]);
    assert_eq!(code, Some(5), "{out}");
    assert!(!out.contains("no outlier among 2 GPUs"), "{out}");
    assert!(
        out.contains("not judged: 2 GPUs in groups of fewer than 3"),
        "{out}"
    );
    // A file that cannot be read fails an otherwise healthy gate, unless allowed.
    std::fs::write(dir.join("bad.csv"), "not,a,results\nfile,at,all\n").unwrap();
    let lenient = [committed_text, "bad.csv", "--threshold", "40"];
    let (code, out) = fleet(&lenient);
    assert_eq!(code, Some(5), "{out}");
    assert!(out.contains("1 file not read (exit 5)"), "{out}");
    let (code, out) = fleet(&[&lenient[..], &["--allow-skips"][..]].concat());
    assert_eq!(code, Some(0), "{out}");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn health_passes_a_healthy_gpu_and_names_a_case_below_its_expectation() {
    let dir = scratch("health").unwrap();
    let (status, _, stderr) = membench(
        &dir,
        &[
            "run",
            "--quick",
            "--profile",
            "health",
            "--out",
            "health.csv",
        ],
    )
    .unwrap();
    if no_adapter(&stderr) {
        return;
    }
    assert!(status.success(), "{stderr}");
    let rows = results::read(&dir.join("health.csv")).unwrap();
    assert!(
        rows.iter()
            .any(|r| r.id().to_string() == "copy/peak/launch=vec4")
    );
    assert!(
        rows.iter()
            .all(|r| r.setting() == membench::health::SETTING)
    );
    // Expectations this GPU meets (a tenth of what it did), then one it cannot.
    let cases: Vec<_> = rows.iter().map(Row::id).collect();
    let slow = scaled(&rows, 0.1);
    let expect = dir.join("expect.csv");
    let text = membench::health::render(&membench::health::derive("test", &slow, &cases));
    std::fs::write(&expect, text.unwrap()).unwrap();
    let check = |out: &str| {
        membench(
            &dir,
            &[
                "run",
                "--quick",
                "--profile",
                "health",
                "--expect",
                "expect.csv",
                "--out",
                out,
            ],
        )
        .unwrap()
    };
    let (status, _, stderr) = check("again.csv");
    assert!(status.success(), "{stderr}");
    assert!(stderr.contains("health: "), "{stderr}");
    let fast = scaled(&rows, 1000.0);
    let text = membench::health::render(&membench::health::derive("test", &fast, &cases));
    std::fs::write(&expect, text.unwrap()).unwrap();
    let (status, _, stderr) = check("third.csv");
    assert_eq!(status.code(), Some(3), "{stderr}");
    assert!(
        stderr.contains("below expectation: copy/peak/launch=vec4"),
        "{stderr}"
    );
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn health_blessed_on_this_gpu_is_admitted_by_its_check_and_judges_it() {
    let dir = scratch("bless").unwrap();
    let health = ["run", "--quick", "--profile", "health"];
    let bless = ["--out", "blessed.csv", "--bless", "mine.csv"];
    let (status, _, stderr) = membench(&dir, &[&health[..], &bless].concat()).unwrap();
    if no_adapter(&stderr) {
        return;
    }
    assert!(status.success(), "{stderr}");
    let rows = results::read(&dir.join("blessed.csv")).unwrap();
    let cases: Vec<_> = rows.iter().map(Row::id).collect();
    assert!(
        stderr.contains(&format!("membench: {} cases, ", cases.len()))
            && stderr.contains(&format!(
                "{} expectations blessed into mine.csv",
                cases.len()
            )),
        "{stderr}"
    );
    // The shipped files' margins, on every case the run measured, which it meets.
    let mine = membench::health::read(&dir.join("mine.csv")).unwrap();
    assert_eq!(
        mine.lines,
        membench::health::derive("blessed.csv", &rows, &cases)
    );
    assert!(mine.check(&rows).healthy());
    let check = |expect: &str| {
        let expect = ["--expect", expect, "--out", "checked.csv"];
        membench(&dir, &[&health[..], &expect].concat()).unwrap()
    };
    // Measured again, the file is admitted and every case judged. Whether a software
    // adapter on busy cores reaches 90 % of its medians again is chance (one re-check in
    // six did on a loaded 2-core machine): the verdicts are shown on copies of the file.
    let (status, _, stderr) = check("mine.csv");
    assert!(matches!(status.code(), Some(0 | 3)), "{stderr}");
    assert!(
        stderr.contains(&format!("health: {} cases", cases.len())),
        "{stderr}"
    );
    assert!(!stderr.contains("not measured"), "{stderr}");
    let copy = |name: &str, factor: f64| {
        let lines: Vec<_> = mine
            .lines
            .iter()
            .map(|line| membench::health::Expectation {
                min_gbps: line.min_gbps * factor,
                ..line.clone()
            })
            .collect();
        let text = membench::health::render(&lines).unwrap();
        std::fs::write(dir.join(name), text).unwrap();
    };
    copy("looser.csv", 0.1);
    let (status, _, stderr) = check("looser.csv");
    assert!(status.success() && stderr.contains("healthy"), "{stderr}");
    copy("stricter.csv", 1000.0);
    let (status, _, stderr) = check("stricter.csv");
    assert_eq!(status.code(), Some(3), "{stderr}");
    assert!(
        stderr.contains(&format!("below expectation: {}", mine.lines[0].case)),
        "{stderr}"
    );
    std::fs::remove_dir_all(dir).unwrap();
}
