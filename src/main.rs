//! The membench command line: `devices`, `list`, `run`, `simulate`, `compare`, `report`.

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::time::{Duration, Instant};

use anyhow::Context as _;
use clap::{Parser, Subcommand};
use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

#[cfg(feature = "cuda")]
use membench::backend::cuda;
use membench::backend::wgpu::{self as gpu, GpuContext};
use membench::measure::{MIN_SAMPLES, Stats, SuiteSampler};
use membench::report::{self, compare};
use membench::run::{
    self, Backends, Lockstep, Outcome, Output, Party, Progress, RunSettings, Session,
};
use membench::sim::device as sim_device;
use membench::suite::{
    Api, Build, Case, CaseId, Experiment, Family, Measure, REGISTRY, Setting, Sizing,
};
use membench::validate;
use membench::{files, results};

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
        emit: Option<Emit>,
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

/// What `list --emit` prints.
#[derive(Clone, Copy, clap::ValueEnum)]
enum Emit {
    /// The flat WGSL the GPU and the simulator run (`shaders/`, preprocessed).
    Wgsl,
    /// The PTX NVRTC makes of the CUDA twins (`shaders/cuda/`) for compute_90.
    #[cfg(feature = "cuda")]
    Ptx,
    /// The same in the rolled build (run-time trip counts kept rolled).
    #[cfg(feature = "cuda")]
    PtxRolled,
    /// The tax-free build's SPIR-V (overrides resolved, runtime checks off, barriers
    /// at Workgroup scope) of each case's kernel, as text.
    Spirv,
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
    #[arg(long, requires = "baseline", default_value_t = 5.0, value_parser = parse_percent)]
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
    #[arg(long, value_delimiter = ',', default_values = ["wgpu", "cuda"], value_parser = parse_name::<Api>)]
    api: Vec<Api>,
    /// The builds to measure, comma-separated, each in the apis that have it:
    /// default (what a plain wgpu program gets; NVRTC's twins), tax-free (wgpu:
    /// runtime checks off, barriers at the WGSL spec's scope; unchecked where SPIR-V
    /// passthrough is not offered), unchecked (wgpu: checks off, naga's barriers),
    /// rolled (CUDA: loops with a run-time trip count kept rolled, as NVIDIA's
    /// Vulkan compiler leaves some). Each row records its build.
    #[arg(long, value_delimiter = ',', default_values = ["default", "tax-free"], value_parser = parse_name::<Build>)]
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
    #[arg(long, value_parser = parse_matrix)]
    size: Option<(u32, u32)>,
    /// Seconds one submission may take before the device counts as hung.
    #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u64).range(1..))]
    timeout_s: u64,
}

/// `print!` that returns the error of a stdout that takes nothing (a closed pipe, a
/// full disk) instead of panicking.
macro_rules! out {
    ($($arg:tt)*) => {
        write!(std::io::stdout(), $($arg)*).context(STDOUT)
    };
}

/// `println!`, as [`out!`].
macro_rules! outln {
    ($($arg:tt)*) => {
        writeln!(std::io::stdout(), $($arg)*).context(STDOUT)
    };
}

/// What a failed write to stdout says.
const STDOUT: &str = "writing to stdout";

/// The exit status of a command whose reader closed stdout (`membench list | head -1`):
/// 128 + SIGPIPE, as a shell reports a program the signal ended.
const BROKEN_PIPE_EXIT: u8 = 141;

