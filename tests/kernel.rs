//! `membench kernel` on lavapipe (or whatever adapter exists): every example's command
//! line as docs/kernel.md gives it, shrunk to a quick size, runs verified; the fixtures
//! modelled on other projects' kernels run verified or fail in one line; bad input
//! gets one line and exit 2.

use std::path::Path;
use std::process::Command;

mod common;
use common::{no_adapter, outcome, scratch};

/// The `membench kernel` command lines of docs/kernel.md's section "The examples",
/// each as its words (a line ending in `\` goes on).
fn documented_commands() -> std::io::Result<Vec<Vec<String>>> {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/kernel.md"))?;
    let section = doc.split("## The examples").nth(1).unwrap_or_default();
    let section = section.split("\n## ").next().unwrap_or_default();
    let mut commands = Vec::new();
    let mut current: Option<String> = None;
    for line in section.lines() {
        let line = line.trim();
        let text = match current.take() {
            Some(before) => format!("{before} {line}"),
            None if line.starts_with("membench kernel ") => line.to_owned(),
            None => continue,
        };
        match text.strip_suffix('\\') {
            Some(more) => current = Some(more.trim_end().to_owned()),
            None => commands.push(text.split_whitespace().map(str::to_owned).collect()),
        }
    }
    Ok(commands)
}

/// Runs `membench` with `args` in the crate's root on Vulkan: status, stdout, stderr.
fn membench(args: &[String]) -> std::io::Result<(std::process::ExitStatus, String, String)> {
    outcome(
        Command::new(env!("CARGO_BIN_EXE_membench"))
            .args(args)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .env("WGPU_BACKEND", "vulkan"),
    )
}

/// A size small enough for the interpreter in a debug build, for each size variable the
/// examples use.
const QUICK_SIZES: &[&str] = &["n=2^12", "rows=64", "cols=96", "dim=64"];

/// The flags that make a documented command quick and write into `out`.
fn quick(command: &[String], out: &Path) -> Vec<String> {
    let mut args: Vec<String> = command[1..].to_vec();
    for size in QUICK_SIZES {
        let name = size.split('=').next().unwrap_or_default();
        if command
            .iter()
            .any(|word| word.starts_with(&format!("{name}=")))
        {
            args.extend(["--size".to_owned(), (*size).to_owned()]);
        }
    }
    args.extend(
        [
            "--quick",
            "--build",
            "default",
            "--levels",
            "/nonexistent.csv",
            "--out",
        ]
        .map(str::to_owned),
    );
    args.push(out.display().to_string());
    args
}

#[test]
fn every_documented_example_runs_verified_at_a_quick_size() {
    let commands = documented_commands().unwrap();
    let examples: Vec<&str> = commands
        .iter()
        .filter_map(|c| c.get(2).map(String::as_str))
        .collect();
    for example in [
        "saxpy",
        "saxpy_vec4",
        "transpose_naive",
        "transpose_tiled",
        "layernorm",
        "layernorm_columns",
        "histogram",
    ] {
        let file = format!("examples/kernels/{example}.wgsl");
        assert!(
            examples.contains(&file.as_str()),
            "{file} not in docs/kernel.md"
        );
    }
    let dir = scratch("examples").unwrap();
    for command in &commands {
        let out = dir.join(format!("{}.csv", command[2].replace('/', "_")));
        let (status, stdout, stderr) = membench(&quick(command, &out)).unwrap();
        if no_adapter(&stderr) {
            return;
        }
        assert!(status.success(), "{command:?}\n{stdout}\n{stderr}");
        let rows = std::fs::read_to_string(&out).unwrap();
        let data: Vec<&str> = rows.lines().skip(1).collect();
        assert!(!data.is_empty(), "{command:?}: no rows");
        for row in data {
            assert!(row.starts_with("kernel,"), "{row}");
            assert!(
                row.contains(",ok,") && row.contains(",true,"),
                "{command:?}: {row}"
            );
        }
        assert!(stdout.contains("kernel/"), "{stdout}");
    }
}

/// The examples that may need more workgroups than x holds index a 2-D grid: a 4 x 4
/// grid of saxpy and of the histogram verifies, and the interpreter sees it touch
/// every element (the bytes a 1-D index would leave at a quarter).
#[test]
fn saxpy_and_the_histogram_index_a_2_d_grid() {
    let dir = scratch("grid").unwrap();
    for (example, flags) in [
        (
            "saxpy",
            "--buffer x=n --buffer y=n --uniform params.a=2.5 --uniform params.n=n",
        ),
        (
            "histogram",
            "--buffer values=n --buffer bins=256 --init bins=zeros",
        ),
    ] {
        let out = dir.join(format!("{example}.csv")).display().to_string();
        let mut args = words(&["kernel", &format!("examples/kernels/{example}.wgsl")]);
        args.extend(words(&["--size", "n=4096", "--workgroups", "4,4"]));
        args.extend(flags.split_whitespace().map(str::to_owned));
        args.extend(words(&["--quick", "--build", "default", "--out", &out]));
        let (status, _, stderr) = membench(&args).unwrap();
        if no_adapter(&stderr) {
            return;
        }
        assert!(status.success(), "{example}: {stderr}");
        let rows = std::fs::read_to_string(&out).unwrap();
        let row = rows.lines().nth(1).unwrap_or_default();
        assert!(
            row.contains(",ok,") && row.contains(",true,"),
            "{example}: {row}"
        );
    }
}

