//! Calibration: a device model fitted to a handful of microbenchmark rows of a run,
//! named in [`CALIBRATION`]; every other row is held out, so a prediction of it is a
//! prediction, not a fit. Each row sets one device property with a physical meaning,
//! in the order listed (later rows are predicted with the properties set before).
//!
//! Three budgets share the one list: at most twelve kernel rows (wgpu, the
//! [`hardware_build`]) for the memory model, at most four transfer rows per api for
//! the transfer model ([`crate::sim::transfer`]), and one row for each of the dispatch
//! terms ([`crate::sim::dispatch`]) and multiply-add rates it calibrates. Where a file
//! has no transfer row to calibrate from, the link is the row's `pcie_link`, else the
//! preset's.

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
    /// The transfer model's ([`crate::sim::link::ApiCosts`]): a DMA copy's rate
    /// across the link (CUDA's pinned copies measure the bus itself).
    LinkRate,
    /// Submitting a transfer and seeing it finish.
    Submit,
    /// Each further copy of a batch.
    NextCopy,
    /// One command between two GPU timestamps.
    Command,
    /// A copy within device memory.
    DeviceCopyRate,
    /// Registering host memory for a transfer, besides its pages.
    Register,
    /// The f32 multiply-adds an SM completes per clock.
    F32FmaRate,
    /// The integer multiply-adds an SM completes per clock.
    IntMadRate,
    /// Issuing a dispatch that waits for nothing (the dispatch model).
    DispatchInterval,
    /// What a dispatch that waits for the one before adds (the dispatch model).
    DependentDispatch,
}

/// Whether a property is one of the terms calibrated from one row each, apart from the
/// memory model's twelve rows: the multiply-add rates and the dispatch terms.
#[cfg(test)]
impl Property {
    fn one_per_term(self) -> bool {
        matches!(
            self,
            Property::F32FmaRate
                | Property::IntMadRate
                | Property::DispatchInterval
                | Property::DependentDispatch
        )
    }
}

/// One row a device model is calibrated from: its case, the property it sets and why
/// that row isolates it.
#[derive(Debug)]
pub(crate) struct CalibrationRow {
    pub experiment: &'static Experiment,
    /// The api whose row it is.
    pub(crate) api: Api,
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

    /// Whether the row calibrates the transfer model rather than the memory model.
    #[cfg(test)]
    pub(crate) fn is_transfer(&self) -> bool {
        matches!(self.experiment.measure, Measure::Transfer(_))
    }

