//! The membench command line: `devices`, `list`, `run`, `simulate`.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use clap::{Parser, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};

use membench::experiments::{Measure, REGISTRY, Sizing};
use membench::gpu::{self, BoundsChecks, GpuContext};
use membench::results;
use membench::runner::{self, Outcome, RunInfo, RunSettings};
use membench::sim::device as sim_device;
use membench::timing;

/// GPU memory benchmarks: the classic CUDA memory experiments in WGSL, verified
/// against a CPU reference and timed on the GPU clock.
#[derive(Parser)]
#[command(version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// List every adapter: name, backend, type, driver, subgroup size, limits.
    Devices,
    /// Print the registry: experiments, their cases and the claims they test.
    List {
        /// Only cases whose id (family/variant/param) contains one of these.
        #[arg(long, value_delimiter = ',')]
        filter: Vec<String>,
    },
    /// Verify and time the suite (or the filtered part of it) on one adapter.
    Run(RunArgs),
    /// Predict every case from the simulator alone, for a device preset: no GPU needed.
    Simulate(SimulateArgs),
}

#[derive(clap::Args)]
struct SimulateArgs {
    /// Device preset (h100, h200, a100, v100, gtx1050ti, lavapipe, generic).
    #[arg(long, default_value = "h100")]
    device: String,
    /// Only cases whose id (family/variant/param) contains one of these.
    #[arg(long, value_delimiter = ',')]
    filter: Vec<String>,
    /// Small working sets, as `run --quick`.
    #[arg(long)]
    quick: bool,
}

#[derive(clap::Args)]
struct RunArgs {
    /// Only cases whose id (family/variant/param) contains one of these
    /// (comma-separated, e.g. `copy/offset,copy/peak`).
    #[arg(long, value_delimiter = ',')]
    filter: Vec<String>,
    /// Small working sets: a correctness run in seconds (CI, software adapters).
    #[arg(long)]
    quick: bool,
    /// Adapter by index or name substring (see `membench devices`); default: the
    /// best one, or WGPU_ADAPTER_NAME.
    #[arg(long)]
    adapter: Option<String>,
    /// Results CSV; default results/<device>-<backend>.csv. Rows of cases not run
    /// are kept.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Drop wgpu's injected bounds checks (recorded in the CSV; default file gets
    /// an -unchecked suffix).
    #[arg(long)]
    unchecked: bool,
    /// Timed samples per case.
    #[arg(long, default_value_t = 30, value_parser = clap::value_parser!(u32).range(i64::from(timing::MIN_SAMPLES)..=4096))]
    samples: u32,
    /// Bytes of the main buffer of the streaming experiments, in MiB (default 256,
    /// 4 with --quick, capped by the device).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    buffer_mib: Option<u64>,
    /// Matrix size of the 2-D experiments (transpose), columns x rows, e.g. 4096x4096
    /// or 1000x3000 (default 4096x4096 and 8192x8192 where the device allows).
    #[arg(long, value_parser = parse_matrix)]
    size: Option<(u32, u32)>,
    /// Seconds one submission may take before the device counts as hung.
    #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u64).range(1..))]
    timeout_s: u64,
}

fn main() -> ExitCode {
    match run_cli(Cli::parse()) {
        Ok(code) => code,
        Err(error) => {
            eprintln!("membench: {error:#}");
            ExitCode::FAILURE
        }
    }
}

/// `NXxNY`, both at least 1.
fn parse_matrix(text: &str) -> Result<(u32, u32), String> {
    let dimension = |part: &str| {
        part.trim()
            .parse::<u32>()
            .ok()
            .filter(|&n| n > 0)
            .ok_or_else(|| format!("`{part}` is not a positive whole number"))
    };
    match text.split_once(['x', 'X']) {
        Some((nx, ny)) => Ok((dimension(nx)?, dimension(ny)?)),
        None => Err(format!("`{text}` is not of the form NXxNY, e.g. 4096x4096")),
    }
}

fn run_cli(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Devices => devices(),
        Command::List { filter } => list(&filter),
        Command::Run(args) => run(args),
        Command::Simulate(args) => simulate(args),
    }
}

fn devices() -> anyhow::Result<ExitCode> {
    let adapters = gpu::adapters(&gpu::instance());
    if adapters.is_empty() {
        anyhow::bail!(membench::Error::NoAdapter(String::new()));
    }
    for (index, adapter) in adapters.iter().enumerate() {
        println!("{}", gpu::adapter_report(index, adapter));
    }
    Ok(ExitCode::SUCCESS)
}

fn list(filters: &[String]) -> anyhow::Result<ExitCode> {
    // Without a device, cases are sized for a nominal large GPU.
    let selected = runner::select(&Sizing::nominal(false), filters)?;
    for experiment in REGISTRY {
        let params: Vec<&str> = selected
            .iter()
            .filter(|(e, _)| std::ptr::eq(*e, experiment))
            .map(|(_, case)| case.param.as_str())
            .collect();
        if params.is_empty() {
            continue;
        }
        let runs = match (experiment.kernel, experiment.measure) {
            (Some(kernel), Measure::Kernel) => format!("shaders/{kernel}.wgsl"),
            (Some(kernel), Measure::Transfer(_)) => {
                format!("host transfers and shaders/{kernel}.wgsl")
            }
            (None, _) => "host transfers, no kernel".to_owned(),
        };
        println!("{}  ({runs})", experiment.name());
        println!("  claim: {}", experiment.claim);
        println!("  cases: {}", params.join(" "));
    }
    Ok(ExitCode::SUCCESS)
}

