//! A user's own kernel in `cargo bench`: described in Rust ([`GpuKernel`]), verified
//! against a Rust reference of the user's (else membench's interpreter), timed by criterion on the GPU clock with bytes
//! throughput (`iter_custom` fed by the session's clock), through the library's
//! [`measure`]. Test mode (`cargo test --benches`) runs it once at a quick size.

use std::env;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, SamplingMode::Flat, Throughput::BytesDecimal};

use membench::kernel::{GpuKernel, Measuring, measure};
use membench::measure::{Batch, Driven, Driver};
use membench::suite::{CaseId, Setting};

/// `y = a * x + y`, as examples/kernels/saxpy.wgsl.
const SAXPY: &str = include_str!("../examples/kernels/saxpy.wgsl");

/// saxpy's outputs in Rust, from every binding's first words (params, x, y): y only.
fn saxpy_reference(inputs: &[&[u32]]) -> Vec<Vec<u32>> {
    let [params, x, y] = inputs else {
        return Vec::new();
    };
    let a = params.first().map_or(0.0, |&bits| f32::from_bits(bits));
    let n = params
        .get(1)
        .map_or(0, |&n| usize::try_from(n).unwrap_or(0));
    let mut out = y.to_vec();
    for (i, word) in out.iter_mut().enumerate().take(n) {
        *word = (a * f32::from_bits(x[i]) + f32::from_bits(*word)).to_bits();
    }
    vec![out]
}

/// Criterion as the session's sampler: one benchmark group per kernel and setting.
struct Bench(Criterion);

impl Driver for Bench {
    fn takes(&self, _: &CaseId, _: Setting) -> bool {
        true
    }

    fn drive(&mut self, id: &CaseId, setting: Setting, bytes: u64, batch: Batch) {
        let mut group = self
            .0
            .benchmark_group(format!("{}/{}/{setting}", id.family, id.variant));
        group.throughput(BytesDecimal(bytes)).sampling_mode(Flat);
        group.bench_function(BenchmarkId::from_parameter(&id.params), |b| {
            b.iter_custom(&mut *batch)
        });
        group.finish();
    }
}

fn main() -> anyhow::Result<()> {
    // SAFETY: first in `main`, before any thread exists that could read the environment.
    unsafe { membench::commands::quiet_device_select() };
    let criterion = Criterion::default()
        .warm_up_time(Duration::from_millis(30))
        .measurement_time(Duration::from_millis(300))
        .sample_size(10)
        .configure_from_args();
    let benchmarking = env::args().any(|a| a == "--bench") && !env::args().any(|a| a == "--test");
    let n: u64 = if benchmarking { 1 << 24 } else { 1 << 12 };
    let saxpy = GpuKernel::new("saxpy", SAXPY)
        .size("n", n)
        .buffer("x", n)
        .buffer("y", n)
        .uniform("params.a", &[2.5])
        .uniform("params.n", &[n as f64])
        .bytes(3 * 4 * n)
        // Checked against this Rust twin instead of the interpreter.
        .reference(saxpy_reference);
    let measuring = Measuring {
        quick: !benchmarking,
        ..Measuring::default()
    };
    let mut sampler = Driven(Bench(criterion));
    let ran = match measure(&[saxpy], &mut sampler, &measuring) {
        Err(membench::Error::NoAdapter(why)) if env::var_os("CI").is_none() => {
            eprintln!("no adapter{why}: the bench is not run");
            return Ok(());
        }
        ran => ran?,
    };
    sampler.0.0.final_summary();
    for row in &ran.rows {
        eprintln!(
            "{}/{}/{} {}: {} {}",
            row.family,
            row.variant,
            row.params,
            row.setting(),
            row.status,
            row.note
        );
    }
    anyhow::ensure!(ran.failed == 0, "{} kernels failed", ran.failed);
    anyhow::ensure!(
        ran.rows.iter().all(|r| r.verified),
        "a kernel was not verified"
    );
    Ok(())
}
