//! Nothing lost, nothing written outside `--out`: concurrent runs into one file, report
//! directories, names from files, links and permissions, signals, broken pipes and
//! full disks, each tried with the binary as a user would.

use std::error::Error;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

mod common;
use common::{no_adapter, outcome, scratch};

/// What a helper's failure is: the test that called it fails with it.
type Outcome<T> = Result<T, Box<dyn Error>>;

/// The binary in `dir`, on Vulkan.
fn membench(dir: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_membench"));
    command.current_dir(dir).env("WGPU_BACKEND", "vulkan");
    command
}

/// Every path under `dir`, sorted, relative to it.
fn tree(dir: &Path) -> Outcome<Vec<String>> {
    let mut paths = Vec::new();
    let mut pending = vec![dir.to_owned()];
    while let Some(next) = pending.pop() {
        for entry in std::fs::read_dir(&next)? {
            let path = entry?.path();
            if path.is_dir() && !path.is_symlink() {
                pending.push(path.clone());
            }
            paths.push(path.strip_prefix(dir)?.display().to_string());
        }
    }
    paths.sort();
    Ok(paths)
}

/// The temporary files of writes left under `dir`.
fn temporaries(dir: &Path) -> Outcome<Vec<String>> {
    Ok(tree(dir)?
        .into_iter()
        .filter(|p| p.ends_with(".tmp"))
        .collect())
}

/// Quick single cases: seconds each on lavapipe.
const CASES: [&str; 4] = [
    "copy/peak/launch=vec4$",
    "copy/peak/launch=gridstride$",
    "copy/offset/offset=0$",
    "copy/offset/offset=1$",
];

