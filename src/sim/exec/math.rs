//! Arithmetic on values: operators, conversions, math builtins and the combiners of
//! subgroup reductions, each applied component-wise to per-lane component vectors
//! (component `c` of lane `l` at `c * lanes + l`).

use naga::{BinaryOperator as Bo, MathFunction as Mf, ScalarKind, UnaryOperator};

use super::kernel::K;
use super::{Exec, SimError};

pub(super) fn f(x: u32) -> f32 {
    f32::from_bits(x)
}

pub(super) fn b(x: bool) -> u32 {
    u32::from(x)
}

/// `a op b` per component; a one-component operand is broadcast over the other's.
fn map2(a: &[u32], bv: &[u32], l: usize, op: impl Fn(u32, u32) -> u32) -> Vec<u32> {
    if a.len() == bv.len() {
        return a.iter().zip(bv).map(|(&x, &y)| op(x, y)).collect();
    }
    let n = a.len().max(bv.len());
    let mut out = Vec::with_capacity(n);
    for c in 0..n / l {
        let r = c * l..(c + 1) * l;
        if a.len() == l {
            out.extend(a.iter().zip(&bv[r]).map(|(&x, &y)| op(x, y)));
        } else {
            out.extend(a[r].iter().zip(bv).map(|(&x, &y)| op(x, y)));
        }
    }
    out
}

/// Component `i` of `a`, broadcasting a one-component operand.
fn pick(a: &[u32], i: usize, l: usize) -> u32 {
    if a.len() == l { a[i % l] } else { a[i] }
}

fn map3(a: &[u32], bv: &[u32], c: &[u32], l: usize, op: impl Fn(u32, u32, u32) -> u32) -> Vec<u32> {
    let n = a.len().max(bv.len()).max(c.len());
    (0..n)
        .map(|i| op(pick(a, i, l), pick(bv, i, l), pick(c, i, l)))
        .collect()
}

fn funary(a: &[u32], op: impl Fn(f32) -> f32) -> Vec<u32> {
    a.iter().map(|&x| op(f(x)).to_bits()).collect()
}

fn fbinary(a: &[u32], bv: &[u32], l: usize, op: impl Fn(f32, f32) -> f32) -> Vec<u32> {
    map2(a, bv, l, |x, y| op(f(x), f(y)).to_bits())
}

fn extract_bits(e: u32, offset: u32, count: u32, signed: bool) -> u32 {
    let o = offset.min(32);
    let c = count.min(32 - o);
    if c == 0 {
        return 0;
    }
    let v = if o == 32 { 0 } else { e >> o };
    let mask = if c == 32 { u32::MAX } else { (1u32 << c) - 1 };
    let v = v & mask;
    if signed && c < 32 && (v >> (c - 1)) & 1 == 1 {
        v | !mask
    } else {
        v
    }
}

fn insert_bits(e: u32, newbits: u32, offset: u32, count: u32) -> u32 {
    let o = offset.min(32);
    let c = count.min(32 - o);
    if c == 0 {
        return e;
    }
    let mask = if c == 32 {
        u32::MAX
    } else {
        ((1u32 << c) - 1) << o
    };
    (e & !mask) | (newbits.wrapping_shl(o) & mask)
}

/// `op a` for operands of `kind`.
pub(super) fn unary(op: UnaryOperator, kind: K, a: &[u32]) -> Vec<u32> {
    match (op, kind) {
        (UnaryOperator::Negate, K::F) => funary(a, |x| -x),
        (UnaryOperator::Negate, _) => a.iter().map(|&x| x.wrapping_neg()).collect(),
        (UnaryOperator::LogicalNot, _) => a.iter().map(|&x| x ^ 1).collect(),
        (UnaryOperator::BitwiseNot, _) => a.iter().map(|&x| !x).collect(),
    }
}

/// `select(reject, accept, condition)` per component; a scalar condition picks whole
/// values.
pub(super) fn select(c: &[u32], a: &[u32], r: &[u32], l: usize) -> Vec<u32> {
    let n = a.len().max(r.len());
    (0..n)
        .map(|i| {
            if pick(c, i, l) != 0 {
                pick(a, i, l)
            } else {
                pick(r, i, l)
            }
        })
        .collect()
}

