//! The command line's answers to bad input: one clear line and a non-zero exit.

use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

mod common;
use common::{ONE_CASE, no_adapter, outcome, scratch};

/// Runs the binary on Vulkan; whether it succeeded, and its stderr.
fn membench(args: &[&str]) -> std::io::Result<(bool, String)> {
    let output = Command::new(env!("CARGO_BIN_EXE_membench"))
        .args(args)
        .env("WGPU_BACKEND", "vulkan")
        .output()?;
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    Ok((output.status.success(), stderr))
}

#[test]
fn unknown_flag_is_refused() {
    let (ok, stderr) = membench(&["run", "--fast"]).unwrap();
    assert!(!ok);
    assert!(stderr.contains("unexpected argument '--fast'"), "{stderr}");
}

#[test]
fn simulate_lists_every_preset_with_its_sources() {
    let dir = tempfile::tempdir().unwrap();
    let (status, stdout, stderr) =
        membench_in(dir.path(), &["simulate", "--device", "list"]).unwrap();
    assert!(status.success(), "{stderr}");
    let presets = membench::sim::device::presets();
    assert_eq!(stdout.lines().count(), presets.len(), "{stdout}");
    for (line, preset) in stdout.lines().zip(presets) {
        assert!(line.starts_with(preset.name), "{line}");
        assert!(line.ends_with(preset.sources), "{line}");
    }
    let (ok, stderr) = membench(&["simulate", "--device", "mi250"]).unwrap();
    assert!(!ok);
    assert!(
        stderr.contains("mi250") && stderr.contains("list"),
        "{stderr}"
    );
}

#[test]
fn too_few_samples_are_refused() {
    let (ok, stderr) = membench(&["run", "--samples", "3"]).unwrap();
    assert!(!ok);
    assert!(stderr.contains("--samples"), "{stderr}");
}

#[test]
fn builds_no_asked_api_has_are_refused() {
    let (ok, stderr) = membench(&["run", "--api", "wgpu", "--build", "rolled"]).unwrap();
    assert!(!ok);
    assert!(
        stderr.contains("no api of --api wgpu has a build of --build rolled"),
        "{stderr}"
    );
    let (ok, stderr) =
        membench(&["run", "--api", "cuda", "--build", "tax-free,unchecked"]).unwrap();
    assert!(!ok);
    assert!(stderr.contains("--build tax-free,unchecked"), "{stderr}");
    // The default builds hold one of CUDA's: `--api cuda` alone is no error.
    let (_, stderr) = membench(&["run", "--api", "cuda", "--filter", "copy/nonesuch"]).unwrap();
    assert!(!stderr.contains("no api of --api"), "{stderr}");
}

#[test]
fn unknown_filter_is_refused() {
    let (ok, stderr) = membench(&["list", "--filter", "copy/nonesuch"]).unwrap();
    assert!(!ok);
    assert!(
        stderr.contains("no experiment matches \"copy/nonesuch\""),
        "{stderr}"
    );
}

#[test]
fn list_names_every_experiment() {
    let output = Command::new(env!("CARGO_BIN_EXE_membench"))
        .arg("list")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    for experiment in membench::suite::REGISTRY {
        assert!(
            stdout.contains(&experiment.name()),
            "{} missing",
            experiment.name()
        );
    }
}

#[test]
fn out_of_range_adapter_index_is_refused() {
    let (ok, stderr) = membench(&["run", "--quick", "--adapter", "99"]).unwrap();
    assert!(!ok);
    assert!(
        stderr.contains("adapter \"99\" not found") || stderr.contains("no GPU adapter found"),
        "{stderr}"
    );
}

#[test]
fn missing_adapter_is_a_clear_error() {
    let output = Command::new(env!("CARGO_BIN_EXE_membench"))
        .args(["run", "--quick"])
        .env("WGPU_BACKEND", "metal")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    if cfg!(target_os = "linux") {
        assert!(!output.status.success());
        assert!(
            stderr.contains("no GPU adapter found for WGPU_BACKEND=metal"),
            "{stderr}"
        );
    }
}

