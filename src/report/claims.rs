//! The claims checklist: what the classic texts say each experiment shows, and the
//! explicit rule that decides, per device, whether a measurement reproduces it.
//!
//! [`CLAIMS`] is the one table. Each entry names its family, the claim in words, the
//! rule in words and a small decision function that applies exactly that rule to one
//! device's rows. A rule whose rows are absent (not run, skipped, failed) answers
//! "not measured" and says which row it lacked. The same rule is applied to the
//! simulator's predictions, which tells whether the model expects the claim too.
//!
//! Case names follow the experiment catalogue; where a family is renamed, only the
//! `family/variant` strings and params here change.

use crate::report::compare::natural_cmp;
use crate::results::{Row, param_value};
use crate::suite::families::copy;

/// What a rule concluded for one device.
#[derive(Clone, Debug, PartialEq)]
pub enum Verdict {
    /// The rule holds; the text shows the numbers it was decided on.
    Reproduced(String),
    NotReproduced(String),
    /// A row the rule needs is absent, skipped or failed; the text says which.
    NotMeasured(String),
}

impl Verdict {
    pub fn label(&self) -> &'static str {
        match self {
            Verdict::Reproduced(_) => "reproduced",
            Verdict::NotReproduced(_) => "not reproduced",
            Verdict::NotMeasured(_) => "not measured",
        }
    }

    pub fn detail(&self) -> &str {
        match self {
            Verdict::Reproduced(detail)
            | Verdict::NotReproduced(detail)
            | Verdict::NotMeasured(detail) => detail,
        }
    }
}

/// Whether a rule is about bandwidth (and so can be asked of the predictions too) or
/// about correctness.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Bandwidth,
    Verification,
}

/// One claim of the catalogue and the rule that decides it.
pub struct Claim {
    /// Stable name, also the HTML anchor: `family-what`.
    pub id: &'static str,
    pub family: &'static str,
    /// What the classic texts say.
    pub claim: &'static str,
    /// The decision rule in words; `decide` implements exactly this.
    pub rule: &'static str,
    pub kind: Kind,
    decide: fn(&Cases<'_>) -> Outcome,
}

impl Claim {
    /// The rule applied to one device's rows (or their predictions).
    pub fn decide(&self, cases: &Cases<'_>) -> Verdict {
        if self.kind == Kind::Verification && cases.source == Source::Predicted {
            return Verdict::NotMeasured("a correctness check: nothing to predict".to_owned());
        }
        (self.decide)(cases).unwrap_or_else(Verdict::NotMeasured)
    }
}

/// A decision, or why it could not be made (a row it needs is not measured).
type Outcome = Result<Verdict, String>;

/// Which number of a row the rules read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// `gbps_median` of rows that were verified and timed.
    Measured,
    /// `sim_gbps`: the simulator's prediction.
    Predicted,
}

/// One device's rows as the rules see them.
pub struct Cases<'a> {
    rows: &'a [Row],
    source: Source,
}

impl<'a> Cases<'a> {
    pub fn new(rows: &'a [Row], source: Source) -> Self {
        Cases { rows, source }
    }

    /// The row of `id` (`family/variant`) whose param has the pairs of `param`, in any
    /// order.
    fn row(&self, id: &str, param: &str) -> Option<&'a Row> {
        let (family, variant) = id.split_once('/')?;
        self.rows.iter().find(|row| {
            row.family == family && row.variant == variant && same_param(&row.param, param)
        })
    }

    /// The bandwidth of one case, or why there is none.
    fn gbps(&self, id: &str, param: &str) -> Result<f64, String> {
        let Some(row) = self.row(id, param) else {
            return Err(format!("no {id} {param}"));
        };
        match self.source {
            Source::Measured => row.gbps_median.ok_or_else(|| {
                let why = if row.note.is_empty() {
                    String::new()
                } else {
                    format!(": {}", row.note)
                };
                format!("{id} {param} {}{why}", row.status)
            }),
            Source::Predicted => row
                .sim_gbps
                .ok_or_else(|| format!("no prediction for {id} {param}")),
        }
    }

    /// The params of `id`'s rows, in natural order.
    fn params(&self, id: &str) -> Vec<&'a str> {
        let Some((family, variant)) = id.split_once('/') else {
            return Vec::new();
        };
        let mut params: Vec<&str> = self
            .rows
            .iter()
            .filter(|row| row.family == family && row.variant == variant)
            .map(|row| row.param.as_str())
            .collect();
        params.sort_by(|a, b| natural_cmp(a, b));
        params
    }

    /// The rows of `family`.
    fn family(&self, family: &str) -> impl Iterator<Item = &'a Row> {
        let family = family.to_owned();
        self.rows.iter().filter(move |row| row.family == family)
    }
}

/// The same `key=value` pairs, in any order.
fn same_param(a: &str, b: &str) -> bool {
    let pairs = |param: &str| {
        let mut pairs: Vec<(String, String)> = param
            .split(';')
            .filter(|pair| !pair.trim().is_empty())
            .map(|pair| match pair.split_once('=') {
                Some((key, value)) => (key.trim().to_owned(), value.trim().to_owned()),
                None => (pair.trim().to_owned(), String::new()),
            })
            .collect();
        pairs.sort();
        pairs
    };
    pairs(a) == pairs(b)
}

/// `a / b` of two cases, with the numbers it came from.
fn ratio(cases: &Cases<'_>, a: (&str, &str), b: (&str, &str)) -> Result<(f64, String), String> {
    let top = cases.gbps(a.0, a.1)?;
    let bottom = cases.gbps(b.0, b.1)?;
    if bottom <= 0.0 {
        return Err(format!("{} {} has no bandwidth", b.0, b.1));
    }
    let value = top / bottom;
    // Only what tells the two apart: `offset=1 / offset=0`, `naive_col / naive_row`.
    let name = |(id, param): (&str, &str)| {
        if a.0 == b.0 {
            param.to_owned()
        } else if same_param(a.1, b.1) {
            short(id).to_owned()
        } else {
            format!("{} {param}", short(id))
        }
    };
    Ok((
        value,
        format!(
            "{} / {} = {value:.3} ({top:.1} / {bottom:.1} GB/s)",
            name(a),
            name(b)
        ),
    ))
}

/// `transpose/naive_row` → `naive_row`: details are shown under their family.
fn short(id: &str) -> &str {
    id.split_once('/').map_or(id, |(_, variant)| variant)
}

fn between(value: f64, low: f64, high: f64, detail: String) -> Verdict {
    if (low..=high).contains(&value) {
        Verdict::Reproduced(detail)
    } else {
        Verdict::NotReproduced(detail)
    }
}

fn at_least(value: f64, low: f64, detail: String) -> Verdict {
    between(value, low, f64::INFINITY, detail)
}

fn at_most(value: f64, high: f64, detail: String) -> Verdict {
    between(value, f64::NEG_INFINITY, high, detail)
}

