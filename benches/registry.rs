//! `cargo bench`: every case of the registry in every api and build the device offers
//! (CUDA twins too, with feature `cuda`) as a criterion benchmark
//! `family/variant/api/build/param` on the GPU clock, throughput in decimal bytes. The
//! cases go through `membench run`'s [`Session`], criterion its sampler ([`Driven`]):
//! a case skipped or failed in preparation never reaches criterion. Criterion keeps its
//! filter to itself, so a `--list` with the same arguments says which it selects: only
//! their cases are made. A benchmark run writes its rows, predictions included, as
//! `membench run` does (`MEMBENCH_OUT` to redirect them, `MEMBENCH_QUICK` for `--quick`
//! sizes); `--list` and test mode (`cargo test --benches`: each case once) write nothing.

use std::{env, path::PathBuf, time::Duration};

use anyhow::Context as _;
use criterion::{BenchmarkId, Criterion, SamplingMode::Flat, Throughput::BytesDecimal};

use membench::backend::wgpu::GpuContext;
use membench::measure::{Batch, Driven, Driver};
use membench::run::{self, Backends, Notices, Output, RunSettings, Session};
use membench::suite::{Api, Build, CaseId, Setting};

/// Criterion, and its `--list` of the benchmarks its filter selects.
struct Bench(Criterion, String);

impl Driver for Bench {
    fn takes(&self, id: &CaseId, setting: Setting) -> bool {
        let (family, variant, params) = (&id.family, &id.variant, &id.params);
        let listed = format!("{family}/{variant}/{setting}/{params}: benchmark");
        self.1.lines().any(|line| line == listed)
    }

    fn drive(&mut self, id: &CaseId, setting: Setting, bytes: u64, batch: Batch) {
        self.benchmark(id, setting, bytes, batch, None);
    }

    /// A transfer's samples, taken on the host clock before: criterion times the call
    /// on the wall clock too and, warming up for a time, found each call instantaneous
    /// and reported 2 ns. Its shortest warm-up is one call.
    fn replay(&mut self, id: &CaseId, setting: Setting, bytes: u64, batch: Batch) {
        self.benchmark(id, setting, bytes, batch, Some(Duration::from_nanos(1)));
    }
}

impl Bench {
    fn benchmark(
        &mut self,
        id: &CaseId,
        setting: Setting,
        bytes: u64,
        batch: Batch,
        warm_up: Option<Duration>,
    ) {
        let name = format!("{}/{}/{setting}", id.family, id.variant);
        let mut group = self.0.benchmark_group(name);
        if let Some(warm_up) = warm_up {
            group.warm_up_time(warm_up);
        }
        // Flat: every sample one pass of the same number of dispatches.
        group.throughput(BytesDecimal(bytes)).sampling_mode(Flat);
        let param = BenchmarkId::from_parameter(&id.params);
        group.bench_function(param, |b| b.iter_custom(&mut *batch));
        group.finish();
    }
}

/// What criterion lists with this program's arguments: the benchmarks it selects.
fn selected() -> anyhow::Result<String> {
    let listed = std::process::Command::new(env::current_exe()?)
        .args(env::args_os().skip(1).chain(["--list".into()]))
        .env_remove("CARGO_CRITERION_PORT")
        .output()?;
    let stderr = String::from_utf8_lossy(&listed.stderr);
    anyhow::ensure!(listed.status.success(), "listing the benchmarks: {stderr}");
    Ok(String::from_utf8(listed.stdout)?)
}

fn main() -> anyhow::Result<()> {
    let criterion = Criterion::default()
        // Short: the GPU clock's samples vary by well under 1 %, and the whole
        // registry (about 1500 benchmarks on a GPU with CUDA) must fit in ten minutes;
        // 250 ms a benchmark and criterion's 100 000 resamples did not (H100).
        .warm_up_time(Duration::from_millis(30))
        .measurement_time(Duration::from_millis(150))
        .sample_size(10)
        .nresamples(10_000)
        .configure_from_args();
    // Criterion keeps its mode to itself: as it does, take a run without `--bench`
    // (`cargo test --benches`), or with `--test`, for test mode.
    let arguments: Vec<String> = env::args().collect();
    let flag = |name: &str| arguments.iter().any(|a| a.split('=').next() == Some(name));
    let benchmarking = flag("--bench") && !flag("--test");
    // Listing, or comparing a loaded baseline, criterion calls no benchmark.
    let listing = flag("--list") || flag("--load-baseline");
    let settings = RunSettings {
        quick: !benchmarking || env::var_os("MEMBENCH_QUICK").is_some(),
        ..RunSettings::default()
    };
    let ctx = GpuContext::new(None, Duration::from_secs(20))?;
    let sizing = ctx.sizing(settings.quick, settings.buffer_bytes, settings.matrix)?;
    let mut cases = membench::suite::select(&sizing, &[])?;
    let (apis, builds) = ([Api::Wgpu, Api::Cuda], [Build::Default, Build::TaxFree]);
    let backends = Backends::new(&ctx, &apis, &builds, Duration::from_secs(20));
    let measurers = backends.measurers();
    let every_case = run::case_rows(&cases);
    let mut bench = Bench(criterion, if listing { String::new() } else { selected()? });
    // Each benchmark declared (where listing, that is all criterion does with it); the
    // cases of those criterion selects kept.
    cases.retain(|(experiment, case)| {
        let id = case.id(experiment);
        let mut kept = false;
        for m in measurers.iter().filter(|m| m.takes(experiment)) {
            let setting = m.setting();
            if listing {
                bench.drive(&id, setting, case.bytes, &mut |_| Duration::ZERO);
            }
            kept |= bench.takes(&id, setting);
        }
        kept
    });
    let identity = run::identity(&ctx.info, &ctx.identity, settings.sizing());
    let path = env::var_os("MEMBENCH_OUT").map_or_else(|| identity.default_path(), PathBuf::from);
    let output = Output {
        path: &path,
        identity: &identity,
        case_rows: &every_case,
    };
    let session = Session {
        output: (benchmarking && !cases.is_empty()).then_some(output),
        predict: benchmarking,
        ..Session::new(&measurers, &settings, &ctx.info.name)
    };
    let mut sampler = Driven(bench);
    let ran = session
        .run(&cases, &mut sampler, &Notices)
        .context("writing the bench results")?;
    sampler.0.0.final_summary();
    if let Some(predicted) = ran.predicted.filter(|_| !ran.rows.is_empty()) {
        eprintln!(
            "simulated with the {}",
            run::describe_model(&predicted.model)
        );
        eprintln!("results in {}", path.display());
    }
    anyhow::ensure!(ran.failed == 0, "{} cases failed", ran.failed);
    Ok(())
}
