//! The membench command line: `devices`, `list`, `run`, `simulate`, `compare`, `report`.
//! Clap and dispatch: the commands' bodies are the library's ([`membench::commands`],
//! [`membench::run::Plan`]); stdout's errors end here.

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::str::FromStr as _;
use std::time::Duration;

use anyhow::Context as _;
use clap::{Parser, Subcommand};

use membench::measure::MIN_SAMPLES;
use membench::run::{self, Adapters, Destination, Plan, RunSettings};
use membench::sim::device as sim_device;
use membench::suite::{Api, Build};
use membench::{commands, results};

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
    /// List every adapter (name, backend, type, driver, subgroup size, limits) and every
    /// CUDA device, or why CUDA has none.
    Devices,
    /// Print the registry: experiments, their cases and the claims they test.
    List {
        /// Only cases whose id (family/variant/param) contains one of these.
        #[arg(long, value_delimiter = ',')]
        filter: Vec<String>,
        /// Print instead the flat WGSL (`wgsl`) of a kernel or of the cases matching a
        /// filter, each kernel once under a `// kernel: NAME` line; or the PTX of their
        /// CUDA twins (`ptx`, needs NVRTC), each distinct program once.
        #[arg(long, value_enum)]
        emit: Option<commands::Emit>,
        /// With --emit: a kernel name (e.g. bank_row_col_pad), or a case filter as
        /// --filter takes (e.g. copy/offset); without, --filter's cases.
        #[arg(requires = "emit")]
        kernel_or_case_filter: Option<String>,
    },
    /// Verify and time the suite (or the filtered part of it) on one adapter.
    Run(RunArgs),
    /// Predict every case from the simulator alone, for a device preset: no GPU needed.
    Simulate(SimulateArgs),
    /// Results CSVs of several devices side by side: GB/s per device, ratios to the
    /// first, predictions.
    Compare(CompareArgs),
    /// A static HTML report (charts as SVG, the claims checklist) of results CSVs.
    Report(ReportArgs),
}

#[derive(clap::Args)]
struct CompareArgs {
    /// Results CSVs, one per device; ratios are to the first device (and setting).
    /// One file is enough where it holds several apis or builds.
    #[arg(required = true, num_args = 1..)]
    csv: Vec<PathBuf>,
    #[arg(long, value_enum, default_value = "table")]
    format: results::Format,
    /// Judge each case of the files against this one instead (same api and build):
    /// same, faster or slower, beyond the noise of both rows; exit non-zero where a
    /// case is slower by more than --threshold, or failed.
    #[arg(long)]
    baseline: Option<PathBuf>,
    /// With --baseline: the slowdown, in percent, that fails the comparison.
    #[arg(long, requires = "baseline", default_value_t = 5.0, value_parser = commands::parse_percent)]
    threshold: f64,
}

#[derive(clap::Args)]
struct ReportArgs {
    /// Results CSVs, one per device; default: every results/*.csv.
    csv: Vec<PathBuf>,
    /// Directory for index.html and the charts' SVG files.
    #[arg(long, default_value = "results/report")]
    out: PathBuf,
    /// The device the ratios are to: its label (as the report names it) or a part of
    /// the labels of one file's devices; default: the first file's.
    #[arg(long)]
    baseline: Option<String>,
    /// Leave out the Simulator section, which predicts every measured case again
    /// (`simulate --validate`): seconds per file in a release build, a minute or more
    /// in a debug one.
    #[arg(long)]
    no_simulator: bool,
}