fn main() -> ExitCode {
    quiet_device_select();
    // Silent unless RUST_LOG asks: wgpu's own diagnostics, for an adapter that fails.
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("off")).init();
    let ran = watch_signals().and_then(|()| run_cli(Cli::parse()));
    let outcome = ran.and_then(|code| {
        std::io::stdout().flush().context(STDOUT)?;
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

/// Turns Mesa's device-select Vulkan layer off where there is no display server: the
/// layer asks Wayland for the display's GPU, which prints `XDG_RUNTIME_DIR is invalid`
/// twice per listing and cannot answer; membench picks its adapter itself. A user's
/// own `NODEVICE_SELECT` or `MESA_VK_DEVICE_SELECT` is left as it is.
fn quiet_device_select() {
    let set = |name| std::env::var_os(name).is_some();
    if [
        "WAYLAND_DISPLAY",
        "DISPLAY",
        "NODEVICE_SELECT",
        "MESA_VK_DEVICE_SELECT",
    ]
    .into_iter()
    .any(set)
    {
        return;
    }
    // SAFETY: called first in `main`, before any thread exists that could read the
    // environment.
    unsafe { std::env::set_var("NODEVICE_SELECT", "1") };
}

/// Whether `error` is stdout's reader having gone away.
fn broken_pipe(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// Set by the first SIGINT, SIGTERM or SIGHUP during a run: it stops after the case
/// under way, predicts what it measured, saves and prints the summary. A second
/// signal, or one outside a run, exits at once, once no file is half written.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// The signal that set [`INTERRUPTED`]; the run exits with 128 + it, as a shell
/// reports a program the signal ended (130 for Ctrl-C, 143 for SIGTERM).
static STOPPED_BY: AtomicI32 = AtomicI32::new(0);

/// Whether a run is under way that stops at the end of a case on a first signal.
static STOPS_GRACEFULLY: AtomicBool = AtomicBool::new(false);

/// Handles SIGINT, SIGTERM (a scheduler's time limit) and SIGHUP (a closed terminal)
/// alike on a thread of their own, and catches SIGXFSZ.
#[cfg(unix)]
fn watch_signals() -> anyhow::Result<()> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM, SIGXFSZ};
    // Caught, a write past `ulimit -f` fails with an error, whose path removes the
    // temporary file, instead of ending the process in the middle of it.
    signal_hook::flag::register(SIGXFSZ, std::sync::Arc::new(AtomicBool::new(false)))
        .context("catching SIGXFSZ")?;
    let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP])
        .context("catching signals")?;
    std::thread::spawn(move || {
        for signal in signals.forever() {
            let name = match signal {
                SIGINT => "interrupted",
                SIGTERM => "terminated (SIGTERM)",
                _ => "hung up (SIGHUP)",
            };
            if STOPS_GRACEFULLY.load(Ordering::SeqCst) && !INTERRUPTED.swap(true, Ordering::SeqCst)
            {
                STOPPED_BY.store(signal, Ordering::SeqCst);
                eprintln!(
                    "membench: {name}: stopping after this case, with its predictions and \
                     summary (a second signal quits at once)"
                );
                continue;
            }
            let _no_half_file = files::quiesce();
            std::process::exit(128 + signal);
        }
    });
    Ok(())
}

/// Ctrl-C, as [`watch_signals`] handles it on Unix.
#[cfg(not(unix))]
fn watch_signals() -> anyhow::Result<()> {
    const SIGINT: i32 = 2;
    ctrlc::set_handler(|| {
        if STOPS_GRACEFULLY.load(Ordering::SeqCst) && !INTERRUPTED.swap(true, Ordering::SeqCst) {
            STOPPED_BY.store(SIGINT, Ordering::SeqCst);
            eprintln!(
                "membench: interrupted: stopping after this case (Ctrl-C again to quit at once)"
            );
            return;
        }
        let _no_half_file = files::quiesce();
        std::process::exit(128 + SIGINT);
    })
    .context("installing the Ctrl-C handler")
}

/// The exit status of a run a signal stopped.
fn stopped_exit() -> ExitCode {
    let signal = STOPPED_BY.load(Ordering::SeqCst);
    ExitCode::from(u8::try_from(128 + signal).unwrap_or(u8::MAX))
}

/// The preset `simulate` predicts on without `--device` (or `--validate`).
const DEFAULT_PRESET: &str = "h100";

/// The simulator's device presets, as `--device` accepts them.
fn preset_names() -> clap::builder::PossibleValuesParser {
    clap::builder::PossibleValuesParser::new(sim_device::presets().iter().map(|d| d.name))
}

/// One of the names of `T` (an api, a build), as the CSV writes it.
fn parse_name<T: std::str::FromStr<Err = String>>(text: &str) -> Result<T, String> {
    text.parse()
}

/// A percentage: a finite number of at least 0.
fn parse_percent(text: &str) -> Result<f64, String> {
    text.trim()
        .parse::<f64>()
        .ok()
        .filter(|p| p.is_finite() && *p >= 0.0)
        .ok_or_else(|| format!("`{text}` is not a percentage of at least 0"))
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
        Command::List {
            filter,
            emit: Some(Emit::Wgsl),
            kernel_or_case_filter,
        } => emit_wgsl(&filter, kernel_or_case_filter.as_deref()),
        #[cfg(feature = "cuda")]
        Command::List {
            filter,
            emit: Some(Emit::Ptx),
            kernel_or_case_filter,
        } => emit_ptx(&filter, kernel_or_case_filter.as_deref(), Build::Default),
        #[cfg(feature = "cuda")]
        Command::List {
            filter,
            emit: Some(Emit::PtxRolled),
            kernel_or_case_filter,
        } => emit_ptx(&filter, kernel_or_case_filter.as_deref(), Build::Rolled),
        Command::List {
            filter,
            emit: Some(Emit::Spirv),
            kernel_or_case_filter,
        } => emit_spirv(&filter, kernel_or_case_filter.as_deref()),
        Command::List { filter, .. } => list(&filter),
        Command::Run(args) => run(args),
        Command::Simulate(args) => simulate(args),
        Command::Compare(CompareArgs {
            csv,
            format,
            baseline: Some(baseline),
            threshold,
        }) => {
            format.taken_by("compare", compare::FORMATS)?;
            let judged_against = results::load(std::slice::from_ref(&baseline))?;
            let others = results::load(&csv)?;
            let judged = compare::judge(&judged_against, &others, threshold / 100.0);
            if judged.is_empty() {
                anyhow::bail!(
                    "no case of {} was measured in {} in the same api/build and size",
                    csv.iter()
                        .map(|p| p.display().to_string())
                        .collect::<Vec<_>>()
                        .join(", "),
                    baseline.display()
                );
            }
            out!(
                "{}",
                compare::render_verdicts(&judged, &baseline, threshold / 100.0, format)?
            )?;
            Ok(if judged.iter().any(|j| j.regression) {
                ExitCode::FAILURE
            } else {
                ExitCode::SUCCESS
            })
        }
        Command::Compare(args) => {
            args.format.taken_by("compare", compare::FORMATS)?;
            let devices = results::load(&args.csv)?;
            if devices.len() < 2 {
                anyhow::bail!(
                    "{} holds one device in one api/build: compare needs two (another file, \
                     or a run with more than one --build)",
                    args.csv[0].display()
                );
            }
            out!("{}", compare::render(&devices, args.format)?)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Report(args) => report(args),
    }
}

