//! `cargo bench`: every case of the registry in every api and build the device offers (CUDA
//! twins too, with feature `cuda`) as a criterion benchmark `family/variant/api/build/param`
//! on the GPU clock, in decimal bytes, through `membench run`'s [`Session`] with criterion as
//! its sampler ([`Driven`]): a case skipped or failed in preparation never reaches criterion.
//! Only the cases criterion selects are made (a `--list` with the same arguments says which).
//! A benchmark run writes its rows and predictions as `membench run` does (`MEMBENCH_OUT` to
//! redirect, `MEMBENCH_QUICK` for `--quick` sizes); `--list` and test mode write nothing.

use std::{env, path::PathBuf, time::Duration};

use anyhow::Context as _;
use criterion::{BenchmarkId, Criterion, SamplingMode::Flat, Throughput::BytesDecimal};

use membench::backend::wgpu::GpuContext;
use membench::measure::{Batch, Driven, Driver};
use membench::run::{self, Backends, Notices, Output, RunSettings, Session};
use membench::suite::{Api, Build, CaseId, Setting};

/// Criterion, its `--list` of the benchmarks it selects, and the next benchmark's own warm-up.
struct Bench(Criterion, String, Option<Duration>);

impl Driver for Bench {
    fn takes(&self, id: &CaseId, setting: Setting) -> bool {
        let (family, variant, params) = (&id.family, &id.variant, &id.params);
        let listed = format!("{family}/{variant}/{setting}/{params}: benchmark");
        self.1.lines().any(|line| line == listed)
    }

    fn drive(&mut self, id: &CaseId, setting: Setting, bytes: u64, batch: Batch) {
        let name = format!("{}/{}/{setting}", id.family, id.variant);
        let mut group = self.0.benchmark_group(name);
        if let Some(warm_up) = self.2.take() {
            group.warm_up_time(warm_up);
        }
        // Flat: every sample one pass of the same number of dispatches.
        group.throughput(BytesDecimal(bytes)).sampling_mode(Flat);
        let param = BenchmarkId::from_parameter(&id.params);
        group.bench_function(param, |b| b.iter_custom(&mut *batch));
        group.finish();
    }

    /// A transfer's samples, taken before on the host clock: criterion, warming up for a
    /// time on the wall clock, found each replay instantaneous (2 ns). One call warms up.
    fn replay(&mut self, id: &CaseId, setting: Setting, bytes: u64, batch: Batch) {
        self.2 = Some(Duration::from_nanos(1));
        self.drive(id, setting, bytes, batch);
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
        // Short: GPU-clock samples vary by well under 1 %, and the registry (about 1500
        // benchmarks with CUDA) must fit ten minutes: 250 ms and 100 000 resamples did not.
        .warm_up_time(Duration::from_millis(30))
        .measurement_time(Duration::from_millis(150))
        .sample_size(10)
        .nresamples(10_000)
        .configure_from_args();
    // Criterion keeps its mode to itself: as it does, test mode is a run without `--bench`
    // (`cargo test --benches`) or with `--test`; listing or loading a baseline, it runs none.
    let flag = |name: &str| env::args().any(|a| a.split('=').next() == Some(name));
    let benchmarking = flag("--bench") && !flag("--test");
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
    let listed = if listing { String::new() } else { selected()? };
    let mut bench = Bench(criterion, listed, None);
    // Listing, each benchmark declared (all criterion does with it); the selected kept.
    cases.retain(|(experiment, case)| {
        let id = case.id(experiment);
        let backends = measurers.iter().filter(|m| m.takes(experiment));
        let taken: Vec<Setting> = backends.map(|m| m.setting()).collect();
        for &setting in taken.iter().filter(|_| listing) {
            bench.drive(&id, setting, case.bytes, &mut |_| Duration::ZERO);
        }
        taken.iter().any(|&setting| bench.takes(&id, setting))
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
    let ran = session.run(&cases, &mut sampler, &Notices);
    let ran = ran.context("writing the bench results")?;
    sampler.0.0.final_summary();
    if let Some(predicted) = ran.predicted.filter(|_| !ran.rows.is_empty()) {
        let model = run::describe_model(&predicted.model);
        eprintln!("simulated with the {model}\nresults in {}", path.display());
    }
    anyhow::ensure!(ran.failed == 0, "{} cases failed", ran.failed);
    Ok(())
}
