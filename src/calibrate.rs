//! Calibration: a device model fitted to a handful of microbenchmark rows of a run,
//! named in [`CALIBRATION`]; every other row is held out, so a prediction of it is a
//! prediction, not a fit. Each row sets one device property with a physical meaning,
//! in the order listed (later rows are predicted with the properties set before).
//!
//! Three budgets share the one list: at most twelve kernel rows (wgpu, the
//! [`hardware_build`]) for the memory model, at most two transfer rows (CUDA's pinned
//! upload) for the transfer model ([`crate::sim::transfer`]), and one row for each of
//! the dispatch terms ([`crate::sim::dispatch`]) and multiply-add rates it calibrates.
//! Where a file has no transfer row to calibrate from, the link is the row's
//! `pcie_link`, else the preset's.

use crate::params;
use crate::results::Row;
use crate::sim::device::DeviceModel;
use crate::sim::model::Prediction;
use crate::suite::families::{
    bank, compute, constant, copy, hierarchy, latency, launch, transfer, transpose,
};
use crate::suite::{Api, Build, CaseId, Experiment, Measure, Params, Rebuilder, TransferPath};

/// The device property a calibration row sets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Property {
    DramBandwidth,
    /// A read-only stream's DRAM rate over a copy's.
    DramReadRate,
    L1Latency,
    L2Latency,
    DramLatency,
    L2ReadRate,
    LoadedLatency,
    LaunchInterval,
    IssueRate,
    UniformRate,
    L2WriteRate,
    DramPartialLine,
    /// The host↔device link's rate (the transfer model).
    LinkRate,
    /// The fixed cost of one host↔device transfer (the transfer model).
    TransferOverhead,
    /// The f32 multiply-adds an SM completes per clock.
    F32FmaRate,
    /// The integer multiply-adds an SM completes per clock.
    IntMadRate,
    /// Issuing a dispatch that waits for nothing (the dispatch model).
    DispatchInterval,
    /// What a dispatch that waits for the one before adds (the dispatch model).
    DependentDispatch,
}

/// Which budget of rows a property's row counts against.
#[cfg(test)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum RowBudget {
    /// The memory model's twelve kernel rows.
    Memory,
    /// The transfer model's two rows.
    Transfer,
    /// One row per term: the multiply-add rates and the dispatch terms.
    OnePerTerm,
}

#[cfg(test)]
impl Property {
    fn budget(self) -> RowBudget {
        match self {
            Property::LinkRate | Property::TransferOverhead => RowBudget::Transfer,
            Property::F32FmaRate
            | Property::IntMadRate
            | Property::DispatchInterval
            | Property::DependentDispatch => RowBudget::OnePerTerm,
            _ => RowBudget::Memory,
        }
    }
}

/// One row a device model is calibrated from: its case, the property it sets and why
/// that row isolates it.
#[derive(Debug)]
pub(crate) struct CalibrationRow {
    pub experiment: &'static Experiment,
    /// The case's parameters (a function: `Params` are not made in a constant).
    pub params: fn() -> Params,
    pub(crate) property: Property,
    #[expect(
        dead_code,
        reason = "the table says why each row isolates its property for its reader; no code reads it"
    )]
    pub why: &'static str,
}

impl CalibrationRow {
    /// The case the row is of.
    pub(crate) fn id(&self) -> CaseId {
        CaseId {
            family: self.experiment.family,
            variant: self.experiment.variant.to_owned(),
            params: (self.params)(),
        }
    }

    /// The api whose row calibrates: a path only CUDA has is CUDA's; anything else
    /// wgpu's.
    pub(crate) fn api(&self) -> Api {
        match self.experiment.measure {
            Measure::Transfer(path) if !path.in_wgpu() => Api::Cuda,
            _ => Api::Wgpu,
        }
    }

    /// Whether the row calibrates the transfer model rather than the memory model.
    #[cfg(test)]
    pub(crate) fn is_transfer(&self) -> bool {
        matches!(self.experiment.measure, Measure::Transfer(_))
    }

    /// Whether `id` is this row's case (its parameters in any order).
    pub(crate) fn is(&self, id: &CaseId) -> bool {
        id.family == self.experiment.family
            && id.variant == self.experiment.variant
            && id.params.same_pairs(&(self.params)())
    }
}

