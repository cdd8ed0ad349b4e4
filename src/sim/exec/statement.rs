//! Executing statements in lock-step. Control flow only moves lanes between masks: `if`
//! and `switch` narrow the active mask and widen it again after; `break` and `continue`
//! park the active lanes in the mask of the loop or switch they wait at, and `return`
//! retires them; every other statement acts for the active lanes only.

use naga::{Block, Expression, Handle, Statement, SwitchCase};

use super::{Access, Construct, Exec, Frame, LoopForm, Ready, Region, SimError, Value, variant};

/// Bound on iterations of one loop, so a kernel that never terminates is an error.
const MAX_LOOP_ITERATIONS: u64 = 1 << 32;

/// Whether `block` holds a loop, at any depth: a loop around it stays a loop in the
/// driver's code.
fn has_loop(block: &Block) -> bool {
    block.iter().any(|s| match s {
        Statement::Loop { .. } => true,
        Statement::Block(b) => has_loop(b),
        Statement::If { accept, reject, .. } => has_loop(accept) || has_loop(reject),
        Statement::Switch { cases, .. } => cases.iter().any(|c| has_loop(&c.body)),
        _ => false,
    })
}

/// Whether `block` holds a subgroup operation or a barrier, at any depth or in a
/// function it calls: an operation the invocations must reach together, which a loop
/// with a run-time trip count cannot be unrolled around (its remainder iterations
/// would run under a condition the operation does not; LLVM's loop unroller refuses
/// such a remainder for the same reason).
fn convergent(module: &naga::Module, block: &Block) -> bool {
    block.iter().any(|s| match s {
        Statement::SubgroupBallot { .. }
        | Statement::SubgroupCollectiveOperation { .. }
        | Statement::SubgroupGather { .. }
        | Statement::ControlBarrier(_) => true,
        Statement::Block(b) => convergent(module, b),
        Statement::If { accept, reject, .. } => {
            convergent(module, accept) || convergent(module, reject)
        }
        Statement::Switch { cases, .. } => cases.iter().any(|c| convergent(module, &c.body)),
        Statement::Loop {
            body, continuing, ..
        } => convergent(module, body) || convergent(module, continuing),
        Statement::Call { function, .. } => convergent(module, &module.functions[*function].body),
        _ => false,
    })
}

/// Whether `block` is a lone `break`: the branch of a loop's exit test.
fn lone_break(block: &Block) -> bool {
    block.len() == 1 && matches!(block.iter().next(), Some(Statement::Break))
}

/// The conditions of the `if`s of `body` (not nested) that leave the loop: an `if`
/// whose branch is a lone `break`.
fn exit_tests(body: &Block) -> Vec<Handle<Expression>> {
    body.iter()
        .filter_map(|s| match s {
            Statement::If {
                condition,
                accept,
                reject,
            } if lone_break(accept) || lone_break(reject) => Some(*condition),
            _ => None,
        })
        .collect()
}

/// Whether any lane of the mask is set.
fn any(mask: &[bool]) -> bool {
    mask.iter().any(|&b| b)
}

/// A case label as the selector's bits; `None` for `default`.
fn case_value(v: &naga::SwitchValue) -> Option<u32> {
    match *v {
        naga::SwitchValue::I32(x) => Some(x as u32),
        naga::SwitchValue::U32(x) => Some(x),
        naga::SwitchValue::Default => None,
    }
}

