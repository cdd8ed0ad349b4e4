//! Every case of the registry, at quick size, on whatever adapter exists, verified
//! against its CPU reference; and the failures a run must survive. In CI (`CI` set)
//! a missing adapter fails these tests; elsewhere they say so and pass.

use std::time::Duration;

use membench::Error;
use membench::backend::Backend;
use membench::backend::wgpu::{GpuContext, Wgpu};
use membench::measure::{MIN_SAMPLES, SuiteSampler, Timing};
use membench::results::{Row, Status};
use membench::run::{self, Outcome, RunSettings};
use membench::suite::{
    Cache, Case, Expected, Experiment, Measure, REGISTRY, Sizing, WgpuBuild, Words,
};

/// The default adapter; `None` (said on stderr) where there is none outside CI.
fn context() -> Result<Option<GpuContext>, String> {
    match GpuContext::new(None, Duration::from_secs(60)) {
        Ok(ctx) => Ok(Some(ctx)),
        Err(error) if std::env::var_os("CI").is_none() => {
            eprintln!("GPU tests skipped: {error}");
            Ok(None)
        }
        Err(error) => Err(format!("CI needs an adapter (lavapipe): {error}")),
    }
}

fn sizing(ctx: &GpuContext, settings: &RunSettings) -> membench::Result<Sizing> {
    ctx.sizing(settings.quick, settings.buffer_bytes, settings.matrix)
}

/// One case through the driver, as a run takes it.
/// The row the default build records for `timing` of `case`.
fn measured_row(
    ctx: &GpuContext,
    settings: &RunSettings,
    experiment: &Experiment,
    case: &Case,
    timing: Timing,
) -> Row {
    let info = ctx.run_info(WgpuBuild::Default);
    run::row(
        &info,
        settings.sizing(),
        experiment,
        case,
        &Outcome::Measured(timing),
    )
}

fn measure(
    ctx: &GpuContext,
    experiment: &Experiment,
    case: &Case,
    settings: &RunSettings,
) -> Outcome {
    let backend = Wgpu {
        ctx,
        build: WgpuBuild::Default,
    };
    let mut sampler = SuiteSampler::new(settings.samples);
    run::measure_case(
        &backend,
        experiment,
        case,
        settings.samples,
        &mut sampler,
        &(case.data)(),
    )
}

fn quick() -> RunSettings {
    RunSettings {
        quick: true,
        ..RunSettings::default()
    }
}

#[test]
fn every_case_verifies_at_quick_size() {
    let Some(ctx) = context().unwrap() else {
        return;
    };
    let sizing = sizing(&ctx, &quick()).unwrap();
    let mut verified = 0;
    let mut builds = vec![WgpuBuild::Default, WgpuBuild::Unchecked];
    if ctx.has_passthrough() {
        builds.push(WgpuBuild::TaxFree);
    }
    for build in builds {
        for (experiment, case) in membench::suite::select(&sizing, &[]).unwrap() {
            // Transfers verify what arrives in their own test below.
            if case.skip.is_some() || experiment.measure != Measure::Kernel {
                continue;
            }
            let id = case.id(experiment).to_string();
            let backend = Wgpu { ctx: &ctx, build };
            let data = (case.data)();
            let kernel = backend
                .prepare(experiment, &case, &data.inputs)
                .unwrap_or_else(|e| panic!("{id} ({build}): {e}"));
            backend
                .verify(&kernel, &data.expected)
                .unwrap_or_else(|e| panic!("{id} ({build}): {e}"));
            verified += 1;
        }
    }
    assert!(verified > 0, "no case ran");
}