/// The rows a device model is calibrated from, in the order their properties are set.
pub(crate) const CALIBRATION: &[CalibrationRow] = &[
    CalibrationRow {
        experiment: &copy::PEAK,
        params: || params!(Launch => "vec4"),
        property: Property::DramBandwidth,
        why: "a vec4 copy of whole sectors streams at the DRAM's practical rate",
    },
    CalibrationRow {
        experiment: &hierarchy::DRAM_READ,
        params: || params!(Size => 1073741824u64),
        property: Property::DramReadRate,
        why: "reading 1 GiB, far past the L2, streams at the DRAM's read rate, which an H100 and an H200 measure above the copy's",
    },
    CalibrationRow {
        experiment: &latency::CHASE,
        params: || params!(Footprint => 16384u64),
        property: Property::L1Latency,
        why: "a pointer chase within the L1",
    },
    CalibrationRow {
        experiment: &latency::CHASE,
        params: || params!(Footprint => 16777216u64),
        property: Property::L2Latency,
        why: "a pointer chase within the L2",
    },
    CalibrationRow {
        experiment: &latency::CHASE,
        params: || params!(Footprint => 1073741824u64),
        property: Property::DramLatency,
        why: "a pointer chase far beyond the L2, on an idle DRAM",
    },
    CalibrationRow {
        experiment: &hierarchy::SHARED,
        params: || params!(Footprint => 16777216u64),
        property: Property::L2ReadRate,
        why: "every SM re-reading one 16 MiB buffer, past the L1s and well inside the L2, streams at the L2's read rate",
    },
    CalibrationRow {
        experiment: &transpose::NAIVE_ROW,
        params: || params!(Size => (8192u32, 8192u32), Block => (32u32, 16u32)),
        property: Property::L2WriteRate,
        why: "writing columns makes every lane's store its own line: L2 write requests",
    },
    CalibrationRow {
        experiment: &copy::STRIDE,
        params: || params!(Stride => 32u64),
        property: Property::DramPartialLine,
        why: "a copy at 128-byte stride moves one sector per line: DRAM requests of part of a line",
    },
    CalibrationRow {
        experiment: &copy::OFFSET,
        params: || params!(Offset => 0u64),
        property: Property::LoadedLatency,
        why: "a scalar copy at full occupancy is bound by its loads in flight (Little's law)",
    },
    CalibrationRow {
        experiment: &copy::LAUNCH,
        params: || params!(Wg => 64u64, Grid => "2d"),
        property: Property::LaunchInterval,
        why: "64-invocation workgroups finish sooner than an SM launches them",
    },
    CalibrationRow {
        experiment: &bank::STRIDE,
        params: || params!(Stride => 1u64, Repeats => 1024u64),
        property: Property::IssueRate,
        why: "conflict-free workgroup-memory reads are bound by instruction issue",
    },
    CalibrationRow {
        experiment: &constant::UNIFORM,
        params: || params!(Read => "divergent", Repeats => 1024u64),
        property: Property::UniformRate,
        why: "a uniform read of 32 distinct addresses serialises in the constant cache",
    },
    // The multiply-add rates and the dispatch terms, one row each, apart from the
    // memory model's twelve.
    CalibrationRow {
        experiment: &compute::F32,
        params: || params!(Rounds => 1024u64),
        property: Property::F32FmaRate,
        why: "1024 f32 multiply-adds per element take more than ten times the copy's time: the FMA pipe's rate",
    },
    CalibrationRow {
        experiment: &compute::INT,
        params: || params!(Rounds => 1024u64),
        property: Property::IntMadRate,
        why: "1024 integer multiply-adds per element take more than twenty times the copy's time: the integer pipe's rate",
    },
    CalibrationRow {
        experiment: &launch::APART,
        params: || params!(Size => 256u64),
        property: Property::DispatchInterval,
        why: "one-workgroup dispatches that nothing orders: the front end's interval",
    },
    CalibrationRow {
        experiment: &launch::SHARED,
        params: || params!(Size => 256u64),
        property: Property::DependentDispatch,
        why: "one-workgroup dispatches on one buffer: each waits for the one before (wgpu's barrier)",
    },
    // The transfer model's two rows, apart from the kernel rows' budget.
    CalibrationRow {
        experiment: &transfer::UPLOAD_PINNED,
        params: || params!(Size => 268435456u64, Chunks => 1u64),
        property: Property::LinkRate,
        why: "a 256 MiB copy from pinned memory is the link's rate: the fixed cost is 0.2 % of it",
    },
    CalibrationRow {
        experiment: &transfer::UPLOAD_PINNED,
        params: || params!(Size => 4096u64, Chunks => 1u64),
        property: Property::TransferOverhead,
        why: "a 4 KiB copy from pinned memory is its fixed cost: the bytes take 1 % of it",
    },
];