#[test]
fn buffer_beyond_the_device_limit_is_refused() {
    let (ok, stderr) = membench(&["run", "--buffer-mib", "1000000"]).unwrap();
    assert!(!ok);
    assert!(
        stderr.contains("exceeds the device limit") || stderr.contains("no GPU adapter found"),
        "{stderr}"
    );
}

#[test]
fn malformed_results_file_stops_the_run_before_measuring() {
    let path = std::env::temp_dir().join(format!("membench-cli-{}.csv", std::process::id()));
    std::fs::write(&path, "family,variant\ncopy\n").unwrap();
    let (ok, stderr) = membench(&[
        "run",
        "--quick",
        "--filter",
        "copy/peak",
        "--out",
        path.to_str().unwrap(),
    ])
    .unwrap();
    let after = std::fs::read_to_string(&path).unwrap();
    std::fs::remove_file(&path).unwrap();
    assert!(!ok);
    assert_eq!(after, "family,variant\ncopy\n", "the file was touched");
    assert!(
        stderr.contains(path.to_str().unwrap()) || stderr.contains("no GPU adapter found"),
        "{stderr}"
    );
}

/// The binary in `dir`, on Vulkan.
fn command_in(dir: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_membench"));
    command.current_dir(dir).env("WGPU_BACKEND", "vulkan");
    command
}

/// Runs the binary on Vulkan in `dir`: its exit status, stdout and stderr.
fn membench_in(dir: &Path, args: &[&str]) -> std::io::Result<(ExitStatus, String, String)> {
    outcome(command_in(dir).args(args))
}

/// Runs the binary in `dir` on every backend (lavapipe's Vulkan and llvmpipe's GL
/// adapters, on a machine without a GPU): its exit status, stdout and stderr.
fn membench_everywhere_in(
    dir: &Path,
    args: &[&str],
) -> std::io::Result<(ExitStatus, String, String)> {
    outcome(
        Command::new(env!("CARGO_BIN_EXE_membench"))
            .args(args)
            .current_dir(dir)
            .env_remove("WGPU_BACKEND")
            .env_remove("WGPU_ADAPTER_NAME"),
    )
}

