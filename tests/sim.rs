//! The simulator against the suite: every case of the registry, on small inputs, runs
//! in the interpreter and matches its CPU reference, as do the kernels at the shapes a
//! run does not make (every subgroup size, every workgroup size, partial grids); and
//! lock-step execution agrees with the GPU (lavapipe in CI) on a kernel that exchanges
//! values across a barrier.

use std::time::Duration;

use membench::backend::wgpu::GpuContext;
use membench::sim::model::Prediction;
use membench::sim::{self, BoundBuffer, Kernel, Launch, NoTrace};
use membench::suite::families::{compute, reduce, stencil, subgroup};
use membench::suite::{Family, Key, REGISTRY, Sizing};

/// A tiny size, so the interpreter runs every workgroup of every case quickly.
fn tiny() -> Sizing {
    Sizing {
        buffer_bytes: Some(64 << 10),
        ..Sizing::nominal(true)
    }
}

#[test]
fn every_case_runs_in_the_interpreter_and_matches_its_reference() {
    let mut ran = 0;
    // Pure transfers run no kernel; the overlap's kernel runs over its whole buffer.
    for experiment in REGISTRY.iter().filter(|e| e.kernel.is_some()) {
        for case in (experiment.cases)(&tiny()) {
            if case.skip.is_some() {
                continue;
            }
            let result = membench::backend::sim::execute(experiment, &case, 32);
            // The interpreter has no f16; the f16 sweep is not simulated (sim::unmodelled).
            if experiment.is(&compute::F16) {
                let error = result.err().map(|e| e.to_string()).unwrap_or_default();
                assert!(error.contains("unsupported by the simulator"), "{error}");
                continue;
            }
            if let Err(error) = result {
                panic!("{}/{}: {error}", experiment.name(), case.params);
            }
            ran += 1;
        }
    }
    assert!(ran > 0);
}

#[test]
fn every_shader_is_run_by_some_case() {
    for (kernel, _) in membench::suite::shaders::SHADERS {
        let runnable = REGISTRY
            .iter()
            .filter(|e| e.kernel == Some(*kernel))
            .any(|e| (e.cases)(&tiny()).iter().any(|c| c.skip.is_none()));
        assert!(
            runnable,
            "shaders/{kernel}.wgsl is never run by the simulator test"
        );
    }
}

/// Every reduce variant, in the interpreter, at every workgroup size of the sweep and
/// every subgroup size WebGPU allows from 8 up, against its reference.
#[test]
fn every_reduce_variant_is_correct_for_any_subgroup_and_workgroup_size() {
    let n = 1 << 13; // one block of unroll8 at the largest workgroup
    let sizing = Sizing::nominal(true);
    let mut ran = 0;
    for workgroup in reduce::SWEEP_WORKGROUPS {
        for (experiment, case) in reduce::every_variant_at(&sizing, n, workgroup) {
            assert!(
                case.skip.is_none(),
                "{}: {:?}",
                experiment.name(),
                case.skip
            );
            for subgroup_size in [8, 16, 32, 64, 128] {
                membench::backend::sim::execute(experiment, &case, subgroup_size).unwrap_or_else(
                    |e| {
                        panic!(
                            "{} wg={workgroup} subgroup {subgroup_size}: {e}",
                            experiment.name()
                        )
                    },
                );
                ran += 1;
            }
        }
    }
    assert_eq!(ran, 12 * 5 * 5);
}

/// Every subgroup kernel, in the interpreter, at every subgroup size WebGPU allows from
/// 8 up, against the replay for the size it recorded.
#[test]
fn every_subgroup_kernel_matches_its_definition_at_any_subgroup_size() {
    for size in [8, 16, 32, 64, 128] {
        let sizing = Sizing {
            buffer_bytes: Some(64 << 10),
            subgroup_sizes: Some((size, size)),
            ..Sizing::nominal(true)
        };
        for experiment in subgroup::EXPERIMENTS {
            let case = (experiment.cases)(&sizing).remove(0);
            assert_eq!(case.workgroups, [1, 1, 1]);
            membench::backend::sim::execute(experiment, &case, size)
                .unwrap_or_else(|e| panic!("{} at {size}: {e}", experiment.name()));
        }
    }
}

