//! Which results share charts: those of one sizing. A `--quick` file's cases are
//! smaller than a full run's of the same name, so drawing them side by side would
//! compare different experiments; they are charted apart. So are the results of a
//! `--concurrent` run, measured while other adapters measured too, from those of a
//! device measured alone.
//!
//! [`sizing_of`] and [`SizedFor::mixes_with`] are the one place that decides. A file's
//! sizing is read from its rows: the element count of each case (files before the
//! `sizing` column say nothing else), and the adapters that ran at once, as the
//! `sizing` column records it.

use std::collections::BTreeMap;

use crate::results::DeviceResults;
use crate::results::Row;
use crate::suite::{Family, Params};

/// What a device's cases were sized for, each case's element count, and how many
/// adapters measured at once.
#[derive(Debug)]
pub(crate) struct SizedFor<'r> {
    elements: BTreeMap<(Family, &'r str, &'r Params), u64>,
    concurrent: Option<u32>,
}

/// The sizing `rows` were measured at.
pub(crate) fn sizing_of(rows: &[Row]) -> SizedFor<'_> {
    SizedFor {
        elements: rows
            .iter()
            .map(|row| {
                let case = (row.family, row.variant.as_str(), &row.params);
                (case, row.elements)
            })
            .collect(),
        concurrent: rows.iter().find_map(|row| row.sizing?.concurrent),
    }
}

impl SizedFor<'_> {
    /// Whether results of the two sizings may share a chart: both measured alone or
    /// beside as many adapters, and no case they both have sized differently (a
    /// partial file shares the charts of its full sizing).
    pub(crate) fn mixes_with(&self, other: &SizedFor<'_>) -> bool {
        self.concurrent == other.concurrent
            && self
                .elements
                .iter()
                .all(|(case, elements)| other.elements.get(case).is_none_or(|e| e == elements))
    }
}

/// The devices by sizing, as indices in `devices`: each joins the first group it
/// mixes with, so the first device's group comes first.
pub fn groups(devices: &[DeviceResults]) -> Vec<Vec<usize>> {
    let sizings: Vec<SizedFor<'_>> = devices.iter().map(|d| sizing_of(&d.rows)).collect();
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for (index, sizing) in sizings.iter().enumerate() {
        let joins = groups.iter_mut().find(|group| {
            group
                .iter()
                .all(|&member| sizing.mixes_with(&sizings[member]))
        });
        match joins {
            Some(group) => group.push(index),
            None => groups.push(vec![index]),
        }
    }
    groups
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suite::RunSizing;
    use crate::suite::Setting;

    fn device(elements: &[(&str, u64)]) -> DeviceResults {
        DeviceResults {
            path: "gpu.csv".into(),
            kernel_files: Vec::new(),
            label: "GPU".into(),
            setting: Setting::WGPU,
            rows: elements
                .iter()
                .map(|&(param, elements)| Row {
                    family: Family::Copy,
                    variant: "offset".into(),
                    params: param.parse().unwrap(),
                    elements,
                    ..Row::default()
                })
                .collect(),
        }
    }

    #[test]
    fn a_quick_file_is_charted_apart_and_a_partial_one_is_not() {
        let full = device(&[("offset=0", 1 << 26), ("offset=1", 1 << 26)]);
        let quick = device(&[("offset=0", 1 << 20), ("offset=1", 1 << 20)]);
        let partial = device(&[("offset=1", 1 << 26)]);
        let other_cases = device(&[("offset=2", 1 << 20)]);
        assert_eq!(
            groups(&[full, quick, partial, other_cases]),
            [vec![0, 2, 3], vec![1]]
        );
    }

    #[test]
    fn a_concurrent_file_is_charted_apart() {
        let alone = device(&[("offset=0", 1 << 20)]);
        let mut concurrent = device(&[("offset=0", 1 << 20)]);
        for row in &mut concurrent.rows {
            row.sizing = Some(RunSizing {
                quick: true,
                concurrent: Some(2),
                ..RunSizing::default()
            });
        }
        let also_alone = device(&[("offset=0", 1 << 20)]);
        assert_eq!(
            groups(&[alone, concurrent, also_alone]),
            [vec![0, 2], vec![1]]
        );
    }
}