#[derive(clap::Args)]
struct SimulateArgs {
    /// Device preset (default h100; with --validate, the one closest to each file's
    /// device).
    #[arg(long, value_parser = preset_names(), ignore_case = true)]
    device: Option<String>,
    /// Only cases whose id (family/variant/param) contains one of these; with
    /// --validate, only those are judged (calibration still reads every row).
    #[arg(long, value_delimiter = ',')]
    filter: Vec<String>,
    /// Small working sets, as `run --quick`.
    #[arg(long, conflicts_with = "validate")]
    quick: bool,
    /// Judge the simulator against results CSVs (one per device): each measured row of
    /// the build closest to the hardware predicted again now, on the device's preset
    /// calibrated from the file's calibration rows, and compared with its measurement.
    #[arg(long, value_name = "CSV", num_args = 1..)]
    validate: Vec<PathBuf>,
    /// With --validate: calibrate on this file's rows instead of each file's own (its
    /// rows count as calibration rows, the validated files' as held out).
    #[arg(
        long,
        value_name = "CSV",
        requires = "validate",
        conflicts_with = "no_calibrate"
    )]
    calibrate_from: Option<PathBuf>,
    /// With --validate: the presets alone, calibrated from nothing.
    #[arg(long, requires = "validate")]
    no_calibrate: bool,
    /// With --validate: every judged row too (case, measured and predicted GB/s, their
    /// ratio, the bound).
    #[arg(long, requires = "validate")]
    verbose: bool,
    /// With --validate: how the judgement prints (csv: the accuracy tables, or with
    /// --verbose the rows).
    #[arg(long, value_enum, default_value = "table", requires = "validate")]
    format: results::Format,
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
    /// Adapter by index or name substring (see `membench devices`), or `all` for
    /// every adapter in turn, each into its own results file; default: the best
    /// one, or WGPU_ADAPTER_NAME.
    #[arg(long)]
    adapter: Option<String>,
    /// With `--adapter all`: every adapter at the same time, one thread each, each
    /// case started on all of them at once; the copy family (each GPU's own memory)
    /// and the transfer family (the host link and memory they share) only, which
    /// --filter narrows. Rows record `concurrent=N` in `sizing`, in files of their
    /// own (`-concurrent-N`).
    #[arg(long)]
    concurrent: bool,
    /// Results CSV; default results/<device>-<backend>[-<sizing>].csv (`-quick` for
    /// --quick). Rows of cases not run are kept; a file of another device, backend or
    /// sizing is refused. `-` prints the rows to stdout (progress and the summary go
    /// to stderr).
    #[arg(long)]
    out: Option<PathBuf>,
    /// What `--out -` prints: the results CSV, the rows as JSON, or the summary as a
    /// Markdown table.
    #[arg(long, value_enum)]
    format: Option<results::Format>,
    /// The apis to measure with, comma-separated: wgpu, cuda (where the CUDA
    /// backend is available). Each row records its api.
    #[arg(long, value_delimiter = ',', default_values = ["wgpu", "cuda"], value_parser = Api::from_str)]
    api: Vec<Api>,
    /// The builds to measure, comma-separated, each in the apis that have it:
    /// default (what a plain wgpu program gets; NVRTC's twins), tax-free (wgpu:
    /// runtime checks off, barriers at the WGSL spec's scope; unchecked where SPIR-V
    /// passthrough is not offered), unchecked (wgpu: checks off, naga's barriers),
    /// rolled (CUDA: loops with a run-time trip count kept rolled, as NVIDIA's
    /// Vulkan compiler leaves some). Each row records its build.
    #[arg(long, value_delimiter = ',', default_values = ["default", "tax-free"], value_parser = Build::from_str)]
    build: Vec<Build>,
    /// Timed samples per case.
    #[arg(long, default_value_t = 30, value_parser = clap::value_parser!(u32).range(i64::from(MIN_SAMPLES)..=4096))]
    samples: u32,
    /// Bytes of the main buffer of the streaming experiments, in MiB (default 256,
    /// 4 with --quick, capped by the device).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    buffer_mib: Option<u64>,
    /// Matrix size of the 2-D experiments (transpose), columns x rows, e.g. 4096x4096
    /// or 1000x3000 (default 4096x4096 and 8192x8192 where the device allows).
    #[arg(long, value_parser = run::parse_matrix)]
    size: Option<(u32, u32)>,
    /// Seconds one submission may take before the device counts as hung.
    #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u64).range(1..))]
    timeout_s: u64,
}