#[test]
fn stencil_partial_workgroups_and_the_two_d_overhang_verify_in_the_interpreter() {
    // 5000 elements: the tenth workgroup of 512 is partial; at most 4 workgroups per
    // dimension makes a 4 x 3 grid with two workgroups past the end.
    let sizing = Sizing {
        buffer_bytes: Some(4 * 5000),
        max_workgroups_per_dimension: 4,
        ..Sizing::nominal(true)
    };
    for experiment in stencil::EXPERIMENTS {
        let [case] = &(experiment.cases)(&sizing)[..] else {
            panic!("one case");
        };
        assert_eq!(case.workgroups, [4, 3, 1]);
        let result = membench::backend::sim::execute(experiment, case, 32);
        assert_eq!(result, Ok(()), "{}", experiment.name());
    }
}

/// Reverses each workgroup's values through workgroup memory across a barrier.
const EXCHANGE: &str = "
@group(0) @binding(0) var<storage, read> src: array<u32>;
@group(0) @binding(1) var<storage, read_write> dst: array<u32>;
var<workgroup> tile: array<u32, 64>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    tile[lid] = src[gid.x] * 3u + lid;
    workgroupBarrier();
    dst[gid.x] = tile[63u - lid] ^ tile[(lid + 1u) % 64u];
}";

#[test]
fn lock_step_exchange_matches_the_gpu() {
    let src: Vec<u32> = (0..256u32)
        .map(|i| i.wrapping_mul(2_654_435_761) >> 7)
        .collect();
    let bytes: Vec<u8> = bytemuck::cast_slice(&src).to_vec();
    let kernel = Kernel::load("exchange", EXCHANGE, &[]).unwrap();
    let mut bindings = vec![
        BoundBuffer::buffer(0, 0, bytes.clone()),
        BoundBuffer::buffer(0, 1, vec![0; bytes.len()]),
    ];
    sim::run(
        &kernel,
        &mut bindings,
        &Launch::all([4, 1, 1], 32),
        &mut NoTrace,
    )
    .unwrap();
    let simulated: Vec<u32> = bytemuck::pod_collect_to_vec(&bindings[1].data);

    let ctx = match GpuContext::new(None, Duration::from_secs(60)) {
        Ok(ctx) => ctx,
        Err(error) if std::env::var_os("CI").is_none() => {
            eprintln!("GPU comparison skipped: {error}");
            return;
        }
        Err(error) => panic!("CI needs an adapter (lavapipe): {error}"),
    };
    let gpu = ctx
        .run_wgsl(EXCHANGE, &[&src], src.len(), [4, 1, 1])
        .unwrap();
    assert_eq!(simulated, gpu);
}

#[test]
fn predictions_of_the_copy_family_give_the_known_sector_counts() {
    let h100 = *membench::sim::device::preset("h100").unwrap();
    // Large enough that the grid's one partly empty subgroup hardly moves the mean.
    let sizing = Sizing {
        buffer_bytes: Some(256 << 10),
        ..Sizing::nominal(true)
    };
    for experiment in REGISTRY
        .iter()
        .filter(|e| e.family == Family::Copy && e.variant != "launch")
    {
        for case in (experiment.cases)(&sizing) {
            let expected = match experiment.variant {
                "offset" => {
                    if case.params.number(Key::Offset).unwrap() % 8 == 0 {
                        4.0
                    } else {
                        5.0
                    }
                }
                "stride" => (4.0 * case.params.number(Key::Stride).unwrap() as f64).min(32.0),
                "peak" => 16.0,
                _ => continue,
            };
            let prediction = membench::backend::sim::predict(experiment, &case, &h100).unwrap();
            // Within 2 %: the grid's last subgroup may be partly empty.
            assert!(
                (prediction.sectors_per_request / expected - 1.0).abs() < 0.02,
                "{}/{}: {} sectors per request, expected {expected}",
                experiment.name(),
                case.params,
                prediction.sectors_per_request
            );
        }
    }
}