    /// Whether `row` is this row's measurement: its case, its api and, for wgpu, the
    /// build its family is judged on (`build` for kernels, [`TRANSFER_BUILD`]).
    pub(crate) fn takes(&self, row: &Row, build: Option<Build>) -> bool {
        let wanted = match self.experiment.measure {
            Measure::Transfer(_) => Some(TRANSFER_BUILD),
            _ => build,
        };
        row.api == self.api
            && (row.api != Api::Wgpu || Some(row.build) == wanted)
            && self.is(&row.id())
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
        api: Api::Wgpu,
        experiment: &copy::PEAK,
        params: || params!(Launch => "vec4"),
        property: Property::DramBandwidth,
        why: "a vec4 copy of whole sectors streams at the DRAM's practical rate",
    },
    CalibrationRow {
        api: Api::Wgpu,
        experiment: &hierarchy::DRAM_READ,
        params: || params!(Size => 1073741824u64),
        property: Property::DramReadRate,
        why: "reading 1 GiB, far past the L2, streams at the DRAM's read rate, which an H100 and an H200 measure above the copy's",
    },
    CalibrationRow {
        api: Api::Wgpu,
        experiment: &latency::CHASE,
        params: || params!(Footprint => 16384u64),
        property: Property::L1Latency,
        why: "a pointer chase within the L1",
    },
    CalibrationRow {
        api: Api::Wgpu,
        experiment: &latency::CHASE,
        params: || params!(Footprint => 16777216u64),
        property: Property::L2Latency,
        why: "a pointer chase within the L2",
    },
    CalibrationRow {
        api: Api::Wgpu,
        experiment: &latency::CHASE,
        params: || params!(Footprint => 1073741824u64),
        property: Property::DramLatency,
        why: "a pointer chase far beyond the L2, on an idle DRAM",
    },
    CalibrationRow {
        api: Api::Wgpu,
        experiment: &hierarchy::SHARED,
        params: || params!(Footprint => 16777216u64),
        property: Property::L2ReadRate,
        why: "every SM re-reading one 16 MiB buffer, past the L1s and well inside the L2, streams at the L2's read rate",
    },
    CalibrationRow {
        api: Api::Wgpu,
        experiment: &transpose::NAIVE_ROW,
        params: || params!(Size => (8192u32, 8192u32), Block => (32u32, 16u32)),
        property: Property::L2WriteRate,
        why: "writing columns makes every lane's store its own line: L2 write requests",
    },
    CalibrationRow {
        api: Api::Wgpu,
        experiment: &copy::STRIDE,
        params: || params!(Stride => 32u64),
        property: Property::DramPartialLine,
        why: "a copy at 128-byte stride moves one sector per line: DRAM requests of part of a line",
    },
    CalibrationRow {
        api: Api::Wgpu,
        experiment: &copy::OFFSET,
        params: || params!(Offset => 0u64),
        property: Property::LoadedLatency,
        why: "a scalar copy at full occupancy is bound by its loads in flight (Little's law)",
    },
    CalibrationRow {
        api: Api::Wgpu,
        experiment: &copy::LAUNCH,
        params: || params!(Wg => 64u64, Grid => "2d"),
        property: Property::LaunchInterval,
        why: "64-invocation workgroups finish sooner than an SM launches them",
    },
    CalibrationRow {
        api: Api::Wgpu,
        experiment: &bank::STRIDE,
        params: || params!(Stride => 1u64, Repeats => 1024u64),
        property: Property::IssueRate,
        why: "conflict-free workgroup-memory reads are bound by instruction issue",
    },
    CalibrationRow {
        api: Api::Wgpu,
        experiment: &constant::UNIFORM,
        params: || params!(Read => "divergent", Repeats => 1024u64),
        property: Property::UniformRate,
        why: "a uniform read of 32 distinct addresses serialises in the constant cache",
    },
    // The multiply-add rates and the dispatch terms, one row each, apart from the
    // memory model's twelve.
    CalibrationRow {
        api: Api::Wgpu,
        experiment: &compute::F32,
        params: || params!(Rounds => 1024u64),
        property: Property::F32FmaRate,
        why: "1024 f32 multiply-adds per element take more than ten times the copy's time: the FMA pipe's rate",
    },
    CalibrationRow {
        api: Api::Wgpu,
        experiment: &compute::INT,
        params: || params!(Rounds => 1024u64),
        property: Property::IntMadRate,
        why: "1024 integer multiply-adds per element take more than twenty times the copy's time: the integer pipe's rate",
    },
    CalibrationRow {
        api: Api::Wgpu,
        experiment: &launch::APART,
        params: || params!(Size => 256u64),
        property: Property::DispatchInterval,
        why: "one-workgroup dispatches that nothing orders: the front end's interval",
    },
    CalibrationRow {
        api: Api::Wgpu,
        experiment: &launch::SHARED,
        params: || params!(Size => 256u64),
        property: Property::DependentDispatch,
        why: "one-workgroup dispatches on one buffer: each waits for the one before (wgpu's barrier)",
    },
    // The transfer model's rows, apart from the kernel rows' budget: four per api.
    CalibrationRow {
        api: Api::Cuda,
        experiment: &transfer::UPLOAD_PINNED,
        params: || params!(Size => 268435456u64, Chunks => 1u64),
        property: Property::LinkRate,
        why: "a 256 MiB copy from pinned memory is the bus's rate: the fixed cost is 0.2 % of it",
    },
    CalibrationRow {
        api: Api::Cuda,
        experiment: &transfer::UPLOAD_PINNED,
        params: || params!(Size => 4096u64, Chunks => 1u64),
        property: Property::Submit,
        why: "a 4 KiB copy from pinned memory is its fixed cost: the bytes take 1 % of it",
    },
    CalibrationRow {
        api: Api::Cuda,
        experiment: &transfer::UPLOAD_PINNED,
        params: || params!(Size => 4194304u64, Chunks => 1024u64),
        property: Property::NextCopy,
        why: "1024 queued copies of 4 KiB from pinned memory cost one fixed cost and 1023 further copies",
    },
    CalibrationRow {
        api: Api::Cuda,
        experiment: &transfer::UPLOAD_REGISTERED,
        params: || params!(Size => 4096u64, Chunks => 1u64),
        property: Property::Register,
        why: "a 4 KiB copy from memory registered on the clock is the registration's fixed cost beside a pinned copy's, which with its one page takes 6 % of it",
    },
    CalibrationRow {
        api: Api::Wgpu,
        experiment: &transfer::UPLOAD_IMPORTED,
        params: || params!(Size => 268435456u64, Chunks => 1u64),
        property: Property::LinkRate,
        why: "a 256 MiB copy from imported host memory is the rate of wgpu's copies across the link",
    },
    CalibrationRow {
        api: Api::Wgpu,
        experiment: &transfer::UPLOAD_IMPORTED,
        params: || params!(Size => 4096u64, Chunks => 1u64),
        property: Property::Submit,
        why: "a 4 KiB copy from imported host memory is a submission and its wait: the bytes take 0.1 % of it",
    },
    CalibrationRow {
        api: Api::Wgpu,
        experiment: &transfer::DEVICE_COPY,
        params: || params!(Size => 4096u64, Chunks => 1u64),
        property: Property::Command,
        why: "a 4 KiB copy between two timestamps is one command's time: the bytes take 0.1 % of it",
    },
    CalibrationRow {
        api: Api::Wgpu,
        experiment: &transfer::DEVICE_COPY,
        params: || params!(Size => 268435456u64, Chunks => 1u64),
        property: Property::DeviceCopyRate,
        why: "a 256 MiB copy_buffer_to_buffer is the rate of wgpu's copies within the device",
    },
];

