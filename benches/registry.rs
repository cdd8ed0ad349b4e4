//! `cargo bench`: every case of the registry, in every api and build the device offers,
//! as a criterion benchmark `family/variant/api/build/param`, timed on the GPU clock
//! (`iter_custom`), throughput in decimal bytes.
//!
//! Criterion drives: its own arguments (filters, `--list`, `--save-baseline`,
//! `--baseline`, `--sample-size`, `--measurement-time`, …) decide what runs, and a case
//! is made, prepared and verified only when criterion first runs it, so listing or
//! filtering costs nothing. A case that fails verification is reported and not timed.
//! Transfers (host clock) are verified and timed by the suite's own loop, as
//! `membench run` does, and criterion is handed those samples.
//!
//! Where the CUDA driver and NVRTC are there (feature `cuda`), every kernel is also run
//! through its CUDA twin, as `membench run` does.
//!
//! A benchmark run writes the cases it measured, predictions included, to the results
//! CSV as `membench run` does (`MEMBENCH_OUT` to redirect it, `MEMBENCH_QUICK` for
//! `--quick` sizes). `--list` and test mode (`cargo test --benches`: every case once,
//! at quick size) write nothing.

use std::cell::OnceCell;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context as _;
use criterion::{BenchmarkId, Criterion, SamplingMode, Throughput};

use membench::backend::wgpu::GpuContext;
use membench::measure::{Clock, SuiteSampler, Timing};
use membench::results::{self, Identity};
use membench::run::{self, Backends, Outcome, RunSettings, Runner};
use membench::suite::{Api, Build, Case, CaseData, Experiment, Measure};

/// Unwinds out of criterion's benchmark loop: a case that is skipped or fails has
/// nothing to time, and criterion has no other way to stop sampling.
struct Abort;

/// One case in one setting, as criterion has run it so far.
enum State<'r> {
    /// Criterion has not run it (filtered out, or only listed).
    NotRun,
    /// A verified kernel, and the samples criterion took: (repetitions, ns).
    Kernel {
        clock: Box<dyn Clock + 'r>,
        samples: Vec<(u32, f64)>,
        /// Why its clocks may not have been up (the clock guard's note).
        note: String,
    },
    /// A transfer the suite's own loop measured, and how many of its samples
    /// criterion was handed.
    Transfer { timing: Timing, handed: usize },
    /// Skipped, or failed before or while it was timed.
    Done(Outcome),
}

impl<'r> State<'r> {
    /// Skip, make the data (once for every setting), prepare and verify.
    fn start(
        runner: &'r dyn Runner,
        experiment: &Experiment,
        case: &Case,
        data: &OnceCell<CaseData>,
    ) -> Self {
        if let Some(reason) = runner.skip_reason(experiment, case) {
            return State::Done(Outcome::Skipped(reason));
        }
        let data = data.get_or_init(|| (case.data)());
        match experiment.measure {
            Measure::Kernel => match runner.verified(experiment, case, data) {
                // Criterion's warm-up is too short for a GPU's clocks to rise.
                Ok(mut clock) => match clock.settle() {
                    Ok(note) => State::Kernel {
                        clock,
                        samples: Vec::new(),
                        note: note.unwrap_or_default(),
                    },
                    Err(error) => State::Done(Outcome::Failed(error.to_string())),
                },
                Err(error) => State::Done(Outcome::Failed(error.to_string())),
            },
            Measure::Transfer(_) => {
                let samples = RunSettings::default().samples;
                let mut sampler = SuiteSampler::new(samples);
                match runner.measure(experiment, case, samples, &mut sampler, data) {
                    Outcome::Measured(timing) if !timing.samples_ns.is_empty() => {
                        State::Transfer { timing, handed: 0 }
                    }
                    other => State::Done(other),
                }
            }
        }
    }