/// Every part must hold; a part not measured leaves the whole not measured.
fn all(parts: Vec<Outcome>) -> Outcome {
    let parts = parts.into_iter().collect::<Result<Vec<_>, _>>()?;
    let failed = parts
        .iter()
        .any(|part| matches!(part, Verdict::NotReproduced(_)));
    let detail = parts
        .iter()
        .map(Verdict::detail)
        .collect::<Vec<_>>()
        .join("; ");
    Ok(if failed {
        Verdict::NotReproduced(detail)
    } else {
        Verdict::Reproduced(detail)
    })
}

/// One of the parts must hold (each measured part counts; at least one measured).
fn any(parts: Vec<Outcome>) -> Outcome {
    let mut measured = Vec::new();
    let mut missing = None;
    for part in parts {
        match part {
            Ok(verdict) => measured.push(verdict),
            Err(why) => missing = missing.or(Some(why)),
        }
    }
    if measured.is_empty() {
        return Err(missing.unwrap_or_else(|| "nothing to decide on".to_owned()));
    }
    let held = measured
        .iter()
        .any(|part| matches!(part, Verdict::Reproduced(_)));
    let detail = measured
        .iter()
        .map(Verdict::detail)
        .collect::<Vec<_>>()
        .join("; ");
    Ok(if held {
        Verdict::Reproduced(detail)
    } else {
        Verdict::NotReproduced(detail)
    })
}

/// The rule at every param of `anchor` (each problem size the device ran): it must
/// hold at each size where it could be decided, and be decidable at one at least.
fn at_each(cases: &Cases<'_>, anchor: &str, rule: impl Fn(&str) -> Outcome) -> Outcome {
    let params = cases.params(anchor);
    if params.is_empty() {
        return Err(format!("no {anchor}"));
    }
    let mut decided = Vec::new();
    let mut missing = None;
    for param in params {
        match rule(param) {
            Ok(verdict) => decided.push((param, verdict)),
            Err(why) => missing = missing.or(Some(why)),
        }
    }
    if decided.is_empty() {
        return Err(missing.unwrap_or_default());
    }
    let failed = decided
        .iter()
        .any(|(_, verdict)| matches!(verdict, Verdict::NotReproduced(_)));
    let detail = decided
        .iter()
        .map(|(param, verdict)| format!("[{param}] {}", verdict.detail()))
        .collect::<Vec<_>>()
        .join("; ");
    Ok(if failed {
        Verdict::NotReproduced(detail)
    } else {
        Verdict::Reproduced(detail)
    })
}

/// The faster of several cases at one param, with its name.
fn fastest<'v>(cases: &Cases<'_>, ids: &[&'v str], param: &str) -> Result<(&'v str, f64), String> {
    let mut best: Option<(&str, f64)> = None;
    let mut missing = None;
    for &id in ids {
        match cases.gbps(id, param) {
            Ok(gbps) if best.is_none_or(|(_, b)| gbps > b) => best = Some((id, gbps)),
            Ok(_) => {}
            Err(why) => missing = missing.or(Some(why)),
        }
    }
    best.ok_or_else(|| missing.unwrap_or_default())
}

/// `best(a) / best(b)` at one param.
fn best_ratio(
    cases: &Cases<'_>,
    a: &[&str],
    b: &[&str],
    param: &str,
) -> Result<(f64, String), String> {
    let (a_id, _) = fastest(cases, a, param)?;
    let (b_id, _) = fastest(cases, b, param)?;
    ratio(cases, (a_id, param), (b_id, param))
}

