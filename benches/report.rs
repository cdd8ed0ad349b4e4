//! `cargo bench --bench report`: how long reading, `compare` and `report` take on large
//! results files (10k and 100k rows), from their bytes to the page, with the Simulator
//! section `report` draws by default: the predictions the rows recorded.
//!
//! The rows are the test fixture's copy/offset rows, each at an offset of its own, so
//! that every row is a distinct case of one sweep: the shape that made the report
//! quadratic.

use std::path::Path;

use criterion::{BenchmarkId, Criterion, Throughput};

use membench::report::compare;
use membench::results::{self, DeviceResults, Format, Row};
use membench::suite::Setting;
use membench::validate::{self, Predictions, StageProgress};

/// A results file of `count` rows of one device, as bytes.
fn file_of(count: usize) -> membench::Result<String> {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/gpu-a.csv");
    let offsets: Vec<Row> = results::read(&fixture)?
        .into_iter()
        .filter(|row| row.variant == "offset" && row.status == results::Status::Ok)
        .collect();
    let rows: Vec<Row> = (0..count)
        .map(|index| Row {
            params: membench::params!(Offset => index),
            sizing: Some(membench::suite::RunSizing::default()),
            ..offsets[index % offsets.len()].clone()
        })
        .collect();
    results::render(&rows, Format::Csv)
}

/// The file's rows read, compared and reported: the sizes of the table and the page.
fn read_compare_build(bytes: &[u8]) -> membench::Result<(usize, usize)> {
    let device = DeviceResults {
        path: "rows.csv".into(),
        kernel_files: Vec::new(),
        label: "device".to_owned(),
        setting: Setting::WGPU,
        rows: results::parse(Path::new("rows.csv"), bytes)?,
    };
    let devices = [device];
    let table = compare::render(&devices, Format::Csv)?;
    let validations =
        validate::of_results(&devices, Predictions::Recorded, &StageProgress::hidden());
    let report = membench::report::build(&devices, &validations)?;
    Ok((table.len(), report.html.len()))
}

fn bench(criterion: &mut Criterion) {
    let mut group = criterion.benchmark_group("report");
    group.sample_size(10);
    for count in [10_000, 100_000] {
        let bytes = match file_of(count).and_then(|file| {
            read_compare_build(file.as_bytes())?;
            Ok(file)
        }) {
            Ok(bytes) => bytes,
            Err(error) => {
                eprintln!("report bench: {error}");
                std::process::exit(1);
            }
        };
        group.throughput(Throughput::Elements(count as u64));
        group.bench_with_input(
            BenchmarkId::new("read-compare-build", count),
            bytes.as_bytes(),
            |b, bytes| b.iter(|| read_compare_build(bytes)),
        );
    }
    group.finish();
}

criterion::criterion_group!(benches, bench);
criterion::criterion_main!(benches);