/// The exit status of a command whose reader closed stdout (`membench list | head -1`):
/// 128 + SIGPIPE, as a shell reports a program the signal ended.
const BROKEN_PIPE_EXIT: u8 = 141;

fn main() -> ExitCode {
    // SAFETY: first in `main`, before any thread exists that could read the environment.
    unsafe { commands::quiet_device_select() };
    // Silent unless RUST_LOG asks: wgpu's own diagnostics, for an adapter that fails.
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("off")).init();
    let ran = run::stop::watch()
        .map_err(anyhow::Error::from)
        .and_then(|()| run_cli(Cli::parse()));
    let outcome = ran.and_then(|code| {
        std::io::stdout().flush().context("writing to stdout")?;
        Ok(code)
    });
    match outcome {
        Ok(code) => code,
        // The reader has all it wanted: nothing to say.
        Err(error) if broken_pipe(&error) => ExitCode::from(BROKEN_PIPE_EXIT),
        Err(error) => {
            eprintln!("membench: {error:#}");
            ExitCode::FAILURE
        }
    }
}

/// Whether `error` is stdout's reader having gone away.
fn broken_pipe(error: &anyhow::Error) -> bool {
    let gone = |e: &std::io::Error| e.kind() == std::io::ErrorKind::BrokenPipe;
    error.chain().any(|cause| {
        cause.downcast_ref::<std::io::Error>().is_some_and(gone)
            || matches!(cause.downcast_ref(), Some(membench::Error::Stdout(e)) if gone(e))
    })
}

/// The simulator's device presets, as `--device` accepts them.
fn preset_names() -> clap::builder::PossibleValuesParser {
    clap::builder::PossibleValuesParser::new(sim_device::presets().iter().map(|d| d.name))
}

/// What `membench run`'s flags ask for, refused where they contradict each other.
fn plan(args: RunArgs) -> anyhow::Result<Plan> {
    run::check_settings(&args.api, &args.build)?;
    Ok(Plan {
        destination: Destination::of(args.out, args.format)?,
        adapters: Adapters::of(args.adapter, args.concurrent)?,
        filters: args.filter,
        settings: RunSettings {
            quick: args.quick,
            samples: args.samples,
            buffer_bytes: args.buffer_mib.map(|mib| mib << 20),
            matrix: args.size,
            concurrent: None,
        },
        apis: args.api,
        builds: args.build,
        timeout: Duration::from_secs(args.timeout_s),
    })
}

fn run_cli(cli: Cli) -> anyhow::Result<ExitCode> {
    let out = &mut std::io::stdout();
    match cli.command {
        Command::Devices => commands::devices(out)?,
        Command::List {
            filter,
            emit: Some(emit),
            kernel_or_case_filter,
        } => commands::emit(out, emit, &filter, kernel_or_case_filter.as_deref())?,
        Command::List { filter, .. } => commands::list(out, &filter)?,
        Command::Run(args) => return Ok(ExitCode::from(plan(args)?.execute(out)?.exit_status())),
        Command::Simulate(args) if !args.validate.is_empty() => {
            let validating = commands::Validating {
                files: &args.validate,
                device: args.device.as_deref(),
                filters: &args.filter,
                calibrate_from: args.calibrate_from.as_deref(),
                no_calibrate: args.no_calibrate,
                verbose: args.verbose,
                format: args.format,
            };
            commands::validate(out, &validating)?;
        }
        Command::Simulate(args) => {
            commands::simulate(out, args.device.as_deref(), &args.filter, args.quick)?
        }
        Command::Compare(CompareArgs {
            csv,
            format,
            baseline: Some(baseline),
            threshold,
        }) => {
            let ok = commands::compare_to_baseline(out, &csv, &baseline, threshold, format)?;
            return Ok(ExitCode::from(u8::from(!ok)));
        }
        Command::Compare(args) => commands::compare(out, &args.csv, args.format)?,
        Command::Report(args) => commands::report(
            args.csv,
            &args.out,
            args.baseline.as_deref(),
            args.no_simulator,
        )?,
    }
    Ok(ExitCode::SUCCESS)
}
