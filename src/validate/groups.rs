//! The ladders and sweeps `simulate --validate` ranks: which cases of a file are
//! compared in order ([`rank_groups`]).

use crate::suite::{CaseId, Family, Key, Params};

/// An experiment (family and variant) and params besides a swept key.
type SweepKey<'i> = (Family, &'i str, Params);

/// Whether a [`RankGroup`] compares variants or params.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum GroupKind {
    /// The variants of one family at the same params (reduce at one n, transpose at one
    /// size and block, the bank tiles at one repeat count, stencil, subgroup, …): the
    /// ladder of optimisations the family's claims rank.
    Ladder,
    /// One experiment's cases over the values of one param key, the other params the
    /// same (copy/offset, copy/stride, copy/launch over wg, bank/stride, a transpose
    /// block sweep, reduce over wg, …).
    Sweep,
}

/// Cases whose order the model should reproduce.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct RankGroup {
    pub kind: GroupKind,
    /// `reduce at n=16777216`, `copy/offset over offset`, …
    pub name: String,
    /// Indices into the ids the groups were made of.
    pub(crate) members: Vec<usize>,
}

/// The fewest cases a group's rank correlation is taken over.
pub(crate) const MIN_GROUP: usize = 4;

/// The ladders and sweeps among `ids`, each of at least [`MIN_GROUP`] cases; the one
/// place that says which cases are compared in order.
///
/// - A **ladder** is the variants of one family at exactly the same params: the
///   optimisation ladder of reduce (at each n), of transpose (at each size and block),
///   of the bank tiles, of stencil, of subgroup. Copy's variants never share params,
///   so it has none.
/// - A **sweep** is the cases of one experiment (family and variant) that differ in
///   one param key only: for each key, the cases grouped by their params without it
///   (a case without the key joins the group of its other params: reduce's default
///   workgroup beside its `wg=` sweep). copy/offset over offset, copy/stride over
///   stride, copy/launch over wg (per grid), bank/stride, transpose's block sweeps
///   (per size), reduce over wg.
pub(crate) fn rank_groups(ids: &[&CaseId]) -> Vec<RankGroup> {
    let mut groups: Vec<RankGroup> = Vec::new();
    let mut add = |kind, name: String, members: Vec<usize>| {
        if members.len() >= MIN_GROUP {
            groups.push(RankGroup {
                kind,
                name,
                members,
            });
        }
    };
    let ladders = grouped(ids.iter().map(|id| (id.family, &id.params)));
    for ((family, params), members) in ladders {
        add(GroupKind::Ladder, format!("{family} at {params}"), members);
    }
    let mut keys: Vec<Key> = Vec::new();
    for id in ids {
        for (key, _) in id.params.iter() {
            if !keys.contains(key) {
                keys.push(*key);
            }
        }
    }
    for key in keys {
        // Per experiment and the params besides the key: the cases' indices.
        let sweeps: Vec<(SweepKey<'_>, Vec<usize>)> = grouped(
            ids.iter()
                .map(|id| (id.family, id.variant.as_str(), id.params.without(key))),
        );
        for ((family, variant, rest), members) in sweeps {
            // At least two cases must have the key: else it is not swept here.
            let swept = members
                .iter()
                .filter(|&&i| ids[i].params.get(key).is_some())
                .count();
            if swept < 2 {
                continue;
            }
            let at = if rest.is_empty() {
                String::new()
            } else {
                format!(" at {rest}")
            };
            add(
                GroupKind::Sweep,
                format!("{family}/{variant} over {key}{at}"),
                members,
            );
        }
    }
    groups
}

/// The indices of `keys` grouped by key, the groups in the order of their first
/// member: in time linear in the keys, for files of many rows.
fn grouped<K: Clone + Eq + std::hash::Hash>(keys: impl Iterator<Item = K>) -> Vec<(K, Vec<usize>)> {
    let mut groups: Vec<(K, Vec<usize>)> = Vec::new();
    let mut positions: std::collections::HashMap<K, usize> = std::collections::HashMap::new();
    for (index, key) in keys.enumerate() {
        match positions.get(&key) {
            Some(&position) => groups[position].1.push(index),
            None => {
                positions.insert(key.clone(), groups.len());
                groups.push((key, vec![index]));
            }
        }
    }
    groups
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(texts: &[&str]) -> Vec<CaseId> {
        texts.iter().map(|t| t.parse().unwrap()).collect()
    }

    fn groups(texts: &[&str]) -> Vec<(GroupKind, String, Vec<usize>)> {
        let ids = ids(texts);
        let refs: Vec<&CaseId> = ids.iter().collect();
        rank_groups(&refs)
            .into_iter()
            .map(|g| (g.kind, g.name, g.members))
            .collect()
    }

    #[test]
    fn ladders_are_variants_at_the_same_params_and_sweeps_one_key() {
        let found = groups(&[
            "reduce/neighbored/n=16",
            "reduce/interleaved/n=16",
            "reduce/unroll2/n=16",
            "reduce/smem/n=16",
            "reduce/smem/n=32",
            "copy/offset/offset=0",
            "copy/offset/offset=1",
            "copy/offset/offset=2",
            "copy/offset/offset=3",
            "reduce/subgroup_add/n=32",
            "reduce/subgroup_add/n=32;wg=64",
            "reduce/subgroup_add/n=32;wg=128",
            "reduce/subgroup_add/n=32;wg=512",
            "copy/launch/wg=64;grid=1d",
            "copy/launch/wg=64;grid=2d",
            "copy/launch/wg=128;grid=2d",
            "copy/launch/wg=256;grid=2d",
        ]);
        assert_eq!(
            found,
            [
                (
                    GroupKind::Ladder,
                    "reduce at n=16".to_owned(),
                    vec![0, 1, 2, 3]
                ),
                (
                    GroupKind::Sweep,
                    "copy/offset over offset".to_owned(),
                    vec![5, 6, 7, 8]
                ),
                (
                    GroupKind::Sweep,
                    "reduce/subgroup_add over wg at n=32".to_owned(),
                    vec![9, 10, 11, 12]
                ),
            ],
        );
        // Three wg values at grid=2d are too few; the 1d case is another sweep.
        assert!(found.iter().all(|(_, name, _)| !name.contains("launch")));
    }
}