/// `all`, `any` (over each lane's components), `isNan`, `isInf`.
pub(super) fn relational(rf: naga::RelationalFunction, a: &[u32], l: usize) -> Vec<u32> {
    use naga::RelationalFunction as R;
    match rf {
        R::All | R::Any => {
            let n = a.len() / l;
            (0..l)
                .map(|lane| {
                    let mut it = (0..n).map(|c| a[c * l + lane] != 0);
                    b(if rf == R::All {
                        it.all(|x| x)
                    } else {
                        it.any(|x| x)
                    })
                })
                .collect()
        }
        R::IsNan => a.iter().map(|&x| b(f(x).is_nan())).collect(),
        R::IsInf => a.iter().map(|&x| b(f(x).is_infinite())).collect(),
    }
}

/// Sums each lane's components with `add`.
fn per_lane_sum(v: Vec<u32>, l: usize, add: fn(u32, u32) -> u32) -> Vec<u32> {
    let n = v.len() / l;
    (0..l)
        .map(|lane| (1..n).fold(v[lane], |acc, c| add(acc, v[c * l + lane])))
        .collect()
}

fn fadd(x: u32, y: u32) -> u32 {
    (f(x) + f(y)).to_bits()
}

/// `abs`, `min`, `max`, `clamp`, `sign`: defined on more than one kind.
fn numeric(mf: Mf, kind: K, a: &[u32], a1: &[u32], a2: &[u32], l: usize) -> Option<Vec<u32>> {
    let i = |x: u32| x as i32;
    Some(match (mf, kind) {
        (Mf::Abs, K::F) => funary(a, f32::abs),
        (Mf::Abs, K::I) => a.iter().map(|&x| i(x).wrapping_abs() as u32).collect(),
        (Mf::Abs, _) => a.to_vec(),
        (Mf::Min, K::F) => fbinary(a, a1, l, f32::min),
        (Mf::Min, K::I) => map2(a, a1, l, |x, y| i(x).min(i(y)) as u32),
        (Mf::Min, _) => map2(a, a1, l, u32::min),
        (Mf::Max, K::F) => fbinary(a, a1, l, f32::max),
        (Mf::Max, K::I) => map2(a, a1, l, |x, y| i(x).max(i(y)) as u32),
        (Mf::Max, _) => map2(a, a1, l, u32::max),
        (Mf::Clamp, K::F) => map3(a, a1, a2, l, |x, lo, hi| {
            f(x).max(f(lo)).min(f(hi)).to_bits()
        }),
        (Mf::Clamp, K::I) => map3(a, a1, a2, l, |x, lo, hi| i(x).max(i(lo)).min(i(hi)) as u32),
        (Mf::Clamp, _) => map3(a, a1, a2, l, |x, lo, hi| x.max(lo).min(hi)),
        (Mf::Sign, K::F) => funary(a, |x| {
            if x == 0.0 || x.is_nan() {
                x
            } else {
                x.signum()
            }
        }),
        (Mf::Sign, K::I) => a.iter().map(|&x| i(x).signum() as u32).collect(),
        _ => return None,
    })
}

