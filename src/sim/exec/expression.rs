//! Evaluating expressions: each naga expression of a function, for all lanes at once,
//! into a per-lane component vector (or a per-lane pointer), on first use or when its
//! `Emit` runs; and the module's constant expressions.

use naga::{
    ArraySize, BinaryOperator, Expression, Handle, Literal, MathFunction, ScalarKind, TypeInner,
    UnaryOperator,
};

use super::kernel::{K, Kernel, Leaf, Pointee};
use super::math::{relational, select, unary};
use super::{Access, Exec, Frame, Ready, Region, SimError, Space, Value, variant};

/// The pipe a multiply-add runs on ([`super::MultiplyAdds`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Pipe {
    F32,
    Int,
}

impl<'k> Exec<'k, '_> {
    /// Evaluate `h` unless this frame already holds its value, and use it as an
    /// operand: in-order issue waits until it is ready, except in a loop the compiler
    /// unrolls, whose instructions it schedules by their dependences alone.
    pub(super) fn ensure(
        &mut self,
        fr: &mut Frame<'k>,
        h: Handle<Expression>,
    ) -> Result<(), SimError> {
        let ready = self.ensure_unused(fr, h)?;
        if !self.form.dataflow {
            self.wait_for(ready);
        }
        Ok(())
    }

    /// Evaluate `h` and wait until it is ready: a memory access needs its address and
    /// data, a branch its condition, unrolled or not.
    pub(super) fn ensure_now(
        &mut self,
        fr: &mut Frame<'k>,
        h: Handle<Expression>,
    ) -> Result<(), SimError> {
        let ready = self.ensure_unused(fr, h)?;
        self.wait_for(ready);
        Ok(())
    }

    /// Evaluate `h` unless this frame already holds its value; returns when it is
    /// ready, without waiting for it (a register move does not).
    pub(super) fn ensure_unused(
        &mut self,
        fr: &mut Frame<'k>,
        h: Handle<Expression>,
    ) -> Result<Ready, SimError> {
        if fr.vals[h.index()].is_none() {
            self.eval(fr, h)?;
        }
        let ready = fr.ready[h.index()];
        self.operands = self.operands.join(ready);
        Ok(ready)
    }

    /// The scoreboard's clock moves to `ready` if it is later.
    pub(super) fn wait_for(&mut self, ready: Ready) {
        if ready.at > self.now.at {
            self.now.at = ready.at;
            self.now.rounds = ready.rounds;
        }
    }

    /// Subgroups with an active lane: each issues an instruction that any lane runs.
    pub(super) fn active_subgroups(&self, active: &[bool]) -> u64 {
        active.chunks(self.sg).filter(|c| c.contains(&true)).count() as u64
    }

    /// Instructions a subgroup issues for expression `e` (addressing a struct member,
    /// composing and swizzling registers cost none; an integer division by a
    /// non-constant costs [`super::Costs::int_div_instructions`], where a divisor
    /// from constants and loop counters alone is a constant in each copy of an
    /// unrolled loop). Called once its operands are evaluated.
    fn instructions(&self, fr: &Frame<'k>, e: &Expression) -> u64 {
        match *e {
            Expression::Literal(_)
            | Expression::Constant(_)
            | Expression::ZeroValue(_)
            | Expression::GlobalVariable(_)
            | Expression::LocalVariable(_)
            | Expression::FunctionArgument(_)
            | Expression::AccessIndex { .. }
            | Expression::Compose { .. }
            | Expression::Splat { .. }
            | Expression::Swizzle { .. }
            | Expression::Load { .. }
            | Expression::As { convert: None, .. } => 0,
            Expression::Binary {
                op: BinaryOperator::Divide | BinaryOperator::Modulo,
                right,
                ..
            } if !matches!(fr.meta[right.index()].kind, super::kernel::K::F)
                && !matches!(
                    fr.fun.expressions[right],
                    Expression::Literal(_) | Expression::Constant(_)
                )
                && (!self.form.unrolled || fr.ready[right.index()].runtime) =>
            {
                u64::from(self.costs.int_div_instructions.max(1))
            }
            _ => 1,
        }
    }

    /// The multiply-add pipe that runs `e`, if any ([`super::MultiplyAdds`]). Called
    /// once its operands are evaluated.
    fn pipe(&self, fr: &Frame<'k>, e: &Expression) -> Option<Pipe> {
        let kind = |x: Handle<Expression>| fr.meta[x.index()].kind;
        match *e {
            Expression::Math {
                fun: MathFunction::Fma,
                arg,
                ..
            } if kind(arg) == K::F => Some(Pipe::F32),
            Expression::Binary {
                op: BinaryOperator::Multiply,
                left,
                right,
            } => match kind(left) {
                K::F => Some(Pipe::F32),
                K::U | K::I
                    if fr.ready[left.index()].runtime && fr.ready[right.index()].runtime =>
                {
                    Some(Pipe::Int)
                }
                _ => None,
            },
            _ => None,
        }
    }

    /// Whether `h` is the counter update or exit test of a loop the compiler unrolls,
    /// which its copies share.
    fn loop_overhead(&self, fr: &Frame<'k>, h: Handle<Expression>) -> bool {
        self.form.unrolled
            && (self.form.continuing
                || (self.form.exit_fun.is_some_and(|f| std::ptr::eq(f, fr.fun))
                    && self.form.exit_tests.contains(&h)))
    }

    /// The per-lane components of `h`, which must have been evaluated.
    pub(super) fn data<'f>(
        &self,
        fr: &'f Frame<'k>,
        h: Handle<Expression>,
    ) -> Result<&'f [u32], SimError> {
        match fr.vals.get(h.index()) {
            Some(Some(Value::Data(d))) => Ok(d),
            _ => Err(self.k.runtime(format!(
                "expression {h:?} used as a value before it was set"
            ))),
        }
    }

    /// The region and per-lane byte offsets of pointer `h`, which must have been
    /// evaluated.
    pub(super) fn ptr<'f>(
        &self,
        fr: &'f Frame<'k>,
        h: Handle<Expression>,
    ) -> Result<(Region, &'f [u32]), SimError> {
        match fr.vals.get(h.index()) {
            Some(Some(Value::Ptr(r, o))) => Ok((*r, o)),
            _ => Err(self.k.runtime(format!(
                "expression {h:?} used as a pointer before it was set"
            ))),
        }
    }

    /// The same components in every lane.
    fn broadcast(&self, comps: &[u32]) -> Vec<u32> {
        let l = self.lanes;
        let mut out = Vec::with_capacity(comps.len() * l);
        for &c in comps {
            out.extend(std::iter::repeat_n(c, l));
        }
        out
    }

    /// Evaluate `h` for every lane, inactive ones too (lock-step masks only side
    /// effects), into the frame.
    pub(super) fn eval(
        &mut self,
        fr: &mut Frame<'k>,
        h: Handle<Expression>,
    ) -> Result<(), SimError> {
        let k = self.k;
        let l = self.lanes;
        self.stats.lane_ops += l as u64;
        let fun = fr.fun;
        let outer = std::mem::take(&mut self.operands);
        let mut loaded = None;
        let meta = &fr.meta[h.index()];
        let v = match fun.expressions[h] {
            Expression::Literal(lit) => Value::Data(vec![k.literal(lit)?; l]),
            Expression::Constant(c) => {
                Value::Data(self.broadcast(&k.const_value(k.module.constants[c].init)?))
            }
            Expression::ZeroValue(_) => Value::Data(vec![0; meta.ncomp as usize * l]),
            Expression::Compose { ref components, .. } => {
                self.compose(fr, components, meta.ncomp)?
            }
            Expression::Splat { size, value } => {
                self.ensure(fr, value)?;
                Value::Data(self.data(fr, value)?.repeat(size as usize))
            }
            Expression::Swizzle {
                size,
                vector,
                pattern,
            } => self.swizzle(fr, vector, &pattern[..size as usize])?,
            Expression::FunctionArgument(i) => fr
                .args
                .get(i as usize)
                .cloned()
                .ok_or_else(|| k.runtime("missing function argument"))?,
            Expression::GlobalVariable(g) => self.global_ptr(g)?,
            Expression::LocalVariable(lv) => self.local_ptr(fr, lv),
            Expression::Load { pointer } => {
                let (v, ready) = self.load_expr(fr, pointer)?;
                loaded = Some(ready);
                v
            }
            Expression::AccessIndex { base, index } => {
                self.ensure(fr, base)?;
                self.access(fr, base, None, index)?
            }
            Expression::Access { base, index } => {
                self.ensure(fr, base)?;
                self.ensure(fr, index)?;
                self.access(fr, base, Some(index), 0)?
            }
            Expression::Unary { op, expr } => self.unary_expr(fr, op, expr)?,
            Expression::Binary { op, left, right } => self.binary_expr(fr, op, left, right)?,
            Expression::Select {
                condition,
                accept,
                reject,
            } => self.select_expr(fr, condition, accept, reject)?,
            Expression::Relational { fun: rf, argument } => {
                self.ensure(fr, argument)?;
                Value::Data(relational(rf, self.data(fr, argument)?, l))
            }
            Expression::Math {
                fun: mf,
                arg,
                arg1,
                arg2,
                arg3,
            } => self.math_expr(fr, mf, arg, [arg1, arg2, arg3])?,
            Expression::As {
                expr,
                kind: to,
                convert,
            } => self.as_expr(fr, expr, to, convert)?,
            Expression::ArrayLength(p) => self.array_length(fr, p)?,
            Expression::ImageLoad {
                image,
                coordinate,
                array_index: None,
                sample: None,
                level: _,
            } => {
                let (v, ready) = self.texture_load(fr, image, coordinate)?;
                loaded = Some(ready);
                v
            }
            Expression::CallResult(_)
            | Expression::AtomicResult { .. }
            | Expression::WorkGroupUniformLoadResult { .. }
            | Expression::SubgroupBallotResult
            | Expression::SubgroupOperationResult { .. } => {
                return Err(k.runtime(format!(
                    "result expression {h:?} read before its statement ran"
                )));
            }
            ref e => return Err(k.unsupported(format!("Expression::{}", variant(e)))),
        };
        if !self.loop_overhead(fr, h) {
            let subgroups = self.active_subgroups(&fr.active);
            let instructions = self.instructions(fr, &fun.expressions[h]);
            self.stats.warp_ops += subgroups * instructions;
            let lanes = subgroups * self.sg as u64 * u64::from(fr.meta[h.index()].ncomp);
            match self.pipe(fr, &fun.expressions[h]) {
                Some(Pipe::F32) => self.stats.multiply_adds.f32 += lanes,
                Some(Pipe::Int) => self.stats.multiply_adds.int += lanes,
                None => {}
            }
            let issue_per_ns = self.costs.schedulers * self.costs.clock_ghz;
            if issue_per_ns > 0.0 {
                self.skew_ns += instructions as f64
                    * (subgroups as f64 - self.costs.schedulers).max(0.0)
                    / issue_per_ns;
            }
        }
        // An argument's value comes from the caller (a pointer argument points at the
        // caller's variable, its index unchanged).
        let runtime = self.operands.runtime
            || matches!(
                (&fun.expressions[h], &v),
                (Expression::FunctionArgument(_), Value::Data(_))
            );
        fr.ready[h.index()] = loaded.unwrap_or(Ready {
            runtime,
            ..self.now.join(self.operands)
        });
        self.operands = outer.join(fr.ready[h.index()]);
        fr.vals[h.index()] = Some(v);
        Ok(())
    }

    /// A vector, matrix, array or struct from its parts: their components concatenated.
    fn compose(
        &mut self,
        fr: &mut Frame<'k>,
        components: &[Handle<Expression>],
        ncomp: u32,
    ) -> Result<Value, SimError> {
        let mut out = Vec::with_capacity(ncomp as usize * self.lanes);
        for &c in components {
            self.ensure(fr, c)?;
            out.extend_from_slice(self.data(fr, c)?);
        }
        Ok(Value::Data(out))
    }

    /// The components `pattern` picks from `vector`, in that order.
    fn swizzle(
        &mut self,
        fr: &mut Frame<'k>,
        vector: Handle<Expression>,
        pattern: &[naga::SwizzleComponent],
    ) -> Result<Value, SimError> {
        let l = self.lanes;
        self.ensure(fr, vector)?;
        let v = self.data(fr, vector)?;
        let mut out = Vec::with_capacity(pattern.len() * l);
        for &p in pattern {
            let c = p as usize;
            out.extend_from_slice(&v[c * l..(c + 1) * l]);
        }
        Ok(Value::Data(out))
    }

    /// A load through a pointer, for the active lanes (traced as a read), and when its
    /// value is ready: a latency after issue from memory, when it was stored for a
    /// variable in registers.
    fn load_expr(
        &mut self,
        fr: &mut Frame<'k>,
        pointer: Handle<Expression>,
    ) -> Result<(Value, Ready), SimError> {
        self.ensure_now(fr, pointer)?;
        let leaves = self.leaves_of_ptr(&fr.meta[pointer.index()])?;
        let (region, offs) = self.ptr(fr, pointer)?;
        let dynamic = fr.ready[pointer.index()].runtime;
        self.spill = dynamic && matches!(region, Region::Local(_) | Region::Private(_));
        // A uniform at an address the code fixes is an operand of the instruction that
        // uses it (NVIDIA's constant-bank operands): no load, no constant-cache request.
        let operand = !dynamic && matches!(region, Region::Buf(_, Space::Uniform));
        let traced = self.trace;
        self.trace = traced && !operand;
        let v = self.load(region, offs, leaves, &fr.active, Access::Read);
        self.trace = traced;
        let spilled = std::mem::take(&mut self.spill);
        let arrive = |latency: f64, rounds: u32| Ready {
            at: self.now.at + latency,
            rounds: self.now.rounds + rounds,
            runtime: true,
        };
        let ready = match region {
            // Written by this workgroup moments ago: in the L2 (the L1 does not keep
            // writes).
            Region::Buf(slot, Space::Storage) if self.written.contains(&slot) => {
                arrive(self.costs.l2_ns, 0)
            }
            Region::Buf(_, Space::Storage) => arrive(self.costs.global_ns, 1),
            Region::Local(i) | Region::Private(i) if !spilled => {
                let stored = *self.var_ready(region, i);
                Ready {
                    runtime: stored.runtime,
                    ..stored
                }
            }
            _ => arrive(self.costs.on_chip_ns, 0),
        };
        Ok((Value::Data(v?), ready))
    }

    /// `textureLoad` of an `r32float` 2-D texture at each lane's (x, y), as a load of
    /// the word at `y * width + x` of the bound texels (see
    /// [`super::Binding::texture_width`]): `vec4(texel, 0, 0, 1)`, ready like a
    /// storage read.
    fn texture_load(
        &mut self,
        fr: &mut Frame<'k>,
        image: Handle<Expression>,
        coordinate: Handle<Expression>,
    ) -> Result<(Value, Ready), SimError> {
        let k = self.k;
        let l = self.lanes;
        let Expression::GlobalVariable(global) = fr.fun.expressions[image] else {
            return Err(k.unsupported("textureLoad of a texture passed as an argument"));
        };
        let Some((slot, space)) = self.slot_of.get(global.index()).copied().flatten() else {
            return Err(k.runtime("textureLoad of an unbound texture"));
        };
        let width = self
            .bindings
            .get(slot as usize)
            .and_then(|b| b.texture_width)
            .ok_or_else(|| k.runtime("textureLoad of a binding bound as a buffer"))?;
        self.ensure_now(fr, coordinate)?;
        let xy = self.data(fr, coordinate)?;
        let mut offs = vec![0u32; l];
        let mut traced = vec![0u32; l];
        for lane in (0..l).filter(|&lane| fr.active[lane]) {
            let (x, y) = (xy[lane], xy[l + lane]);
            if x >= width {
                return Err(k.runtime(format!(
                    "textureLoad at x = {x} of a texture {width} texels wide"
                )));
            }
            offs[lane] = (y * width + x) * 4;
            traced[lane] = if self.costs.block_linear_textures {
                super::block_linear_offset(x * 4, y, width * 4)
            } else {
                offs[lane]
            };
        }
        // The texels are held row by row; the device reads them where its layout keeps
        // them.
        let leaf = Leaf {
            offset: 0,
            comps: 1,
            width: 4,
        };
        let texel = self.load_traced_at(
            Region::Buf(slot, space),
            &offs,
            &traced,
            &[leaf],
            &fr.active,
            Access::Read,
        )?;
        let mut out = texel;
        out.extend(std::iter::repeat_n(0, 2 * l));
        out.extend(std::iter::repeat_n(1f32.to_bits(), l));
        let ready = Ready {
            at: self.now.at + self.costs.global_ns,
            rounds: self.now.rounds + 1,
            runtime: true,
        };
        Ok((Value::Data(out), ready))
    }

    fn unary_expr(
        &mut self,
        fr: &mut Frame<'k>,
        op: UnaryOperator,
        expr: Handle<Expression>,
    ) -> Result<Value, SimError> {
        self.ensure(fr, expr)?;
        let a = self.data(fr, expr)?;
        let kind = fr.meta[expr.index()].kind;
        Ok(Value::Data(unary(op, kind, a)))
    }

    /// `left op right`, computed in the kind of the left operand.
    fn binary_expr(
        &mut self,
        fr: &mut Frame<'k>,
        op: BinaryOperator,
        left: Handle<Expression>,
        right: Handle<Expression>,
    ) -> Result<Value, SimError> {
        self.ensure(fr, left)?;
        self.ensure(fr, right)?;
        let kind = fr.meta[left.index()].kind;
        let a = self.data(fr, left)?;
        let bv = self.data(fr, right)?;
        Ok(Value::Data(self.binary(op, kind, a, bv)?))
    }

    fn select_expr(
        &mut self,
        fr: &mut Frame<'k>,
        condition: Handle<Expression>,
        accept: Handle<Expression>,
        reject: Handle<Expression>,
    ) -> Result<Value, SimError> {
        self.ensure(fr, condition)?;
        self.ensure(fr, accept)?;
        self.ensure(fr, reject)?;
        let c = self.data(fr, condition)?;
        let a = self.data(fr, accept)?;
        let r = self.data(fr, reject)?;
        Ok(Value::Data(select(c, a, r, self.lanes)))
    }

    /// A math builtin; absent arguments are empty.
    fn math_expr(
        &mut self,
        fr: &mut Frame<'k>,
        mf: MathFunction,
        arg: Handle<Expression>,
        rest: [Option<Handle<Expression>>; 3],
    ) -> Result<Value, SimError> {
        let [arg1, arg2, arg3] = rest;
        for a in [Some(arg), arg1, arg2, arg3].into_iter().flatten() {
            self.ensure(fr, a)?;
        }
        let kind = fr.meta[arg.index()].kind;
        let a = self.data(fr, arg)?;
        let a1 = match arg1 {
            Some(x) => self.data(fr, x)?,
            None => &[],
        };
        let a2 = match arg2 {
            Some(x) => self.data(fr, x)?,
            None => &[],
        };
        let a3 = match arg3 {
            Some(x) => self.data(fr, x)?,
            None => &[],
        };
        Ok(Value::Data(self.math(mf, kind, a, a1, a2, a3)?))
    }

    /// A conversion (`convert` is the target width) or, without one, a bitcast.
    fn as_expr(
        &mut self,
        fr: &mut Frame<'k>,
        expr: Handle<Expression>,
        to: ScalarKind,
        convert: Option<u8>,
    ) -> Result<Value, SimError> {
        self.ensure(fr, expr)?;
        let from = fr.meta[expr.index()].kind;
        let a = self.data(fr, expr)?;
        Ok(Value::Data(self.cast(a, from, to, convert)?))
    }

    /// `arrayLength`: the elements of the runtime-sized array that fit in the bound
    /// buffer after the array's offset.
    #[expect(
        clippy::cast_possible_truncation,
        reason = "arrayLength is a u32 in WGSL, as the suite counts a binding's elements"
    )]
    fn array_length(
        &mut self,
        fr: &mut Frame<'k>,
        p: Handle<Expression>,
    ) -> Result<Value, SimError> {
        let k = self.k;
        self.ensure(fr, p)?;
        let (region, offs) = self.ptr(fr, p)?;
        let stride = match fr.meta[p.index()].ptr {
            Some(Pointee::Ty(t)) => match k.module.types[t].inner {
                TypeInner::Array { stride, .. } => stride,
                _ => return Err(k.runtime("arrayLength of a non-array")),
            },
            _ => return Err(k.runtime("arrayLength of a non-array")),
        };
        let len = self.buf(region)?.len() as u64;
        let off = u64::from(offs.first().copied().unwrap_or(0));
        let n = len.saturating_sub(off) / u64::from(stride.max(1));
        Ok(Value::Data(vec![n as u32; self.lanes]))
    }

    /// `base[index]` for a pointer or a value; `dynamic` is the index expression, else
    /// `index` is the constant one.
    pub(super) fn access(
        &mut self,
        fr: &mut Frame<'k>,
        base: Handle<Expression>,
        dynamic: Option<Handle<Expression>>,
        index: u32,
    ) -> Result<Value, SimError> {
        let idx: Option<Vec<u32>> = match dynamic {
            Some(d) => Some(self.data(fr, d)?.to_vec()),
            None => None,
        };
        let meta = fr.meta;
        if let Some(pointee) = &meta[base.index()].ptr {
            return self.access_ptr(fr, base, pointee, idx.as_deref(), index);
        }
        self.access_value(fr, base, idx.as_deref(), index)
    }

    /// Select components of a value: a vector's component, a matrix's column, an
    /// array's element or a struct's member.
    #[expect(
        clippy::cast_possible_truncation,
        reason = "the message shows an index's bits as the signed value a shader may have meant"
    )]
    fn access_value(
        &self,
        fr: &Frame<'k>,
        base: Handle<Expression>,
        idx: Option<&[u32]>,
        index: u32,
    ) -> Result<Value, SimError> {
        let k = self.k;
        let l = self.lanes;
        let inner = fr.fi[base].ty.inner_with(&k.module.types);
        let (elem, count) = match *inner {
            TypeInner::Vector { size, .. } => (1usize, size as usize),
            TypeInner::Matrix { columns, rows, .. } => (rows as usize, columns as usize),
            TypeInner::Array {
                base: eb,
                size: ArraySize::Constant(n),
                ..
            } => (k.type_ncomp[eb.index()] as usize, n.get() as usize),
            TypeInner::Struct { ref members, .. } => {
                let start: usize = members
                    .iter()
                    .take(index as usize)
                    .map(|m| k.type_ncomp[m.ty.index()] as usize)
                    .sum();
                let n = members
                    .get(index as usize)
                    .map_or(0, |m| k.type_ncomp[m.ty.index()] as usize);
                let v = self.data(fr, base)?;
                return Ok(Value::Data(v[start * l..(start + n) * l].to_vec()));
            }
            ref other => {
                return Err(k.unsupported(format!("indexing a TypeInner::{}", variant(other))));
            }
        };
        let v = self.data(fr, base)?;
        let Some(idx) = idx else {
            let s = index as usize * elem;
            return Ok(Value::Data(v[s * l..(s + elem) * l].to_vec()));
        };
        let mut out = vec![0u32; elem * l];
        for lane in 0..l {
            let i = idx[lane] as usize;
            if i >= count {
                if fr.active[lane] {
                    return Err(SimError::OutOfBounds {
                        shader: k.name.clone(),
                        detail: format!(
                            "index {} into a value of {count} elements, workgroup {:?} lane {lane}",
                            i as i32, self.wid
                        ),
                    });
                }
                continue;
            }
            for c in 0..elem {
                out[c * l + lane] = v[(i * elem + c) * l + lane];
            }
        }
        Ok(Value::Data(out))
    }
}

