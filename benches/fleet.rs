//! `cargo bench --bench fleet`: how long `membench fleet` takes over 1,000 results
//! files of 800 rows each (one model, one GPU a file, one GPU slow in its copy cases),
//! from the directory to the table, and the peak memory it took.
//!
//! The files are written once, into a temporary directory, before the timing. Each
//! holds the test fixture's rows and copy/offset rows at offsets of their own, every
//! bandwidth jittered by up to ±1 %. Test mode (`cargo test --benches`) writes 20.

use std::path::{Path, PathBuf};
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, Throughput};

use membench::judge::fleet::{Fleet, Options};
use membench::results::{self, Format, Row, Status};
use membench::suite::{Family, RunSizing};

/// Rows per file.
const ROWS: usize = 800;

/// The file whose copy cases are 8 % slow.
const SICK: usize = 7;

/// The rows of a GPU's file, before its identity and jitter.
fn template() -> membench::Result<Vec<Row>> {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/gpu-a.csv");
    let rows: Vec<Row> = results::read(&fixture)?
        .into_iter()
        .map(|row| Row {
            sizing: Some(RunSizing::default()),
            ..row
        })
        .collect();
    let offset = rows
        .iter()
        .find(|row| row.variant == "offset" && row.status == Status::Ok)
        .cloned()
        .ok_or_else(|| membench::Error::Internal("no copy/offset row".to_owned()))?;
    let extra: Vec<Row> = (0..ROWS.saturating_sub(rows.len()))
        .map(|index| Row {
            params: membench::params!(Offset => 1000 + index),
            ..offset.clone()
        })
        .collect();
    Ok(rows.into_iter().chain(extra).collect())
}

/// A jitter in ±1 %, the same for the same GPU and row.
fn jitter(gpu: usize, row: usize) -> f64 {
    let mut x = (gpu as u64) << 32 | row as u64;
    x = x.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    x ^= x >> 29;
    x = x.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x ^= x >> 32;
    1.0 + 0.02 * ((x % 10_000) as f64 / 10_000.0 - 0.5)
}

/// Writes `count` files of GPUs of one model into `dir`.
fn write_fleet(dir: &Path, count: usize) -> membench::Result<()> {
    let rows = template()?;
    for gpu in 0..count {
        let slow = if gpu == SICK { 0.92 } else { 1.0 };
        let mine: Vec<Row> = rows
            .iter()
            .enumerate()
            .map(|(index, row)| {
                let copy = if row.family == Family::Copy {
                    slow
                } else {
                    1.0
                };
                Row {
                    host: format!("node{:03}", gpu / 8),
                    gpu_uuid: format!("GPU-{gpu:08x}-0000-0000-0000-000000000000"),
                    pci_bus_id: format!("00000000:{:02X}:00.0", 0x10 + gpu % 8),
                    ..row.scaled(jitter(gpu, index) * copy)
                }
            })
            .collect();
        results::write(&dir.join(format!("gpu-{gpu:04}.csv")), &mine)?;
    }
    Ok(())
}

/// The fleet of `dir` read, judged and printed as a table: the table's length.
fn fleet(dir: &Path) -> membench::Result<usize> {
    let fleet = Fleet::load(&[dir.to_owned()], Options::default())?;
    if fleet.tally().sick_gpus != 1 {
        return Err(membench::Error::Internal(format!(
            "{} sick GPUs where the bench wrote one",
            fleet.tally().sick_gpus
        )));
    }
    Ok(membench::judge::fleet::render(&fleet, Format::Table)?.len())
}

/// The process's peak resident memory, where Linux says it.
fn peak_memory() -> Option<String> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    Some(line.trim_start_matches("VmHWM:").trim().to_owned())
}

fn main() {
    let mut criterion = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(20))
        .sample_size(10)
        .configure_from_args();
    // Criterion keeps its mode to itself: a run without `--bench`, or with `--test`,
    // is test mode.
    let arguments: Vec<String> = std::env::args().collect();
    let benchmarking =
        arguments.iter().any(|a| a == "--bench") && !arguments.iter().any(|a| a == "--test");
    let count = if benchmarking { 1000 } else { 20 };
    let prepared = tempfile::tempdir()
        .map_err(|e| membench::Error::Internal(e.to_string()))
        .and_then(|dir| {
            let started = std::time::Instant::now();
            write_fleet(dir.path(), count)?;
            eprintln!(
                "fleet bench: {count} files of {ROWS} rows written in {:.1} s",
                started.elapsed().as_secs_f64()
            );
            let before = peak_memory().unwrap_or_default();
            let started = std::time::Instant::now();
            fleet(dir.path())?;
            eprintln!(
                "fleet bench: one pass {:.2} s on {} threads; peak memory {before} before, {} after",
                started.elapsed().as_secs_f64(),
                rayon::current_num_threads(),
                peak_memory().unwrap_or_default()
            );
            Ok(dir)
        });
    let dir = match prepared {
        Ok(dir) => dir,
        Err(error) => {
            eprintln!("fleet bench: {error}");
            std::process::exit(1);
        }
    };
    let path: PathBuf = dir.path().to_owned();
    let mut group = criterion.benchmark_group("fleet");
    group.throughput(Throughput::Elements((count * ROWS) as u64));
    group.bench_with_input(
        BenchmarkId::new("read-judge-table", count),
        &path,
        |b, path| b.iter(|| fleet(path)),
    );
    group.finish();
    criterion.final_summary();
    if let Some(peak) = peak_memory() {
        eprintln!("fleet bench: peak memory {peak}");
    }
}