    /// One call of criterion's: the case started on the first, one sample taken.
    fn sample(
        &mut self,
        bencher: &mut criterion::Bencher<'_>,
        runner: &'r dyn Runner,
        experiment: &Experiment,
        case: &Case,
        data: &OnceCell<CaseData>,
    ) {
        if matches!(self, State::NotRun) {
            *self = State::start(runner, experiment, case, data);
        }
        let mut failure = None;
        match self {
            State::Kernel { clock, samples, .. } => bencher.iter_custom(|iters| {
                let repeats = u32::try_from(iters).unwrap_or(u32::MAX);
                match clock.samples_ns(1, repeats, 0) {
                    Ok(ns) => {
                        let ns = ns.first().copied().unwrap_or(0.0);
                        samples.push((repeats, ns));
                        Duration::from_nanos(ns as u64)
                    }
                    Err(error) => {
                        failure = Some(error.to_string());
                        Duration::ZERO
                    }
                }
            }),
            State::Transfer { timing, handed } => bencher.iter_custom(|iters| {
                let ns = timing.samples_ns[*handed % timing.samples_ns.len()];
                *handed += 1;
                Duration::from_nanos((ns * iters as f64) as u64)
            }),
            State::NotRun | State::Done(_) => {}
        }
        if let Some(error) = failure {
            *self = State::Done(Outcome::Failed(error));
        }
        if matches!(self, State::Done(_)) {
            resume_unwind(Box::new(Abort));
        }
    }

    /// What became of the case; `None` where criterion did not run it.
    fn outcome(self) -> Option<Outcome> {
        match self {
            State::NotRun => None,
            State::Kernel {
                clock,
                samples,
                note,
            } => {
                let measured = measurement(&samples);
                Some(Outcome::Measured(Timing {
                    samples_ns: measured
                        .iter()
                        .map(|&(repeats, ns)| ns / f64::from(repeats.max(1)))
                        .collect(),
                    timer: clock.timer(),
                    dispatches_per_sample: measured.first().map_or(0, |&(repeats, _)| repeats),
                    note,
                }))
            }
            State::Transfer { timing, .. } => Some(Outcome::Measured(timing)),
            State::Done(outcome) => Some(outcome),
        }
    }
}

/// Criterion's measurement among the samples it took: with flat sampling every
/// measured sample has the same repetitions, while its warm-up doubled them from one,
/// so the last run of equal repetitions.
fn measurement(samples: &[(u32, f64)]) -> &[(u32, f64)] {
    let Some(&(repeats, _)) = samples.last() else {
        return &[];
    };
    let start = samples
        .iter()
        .rposition(|&(r, _)| r != repeats)
        .map_or(0, |before| before + 1);
    &samples[start..]
}

/// Benchmarks `case` on `runner` as criterion decides; `None` where it does not run it.
fn bench_case(
    criterion: &mut Criterion,
    runner: &dyn Runner,
    experiment: &Experiment,
    case: &Case,
    data: &OnceCell<CaseData>,
) -> Option<Outcome> {
    let id = case.id(experiment);
    let mut group =
        criterion.benchmark_group(format!("{}/{}/{}", id.family, id.variant, runner.setting()));
    // Flat: every sample one pass of the same number of dispatches.
    group
        .throughput(Throughput::BytesDecimal(case.bytes))
        .sampling_mode(SamplingMode::Flat);
    let mut state = State::NotRun;
    let ran = catch_unwind(AssertUnwindSafe(|| {
        group.bench_function(BenchmarkId::from_parameter(&id.params), |bencher| {
            state.sample(bencher, runner, experiment, case, data);
        });
    }));
    group.finish();
    if let Err(payload) = ran
        && !payload.is::<Abort>()
    {
        // Criterion's own failure (a baseline that does not exist, say).
        resume_unwind(payload);
    }
    state.outcome()
}