/// Writes `source` as `name` in `dir`, and returns its path as a word.
fn kernel_file(dir: &Path, name: &str, source: &str) -> std::io::Result<String> {
    let path = dir.join(name);
    std::fs::write(&path, source)?;
    Ok(path.display().to_string())
}

fn words(args: &[&str]) -> Vec<String> {
    args.iter().map(|&a| a.to_owned()).collect()
}

/// Bad input: one line saying what is wrong, exit 2, nothing written.
#[test]
fn bad_input_gets_one_line_and_exit_2() {
    let dir = scratch("bad").unwrap();
    let out = dir.join("rows.csv").display().to_string();
    let broken = kernel_file(
        &dir,
        "broken.wgsl",
        "@compute @workgroup_size(1)\nfn main( {}\n",
    )
    .unwrap();
    let texture = kernel_file(
        &dir,
        "texture.wgsl",
        "@group(0) @binding(0) var t: texture_2d<f32>;
         @compute @workgroup_size(1) fn main() { _ = textureLoad(t, vec2(0), 0); }",
    )
    .unwrap();
    let saxpy = "examples/kernels/saxpy.wgsl";
    let cases: [(Vec<&str>, &str); 6] = [
        (vec![&broken], "broken.wgsl:2:"),
        (
            vec![&texture, "--workgroups", "1"],
            "binding `t` (@group(0) @binding(0)) is a texture or sampler",
        ),
        (
            vec![
                saxpy,
                "--size",
                "n=64",
                "--buffer",
                "x=n",
                "--uniform",
                "params.a=1",
            ],
            "`y` is a runtime-sized array: give its element count with --buffer y=EXPR",
        ),
        (
            vec![
                saxpy, "--size", "n=64", "--buffer", "x=n", "--buffer", "y=n",
            ],
            "fields not set: params.a, params.n",
        ),
        (
            vec![saxpy, "--size", "n=64", "--buffer", "x=n/3"],
            "--buffer x: `n/3`: 64 / 3 is not a whole number",
        ),
        (
            vec![
                saxpy,
                "--size",
                "n=2^34",
                "--buffer",
                "x=n",
                "--buffer",
                "y=n",
                "--uniform",
                "params.a=1",
                "--uniform",
                "params.n=1",
                "--no-verify",
            ],
            "exceeds the device's largest storage binding",
        ),
    ];
    for (args, expected) in cases {
        let mut all = words(&["kernel"]);
        all.extend(words(&args));
        all.extend(words(&["--quick", "--out", &out]));
        let (status, _, stderr) = membench(&all).unwrap();
        if no_adapter(&stderr) {
            return;
        }
        assert_eq!(status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
        let said: Vec<&str> = stderr.lines().filter(|l| l.contains(expected)).collect();
        assert_eq!(said.len(), 1, "{stderr}");
        assert!(!Path::new(&out).exists(), "{args:?} wrote {out}");
    }
}

/// A kernels file and a suite results file never mix, either way.
#[test]
fn kernel_rows_and_suite_rows_never_share_a_file() {
    let dir = scratch("unmixed").unwrap();
    let out = dir.join("kernels.csv").display().to_string();
    let saxpy = words(&[
        "kernel",
        "examples/kernels/saxpy.wgsl",
        "--size",
        "n=256",
        "--buffer",
        "x=n",
        "--buffer",
        "y=n",
        "--uniform",
        "params.a=2",
        "--uniform",
        "params.n=n",
        "--quick",
        "--build",
        "default",
        "--out",
        &out,
    ]);
    let (status, _, stderr) = membench(&saxpy).unwrap();
    if no_adapter(&stderr) {
        return;
    }
    assert!(status.success(), "{stderr}");
    let before = std::fs::read(&out).unwrap();
    // One suite case into `path`: refused where the file holds kernel rows.
    let one_case = |path: &str| {
        words(&[
            "run",
            "--quick",
            "--build",
            "default",
            "--filter",
            common::ONE_CASE,
            "--out",
            path,
        ])
    };
    let run = one_case(&out);
    let (status, _, stderr) = membench(&run).unwrap();
    assert!(!status.success());
    assert!(
        stderr.contains("holds kernel rows (kernel/saxpy)"),
        "{stderr}"
    );
    assert_eq!(std::fs::read(&out).unwrap(), before);
    let suite = dir.join("suite.csv").display().to_string();
    let run = one_case(&suite);
    let (status, _, stderr) = membench(&run).unwrap();
    assert!(status.success(), "{stderr}");
    let mut again = saxpy.clone();
    *again.last_mut().unwrap() = suite.clone();
    let (status, _, stderr) = membench(&again).unwrap();
    assert!(!status.success());
    assert!(
        stderr.contains("holds the suite's rows (copy/peak)"),
        "{stderr}"
    );
}

/// What a fixture gives: rows verified, or this one-line reason and exit 2.
enum Gives {
    Verified,
    Refused(&'static str),
}

/// Kernels modelled on other projects' public compute kernels, each with the documented
/// flags a new user would give it.
const FIXTURES: &[(&str, &str, Gives)] = &[
    // A struct-wrapped runtime array, updated in place (wgpu's hello_compute).
    (
        "collatz",
        "--size n=1024 --buffer v_indices=n",
        Gives::Verified,
    ),
    // A uniform struct of f32 and vec3<i32>; a 2-D dispatch.
    (
        "scale_volume",
        "--size X=16 --size Y=24 --size Z=4 --buffer src=X*Y*Z --buffer dst=X*Y*Z \
         --uniform params.scale=0.5 --uniform params.dims=X,Y,Z --workgroups X/8,Y/8",
        Gives::Verified,
    ),
    // Subgroup built-ins and subgroupAdd.
    (
        "subgroup_sum",
        "--size n=1024 --buffer values=n --buffer sums=n",
        Gives::Verified,
    ),
    // Workgroup tiles, barriers and a 2-D dispatch.
    (
        "matmul_tiled",
        "--size N=64 --buffer a=N*N --buffer b=N*N --buffer c=N*N --uniform dims.n=N \
         --workgroups N/16,N/16",
        Gives::Verified,
    ),
    // A shape kept in a storage buffer, set as a uniform's fields are.
    (
        "life",
        "--size W=32 --size H=16 --buffer cells=W*H --buffer next=W*H --uniform shape=W,H \
         --workgroups W/8,H/8",
        Gives::Verified,
    ),
    // A uniform in @group(0), the pass's buffers in @group(1).
    (
        "group1",
        "--size n=256 --buffer input=n --buffer output=n --uniform frame.scale=2.5",
        Gives::Verified,
    ),
    // Textures: refused, the binding named.
    (
        "image_invert",
        "--workgroups 8,8",
        Gives::Refused(
            "binding `source` (@group(0) @binding(0)) is a texture or sampler: membench \
             kernel binds storage and uniform buffers only",
        ),
    ),
];

#[test]
fn kernels_like_other_projects_run_verified_or_say_why_not_in_one_line() {
    let dir = scratch("fixtures").unwrap();
    for (name, flags, gives) in FIXTURES {
        let out = dir.join(format!("{name}.csv")).display().to_string();
        let mut args = words(&["kernel", &format!("tests/fixtures/kernels/{name}.wgsl")]);
        args.extend(flags.split_whitespace().map(str::to_owned));
        args.extend(words(&["--quick", "--build", "default", "--out", &out]));
        let (status, _, stderr) = membench(&args).unwrap();
        if no_adapter(&stderr) {
            return;
        }
        match gives {
            Gives::Verified => {
                assert!(status.success(), "{name}: {stderr}");
                let rows = std::fs::read_to_string(&out).unwrap();
                let row = rows.lines().nth(1).unwrap_or_default();
                assert!(
                    row.contains(",ok,") && row.contains(",true,"),
                    "{name}: {row}"
                );
            }
            Gives::Refused(reason) => {
                assert_eq!(status.code(), Some(2), "{name}: {stderr}");
                let said: Vec<&str> = stderr.lines().filter(|l| l.contains(reason)).collect();
                assert_eq!(said.len(), 1, "{name}: {stderr}");
            }
        }
    }
}

/// The library's Rust reference replaces the interpreter's check: a right one verifies
/// the row, a wrong one fails it naming the binding and both values.
#[test]
fn a_rust_reference_checks_the_outputs_in_place_of_the_interpreter() {
    use membench::kernel::{GpuKernel, Measuring, measure};
    let source = "@group(0) @binding(0) var<storage, read> x: array<u32>;
        @group(0) @binding(1) var<storage, read_write> y: array<u32>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) id: vec3<u32>) { y[id.x] = x[id.x] * 3u; }";
    let kernel = |name: &str, factor: u32| {
        GpuKernel::new(name, source)
            .size("n", 256)
            .buffer("x", 256)
            .buffer("y", 256)
            .reference(move |inputs| vec![inputs[0].iter().map(|x| x * factor).collect()])
    };
    let kernels = [kernel("times_three", 3), kernel("times_four", 4)];
    let measuring = Measuring {
        quick: true,
        ..Measuring::default()
    };
    let mut sampler = membench::measure::SuiteSampler::new(10);
    let ran = match measure(&kernels, &mut sampler, &measuring) {
        Err(membench::Error::NoAdapter(_)) if std::env::var_os("CI").is_none() => return,
        ran => ran.unwrap(),
    };
    let row = |variant: &str| ran.rows.iter().find(|r| r.variant == variant).unwrap();
    assert!(row("times_three").verified, "{:?}", row("times_three").note);
    let wrong = row("times_four");
    assert!(!wrong.verified);
    assert!(
        wrong.note.contains("binding `y`: 256 of 256 words differ"),
        "{}",
        wrong.note
    );
}
