//! The membench command line: `devices`, `list`, `run`, `kernel`, `simulate`, `compare`, `report`, `fleet`.
//! Clap and dispatch: the commands' bodies are the library's ([`membench::commands`],
//! [`membench::run::Plan`]); stdout's and stderr's errors end here.

#![warn(clippy::disallowed_macros)]

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use clap::{Parser, Subcommand};

use membench::judge::fleet;
use membench::sim::device as sim_device;
use membench::stderrln;
use membench::{commands, results, run};

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
        /// With --emit: a kernel name (e.g. `bank_row_col_pad`), or a case filter as
        /// --filter takes (e.g. copy/offset); without, --filter's cases.
        #[arg(requires = "emit")]
        kernel_or_case_filter: Option<String>,
    },
    /// Verify and time the suite (or the filtered part of it) on one adapter.
    Run(run::RunArgs),
    /// Your own WGSL compute kernel: verified against membench's interpreter of the
    /// same WGSL, timed on the GPU clock, placed against the device's memory levels,
    /// written as rows of family `kernel` (docs/kernel.md).
    Kernel(Box<membench::kernel::KernelArgs>),
    /// Predict every case from the simulator alone, for a device preset: no GPU needed.
    Simulate(SimulateArgs),
    /// Results CSVs of several devices side by side: GB/s per device, ratios to the
    /// first, predictions.
    Compare(CompareArgs),
    /// A static HTML report (charts as SVG, the claims checklist) of results CSVs.
    Report(ReportArgs),
    /// Many GPUs compared, one results file each (or more: a GPU is its UUID): per
    /// model and case the median, and the GPUs slower than it beyond --threshold.
    ///
    /// A GPU is named sick when it is slower across a family or a sweep, in a case slow
    /// in every run of it, or when it misses or fails a case most of its group measured;
    /// a case slow once, alone, is unsteady, printed with the command that measures it
    /// again.
    ///
    /// Exit status: 0 every GPU judged and healthy; 3 a GPU sick; 4 none sick but one
    /// unsteady (measure again); 5 none sick or unsteady, but a GPU in a group of fewer
    /// than three GPUs, or a file not read (without --allow-skips); 1 nothing read;
    /// 2 a usage error.
    Fleet(FleetArgs),
}

#[derive(clap::Args)]
struct FleetArgs {
    /// Results CSVs, one per GPU, or directories of them.
    #[arg(required = true, num_args = 1..)]
    inputs: Vec<PathBuf>,
    /// The slowdown from the model's median, in percent, that counts as slower (where it
    /// is beyond the fleet's noise too).
    #[arg(long, default_value_t = 100.0 * fleet::DEFAULT_THRESHOLD, value_parser = commands::parse_percent)]
    threshold: f64,
    #[arg(long, value_enum, default_value = "table")]
    format: results::Format,
    /// Also a report page of strip plots (a dot per GPU) into this directory.
    #[arg(long)]
    report: Option<PathBuf>,
    /// A file that cannot be read is listed and leaves the exit status as the rest
    /// decide it (without: exit 5 where nothing worse is found).
    #[arg(long)]
    allow_skips: bool,
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
    /// The Simulator section judges the predictions each row recorded when it was
    /// measured (its `sim_*` columns), predicting now only a row that has none: seconds.
    /// With this, every row is predicted again by the current simulator, as `simulate
    /// --validate` does: minutes per file of a full run in a release build.
    #[arg(long, conflicts_with = "no_simulator")]
    resimulate: bool,
    /// Leave the Simulator section out.
    #[arg(long)]
    no_simulator: bool,
}

impl ReportArgs {
    /// The predictions the Simulator section judges; none where it is left out.
    fn predictions(&self) -> Option<membench::validate::Predictions> {
        use membench::validate::Predictions;
        match (self.no_simulator, self.resimulate) {
            (true, _) => None,
            (false, true) => Some(Predictions::Afresh),
            (false, false) => Some(Predictions::Recorded),
        }
    }
}

#[derive(clap::Args)]
struct SimulateArgs {
    /// Device preset (default h100; with --validate, the one closest to each file's
    /// device); `list` prints the presets and their sources.
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

/// The exit status of a usage error, as clap's.
const USAGE_EXIT: u8 = 2;

/// The exit status of a command whose reader closed stdout (`membench list | head -1`)
/// or stderr: 128 + SIGPIPE, as a shell reports a program the signal ended.
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
    let code = match outcome {
        Ok(code) => code,
        // The reader has all it wanted: nothing to say.
        Err(error) if broken_pipe(&error) => ExitCode::from(BROKEN_PIPE_EXIT),
        // Flags that contradict each other, as clap's own usage errors.
        Err(error) if matches!(error.downcast_ref(), Some(membench::Error::Usage(_))) => {
            stderrln!("membench: {}", said(&error));
            ExitCode::from(USAGE_EXIT)
        }
        Err(error) => {
            stderrln!("membench: {}", said(&error));
            ExitCode::FAILURE
        }
    };
    // A note that standard error did not take fails a command that did its work, as
    // stdout's failures do, quietly: there is nowhere left to say it.
    match membench::stderr::failure() {
        Some(std::io::ErrorKind::BrokenPipe) if code == ExitCode::SUCCESS => {
            ExitCode::from(BROKEN_PIPE_EXIT)
        }
        Some(_) if code == ExitCode::SUCCESS => ExitCode::FAILURE,
        _ => code,
    }
}

/// `error` and its causes as a terminal may show them: what a file, a driver or the
/// environment put in them cannot colour a line or forge one.
fn said(error: &anyhow::Error) -> String {
    membench::text::shown_lines(&format!("{error:#}"))
}

/// Whether `error` is stdout's reader having gone away.
fn broken_pipe(error: &anyhow::Error) -> bool {
    let gone = |e: &std::io::Error| e.kind() == std::io::ErrorKind::BrokenPipe;
    error.chain().any(|cause| {
        cause.downcast_ref::<std::io::Error>().is_some_and(gone)
            || matches!(cause.downcast_ref(), Some(membench::Error::Stdout(e)) if gone(e))
    })
}

/// The simulator's device presets, as `--device` accepts them, and `list`.
fn preset_names() -> clap::builder::PossibleValuesParser {
    let names = sim_device::presets().iter().map(|d| d.name);
    clap::builder::PossibleValuesParser::new(names.chain([commands::PRESET_LIST]))
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
        Command::Run(args) => return Ok(ExitCode::from(args.plan()?.execute(out)?.exit_status())),
        Command::Kernel(args) => {
            return Ok(ExitCode::from(commands::kernel(out, *args)?.exit_status()));
        }
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
        Command::Report(args) => {
            let predictions = args.predictions();
            commands::report(args.csv, &args.out, args.baseline.as_deref(), predictions)?
        }
        Command::Fleet(args) => {
            let options = fleet::Options {
                threshold: args.threshold / 100.0,
                allow_skips: args.allow_skips,
            };
            let code = commands::fleet(out, &args.inputs, options, args.format, args.report)?;
            return Ok(ExitCode::from(code));
        }
    }
    Ok(ExitCode::SUCCESS)
}
