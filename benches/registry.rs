//! `cargo bench`: every case of the registry as a criterion benchmark, timed on the
//! GPU clock (`iter_custom`), throughput in decimal bytes. Each case is verified
//! before it is benchmarked; a case that fails is reported and not timed. The
//! results CSV, predictions included, is written as by `membench run`
//! (`MEMBENCH_OUT` to redirect it).
//!
//! Transfers (host clock) are verified and timed by the suite's own loop, as
//! `membench run` does, not by criterion.
//!
//! Where the CUDA driver and NVRTC are there (feature `cuda`), every kernel is also run
//! through its CUDA twin, as `membench run` does.
//!
//! `cargo test --benches` runs every case once at quick size and writes nothing.

use std::time::Duration;

use anyhow::Context as _;
use criterion::{BenchmarkId, Criterion, Throughput};

use membench::backend::wgpu::GpuContext;
use membench::error::{Error, Result};
use membench::measure::{Clock, Sample, Timing};
use membench::results;
use membench::run::{self, Backends, Outcome, Progress, RunSettings, Session};
use membench::suite::{Api, Build, CaseId, Setting};

const SAMPLES: usize = 10;

/// Criterion as the sampler: one benchmark per case, GPU time through `iter_custom`.
struct CriterionSampler {
    criterion: Criterion,
}

impl Sample for CriterionSampler {
    fn sample(
        &mut self,
        id: &CaseId,
        setting: Setting,
        bytes: u64,
        clock: &mut dyn Clock,
    ) -> Result<Timing> {
        // Per-repetition time of every sample criterion takes; the last SAMPLES are
        // its measurement, the ones before its warm-up.
        let mut samples = Vec::<(f64, u64)>::new();
        let mut error = None;
        let timer = clock.timer();
        let mut group = self
            .criterion
            .benchmark_group(format!("{}/{}/{setting}", id.family, id.variant));
        group.throughput(Throughput::BytesDecimal(bytes));
        group.bench_function(BenchmarkId::from_parameter(&id.params), |bencher| {
            bencher.iter_custom(|iters| {
                let repeats = u32::try_from(iters).unwrap_or(u32::MAX);
                match clock.samples_ns(1, repeats, 0) {
                    Ok(ns) => {
                        let ns = ns.first().copied().unwrap_or(0.0);
                        samples.push((ns / f64::from(repeats), iters));
                        Duration::from_nanos(ns as u64)
                    }
                    Err(e) => {
                        error.get_or_insert(e);
                        Duration::ZERO
                    }
                }
            });
        });
        group.finish();
        if let Some(error) = error {
            return Err(error);
        }
        let measured = &samples[samples.len().saturating_sub(SAMPLES)..];
        if measured.is_empty() {
            return Err(Error::Internal(format!("criterion took no sample of {id}")));
        }
        Ok(Timing {
            samples_ns: measured.iter().map(|&(ns, _)| ns).collect(),
            timer,
            dispatches_per_sample: (measured.iter().map(|&(_, n)| n).sum::<u64>()
                / measured.len() as u64) as u32,
            note: String::new(),
        })
    }
}

/// Failures and skips on stderr; criterion prints the rest.
struct Report;

impl Progress for Report {
    fn finished(&self, id: &CaseId, setting: Setting, outcome: &Outcome) {
        match outcome {
            Outcome::Failed(error) => eprintln!("FAILED {id} ({setting}): {error}"),
            Outcome::Skipped(reason) => eprintln!("skipped {id} ({setting}): {reason}"),
            Outcome::Measured(_) | Outcome::Predicted => {}
        }
    }
}

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
    let criterion = Criterion::default()
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1))
        .sample_size(SAMPLES)
        .configure_from_args();

    let settings = RunSettings {
        quick: !benchmarking || std::env::var_os("MEMBENCH_QUICK").is_some(),
        ..RunSettings::default()
    };
    let ctx = GpuContext::new(None, Duration::from_secs(20))?;
    let sizing = ctx.sizing(settings.quick, settings.buffer_bytes, settings.matrix)?;
    let cases = run::select(&sizing, &filter)?;
    let backends = Backends::new(
        &ctx,
        &[Api::Wgpu, Api::Cuda],
        &[Build::Default, Build::TaxFree],
        Duration::from_secs(20),
    );
    let measurers = backends.measurers();
    let session = Session {
        measurers: &measurers,
        settings: &settings,
        device: &ctx.info.name,
        beside: !sizing.software,
        known_rows: &[],
        output: None,
    };
    let mut sampler = CriterionSampler { criterion };
    let ran = session.run(&cases, &mut sampler, &Report)?;
    sampler.criterion.final_summary();
    eprintln!(
        "simulated with the {}",
        run::describe_model(&ran.predicted.model)
    );

    let out = std::env::var_os("MEMBENCH_OUT").map(Into::into);
    if let Some(path) = out.or_else(|| {
        benchmarking
            .then(|| results::default_path(&ctx.info.name, &format!("{:?}", ctx.info.backend)))
    }) {
        let old = if path.exists() {
            results::read(&path)?
        } else {
            Vec::new()
        };
        results::write(&path, &results::merge(old, &ran.rows))
            .with_context(|| "writing the bench results")?;
        eprintln!("results in {}", path.display());
    }
    anyhow::ensure!(ran.failed == 0, "{} cases failed", ran.failed);
    Ok(())
}