impl Kernel {
    /// Components of a constant expression in `global_expressions`.
    pub(super) fn const_value(&self, h: Handle<Expression>) -> Result<Vec<u32>, SimError> {
        let m = &self.module;
        Ok(match m.global_expressions[h] {
            Expression::Literal(lit) => vec![self.literal(lit)?],
            Expression::Constant(c) => self.const_value(m.constants[c].init)?,
            Expression::ZeroValue(ty) => vec![0; self.type_ncomp[ty.index()] as usize],
            Expression::Compose { ref components, .. } => {
                let mut out = Vec::new();
                for &c in components {
                    out.extend(self.const_value(c)?);
                }
                out
            }
            Expression::Splat { size, value } => {
                let v = self.const_value(value)?;
                v.repeat(size as usize)
            }
            ref e => {
                return Err(self.unsupported(format!("constant Expression::{}", variant(e))));
            }
        })
    }

    /// A literal as its 32-bit component.
    pub(super) fn literal(&self, lit: Literal) -> Result<u32, SimError> {
        Ok(match lit {
            Literal::F32(x) => x.to_bits(),
            Literal::U32(x) => x,
            Literal::I32(x) => x as u32,
            Literal::Bool(b) => u32::from(b),
            other => return Err(self.unsupported(format!("Literal::{}", variant(&other)))),
        })
    }
}
