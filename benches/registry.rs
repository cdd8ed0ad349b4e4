//! `cargo bench`: every case of the registry as a criterion benchmark, timed on the
//! GPU clock (`iter_custom`), throughput in decimal bytes. Each case is verified
//! before it is benchmarked; a case that fails is reported and not timed. The
//! results CSV, predictions included, is written as by `membench run`
//! (`MEMBENCH_OUT` to redirect it).
//!
//! Transfers (host clock) are verified and timed by the suite's own loop, as
//! `membench run` does, not by criterion.
//!
//! `cargo test --benches` runs every case once at quick size and writes nothing.

use std::cell::RefCell;
use std::time::Duration;

use anyhow::Context as _;
use criterion::{BenchmarkId, Criterion, Throughput};

use membench::backend::wgpu::timing::{self, Timer, Timing};
use membench::backend::wgpu::{BoundsChecks, GpuContext};
use membench::results;
use membench::run::{self, Outcome, RunInfo, RunSettings};
use membench::suite::Measure;

const SAMPLES: usize = 10;

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    // cargo passes --bench to a real benchmark run; without it criterion runs each
    // benchmark once as a test, and a small size suffices.
    let benchmarking = args.iter().any(|arg| arg == "--bench");
    let filter: Vec<String> = args
        .iter()
        .filter(|a| !a.starts_with('-'))
        .take(1)
        .cloned()
        .collect();
    let mut criterion = Criterion::default()
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1))
        .sample_size(SAMPLES)
        .configure_from_args();

    let settings = RunSettings {
        quick: !benchmarking || std::env::var_os("MEMBENCH_QUICK").is_some(),
        ..RunSettings::default()
    };
    let ctx = GpuContext::new(None, Duration::from_secs(20))?;
    let sizing = run::sizing(&ctx, &settings)?;
    let info = RunInfo::new(&ctx, BoundsChecks::On);
    let mut rows = Vec::new();
    let mut failed = 0;
    let cases = run::select(&sizing, &filter)?;
    for (experiment, case) in &cases {
        let id = case.id(experiment).to_string();
        if let Some(reason) = &case.skip {
            eprintln!("skipped {id}: {reason}");
            rows.push(info.row(experiment, case, &Outcome::Skipped(reason.clone())));
            continue;
        }
        // Transfers run on the host clock from call to usable data, which criterion's
        // per-iteration loop cannot express: they are verified and timed as
        // `membench run` does, outside criterion.
        if let Measure::Transfer(_) = experiment.measure {
            let outcome = run::run_case(&ctx, experiment, case, &settings);
            if let Outcome::Failed(error) = &outcome {
                failed += 1;
                eprintln!("FAILED {id}: {error}");
            }
            rows.push(info.row(experiment, case, &outcome));
            continue;
        }
        // Verify first: a case that computes the wrong thing gets no bandwidth.
        let kernel = match ctx
            .build(experiment, case, settings.checks)
            .and_then(|(kernel, expected)| ctx.verify(&kernel, expected).map(|()| kernel))
        {
            Ok(kernel) => kernel,
            Err(error) => {
                failed += 1;
                eprintln!("FAILED {id}: {error}");
                rows.push(info.row(experiment, case, &Outcome::Failed(error.to_string())));
                continue;
            }
        };
        // Per-dispatch GPU time of every sample criterion takes; the last SAMPLES
        // are its measurement, the ones before its warm-up.
        let samples = RefCell::new(Vec::<(f64, u64)>::new());
        let mut error = None;
        let mut group = criterion.benchmark_group(experiment.name());
        group.throughput(Throughput::BytesDecimal(case.bytes));
        group.bench_function(BenchmarkId::from_parameter(&case.params), |bencher| {
            bencher.iter_custom(|iters| {
                let dispatches = u32::try_from(iters).unwrap_or(u32::MAX);
                match timing::time_dispatches(&ctx, &kernel, dispatches) {
                    Ok(time) => {
                        samples
                            .borrow_mut()
                            .push((time.as_nanos() as f64 / iters as f64, iters));
                        time
                    }
                    Err(e) => {
                        error.get_or_insert(e);
                        Duration::ZERO
                    }
                }
            });
        });
        group.finish();
        let samples = samples.into_inner();
        let measured = &samples[samples.len().saturating_sub(SAMPLES)..];
        let outcome = match error {
            Some(error) => {
                failed += 1;
                eprintln!("FAILED {id}: {error}");
                Outcome::Failed(error.to_string())
            }
            None => Outcome::Measured(Timing {
                samples_ns: measured.iter().map(|&(ns, _)| ns).collect(),
                timer: if ctx.has_timestamps() {
                    Timer::Gpu
                } else {
                    Timer::Wall
                },
                dispatches_per_sample: (measured.iter().map(|&(_, n)| n).sum::<u64>()
                    / measured.len().max(1) as u64) as u32,
                note: String::new(),
            }),
        };
        rows.push(info.row(experiment, case, &outcome));
    }
    criterion.final_summary();

    // The simulator's prediction beside each measurement, as `membench run` does.
    let model = run::device_model(&ctx.info.name, &rows);
    eprintln!("simulating with the {}", run::describe_model(&model));
    for (row, prediction) in rows
        .iter_mut()
        .zip(run::predict_cases(&cases, &model, &|| {}))
    {
        if let Some(prediction) = prediction {
            run::fill_prediction(row, &prediction);
        }
    }

    let out = std::env::var_os("MEMBENCH_OUT").map(Into::into);
    if let Some(path) = out.or_else(|| {
        benchmarking.then(|| {
            results::default_path(&ctx.info.name, &format!("{:?}", ctx.info.backend), false)
        })
    }) {
        let old = if path.exists() {
            results::read(&path)?
        } else {
            Vec::new()
        };
        results::write(&path, &results::merge(old, &rows))
            .with_context(|| "writing the bench results")?;
        eprintln!("results in {}", path.display());
    }
    anyhow::ensure!(failed == 0, "{failed} cases failed");
    Ok(())
}
