//! Which results share charts: those of one sizing. A `--quick` file's cases are
//! smaller than a full run's of the same name, so drawing them side by side would
//! compare different experiments; they are charted apart.
//!
//! [`sizing_of`] and [`Sizing::mixes_with`] are the one place that decides. Today a
//! file's sizing is read from its rows (the element count of each case); where a
//! results file declares its sizing, these two read that instead.

use std::collections::BTreeMap;

use crate::report::compare::DeviceResults;
use crate::results::Row;

/// What a device's cases were sized for: each case's element count.
pub struct Sizing<'r>(BTreeMap<(&'r str, &'r str, &'r str), u64>);

/// The sizing `rows` were measured at.
pub fn sizing_of(rows: &[Row]) -> Sizing<'_> {
    Sizing(
        rows.iter()
            .map(|row| {
                let case = (
                    row.family.as_str(),
                    row.variant.as_str(),
                    row.param.as_str(),
                );
                (case, row.elements)
            })
            .collect(),
    )
}

impl Sizing<'_> {
    /// Whether results of the two sizings may share a chart: no case they both have
    /// was sized differently (a partial file shares the charts of its full sizing).
    pub fn mixes_with(&self, other: &Sizing<'_>) -> bool {
        self.0
            .iter()
            .all(|(case, elements)| other.0.get(case).is_none_or(|e| e == elements))
    }
}

/// The devices by sizing, as indices in `devices`: each joins the first group it
/// mixes with, so the first device's group comes first.
pub fn groups(devices: &[DeviceResults]) -> Vec<Vec<usize>> {
    let sizings: Vec<Sizing<'_>> = devices.iter().map(|d| sizing_of(&d.rows)).collect();
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
    use crate::suite::Setting;

    fn device(elements: &[(&str, u64)]) -> DeviceResults {
        DeviceResults {
            path: "gpu.csv".into(),
            label: "GPU".into(),
            setting: Setting::WGPU,
            rows: elements
                .iter()
                .map(|&(param, elements)| Row {
                    family: "copy".into(),
                    variant: "offset".into(),
                    param: param.into(),
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
}