#[test]
fn every_transfer_case_verifies_and_times_at_quick_size() {
    let Some(ctx) = context().unwrap() else {
        return;
    };
    let settings = RunSettings {
        samples: 10,
        ..quick()
    };
    let sizing = sizing(&ctx, &settings).unwrap();
    let mut measured = 0;
    for (experiment, case) in membench::suite::select(&sizing, &["transfer/".to_owned()]).unwrap() {
        let id = case.id(experiment).to_string();
        let Measure::Transfer(path) = experiment.measure else {
            panic!("{id} is no transfer");
        };
        // CUDA's own paths are the CUDA device test's (tests/cuda.rs).
        if !path.in_wgpu() {
            continue;
        }
        match measure(&ctx, experiment, &case, &settings) {
            Outcome::Measured(timing) => {
                assert!(timing.samples_ns.len() >= 10, "{id}");
                assert!(timing.samples_ns.iter().all(|&ns| ns > 0.0), "{id}");
                let row = measured_row(&ctx, &settings, experiment, &case, timing);
                assert!(row.verified && row.gbps_median.unwrap_or(0.0) > 0.0, "{id}");
                assert!(matches!(row.timer.as_str(), "host" | "gpu"), "{id}");
                if experiment.variant.starts_with("overlap") {
                    assert!(row.note.contains("hidden"), "{id}: {}", row.note);
                }
                // The staged paths time their two parts apart.
                if experiment.variant.contains("threads")
                    || matches!(experiment.variant, "upload_staging_pooled" | "readback")
                {
                    assert!(row.note.contains("medians: "), "{id}: {}", row.note);
                }
                measured += 1;
            }
            Outcome::Skipped(reason) => {
                let why = match experiment.variant {
                    "upload_mappable" => "MAPPABLE_PRIMARY_BUFFERS",
                    "upload_staging_threads" | "readback_threads" => "copy threads on a host of",
                    "upload_imported" | "readback_imported" | "mapped_read_imported" | "duplex" => {
                        "VK_EXT_external_memory_host"
                    }
                    _ => panic!("{id}: {reason}"),
                };
                assert!(reason.contains(why), "{id}: {reason}");
            }
            Outcome::Failed(reason) => panic!("{id}: {reason}"),
            Outcome::Predicted => panic!("{id}: not measured"),
        }
    }
    assert!(measured > 0, "no transfer case ran");
}

#[test]
fn a_transfer_that_delivers_other_bytes_fails() {
    let Some(ctx) = context().unwrap() else {
        return;
    };
    let sizing = sizing(&ctx, &quick()).unwrap();
    for filter in [
        "transfer/upload_staging_pooled/size=4194304;chunks=1024",
        "transfer/readback/size=65536;chunks=1",
        "transfer/overlap_interleaved/size=4194304;chunks=4",
        "transfer/upload_staging_threads/size=4194304;chunks=1;threads=1",
        "transfer/readback_threads/size=4194304;chunks=1;threads=1",
        "transfer/upload_imported/size=65536;chunks=1",
        "transfer/readback_imported/size=65536;chunks=1",
        "transfer/mapped_read_imported/size=65536;chunks=1",
        "transfer/duplex/size=65536;chunks=1",
    ] {
        let (experiment, mut case) = membench::suite::select(&sizing, &[filter.to_owned()])
            .unwrap()
            .remove(0);
        // Host memory import is Vulkan's alone.
        if case.skip.is_some() {
            continue;
        }
        let data = case.data.clone();
        case.data = std::sync::Arc::new(move || {
            let mut data = data();
            let Expected::Exact(words) = &mut data.expected[0] else {
                panic!("transfers are checked exactly");
            };
            *words = flip_word_100(words);
            data
        });
        match measure(&ctx, experiment, &case, &quick()) {
            Outcome::Failed(reason) => {
                assert!(reason.contains("first at word 100"), "{filter}: {reason}")
            }
            _ => panic!("{filter}: a wrong transfer was not reported as failed"),
        }
    }
}

/// `words` with a bit of word 100 flipped.
fn flip_word_100(words: &Words) -> Words {
    let mut flipped = words.whole().into_owned();
    flipped[100] ^= 1;
    flipped.into()
}

#[test]
fn a_wrong_reference_fails_verification() {
    let Some(ctx) = context().unwrap() else {
        return;
    };
    let sizing = sizing(&ctx, &quick()).unwrap();
    let (experiment, case) = membench::suite::select(&sizing, &["copy/offset/offset=1".to_owned()])
        .unwrap()
        .remove(0);
    let backend = Wgpu {
        ctx: &ctx,
        build: WgpuBuild::Default,
    };
    let mut data = (case.data)();
    let kernel = backend.prepare(experiment, &case, &data.inputs).unwrap();
    let Expected::Exact(words) = &mut data.expected[0] else {
        panic!("copy cases are checked exactly");
    };
    *words = flip_word_100(words);
    let error = backend.verify(&kernel, &data.expected).unwrap_err();
    assert!(matches!(error, Error::Verification(_)), "{error}");
    assert!(error.to_string().contains("first at word 100"), "{error}");
}