#[test]
fn a_quick_run_has_its_own_file_and_a_run_of_another_sizing_is_refused_it() {
    let dir = scratch("sizing").unwrap();
    let (status, _, stderr) = membench_in(&dir, &["run", "--quick", "--filter", ONE_CASE]).unwrap();
    if no_adapter(&stderr) {
        return;
    }
    assert!(status.success(), "{stderr}");
    let written: Vec<PathBuf> = std::fs::read_dir(dir.join("results"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    assert_eq!(written.len(), 1, "{written:?}");
    let quick_file = &written[0];
    assert!(
        quick_file.to_string_lossy().ends_with("-quick.csv"),
        "{quick_file:?}"
    );
    let before = std::fs::read(quick_file).unwrap();
    for other_sizing in [
        vec!["run", "--filter", ONE_CASE],
        vec!["run", "--quick", "--buffer-mib", "8", "--filter", ONE_CASE],
    ] {
        let mut args = other_sizing.clone();
        args.extend(["--out", quick_file.to_str().unwrap()]);
        let (status, _, stderr) = membench_in(&dir, &args).unwrap();
        assert!(!status.success(), "{args:?}: {stderr}");
        assert!(
            stderr.contains("line 2: rows of sizing `quick` where this run's is")
                && stderr.contains("choose another --out"),
            "{stderr}"
        );
        let ours = stderr.lines().filter(|l| l.starts_with("membench:"));
        assert_eq!(ours.count(), 1, "one line: {stderr}");
    }
    assert_eq!(
        std::fs::read(quick_file).unwrap(),
        before,
        "the file was touched"
    );
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn concurrent_without_every_adapter_is_refused() {
    for args in [
        vec!["run", "--quick", "--concurrent"],
        vec!["run", "--quick", "--adapter", "0", "--concurrent"],
    ] {
        let (ok, stderr) = membench(&args).unwrap();
        assert!(!ok, "{args:?}");
        assert_eq!(
            stderr.trim_end(),
            "membench: --concurrent measures every adapter at once: it needs --adapter all",
            "{args:?}"
        );
    }
}

#[test]
fn a_concurrent_run_writes_a_file_per_adapter_that_solo_runs_may_not_share() {
    let dir = scratch("concurrent").unwrap();
    // One build keeps it quick.
    let (status, _, stderr) = membench_everywhere_in(
        &dir,
        &[
            "run",
            "--adapter",
            "all",
            "--concurrent",
            "--quick",
            "--build",
            "default",
            "--filter",
            ONE_CASE,
        ],
    )
    .unwrap();
    if no_adapter(&stderr) {
        return;
    }
    if stderr.contains("--concurrent needs two adapters or more") {
        eprintln!("one adapter: nothing runs beside it");
        return;
    }
    assert!(status.success(), "{stderr}");
    // Each adapter's first line names its results file; the adapters' threads print
    // in any order.
    let mut indexed: Vec<(usize, PathBuf)> = stderr
        .lines()
        .filter_map(|line| line.strip_prefix("membench: adapter "))
        .filter_map(|line| {
            let (index, rest) = line.split_once(": ")?;
            let (_, path) = rest.split_once(", results to ")?;
            Some((index.parse().ok()?, dir.join(path)))
        })
        .collect();
    indexed.sort();
    let files: Vec<PathBuf> = indexed.into_iter().map(|(_, path)| path).collect();
    let adapters = files.len();
    assert!(adapters >= 2, "{stderr}");
    let marker = format!("concurrent={adapters}");
    for (index, file) in files.iter().enumerate() {
        assert!(
            file.to_string_lossy()
                .ends_with(&format!("-quick-concurrent-{adapters}.csv")),
            "{file:?}"
        );
        let rows = membench::results::read(file).unwrap();
        assert!(!rows.is_empty(), "{file:?}");
        for row in &rows {
            let sizing = row.sizing.map(|s| s.to_string()).unwrap_or_default();
            assert_eq!(sizing, format!("quick;{marker}"), "{file:?}");
            assert_eq!(row.status, membench::results::Status::Ok, "{file:?}");
        }
        // Its progress lines say which adapter they are of.
        assert!(
            stderr.contains(&format!("adapter {index}: [")),
            "{index}: {stderr}"
        );
    }
    let written = std::fs::read_dir(dir.join("results")).unwrap().count();
    assert_eq!(written, adapters, "{stderr}");
    // A run alone on the first adapter may not add its rows to the concurrent file.
    let first = files[0].to_str().unwrap();
    let before = std::fs::read(first).unwrap();
    let (status, _, stderr) = membench_everywhere_in(
        &dir,
        &[
            "run",
            "--adapter",
            "0",
            "--quick",
            "--filter",
            ONE_CASE,
            "--out",
            first,
        ],
    )
    .unwrap();
    assert!(!status.success(), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "line 2: rows of sizing `quick;{marker}` where this run's is `quick`"
        )),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read(first).unwrap(),
        before,
        "the file was touched"
    );
    std::fs::remove_dir_all(dir).unwrap();
}

/// A GL adapter whose context is OpenGL 3.3 (as NVIDIA's EGL gives wgpu) cannot run
/// compute shaders: `--adapter all` skips it with the reason and measures the others.
/// Mesa is made to give 3.3 and GLSL 3.30 as NVIDIA does.
#[test]
fn an_adapter_without_compute_is_skipped_with_its_reason() {
    let dir = scratch("no-compute").unwrap();
    let (status, _, stderr) = outcome(
        Command::new(env!("CARGO_BIN_EXE_membench"))
            .args(["run", "--adapter", "all", "--quick", "--build", "default"])
            .args(["--filter", ONE_CASE])
            .current_dir(&dir)
            .env_remove("WGPU_BACKEND")
            .env_remove("WGPU_ADAPTER_NAME")
            .env("MESA_GL_VERSION_OVERRIDE", "3.3")
            .env("MESA_GLSL_VERSION_OVERRIDE", "330"),
    )
    .unwrap();
    if no_adapter(&stderr) {
        return;
    }
    if !stderr.contains("(Gl, ") {
        eprintln!("no GL adapter: nothing to skip");
        return;
    }
    assert!(status.success(), "{stderr}");
    let skipped: Vec<&str> = stderr
        .lines()
        .filter(|line| line.contains(" skipped: "))
        .collect();
    assert_eq!(skipped.len(), 1, "{stderr}");
    assert!(
        skipped[0].contains("(Gl, ")
            && skipped[0].ends_with(
                "runs no compute shaders: its OpenGL context is version 3.3 and compute \
                 shaders need 4.3 (wgpu asks EGL for 3.3, which this driver gives as it is)"
            ),
        "{stderr}"
    );
    // The Vulkan adapter was measured; the GL one wrote nothing.
    let files: Vec<String> = std::fs::read_dir(dir.join("results"))
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    assert!(files[0].ends_with("-vulkan-quick.csv"), "{files:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn only_regular_files_are_results() {
    let dir = scratch("special").unwrap();
    let fifo = dir.join("fifo.csv");
    let made = Command::new("mkfifo").arg(&fifo).status();
    let mut outs = vec!["/dev/full", "/dev/zero", "/dev/stdout"];
    if made.is_ok_and(|status| status.success()) {
        outs.push(fifo.to_str().unwrap());
    }
    for out in outs {
        let (status, _, stderr) = membench_in(
            &dir,
            &["run", "--quick", "--filter", ONE_CASE, "--out", out],
        )
        .unwrap();
        if no_adapter(&stderr) {
            return;
        }
        assert!(!status.success(), "{out}");
        assert!(stderr.contains("not a regular file"), "{out}: {stderr}");
    }
    for input in ["/dev/zero", fifo.to_str().unwrap()] {
        let (status, _, stderr) = membench_in(&dir, &["compare", input, input]).unwrap();
        assert!(!status.success(), "{input}");
        assert!(stderr.contains("not a regular file"), "{input}: {stderr}");
    }
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn out_dash_prints_the_rows_on_stdout_in_the_chosen_format() {
    let dir = scratch("stdout").unwrap();
    let run = |format: &str| {
        membench_in(
            &dir,
            &[
                "run", "--quick", "--filter", ONE_CASE, "--out", "-", "--format", format,
            ],
        )
        .unwrap()
    };
    let (status, stdout, stderr) = run("csv");
    if no_adapter(&stderr) {
        return;
    }
    assert!(status.success(), "{stderr}");
    let rows = membench::results::parse(Path::new("-"), stdout.as_bytes()).unwrap();
    assert!(!rows.is_empty() && rows.iter().all(|row| row.variant == "peak"));
    assert!(
        stderr.contains(" failed, in "),
        "the summary goes to stderr: {stderr}"
    );
    let (status, stdout, stderr) = run("json");
    assert!(status.success(), "{stderr}");
    let json: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(json[0]["family"], "copy", "{stdout}");
    let (status, stdout, stderr) = run("markdown");
    assert!(status.success(), "{stderr}");
    assert!(
        stdout.starts_with("| family | variant | param |"),
        "{stdout}"
    );
    assert!(!dir.join("results").exists(), "nothing is written");
    let (status, _, stderr) = membench_in(
        &dir,
        &["run", "--quick", "--format", "json", "--out", "x.csv"],
    )
    .unwrap();
    assert!(!status.success());
    assert!(
        stderr.contains("--format chooses what `--out -` prints"),
        "{stderr}"
    );
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn an_empty_filter_or_adapter_is_refused() {
    let (ok, stderr) = membench(&["list", "--filter", ""]).unwrap();
    assert!(!ok);
    assert!(
        stderr.contains("an empty filter would match every case"),
        "{stderr}"
    );
    let (ok, stderr) = membench(&["run", "--quick", "--adapter", ""]).unwrap();
    assert!(!ok);
    assert!(
        stderr.contains("adapter \"\" does not name one adapter") || no_adapter(&stderr),
        "{stderr}"
    );
}

#[test]
fn an_interrupted_run_saves_its_predictions_and_prints_the_summary() {
    let dir = scratch("interrupt").unwrap();
    let out = dir.join("run.csv");
    let mut child = Command::new(env!("CARGO_BIN_EXE_membench"))
        .args(["run", "--quick", "--filter", "copy/offset", "--out"])
        .arg(&out)
        .env("WGPU_BACKEND", "vulkan")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Rows are saved every two seconds: interrupt once a few are.
    let deadline = Instant::now() + Duration::from_secs(300);
    loop {
        let saved = std::fs::read_to_string(&out).map_or(0, |text| text.lines().count());
        if saved > 3 {
            break;
        }
        if let Some(status) = child.try_wait().unwrap() {
            let mut stderr = String::new();
            child
                .stderr
                .take()
                .unwrap()
                .read_to_string(&mut stderr)
                .unwrap();
            assert!(no_adapter(&stderr), "{status}: {stderr}");
            return;
        }
        assert!(Instant::now() < deadline, "no row saved");
        std::thread::sleep(Duration::from_millis(50));
    }
    let interrupted = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(interrupted.success());
    let output = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(130), "{stderr}");
    assert!(
        stdout.starts_with("family") && stdout.contains("(interrupted)"),
        "{stdout}"
    );
    let rows = membench::results::read(&out).unwrap();
    let registry_cases = 2 * 33;
    assert!(rows.len() < registry_cases, "{} rows", rows.len());
    for row in rows.iter().filter(|row| row.gbps_median.is_some()) {
        assert!(
            row.sim_gbps.is_some(),
            "{}/{}: no prediction",
            row.variant,
            row.params
        );
    }
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn compare_against_a_baseline_fails_on_a_slowed_case() {
    let dir = scratch("baseline").unwrap();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/gpu-a.csv");
    let baseline = fixture.to_str().unwrap();
    let text = std::fs::read_to_string(&fixture).unwrap();
    // offset=1 at 800 GB/s instead of 900 (its median time and maximum to match): 11 %
    // slower, far beyond its 0.2 % cv.
    let measured = ",298.26161777777776,295.27900159999996,301.24423395555556,0.002,900.0,909.0,";
    assert!(text.contains(measured));
    let slowed = dir.join("slowed.csv");
    let slowed_text = text.replacen(
        measured,
        ",335.54432,295.27900159999996,340.0,0.002,800.0,909.0,",
        1,
    );
    std::fs::write(&slowed, slowed_text).unwrap();
    let slowed = slowed.to_str().unwrap();

    let (status, stdout, stderr) = membench_in(
        &dir,
        &[
            "compare",
            "--baseline",
            baseline,
            slowed,
            "--threshold",
            "5",
        ],
    )
    .unwrap();
    assert_eq!(status.code(), Some(1), "{stderr}");
    let line = stdout.lines().find(|l| l.contains("offset=1 ")).unwrap();
    assert!(
        line.contains("-11.1") && line.contains("slower, beyond 5.0 %"),
        "{line}"
    );
    assert!(stdout.contains("\n1 of "), "{stdout}");
    let unchanged = stdout.lines().filter(|l| l.contains(" same")).count();
    assert!(unchanged > 10, "{stdout}");

    let (status, stdout, _) = membench_in(
        &dir,
        &[
            "compare",
            "--baseline",
            baseline,
            slowed,
            "--threshold",
            "20",
        ],
    )
    .unwrap();
    assert!(status.success(), "{stdout}");
    let line = stdout.lines().find(|l| l.contains("offset=1 ")).unwrap();
    assert!(line.trim_end().ends_with("slower"), "{line}");

    let (status, stdout, _) =
        membench_in(&dir, &["compare", "--baseline", baseline, baseline]).unwrap();
    assert!(status.success(), "{stdout}");
    let judged = stdout.lines().filter(|l| l.starts_with("copy ")).count();
    let same = stdout
        .lines()
        .filter(|l| l.starts_with("copy ") && l.trim_end().ends_with(" same"))
        .count();
    assert!(judged > 10 && same == judged, "{stdout}");
    assert!(stdout.contains("\n0 of "), "{stdout}");
    std::fs::remove_dir_all(dir).unwrap();
}

/// A results file of quick copy cases whose measured times are `k` × the h100 preset's
/// own predicted time (k = 1 for the offsets, 2 for the strides): measured ÷ predicted
/// bandwidth is then exactly 1 and 0.5, so every statistic is known.
fn known_answers(path: &Path) -> membench::Result<()> {
    use membench::results::{self, Row, SCHEMA_VERSION, Status};
    use membench::suite::RunSizing;
    let filters = ["copy/offset/offset=", "copy/stride/stride="].map(str::to_owned);
    let cases: Vec<_> = membench::suite::select(&membench::suite::Sizing::nominal(true), &filters)?
        .into_iter()
        .filter(|(_, case)| {
            let text = case.params.to_string();
            ["offset=0", "offset=1", "offset=2", "offset=4"].contains(&text.as_str())
                || ["stride=1", "stride=2", "stride=4", "stride=8"].contains(&text.as_str())
        })
        .collect();
    assert_eq!(cases.len(), 8);
    let internal = |what: &str| membench::Error::Internal(what.to_owned());
    let preset = membench::sim::device::preset("h100").ok_or_else(|| internal("no h100"))?;
    let predictions = membench::run::predict_cases(&cases, preset, &|| {});
    let rows: Vec<Row> = cases
        .iter()
        .zip(predictions)
        .map(|((experiment, case), prediction)| {
            let predicted = prediction
                .ok_or_else(|| internal("not simulated"))?
                .map_err(|e| internal(&e))?;
            let k = if experiment.variant == "offset" {
                1.0
            } else {
                2.0
            };
            let time_us = k * predicted.time_s * 1e6;
            let gbps = case.bytes as f64 / (time_us * 1e3);
            Ok(Row {
                status: Status::Ok,
                verified: true,
                timer: "gpu".into(),
                samples: 10,
                time_us_median: Some(time_us),
                time_us_min: Some(time_us),
                time_us_max: Some(time_us),
                gbps_median: Some(gbps),
                gbps_best: Some(gbps),
                device: "Known GPU".into(),
                backend: "vulkan".into(),
                sizing: Some(RunSizing {
                    quick: true,
                    ..RunSizing::default()
                }),
                schema_version: SCHEMA_VERSION,
                ..membench::run::case_row(experiment, case)
            })
        })
        .collect::<membench::Result<_>>()?;
    results::write(path, &rows)
}

#[test]
fn simulate_validate_reports_known_answers() {
    let dir = scratch("validate").unwrap();
    let csv = dir.join("known-gpu-vulkan-quick.csv");
    known_answers(&csv).unwrap();
    let path = csv.to_str().unwrap();
    let (status, stdout, stderr) = membench_in(
        &dir,
        &[
            "simulate",
            "--validate",
            path,
            "--device",
            "h100",
            "--no-calibrate",
            "--verbose",
        ],
    )
    .unwrap();
    assert!(status.success(), "{stderr}");
    // The words of the line whose first words are those of `start`.
    let line = |start: &str| {
        let start: Vec<&str> = start.split_whitespace().collect();
        stdout
            .lines()
            .map(|l| l.split_whitespace().collect::<Vec<_>>())
            .find(|words| words.starts_with(&start))
            .unwrap_or_else(|| panic!("no line {start:?} in\n{stdout}"))
    };
    // n, MAPE %, median APE %, gmean, within 10 %, within 25 %: errors 0 ×4 and 0.5 ×4.
    assert_eq!(
        line("held-out     all")[2..],
        ["8", "25.0", "25.0", "0.707", "50", "50"],
        "{stdout}"
    );
    assert_eq!(
        line("held-out     copy")[2..],
        ["8", "25.0", "25.0", "0.707", "50", "50"]
    );
    assert!(
        !stdout.lines().any(|l| l.starts_with("calibration")),
        "{stdout}"
    );
    // Measured ∝ predicted within each sweep: the order agrees exactly.
    assert_eq!(line("sweep   copy/stride over stride")[4..], ["4", "1.00"]);
    assert!(
        stdout.contains("the preset alone (not calibrated)"),
        "{stdout}"
    );
    // --verbose: the row, its role, its ratio and its bound.
    let row = line("copy/stride/stride=2");
    assert_eq!((row[1], row[4]), ("held-out", "0.500"), "{row:?}");
    assert!(
        row[5].parse::<membench::sim::model::Bound>().is_ok(),
        "{row:?}"
    );
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn simulate_validate_of_a_bad_file_is_one_line_naming_it() {
    let dir = scratch("validate-bad").unwrap();
    let bad = dir.join("bad.csv");
    std::fs::write(&bad, "family,variant\ncopy,offset\n").unwrap();
    for path in [bad.to_str().unwrap(), "/nonexistent/gpu.csv"] {
        let (status, stdout, stderr) =
            membench_in(&dir, &["simulate", "--validate", path]).unwrap();
        assert!(!status.success());
        assert!(stdout.is_empty(), "{stdout}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(stderr.starts_with(&format!("membench: {path}")), "{stderr}");
    }
    std::fs::remove_dir_all(dir).unwrap();
}

/// Whether `text` holds a character a terminal would act on, line breaks aside.
fn acts_on_a_terminal(text: &str) -> bool {
    text.chars()
        .any(|c| c != '\n' && membench::text::is_unsafe(c))
}

#[test]
fn membench_host_loses_a_trailing_line_break_and_a_control_character_is_refused() {
    let dir = scratch("host").unwrap();
    let run = |host: &str, out: &str| {
        let args = ["run", "--quick", "--filter", ONE_CASE, "--out", out];
        outcome(command_in(&dir).args(args).env("MEMBENCH_HOST", host)).unwrap()
    };
    // A ConfigMap's value, with its line break.
    let (status, _, stderr) = run("node-1\n", "{host}.csv");
    if no_adapter(&stderr) {
        return;
    }
    assert!(status.success(), "{stderr}");
    let rows = membench::results::read(&dir.join("node-1.csv")).unwrap();
    assert!(rows.iter().all(|row| row.host == "node-1"), "{rows:?}");
    // Its two builds side by side: compare reads what the run wrote.
    let (status, _, stderr) = membench_in(&dir, &["compare", "node-1.csv"]).unwrap();
    assert!(status.success(), "{stderr}");
    for host in [
        "node\u{1b}[31m-1",
        "node-1\nhealth: 1 cases against their expectation, healthy",
        "node-\u{202e}1",
    ] {
        let (status, _, stderr) = run(host, "refused.csv");
        assert_eq!(status.code(), Some(1), "{host:?}: {stderr}");
        assert!(
            stderr.starts_with("membench: MEMBENCH_HOST: ") && stderr.lines().count() == 1,
            "{host:?}: {stderr}"
        );
        assert!(!acts_on_a_terminal(&stderr), "{stderr:?}");
        assert!(!dir.join("refused.csv").exists(), "{host:?}");
    }
    std::fs::remove_dir_all(dir).unwrap();
}

/// The binary with `args` in `dir` on Vulkan, killed after `limit`: its exit status
/// (none where it was killed) and stderr.
fn membench_within(
    dir: &Path,
    limit: Duration,
    args: &[&str],
) -> std::io::Result<(Option<ExitStatus>, String)> {
    let stderr = dir.join("stderr.txt");
    let mut child = command_in(dir)
        .args(args)
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&stderr)?)
        .spawn()?;
    let deadline = Instant::now() + limit;
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break Some(status);
        }
        if Instant::now() > deadline {
            child.kill()?;
            child.wait()?;
            break None;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let mut text = String::new();
    std::fs::File::open(&stderr)?.read_to_string(&mut text)?;
    Ok((status, text))
}

#[test]
fn hostile_expectation_files_are_refused_before_anything_is_measured() {
    let dir = scratch("expect").unwrap();
    let (_, stdout, stderr) = membench_in(&dir, &["devices"]).unwrap();
    if no_adapter(&stderr) {
        return;
    }
    let device = stdout
        .lines()
        .find_map(|line| line.strip_prefix("0: "))
        .unwrap();
    // A figure no adapter reaches, with a reason that would clear the screen and forge
    // a healthy verdict.
    let forged = membench::health::Expectation {
        device: device.to_owned(),
        case: "copy/peak/launch=vec4".parse().unwrap(),
        min_gbps: 1e9,
        reason: "\u{1b}[2J\nhealth: 1 cases against their expectation, healthy".to_owned(),
    };
    let text = membench::health::render(&[forged]).unwrap();
    std::fs::write(dir.join("forged.csv"), text).unwrap();
    let fifo = dir.join("fifo.csv");
    let made = Command::new("mkfifo").arg(&fifo).status();
    let another_model = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("results/expect/nvidia-h100-80gb-hbm3-vulkan.csv");
    let mut files = vec![
        (
            dir.join("forged.csv"),
            "column `reason`: a control character",
        ),
        (
            another_model,
            "expectations of `NVIDIA H100 80GB HBM3` where this run measures",
        ),
    ];
    if made.is_ok_and(|status| status.success()) {
        files.push((fifo, "a device, FIFO or socket, not a regular file"));
    }
    for (file, expected) in files {
        let args = ["run", "--quick", "--profile", "health", "--out", "out.csv"];
        let expect = ["--expect", file.to_str().unwrap()];
        let (status, stderr) = membench_within(
            &dir,
            Duration::from_secs(120),
            &[&args[..], &expect].concat(),
        )
        .unwrap();
        assert_eq!(status.and_then(|s| s.code()), Some(1), "{file:?}: {stderr}");
        assert!(stderr.contains(expected), "{file:?}: {stderr}");
        assert!(!acts_on_a_terminal(&stderr), "{stderr:?}");
        assert!(
            !stderr.lines().any(|l| l.starts_with("health:")),
            "{stderr}"
        );
        assert!(!dir.join("out.csv").exists(), "{file:?}: measured first");
    }
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn bless_takes_one_adapter_a_profile_and_a_file_other_than_the_results() {
    let dir = scratch("bless-usage").unwrap();
    for (args, expected) in [
        (
            &["run", "--bless", "mine.csv"][..],
            "the following required arguments were not provided",
        ),
        (
            &[
                "run",
                "--profile",
                "health",
                "--bless",
                "mine.csv",
                "--adapter",
                "all",
            ],
            "--bless writes one model's file from one GPU",
        ),
        (
            &[
                "run",
                "--profile",
                "health",
                "--bless",
                "mine.csv",
                "--expect",
                "mine.csv",
            ],
            "cannot be used with",
        ),
        (
            &[
                "run",
                "--quick",
                "--profile",
                "health",
                "--bless",
                "./mine.csv",
                "--out",
                "mine.csv",
            ],
            "--bless names the results file",
        ),
    ] {
        let (status, _, stderr) = membench_in(&dir, args).unwrap();
        if no_adapter(&stderr) {
            continue;
        }
        assert_eq!(status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
    }
    assert!(!dir.join("mine.csv").exists());
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn the_readme_leaves_the_health_profiles_count_to_the_run() {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    let row = readme
        .lines()
        .find(|line| line.contains("--profile health"))
        .unwrap();
    // The count depends on the device's sizing (`--quick` has fewer): the run's first
    // line says it, and a number here drifts from both.
    let numbers = [
        "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
        "twelve",
    ];
    let words: Vec<&str> = row.split_whitespace().collect();
    let counted = words.windows(2).any(|pair| {
        pair[1].starts_with("case")
            && (pair[0].parse::<u32>().is_ok()
                || numbers.contains(&pair[0].to_lowercase().as_str()))
    });
    assert!(!counted, "{row}");
}