/// The float-only builtins applied component by component.
fn float(mf: Mf, kind: K, a: &[u32], a1: &[u32], a2: &[u32], l: usize) -> Option<Vec<u32>> {
    if kind != K::F {
        return None;
    }
    Some(match mf {
        Mf::Saturate => funary(a, |x| x.clamp(0.0, 1.0)),
        Mf::Cos => funary(a, f32::cos),
        Mf::Sin => funary(a, f32::sin),
        Mf::Tan => funary(a, f32::tan),
        Mf::Cosh => funary(a, f32::cosh),
        Mf::Sinh => funary(a, f32::sinh),
        Mf::Tanh => funary(a, f32::tanh),
        Mf::Acos => funary(a, f32::acos),
        Mf::Asin => funary(a, f32::asin),
        Mf::Atan => funary(a, f32::atan),
        Mf::Acosh => funary(a, f32::acosh),
        Mf::Asinh => funary(a, f32::asinh),
        Mf::Atanh => funary(a, f32::atanh),
        Mf::Atan2 => fbinary(a, a1, l, f32::atan2),
        Mf::Radians => funary(a, f32::to_radians),
        Mf::Degrees => funary(a, f32::to_degrees),
        Mf::Ceil => funary(a, f32::ceil),
        Mf::Floor => funary(a, f32::floor),
        Mf::Round => funary(a, f32::round_ties_even),
        Mf::Fract => funary(a, |x| x - x.floor()),
        Mf::Trunc => funary(a, f32::trunc),
        Mf::Exp => funary(a, f32::exp),
        Mf::Exp2 => funary(a, f32::exp2),
        Mf::Log => funary(a, f32::ln),
        Mf::Log2 => funary(a, f32::log2),
        Mf::Pow => fbinary(a, a1, l, f32::powf),
        Mf::Sqrt => funary(a, f32::sqrt),
        Mf::InverseSqrt => funary(a, |x| 1.0 / x.sqrt()),
        Mf::Step => fbinary(a, a1, l, |e, x| if x >= e { 1.0 } else { 0.0 }),
        Mf::Fma => map3(a, a1, a2, l, |x, y, z| f(x).mul_add(f(y), f(z)).to_bits()),
        Mf::Mix => map3(a, a1, a2, l, |x, y, t| {
            (f(x) * (1.0 - f(t)) + f(y) * f(t)).to_bits()
        }),
        Mf::SmoothStep => map3(a, a1, a2, l, |e0, e1, x| {
            let t = ((f(x) - f(e0)) / (f(e1) - f(e0))).clamp(0.0, 1.0);
            (t * t * (3.0 - 2.0 * t)).to_bits()
        }),
        _ => return None,
    })
}

/// `dot`, `length`, `distance`, `normalize`, `cross`: across each lane's components.
fn geometric(mf: Mf, kind: K, a: &[u32], a1: &[u32], l: usize) -> Option<Vec<u32>> {
    let length = |v: &[u32]| {
        funary(
            &per_lane_sum(fbinary(v, v, l, |x, y| x * y), l, fadd),
            f32::sqrt,
        )
    };
    Some(match (mf, kind) {
        (Mf::Dot, K::F) => per_lane_sum(fbinary(a, a1, l, |x, y| x * y), l, fadd),
        (Mf::Dot, K::U | K::I) => {
            per_lane_sum(map2(a, a1, l, u32::wrapping_mul), l, u32::wrapping_add)
        }
        (Mf::Length, K::F) => length(a),
        (Mf::Distance, K::F) => length(&fbinary(a, a1, l, |x, y| x - y)),
        (Mf::Normalize, K::F) => fbinary(a, &length(a), l, |x, y| x / y),
        (Mf::Cross, K::F) if a.len() == 3 * l => {
            let c = |v: &[u32], j: usize, lane: usize| f(v[j * l + lane]);
            let mut out = vec![0u32; 3 * l];
            for lane in 0..l {
                let (x0, x1, x2) = (c(a, 0, lane), c(a, 1, lane), c(a, 2, lane));
                let (y0, y1, y2) = (c(a1, 0, lane), c(a1, 1, lane), c(a1, 2, lane));
                out[lane] = (x1 * y2 - x2 * y1).to_bits();
                out[l + lane] = (x2 * y0 - x0 * y2).to_bits();
                out[2 * l + lane] = (x0 * y1 - x1 * y0).to_bits();
            }
            out
        }
        _ => return None,
    })
}

/// The integer bit builtins.
fn bits(mf: Mf, kind: K, a: &[u32], rest: [&[u32]; 3], l: usize) -> Option<Vec<u32>> {
    let [a1, a2, a3] = rest;
    let i = |x: u32| x as i32;
    Some(match (mf, kind) {
        (Mf::CountOneBits, K::U | K::I) => a.iter().map(|&x| x.count_ones()).collect(),
        (Mf::CountLeadingZeros, K::U | K::I) => a.iter().map(|&x| x.leading_zeros()).collect(),
        (Mf::CountTrailingZeros, K::U | K::I) => a.iter().map(|&x| x.trailing_zeros()).collect(),
        (Mf::ReverseBits, K::U | K::I) => a.iter().map(|&x| x.reverse_bits()).collect(),
        (Mf::FirstTrailingBit, K::U | K::I) => a
            .iter()
            .map(|&x| if x == 0 { u32::MAX } else { x.trailing_zeros() })
            .collect(),
        (Mf::FirstLeadingBit, K::U) => a
            .iter()
            .map(|&x| {
                if x == 0 {
                    u32::MAX
                } else {
                    31 - x.leading_zeros()
                }
            })
            .collect(),
        (Mf::FirstLeadingBit, K::I) => a
            .iter()
            .map(|&x| {
                let y = if i(x) < 0 { !x } else { x };
                if y == 0 {
                    u32::MAX
                } else {
                    31 - y.leading_zeros()
                }
            })
            .collect(),
        (Mf::ExtractBits, K::U | K::I) => {
            map3(a, a1, a2, l, |e, o, c| extract_bits(e, o, c, kind == K::I))
        }
        (Mf::InsertBits, K::U | K::I) => (0..a.len())
            .map(|j| {
                insert_bits(
                    pick(a, j, l),
                    pick(a1, j, l),
                    pick(a2, j, l),
                    pick(a3, j, l),
                )
            })
            .collect(),
        _ => return None,
    })
}