fn devices() -> anyhow::Result<ExitCode> {
    let adapters = gpu::adapters(&gpu::instance()?);
    for (index, adapter) in adapters.iter().enumerate() {
        outln!("{}", gpu::adapter_report(index, adapter))?;
    }
    #[cfg(feature = "cuda")]
    outln!("{}", cuda::devices_report())?;
    if adapters.is_empty() {
        anyhow::bail!(membench::Error::NoAdapter(String::new()));
    }
    Ok(ExitCode::SUCCESS)
}

fn list(filters: &[String]) -> anyhow::Result<ExitCode> {
    // Without a device, cases are sized for a nominal large GPU.
    let selected = membench::suite::select(&Sizing::nominal(false), filters)?;
    for experiment in REGISTRY {
        let params: Vec<String> = selected
            .iter()
            .filter(|(e, _)| std::ptr::eq(*e, experiment))
            .map(|(_, case)| case.params.to_string())
            .collect();
        if params.is_empty() {
            continue;
        }
        // Where the kernel's WGSL comes from: its file, or a source of
        // shaders/permutations and the keys it is made with.
        let wgsl = |kernel: &str| match membench::suite::shaders::origin(kernel) {
            Some(origin) if origin != format!("shaders/{kernel}.wgsl") => {
                format!("{kernel}: {origin}")
            }
            _ => format!("shaders/{kernel}.wgsl"),
        };
        let runs = match (experiment.kernel, experiment.measure) {
            (Some(kernel), Measure::Kernel) => wgsl(kernel),
            (Some(kernel), Measure::Transfer(_)) => {
                format!("host transfers and {}", wgsl(kernel))
            }
            (None, _) => "host transfers, no kernel".to_owned(),
        };
        outln!("{}  ({runs})", experiment.name())?;
        match report::claims::naming(experiment).as_slice() {
            [] => outln!("  claims: none (a reference case)")?,
            named => {
                outln!("  claims:")?;
                for claim in named {
                    outln!("    {}: {}", claim.id, claim.claim)?;
                }
            }
        }
        outln!("  cases: {}", params.join(" "))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `list --emit wgsl`: the flat WGSL of the kernel named `target`, or of the kernels
/// of the cases matching `target` (else `filters`), each once, in registry order.
fn emit_wgsl(filters: &[String], target: Option<&str>) -> anyhow::Result<ExitCode> {
    let kernels: Vec<&str> = match target {
        Some(kernel) if membench::suite::shaders::source(kernel).is_some() => vec![kernel],
        _ => {
            let filters = target.map_or_else(|| filters.to_vec(), |t| vec![t.to_owned()]);
            let selected =
                membench::suite::select(&Sizing::nominal(false), &filters).map_err(|_| {
                    anyhow::anyhow!(
                        "no kernel or case matches \"{}\" (see membench list)",
                        filters.join(",")
                    )
                })?;
            let mut kernels = Vec::new();
            for kernel in selected.iter().filter_map(|(e, _)| e.kernel) {
                if !kernels.contains(&kernel) {
                    kernels.push(kernel);
                }
            }
            kernels
        }
    };
    if kernels.is_empty() {
        anyhow::bail!("the matching cases run no kernel: host transfers only");
    }
    for kernel in kernels {
        let source = membench::suite::shaders::source(kernel)
            .with_context(|| format!("kernel {kernel} has no WGSL in shaders/"))?;
        outln!("// kernel: {kernel}")?;
        out!("{source}")?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `list --emit ptx`: the PTX of the CUDA twins of the cases of the kernel (WGSL kernel
/// or twin source) named `target`, or of the cases matching `target` (else `filters`).
#[cfg(feature = "cuda")]
fn emit_ptx(filters: &[String], target: Option<&str>, build: Build) -> anyhow::Result<ExitCode> {
    let selected = emitted_cases(filters, target)?;
    out!(
        "{}",
        cuda::compile::ptx_listing(&selected, build, cuda::compile::DEFAULT_ARCH)?
    )?;
    Ok(ExitCode::SUCCESS)
}

/// `list --emit spirv`: the tax-free SPIR-V of each distinct kernel and override
/// constants among the cases `emitted_cases` selects.
fn emit_spirv(filters: &[String], target: Option<&str>) -> anyhow::Result<ExitCode> {
    let mut seen = Vec::new();
    for (experiment, case) in emitted_cases(filters, target)? {
        let Some(kernel) = experiment.kernel else {
            continue;
        };
        if seen.contains(&(kernel, case.overrides.clone())) {
            continue;
        }
        let source = membench::suite::shaders::source(kernel)
            .with_context(|| format!("kernel {kernel} has no WGSL in shaders/"))?;
        let text = gpu::spirv::tax_free_text(kernel, source, &case.overrides)?;
        outln!("; kernel: {kernel} for {}", case.id(experiment))?;
        out!("{text}")?;
        seen.push((kernel, case.overrides));
    }
    if seen.is_empty() {
        anyhow::bail!("the matching cases run no kernel: host transfers only");
    }
    Ok(ExitCode::SUCCESS)
}

/// The cases `list --emit` prints: those of the kernel (or CUDA twin) named `target`,
/// else of the case filter `target`, else of `filters`, at nominal size.
fn emitted_cases(
    filters: &[String],
    target: Option<&str>,
) -> anyhow::Result<Vec<(&'static membench::suite::Experiment, membench::suite::Case)>> {
    let sizing = Sizing::nominal(false);
    let names_kernel = |experiment: &membench::suite::Experiment, name: &str| {
        experiment.kernel == Some(name)
            || matches!(experiment.twin, membench::suite::Twin::Cuda(t) if t.source == name)
    };
    Ok(match target {
        Some(name) if REGISTRY.iter().any(|e| names_kernel(e, name)) => {
            membench::suite::select(&sizing, &[])?
                .into_iter()
                .filter(|(e, _)| names_kernel(e, name))
                .collect()
        }
        _ => {
            let filters = target.map_or_else(|| filters.to_vec(), |t| vec![t.to_owned()]);
            membench::suite::select(&sizing, &filters).map_err(|_| {
                anyhow::anyhow!(
                    "no kernel or case matches \"{}\" (see membench list)",
                    filters.join(",")
                )
            })?
        }
    })
}

/// Where `--out` sends a run's rows.
enum Destination {
    /// A results file, saved after every case.
    File(PathBuf),
    /// Stdout, at the end, in this format.
    Stdout(results::Format),
}

impl Destination {
    /// `--out` and `--format` as given; `None` for the device's default file.
    fn of(args: &RunArgs) -> anyhow::Result<Option<Self>> {
        match (args.out.as_deref(), args.format) {
            (Some(out), format) if out.as_os_str() == "-" => Ok(Some(Destination::Stdout(
                format.unwrap_or(results::Format::Csv),
            ))),
            (_, Some(_)) => {
                anyhow::bail!("--format chooses what `--out -` prints; a results file is CSV")
            }
            (out, None) => Ok(out.map(|out| Destination::File(out.to_owned()))),
        }
    }
}

/// `--adapter` for every adapter.
const ALL_ADAPTERS: &str = "all";

fn run(args: RunArgs) -> anyhow::Result<ExitCode> {
    // Each api measures the builds it has; asking for none it has measures nothing.
    if Setting::selected(&args.api, &args.build).is_empty() {
        let names = |names: Vec<String>| names.join(",");
        anyhow::bail!(
            "no api of --api {} has a build of --build {}: tax-free and unchecked are \
             wgpu's, rolled is CUDA's, default both's",
            names(args.api.iter().map(ToString::to_string).collect()),
            names(args.build.iter().map(ToString::to_string).collect()),
        );
    }
    let destination = Destination::of(&args)?;
    if args.concurrent && args.adapter.as_deref() != Some(ALL_ADAPTERS) {
        anyhow::bail!("--concurrent measures every adapter at once: it needs --adapter all");
    }
    STOPS_GRACEFULLY.store(true, Ordering::SeqCst);
    if args.adapter.as_deref() != Some(ALL_ADAPTERS) {
        return run_on(&args, args.adapter.as_deref(), destination, None);
    }
    if destination.is_some() {
        anyhow::bail!(
            "--out names one file: with --adapter all each adapter writes its own default file"
        );
    }
    let infos: Vec<wgpu::AdapterInfo> = gpu::adapters(&gpu::instance()?)
        .iter()
        .map(wgpu::Adapter::get_info)
        .collect();
    if infos.is_empty() {
        anyhow::bail!(membench::Error::NoAdapter(String::new()));
    }
    if args.concurrent {
        return run_concurrent(&args, &infos);
    }
    let paths = adapter_paths(&infos, run_settings(&args, None).sizing());
    let mut code = ExitCode::SUCCESS;
    for (index, (info, out)) in infos.iter().zip(paths).enumerate() {
        if INTERRUPTED.load(Ordering::SeqCst) {
            break;
        }
        eprintln!(
            "membench: adapter {index} of {}: {}",
            infos.len(),
            gpu::describe(info)
        );
        let ran = run_on(
            &args,
            Some(&index.to_string()),
            Some(Destination::File(out)),
            None,
        );
        code = worse(code, adapter_code(index, info, ran));
    }
    Ok(code)
}

/// `--adapter all --concurrent`: every adapter in a thread of its own, each case
/// measured on all of them at once. An adapter that fails, or has measured its last
/// case, leaves the others measuring.
fn run_concurrent(args: &RunArgs, infos: &[wgpu::AdapterInfo]) -> anyhow::Result<ExitCode> {
    if let [only] = infos {
        anyhow::bail!(
            "--concurrent needs two adapters or more; there is one: {}",
            gpu::describe(only)
        );
    }
    let adapters = u32::try_from(infos.len()).context("counting the adapters")?;
    // A filter that leaves none of the families' cases is refused once, not per adapter.
    concurrent_cases(
        membench::suite::select(&Sizing::nominal(args.quick), &args.filter)?,
        &args.filter,
    )?;
    let paths = adapter_paths(infos, run_settings(args, Some(adapters)).sizing());
    let lockstep = Lockstep::new(infos.len());
    let codes: Vec<ExitCode> = std::thread::scope(|scope| {
        let threads: Vec<_> = lockstep
            .parties()
            .into_iter()
            .zip(paths)
            .enumerate()
            .map(|(index, (party, out))| {
                let info = &infos[index];
                scope.spawn(move || {
                    let concurrent = Concurrent {
                        index,
                        adapters,
                        party,
                    };
                    let ran = run_on(
                        args,
                        Some(&index.to_string()),
                        Some(Destination::File(out)),
                        Some(&concurrent),
                    );
                    adapter_code(index, info, ran)
                })
            })
            .collect();
        threads
            .into_iter()
            // A panic has printed its message; its adapter failed.
            .map(|thread| thread.join().unwrap_or(ExitCode::FAILURE))
            .collect()
    });
    Ok(codes.into_iter().fold(ExitCode::SUCCESS, worse))
}

/// The families `--concurrent` measures: the copy family, each GPU's own memory, and
/// the transfer family, the host's link and memory, which the GPUs share.
const CONCURRENT_FAMILIES: [Family; 2] = [Family::Copy, Family::Transfer];

/// Those of `cases` (selected by `filters`) that `--concurrent` measures; none is an
/// error.
fn concurrent_cases(
    cases: Vec<(&'static Experiment, Case)>,
    filters: &[String],
) -> anyhow::Result<Vec<(&'static Experiment, Case)>> {
    let kept: Vec<_> = cases
        .into_iter()
        .filter(|(experiment, _)| CONCURRENT_FAMILIES.contains(&experiment.family))
        .collect();
    if kept.is_empty() {
        anyhow::bail!(
            "--concurrent measures the copy and transfer families: --filter {} selects none \
             of their cases",
            filters.join(",")
        );
    }
    Ok(kept)
}

/// One adapter of `--adapter all --concurrent`.
struct Concurrent<'l> {
    /// Its index, which its progress lines start with.
    index: usize,
    /// The adapters measuring at once, this one included.
    adapters: u32,
    /// Its place in the lockstep the adapters measure in.
    party: Party<'l>,
}

/// The exit status of one adapter's run (`ran`) under `--adapter all`, its error
/// reported: one adapter that cannot run must not cost the others their results.
/// An adapter that runs no compute shaders is skipped, not failed.
fn adapter_code(index: usize, info: &wgpu::AdapterInfo, ran: anyhow::Result<ExitCode>) -> ExitCode {
    ran.unwrap_or_else(|error| {
        if let Some(membench::Error::NoCompute { .. }) = error.downcast_ref() {
            eprintln!("membench: adapter {index} skipped: {error:#}");
            return ExitCode::SUCCESS;
        }
        eprintln!("membench: adapter {index} ({}): {error:#}", info.name);
        ExitCode::FAILURE
    })
}

/// The exit status of several runs: the last that is not a success.
fn worse(code: ExitCode, next: ExitCode) -> ExitCode {
    if next == ExitCode::SUCCESS {
        code
    } else {
        next
    }
}

/// The default results file of each adapter; adapters that would share one (two
/// GPUs of the same model on the same backend) get their index appended.
fn adapter_paths(infos: &[wgpu::AdapterInfo], sizing: membench::suite::RunSizing) -> Vec<PathBuf> {
    let paths = infos
        .iter()
        .map(|info| identity(info, sizing).default_path())
        .collect();
    results::distinct_paths(paths)
}

/// The identity of the results of `info` at `sizing`.
fn identity(info: &wgpu::AdapterInfo, sizing: membench::suite::RunSizing) -> results::Identity {
    results::Identity {
        device: info.name.clone(),
        backend: format!("{:?}", info.backend).to_lowercase(),
        sizing,
    }
}

/// The settings of `args` that change what is measured, with `concurrent` adapters
/// measuring at once (`None` alone).
fn run_settings(args: &RunArgs, concurrent: Option<u32>) -> RunSettings {
    RunSettings {
        quick: args.quick,
        samples: args.samples,
        buffer_bytes: args.buffer_mib.map(|mib| mib << 20),
        matrix: args.size,
        concurrent,
    }
}

/// The run on one adapter (`--adapter`'s selector); `concurrent` where it measures at
/// the same time as others.
fn run_on(
    args: &RunArgs,
    adapter: Option<&str>,
    destination: Option<Destination>,
    concurrent: Option<&Concurrent>,
) -> anyhow::Result<ExitCode> {
    let started = Instant::now();
    let settings = run_settings(args, concurrent.map(|c| c.adapters));
    // Where several adapters print at once, which one a line is of.
    let tag = concurrent.map_or_else(String::new, |c| format!("adapter {}: ", c.index));
    let ctx = GpuContext::new(adapter, Duration::from_secs(args.timeout_s))?;
    let sizing = ctx.sizing(settings.quick, settings.buffer_bytes, settings.matrix)?;
    let mut cases = membench::suite::select(&sizing, &args.filter)?;
    if concurrent.is_some() {
        cases = concurrent_cases(cases, &args.filter)?;
    }
    let identity = identity(&ctx.info, settings.sizing());
    let destination = destination.unwrap_or_else(|| Destination::File(identity.default_path()));
    // A malformed results file, one of another identity, or a file or directory that
    // cannot be written stops the run before anything is measured.
    let case_rows = run::case_rows(&membench::suite::select(&sizing, &[])?);
    let old_rows = match &destination {
        Destination::File(path) => {
            files::check_writable(path)?;
            identity.admit(path, results::read_existing(path)?, &case_rows)?
        }
        Destination::Stdout(_) => Vec::new(),
    };
    let backends = Backends::new(
        &ctx,
        &args.api,
        &args.build,
        Duration::from_secs(args.timeout_s),
    );
    let measurers = backends.measurers();
    if measurers.is_empty() {
        anyhow::bail!("nothing to measure with: no backend asked for is available (see above)");
    }
    let settings_text: Vec<String> = measurers
        .iter()
        .map(|m| m.backend.setting().to_string())
        .collect();
    let target = match &destination {
        Destination::File(path) => path.display().to_string(),
        Destination::Stdout(format) => {
            // Before anything is measured: a stdout that takes nothing stops the run now.
            out!("{}", results::head(*format)?)?;
            std::io::stdout().flush().context(STDOUT)?;
            "stdout".to_owned()
        }
    };
    let measurements: usize = cases
        .iter()
        .map(|(experiment, _)| {
            measurers
                .iter()
                .filter(|m| m.backend.takes(experiment))
                .count()
        })
        .sum();
    eprintln!(
        "membench: {tag}{} cases, {measurements} measurements on {} in {} at sizing {}, \
         results to {target}",
        cases.len(),
        gpu::describe(&ctx.info),
        settings_text.join(", "),
        identity.sizing,
    );
    let session = Session {
        measurers: &measurers,
        settings: &settings,
        device: &ctx.info.name,
        beside: !sizing.software,
        known_rows: &old_rows,
        output: match &destination {
            Destination::File(path) => Some(Output {
                path,
                identity: &identity,
                case_rows: &case_rows,
            }),
            Destination::Stdout(_) => None,
        },
        stop: Some(&INTERRUPTED),
        lockstep: concurrent.map(|c| &c.party),
    };
    let progress = Bars::new(measurements, cases.len(), &tag)?;
    let ran = session.run(&cases, &mut SuiteSampler::new(settings.samples), &progress)?;
    progress.finish();
    eprintln!(
        "membench: {tag}simulated in {:.1} s{} with the {}",
        ran.predicted.seconds,
        if session.beside {
            ", beside the measurements,"
        } else {
            ""
        },
        run::describe_model(&ran.predicted.model)
    );
    let summary = format!(
        "{}\n{} measurements{}, {} failed, in {:.1} s; peak host memory {}; results in \
         {target}\n",
        results::summary(&ran.rows),
        ran.rows.len(),
        if ran.interrupted {
            " (interrupted)"
        } else {
            ""
        },
        ran.failed,
        started.elapsed().as_secs_f64(),
        peak_resident().unwrap_or_else(|| "unknown".to_owned()),
    );
    match destination {
        Destination::File(_) => out!("{summary}")?,
        Destination::Stdout(format) => {
            eprint!("{summary}");
            if let Err(error) = out!("{}", results::body(&ran.rows, format)?) {
                // The rows are not lost with stdout.
                let kept =
                    std::env::temp_dir().join(format!("membench-rows-{}.csv", std::process::id()));
                results::write(&kept, &ran.rows)?;
                eprintln!(
                    "membench: stdout took not all rows; all {} are in {}",
                    ran.rows.len(),
                    kept.display()
                );
                return Err(error);
            }
        }
    }
    Ok(if ran.interrupted {
        stopped_exit()
    } else if ran.failed > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// A run's progress: one bar for the cases, one for the predictions; where standard
/// error is no terminal (a log, CI), or several adapters print at once, a line per
/// measurement instead, with the time since the start, so that a log shows where a run
/// spends its time.
struct Bars {
    cases: ProgressBar,
    simulation: ProgressBar,
    _bars: MultiProgress,
    lines: Option<Instant>,
    /// What each line starts with: the adapter, where several print at once.
    tag: String,
}

impl Bars {
    /// Bars for `measurements` (a case in each setting that takes it) and the
    /// predictions of `cases`; lines, each starting with `tag`, where it is not empty.
    fn new(measurements: usize, cases: usize, tag: &str) -> anyhow::Result<Self> {
        let lines = (!tag.is_empty() || !std::io::IsTerminal::is_terminal(&std::io::stderr()))
            .then(Instant::now);
        let bars = match lines {
            Some(_) => MultiProgress::with_draw_target(ProgressDrawTarget::hidden()),
            None => MultiProgress::new(),
        };
        let simulation = bars.add(bar(cases)?);
        simulation.set_message("simulating (once the model is calibrated)");
        Ok(Bars {
            cases: bars.insert(0, bar(measurements)?),
            simulation,
            _bars: bars,
            lines,
            tag: tag.to_owned(),
        })
    }

    fn finish(&self) {
        self.cases.finish_and_clear();
        self.simulation.finish_and_clear();
    }
}

impl Progress for Bars {
    fn started(&self, id: &CaseId, setting: Setting) {
        self.cases.set_message(format!("{id} ({setting})"));
    }

    fn finished(&self, id: &CaseId, setting: Setting, outcome: &Outcome) {
        if let Some(start) = self.lines {
            let what = match outcome {
                Outcome::Measured(timing) => Stats::of(&timing.samples_ns)
                    .map_or_else(String::new, |s| format!("{:.3} us", s.median / 1e3)),
                Outcome::Failed(reason) => format!("FAILED: {reason}"),
                Outcome::Skipped(reason) => format!("skipped: {reason}"),
                Outcome::Predicted => "predicted".to_owned(),
            };
            let line = format!(
                "[{:7.1} s] {id} ({setting}): {what}",
                start.elapsed().as_secs_f64()
            );
            // Every line of a multi-line failure tagged, all written at once.
            let tagged: String = line.lines().map(|l| format!("{}{l}\n", self.tag)).collect();
            eprint!("{tagged}");
            return;
        }
        match outcome {
            Outcome::Failed(reason) => self
                .cases
                .println(format!("FAILED {id} ({setting}): {reason}")),
            Outcome::Skipped(reason) => self
                .cases
                .println(format!("skipped {id} ({setting}): {reason}")),
            Outcome::Measured(_) | Outcome::Predicted => {}
        }
        self.cases.inc(1);
    }

    fn predicting(&self) {
        self.simulation.set_message("simulating");
    }

    fn predicted(&self) {
        self.simulation.inc(1);
    }
}

fn simulate(args: SimulateArgs) -> anyhow::Result<ExitCode> {
    // clap accepted only a preset's name.
    let preset = match &args.device {
        Some(name) => match sim_device::preset(name) {
            Some(model) => Some(model),
            None => anyhow::bail!("unknown device preset {name:?}"),
        },
        None => None,
    };
    if !args.validate.is_empty() {
        return validate(&args, preset);
    }
    let model = match preset.or_else(|| sim_device::preset(DEFAULT_PRESET)) {
        Some(model) => model,
        None => anyhow::bail!("no device preset {DEFAULT_PRESET:?}"),
    };
    // Sized as for a large GPU (or --quick), without touching a device.
    let cases = membench::suite::select(&Sizing::nominal(args.quick), &args.filter)?;
    eprintln!(
        "membench: simulating {} cases on the {} preset ({})",
        cases.len(),
        model.name,
        model.description
    );
    let progress = bar(cases.len())?;
    let predictions = run::predict_cases(&cases, model, &|| progress.inc(1));
    progress.finish_and_clear();
    let sizing = membench::suite::RunSizing {
        quick: args.quick,
        ..membench::suite::RunSizing::default()
    };
    let rows = run::predicted_rows(&cases, sizing, &predictions, model);
    out!("{}", results::summary(&rows))?;
    Ok(ExitCode::SUCCESS)
}

/// `simulate --validate`: every file read first (a bad one stops before anything is
/// predicted), then validated in turn.
fn validate(
    args: &SimulateArgs,
    preset: Option<&'static sim_device::DeviceModel>,
) -> anyhow::Result<ExitCode> {
    args.format
        .taken_by("simulate --validate", validate::FORMATS)?;
    membench::suite::check_filters(&args.filter)?;
    let files: Vec<(PathBuf, Vec<results::Row>)> = args
        .validate
        .iter()
        .map(|path| {
            let rows = results::read_device(path)?;
            Ok((path.clone(), rows.into_iter().map(|(_, row)| row).collect()))
        })
        .collect::<membench::Result<_>>()?;
    let from_rows = args
        .calibrate_from
        .as_deref()
        .map(results::read)
        .transpose()?;
    let calibrating = match (&args.calibrate_from, &from_rows) {
        (Some(path), Some(rows)) => validate::Calibrating::From { path, rows },
        _ if args.no_calibrate => validate::Calibrating::Nothing,
        _ => validate::Calibrating::OwnRows,
    };
    let modelling = validate::Modelling {
        preset,
        calibrating,
    };
    let mut validations = Vec::new();
    for (path, rows) in &files {
        // How many of the rows are predicted is known only once their cases are found.
        let progress = ProgressBar::no_length().with_style(
            ProgressStyle::with_template("{pos} cases predicted {elapsed} {wide_msg}")
                .context("progress bar template")?,
        );
        progress.set_message(format!("({})", path.display()));
        validations.push(validate::validate(
            path,
            rows,
            modelling,
            &args.filter,
            &|| progress.inc(1),
        ));
        progress.finish_and_clear();
    }
    // As for a run, a filter that matches nothing is an error, not an empty table.
    let ids: Vec<String> = validations
        .iter()
        .flat_map(|v| {
            let judged = v.judged.iter().map(|j| j.id.to_string());
            judged.chain(v.unjudged.iter().map(|(id, _)| id.to_string()))
        })
        .collect();
    if let Some(filter) = membench::suite::unmatched(&args.filter, &ids) {
        anyhow::bail!("--filter `{filter}` matches no measured row of the files");
    }
    out!(
        "{}",
        validate::render(&validations, args.format, args.verbose)
    )?;
    Ok(ExitCode::SUCCESS)
}

fn report(args: ReportArgs) -> anyhow::Result<ExitCode> {
    // A file in the directory's place is refused before anything is read or predicted.
    report::destination(&args.out)?;
    let inputs = if args.csv.is_empty() {
        report::default_inputs(std::path::Path::new("results"))?
    } else {
        args.csv
    };
    let mut devices = results::load(&inputs)?;
    if let Some(baseline) = &args.baseline {
        devices = report::with_baseline(devices, baseline)?;
    }
    // The simulator's predictions of every file, made now: the report shows the current
    // simulator, not the predictions the files recorded.
    let started = Instant::now();
    let validations = if args.no_simulator {
        Vec::new()
    } else {
        eprintln!("membench: predicting the measured cases again (--no-simulator leaves this out)");
        let progress = ProgressBar::no_length().with_style(
            ProgressStyle::with_template("{pos} cases predicted {elapsed}")
                .context("progress bar template")?,
        );
        let validations = validate::of_results(&devices, &|| progress.inc(1));
        progress.finish_and_clear();
        validations
    };
    if !validations.is_empty() {
        eprintln!(
            "membench: simulator validated on {} file(s) in {:.1} s",
            validations.len(),
            started.elapsed().as_secs_f64()
        );
    }
    // Built in full before anything is written: bad input leaves the directory as it was.
    let built = report::build(&devices, &validations)?;
    report::write(&built, &args.out)?;
    eprintln!(
        "membench: report of {} device(s) with {} charts in {}",
        devices.len(),
        built.charts.len(),
        args.out.join("index.html").display()
    );
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn concurrent_runs_keep_the_copy_and_transfer_cases() {
        let sizing = Sizing::nominal(true);
        let filters = ["copy/peak".to_owned(), "reduce".to_owned()];
        let kept = concurrent_cases(
            membench::suite::select(&sizing, &filters).unwrap(),
            &filters,
        )
        .unwrap();
        assert!(!kept.is_empty());
        assert!(kept.iter().all(|(e, _)| e.family == Family::Copy));
        let every = concurrent_cases(membench::suite::select(&sizing, &[]).unwrap(), &[]).unwrap();
        assert!(every.iter().any(|(e, _)| e.family == Family::Transfer));
        let reduce = ["reduce".to_owned()];
        let Err(refused) =
            concurrent_cases(membench::suite::select(&sizing, &reduce).unwrap(), &reduce)
        else {
            panic!("reduce is neither copy nor transfer");
        };
        assert!(refused.to_string().contains("--filter reduce selects none"));
    }

    #[test]
    fn matrix_sizes_parse_and_bad_ones_say_why() {
        assert_eq!(parse_matrix("1000x3000"), Ok((1000, 3000)));
        assert_eq!(parse_matrix("64X32"), Ok((64, 32)));
        assert!(parse_matrix("4096").unwrap_err().contains("NXxNY"));
        assert!(parse_matrix("0x8").unwrap_err().contains("positive"));
        assert!(parse_matrix("ax8").unwrap_err().contains("`a`"));
    }
}