#[test]
fn a_timed_case_reports_sane_statistics() {
    let Some(ctx) = context().unwrap() else {
        return;
    };
    let settings = quick();
    let sizing = sizing(&ctx, &settings).unwrap();
    let (experiment, case) =
        membench::suite::select(&sizing, &["copy/peak/launch=vec4".to_owned()])
            .unwrap()
            .remove(0);
    let Outcome::Measured(timing) = measure(&ctx, experiment, &case, &settings) else {
        panic!("copy/peak did not measure");
    };
    // Samples that would add up to more than the case's budget are fewer, never
    // under MIN_SAMPLES: a slow software adapter on busy cores takes fewer.
    let taken = u32::try_from(timing.samples_ns.len()).unwrap();
    assert!(
        (MIN_SAMPLES.min(settings.samples)..=settings.samples).contains(&taken),
        "{taken} samples of {}",
        settings.samples
    );
    assert!(timing.samples_ns.iter().all(|&ns| ns > 0.0));
    let row = measured_row(&ctx, &settings, experiment, &case, timing);
    assert!(row.verified && row.status == Status::Ok);
    let (median, best) = (row.gbps_median.unwrap(), row.gbps_best.unwrap());
    assert!(
        median > 0.0 && best >= median,
        "median {median} best {best}"
    );
}

/// Every launch case wgpu runs is measured as a run takes it: on the GPU clock, or on
/// the host's for the submissions, with sane samples.
#[test]
fn every_launch_case_times_on_its_own_clock() {
    let Some(ctx) = context().unwrap() else {
        return;
    };
    let settings = RunSettings {
        samples: MIN_SAMPLES,
        ..quick()
    };
    let sizing = sizing(&ctx, &settings).unwrap();
    let backend = Wgpu {
        ctx: &ctx,
        build: WgpuBuild::Default,
    };
    let mut timed = 0;
    for experiment in membench::suite::families::launch::EXPERIMENTS {
        for case in (experiment.cases)(&sizing).into_iter().take(2) {
            let id = case.id(experiment);
            if case.skip.is_some() || backend.skip(experiment, &case).is_some() {
                continue;
            }
            let timing = match measure(&ctx, experiment, &case, &settings) {
                Outcome::Measured(timing) => timing,
                Outcome::Failed(why) => panic!("{id} failed: {why}"),
                _ => panic!("{id} did not measure"),
            };
            assert!(timing.samples_ns.iter().all(|&ns| ns > 0.0), "{id}");
            let host = case.dispatch.host_clock() || !ctx.has_timestamps();
            assert_eq!(
                timing.timer.label(),
                if host { "wall" } else { "gpu" },
                "{id}"
            );
            timed += 1;
        }
    }
    assert!(timed >= 7, "{timed} launch cases timed");
}

#[test]
fn a_cold_sample_sums_its_dispatches_each_after_a_flush() {
    let Some(ctx) = context().unwrap() else {
        return;
    };
    let sizing = sizing(&ctx, &quick()).unwrap();
    let (experiment, case) = membench::suite::select(
        &sizing,
        &["reduce/neighbored/n=1048576;cache=cold".to_owned()],
    )
    .unwrap()
    .remove(0);
    assert_eq!(case.cache, Cache::Cold);
    let backend = Wgpu {
        ctx: &ctx,
        build: WgpuBuild::Default,
    };
    let data = (case.data)();
    let kernel = backend.prepare(experiment, &case, &data.inputs).unwrap();
    backend.verify(&kernel, &data.expected).unwrap();
    for cache in [Cache::Warm, Cache::Cold] {
        let mut clock = backend.clock(&kernel, cache).unwrap();
        let samples = clock.samples_ns(3, 4, 1).unwrap();
        assert_eq!(samples.len(), 3, "{cache}");
        assert!(samples.iter().all(|&ns| ns > 0.0), "{cache}: {samples:?}");
    }
    assert!(ctx.flush_buffer().size() >= 16 << 20);
}