#[test]
fn a_calibrated_model_predicts_its_calibration_for_copy_peak() {
    // At full size (a sampled window): a tiny copy stays in the L2 between dispatches
    // and is bound by latency and launches, as on a GPU.
    let model = membench::sim::device::preset("h200")
        .unwrap()
        .calibrated(3000.0);
    let experiment = REGISTRY.iter().find(|e| e.name() == "copy/peak").unwrap();
    for case in (experiment.cases)(&Sizing::nominal(false)) {
        let gbps = membench::backend::sim::predict(experiment, &case, &model)
            .unwrap()
            .effective_gbps;
        assert!(
            (gbps / 3000.0 - 1.0).abs() < 0.02,
            "{}: {gbps} GB/s",
            case.params
        );
    }
}

/// The prediction of the first case of `family/variant` at `sizing`.
fn predicted(name: &str, sizing: &Sizing, device: &sim::device::DeviceModel) -> Option<Prediction> {
    let experiment = REGISTRY.iter().find(|e| e.name() == name)?;
    let case = (experiment.cases)(sizing).into_iter().next()?;
    membench::backend::sim::predict(experiment, &case, device).ok()
}

#[test]
fn the_model_orders_the_transposes_as_cached_gpus_do() {
    let sizing = Sizing {
        matrix: Some((512, 512)),
        ..Sizing::nominal(false)
    };
    // Reading columns beats writing them where the L2 absorbs the strided reads (the
    // H200's 50 MB); on the small GTX 1050 Ti both are bound by L1 wavefronts.
    for (device, col_over_row) in [("gtx1050ti", 1.0), ("h200", 1.2)] {
        let device = *membench::sim::device::preset(device).unwrap();
        let predict =
            |variant: &str| predicted(&format!("transpose/{variant}"), &sizing, &device).unwrap();
        let gbps = |variant: &str| predict(variant).effective_gbps;
        let (row, col) = (gbps("naive_row"), gbps("naive_col"));
        assert!(
            col >= col_over_row * row,
            "{}: naive_col {col} vs naive_row {row}",
            device.name
        );
        assert!(gbps("smem_pad") >= gbps("smem"), "{}", device.name);
        assert!(gbps("copy_row") > 1.2 * gbps("copy_col"), "{}", device.name);
        // A 32 x 16 tile read by columns: 16 lanes on each of two banks (reads) plus
        // conflict-free row writes; the padded tile is conflict-free throughout.
        let ways = |variant: &str| predict(variant).bank_ways.unwrap_or(0.0);
        assert!(
            ways("smem") > 4.0,
            "{}: smem {} ways",
            device.name,
            ways("smem")
        );
        assert!(
            (ways("smem_pad") - 1.0).abs() < 0.01,
            "{}: smem_pad {} ways",
            device.name,
            ways("smem_pad")
        );
    }
}