impl Exec<'_, '_> {
    /// `a op bv` for operands of `kind`, with WGSL's integer rules: wrapping
    /// arithmetic, `x / 0 == x`, `x % 0 == 0`, and `MIN / -1` as the overflow cases.
    pub(super) fn binary(
        &self,
        op: Bo,
        kind: K,
        a: &[u32],
        bv: &[u32],
    ) -> Result<Vec<u32>, SimError> {
        let l = self.lanes;
        let i = |x: u32| x as i32;
        Ok(match (op, kind) {
            (Bo::Add, K::F) => fbinary(a, bv, l, |x, y| x + y),
            (Bo::Add, _) => map2(a, bv, l, u32::wrapping_add),
            (Bo::Subtract, K::F) => fbinary(a, bv, l, |x, y| x - y),
            (Bo::Subtract, _) => map2(a, bv, l, u32::wrapping_sub),
            (Bo::Multiply, K::F) => {
                if a.len() == l || bv.len() == l || a.len() == bv.len() {
                    fbinary(a, bv, l, |x, y| x * y)
                } else {
                    return Err(self.err_unsupported("matrix multiplication"));
                }
            }
            (Bo::Multiply, _) => map2(a, bv, l, u32::wrapping_mul),
            (Bo::Divide, K::F) => fbinary(a, bv, l, |x, y| x / y),
            (Bo::Divide, K::U) => map2(a, bv, l, |x, y| x.checked_div(y).unwrap_or(x)),
            (Bo::Divide, _) => map2(a, bv, l, |x, y| {
                if y == 0 || (i(x) == i32::MIN && i(y) == -1) {
                    x
                } else {
                    (i(x) / i(y)) as u32
                }
            }),
            (Bo::Modulo, K::F) => fbinary(a, bv, l, |x, y| x % y),
            (Bo::Modulo, K::U) => map2(a, bv, l, |x, y| if y == 0 { 0 } else { x % y }),
            (Bo::Modulo, _) => map2(a, bv, l, |x, y| {
                if y == 0 || (i(x) == i32::MIN && i(y) == -1) {
                    0
                } else {
                    (i(x) % i(y)) as u32
                }
            }),
            (Bo::Equal, K::F) => map2(a, bv, l, |x, y| b(f(x) == f(y))),
            (Bo::Equal, _) => map2(a, bv, l, |x, y| b(x == y)),
            (Bo::NotEqual, K::F) => map2(a, bv, l, |x, y| b(f(x) != f(y))),
            (Bo::NotEqual, _) => map2(a, bv, l, |x, y| b(x != y)),
            (Bo::Less, K::F) => map2(a, bv, l, |x, y| b(f(x) < f(y))),
            (Bo::Less, K::I) => map2(a, bv, l, |x, y| b(i(x) < i(y))),
            (Bo::Less, _) => map2(a, bv, l, |x, y| b(x < y)),
            (Bo::LessEqual, K::F) => map2(a, bv, l, |x, y| b(f(x) <= f(y))),
            (Bo::LessEqual, K::I) => map2(a, bv, l, |x, y| b(i(x) <= i(y))),
            (Bo::LessEqual, _) => map2(a, bv, l, |x, y| b(x <= y)),
            (Bo::Greater, K::F) => map2(a, bv, l, |x, y| b(f(x) > f(y))),
            (Bo::Greater, K::I) => map2(a, bv, l, |x, y| b(i(x) > i(y))),
            (Bo::Greater, _) => map2(a, bv, l, |x, y| b(x > y)),
            (Bo::GreaterEqual, K::F) => map2(a, bv, l, |x, y| b(f(x) >= f(y))),
            (Bo::GreaterEqual, K::I) => map2(a, bv, l, |x, y| b(i(x) >= i(y))),
            (Bo::GreaterEqual, _) => map2(a, bv, l, |x, y| b(x >= y)),
            (Bo::And | Bo::LogicalAnd, _) => map2(a, bv, l, |x, y| x & y),
            (Bo::InclusiveOr | Bo::LogicalOr, _) => map2(a, bv, l, |x, y| x | y),
            (Bo::ExclusiveOr, _) => map2(a, bv, l, |x, y| x ^ y),
            (Bo::ShiftLeft, _) => map2(a, bv, l, |x, y| x.wrapping_shl(y)),
            (Bo::ShiftRight, K::I) => map2(a, bv, l, |x, y| i(x).wrapping_shr(y) as u32),
            (Bo::ShiftRight, _) => map2(a, bv, l, |x, y| x.wrapping_shr(y)),
        })
    }