/// Whether case `id` is one [`CALIBRATION`] reads.
pub(crate) fn is_calibration(id: &CaseId) -> bool {
    CALIBRATION.iter().any(|row| row.is(id))
}

/// The wgpu build that measures transfers (the others skip them).
pub(crate) const TRANSFER_BUILD: Build = Build::Default;

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
    /// The cases it was fitted to, each with the api of its row.
    pub used: Vec<(CaseId, Api)>,
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
        let Some(row) = rows.iter().find(|r| calibration.takes(r, build)) else {
            continue;
        };
        let Some(measured_s) = row.gbps_median.map(|g| row.bytes as f64 / (g * 1e9)) else {
            continue;
        };
        if let Measure::Transfer(path) = calibration.experiment.measure {
            if set_transfer(&mut model, calibration.property, path, row, measured_s) {
                model.calibrated = true;
                used.push((calibration.id(), calibration.api));
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
            used.push((calibration.id(), calibration.api));
        }
    }
    Calibration { model, used }
}

/// Sets the transfer model's `property` (of `row`'s api) so that the term it governs in
/// `row`'s predicted time (along `path`) takes what `measured_s` leaves of the other
/// terms; false when there is no such term or nothing is left.
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
    let (bus, dram) = (model.link_gbps, model.dram_gbps);
    let costs = model.transfer.of_mut(row.api);
    // A time proportional to the property (fixed costs) or inversely (rates).
    let (value, term, slower_is_larger) = match property {
        // CUDA's pinned copies measure the bus, which every api's kernels read across.
        Property::LinkRate if row.api == Api::Cuda => (&mut model.link_gbps, t.link_s, false),
        Property::LinkRate => (costs.link_gbps.get_or_insert(bus), t.link_s, false),
        Property::Submit => (&mut costs.submit_us, t.overhead_s, true),
        Property::NextCopy => {
            let command = costs.command_us;
            (
                costs.next_copy_us.get_or_insert(command),
                t.commands_s,
                true,
            )
        }
        Property::Command => (&mut costs.command_us, t.commands_s, true),
        Property::DeviceCopyRate => (
            costs.device_copy_gbps.get_or_insert(dram),
            t.device_s,
            false,
        ),
        Property::Register => (&mut costs.register_us, t.register_s, true),
        _ => return false,
    };
    scale(
        value,
        term,
        measured_s - (t.total_s() - term),
        slower_is_larger,
    )
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
        Property::LinkRate
        | Property::Submit
        | Property::NextCopy
        | Property::Command
        | Property::DeviceCopyRate
        | Property::Register => return false,
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
    scale(value, term, measured_s, slower_is_larger)
}