/// Every claim of the catalogue with its rule, in family order.
pub static CLAIMS: &[Claim] = &[
    // copy: coalescing
    Claim {
        id: "copy-offset-misaligned",
        family: "copy",
        claim: "a misaligned copy needs a fifth 32-byte sector per request: about 4/5 of the \
                aligned bandwidth, softened by cached neighbouring lines (about 9/10 on a V100)",
        rule: "offset 1 runs at 0.75–0.97 of offset 0",
        kind: Kind::Bandwidth,
        decide: |cases| {
            let (value, detail) = ratio(
                cases,
                ("copy/offset", "offset=1"),
                ("copy/offset", "offset=0"),
            )?;
            Ok(between(value, 0.75, 0.97, detail))
        },
    },
    Claim {
        id: "copy-offset-aligned",
        family: "copy",
        claim: "an offset of a multiple of 8 words (32 bytes) is as fast as offset 0",
        rule: "offsets 8, 16, 24 and 32 each run at 0.97 of offset 0 or faster (those measured, \
               one at least)",
        kind: Kind::Bandwidth,
        decide: |cases| {
            let parts = [8, 16, 24, 32].map(|offset| {
                let param = format!("offset={offset}");
                let (value, detail) =
                    ratio(cases, ("copy/offset", &param), ("copy/offset", "offset=0"))?;
                Ok(at_least(value, 0.97, detail))
            });
            any_measured_all(parts.into(), "no aligned offset above 0")
        },
    },
    Claim {
        id: "copy-stride-2",
        family: "copy",
        claim: "stride 2 halves load/store efficiency: half the bandwidth of stride 1",
        rule: "stride 2 runs at 0.40–0.65 of stride 1",
        kind: Kind::Bandwidth,
        decide: |cases| {
            let (value, detail) = ratio(
                cases,
                ("copy/stride", "stride=2"),
                ("copy/stride", "stride=1"),
            )?;
            Ok(between(value, 0.40, 0.65, detail))
        },
    },
    Claim {
        id: "copy-stride-falls",
        family: "copy",
        claim: "bandwidth falls as 1/s until every lane needs its own sector (1/8 for 4-byte \
                words)",
        rule: "stride 4 runs at 0.125–0.375 and stride 8 at 0.0625–0.1875 of stride 1 (1/s ± 50 %)",
        kind: Kind::Bandwidth,
        decide: |cases| {
            all([(4, 0.125, 0.375), (8, 0.0625, 0.1875)]
                .map(|(stride, low, high)| {
                    let param = format!("stride={stride}");
                    let (value, detail) =
                        ratio(cases, ("copy/stride", &param), ("copy/stride", "stride=1"))?;
                    Ok(between(value, low, high, detail))
                })
                .into())
        },
    },
    Claim {
        id: "copy-peak-ceiling",
        family: "copy",
        claim: "a wide (vec4) copy is the practical bandwidth ceiling",
        rule: "the faster copy/peak runs at 0.98 of the fastest other copy case or faster",
        kind: Kind::Bandwidth,
        decide: |cases| {
            let best = |peak: bool| {
                cases
                    .family("copy")
                    .filter(|row| (row.variant == "peak") == peak)
                    .filter_map(|row| {
                        let id = format!("copy/{}", row.variant);
                        Some((row, cases.gbps(&id, &row.param).ok()?))
                    })
                    .max_by(|a, b| a.1.total_cmp(&b.1))
            };
            let (peak, peak_gbps) = best(true).ok_or("no copy/peak measured")?;
            let (other, other_gbps) = best(false).ok_or("no other copy case measured")?;
            let value = peak_gbps / other_gbps;
            Ok(at_least(
                value,
                0.98,
                format!(
                    "peak {} / {} {} = {value:.3} ({peak_gbps:.1} / {other_gbps:.1} GB/s)",
                    peak.param, other.variant, other.param
                ),
            ))
        },
    },
    Claim {
        id: "copy-launch-default",
        family: "copy",
        claim: "the launch configuration (workgroup size, 1-D or 2-D grid) changes little; the \
                default is the fastest",
        rule: "the default launch (wg=512, 2-D grid) runs at 0.97 of the fastest copy/launch case \
               or faster",
        kind: Kind::Bandwidth,
        decide: |cases| {
            let default = format!(
                "wg={};grid={}",
                copy::DEFAULT_WORKGROUP,
                copy::DEFAULT_GRID.label()
            );
            let (best, _) = cases
                .params("copy/launch")
                .into_iter()
                .filter_map(|p| Some((p, cases.gbps("copy/launch", p).ok()?)))
                .max_by(|a, b| a.1.total_cmp(&b.1))
                .ok_or("no copy/launch measured")?;
            if same_param(best, &default) {
                let gbps = cases.gbps("copy/launch", best)?;
                return Ok(Verdict::Reproduced(format!(
                    "the default {default} is the fastest ({gbps:.1} GB/s)"
                )));
            }
            let (value, detail) = ratio(cases, ("copy/launch", &default), ("copy/launch", best))?;
            Ok(at_least(value, 0.97, detail))
        },
    },
    // transpose
    Claim {
        id: "transpose-copy-bound",
        family: "transpose",
        claim: "the row copy (copy_row) bounds every transpose from above",
        rule: "no transpose variant runs faster than 1.05 × copy_row at the same size",
        kind: Kind::Bandwidth,
        decide: |cases| {
            at_each(cases, "transpose/copy_row", |param| {
                let (fastest_id, fastest_gbps) = cases
                    .family("transpose")
                    .filter(|row| row.variant != "copy_row" && same_param(&row.param, param))
                    .filter_map(|row| {
                        let id = format!("transpose/{}", row.variant);
                        Some((row.variant.as_str(), cases.gbps(&id, param).ok()?))
                    })
                    .max_by(|a, b| a.1.total_cmp(&b.1))
                    .ok_or("no other transpose variant measured")?;
                let bound = cases.gbps("transpose/copy_row", param)?;
                let value = fastest_gbps / bound;
                Ok(at_most(
                    value,
                    1.05,
                    format!(
                        "fastest {fastest_id} / copy_row = {value:.3} ({fastest_gbps:.1} / \
                         {bound:.1} GB/s)"
                    ),
                ))
            })
        },
    },
    Claim {
        id: "transpose-read-columns",
        family: "transpose",
        claim: "reading columns and writing rows beats reading rows and writing columns on \
                cached GPUs",
        rule: "naive_col runs at 1.05 × naive_row or faster, at every size measured",
        kind: Kind::Bandwidth,
        decide: |cases| {
            at_each(cases, "transpose/naive_row", |param| {
                let (value, detail) = ratio(
                    cases,
                    ("transpose/naive_col", param),
                    ("transpose/naive_row", param),
                )?;
                Ok(at_least(value, 1.05, detail))
            })
        },
    },
    Claim {
        id: "transpose-unroll",
        family: "transpose",
        claim: "unrolling puts more loads in flight and raises bandwidth",
        rule: "the faster of naive_row_unroll4 and naive_col_unroll4 runs at 1.05 × the faster of \
               naive_row and naive_col or faster",
        kind: Kind::Bandwidth,
        decide: |cases| {
            at_each(cases, "transpose/naive_row", |param| {
                let (value, detail) = best_ratio(
                    cases,
                    &["transpose/naive_row_unroll4", "transpose/naive_col_unroll4"],
                    &["transpose/naive_row", "transpose/naive_col"],
                    param,
                )?;
                Ok(at_least(value, 1.05, detail))
            })
        },
    },
    Claim {
        id: "transpose-unroll-bound",
        family: "transpose",
        claim: "unrolled, the naive transpose can reach the row-copy bound",
        rule: "the faster of naive_row_unroll4 and naive_col_unroll4 runs at 0.90 × copy_row or \
               faster",
        kind: Kind::Bandwidth,
        decide: |cases| {
            at_each(cases, "transpose/copy_row", |param| {
                let (value, detail) = best_ratio(
                    cases,
                    &["transpose/naive_row_unroll4", "transpose/naive_col_unroll4"],
                    &["transpose/copy_row"],
                    param,
                )?;
                Ok(at_least(value, 0.90, detail))
            })
        },
    },
    Claim {
        id: "transpose-diagonal",
        family: "transpose",
        claim: "remapping workgroups to diagonals avoids DRAM partition camping and speeds up \
                the naive transpose (may not help on modern GPUs)",
        rule: "diagonal_row runs at 1.05 × naive_row or diagonal_col at 1.05 × naive_col, or \
               faster",
        kind: Kind::Bandwidth,
        decide: |cases| {
            at_each(cases, "transpose/naive_row", |param| {
                any(["row", "col"]
                    .map(|side| {
                        let (value, detail) = ratio(
                            cases,
                            (&format!("transpose/diagonal_{side}"), param),
                            (&format!("transpose/naive_{side}"), param),
                        )?;
                        Ok(at_least(value, 1.05, detail))
                    })
                    .into())
            })
        },
    },
    Claim {
        id: "transpose-tile",
        family: "transpose",
        claim: "a padded tile in workgroup memory beats an unpadded one, which beats the naive \
                transpose",
        rule: "smem_pad runs at 1.05 × smem or faster, and smem at 1.05 × naive_row or faster",
        kind: Kind::Bandwidth,
        decide: |cases| {
            at_each(cases, "transpose/smem", |param| {
                all([("smem_pad", "smem"), ("smem", "naive_row")]
                    .map(|(a, b)| {
                        let (value, detail) = ratio(
                            cases,
                            (&format!("transpose/{a}"), param),
                            (&format!("transpose/{b}"), param),
                        )?;
                        Ok(at_least(value, 1.05, detail))
                    })
                    .into())
            })
        },
    },
    Claim {
        id: "transpose-thin-blocks",
        family: "transpose",
        claim: "thinner blocks (32×16, 32×8) beat square 32×32 blocks",
        rule: "naive_col with block 32x16 or 32x8 runs at 1.05 × block 32x32 or faster",
        kind: Kind::Bandwidth,
        decide: |cases| {
            let sizes: Vec<&str> = cases
                .params("transpose/naive_col")
                .into_iter()
                .filter(|p| param_value(p, "block") == Some("32x32"))
                .filter_map(|p| param_value(p, "size"))
                .collect();
            if sizes.is_empty() {
                return Err("no transpose/naive_col block=32x32".to_owned());
            }
            let per_size: Vec<Outcome> = sizes
                .into_iter()
                .map(|size| {
                    let square = format!("size={size};block=32x32");
                    any(["32x16", "32x8"]
                        .map(|block| {
                            let thin = format!("size={size};block={block}");
                            let (value, detail) = ratio(
                                cases,
                                ("transpose/naive_col", &thin),
                                ("transpose/naive_col", &square),
                            )?;
                            Ok(at_least(value, 1.05, detail))
                        })
                        .into())
                })
                .collect();
            all(per_size)
        },
    },
    // reduce
    Claim {
        id: "reduce-less-divergence",
        family: "reduce",
        claim: "less divergence is faster: neighbored pairs with compact thread indices beat the \
                modulo test",
        rule: "neighbored_less runs at 1.05 × neighbored or faster",
        kind: Kind::Bandwidth,
        decide: |cases| reduce_faster(cases, "neighbored_less", "neighbored", 1.05),
    },
    Claim {
        id: "reduce-interleaved",
        family: "reduce",
        claim: "interleaved pairs beat neighbored pairs",
        rule: "interleaved runs at 1.05 × neighbored or faster",
        kind: Kind::Bandwidth,
        decide: |cases| reduce_faster(cases, "interleaved", "neighbored", 1.05),
    },
    Claim {
        id: "reduce-unroll",
        family: "reduce",
        claim: "unrolling (each workgroup first adds several data blocks) raises bandwidth",
        rule: "the fastest of unroll2, unroll4 and unroll8 runs at 1.05 × interleaved or faster",
        kind: Kind::Bandwidth,
        decide: |cases| {
            at_each(cases, "reduce/interleaved", |param| {
                let (value, detail) = best_ratio(
                    cases,
                    &["reduce/unroll2", "reduce/unroll4", "reduce/unroll8"],
                    &["reduce/interleaved"],
                    param,
                )?;
                Ok(at_least(value, 1.05, detail))
            })
        },
    },
    Claim {
        id: "reduce-workgroup-memory",
        family: "reduce",
        claim: "a tree in workgroup memory beats the same tree in place in global memory",
        rule: "smem runs at 1.05 × interleaved or faster",
        kind: Kind::Bandwidth,
        decide: |cases| reduce_faster(cases, "smem", "interleaved", 1.05),
    },
    Claim {
        id: "reduce-override-size",
        family: "reduce",
        claim: "a workgroup array sized by an override constant (dynamic shared memory) is as \
                fast as a static one",
        rule: "smem_override runs at 0.95–1.05 of smem",
        kind: Kind::Bandwidth,
        decide: |cases| {
            at_each(cases, "reduce/smem", |param| {
                let (value, detail) = ratio(
                    cases,
                    ("reduce/smem_override", param),
                    ("reduce/smem", param),
                )?;
                Ok(between(value, 0.95, 1.05, detail))
            })
        },
    },
    Claim {
        id: "reduce-subgroup-fastest",
        family: "reduce",
        claim: "the subgroup versions are the fastest reductions",
        rule: "the faster of subgroup_shuffle and subgroup_add runs at 0.98 of every other \
               variant or faster",
        kind: Kind::Bandwidth,
        decide: |cases| {
            at_each(cases, "reduce/subgroup_add", |param| {
                let others: Vec<String> = cases
                    .family("reduce")
                    .filter(|row| {
                        !row.variant.starts_with("subgroup_") && same_param(&row.param, param)
                    })
                    .map(|row| format!("reduce/{}", row.variant))
                    .collect();
                let others: Vec<&str> = others.iter().map(String::as_str).collect();
                let (value, detail) = best_ratio(
                    cases,
                    &["reduce/subgroup_shuffle", "reduce/subgroup_add"],
                    &others,
                    param,
                )?;
                Ok(at_least(value, 0.98, detail))
            })
        },
    },
    // stencil
    Claim {
        id: "stencil-uniform-coefficients",
        family: "stencil",
        claim: "coefficients every lane reads alike belong in constant (uniform) memory",
        rule: "uniform_coef runs at 0.97 × storage_coef or faster",
        kind: Kind::Bandwidth,
        decide: |cases| {
            at_each(cases, "stencil/uniform_coef", |param| {
                let (value, detail) = ratio(
                    cases,
                    ("stencil/uniform_coef", param),
                    ("stencil/storage_coef", param),
                )?;
                Ok(at_least(value, 0.97, detail))
            })
        },
    },
    Claim {
        id: "stencil-tile",
        family: "stencil",
        claim: "a tile with halo in workgroup memory removes redundant global reads",
        rule: "the fastest tiled variant (uniform_coef, storage_coef, const_coef) runs at \
               1.05 × global_direct or faster",
        kind: Kind::Bandwidth,
        decide: |cases| {
            at_each(cases, "stencil/global_direct", |param| {
                let (value, detail) = best_ratio(
                    cases,
                    &[
                        "stencil/uniform_coef",
                        "stencil/storage_coef",
                        "stencil/const_coef",
                    ],
                    &["stencil/global_direct"],
                    param,
                )?;
                Ok(at_least(value, 1.05, detail))
            })
        },
    },
    // constant
    Claim {
        id: "constant-serialises",
        family: "constant",
        claim: "the constant (uniform) path serialises on distinct addresses within a request",
        rule: "uniform read=divergent runs at 0.5 × uniform read=broadcast or slower",
        kind: Kind::Bandwidth,
        decide: |cases| {
            at_each(cases, "constant/uniform", |param| {
                let divergent = divergent_of(param)?;
                let (value, detail) = ratio(
                    cases,
                    ("constant/uniform", &divergent),
                    ("constant/uniform", param),
                )?;
                Ok(at_most(value, 0.5, detail))
            })
        },
    },
    Claim {
        id: "constant-broadcast",
        family: "constant",
        claim: "when all lanes read the same address the constant path is as fast as can be",
        rule: "uniform read=broadcast runs at 0.97 × storage read=broadcast or faster",
        kind: Kind::Bandwidth,
        decide: |cases| {
            at_each(cases, "constant/uniform", |param| {
                divergent_of(param)?;
                let (value, detail) = ratio(
                    cases,
                    ("constant/uniform", param),
                    ("constant/storage", param),
                )?;
                Ok(at_least(value, 0.97, detail))
            })
        },
    },
    // bank
    Claim {
        id: "bank-column-conflict",
        family: "bank",
        claim: "reading a column of a 32-wide tile is a 32-way bank conflict",
        rule: "row_col runs at 0.25 × row_row or slower (4× the time at least)",
        kind: Kind::Bandwidth,
        decide: |cases| {
            at_each(cases, "bank/row_row", |param| {
                let (value, detail) =
                    ratio(cases, ("bank/row_col", param), ("bank/row_row", param))?;
                Ok(at_most(value, 0.25, detail))
            })
        },
    },
    Claim {
        id: "bank-padding",
        family: "bank",
        claim: "one word of padding per tile row removes the column conflict",
        rule: "row_col_pad runs at 0.8 × row_row or faster",
        kind: Kind::Bandwidth,
        decide: |cases| {
            at_each(cases, "bank/row_row", |param| {
                let (value, detail) =
                    ratio(cases, ("bank/row_col_pad", param), ("bank/row_row", param))?;
                Ok(at_least(value, 0.8, detail))
            })
        },
    },
    Claim {
        id: "bank-override",
        family: "bank",
        claim: "a tile sized by an override constant with computed indices behaves as the static \
                tile",
        rule: "row_col_override runs at 0.9–1.1 of row_col, and row_col_override_pad at 0.9–1.1 \
               of row_col_pad",
        kind: Kind::Bandwidth,
        decide: |cases| {
            at_each(cases, "bank/row_col", |param| {
                all([
                    ("row_col_override", "row_col"),
                    ("row_col_override_pad", "row_col_pad"),
                ]
                .map(|(a, b)| {
                    let (value, detail) = ratio(
                        cases,
                        (&format!("bank/{a}"), param),
                        (&format!("bank/{b}"), param),
                    )?;
                    Ok(between(value, 0.9, 1.1, detail))
                })
                .into())
            })
        },
    },
    Claim {
        id: "bank-rectangular",
        family: "bank",
        claim: "on a rectangular 32×16 tile the column read conflicts too, and padding of 2 \
                words removes it",
        rule: "rect_row_col runs at 0.5 × rect_row_row or slower, and rect_row_col_pad at \
               0.8 × rect_row_row or faster",
        kind: Kind::Bandwidth,
        decide: |cases| {
            at_each(cases, "bank/rect_row_row", |param| {
                let conflict = ratio(
                    cases,
                    ("bank/rect_row_col", param),
                    ("bank/rect_row_row", param),
                )
                .map(|(value, detail)| at_most(value, 0.5, detail));
                let padded = ratio(
                    cases,
                    ("bank/rect_row_col_pad", param),
                    ("bank/rect_row_row", param),
                )
                .map(|(value, detail)| at_least(value, 0.8, detail));
                all(vec![conflict, padded])
            })
        },
    },
    Claim {
        id: "bank-stride-gcd",
        family: "bank",
        claim: "lane l reading word l·s gives gcd(s, 32)-way conflicts",
        rule: "every odd stride (gcd 1) runs at 0.9 × stride 1 or faster, and stride 32 (32 ways) \
               at 1/8 of stride 1 or slower",
        kind: Kind::Bandwidth,
        decide: |cases| {
            let stride = |s: u32| {
                let param = cases
                    .params("bank/stride")
                    .into_iter()
                    .find(|p| param_value(p, "stride") == Some(&s.to_string()))
                    .ok_or(format!("no bank/stride stride={s}"))?;
                Ok::<_, String>((param, cases.gbps("bank/stride", param)?))
            };
            let (one_param, one) = stride(1)?;
            let (_, thirty_two) = stride(32)?;
            let odd: Vec<(u32, f64)> = (3..32)
                .step_by(2)
                .filter_map(|s| stride(s).ok().map(|(_, gbps)| (s, gbps)))
                .collect();
            let (slowest_odd, slowest_gbps) = odd
                .iter()
                .copied()
                .min_by(|a, b| a.1.total_cmp(&b.1))
                .ok_or("no odd bank/stride above 1")?;
            let odd_ratio = slowest_gbps / one;
            let ratio_32 = thirty_two / one;
            let detail = format!(
                "slowest odd stride {slowest_odd} / stride 1 = {odd_ratio:.3}; stride 32 / stride \
                 1 = {ratio_32:.3} ({one:.1} GB/s at {one_param})"
            );
            Ok(if odd_ratio >= 0.9 && ratio_32 <= 1.0 / 8.0 {
                Verdict::Reproduced(detail)
            } else {
                Verdict::NotReproduced(detail)
            })
        },
    },
    Claim {
        id: "bank-broadcast",
        family: "bank",
        claim: "the same word read by all lanes is a broadcast, not a conflict",
        rule: "stride 0 (every lane the same word) runs at 0.9 × stride 1 or faster",
        kind: Kind::Bandwidth,
        decide: |cases| {
            let find = |s: &str| {
                cases
                    .params("bank/stride")
                    .into_iter()
                    .find(|p| param_value(p, "stride") == Some(s))
                    .ok_or(format!("no bank/stride stride={s}"))
            };
            let (zero, one) = (find("0")?, find("1")?);
            let (value, detail) = ratio(cases, ("bank/stride", zero), ("bank/stride", one))?;
            Ok(at_least(value, 0.9, detail))
        },
    },
    // localmem
    Claim {
        id: "localmem-dynamic-index",
        family: "localmem",
        claim: "a private array indexed at run time may be placed in local memory and be slower \
                than one the compiler keeps in registers",
        rule: "dynamic_index runs at 0.9 × register_array or slower",
        kind: Kind::Bandwidth,
        decide: |cases| {
            at_each(cases, "localmem/register_array", |param| {
                let (value, detail) = ratio(
                    cases,
                    ("localmem/dynamic_index", param),
                    ("localmem/register_array", param),
                )?;
                Ok(at_most(value, 0.9, detail))
            })
        },
    },
    // subgroup
    Claim {
        id: "subgroup-semantics",
        family: "subgroup",
        claim: "broadcast, shuffle up/down/xor and the lane swap return what their definitions \
                say, for the adapter's subgroup size",
        rule: "every subgroup case ran and was verified (status ok); any failed case refutes it",
        kind: Kind::Verification,
        decide: |cases| {
            let rows: Vec<&Row> = cases.family("subgroup").collect();
            let failed: Vec<String> = rows
                .iter()
                .filter(|row| row.status == "failed")
                .map(|row| format!("{} {} failed", row.variant, row.param))
                .collect();
            let ok = rows.iter().filter(|row| row.status == "ok").count();
            if !failed.is_empty() {
                Ok(Verdict::NotReproduced(failed.join("; ")))
            } else if ok == 0 {
                Err("no subgroup case ran".to_owned())
            } else {
                Ok(Verdict::Reproduced(format!(
                    "{ok} of {} cases verified",
                    rows.len()
                )))
            }
        },
    },
    // transfer
    Claim {
        id: "transfer-large",
        family: "transfer",
        claim: "few large transfers beat many small ones: per-transfer overhead dominates small \
                sizes",
        rule: "for every transfer variant swept over size, the largest size runs at 4 × the \
               bandwidth of the smallest or faster",
        kind: Kind::Bandwidth,
        decide: |cases| {
            let mut variants: Vec<&str> = cases
                .family("transfer")
                .filter(|row| param_value(&row.param, "chunks") == Some("1"))
                .filter(|row| param_value(&row.param, "size").is_some())
                .map(|row| row.variant.as_str())
                .collect();
            variants.sort_unstable();
            variants.dedup();
            let parts: Vec<Outcome> = variants
                .into_iter()
                .map(|variant| {
                    let id = format!("transfer/{variant}");
                    let size = |p: &str| {
                        param_value(p, "size")
                            .and_then(|s| s.parse::<f64>().ok())
                            .filter(|_| param_value(p, "chunks") == Some("1"))
                    };
                    let measured: Vec<(f64, &str)> = cases
                        .params(&id)
                        .into_iter()
                        .filter(|p| cases.gbps(&id, p).is_ok())
                        .filter_map(|p| Some((size(p)?, p)))
                        .collect();
                    let smallest = measured.iter().min_by(|a, b| a.0.total_cmp(&b.0));
                    let largest = measured.iter().max_by(|a, b| a.0.total_cmp(&b.0));
                    match (smallest, largest) {
                        (Some(small), Some(large)) if small.0 < large.0 => {
                            let (value, detail) = ratio(cases, (&id, large.1), (&id, small.1))?;
                            Ok(at_least(value, 4.0, detail))
                        }
                        _ => Err(format!("{id} measured at fewer than two sizes")),
                    }
                })
                .collect();
            any_measured_all(parts, "no transfer variant swept over size")
        },
    },
    Claim {
        id: "transfer-batching",
        family: "transfer",
        claim: "one upload of 4 MiB beats 1024 uploads of 4 KiB",
        rule: "for every upload or readback path, size=4194304;chunks=1 runs at 2 × \
               size=4194304;chunks=1024 or faster",
        kind: Kind::Bandwidth,
        decide: |cases| {
            let mut variants: Vec<&str> = cases
                .family("transfer")
                .filter(|row| row.param == BATCHED)
                .map(|row| row.variant.as_str())
                .collect();
            variants.dedup();
            let parts: Vec<Outcome> = variants
                .into_iter()
                .map(|variant| {
                    let id = format!("transfer/{variant}");
                    let (value, detail) = ratio(cases, (&id, ONE_UPLOAD), (&id, BATCHED))?;
                    Ok(at_least(value, 2.0, detail))
                })
                .collect();
            any_measured_all(parts, "no transfer path measured batched")
        },
    },
    Claim {
        id: "transfer-overlap",
        family: "transfer",
        claim: "chunked uploads overlapped with compute hide transfer time where the API and \
                hardware allow it (wgpu has one queue)",
        rule: "overlap_interleaved runs at 1.10 × overlap_serial or faster",
        kind: Kind::Bandwidth,
        decide: |cases| {
            at_each(cases, "transfer/overlap_interleaved", |param| {
                let (value, detail) = ratio(
                    cases,
                    ("transfer/overlap_interleaved", param),
                    ("transfer/overlap_serial", param),
                )?;
                Ok(at_least(value, 1.10, detail))
            })
        },
    },
];