fn run(args: RunArgs) -> anyhow::Result<ExitCode> {
    let started = Instant::now();
    let checks = if args.unchecked {
        BoundsChecks::Off
    } else {
        BoundsChecks::On
    };
    let settings = RunSettings {
        quick: args.quick,
        checks,
        samples: args.samples,
        buffer_bytes: args.buffer_mib.map(|mib| mib << 20),
        matrix: args.size,
    };
    let ctx = GpuContext::new(args.adapter.as_deref(), Duration::from_secs(args.timeout_s))?;
    let sizing = runner::sizing(&ctx, &settings)?;
    let cases = runner::select(&sizing, &args.filter)?;
    let out = args.out.unwrap_or_else(|| {
        results::default_path(
            &ctx.info.name,
            &format!("{:?}", ctx.info.backend),
            args.unchecked,
        )
    });
    // A malformed results file stops the run before anything is measured.
    let old_rows = if out.exists() {
        results::read(&out)?
    } else {
        Vec::new()
    };
    eprintln!(
        "membench: {} cases on {}, bounds checks {}, results to {}",
        cases.len(),
        gpu::describe(&ctx.info),
        checks.label(),
        out.display()
    );

    let info = RunInfo::new(&ctx, checks);
    let progress = bar(cases.len())?;
    let mut rows = Vec::with_capacity(cases.len());
    let mut failed = 0;
    for (experiment, case) in &cases {
        let id = runner::case_id(experiment, case);
        progress.set_message(id.clone());
        let outcome = runner::run_case(&ctx, experiment, case, &settings);
        match &outcome {
            Outcome::Failed(reason) => {
                failed += 1;
                progress.println(format!("FAILED {id}: {reason}"));
            }
            Outcome::Skipped(reason) => progress.println(format!("skipped {id}: {reason}")),
            Outcome::Measured(_) => {}
        }
        rows.push(info.row(experiment, case, &outcome));
        // Written after every case: an interrupted run keeps what it measured.
        results::write(&out, &results::merge(old_rows.clone(), &rows))?;
        progress.inc(1);
    }
    progress.finish_and_clear();

    // Predictions come after the measurements: the model is calibrated from this
    // run's copy/peak (or from the results file's rows of the same device).
    let simulated = Instant::now();
    let same_device = old_rows.iter().filter(|row| row.device == ctx.info.name);
    let known: Vec<_> = rows.iter().chain(same_device).cloned().collect();
    let model = runner::device_model(&ctx.info.name, &known);
    eprintln!(
        "membench: simulating with the {}",
        runner::describe_model(&model)
    );
    let progress = bar(cases.len())?;
    let predictions = runner::predict_cases(&cases, &model, &|| progress.inc(1));
    progress.finish_and_clear();
    for (row, prediction) in rows.iter_mut().zip(&predictions) {
        if let Some(prediction) = prediction {
            runner::fill_prediction(row, prediction);
        }
    }
    results::write(&out, &results::merge(old_rows, &rows))?;

    print!("{}", results::summary(&rows));
    println!(
        "\n{} cases, {failed} failed, in {:.1} s ({:.1} s of it simulating); peak host memory {}; results in {}",
        rows.len(),
        started.elapsed().as_secs_f64(),
        simulated.elapsed().as_secs_f64(),
        peak_resident().unwrap_or_else(|| "unknown".to_owned()),
        out.display()
    );
    Ok(if failed > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

fn simulate(args: SimulateArgs) -> anyhow::Result<ExitCode> {
    let Some(model) = sim_device::preset(&args.device) else {
        let names: Vec<&str> = sim_device::presets().iter().map(|d| d.name).collect();
        anyhow::bail!(
            "unknown device preset {:?}; presets: {}",
            args.device,
            names.join(", ")
        );
    };
    // Sized as for a large GPU (or --quick), without touching a device.
    let cases = runner::select(&Sizing::nominal(args.quick), &args.filter)?;
    eprintln!(
        "membench: simulating {} cases on the {} preset ({})",
        cases.len(),
        model.name,
        model.description
    );
    let progress = bar(cases.len())?;
    let predictions = runner::predict_cases(&cases, model, &|| progress.inc(1));
    progress.finish_and_clear();
    let mut rows = Vec::with_capacity(cases.len());
    for ((experiment, case), prediction) in cases.iter().zip(&predictions) {
        let mut row = results::Row {
            device: model.name.to_owned(),
            ..runner::case_row(experiment, case)
        };
        match (&case.skip, prediction) {
            (Some(reason), _) => {
                row.status = "skipped".to_owned();
                row.note = reason.clone();
            }
            (None, Some(prediction)) => {
                row.status = "simulated".to_owned();
                runner::fill_prediction(&mut row, prediction);
            }
            (None, None) => {
                row.status = "not simulated".to_owned();
                row.note = "a host-device transfer: measured only".to_owned();
            }
        }
        rows.push(row);
    }
    print!("{}", results::summary(&rows));
    Ok(ExitCode::SUCCESS)
}

fn bar(len: usize) -> anyhow::Result<ProgressBar> {
    Ok(ProgressBar::new(len as u64).with_style(
        ProgressStyle::with_template("{bar:30} {pos}/{len} {elapsed} {wide_msg}")
            .context("progress bar template")?,
    ))
}

/// Peak resident set size of this process (Linux `VmHWM`).
fn peak_resident() -> Option<String> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|line| line.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(format!("{} MiB", kib >> 10))
}
