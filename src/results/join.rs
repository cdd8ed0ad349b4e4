//! The cross-device join: the rows of several devices' files, one line per case
//! (family, variant, param) in case order, a cell per device; and the toolchain's tax,
//! one device's settings read against the one closest to the hardware. `compare`, the
//! report and its charts all read results through it.

use std::cmp::Ordering;
use std::collections::BTreeMap;

use super::{DeviceResults, Row};
use crate::suite::{Family, Params, REGISTRY};

/// One case across devices.
#[derive(Clone, Debug)]
pub struct Line<'a> {
    /// The case's family.
    pub family: Family,
    /// The case's variant.
    pub variant: &'a str,
    /// The case's parameters.
    pub params: &'a Params,
    /// One per device, in file order; `None` where the file has no row for the case.
    pub cells: Vec<Option<&'a Row>>,
}

impl Line<'_> {
    /// The device's measured GB/s, where it measured the case.
    pub fn gbps(&self, device: usize) -> Option<f64> {
        self.cells.get(device)?.as_ref()?.gbps_median
    }

    /// The device's predicted GB/s.
    pub fn sim_gbps(&self, device: usize) -> Option<f64> {
        self.cells.get(device)?.as_ref()?.sim_gbps
    }

    /// What bounds the prediction of `device`, where its row records it.
    pub(crate) fn sim_bound(&self, device: usize) -> Option<crate::sim::model::Bound> {
        self.cells.get(device)?.as_ref()?.sim_bound
    }

    /// The device's GB/s over the first device's.
    pub fn ratio(&self, device: usize) -> Option<f64> {
        let first = self.gbps(0).filter(|&gbps| gbps > 0.0)?;
        Some(self.gbps(device)? / first)
    }

    /// `ok`, `failed`, `skipped`, or `missing` where the file has no row.
    pub fn status(&self, device: usize) -> &str {
        match self.cells.get(device) {
            Some(Some(row)) => row.status.as_str(),
            _ => "missing",
        }
    }
}

/// Every case of every device, joined on (family, variant, param), in case order.
pub fn join(devices: &[DeviceResults]) -> Vec<Line<'_>> {
    let mut lines: BTreeMap<CaseKey<'_>, Vec<Option<&Row>>> = BTreeMap::new();
    for (index, device) in devices.iter().enumerate() {
        for row in &device.rows {
            let cells = lines
                .entry(CaseKey(row.family, &row.variant, &row.params))
                .or_insert_with(|| vec![None; devices.len()]);
            cells[index] = Some(row);
        }
    }
    lines
        .into_iter()
        .map(|(CaseKey(family, variant, params), cells)| Line {
            family,
            variant,
            params,
            cells,
        })
        .collect()
}

/// A case's key, ordered as `membench list` shows cases: experiments in registry order
/// (unknown ones after, by name), params in natural order (`offset=2` before
/// `offset=10`).
#[derive(PartialEq, Eq)]
struct CaseKey<'a>(Family, &'a str, &'a Params);

impl Ord for CaseKey<'_> {
    fn cmp(&self, other: &Self) -> Ordering {
        experiment_order(self.0, self.1)
            .cmp(&experiment_order(other.0, other.1))
            .then_with(|| self.2.cmp(other.2))
    }
}

impl PartialOrd for CaseKey<'_> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// Sorts experiments: families in their order, variants in registry order, a variant
/// the registry lacks (from another version) after, by name.
pub(crate) fn experiment_order(family: Family, variant: &str) -> (Family, usize, &str) {
    let variant_index = REGISTRY
        .iter()
        .position(|e| e.family == family && e.variant == variant)
        .unwrap_or(usize::MAX);
    (family, variant_index, variant)
}

/// One device measured in several settings: per case, each setting's GB/s and its
/// ratio to the setting closest to the hardware — the toolchain's tax beside the
/// memory system.
#[derive(Debug)]
pub(crate) struct Tax<'l, 'r> {
    pub device: &'r str,
    /// Indexes of this device's settings among the compared ones, in setting order.
    pub columns: Vec<usize>,
    /// The column the others are divided by: CUDA where it was measured, else the
    /// last wgpu build (tax-free before unchecked before default).
    pub reference: usize,
    /// The cases measured on the GPU clock in at least two of the settings.
    pub lines: Vec<&'l Line<'r>>,
}

impl Tax<'_, '_> {
    /// The columns other than the reference, each divided by it.
    pub(crate) fn ratio_columns(&self) -> impl Iterator<Item = usize> + '_ {
        self.columns
            .iter()
            .copied()
            .filter(|&c| c != self.reference)
    }
}

/// The tax of every device compared in more than one setting, in file order.
pub(crate) fn taxes<'l, 'r>(
    devices: &'r [DeviceResults],
    lines: &'l [Line<'r>],
) -> Vec<Tax<'l, 'r>> {
    let mut names: Vec<&str> = Vec::new();
    for device in devices.iter().filter_map(|d| d.metadata()) {
        if !names.contains(&device.device.as_str()) {
            names.push(&device.device);
        }
    }
    names
        .into_iter()
        .filter_map(|name| {
            let mut columns: Vec<usize> = (0..devices.len())
                .filter(|&i| devices[i].metadata().is_some_and(|row| row.device == name))
                .collect();
            columns.sort_by_key(|&i| devices[i].setting);
            let reference = *columns
                .iter()
                .max_by_key(|&&i| devices[i].setting.closeness())?;
            let lines: Vec<&Line<'_>> = lines
                .iter()
                .filter(|line| {
                    columns
                        .iter()
                        .filter(|&&c| {
                            line.cells[c].is_some_and(|row| row.timer == "gpu")
                                && line.gbps(c).is_some()
                        })
                        .count()
                        >= 2
                })
                .collect();
            (columns.len() >= 2 && !lines.is_empty()).then_some(Tax {
                device: name,
                columns,
                reference,
                lines,
            })
        })
        .collect()
}

/// A case's GB/s in `column` over its GB/s in the reference.
pub(crate) fn tax_ratio(tax: &Tax<'_, '_>, line: &Line<'_>, column: usize) -> Option<f64> {
    let reference = line.gbps(tax.reference).filter(|&g| g > 0.0)?;
    Some(line.gbps(column)? / reference)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registry_families_come_first() {
        let order = |family, variant| experiment_order(family, variant);
        assert!(order(Family::Copy, "offset") < order(Family::Copy, "stride"));
        assert!(order(Family::Copy, "launch") < order(Family::Copy, "aaa"));
        assert!(order(Family::Copy, "aaa") < order(Family::Transpose, "naive_row"));
    }
}
