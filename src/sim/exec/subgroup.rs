//! Subgroup operations: ballots, reductions and scans, broadcasts and shuffles, each
//! over the consecutive lanes of one subgroup and its active lanes only.

use naga::{Expression, Handle};

use super::kernel::K;
use super::math::f;
use super::{Exec, Frame, Ready, SimError, Value};

/// Combines two components of a subgroup reduction.
type Combine = fn(u32, u32) -> u32;

/// The identity and combiner of a subgroup reduction.
fn reduction(k: K, op: naga::SubgroupOperation) -> Option<(u32, Combine)> {
    use naga::SubgroupOperation as O;
    Some(match (op, k) {
        (O::Add, K::U | K::I) => (0, |x, y| x.wrapping_add(y)),
        (O::Add, K::F) => (0f32.to_bits(), |x, y| (f(x) + f(y)).to_bits()),
        (O::Mul, K::U | K::I) => (1, |x, y| x.wrapping_mul(y)),
        (O::Mul, K::F) => (1f32.to_bits(), |x, y| (f(x) * f(y)).to_bits()),
        (O::Min, K::U) => (u32::MAX, |x, y| x.min(y)),
        (O::Min, K::I) => (i32::MAX as u32, |x, y| (x as i32).min(y as i32) as u32),
        (O::Min, K::F) => (f32::INFINITY.to_bits(), |x, y| f(x).min(f(y)).to_bits()),
        (O::Max, K::U) => (0, |x, y| x.max(y)),
        (O::Max, K::I) => (i32::MIN as u32, |x, y| (x as i32).max(y as i32) as u32),
        (O::Max, K::F) => (f32::NEG_INFINITY.to_bits(), |x, y| f(x).max(f(y)).to_bits()),
        (O::And, K::U | K::I) => (u32::MAX, |x, y| x & y),
        (O::And | O::All, K::B) => (1, |x, y| x & y),
        (O::Or, K::U | K::I) | (O::Or | O::Any, K::B) => (0, |x, y| x | y),
        (O::Xor, K::U | K::I | K::B) => (0, |x, y| x ^ y),
        _ => return None,
    })
}

/// A reduction or scan of one component over one subgroup: the reduction of its active
/// lanes in every lane, or the running (exclusive or inclusive) scan in each active lane.
fn collective(
    op: naga::CollectiveOperation,
    identity: u32,
    comb: Combine,
    active: &[bool],
    a: &[u32],
    out: &mut [u32],
) {
    let mut acc = identity;
    if op == naga::CollectiveOperation::Reduce {
        for (&x, &on) in a.iter().zip(active) {
            if on {
                acc = comb(acc, x);
            }
        }
        out.fill(acc);
        return;
    }
    for ((&x, &on), o) in a.iter().zip(active).zip(out.iter_mut()) {
        if !on {
            continue;
        }
        if op == naga::CollectiveOperation::ExclusiveScan {
            *o = acc;
            acc = comb(acc, x);
        } else {
            acc = comb(acc, x);
            *o = acc;
        }
    }
}

/// The subgroup lane (`subgroup_invocation_id`) lane `me` reads in a gather, from its
/// index operand `i`; `first` is the first active lane of the subgroup.
fn gather_source(mode: &naga::GatherMode, me: u32, i: u32, first: Option<usize>) -> Option<usize> {
    use naga::GatherMode as G;
    match *mode {
        G::BroadcastFirst => first,
        G::Broadcast(_) | G::Shuffle(_) => Some(i as usize),
        G::ShuffleDown(_) => Some(me as usize + i as usize),
        G::ShuffleUp(_) => me.checked_sub(i).map(|x| x as usize),
        G::ShuffleXor(_) => Some((me ^ i) as usize),
        G::QuadBroadcast(_) => Some((me & !3) as usize + i as usize),
        G::QuadSwap(d) => Some((me ^ (d as u32 + 1)) as usize),
    }
}