/// Whether case `id` is one [`CALIBRATION`] reads.
pub(crate) fn is_calibration(id: &CaseId) -> bool {
    CALIBRATION.iter().any(|row| row.is(id))
}

/// The build whose rows the model is judged and calibrated on: the wgpu build closest
/// to the hardware that `rows` hold (tax-free, else unchecked, else default). The
/// simulator runs the WGSL as written, so CUDA twins (other code) are not its rows.
pub(crate) fn hardware_build(rows: &[Row]) -> Option<Build> {
    [Build::TaxFree, Build::Unchecked, Build::Default]
        .into_iter()
        .find(|&build| rows.iter().any(|r| r.api == Api::Wgpu && r.build == build))
}

/// A model and the calibration rows' cases it was fitted to.
#[derive(Clone, Debug)]
pub struct Calibration {
    /// The fitted model.
    pub model: DeviceModel,
    /// The cases it was fitted to.
    pub used: Vec<CaseId>,
}

/// `preset` with the properties [`CALIBRATION`] names set from `rows` (of one device,
/// on the [`hardware_build`]) where they hold the row; the preset's value otherwise.
pub fn calibrate(preset: &DeviceModel, rows: &[Row]) -> Calibration {
    let build = hardware_build(rows);
    let mut used = Vec::new();
    let mut model = *preset;
    // The link the GPU's identity names, until a row measures it.
    if let Some(gbps) = rows
        .iter()
        .find_map(|r| crate::sim::link::pcie_link_gbps(&r.pcie_link))
    {
        model.link_gbps = gbps;
    }
    for calibration in CALIBRATION {
        let api = calibration.api();
        let Some(row) = rows
            .iter()
            .filter(|r| r.api == api && (api != Api::Wgpu || Some(r.build) == build))
            .find(|r| calibration.is(&r.id()))
        else {
            continue;
        };
        let Some(measured_s) = row.gbps_median.map(|g| row.bytes as f64 / (g * 1e9)) else {
            continue;
        };
        if let Measure::Transfer(path) = calibration.experiment.measure {
            if set_transfer(&mut model, calibration.property, path, row, measured_s) {
                model.calibrated = true;
                used.push(calibration.id());
            }
            continue;
        }
        // The registry's case the row measured, as the validator rebuilds it.
        let Ok((experiment, case)) =
            Rebuilder::default().find(&row.id(), row.sizing, (row.elements, row.bytes))
        else {
            continue;
        };
        let Ok(p) = crate::backend::sim::predict(experiment, &case, &model) else {
            continue;
        };
        if set(&mut model, calibration.property, &p, measured_s) {
            model.calibrated = true;
            used.push(calibration.id());
        }
    }
    Calibration { model, used }
}

/// Sets the transfer model's `property` so that the term it governs in `row`'s
/// predicted time (along `path`) takes what `measured_s` leaves of the other terms;
/// false when there is no such term or nothing is left.
fn set_transfer(
    model: &mut DeviceModel,
    property: Property,
    path: TransferPath,
    row: &Row,
    measured_s: f64,
) -> bool {
    let Ok(t) = crate::sim::transfer::time(model, path, row.api, &row.id().params) else {
        return false;
    };
    let (value, term, slower_is_larger) = match property {
        Property::LinkRate => (&mut model.link_gbps, t.link_s, false),
        Property::TransferOverhead => (&mut model.transfer_overhead_us, t.overhead_s, true),
        _ => return false,
    };
    let left_s = measured_s - (t.total_s() - term);
    if !(term > 0.0 && term.is_finite() && left_s > 0.0) {
        return false;
    }
    *value *= if slower_is_larger {
        left_s / term
    } else {
        term / left_s
    };
    true
}