/// The simulator's bank ways and uniform addresses for the on-chip families, at quick
/// size (r = 32 reads per invocation), through the CSV row as a run fills it. Every
/// invocation writes its tile word once and reads r times, so the ways per request
/// average the write's ways and the reads'.
#[test]
fn predictions_of_the_on_chip_families_give_the_expected_ways_and_addresses() {
    let h200 = *membench::sim::device::preset("h200").unwrap();
    let sizing = Sizing::nominal(true);
    let gcd = |mut a: u32, mut b: u32| {
        while b != 0 {
            (a, b) = (b, a % b);
        }
        a
    };
    let mut checked = 0;
    for experiment in REGISTRY
        .iter()
        .filter(|e| matches!(e.family, Family::Bank | Family::Constant))
    {
        for case in (experiment.cases)(&sizing) {
            let id = case.id(experiment);
            let r = case.params.number(Key::Repeats).unwrap() as f64;
            let average = |writes: f64, write: f64, reads: f64, read: f64| {
                (writes * write + reads * read) / (writes + reads)
            };
            let prediction = membench::backend::sim::predict(experiment, &case, &h200).unwrap();
            let mut row = membench::results::Row::default();
            membench::run::fill_prediction(&mut row, &Ok(prediction));
            let close = |got: Option<f64>, want: f64| {
                assert!(
                    got.is_some_and(|g| (g - want).abs() < 1e-9),
                    "{id}: {got:?}, expected {want}"
                );
            };
            match experiment.family {
                Family::Bank => {
                    // (write ways, read ways)
                    let (write, read) = match experiment.variant {
                        "row_col" | "row_col_override" => (1, 32),
                        "col_col" => (32, 32),
                        "rect_row_col" => (1, 16),
                        "row_row"
                        | "rect_row_row"
                        | "row_col_pad"
                        | "row_col_override_pad"
                        | "rect_row_col_pad" => (1, 1),
                        "stride" => match case.params.number(Key::Stride).unwrap() {
                            // Every lane at one word: a broadcast.
                            0 => (1, 1),
                            s => (1, gcd(u32::try_from(s).unwrap(), 32)),
                        },
                        other => panic!("{other}: no expected ways"),
                    };
                    let want = average(1.0, f64::from(write), r, f64::from(read));
                    close(row.sim_bank_ways, want);
                    // On-chip: banks, or at a few rounds the latency or issue of them.
                    assert!(
                        matches!(
                            prediction.bound,
                            sim::model::Bound::Shared
                                | sim::model::Bound::Latency
                                | sim::model::Bound::Issue
                        ),
                        "{id}: {:?}",
                        prediction.bound
                    );
                }
                _ => {
                    let divergent = case.params.get(Key::Read) == Some(&"divergent".into());
                    assert_eq!(row.sim_bank_ways, None, "{id}");
                    // The uniform loads of one address each before the reads (r,
                    // index_mask) are constant operands, not requests: the reads alone.
                    let (addresses, sectors) = if divergent {
                        // 32 consecutive words from element k: 4 sectors where k is a
                        // multiple of 8, else 5.
                        (32.0, 4.875)
                    } else {
                        (1.0, 1.0)
                    };
                    if experiment.variant == "uniform" {
                        close(prediction.uniform_addresses_per_request, addresses);
                    } else {
                        // Its uniform reads are all at fixed addresses: none is a
                        // request.
                        assert_eq!(prediction.uniform_addresses_per_request, None, "{id}");
                        // The reads, and one write of 4 sectors per subgroup.
                        close(row.sim_sectors_per_request, average(1.0, 4.0, r, sectors));
                    }
                }
            }
            checked += 1;
        }
    }
    assert_eq!(checked, 9 + 33 + 4);
}

/// A pointer chase is predicted on its real chain, not on zeros (which would chase one
/// word): at 1 MiB (8192 lines, past the model's L1) every dispatch walks the whole
/// cycle, so the timed one finds it in the L2 and each load takes the L2's latency; at
/// 4 KiB (32 lines) the L1's, the L1 being refilled on the first of its many walks.
#[test]
fn a_pointer_chase_is_predicted_on_its_chain() {
    let h100 = *membench::sim::device::preset("h100").unwrap();
    let experiment = &membench::suite::families::latency::CHASE;
    let sizing = Sizing {
        buffer_bytes: Some(1 << 20),
        ..Sizing::nominal(true)
    };
    let chase = |footprint: u64| {
        let case = (experiment.cases)(&sizing)
            .into_iter()
            .find(|c| c.params.number(Key::Footprint) == Some(footprint))
            .unwrap();
        let prediction = membench::backend::sim::predict(experiment, &case, &h100).unwrap();
        let ns_per_load = prediction.time_s * 1e9 / case.elements as f64;
        (prediction.dram_read_bytes / 32, ns_per_load)
    };
    let (dram, ns) = chase(1 << 20);
    assert_eq!(dram, 0, "the cycle stays in the L2");
    assert!(
        (ns / h100.l2_latency_ns - 1.0).abs() < 0.1,
        "{ns} ns per load"
    );
    let (dram, ns) = chase(4 << 10);
    assert_eq!(dram, 0);
    assert!(
        (ns / h100.l1_latency_ns - 1.0).abs() < 0.1,
        "{ns} ns per load"
    );
}