impl<'k> Exec<'k, '_> {
    /// `subgroupBallot`: every lane of a subgroup gets the `vec4<u32>` of its active
    /// lanes whose predicate holds.
    pub(super) fn ballot(
        &mut self,
        fr: &mut Frame<'k>,
        result: Handle<Expression>,
        predicate: Option<Handle<Expression>>,
    ) -> Result<(), SimError> {
        let l = self.lanes;
        let pred = match predicate {
            Some(p) => {
                self.ensure(fr, p)?;
                self.data(fr, p)?.to_vec()
            }
            None => vec![1; l],
        };
        let sg = self.sg;
        let mut out = vec![0u32; 4 * l];
        for s in 0..l.div_ceil(sg) {
            let mut bits = [0u32; 4];
            let lanes = s * sg..((s + 1) * sg).min(l);
            for lane in lanes.clone() {
                if fr.active[lane] && pred[lane] != 0 {
                    let i = lane - s * sg;
                    bits[i / 32] |= 1 << (i % 32);
                }
            }
            for lane in lanes {
                for (c, &w) in bits.iter().enumerate() {
                    out[c * l + lane] = w;
                }
            }
        }
        fr.vals[result.index()] = Some(Value::Data(out));
        Ok(())
    }

    /// A subgroup reduction or scan, per component and subgroup.
    pub(super) fn subgroup_collective(
        &mut self,
        fr: &mut Frame<'k>,
        op: naga::SubgroupOperation,
        collective_op: naga::CollectiveOperation,
        argument: Handle<Expression>,
        result: Handle<Expression>,
    ) -> Result<(), SimError> {
        let k = self.k;
        let l = self.lanes;
        self.ensure(fr, argument)?;
        let kind: K = fr.meta[argument.index()].kind;
        let (identity, comb) = reduction(kind, op)
            .ok_or_else(|| k.unsupported(format!("SubgroupOperation::{op:?} on {kind:?}")))?;
        let a = self.data(fr, argument)?;
        let n = a.len() / l;
        let sg = self.sg;
        let mut out = vec![0u32; a.len()];
        for c in 0..n {
            for s in 0..l.div_ceil(sg) {
                let lanes = s * sg..((s + 1) * sg).min(l);
                let comp = c * l + lanes.start..c * l + lanes.end;
                collective(
                    collective_op,
                    identity,
                    comb,
                    &fr.active[lanes],
                    &a[comp.clone()],
                    &mut out[comp],
                );
            }
        }
        fr.vals[result.index()] = Some(Value::Data(out));
        self.statement_result(fr, result);
        Ok(())
    }

    /// A subgroup broadcast or shuffle. A source lane out of range keeps the lane's own
    /// value (as NVIDIA's shfl does); WGSL leaves it indeterminate.
    #[expect(
        clippy::cast_possible_truncation,
        reason = "a lane within its subgroup: at most 128"
    )]
    pub(super) fn gather(
        &mut self,
        fr: &mut Frame<'k>,
        mode: &naga::GatherMode,
        argument: Handle<Expression>,
        result: Handle<Expression>,
    ) -> Result<(), SimError> {
        use naga::GatherMode as G;
        let l = self.lanes;
        self.ensure(fr, argument)?;
        let idx = match *mode {
            G::Broadcast(i)
            | G::Shuffle(i)
            | G::ShuffleDown(i)
            | G::ShuffleUp(i)
            | G::ShuffleXor(i)
            | G::QuadBroadcast(i) => {
                self.ensure(fr, i)?;
                self.data(fr, i)?.to_vec()
            }
            G::BroadcastFirst | G::QuadSwap(_) => vec![0; l],
        };
        let a = self.data(fr, argument)?;
        let n = a.len() / l;
        let sg = self.sg;
        let mut out = a.to_vec();
        for s in 0..l.div_ceil(sg) {
            let base = s * sg;
            let end = (base + sg).min(l);
            let first = (base..end).find(|&x| fr.active[x]).map(|x| x - base);
            for lane in base..end {
                let me = (lane - base) as u32;
                if let Some(src) = gather_source(mode, me, idx[lane], first)
                    && src < sg
                    && base + src < end
                {
                    for c in 0..n {
                        out[c * l + lane] = a[c * l + base + src];
                    }
                }
            }
        }
        fr.vals[result.index()] = Some(Value::Data(out));
        // The shuffle unit's work, not the arithmetic pipes'.
        self.stats.shuffles += self.active_subgroups(&fr.active);
        self.result_ready(fr, result);
        Ok(())
    }

    /// A statement's result: one instruction per active subgroup, ready when issued.
    pub(super) fn statement_result(&mut self, fr: &mut Frame<'k>, result: Handle<Expression>) {
        self.stats.warp_ops += self.active_subgroups(&fr.active);
        self.result_ready(fr, result);
    }

    /// A statement's result is ready when the statement issues.
    fn result_ready(&mut self, fr: &mut Frame<'k>, result: Handle<Expression>) {
        fr.ready[result.index()] = Ready {
            runtime: true,
            ..self.now.join(self.operands)
        };
    }
}