    /// `to(a)` from `from`: a value conversion when `convert` gives the width, else a
    /// bitcast.
    #[expect(
        clippy::cast_possible_truncation,
        reason = "WGSL converts a float to an integer toward zero, saturating, as `as` does"
    )]
    pub(super) fn cast(
        &self,
        a: &[u32],
        from: K,
        to: ScalarKind,
        convert: Option<u8>,
    ) -> Result<Vec<u32>, SimError> {
        let to_k = match (to, convert) {
            (ScalarKind::Uint, None | Some(4)) => K::U,
            (ScalarKind::Sint, None | Some(4)) => K::I,
            (ScalarKind::Float, None | Some(4)) => K::F,
            (ScalarKind::Bool, _) => K::B,
            _ => {
                return Err(
                    self.err_unsupported(format!("Expression::As to {to:?} of width {convert:?}"))
                );
            }
        };
        if convert.is_none() {
            return Ok(a.to_vec()); // bitcast between 32-bit kinds
        }
        let conv: fn(u32) -> u32 = match (from, to_k) {
            (x, y) if x == y => |x| x,
            (K::U | K::I, K::U | K::I) => |x| x,
            (K::B, _) if to_k == K::F => |x| if x != 0 { 1f32.to_bits() } else { 0 },
            (K::B, _) => |x| x,
            (K::F, K::U) => |x| f(x) as u32,
            (K::F, K::I) => |x| f(x) as i32 as u32,
            (K::F, K::B) => |x| b(f(x) != 0.0),
            (K::U, K::F) => |x| (x as f32).to_bits(),
            (K::I, K::F) => |x| (x as i32 as f32).to_bits(),
            (_, K::B) => |x| b(x != 0),
            _ => |x| x,
        };
        Ok(a.iter().map(|&x| conv(x)).collect())
    }

    /// A math builtin on its arguments' components (absent arguments empty).
    pub(super) fn math(
        &self,
        mf: Mf,
        kind: K,
        a: &[u32],
        a1: &[u32],
        a2: &[u32],
        a3: &[u32],
    ) -> Result<Vec<u32>, SimError> {
        let l = self.lanes;
        let out = match mf {
            Mf::Abs | Mf::Min | Mf::Max | Mf::Clamp | Mf::Sign => numeric(mf, kind, a, a1, a2, l),
            Mf::Dot | Mf::Length | Mf::Distance | Mf::Normalize | Mf::Cross => {
                geometric(mf, kind, a, a1, l)
            }
            Mf::CountOneBits
            | Mf::CountLeadingZeros
            | Mf::CountTrailingZeros
            | Mf::ReverseBits
            | Mf::FirstTrailingBit
            | Mf::FirstLeadingBit
            | Mf::ExtractBits
            | Mf::InsertBits => bits(mf, kind, a, [a1, a2, a3], l),
            _ => float(mf, kind, a, a1, a2, l),
        };
        out.ok_or_else(|| self.err_unsupported(format!("MathFunction::{mf:?} on {kind:?}")))
    }
}