/// The batching pair of every transfer path: one 4 MiB transfer, and 1024 of 4 KiB.
const ONE_UPLOAD: &str = "size=4194304;chunks=1";
const BATCHED: &str = "size=4194304;chunks=1024";

/// The divergent twin of a `read=broadcast` constant case.
fn divergent_of(param: &str) -> Result<String, String> {
    match param_value(param, "read") {
        Some("broadcast") => Ok(param.replace("read=broadcast", "read=divergent")),
        _ => Err(format!("{param} is not a broadcast case")),
    }
}

/// `better` runs at `factor` × `worse` or faster at every reduction size.
fn reduce_faster(cases: &Cases<'_>, better: &str, worse: &str, factor: f64) -> Outcome {
    let (better, worse) = (format!("reduce/{better}"), format!("reduce/{worse}"));
    at_each(cases, &worse, |param| {
        let (value, detail) = ratio(cases, (&better, param), (&worse, param))?;
        Ok(at_least(value, factor, detail))
    })
}

/// [`all`] over the parts that could be decided; not measured if none could.
fn any_measured_all(parts: Vec<Outcome>, none: &str) -> Outcome {
    let measured: Vec<Outcome> = parts.iter().filter(|p| p.is_ok()).cloned().collect();
    if measured.is_empty() {
        return Err(parts
            .into_iter()
            .find_map(Result::err)
            .unwrap_or_else(|| none.to_owned()));
    }
    all(measured)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::SCHEMA_VERSION;

    /// A measured row of `id` (`family/variant`), predicted at the same bandwidth.
    fn row(id: &str, param: &str, gbps: f64) -> Row {
        let (family, variant) = id.split_once('/').unwrap();
        Row {
            family: family.into(),
            variant: variant.into(),
            param: param.into(),
            status: "ok".into(),
            verified: true,
            gbps_median: Some(gbps),
            sim_gbps: Some(gbps),
            schema_version: SCHEMA_VERSION,
            ..Row::default()
        }
    }

    fn claim(id: &str) -> &'static Claim {
        CLAIMS.iter().find(|c| c.id == id).unwrap()
    }

    /// One threshold test: rows built around a factor `x`, and the factors on either
    /// side of each threshold with whether the claim then holds.
    struct Threshold {
        id: &'static str,
        rows: fn(f64) -> Vec<Row>,
        sides: &'static [(f64, bool)],
    }

    const SIZE: &str = "size=4096x4096";
    const N: &str = "n=16777216";
    const R: &str = "r=1024";

    fn gcd(a: u32, b: u32) -> u32 {
        if b == 0 { a } else { gcd(b, a % b) }
    }

    static THRESHOLDS: &[Threshold] = &[
        Threshold {
            id: "copy-offset-misaligned",
            rows: |x| {
                vec![
                    row("copy/offset", "offset=0", 100.0),
                    row("copy/offset", "offset=1", 100.0 * x),
                ]
            },
            sides: &[(0.74, false), (0.76, true), (0.96, true), (0.98, false)],
        },
        Threshold {
            id: "copy-offset-aligned",
            rows: |x| {
                vec![
                    row("copy/offset", "offset=0", 100.0),
                    row("copy/offset", "offset=8", 100.0 * x),
                    row("copy/offset", "offset=16", 100.0),
                ]
            },
            sides: &[(0.96, false), (0.98, true)],
        },
        Threshold {
            id: "copy-stride-2",
            rows: |x| {
                vec![
                    row("copy/stride", "stride=1", 100.0),
                    row("copy/stride", "stride=2", 100.0 * x),
                ]
            },
            sides: &[(0.39, false), (0.41, true), (0.64, true), (0.66, false)],
        },
        Threshold {
            id: "copy-stride-falls",
            rows: |x| {
                vec![
                    row("copy/stride", "stride=1", 100.0),
                    row("copy/stride", "stride=4", 25.0 * x),
                    row("copy/stride", "stride=8", 12.5 * x),
                ]
            },
            sides: &[(0.49, false), (0.51, true), (1.49, true), (1.51, false)],
        },
        Threshold {
            id: "copy-peak-ceiling",
            rows: |x| {
                vec![
                    row("copy/peak", "launch=vec4", 100.0 * x),
                    row("copy/offset", "offset=0", 100.0),
                ]
            },
            sides: &[(0.97, false), (0.99, true)],
        },
        Threshold {
            id: "copy-launch-default",
            rows: |x| {
                vec![
                    row("copy/launch", "wg=512;grid=2d", 100.0 * x),
                    row("copy/launch", "wg=256;grid=2d", 100.0),
                ]
            },
            sides: &[(0.96, false), (0.98, true), (1.5, true)],
        },
        Threshold {
            id: "transpose-copy-bound",
            rows: |x| {
                vec![
                    row("transpose/copy_row", SIZE, 100.0),
                    row("transpose/naive_col", SIZE, 100.0 * x),
                ]
            },
            sides: &[(1.04, true), (1.06, false)],
        },
        Threshold {
            id: "transpose-read-columns",
            rows: |x| {
                vec![
                    row("transpose/naive_row", SIZE, 100.0),
                    row("transpose/naive_col", SIZE, 100.0 * x),
                ]
            },
            sides: &[(1.04, false), (1.06, true)],
        },
        Threshold {
            id: "transpose-unroll",
            rows: |x| {
                vec![
                    row("transpose/naive_row", SIZE, 100.0),
                    row("transpose/naive_col", SIZE, 90.0),
                    row("transpose/naive_col_unroll4", SIZE, 100.0 * x),
                ]
            },
            sides: &[(1.04, false), (1.06, true)],
        },
        Threshold {
            id: "transpose-unroll-bound",
            rows: |x| {
                vec![
                    row("transpose/copy_row", SIZE, 100.0),
                    row("transpose/naive_col_unroll4", SIZE, 100.0 * x),
                ]
            },
            sides: &[(0.89, false), (0.91, true)],
        },
        Threshold {
            id: "transpose-diagonal",
            rows: |x| {
                vec![
                    row("transpose/naive_row", SIZE, 100.0),
                    row("transpose/diagonal_row", SIZE, 100.0 * x),
                ]
            },
            sides: &[(1.04, false), (1.06, true)],
        },
        Threshold {
            id: "transpose-tile",
            rows: |x| {
                vec![
                    row("transpose/naive_row", SIZE, 100.0),
                    row("transpose/smem", SIZE, 110.0),
                    row("transpose/smem_pad", SIZE, 110.0 * x),
                ]
            },
            sides: &[(1.04, false), (1.06, true)],
        },
        Threshold {
            id: "transpose-tile",
            rows: |x| {
                vec![
                    row("transpose/naive_row", SIZE, 100.0),
                    row("transpose/smem", SIZE, 100.0 * x),
                    row("transpose/smem_pad", SIZE, 200.0),
                ]
            },
            sides: &[(1.04, false), (1.06, true)],
        },
        Threshold {
            id: "transpose-thin-blocks",
            rows: |x| {
                vec![
                    row("transpose/naive_col", "size=4096x4096;block=32x32", 100.0),
                    row(
                        "transpose/naive_col",
                        "size=4096x4096;block=32x16",
                        100.0 * x,
                    ),
                ]
            },
            sides: &[(1.04, false), (1.06, true)],
        },
        Threshold {
            id: "reduce-less-divergence",
            rows: |x| {
                vec![
                    row("reduce/neighbored", N, 100.0),
                    row("reduce/neighbored_less", N, 100.0 * x),
                ]
            },
            sides: &[(1.04, false), (1.06, true)],
        },
        Threshold {
            id: "reduce-interleaved",
            rows: |x| {
                vec![
                    row("reduce/neighbored", N, 100.0),
                    row("reduce/interleaved", N, 100.0 * x),
                ]
            },
            sides: &[(1.04, false), (1.06, true)],
        },
        Threshold {
            id: "reduce-unroll",
            rows: |x| {
                vec![
                    row("reduce/interleaved", N, 100.0),
                    row("reduce/unroll2", N, 90.0),
                    row("reduce/unroll4", N, 100.0 * x),
                ]
            },
            sides: &[(1.04, false), (1.06, true)],
        },
        Threshold {
            id: "reduce-workgroup-memory",
            rows: |x| {
                vec![
                    row("reduce/interleaved", N, 100.0),
                    row("reduce/smem", N, 100.0 * x),
                ]
            },
            sides: &[(1.04, false), (1.06, true)],
        },
        Threshold {
            id: "reduce-override-size",
            rows: |x| {
                vec![
                    row("reduce/smem", N, 100.0),
                    row("reduce/smem_override", N, 100.0 * x),
                ]
            },
            sides: &[(0.94, false), (0.96, true), (1.04, true), (1.06, false)],
        },
        Threshold {
            id: "reduce-subgroup-fastest",
            rows: |x| {
                vec![
                    row("reduce/unroll8", N, 100.0),
                    row("reduce/subgroup_add", N, 100.0 * x),
                ]
            },
            sides: &[(0.97, false), (0.99, true)],
        },
        Threshold {
            id: "stencil-uniform-coefficients",
            rows: |x| {
                vec![
                    row("stencil/storage_coef", "n=64", 100.0),
                    row("stencil/uniform_coef", "n=64", 100.0 * x),
                ]
            },
            sides: &[(0.96, false), (0.98, true)],
        },
        Threshold {
            id: "stencil-tile",
            rows: |x| {
                vec![
                    row("stencil/global_direct", "n=64", 100.0),
                    row("stencil/uniform_coef", "n=64", 100.0 * x),
                ]
            },
            sides: &[(1.04, false), (1.06, true)],
        },
        Threshold {
            id: "constant-serialises",
            rows: |x| {
                vec![
                    row("constant/uniform", "read=broadcast;r=64", 100.0),
                    row("constant/uniform", "read=divergent;r=64", 100.0 * x),
                ]
            },
            sides: &[(0.49, true), (0.51, false)],
        },
        Threshold {
            id: "constant-broadcast",
            rows: |x| {
                vec![
                    row("constant/storage", "read=broadcast;r=64", 100.0),
                    row("constant/uniform", "read=broadcast;r=64", 100.0 * x),
                ]
            },
            sides: &[(0.96, false), (0.98, true)],
        },
        Threshold {
            id: "bank-column-conflict",
            rows: |x| {
                vec![
                    row("bank/row_row", R, 100.0),
                    row("bank/row_col", R, 100.0 * x),
                ]
            },
            sides: &[(0.24, true), (0.26, false)],
        },
        Threshold {
            id: "bank-padding",
            rows: |x| {
                vec![
                    row("bank/row_row", R, 100.0),
                    row("bank/row_col_pad", R, 100.0 * x),
                ]
            },
            sides: &[(0.79, false), (0.81, true)],
        },
        Threshold {
            id: "bank-override",
            rows: |x| {
                vec![
                    row("bank/row_col", R, 100.0),
                    row("bank/row_col_override", R, 100.0 * x),
                    row("bank/row_col_pad", R, 50.0),
                    row("bank/row_col_override_pad", R, 50.0),
                ]
            },
            sides: &[(0.89, false), (0.91, true), (1.09, true), (1.11, false)],
        },
        Threshold {
            id: "bank-rectangular",
            rows: |x| {
                vec![
                    row("bank/rect_row_row", R, 100.0),
                    row("bank/rect_row_col", R, 100.0 * x),
                    row("bank/rect_row_col_pad", R, 90.0),
                ]
            },
            sides: &[(0.49, true), (0.51, false)],
        },
        Threshold {
            id: "bank-rectangular",
            rows: |x| {
                vec![
                    row("bank/rect_row_row", R, 100.0),
                    row("bank/rect_row_col", R, 10.0),
                    row("bank/rect_row_col_pad", R, 100.0 * x),
                ]
            },
            sides: &[(0.79, false), (0.81, true)],
        },
        Threshold {
            id: "bank-stride-gcd",
            rows: |x| {
                (1..=32)
                    .map(|s| {
                        let gbps = if s % 2 == 1 && s > 1 {
                            100.0 * x
                        } else {
                            100.0 / f64::from(gcd(s, 32))
                        };
                        row("bank/stride", &format!("stride={s};r=1024"), gbps)
                    })
                    .collect()
            },
            sides: &[(0.89, false), (0.91, true)],
        },
        Threshold {
            id: "bank-stride-gcd",
            rows: |x| {
                (1..=32)
                    .map(|s| {
                        let gbps = match s {
                            32 => 100.0 * x,
                            s if s % 2 == 1 => 100.0,
                            s => 100.0 / f64::from(gcd(s, 32)),
                        };
                        row("bank/stride", &format!("stride={s};r=1024"), gbps)
                    })
                    .collect()
            },
            sides: &[(0.124, true), (0.126, false)],
        },
        Threshold {
            id: "bank-broadcast",
            rows: |x| {
                vec![
                    row("bank/stride", "stride=1;r=1024", 100.0),
                    row("bank/stride", "stride=0;r=1024", 100.0 * x),
                ]
            },
            sides: &[(0.89, false), (0.91, true)],
        },
        Threshold {
            id: "localmem-dynamic-index",
            rows: |x| {
                vec![
                    row("localmem/register_array", "n=64", 100.0),
                    row("localmem/dynamic_index", "n=64", 100.0 * x),
                ]
            },
            sides: &[(0.89, true), (0.91, false)],
        },
        Threshold {
            id: "transfer-large",
            rows: |x| {
                vec![
                    row("transfer/upload_write_buffer", "size=4096;chunks=1", 1.0),
                    row("transfer/upload_write_buffer", "size=65536;chunks=1", 2.0),
                    row("transfer/upload_write_buffer", "size=1048576;chunks=1", x),
                ]
            },
            sides: &[(3.9, false), (4.1, true)],
        },
        Threshold {
            id: "transfer-batching",
            rows: |x| {
                vec![
                    row("transfer/readback", "size=4194304;chunks=1024", 1.0),
                    row("transfer/readback", "size=4194304;chunks=1", x),
                ]
            },
            sides: &[(1.9, false), (2.1, true)],
        },
        Threshold {
            id: "transfer-overlap",
            rows: |x| {
                vec![
                    row("transfer/overlap_serial", "size=67108864;chunks=4", 100.0),
                    row(
                        "transfer/overlap_interleaved",
                        "size=67108864;chunks=4",
                        100.0 * x,
                    ),
                ]
            },
            sides: &[(1.09, false), (1.11, true)],
        },
    ];

    #[test]
    fn every_rule_on_both_sides_of_its_thresholds() {
        for threshold in THRESHOLDS {
            let claim = claim(threshold.id);
            for &(x, holds) in threshold.sides {
                let rows = (threshold.rows)(x);
                for source in [Source::Measured, Source::Predicted] {
                    let verdict = claim.decide(&Cases::new(&rows, source));
                    let expected = if holds {
                        "reproduced"
                    } else {
                        "not reproduced"
                    };
                    assert_eq!(
                        verdict.label(),
                        expected,
                        "{} at {x} ({source:?}): {}",
                        threshold.id,
                        verdict.detail()
                    );
                }
            }
        }
    }

    #[test]
    fn every_bandwidth_rule_has_threshold_tests() {
        for claim in CLAIMS.iter().filter(|c| c.kind == Kind::Bandwidth) {
            assert!(
                THRESHOLDS.iter().any(|t| t.id == claim.id),
                "{} has no threshold test",
                claim.id
            );
        }
    }

    #[test]
    fn ids_are_unique() {
        for (index, claim) in CLAIMS.iter().enumerate() {
            assert!(
                CLAIMS[..index].iter().all(|c| c.id != claim.id),
                "{} twice",
                claim.id
            );
        }
    }

    #[test]
    fn absent_rows_are_not_measured() {
        for claim in CLAIMS {
            let verdict = claim.decide(&Cases::new(&[], Source::Measured));
            assert_eq!(verdict.label(), "not measured", "{}", claim.id);
            assert!(!verdict.detail().is_empty(), "{} says nothing", claim.id);
        }
    }

    #[test]
    fn skipped_and_failed_rows_are_not_measured() {
        for threshold in THRESHOLDS {
            let mut rows = (threshold.rows)(threshold.sides[0].0);
            for (index, row) in rows.iter_mut().enumerate() {
                row.status = if index % 2 == 0 { "skipped" } else { "failed" }.into();
                row.gbps_median = None;
            }
            let verdict = claim(threshold.id).decide(&Cases::new(&rows, Source::Measured));
            assert_eq!(verdict.label(), "not measured", "{}", threshold.id);
        }
    }

    #[test]
    fn subgroup_rule_counts_verified_cases() {
        let claim = claim("subgroup-semantics");
        let mut rows = vec![
            row("subgroup/broadcast", "n=64", 1.0),
            row("subgroup/shuffle_xor", "n=64", 1.0),
        ];
        let cases = |rows: &[Row]| claim.decide(&Cases::new(rows, Source::Measured));
        assert_eq!(cases(&rows).label(), "reproduced");
        rows[1].status = "failed".into();
        assert_eq!(cases(&rows).label(), "not reproduced");
        rows[1].status = "skipped".into();
        rows[0].status = "skipped".into();
        assert_eq!(cases(&rows).label(), "not measured");
        let predicted = claim.decide(&Cases::new(&rows, Source::Predicted));
        assert_eq!(predicted.label(), "not measured");
    }

    #[test]
    fn a_rule_must_hold_at_every_size() {
        let claim = claim("transpose-read-columns");
        let rows = vec![
            row("transpose/naive_row", "size=4096x4096", 100.0),
            row("transpose/naive_col", "size=4096x4096", 120.0),
            row("transpose/naive_row", "size=8192x8192", 100.0),
            row("transpose/naive_col", "size=8192x8192", 100.0),
        ];
        let verdict = claim.decide(&Cases::new(&rows, Source::Measured));
        assert_eq!(verdict.label(), "not reproduced");
        assert!(verdict.detail().contains("[size=8192x8192]"), "{verdict:?}");
        // A size where one side is missing does not count against it.
        let verdict = claim.decide(&Cases::new(&rows[..3], Source::Measured));
        assert_eq!(verdict.label(), "reproduced", "{verdict:?}");
    }

    #[test]
    fn params_match_in_any_order() {
        assert!(same_param("wg=512;grid=2d", "grid=2d;wg=512"));
        assert!(!same_param("wg=512;grid=2d", "wg=512"));
        assert!(!same_param("offset=1", "offset=10"));
    }
}