/// Scales `property` so that the term it governs in `p` takes `measured_s`; false
/// when `p` has no such term.
fn set(model: &mut DeviceModel, property: Property, p: &Prediction, measured_s: f64) -> bool {
    let t = &p.terms;
    // A time proportional to the property (latencies, intervals) or inversely (rates).
    let (value, term, slower_is_larger): (&mut f64, f64, bool) = match property {
        Property::DramBandwidth => (&mut model.dram_gbps, t.dram, false),
        Property::DramReadRate => (&mut model.dram_read_speedup, t.dram_reads, false),
        Property::L1Latency => (&mut model.l1_latency_ns, t.latency, true),
        Property::L2Latency => (&mut model.l2_latency_ns, t.latency, true),
        Property::DramLatency => (&mut model.dram_latency_ns, t.latency, true),
        Property::LoadedLatency => (&mut model.loaded_latency_ns, t.latency, true),
        Property::LaunchInterval => (&mut model.workgroup_launch_ns, t.launch, true),
        Property::IssueRate => (&mut model.issue_per_clock, t.issue, false),
        Property::UniformRate => (&mut model.uniform_addresses_per_s, t.uniform, false),
        Property::L2ReadRate => (&mut model.l2_gbps, t.l2 - t.l2_writes, false),
        Property::L2WriteRate => (&mut model.l2_write_requests_per_s, t.l2_writes, false),
        Property::DramPartialLine => (&mut model.dram_unmoved_sector_share, t.dram_partial, true),
        Property::F32FmaRate => (&mut model.f32_fma_per_clock, t.f32_fma, false),
        Property::IntMadRate => (&mut model.int_mad_per_clock, t.int_mad, false),
        Property::DispatchInterval => (&mut model.dispatch_ns, t.dispatch, true),
        Property::DependentDispatch => (&mut model.dependent_dispatch_ns, t.dispatch, true),
        // The transfer model's ([`set_transfer`]).
        Property::LinkRate | Property::TransferOverhead => return false,
    };
    // The write rate governs only the rest of the time the L2 takes.
    let measured_s = match property {
        Property::DramReadRate => measured_s - (t.dram - t.dram_reads),
        Property::L2ReadRate => measured_s - t.l2_writes,
        Property::L2WriteRate => measured_s - (t.l2 - t.l2_writes),
        Property::DramPartialLine => measured_s - (t.dram - t.dram_partial),
        // The kernel's own time after the wait is the memory model's.
        Property::DependentDispatch => measured_s - (p.time_s - t.dispatch),
        _ => measured_s,
    };
    if !(term > 0.0 && term.is_finite() && measured_s > 0.0) {
        return false;
    }
    *value *= if slower_is_larger {
        measured_s / term
    } else {
        term / measured_s
    };
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::Status;

    #[test]
    fn kernel_transfer_and_term_rows_keep_their_budgets() {
        let count = |budget| {
            CALIBRATION
                .iter()
                .filter(|r| r.property.budget() == budget)
                .count()
        };
        assert_eq!(count(RowBudget::Transfer), 2);
        assert!(count(RowBudget::Memory) <= 12);
        assert_eq!(count(RowBudget::OnePerTerm), 4);
        for row in CALIBRATION {
            assert_eq!(row.api() == Api::Cuda, row.is_transfer(), "{}", row.id());
            let setting = CALIBRATION.iter().filter(|r| r.property == row.property);
            assert_eq!(setting.count(), 1, "{:?} is set by one row", row.property);
        }
    }

    /// A CUDA `upload_pinned` row of `bytes` measured in `time_s`.
    fn pinned(bytes: u64, time_s: f64) -> Row {
        let params = transfer::Shape { bytes, chunks: 1 }.params();
        let cases = (transfer::UPLOAD_PINNED.cases)(&crate::suite::Sizing::nominal(false));
        let case = cases.iter().find(|c| c.params == params).unwrap();
        Row {
            status: Status::Ok,
            api: Api::Cuda,
            gbps_median: Some(bytes as f64 / time_s / 1e9),
            pcie_link: "gen4x16".to_owned(),
            ..crate::run::case_row(&transfer::UPLOAD_PINNED, case)
        }
    }

    #[test]
    fn the_l2_read_row_sets_the_l2_bandwidth_that_reproduces_it() {
        let h100 = crate::sim::device::preset("h100").unwrap();
        let row = CALIBRATION
            .iter()
            .find(|r| r.property == Property::L2ReadRate)
            .unwrap();
        let cases = (row.experiment.cases)(&crate::suite::Sizing::nominal(false));
        let case = cases.iter().find(|c| c.params == (row.params)()).unwrap();
        // Faster than the preset's estimate, as the H100 measures it.
        let measured_gbps = 8400.0;
        let calibration = calibrate(
            h100,
            &[Row {
                status: Status::Ok,
                build: Build::TaxFree,
                gbps_median: Some(measured_gbps),
                ..crate::run::case_row(row.experiment, case)
            }],
        );
        assert_eq!(calibration.used, [row.id()]);
        assert!(calibration.model.l2_gbps > h100.l2_gbps);
        let p = crate::backend::sim::predict(row.experiment, case, &calibration.model).unwrap();
        assert_eq!(p.bound, crate::sim::model::Bound::L2);
        assert!(
            (p.effective_gbps / measured_gbps - 1.0).abs() < 1e-3,
            "{}",
            p.effective_gbps
        );
    }

    #[test]
    fn each_term_row_sets_its_term_so_that_the_row_is_reproduced() {
        let h100 = crate::sim::device::preset("h100").unwrap();
        let sizing = crate::suite::Sizing::nominal(false);
        for row in CALIBRATION
            .iter()
            .filter(|r| r.property.budget() == RowBudget::OnePerTerm)
        {
            let cases = (row.experiment.cases)(&sizing);
            let case = cases.iter().find(|c| c.params == (row.params)()).unwrap();
            let preset_s = crate::backend::sim::predict(row.experiment, case, h100)
                .unwrap()
                .time_s;
            // A quarter slower than the preset predicts.
            let measured_s = 1.25 * preset_s;
            let calibration = calibrate(
                h100,
                &[Row {
                    status: Status::Ok,
                    build: Build::TaxFree,
                    gbps_median: Some(case.bytes as f64 / measured_s / 1e9),
                    ..crate::run::case_row(row.experiment, case)
                }],
            );
            assert_eq!(calibration.used, [row.id()], "{:?}", row.property);
            let model = calibration.model;
            let p = crate::backend::sim::predict(row.experiment, case, &model).unwrap();
            assert!(
                (p.time_s / measured_s - 1.0).abs() < 1e-3,
                "{:?}: {} against {measured_s}",
                row.property,
                p.time_s
            );
            // Only its own term moved.
            let moved = [
                model.f32_fma_per_clock != h100.f32_fma_per_clock,
                model.int_mad_per_clock != h100.int_mad_per_clock,
                model.dispatch_ns != h100.dispatch_ns,
                model.dependent_dispatch_ns != h100.dependent_dispatch_ns,
            ];
            assert_eq!(
                moved.iter().filter(|&&m| m).count(),
                1,
                "{:?}",
                row.property
            );
        }
    }

    #[test]
    fn pinned_rows_at_the_calibration_sizes_are_reproduced() {
        let h100 = crate::sim::device::preset("h100").unwrap();
        let (large, small) = (pinned(256 << 20, 4.9e-3), pinned(4096, 8e-6));
        let calibration = calibrate(h100, &[large.clone(), small.clone()]);
        assert_eq!(calibration.used.len(), 2);
        let model = calibration.model;
        for row in [large, small] {
            let path = TransferPath::Cuda(crate::suite::CudaPath::Upload(
                crate::suite::HostMemory::Pinned,
            ));
            let t = crate::sim::transfer::time(&model, path, Api::Cuda, &row.id().params)
                .unwrap()
                .total_s();
            let measured = row.bytes as f64 / (row.gbps_median.unwrap() * 1e9);
            assert!((t / measured - 1.0).abs() < 2e-3, "{t} vs {measured}");
        }
        // Without the rows, the identity's link: PCIe 4.0 x16.
        let named = calibrate(
            h100,
            &[Row {
                variant: "upload_pageable".into(),
                ..pinned(4096, 8e-6)
            }],
        );
        assert!((named.model.link_gbps - crate::sim::link::PCIE4_X16_GBPS).abs() < 1e-9);
        assert!(named.used.is_empty());
    }
}