fn main() -> anyhow::Result<()> {
    let mut criterion = Criterion::default()
        // Short: the GPU clock's samples vary by well under 1 %, and the whole
        // registry (about 870 benchmarks on a GPU with CUDA) fits in ten minutes.
        .warm_up_time(Duration::from_millis(100))
        .measurement_time(Duration::from_millis(400))
        .sample_size(10)
        .configure_from_args();
    // Criterion keeps its mode to itself: as it does, take a run without `--bench`
    // (`cargo test --benches`), or with `--test`, for test mode.
    let arguments: Vec<String> = std::env::args().collect();
    let benchmarking =
        arguments.iter().any(|a| a == "--bench") && !arguments.iter().any(|a| a == "--test");
    let settings = RunSettings {
        quick: !benchmarking || std::env::var_os("MEMBENCH_QUICK").is_some(),
        ..RunSettings::default()
    };
    let ctx = GpuContext::new(None, Duration::from_secs(20))?;
    let sizing = ctx.sizing(settings.quick, settings.buffer_bytes, settings.matrix)?;
    let cases = membench::suite::select(&sizing, &[])?;
    let backends = Backends::new(
        &ctx,
        &[Api::Wgpu, Api::Cuda],
        &[Build::Default, Build::TaxFree],
        Duration::from_secs(20),
    );
    let measurers = backends.measurers();

    let mut rows = Vec::new();
    // The case of each row, by index into `cases`.
    let mut row_cases = Vec::new();
    let mut failed = 0;
    for (index, (experiment, case)) in cases.iter().enumerate() {
        let data = OnceCell::new();
        let id = case.id(experiment);
        for measurer in measurers.iter().filter(|m| m.backend.takes(experiment)) {
            let setting = measurer.backend.setting();
            let Some(outcome) =
                bench_case(&mut criterion, measurer.backend, experiment, case, &data)
            else {
                continue;
            };
            match &outcome {
                Outcome::Failed(error) => eprintln!("FAILED {id} ({setting}): {error}"),
                Outcome::Skipped(reason) => eprintln!("skipped {id} ({setting}): {reason}"),
                Outcome::Measured(_) | Outcome::Predicted => {}
            }
            failed += usize::from(matches!(outcome, Outcome::Failed(_)));
            rows.push(run::row(
                &measurer.info,
                settings.sizing(),
                experiment,
                case,
                &outcome,
            ));
            row_cases.push(index);
        }
    }
    criterion.final_summary();
    if benchmarking && !rows.is_empty() {
        let identity = Identity {
            device: ctx.info.name.clone(),
            backend: format!("{:?}", ctx.info.backend).to_lowercase(),
            sizing: settings.sizing(),
        };
        let all_rows = run::case_rows(&cases);
        predict(&ctx.info.name, cases, &row_cases, &mut rows);
        let path =
            std::env::var_os("MEMBENCH_OUT").map_or_else(|| identity.default_path(), PathBuf::from);
        results::update(&path, &rows, |old| identity.admit(&path, old, &all_rows))
            .with_context(|| "writing the bench results")?;
        eprintln!("results in {}", path.display());
    }
    anyhow::ensure!(failed == 0, "{failed} cases failed");
    Ok(())
}

/// Fills the predictions of `rows` (each of the case `row_cases` names in `cases`),
/// made for the cases measured only, on the model calibrated from `rows`.
fn predict(
    device: &str,
    cases: Vec<(&'static Experiment, Case)>,
    row_cases: &[usize],
    rows: &mut [results::Row],
) {
    let model = run::device_model(device, rows);
    let (indexes, measured): (Vec<usize>, Vec<_>) = cases
        .into_iter()
        .enumerate()
        .filter(|(index, _)| row_cases.contains(index))
        .unzip();
    let predictions = run::predict_cases(&measured, &model, &|| {});
    eprintln!("simulated with the {}", run::describe_model(&model));
    for (row, case) in rows.iter_mut().zip(row_cases) {
        let prediction = indexes
            .iter()
            .position(|index| index == case)
            .and_then(|position| predictions.get(position));
        if let Some(Some(prediction)) = prediction {
            run::fill_prediction(row, prediction);
        }
    }
}