impl<'k> Exec<'k, '_> {
    /// Run a block's statements while any lane is active.
    pub(super) fn block(&mut self, fr: &mut Frame<'k>, block: &'k Block) -> Result<(), SimError> {
        for stmt in block.iter() {
            if !any(&fr.active) {
                break;
            }
            self.statement(fr, stmt)?;
        }
        Ok(())
    }

    /// One statement, by kind.
    fn statement(&mut self, fr: &mut Frame<'k>, stmt: &'k Statement) -> Result<(), SimError> {
        self.operands = Ready::default();
        match *stmt {
            Statement::Emit(ref range) => {
                for h in range.clone() {
                    self.eval(fr, h)?;
                }
                Ok(())
            }
            Statement::Block(ref b) => self.block(fr, b),
            Statement::If {
                condition,
                ref accept,
                ref reject,
            } => self.if_else(fr, condition, accept, reject),
            Statement::Switch {
                selector,
                ref cases,
            } => self.switch(fr, selector, cases),
            Statement::Loop {
                ref body,
                ref continuing,
                break_if,
            } => self.run_loop(fr, body, continuing, break_if),
            Statement::Break => self.break_lanes(fr),
            Statement::Continue => self.continue_lanes(fr),
            Statement::Return { value } => self.return_lanes(fr, value),
            Statement::ControlBarrier(flags) => self.barrier(fr, flags),
            Statement::MemoryBarrier(_) => Ok(()),
            Statement::Store { pointer, value } => self.store_stmt(fr, pointer, value),
            Statement::WorkGroupUniformLoad { pointer, result } => {
                self.uniform_load(fr, pointer, result)
            }
            Statement::Call {
                function,
                ref arguments,
                result,
            } => self.call_stmt(fr, function, arguments, result),
            Statement::Atomic {
                pointer,
                ref fun,
                value,
                result,
            } => self.atomic_stmt(fr, pointer, fun, value, result),
            Statement::SubgroupBallot { result, predicate } => self.ballot(fr, result, predicate),
            Statement::SubgroupCollectiveOperation {
                op,
                collective_op,
                argument,
                result,
            } => self.subgroup_collective(fr, op, collective_op, argument, result),
            Statement::SubgroupGather {
                ref mode,
                argument,
                result,
            } => self.gather(fr, mode, argument, result),
            ref other => Err(self.k.unsupported(format!("Statement::{}", variant(other)))),
        }
    }

    /// `if`: each branch runs for the lanes it takes; both rejoin after.
    fn if_else(
        &mut self,
        fr: &mut Frame<'k>,
        condition: Handle<Expression>,
        accept: &'k Block,
        reject: &'k Block,
    ) -> Result<(), SimError> {
        self.ensure_now(fr, condition)?;
        self.runtime_condition = fr.ready[condition.index()].runtime;
        if (lone_break(accept) || lone_break(reject))
            && let Some(Construct::Loop { runtime_test, .. }) = fr.constructs.last_mut()
        {
            *runtime_test |= self.runtime_condition;
        }
        let c = self.data(fr, condition)?;
        let saved = fr.active.clone();
        let yes: Vec<bool> = saved.iter().zip(c).map(|(&a, &c)| a && c != 0).collect();
        let no: Vec<bool> = saved.iter().zip(c).map(|(&a, &c)| a && c == 0).collect();
        fr.active = yes;
        self.block(fr, accept)?;
        let after = std::mem::replace(&mut fr.active, no);
        self.block(fr, reject)?;
        for (a, x) in fr.active.iter_mut().zip(after) {
            *a |= x;
        }
        Ok(())
    }

    /// `switch`: each case runs for the lanes its label selects (`default`: those no
    /// label selects) and those falling through into it; all rejoin after.
    fn switch(
        &mut self,
        fr: &mut Frame<'k>,
        selector: Handle<Expression>,
        cases: &'k [SwitchCase],
    ) -> Result<(), SimError> {
        let l = self.lanes;
        self.ensure_now(fr, selector)?;
        let sel = self.data(fr, selector)?.to_vec();
        let saved = fr.active.clone();
        let matches_any: Vec<bool> = sel
            .iter()
            .map(|&s| cases.iter().any(|c| case_value(&c.value) == Some(s)))
            .collect();
        fr.constructs.push(Construct::Switch {
            brk: vec![false; l],
        });
        let mut carry = vec![false; l];
        let mut exited = vec![false; l];
        for case in cases {
            let want = case_value(&case.value);
            fr.active = (0..l)
                .map(|lane| {
                    carry[lane]
                        || (saved[lane]
                            && match want {
                                Some(v) => sel[lane] == v,
                                None => !matches_any[lane],
                            })
                })
                .collect();
            self.block(fr, &case.body)?;
            if case.fall_through {
                carry = fr.active.clone();
            } else {
                for (e, &a) in exited.iter_mut().zip(&fr.active) {
                    *e |= a;
                }
                carry.fill(false);
            }
        }
        let brk = match fr.constructs.pop() {
            Some(Construct::Switch { brk }) => brk,
            _ => return Err(self.k.runtime("construct stack out of order")),
        };
        fr.active = (0..l).map(|i| exited[i] || brk[i] || carry[i]).collect();
        Ok(())
    }

    /// `loop`: iterate while any lane is active; the lanes that broke out continue
    /// after it.
    fn run_loop(
        &mut self,
        fr: &mut Frame<'k>,
        body: &'k Block,
        continuing: &'k Block,
        break_if: Option<Handle<Expression>>,
    ) -> Result<(), SimError> {
        let l = self.lanes;
        fr.constructs.push(Construct::Loop {
            brk: vec![false; l],
            cont: vec![false; l],
            runtime_exit: false,
            runtime_test: false,
        });
        // Until its second iteration the loop keeps the enclosing form, less what
        // belongs to the enclosing loop's own body.
        let inner = LoopForm {
            dataflow: self.form.dataflow,
            unrolled: self.form.unrolled,
            exit_fun: self.form.exit_fun,
            ..LoopForm::default()
        };
        let outer = std::mem::replace(&mut self.form, inner);
        let mut iterations = 0u64;
        loop {
            iterations += 1;
            // After one iteration shows whether its exit is known at compile time, a
            // loop without inner loops is one the compiler unrolls (the tax-free build
            // asks it to, barriers or not): whole, scheduled by its dependences; with a
            // run-time trip count, into copies and a remainder loop, which it can do
            // only where no subgroup operation or barrier needs the invocations
            // together (NVIDIA's Vulkan compiler leaves the subgroup rounds rolled:
            // their CUDA twins built with `#pragma unroll 1` run at the tax-free
            // kernels' speed).
            if iterations == 2
                && let Some(&Construct::Loop {
                    runtime_exit,
                    runtime_test,
                    ..
                }) = fr.constructs.last()
                && !has_loop(body)
                && !has_loop(continuing)
            {
                let module = &self.k.module;
                self.form.dataflow = !runtime_exit;
                self.form.unrolled = !(runtime_exit || runtime_test)
                    || !(convergent(module, body) || convergent(module, continuing));
                if self.form.unrolled {
                    self.form.exit_tests = exit_tests(body);
                    self.form.exit_fun = Some(fr.fun);
                }
            }
            if iterations > MAX_LOOP_ITERATIONS {
                return Err(self
                    .k
                    .runtime("loop ran 2^32 iterations: does it terminate?"));
            }
            self.block(fr, body)?;
            // Lanes that took `continue` run the continuing block with the rest.
            if let Some(Construct::Loop { cont, .. }) = fr.constructs.last_mut() {
                for (a, c) in fr.active.iter_mut().zip(cont.iter_mut()) {
                    *a |= *c;
                    *c = false;
                }
            }
            self.form.continuing = true;
            self.block(fr, continuing)?;
            if let Some(bi) = break_if
                && any(&fr.active)
            {
                self.break_if(fr, bi)?;
            }
            self.form.continuing = false;
            if !any(&fr.active) {
                break;
            }
        }
        self.form = outer;
        match fr.constructs.pop() {
            Some(Construct::Loop { brk, .. }) => fr.active = brk,
            _ => return Err(self.k.runtime("construct stack out of order")),
        }
        Ok(())
    }

    /// `break if`: the active lanes whose condition holds leave the loop.
    fn break_if(&mut self, fr: &mut Frame<'k>, bi: Handle<Expression>) -> Result<(), SimError> {
        self.ensure_now(fr, bi)?;
        let runtime = fr.ready[bi.index()].runtime;
        let c = self.data(fr, bi)?.to_vec();
        if let Some(Construct::Loop {
            brk, runtime_exit, ..
        }) = fr.constructs.last_mut()
        {
            *runtime_exit |= runtime;
            for lane in 0..self.lanes {
                if fr.active[lane] && c[lane] != 0 {
                    brk[lane] = true;
                    fr.active[lane] = false;
                }
            }
        }
        Ok(())
    }

    /// `break`: the active lanes wait at the end of the innermost loop or switch.
    fn break_lanes(&mut self, fr: &mut Frame<'k>) -> Result<(), SimError> {
        let active = std::mem::replace(&mut fr.active, vec![false; self.lanes]);
        if let Some(Construct::Loop { runtime_exit, .. }) = fr.constructs.last_mut() {
            *runtime_exit |= self.runtime_condition;
        }
        match fr.constructs.last_mut() {
            Some(Construct::Loop { brk, .. } | Construct::Switch { brk }) => {
                for (x, a) in brk.iter_mut().zip(active) {
                    *x |= a;
                }
                Ok(())
            }
            None => Err(self.k.runtime("break outside a loop or switch")),
        }
    }

    /// `continue`: the active lanes wait for the continuing block of the innermost
    /// loop, skipping any switch in between.
    fn continue_lanes(&mut self, fr: &mut Frame<'k>) -> Result<(), SimError> {
        let active = std::mem::replace(&mut fr.active, vec![false; self.lanes]);
        let cont = fr.constructs.iter_mut().rev().find_map(|c| match c {
            Construct::Loop { cont, .. } => Some(cont),
            Construct::Switch { .. } => None,
        });
        match cont {
            Some(cont) => {
                for (x, a) in cont.iter_mut().zip(active) {
                    *x |= a;
                }
                Ok(())
            }
            None => Err(self.k.runtime("continue outside a loop")),
        }
    }

    /// `return`: the active lanes set their return value and stop.
    fn return_lanes(
        &mut self,
        fr: &mut Frame<'k>,
        value: Option<Handle<Expression>>,
    ) -> Result<(), SimError> {
        let l = self.lanes;
        if let Some(v) = value {
            self.ensure(fr, v)?;
            let mut ret = std::mem::take(&mut fr.ret);
            let d = self.data(fr, v)?;
            let n = d.len() / l;
            ret.resize(n * l, 0);
            for lane in 0..l {
                if fr.active[lane] {
                    for c in 0..n {
                        ret[c * l + lane] = d[c * l + lane];
                    }
                }
            }
            fr.ret = ret;
        }
        fr.active.fill(false);
        Ok(())
    }

    /// Lock-step meets every barrier; one reached by part of the workgroup would mean
    /// divergent control flow, which lock-step cannot honour. A subgroup-only barrier
    /// needs no workgroup-wide check.
    fn barrier(&mut self, fr: &Frame<'k>, flags: naga::Barrier) -> Result<(), SimError> {
        if flags != naga::Barrier::SUB_GROUP && !fr.active.iter().all(|&a| a) {
            return Err(self.k.unsupported(
                "a barrier reached by only part of the workgroup (non-uniform control flow)",
            ));
        }
        if flags != naga::Barrier::SUB_GROUP {
            self.now.at = self.now.at.max(self.stores_at) + self.skew_ns + self.costs.barrier_ns;
            self.skew_ns = 0.0;
        }
        Ok(())
    }

    /// A store through a pointer, by the active lanes.
    fn store_stmt(
        &mut self,
        fr: &mut Frame<'k>,
        pointer: Handle<Expression>,
        value: Handle<Expression>,
    ) -> Result<(), SimError> {
        self.ensure_now(fr, pointer)?;
        let dynamic = fr.ready[pointer.index()].runtime;
        let (region, _) = self.ptr(fr, pointer)?;
        if let Region::Buf(slot, _) = region
            && !self.written.contains(&slot)
        {
            self.written.push(slot);
        }
        let variable = match region {
            Region::Local(i) | Region::Private(i) => Some(i),
            _ => None,
        };
        // A register write does not wait for its value; memory needs the data.
        let spill = dynamic && variable.is_some();
        // In a loop the compiler unrolls, a store waits for its data without holding
        // back the independent instructions after it (the loads of later iterations
        // are scheduled ahead of it, as register_array's twin's SASS shows: its loads
        // issue fifteen ahead of its stores).
        let ready = if variable.is_some() && !spill {
            self.ensure_unused(fr, value)?
        } else if self.form.dataflow {
            let ready = self.ensure_unused(fr, value)?;
            self.stores_at = self.stores_at.max(ready.at);
            ready
        } else {
            self.ensure_now(fr, value)?;
            fr.ready[value.index()]
        };
        if let Some(i) = variable {
            let stored = self.var_ready(region, i);
            let runtime = stored.runtime || ready.runtime;
            *stored = Ready { runtime, ..ready };
        }
        let leaves = self.leaves_of_ptr(&fr.meta[pointer.index()])?;
        let (region, offs) = self.ptr(fr, pointer)?;
        let v = self.data(fr, value)?;
        self.spill = spill;
        let stored = self.store(region, offs, leaves, &fr.active, v);
        self.spill = false;
        stored
    }

    /// `workgroupUniformLoad`: a load the whole workgroup must reach.
    fn uniform_load(
        &mut self,
        fr: &mut Frame<'k>,
        pointer: Handle<Expression>,
        result: Handle<Expression>,
    ) -> Result<(), SimError> {
        if !fr.active.iter().all(|&a| a) {
            return Err(self
                .k
                .unsupported("workgroupUniformLoad reached by only part of the workgroup"));
        }
        self.ensure(fr, pointer)?;
        let leaves = self.leaves_of_ptr(&fr.meta[pointer.index()])?;
        let (region, offs) = self.ptr(fr, pointer)?;
        let v = self.load(region, offs, leaves, &fr.active, Access::Read)?;
        fr.vals[result.index()] = Some(Value::Data(v));
        Ok(())
    }

    /// A function call for the active lanes.
    fn call_stmt(
        &mut self,
        fr: &mut Frame<'k>,
        function: Handle<naga::Function>,
        arguments: &[Handle<Expression>],
        result: Option<Handle<Expression>>,
    ) -> Result<(), SimError> {
        let k = self.k;
        let mut args = Vec::with_capacity(arguments.len());
        for &a in arguments {
            self.ensure(fr, a)?;
            args.push(
                fr.vals[a.index()]
                    .clone()
                    .ok_or_else(|| k.runtime("missing call argument"))?,
            );
        }
        let callee = &k.module.functions[function];
        let meta = k
            .fn_meta
            .get(function.index())
            .ok_or_else(|| k.runtime("unknown function"))?;
        let ret = self.call(callee, &k.info[function], meta, args, fr.active.clone())?;
        if let Some(r) = result {
            fr.vals[r.index()] = Some(Value::Data(ret));
        }
        Ok(())
    }

    /// An atomic through a pointer, by the active lanes; its result is the old values.
    fn atomic_stmt(
        &mut self,
        fr: &mut Frame<'k>,
        pointer: Handle<Expression>,
        fun: &naga::AtomicFunction,
        value: Handle<Expression>,
        result: Option<Handle<Expression>>,
    ) -> Result<(), SimError> {
        self.ensure(fr, pointer)?;
        self.ensure(fr, value)?;
        let cmp = match *fun {
            naga::AtomicFunction::Exchange { compare: Some(c) } => {
                self.ensure(fr, c)?;
                Some(self.data(fr, c)?.to_vec())
            }
            _ => None,
        };
        let kind = fr.meta[value.index()].kind;
        let (region, offs) = self.ptr(fr, pointer)?;
        let offs = offs.to_vec();
        let v = self.data(fr, value)?.to_vec();
        let active = fr.active.clone();
        let old = self.atomic(region, &offs, &active, fun, kind, &v, cmp.as_deref())?;
        if let Some(r) = result {
            fr.vals[r.index()] = Some(Value::Data(old));
        }
        Ok(())
    }
}