/// Scales `value` so that the `term` it governs (seconds) takes `measured_s`: in
/// proportion where a larger value is slower (costs, latencies), inversely where it is
/// faster (rates); false, leaving it, where either time is not positive.
fn scale(value: &mut f64, term: f64, measured_s: f64, slower_is_larger: bool) -> bool {
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
        let transfers = |api| {
            CALIBRATION
                .iter()
                .filter(|r| r.is_transfer() && r.api == api)
                .count()
        };
        assert!(transfers(Api::Cuda) <= 4 && transfers(Api::Wgpu) <= 4);
        let kernels = CALIBRATION.iter().filter(|r| !r.is_transfer());
        let terms = kernels
            .clone()
            .filter(|r| r.property.one_per_term())
            .count();
        assert_eq!(terms, 4);
        assert!(kernels.clone().count() - terms <= 12);
        assert!(kernels.into_iter().all(|r| r.api == Api::Wgpu));
        for row in CALIBRATION {
            // A CUDA row only on a path CUDA has.
            if let Measure::Transfer(path) = row.experiment.measure {
                assert!(
                    row.api == Api::Wgpu || !path.in_wgpu() || path == TransferPath::DeviceCopy
                );
            }
            // One row per property and api.
            let setting = CALIBRATION
                .iter()
                .filter(|r| r.property == row.property && r.api == row.api);
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
    fn the_eight_transfer_rows_recover_the_costs_that_made_them() {
        let h100 = crate::sim::device::preset("h100").unwrap();
        // Costs unlike the preset's estimates, as a run might measure them.
        let mut truth = *h100;
        truth.link_gbps = 50.0;
        truth.transfer.cuda.submit_us = 7.0;
        truth.transfer.cuda.next_copy_us = Some(3.0);
        truth.transfer.cuda.register_us = 150.0;
        truth.transfer.wgpu.submit_us = 80.0;
        truth.transfer.wgpu.link_gbps = Some(45.0);
        truth.transfer.wgpu.command_us = 2.0;
        truth.transfer.wgpu.device_copy_gbps = Some(900.0);
        let rows: Vec<Row> = CALIBRATION
            .iter()
            .filter(|r| r.is_transfer())
            .map(|calibration| {
                let cases = (calibration.experiment.cases)(&crate::suite::Sizing::nominal(false));
                let case = cases
                    .iter()
                    .find(|c| c.params == (calibration.params)())
                    .unwrap();
                let Measure::Transfer(path) = calibration.experiment.measure else {
                    unreachable!()
                };
                let row = crate::run::case_row(calibration.experiment, case);
                let time_s =
                    crate::sim::transfer::time(&truth, path, calibration.api, &case.params)
                        .unwrap()
                        .total_s();
                Row {
                    status: Status::Ok,
                    api: calibration.api,
                    build: TRANSFER_BUILD,
                    gbps_median: Some(row.bytes as f64 / time_s / 1e9),
                    ..row
                }
            })
            .collect();
        let calibration = calibrate(h100, &rows);
        assert_eq!(calibration.used.len(), 8);
        let (model, near) = (calibration.model, |a: f64, b: f64| {
            (a / b - 1.0).abs() < 0.01
        });
        assert!(
            near(model.link_gbps, truth.link_gbps),
            "{}",
            model.link_gbps
        );
        for api in [Api::Cuda, Api::Wgpu] {
            let (got, want) = (model.transfer.of(api), truth.transfer.of(api));
            assert!(near(got.submit_us, want.submit_us), "{api} {got:?}");
            assert!(near(got.command_us, want.command_us), "{api} {got:?}");
            assert!(near(got.register_us, want.register_us) || want.register_us == 0.0);
            let [got_next, want_next] = [got, want].map(|c| c.next_copy_us.unwrap_or(c.command_us));
            assert!(near(got_next, want_next), "{api} {got:?}");
            let link = |c: &crate::sim::link::ApiCosts| c.link_gbps.unwrap_or(truth.link_gbps);
            assert!(near(link(got), link(want)), "{api} {got:?}");
        }
        assert!(near(
            model.transfer.wgpu.device_copy_gbps.unwrap(),
            truth.transfer.wgpu.device_copy_gbps.unwrap()
        ));
        assert_eq!(model.transfer.cuda.device_copy_gbps, None);
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
        assert_eq!(calibration.used, [(row.id(), row.api)]);
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
        for row in CALIBRATION.iter().filter(|r| r.property.one_per_term()) {
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
            assert_eq!(
                calibration.used,
                [(row.id(), Api::Wgpu)],
                "{:?}",
                row.property
            );
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