#[test]
fn a_gpu_validation_error_fails_the_case_not_the_run() {
    let Some(ctx) = context().unwrap() else {
        return;
    };
    let sizing = sizing(&ctx, &quick()).unwrap();
    let (experiment, mut case) =
        membench::suite::select(&sizing, &["copy/offset/offset=0".to_owned()])
            .unwrap()
            .remove(0);
    // An override the shader does not declare is a pipeline validation error.
    case.overrides.push(("NO_SUCH_CONSTANT", 1.0));
    match measure(&ctx, experiment, &case, &quick()) {
        Outcome::Failed(reason) => assert!(reason.contains("GPU error"), "{reason}"),
        _ => panic!("an invalid pipeline was not reported as failed"),
    }
    // The device is still usable afterwards.
    let (experiment, case) = membench::suite::select(&sizing, &["copy/offset/offset=1".to_owned()])
        .unwrap()
        .remove(0);
    assert!(matches!(
        measure(&ctx, experiment, &case, &quick()),
        Outcome::Measured(_)
    ));
}

/// A texture of rows that need padding to 256 bytes, larger than one staging buffer
/// (64 MiB): uploaded in bands of padded rows, read back through the texture transpose.
#[test]
fn a_texture_of_padded_rows_beyond_one_staging_buffer_verifies() {
    let Some(ctx) = context().unwrap() else {
        return;
    };
    // Read by columns, the input is 4200 rows of 4000 texels (16000 bytes, padded to
    // 16128): 67.7 MB padded.
    let settings = RunSettings {
        matrix: Some((4200, 4000)),
        ..quick()
    };
    let sizing = sizing(&ctx, &settings).unwrap();
    let filter = vec!["transpose/naive_texture/size=4200x4000;block=32x16".to_owned()];
    let selected = membench::suite::select(&sizing, &filter).unwrap();
    let [(experiment, case)] = &selected[..] else {
        panic!("one case, not {}", selected.len());
    };
    if let Some(why) = &case.skip {
        eprintln!("skipped: {why}");
        return;
    }
    let backend = Wgpu {
        ctx: &ctx,
        build: WgpuBuild::Default,
    };
    let data = (case.data)();
    let kernel = backend.prepare(experiment, case, &data.inputs).unwrap();
    backend.verify(&kernel, &data.expected).unwrap();
}

#[test]
fn a_buffer_beyond_the_device_limit_is_refused() {
    let Some(ctx) = context().unwrap() else {
        return;
    };
    let settings = RunSettings {
        buffer_bytes: Some(ctx.limits.max_storage_buffer_binding_size + 4),
        ..quick()
    };
    assert!(matches!(
        sizing(&ctx, &settings),
        Err(Error::SizeLimit { .. })
    ));
}

#[test]
fn registry_is_not_empty() {
    assert!(!REGISTRY.is_empty());
}

/// The number before `unit` after `label` in `text`, e.g. 412 in "peak host memory
/// 412 MiB".
fn figure(text: &str, label: &str) -> Option<u64> {
    let after = &text[text.find(label)? + label.len()..];
    after.split_whitespace().next()?.parse().ok()
}

/// A run's host memory stays within twice its largest buffer and 512 MiB
/// (docs/method.md), here at quick size over the families with the largest buffers and
/// their predictions.
#[test]
fn a_runs_peak_host_memory_stays_within_twice_its_largest_buffer_and_512_mib() {
    let dir = std::env::temp_dir().join(format!("membench-gpu-memory-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_membench"))
        .args(["run", "--quick", "--out"])
        .arg(dir.join("memory.csv"))
        .args([
            "--filter",
            "copy/peak,hierarchy/dram,hierarchy/shared,latency/chase",
        ])
        .args([
            "--filter",
            "transpose/smem_pad,reduce/subgroup_add,transfer/upload_staging",
        ])
        .env("WGPU_BACKEND", "vulkan")
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr),
    );
    std::fs::remove_dir_all(&dir).unwrap();
    if stderr.contains("no GPU adapter found") && std::env::var_os("CI").is_none() {
        eprintln!("no adapter: the run is not tried");
        return;
    }
    assert!(output.status.success(), "{stderr}");
    let peak = figure(&stdout, "peak host memory").unwrap();
    let largest = figure(&stdout, "largest buffer").unwrap();
    assert!(largest > 0, "{stdout}");
    assert!(
        peak <= 2 * largest + 512,
        "{peak} MiB, largest buffer {largest} MiB"
    );
}