#[test]
fn concurrent_runs_into_one_file_keep_every_runs_rows() {
    let dir = scratch("concurrent").unwrap();
    let out = dir.join("shared.csv");
    for attempt in 0..3 {
        let _ = std::fs::remove_file(&out);
        let children: Vec<_> = CASES
            .iter()
            .map(|case| {
                membench(&dir)
                    .args(["run", "--quick", "--build", "default", "--filter", case])
                    .arg("--out")
                    .arg(&out)
                    .stdout(Stdio::null())
                    .stderr(Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        for child in children {
            let output = child.wait_with_output().unwrap();
            let stderr = String::from_utf8_lossy(&output.stderr);
            if no_adapter(&stderr) {
                return;
            }
            assert!(output.status.success(), "attempt {attempt}: {stderr}");
        }
        let rows = membench::results::read(&out).unwrap();
        let ids: Vec<String> = rows.iter().map(|r| r.id().to_string()).collect();
        assert_eq!(rows.len(), CASES.len(), "attempt {attempt}: {ids:?}");
        assert!(
            temporaries(&dir).unwrap().is_empty(),
            "{:?}",
            tree(&dir).unwrap()
        );
    }
    std::fs::remove_dir_all(dir).unwrap();
}

/// A report of the test fixtures into `out`, without the simulator.
fn report_into(out: &Path) -> Outcome<(ExitStatus, String, String)> {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/gpu-a.csv");
    Ok(outcome(
        Command::new(env!("CARGO_BIN_EXE_membench"))
            .args(["report", "--no-simulator", "--out"])
            .arg(out)
            .arg(fixture),
    )?)
}

#[test]
fn a_report_keeps_what_it_did_not_write_and_drops_only_its_own_old_files() {
    let dir = scratch("report").unwrap();
    let out = dir.join("out");
    std::fs::create_dir_all(out.join("keep")).unwrap();
    std::fs::write(out.join("keep/f"), "x").unwrap();
    std::fs::write(out.join("notes.txt"), "mine").unwrap();
    std::fs::write(out.join("mine.svg"), "<svg/>").unwrap();
    let (status, _, stderr) = report_into(&out).unwrap();
    assert!(status.success(), "{stderr}");
    assert_eq!(std::fs::read_to_string(out.join("keep/f")).unwrap(), "x");
    assert_eq!(
        std::fs::read_to_string(out.join("notes.txt")).unwrap(),
        "mine"
    );
    assert!(out.join("mine.svg").exists());
    let manifest = std::fs::read_to_string(out.join(membench::report::MANIFEST)).unwrap();
    assert!(listed(&manifest).contains(&"index.html"), "{manifest}");
    assert!(!manifest.contains("mine.svg") && !manifest.contains("notes"));
    // A chart the report wrote, renamed as if an earlier report had drawn it under a
    // name this one no longer writes: it is removed, the user's files are not.
    let chart = manifest
        .lines()
        .find_map(|l| {
            l.split_once("  ")
                .filter(|(_, name)| name.ends_with(".svg"))
        })
        .map(|(digest, name)| (digest.to_owned(), name.to_owned()))
        .unwrap();
    std::fs::copy(out.join(&chart.1), out.join("old-chart.svg")).unwrap();
    std::fs::write(
        out.join(membench::report::MANIFEST),
        format!(
            "{manifest}{}  old-chart.svg\n{}  ../outside.svg\n",
            chart.0, chart.0
        ),
    )
    .unwrap();
    std::fs::copy(out.join(&chart.1), dir.join("outside.svg")).unwrap();
    let (status, _, stderr) = report_into(&out).unwrap();
    assert!(status.success(), "{stderr}");
    assert!(!out.join("old-chart.svg").exists());
    assert!(
        dir.join("outside.svg").exists(),
        "a listed path outside is not removed"
    );
    assert!(out.join("keep/f").exists() && out.join("mine.svg").exists());
    assert!(
        temporaries(&dir).unwrap().is_empty(),
        "{:?}",
        tree(&dir).unwrap()
    );
    std::fs::remove_dir_all(dir).unwrap();
}

/// A user's own file that happens to have the manifest's name, listing the user's
/// files (or a manifest copied from another report, whose files these are not): the
/// report removes none of them.
#[test]
fn a_manifest_membench_did_not_write_removes_nothing() {
    let dir = scratch("planted-manifest").unwrap();
    let out = dir.join("out");
    std::fs::create_dir_all(&out).unwrap();
    let mine = ["notes.txt", "copy-offset-old.svg", "index.htm"];
    for name in mine {
        std::fs::write(out.join(name), format!("{name}: mine")).unwrap();
    }
    std::fs::write(
        out.join(membench::report::MANIFEST),
        format!("{}\n", mine.join("\n")),
    )
    .unwrap();
    let (status, _, stderr) = report_into(&out).unwrap();
    assert!(status.success(), "{stderr}");
    let kept = |name: &str| std::fs::read_to_string(out.join(name)).ok();
    for name in mine {
        assert_eq!(kept(name), Some(format!("{name}: mine")));
    }
    // Then a manifest as membench writes them, of another directory's files that had
    // the same names.
    let manifest = std::fs::read_to_string(out.join(membench::report::MANIFEST)).unwrap();
    let header = manifest.lines().next().unwrap();
    let digest = manifest.lines().nth(1).unwrap().split_once("  ").unwrap().0;
    let listed: String = mine
        .iter()
        .map(|name| format!("{digest}  {name}\n"))
        .collect();
    std::fs::write(
        out.join(membench::report::MANIFEST),
        format!("{header}\n{listed}"),
    )
    .unwrap();
    let (status, _, stderr) = report_into(&out).unwrap();
    assert!(status.success(), "{stderr}");
    for name in mine {
        assert_eq!(kept(name), Some(format!("{name}: mine")));
    }
    std::fs::remove_dir_all(dir).unwrap();
}

/// The files a report's manifest lists: its lines after the header, a digest and a
/// name each.
fn listed(manifest: &str) -> Vec<&str> {
    manifest
        .lines()
        .skip(1)
        .filter_map(|line| line.split_once("  ").map(|(_, name)| name))
        .collect()
}

/// Four reports at once into one directory, four times: each finishes, and the
/// manifest lists only files that are there (a report that opened the manifest just
/// after another renamed a new one over it once took that one's hidden directory for
/// abandoned, and removed it under it).
#[test]
fn reports_into_one_directory_all_finish_whole() {
    let dir = scratch("reports").unwrap();
    let out = dir.join("out");
    for _ in 0..4 {
        let children: Vec<_> = (0..4)
            .map(|_| {
                let fixture =
                    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/gpu-a.csv");
                Command::new(env!("CARGO_BIN_EXE_membench"))
                    .args(["report", "--no-simulator", "--out"])
                    .arg(&out)
                    .arg(fixture)
                    .stderr(Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        for child in children {
            let output = child.wait_with_output().unwrap();
            assert!(output.status.success(), "{:?}", output);
        }
        let manifest = std::fs::read_to_string(out.join(membench::report::MANIFEST)).unwrap();
        for name in listed(&manifest) {
            assert!(out.join(name).exists(), "{name} listed, missing");
        }
        assert!(
            temporaries(&dir).unwrap().is_empty(),
            "{:?}",
            tree(&dir).unwrap()
        );
    }
    std::fs::remove_dir_all(dir).unwrap();
}

/// Reports killed outright (`kill -9`) at moments spread over their writing: none
/// leaves a chart the manifest does not list, and the next report clears what they
/// left half done.
#[test]
fn a_killed_report_leaves_no_chart_the_manifest_does_not_list() {
    let dir = scratch("killed-reports").unwrap();
    let out = dir.join("out");
    let (status, _, stderr) = report_into(&out).unwrap();
    assert!(status.success(), "{stderr}");
    let started = Instant::now();
    let (status, _, _) = report_into(&out).unwrap();
    assert!(status.success());
    let takes = started.elapsed();
    for step in 0..12 {
        let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/gpu-b.csv");
        let mut child = Command::new(env!("CARGO_BIN_EXE_membench"))
            .args(["report", "--no-simulator", "--out"])
            .arg(&out)
            .arg(fixture)
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(takes * step / 10);
        let _ = child.kill();
        child.wait().unwrap();
        let Ok(manifest) = std::fs::read_to_string(out.join(membench::report::MANIFEST)) else {
            continue;
        };
        let charts: Vec<String> = tree(&out)
            .unwrap()
            .into_iter()
            .filter(|name| name.ends_with(".svg") && !name.starts_with('.'))
            .collect();
        for chart in &charts {
            assert!(
                listed(&manifest).contains(&chart.as_str()),
                "step {step}: {chart} not in {manifest}"
            );
        }
    }
    let (status, _, stderr) = report_into(&out).unwrap();
    assert!(status.success(), "{stderr}");
    assert!(
        temporaries(&dir).unwrap().is_empty(),
        "{:?}",
        tree(&dir).unwrap()
    );
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_report_into_a_file_is_refused_and_a_link_to_a_directory_is_followed() {
    let dir = scratch("report-file").unwrap();
    let file = dir.join("report");
    std::fs::write(&file, "a file of mine").unwrap();
    let (status, _, stderr) = report_into(&file).unwrap();
    assert!(!status.success());
    assert!(stderr.contains("not a directory"), "{stderr}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "a file of mine");
    assert_eq!(tree(&dir).unwrap(), ["report"], "nothing renamed or added");
    #[cfg(unix)]
    {
        std::fs::create_dir(dir.join("target")).unwrap();
        std::os::unix::fs::symlink("target", dir.join("link")).unwrap();
        let (status, _, stderr) = report_into(&dir.join("link")).unwrap();
        assert!(status.success(), "{stderr}");
        assert!(dir.join("link").is_symlink());
        assert!(dir.join("target/index.html").exists());
    }
    std::fs::remove_dir_all(dir).unwrap();
}

/// The fixture with the first row's `column` set to `value` (a CSV field, quoted as
/// needed), in `dir`.
fn fixture_with(dir: &Path, column: &str, value: &str) -> Outcome<PathBuf> {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/gpu-a.csv");
    let mut reader = csv::Reader::from_path(fixture)?;
    let header = reader.headers()?.clone();
    let index = header
        .iter()
        .position(|h| h == column)
        .ok_or("no such column")?;
    let mut writer = csv::Writer::from_writer(Vec::new());
    writer.write_record(&header)?;
    for (line, record) in reader.records().enumerate() {
        let record = record?;
        let fields: Vec<&str> = record
            .iter()
            .enumerate()
            .map(|(i, f)| if line == 0 && i == index { value } else { f })
            .collect();
        writer.write_record(fields)?;
    }
    let path = dir.join(format!("{column}.csv"));
    std::fs::write(&path, writer.into_inner()?)?;
    Ok(path)
}

#[test]
fn names_from_a_file_never_reach_a_path_or_a_terminal() {
    let dir = scratch("names").unwrap();
    let out = dir.join("out");
    for (column, value, expected) in [
        ("family", "../../../../escape", "unknown family"),
        ("variant", "../escape", "is not a variant"),
        ("param", "offset=1/../x", "is not a number"),
        ("device", "GPU \u{1b}[31mred", "a control character"),
        ("note", "\u{1b}]0;title\u{7}", "a control character"),
    ] {
        let bad = fixture_with(&dir, column, value).unwrap();
        for args in [
            vec!["report", "--no-simulator", "--out", out.to_str().unwrap()],
            vec!["compare"],
            vec!["simulate", "--validate"],
        ] {
            let (status, stdout, stderr) = outcome(
                Command::new(env!("CARGO_BIN_EXE_membench"))
                    .args(&args)
                    .arg(&bad),
            )
            .unwrap();
            assert!(!status.success(), "{args:?} {column}");
            assert!(stderr.contains(expected), "{args:?} {column}: {stderr}");
            assert!(
                !stderr.contains('\u{1b}') && !stdout.contains('\u{1b}'),
                "{stderr}"
            );
        }
        assert!(!out.exists(), "{column}: a report was written");
    }
    assert!(!std::env::temp_dir().join("escape").exists());
    std::fs::remove_dir_all(dir).unwrap();
}

#[cfg(unix)]
#[test]
fn a_linked_out_is_written_through_and_a_read_only_one_refused_before_measuring() {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = scratch("link").unwrap();
    std::os::unix::fs::symlink("target.csv", dir.join("link.csv")).unwrap();
    let run = |out: &str| {
        outcome(membench(&dir).args([
            "run", "--quick", "--build", "default", "--filter", CASES[0], "--out", out,
        ]))
        .unwrap()
    };
    let (status, _, stderr) = run("link.csv");
    if no_adapter(&stderr) {
        return;
    }
    assert!(status.success(), "{stderr}");
    assert!(dir.join("link.csv").is_symlink());
    assert_eq!(
        membench::results::read(&dir.join("target.csv"))
            .unwrap()
            .len(),
        1
    );
    std::fs::set_permissions(
        dir.join("target.csv"),
        std::fs::Permissions::from_mode(0o600),
    )
    .unwrap();
    let (status, _, stderr) = run("link.csv");
    assert!(status.success(), "{stderr}");
    let mode = |path: &str| {
        std::fs::metadata(dir.join(path))
            .unwrap()
            .permissions()
            .mode()
    };
    assert_eq!(mode("target.csv") & 0o777, 0o600, "permissions kept");
    std::fs::set_permissions(
        dir.join("target.csv"),
        std::fs::Permissions::from_mode(0o444),
    )
    .unwrap();
    let before = std::fs::read(dir.join("target.csv")).unwrap();
    let started = Instant::now();
    let (status, _, stderr) = run("link.csv");
    assert!(!status.success());
    assert!(stderr.contains("read-only"), "{stderr}");
    assert!(
        !stderr.contains("copy/peak"),
        "refused before measuring: {stderr}"
    );
    assert!(started.elapsed() < Duration::from_secs(60));
    assert_eq!(std::fs::read(dir.join("target.csv")).unwrap(), before);
    assert_eq!(mode("target.csv") & 0o777, 0o444);
    assert_eq!(tree(&dir).unwrap(), ["link.csv", "target.csv"]);
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_run_that_measures_nothing_writes_nothing() {
    let dir = scratch("nothing").unwrap();
    let (status, _, stderr) =
        outcome(membench(&dir).args(["run", "--quick", "--api", "cuda", "--filter", CASES[0]]))
            .unwrap();
    if no_adapter(&stderr) {
        return;
    }
    // Where CUDA runs, this measures; elsewhere nothing is measured and nothing written.
    if stderr.contains("CUDA backend unavailable") {
        assert!(!status.success(), "{stderr}");
        assert!(stderr.contains("nothing to measure with"), "{stderr}");
        assert!(tree(&dir).unwrap().is_empty(), "{:?}", tree(&dir).unwrap());
    }
    std::fs::remove_dir_all(dir).unwrap();
}

/// An ended command's exit status and stderr.
#[cfg(unix)]
fn status_and_stderr(output: std::process::Output) -> (ExitStatus, String) {
    (
        output.status,
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// `command` with its stdout read by `head -1`: its exit status and stderr.
#[cfg(unix)]
fn into_head(command: &mut Command) -> Outcome<(ExitStatus, String)> {
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    let stdout = child.stdout.take().ok_or("no stdout")?;
    let head = Command::new("head")
        .arg("-1")
        .stdin(stdout)
        .stdout(Stdio::null())
        .status()?;
    if !head.success() {
        return Err("head failed".into());
    }
    Ok(status_and_stderr(child.wait_with_output()?))
}

#[cfg(unix)]
#[test]
fn a_closed_or_full_stdout_ends_the_command_without_a_panic() {
    let dir = scratch("stdout").unwrap();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    for args in [
        vec!["list".to_owned()],
        vec!["devices".to_owned()],
        vec![
            "compare".to_owned(),
            fixture.join("gpu-a.csv").display().to_string(),
            fixture.join("gpu-b.csv").display().to_string(),
        ],
    ] {
        let (status, stderr) = into_head(membench(&dir).args(&args)).unwrap();
        assert!(
            matches!(status.code(), Some(0 | 141)),
            "{args:?}: {status} {stderr}"
        );
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
    if Path::new("/dev/full").exists() {
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap();
        let (status, _, stderr) = outcome(
            membench(&dir)
                .args(["run", "--quick", "--filter", CASES[0], "--out", "-"])
                .stdout(full),
        )
        .unwrap();
        if !no_adapter(&stderr) {
            assert!(!status.success());
            assert!(stderr.contains("No space left on device"), "{stderr}");
            assert!(
                !stderr.contains("panicked") && !stderr.contains("copy/peak"),
                "{stderr}"
            );
        }
    }
    std::fs::remove_dir_all(dir).unwrap();
}

#[cfg(unix)]
#[test]
fn sigterm_saves_rows_and_predictions_and_exits_143_after_the_summary() {
    let dir = scratch("sigterm").unwrap();
    let out = dir.join("run.csv");
    // The copy family's 82 measurements take several times the 2 s between saves, so
    // the signal comes while cases are left (copy/offset alone once ended first).
    let mut child = membench(&dir)
        .args(["run", "--quick", "--filter", "copy/", "--out"])
        .arg(&out)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(300);
    loop {
        let saved = std::fs::read_to_string(&out).map_or(0, |text| text.lines().count());
        if saved > 3 {
            break;
        }
        if child.try_wait().unwrap().is_some() {
            let output = child.wait_with_output().unwrap();
            assert!(no_adapter(&String::from_utf8_lossy(&output.stderr)));
            return;
        }
        assert!(Instant::now() < deadline, "no row saved");
        std::thread::sleep(Duration::from_millis(50));
    }
    let sent = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let output = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(143), "{stderr}");
    assert!(stderr.contains("terminated (SIGTERM)"), "{stderr}");
    assert!(stdout.contains("(interrupted)"), "{stdout}");
    let rows = membench::results::read(&out).unwrap();
    assert!(rows.len() < 82, "{} rows", rows.len());
    assert!(
        rows.iter()
            .filter(|r| r.gbps_median.is_some())
            .all(|r| r.sim_gbps.is_some())
    );
    assert!(
        temporaries(&dir).unwrap().is_empty(),
        "{:?}",
        tree(&dir).unwrap()
    );
    std::fs::remove_dir_all(dir).unwrap();
}

#[cfg(unix)]
#[test]
fn a_file_size_limit_fails_the_write_and_leaves_no_temporary_file() {
    let dir = scratch("ulimit").unwrap();
    // 1 block of 512 bytes: the results file's header alone is longer.
    let script = format!(
        "ulimit -f 1; exec {} run --quick --build default --filter '{}' --out run.csv",
        env!("CARGO_BIN_EXE_membench"),
        CASES[0]
    );
    let (status, _, stderr) = outcome(
        Command::new("sh")
            .args(["-c", &script])
            .current_dir(&dir)
            .env("WGPU_BACKEND", "vulkan"),
    )
    .unwrap();
    if no_adapter(&stderr) {
        return;
    }
    assert!(!status.success(), "{stderr}");
    assert!(stderr.contains("File too large"), "{stderr}");
    assert!(
        temporaries(&dir).unwrap().is_empty(),
        "{:?}",
        tree(&dir).unwrap()
    );
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn small_refusals_say_what_is_wrong_in_one_line() {
    let dir = scratch("small").unwrap();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let one_line = |stderr: &str| {
        stderr
            .lines()
            .filter(|l| l.starts_with("membench:"))
            .count()
            == 1
    };
    // `$` alone would match every case.
    let (status, _, stderr) = outcome(membench(&dir).args(["list", "--filter", "$"])).unwrap();
    assert!(!status.success());
    assert!(stderr.contains("an empty filter"), "{stderr}");
    // A file of two devices is refused by simulate --validate as by compare.
    let a = std::fs::read_to_string(fixture.join("gpu-a.csv")).unwrap();
    let mixed = fixture_with(&dir, "device", "Other GPU").unwrap();
    for command in [vec!["simulate", "--validate"], vec!["compare"]] {
        let (status, _, stderr) =
            outcome(membench(&dir).args(&command).arg(&mixed).arg(&mixed)).unwrap();
        assert!(!status.success());
        assert!(
            stderr.contains("rows of a second device"),
            "{command:?}: {stderr}"
        );
    }
    // Not a results CSV, or one in capitals.
    let other = dir.join("other.csv");
    std::fs::write(&other, "name,value\nx,1\n").unwrap();
    let (_, _, stderr) = outcome(membench(&dir).args(["compare"]).arg(&other).arg(&other)).unwrap();
    assert!(stderr.contains("not a membench results CSV"), "{stderr}");
    std::fs::write(
        &other,
        a.replacen("family,variant,param", "FAMILY,VARIANT,PARAM", 1),
    )
    .unwrap();
    let (_, _, stderr) = outcome(membench(&dir).args(["compare"]).arg(&other).arg(&other)).unwrap();
    assert!(stderr.contains("column names are lower case"), "{stderr}");
    assert!(!stderr.contains("schema version"), "{stderr}");
    // An I/O error says the OS's words once.
    let (_, _, stderr) =
        outcome(membench(&dir).args(["compare", "absent.csv", "absent.csv"])).unwrap();
    assert_eq!(
        stderr.matches("No such file or directory").count(),
        1,
        "{stderr}"
    );
    assert!(one_line(&stderr), "{stderr}");
    // A bad WGPU_BACKEND is named, not taken for a missing driver.
    let (status, _, stderr) =
        outcome(membench(&dir).arg("devices").env("WGPU_BACKEND", "bogus")).unwrap();
    assert!(!status.success());
    assert!(stderr.contains("`bogus` is not a backend"), "{stderr}");
    assert!(!stderr.contains("install"), "{stderr}");
    std::fs::remove_dir_all(dir).unwrap();
}

#[cfg(unix)]
#[test]
fn a_read_only_directory_is_refused_before_anything_is_measured() {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = scratch("read-only-dir").unwrap();
    let locked = dir.join("locked");
    std::fs::create_dir(&locked).unwrap();
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o555)).unwrap();
    // Root writes into a read-only directory anyway: the check is what a user meets.
    let writable = std::fs::write(locked.join("probe"), "").is_ok();
    let (status, _, stderr) = outcome(membench(&dir).args([
        "run",
        "--quick",
        "--filter",
        CASES[0],
        "--out",
        "locked/run.csv",
    ]))
    .unwrap();
    if !no_adapter(&stderr) && !writable {
        assert!(!status.success());
        assert!(stderr.contains("Permission denied"), "{stderr}");
        assert!(
            !stderr.contains("copy/peak"),
            "refused before measuring: {stderr}"
        );
    }
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn listing_adapters_prints_no_display_server_noise() {
    let dir = scratch("quiet").unwrap();
    let (_, _, stderr) = outcome(
        membench(&dir)
            .arg("devices")
            .env_remove("WGPU_BACKEND")
            .env_remove("WAYLAND_DISPLAY")
            .env_remove("DISPLAY")
            .env_remove("XDG_RUNTIME_DIR"),
    )
    .unwrap();
    assert!(!stderr.contains("XDG_RUNTIME_DIR"), "{stderr}");
    std::fs::remove_dir_all(dir).unwrap();
}

/// `command`'s exit status with stderr at `/dev/full`, and with stderr a pipe whose
/// reader has gone away.
#[cfg(unix)]
fn with_stderr_failing(command: &mut Command) -> Outcome<[ExitStatus; 2]> {
    let full = std::fs::OpenOptions::new().write(true).open("/dev/full")?;
    let on_full = command.stdout(Stdio::null()).stderr(full).status()?;
    // Closed before the command starts, so that none of its writes finds a reader.
    let (reader, writer) = std::io::pipe()?;
    drop(reader);
    let closed = command.stderr(writer).status()?;
    Ok([on_full, closed])
}

#[cfg(unix)]
#[test]
fn a_full_or_closed_stderr_ends_every_command_without_a_panic() {
    if !Path::new("/dev/full").exists() {
        return;
    }
    let dir = scratch("stderr").unwrap();
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let fleet = Path::new(env!("CARGO_MANIFEST_DIR")).join("results/fleet");
    let path = |path: PathBuf| path.display().to_string();
    let commands: [Vec<String>; 7] = [
        vec!["devices".into()],
        vec!["list".into(), "--filter".into(), "copy/peak".into()],
        ["run", "--quick", "--build", "default", "--filter", CASES[0]]
            .iter()
            .map(|a| a.to_string())
            .chain(["--out".into(), "run.csv".into()])
            .collect(),
        ["simulate", "--quick", "--filter", CASES[0]]
            .map(String::from)
            .to_vec(),
        vec![
            "compare".into(),
            path(fixtures.join("gpu-a.csv")),
            path(fixtures.join("gpu-b.csv")),
        ],
        vec![
            "report".into(),
            "--no-simulator".into(),
            "--out".into(),
            "report".into(),
            path(fixtures.join("gpu-a.csv")),
        ],
        vec!["fleet".into(), path(fleet)],
    ];
    for args in commands {
        let (status, _, stderr) = outcome(membench(&dir).args(&args)).unwrap();
        if args[0] == "run" && no_adapter(&stderr) {
            continue;
        }
        let failing = with_stderr_failing(membench(&dir).args(&args)).unwrap();
        for (failed, how) in failing.iter().zip(["full", "closed"]) {
            assert_ne!(failed.code(), Some(101), "{args:?}, {how}: a panic");
            if stderr.is_empty() || !status.success() {
                // Nothing lost, or a failure already said by its status.
                assert_eq!(failed.code(), status.code(), "{args:?}, {how}");
            } else {
                assert!(!failed.success(), "{args:?}, {how}: {stderr}");
            }
        }
    }
    std::fs::remove_dir_all(dir).unwrap();
}

/// `membench run` of one quick case, in `dir`, with `--out` still to give.
fn one_case(dir: &Path) -> Command {
    let mut command = membench(dir);
    command.args(["run", "--quick", "--build", "default", "--filter", CASES[0]]);
    command
}

/// The file a message says rows were kept in (`… is in PATH`, the line's end).
fn kept_in(stderr: &str) -> Option<PathBuf> {
    let (_, rest) = stderr.split_once(" measured is in ")?;
    Some(PathBuf::from(rest.lines().next()?))
}

/// A run of one case into `--out -`, with `TMPDIR` set to `tmpdir`, whose reader takes
/// the CSV's header and goes away; `meanwhile` is given the run's pid first. Its exit
/// status and stderr.
#[cfg(unix)]
fn run_into_a_reader_that_leaves(
    dir: &Path,
    tmpdir: &Path,
    meanwhile: impl FnOnce(u32) -> Outcome<()>,
) -> Outcome<(ExitStatus, String)> {
    use std::io::BufRead as _;
    let mut child = one_case(dir)
        .args(["--out", "-"])
        .env("TMPDIR", tmpdir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    meanwhile(child.id())?;
    let mut header = String::new();
    std::io::BufReader::new(child.stdout.take().ok_or("no stdout")?).read_line(&mut header)?;
    Ok(status_and_stderr(child.wait_with_output()?))
}

#[cfg(unix)]
#[test]
fn rows_a_broken_stdout_did_not_take_are_kept_where_no_planted_link_leads() {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = scratch("rescue").unwrap();
    let tmpdir = dir.join("tmp");
    std::fs::create_dir(&tmpdir).unwrap();
    let victim = dir.join("victim.csv");
    std::fs::write(&victim, "mine").unwrap();
    // A link where a predictable name (the pid's) would put the rows.
    let (status, stderr) = run_into_a_reader_that_leaves(&dir, &tmpdir, |pid| {
        let planted = tmpdir.join(format!("membench-rows-{pid}.csv"));
        Ok(std::os::unix::fs::symlink(&victim, planted)?)
    })
    .unwrap();
    if no_adapter(&stderr) {
        return;
    }
    assert!(!status.success(), "{stderr}");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "mine");
    let kept = kept_in(&stderr).unwrap_or_else(|| panic!("{stderr}"));
    assert_eq!(kept.parent(), Some(tmpdir.as_path()), "{stderr}");
    let metadata = std::fs::symlink_metadata(&kept).unwrap();
    assert!(metadata.is_file(), "{stderr}");
    assert_eq!(metadata.permissions().mode() & 0o777, 0o600);
    assert_eq!(membench::results::read(&kept).unwrap().len(), 1);
    assert!(stderr.contains("no rows were saved"), "{stderr}");
    // A temporary directory that is not there is named, not made.
    let missing = dir.join("missing");
    let (status, stderr) = run_into_a_reader_that_leaves(&dir, &missing, |_| Ok(())).unwrap();
    assert!(!status.success(), "{stderr}");
    let named = format!("TMPDIR={}: No such file or directory", missing.display());
    assert!(stderr.contains(&named), "{stderr}");
    assert!(stderr.contains("the 1 row measured is lost"), "{stderr}");
    assert!(!missing.exists());
    std::fs::remove_dir_all(dir).unwrap();
}

#[cfg(unix)]
#[test]
fn a_new_results_file_on_a_full_disk_leaves_no_file_and_keeps_its_rows_apart() {
    let dir = scratch("full-new").unwrap();
    let tmpdir = dir.join("tmp");
    std::fs::create_dir(&tmpdir).unwrap();
    let membench_run = format!(
        "{} run --quick --build default --filter '{}'",
        env!("CARGO_BIN_EXE_membench"),
        CASES[0]
    );
    // A file size limit: no file of the rows can be written, the kept one neither.
    let script = format!("ulimit -f 1; exec {membench_run} --out run.csv");
    let (status, _, stderr) = outcome(
        Command::new("sh")
            .args(["-c", &script])
            .current_dir(&dir)
            .env("WGPU_BACKEND", "vulkan")
            .env("TMPDIR", &tmpdir),
    )
    .unwrap();
    if no_adapter(&stderr) {
        return;
    }
    assert!(!status.success(), "{stderr}");
    assert!(stderr.contains("File too large"), "{stderr}");
    assert!(stderr.contains("the 1 row measured is lost"), "{stderr}");
    assert_eq!(tree(&dir).unwrap(), ["tmp"], "{stderr}");
    // A disk that is full (a tmpfs of 8 KiB, filled), where a mount namespace may be
    // made: the rows go to the temporary directory.
    let can_mount = Command::new("unshare")
        .args(["-m", "sh", "-c", "mount -t tmpfs tmpfs /mnt"])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !can_mount {
        eprintln!("no mount namespace here: the full disk is not tried");
        std::fs::remove_dir_all(dir).unwrap();
        return;
    }
    std::fs::create_dir(dir.join("full")).unwrap();
    let script = format!(
        "mount -t tmpfs -o size=8k tmpfs full && head -c 8192 /dev/zero > full/filler; \
         {membench_run} --out full/run.csv; echo \"exit $?\"; ls -A full"
    );
    let (_, stdout, stderr) = outcome(
        Command::new("unshare")
            .args(["-m", "sh", "-c", &script])
            .current_dir(&dir)
            .env("WGPU_BACKEND", "vulkan")
            .env("TMPDIR", &tmpdir),
    )
    .unwrap();
    assert!(stdout.starts_with("exit 1\n"), "{stdout}{stderr}");
    assert_eq!(stdout.lines().skip(1).collect::<Vec<_>>(), ["filler"]);
    assert!(stderr.contains("No space left on device"), "{stderr}");
    let kept = kept_in(&stderr).unwrap_or_else(|| panic!("{stderr}"));
    assert_eq!(kept.parent(), Some(tmpdir.as_path()), "{stderr}");
    assert_eq!(membench::results::read(&kept).unwrap().len(), 1);
    std::fs::remove_dir_all(dir).unwrap();
}

#[cfg(unix)]
#[test]
fn a_run_waiting_for_a_lock_says_who_holds_it_and_after_sigterm_what_was_saved() {
    use std::io::BufRead as _;
    use std::sync::{Arc, Mutex};
    let dir = scratch("lock-wait").unwrap();
    let tmpdir = dir.join("tmp");
    std::fs::create_dir(&tmpdir).unwrap();
    let out = dir.join("run.csv");
    // This test holds the lock the run waits for.
    let held = std::fs::File::create(&out).unwrap();
    held.lock().unwrap();
    let mut child = one_case(&dir)
        .arg("--out")
        .arg(&out)
        .env("TMPDIR", &tmpdir)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let said = Arc::new(Mutex::new(String::new()));
    let reader = {
        let said = Arc::clone(&said);
        let stderr = child.stderr.take().unwrap();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stderr).lines() {
                let line = line.unwrap();
                said.lock().unwrap().push_str(&(line + "\n"));
            }
        })
    };
    let said_so_far = || said.lock().unwrap().clone();
    let deadline = Instant::now() + Duration::from_secs(300);
    while !said_so_far().contains("waiting for its lock") {
        if child.try_wait().unwrap().is_some() {
            reader.join().unwrap();
            assert!(no_adapter(&said_so_far()), "{}", said_so_far());
            return;
        }
        assert!(Instant::now() < deadline, "no wait said: {}", said_so_far());
        std::thread::sleep(Duration::from_millis(50));
    }
    let holder = format!("held by pid {}", std::process::id());
    assert!(said_so_far().contains(&holder), "{}", said_so_far());
    let signalled = Instant::now();
    let sent = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let status = child.wait().unwrap();
    reader.join().unwrap();
    let stderr = said_so_far();
    assert!(!status.success(), "{stderr}");
    assert!(signalled.elapsed() < Duration::from_secs(20), "{stderr}");
    assert!(stderr.contains("gave up waiting for its lock"), "{stderr}");
    assert!(stderr.contains("no rows were saved"), "{stderr}");
    let kept = kept_in(&stderr).unwrap_or_else(|| panic!("{stderr}"));
    assert_eq!(membench::results::read(&kept).unwrap().len(), 1);
    assert_eq!(std::fs::read(&out).unwrap(), b"", "the held file as it was");
    drop(held);
    std::fs::remove_dir_all(dir).unwrap();
}

#[cfg(unix)]
#[test]
fn a_results_file_keeps_its_owner_and_a_hard_linked_one_is_refused_before_measuring() {
    use std::os::unix::fs::MetadataExt as _;
    let dir = scratch("owner").unwrap();
    let out = dir.join("run.csv");
    std::fs::write(&out, "").unwrap();
    // Root may give the file to another user; anyone else keeps it their own.
    let nobody = 65534;
    let other_owner = std::os::unix::fs::chown(&out, Some(nobody), Some(nobody)).is_ok();
    let owner = |path: &Path| {
        let metadata = std::fs::metadata(path).unwrap();
        (metadata.uid(), metadata.gid())
    };
    let before = owner(&out);
    let (status, _, stderr) = outcome(one_case(&dir).arg("--out").arg(&out)).unwrap();
    if no_adapter(&stderr) {
        return;
    }
    assert!(status.success(), "{stderr}");
    assert_eq!(membench::results::read(&out).unwrap().len(), 1);
    assert_eq!(
        owner(&out),
        before,
        "owner kept (given away: {other_owner})"
    );
    let link = dir.join("link.csv");
    std::fs::hard_link(&out, &link).unwrap();
    let rows = std::fs::read(&out).unwrap();
    let (status, _, stderr) = outcome(one_case(&dir).arg("--out").arg(&out)).unwrap();
    assert!(!status.success(), "{stderr}");
    assert!(stderr.contains("2 hard links"), "{stderr}");
    assert!(
        !stderr.contains("copy/peak"),
        "refused before measuring: {stderr}"
    );
    assert_eq!(std::fs::read(&out).unwrap(), rows);
    assert_eq!(std::fs::metadata(&link).unwrap().nlink(), 2);
    assert_eq!(tree(&dir).unwrap(), ["link.csv", "run.csv"]);
    std::fs::remove_dir_all(dir).unwrap();
}

#[cfg(unix)]
#[test]
fn an_out_template_keeps_a_directory_that_is_not_utf8_and_names_a_gpu_without_a_uuid() {
    use std::os::unix::ffi::OsStrExt as _;
    let dir = scratch("template").unwrap();
    let odd = dir.join(std::ffi::OsStr::from_bytes(b"out-\xff"));
    let (status, _, stderr) = outcome(
        one_case(&dir)
            .arg("--out")
            .arg(odd.join("{host}-{uuid}.csv")),
    )
    .unwrap();
    if no_adapter(&stderr) {
        return;
    }
    assert!(status.success(), "{stderr}");
    let names: Vec<String> = std::fs::read_dir(&odd)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 1, "{names:?}");
    let rows = membench::results::read(&odd.join(&names[0])).unwrap();
    // A software adapter has no UUID: its name stands in for one.
    if rows[0].gpu_uuid == "-" {
        let device = membench::results::slug(&rows[0].device);
        assert!(names[0].ends_with(&format!("-{device}.csv")), "{names:?}");
    }
    assert_eq!(tree(&dir).unwrap().len(), 2, "{:?}", tree(&dir).unwrap());
    std::fs::remove_dir_all(dir).unwrap();
}
