//! Memory: where pointers point (bound buffers, workgroup, private and function
//! variables), pointer indexing with bounds checks, loads, stores and atomics leaf by
//! leaf, and the requests they record for the trace.

use naga::{AddressSpace, ArraySize, Expression, Handle, TypeInner};

use super::kernel::{ExprMeta, K, Leaf, Pointee, matrix_column_stride};
use super::math::b;
use super::{Access, Exec, Frame, Region, Request, SimError, Space, Target, Value, variant};

/// Marks a private variable's [`Target::Local`] apart from function variables'.
const PRIVATE_TAG: u32 = 1 << 31;

/// How indexing a pointer moves it.
enum Step {
    /// To a struct member: the same byte offset for every lane.
    Member(u32),
    /// To an element of `len` (`None`: as many as the buffer holds), `stride` bytes apart.
    Element {
        stride: u32,
        len: Option<u64>,
        what: &'static str,
    },
}

impl<'k> Exec<'k, '_> {
    /// A pointer to a global variable: offset 0 into its buffer or workgroup memory, or
    /// each lane's own slot of a `var<private>`.
    #[expect(
        clippy::cast_possible_truncation,
        reason = "lane and variable indices of one workgroup: check_launch keeps its lanes within u32"
    )]
    pub(super) fn global_ptr(&self, g: Handle<naga::GlobalVariable>) -> Result<Value, SimError> {
        let k = self.k;
        let gv = &k.module.global_variables[g];
        let l = self.lanes;
        let region = match gv.space {
            AddressSpace::Storage { .. } | AddressSpace::Uniform => {
                match self.slot_of.get(g.index()).copied().flatten() {
                    Some((slot, space)) => Region::Buf(slot, space),
                    None => {
                        let rb = gv.binding.unwrap_or(naga::ResourceBinding {
                            group: u32::MAX,
                            binding: u32::MAX,
                        });
                        return Err(SimError::MissingBinding {
                            shader: k.name.clone(),
                            group: rb.group,
                            binding: rb.binding,
                        });
                    }
                }
            }
            AddressSpace::WorkGroup => Region::Wg(
                k.wg_vars
                    .iter()
                    .position(|&x| x == g)
                    .ok_or_else(|| k.runtime("unknown workgroup variable"))? as u32,
            ),
            AddressSpace::Private => {
                let i = k
                    .private_vars
                    .iter()
                    .position(|&x| x == g)
                    .ok_or_else(|| k.runtime("unknown private variable"))?;
                let stride = k.layouter[gv.ty].to_stride();
                return Ok(Value::Ptr(
                    Region::Private(i as u32),
                    (0..l as u32).map(|i| i * stride).collect(),
                ));
            }
            other => {
                return Err(k.unsupported(format!(
                    "global `{}` in AddressSpace::{}",
                    gv.name.as_deref().unwrap_or("?"),
                    variant(&other)
                )));
            }
        };
        Ok(Value::Ptr(region, vec![0; l]))
    }

    /// A pointer to a function variable: each lane's own slot.
    #[expect(
        clippy::cast_possible_truncation,
        reason = "lane and variable indices of one workgroup: check_launch keeps its lanes within u32"
    )]
    pub(super) fn local_ptr(&self, fr: &Frame<'k>, lv: Handle<naga::LocalVariable>) -> Value {
        let l = self.lanes;
        let stride = self.k.layouter[fr.fun.local_variables[lv].ty].to_stride();
        Value::Ptr(
            Region::Local(fr.local_base + lv.index() as u32),
            (0..l as u32).map(|i| i * stride).collect(),
        )
    }

    /// A region as error messages name it.
    fn region_name(&self, r: Region) -> String {
        let k = self.k;
        let m = &k.module;
        match r {
            Region::Buf(slot, _) => {
                let (g, bnd) = self
                    .bindings
                    .get(slot as usize)
                    .map_or((0, 0), |x| (x.group, x.binding));
                let name = m
                    .global_variables
                    .iter()
                    .find(|(_, v)| {
                        v.binding
                            .is_some_and(|rb| rb.group == g && rb.binding == bnd)
                    })
                    .and_then(|(_, v)| v.name.clone())
                    .unwrap_or_default();
                format!("`{name}` @group({g}) @binding({bnd})")
            }
            Region::Wg(i) => format!(
                "var<workgroup> `{}`",
                k.wg_vars
                    .get(i as usize)
                    .and_then(|&h| m.global_variables[h].name.clone())
                    .unwrap_or_default()
            ),
            Region::Private(_) => "var<private>".into(),
            Region::Local(_) => "function variable".into(),
        }
    }

    /// The bytes behind a region.
    pub(super) fn buf(&self, r: Region) -> Result<&[u8], SimError> {
        let v = match r {
            Region::Buf(s, _) => self.bindings.get(s as usize).map(|b| &b.data),
            Region::Wg(i) => self.wg_mem.get(i as usize),
            Region::Private(i) => self.private_mem.get(i as usize),
            Region::Local(i) => self.local_mem.get(i as usize),
        };
        v.map(|v| v.as_slice())
            .ok_or_else(|| self.k.runtime("dangling memory region"))
    }

    fn buf_mut(&mut self, r: Region) -> Result<&mut [u8], SimError> {
        let v = match r {
            Region::Buf(s, _) => self.bindings.get_mut(s as usize).map(|b| &mut b.data),
            Region::Wg(i) => self.wg_mem.get_mut(i as usize),
            Region::Private(i) => self.private_mem.get_mut(i as usize),
            Region::Local(i) => self.local_mem.get_mut(i as usize),
        };
        match v {
            Some(v) => Ok(v.as_mut_slice()),
            None => Err(self.k.runtime("dangling memory region")),
        }
    }

    /// The leaves a load or store through a pointer of this shape touches.
    pub(super) fn leaves_of_ptr(&self, meta: &'k ExprMeta) -> Result<&'k [Leaf], SimError> {
        let k = self.k;
        match &meta.ptr {
            Some(Pointee::Val(leaf)) => Ok(std::slice::from_ref(leaf)),
            Some(Pointee::Ty(t)) => k.type_leaves[t.index()]
                .as_deref()
                .ok_or_else(|| k.unsupported("load or store of a runtime-sized or opaque type")),
            None => Err(k.runtime("not a pointer")),
        }
    }

    /// What indexing a pointer to `pointee` does; `index` names a struct member.
    fn step(&self, pointee: &Pointee, index: u32) -> Result<Step, SimError> {
        let k = self.k;
        Ok(match pointee {
            Pointee::Val(leaf) => Step::Element {
                stride: leaf.width,
                len: Some(u64::from(leaf.comps)),
                what: "vector",
            },
            Pointee::Ty(t) => match k.module.types[*t].inner {
                TypeInner::Struct { ref members, .. } => Step::Member(
                    members
                        .get(index as usize)
                        .map(|m| m.offset)
                        .ok_or_else(|| k.runtime("struct member out of range"))?,
                ),
                TypeInner::Array { size, stride, .. } => match size {
                    ArraySize::Constant(n) => Step::Element {
                        stride,
                        len: Some(u64::from(n.get())),
                        what: "array",
                    },
                    _ => Step::Element {
                        stride,
                        len: None,
                        what: "runtime-sized array",
                    },
                },
                TypeInner::Vector { size, scalar } => Step::Element {
                    stride: u32::from(scalar.width),
                    len: Some(size as u64),
                    what: "vector",
                },
                TypeInner::Matrix {
                    columns,
                    rows,
                    scalar,
                } => Step::Element {
                    stride: matrix_column_stride(rows, u32::from(scalar.width)),
                    len: Some(columns as u64),
                    what: "matrix",
                },
                ref other => {
                    return Err(k.unsupported(format!(
                        "indexing a pointer to TypeInner::{}",
                        variant(other)
                    )));
                }
            },
        })
    }

    /// `base[index]` through a pointer: advance each lane's byte offset, checking the
    /// index of every active lane. `idx` holds the per-lane indices of a dynamic index.
    pub(super) fn access_ptr(
        &self,
        fr: &Frame<'k>,
        base: Handle<Expression>,
        pointee: &Pointee,
        idx: Option<&[u32]>,
        index: u32,
    ) -> Result<Value, SimError> {
        let k = self.k;
        let l = self.lanes;
        let (region, offs) = self.ptr(fr, base)?;
        let (stride, len, what) = match self.step(pointee, index)? {
            Step::Member(off) => {
                let offs = offs.iter().map(|&o| o.wrapping_add(off)).collect();
                return Ok(Value::Ptr(region, offs));
            }
            Step::Element { stride, len, what } => (stride, len, what),
        };
        let buf_len = self.buf(region)?.len() as u64;
        let mut out = Vec::with_capacity(l);
        for (lane, &o) in offs.iter().enumerate() {
            let i = idx.map_or(index, |v| v[lane]);
            if fr.active[lane] {
                let n = len.unwrap_or_else(|| {
                    buf_len.saturating_sub(u64::from(o)) / u64::from(stride.max(1))
                });
                if u64::from(i) >= n {
                    return Err(SimError::OutOfBounds {
                        shader: k.name.clone(),
                        detail: format!(
                            "index {} into a {what} of length {n} in {}, workgroup {:?} lane {lane}",
                            i as i32,
                            self.region_name(region),
                            self.wid
                        ),
                    });
                }
            }
            out.push(o.wrapping_add(i.wrapping_mul(stride)));
        }
        Ok(Value::Ptr(region, out))
    }

    /// The space and target of a request to `region`; `None` for the untraced
    /// function and private memory.
    fn target_of(&self, region: Region) -> Option<(Space, Target)> {
        match region {
            Region::Buf(slot, space) => {
                let bd = self.bindings.get(slot as usize)?;
                Some((
                    space,
                    Target::Binding {
                        group: bd.group,
                        binding: bd.binding,
                    },
                ))
            }
            Region::Wg(v) => Some((Space::Workgroup, Target::Workgroup { var: v })),
            Region::Local(v) if self.spill => Some((Space::Local, Target::Local { var: v })),
            Region::Private(v) if self.spill => Some((
                Space::Local,
                Target::Local {
                    var: PRIVATE_TAG | v,
                },
            )),
            _ => None,
        }
    }

    /// Where a lane's byte `offset` into its slot of a local-memory variable lies:
    /// local memory interleaves lanes word by word (word w of every invocation of the
    /// grid, then word w + 1), so that a subgroup's access to one slot coalesces.
    /// Seen in Nsight Compute on the CUDA twin of `localmem/dynamic_index`, whose 128-byte
    /// window ptxas puts on the stack: 4 sectors per 32-lane local load request; and its
    /// local stores are written through to the L2 (L1-to-L2 write sectors = local plus
    /// global store sectors), as the model's L1 treats every write (docs/simulator.md,
    /// Local memory).
    fn local_address(&self, region: Region, lane: usize, offset: u64) -> u64 {
        let l = self.lanes as u64;
        let stride = self.buf(region).map_or(0, |b| b.len() as u64) / l.max(1);
        let within = offset - lane as u64 * stride;
        let [nx, ny, nz] = self.nwg.map(u64::from);
        let [x, y, z] = self.wid.map(u64::from);
        let invocations = nx * ny * nz * l;
        let invocation = (x + nx * (y + ny * z)) * l + lane as u64;
        within / 4 * 4 * invocations + 4 * invocation + within % 4
    }

    /// Emit one request per subgroup with an active lane.
    #[expect(
        clippy::cast_possible_truncation,
        reason = "lane and subgroup indices of one workgroup: check_launch keeps its lanes within u32"
    )]
    fn trace(
        &mut self,
        region: Region,
        access: Access,
        bytes: u32,
        offs: &[u32],
        extra: u32,
        active: &[bool],
    ) {
        if !self.trace {
            return;
        }
        let Some((space, target)) = self.target_of(region) else {
            return;
        };
        // A storage read: the round of the workgroup's scoreboard it issues in.
        let round = match region {
            Region::Buf(_, Space::Storage) if access == Access::Read => Some(self.now.rounds),
            _ => None,
        };
        let l = self.lanes;
        let sg = self.sg;
        for s in 0..l.div_ceil(sg) {
            self.lane_buf.clear();
            self.addr_buf.clear();
            for lane in s * sg..((s + 1) * sg).min(l) {
                if active[lane] {
                    self.lane_buf.push((lane - s * sg) as u32);
                    let offset = u64::from(offs[lane]) + u64::from(extra);
                    self.addr_buf.push(if space == Space::Local {
                        self.local_address(region, lane, offset)
                    } else {
                        offset
                    });
                }
            }
            if self.lane_buf.is_empty() {
                continue;
            }
            self.stats.requests += 1;
            self.sink.request(&Request {
                workgroup: self.wid,
                subgroup: s as u32,
                space,
                target,
                access,
                bytes_per_lane: bytes,
                lanes: &self.lane_buf,
                addresses: &self.addr_buf,
                issued_ns: self.now.at,
                round,
            });
        }
    }

    fn oob(&self, region: Region, lane: usize, addr: usize, n: usize, len: usize) -> SimError {
        SimError::OutOfBounds {
            shader: self.k.name.clone(),
            detail: format!(
                "bytes {addr}..{} of {} which holds {len}, workgroup {:?} lane {lane}",
                addr + n,
                self.region_name(region),
                self.wid
            ),
        }
    }

    /// Load `leaves` at each active lane's offset, one traced request per leaf.
    pub(super) fn load(
        &mut self,
        region: Region,
        offs: &[u32],
        leaves: &[Leaf],
        active: &[bool],
        access: Access,
    ) -> Result<Vec<u32>, SimError> {
        self.load_traced_at(region, offs, offs, leaves, active, access)
    }

    /// [`Self::load`], each request traced at `traced` instead: where the device keeps
    /// what the region holds at `offs` (a texel of a tiled image).
    #[expect(
        clippy::cast_possible_truncation,
        reason = "a leaf's bytes: at most 4 components of 8 bytes"
    )]
    pub(super) fn load_traced_at(
        &mut self,
        region: Region,
        offs: &[u32],
        traced: &[u32],
        leaves: &[Leaf],
        active: &[bool],
        access: Access,
    ) -> Result<Vec<u32>, SimError> {
        let l = self.lanes;
        let ncomp: usize = leaves.iter().map(|x| x.comps as usize).sum();
        let mut out = vec![0u32; ncomp * l];
        let mut c0 = 0usize;
        for leaf in leaves {
            self.stats.lane_ops += l as u64;
            let n = (leaf.comps * leaf.width) as usize;
            self.trace(region, access, n as u32, traced, leaf.offset, active);
            let buf = self.buf(region)?;
            for lane in 0..l {
                if !active[lane] {
                    continue;
                }
                let a = offs[lane] as usize + leaf.offset as usize;
                let Some(bytes) = buf.get(a..a + n) else {
                    return Err(self.oob(region, lane, a, n, buf.len()));
                };
                if leaf.width == 4 {
                    for (c, w) in bytes.chunks_exact(4).enumerate() {
                        out[(c0 + c) * l + lane] = u32::from_le_bytes([w[0], w[1], w[2], w[3]]);
                    }
                } else {
                    for (c, &x) in bytes.iter().enumerate() {
                        out[(c0 + c) * l + lane] = u32::from(x != 0);
                    }
                }
            }
            c0 += leaf.comps as usize;
        }
        Ok(out)
    }

    /// Store `value` into `leaves` at each active lane's offset, one traced request per
    /// leaf.
    #[expect(
        clippy::cast_possible_truncation,
        reason = "a leaf's bytes: at most 4 components of 8 bytes"
    )]
    pub(super) fn store(
        &mut self,
        region: Region,
        offs: &[u32],
        leaves: &[Leaf],
        active: &[bool],
        value: &[u32],
    ) -> Result<(), SimError> {
        let l = self.lanes;
        let mut c0 = 0usize;
        for leaf in leaves {
            self.stats.lane_ops += l as u64;
            let n = (leaf.comps * leaf.width) as usize;
            self.trace(region, Access::Write, n as u32, offs, leaf.offset, active);
            let len = self.buf(region)?.len();
            let at = |lane: usize| offs[lane] as usize + leaf.offset as usize;
            // The lanes before the first out of bounds store, as in lane order.
            let outside = (0..l).find(|&lane| active[lane] && at(lane) + n > len);
            let buf = self.buf_mut(region)?;
            for lane in 0..outside.unwrap_or(l) {
                if !active[lane] {
                    continue;
                }
                let a = at(lane);
                for c in 0..leaf.comps as usize {
                    let x = value[(c0 + c) * l + lane];
                    if leaf.width == 4 {
                        buf[a + 4 * c..a + 4 * c + 4].copy_from_slice(&x.to_le_bytes());
                    } else {
                        buf[a + c] = u8::from(x != 0);
                    }
                }
            }
            if let Some(lane) = outside {
                return Err(self.oob(region, lane, at(lane), n, len));
            }
            c0 += leaf.comps as usize;
        }
        Ok(())
    }

    /// An atomic read-modify-write by each active lane in lane order; returns the old
    /// values (then, for a compare-exchange, whether each lane exchanged).
    #[expect(clippy::too_many_arguments, reason = "one atomic statement, unpacked")]
    pub(super) fn atomic(
        &mut self,
        region: Region,
        offs: &[u32],
        active: &[bool],
        fun: &naga::AtomicFunction,
        kind: K,
        v: &[u32],
        cmp: Option<&[u32]>,
    ) -> Result<Vec<u32>, SimError> {
        use naga::AtomicFunction as A;
        let l = self.lanes;
        self.stats.lane_ops += l as u64;
        self.trace(region, Access::Atomic, 4, offs, 0, active);
        let len = self.buf(region)?.len();
        let mut out = vec![0u32; if cmp.is_some() { 2 * l } else { l }];
        for lane in 0..l {
            if !active[lane] {
                continue;
            }
            let a = offs[lane] as usize;
            if a + 4 > len {
                return Err(self.oob(region, lane, a, 4, len));
            }
            let buf = self.buf_mut(region)?;
            let old = u32::from_le_bytes([buf[a], buf[a + 1], buf[a + 2], buf[a + 3]]);
            let x = v[lane];
            let new = match *fun {
                A::Add => old.wrapping_add(x),
                A::Subtract => old.wrapping_sub(x),
                A::And => old & x,
                A::InclusiveOr => old | x,
                A::ExclusiveOr => old ^ x,
                A::Min if kind == K::I => (old as i32).min(x as i32) as u32,
                A::Min => old.min(x),
                A::Max if kind == K::I => (old as i32).max(x as i32) as u32,
                A::Max => old.max(x),
                A::Exchange { compare: None } => x,
                A::Exchange { compare: Some(_) } => {
                    let c = cmp.map_or(old, |c| c[lane]);
                    out[l + lane] = b(old == c);
                    if old == c { x } else { old }
                }
            };
            buf[a..a + 4].copy_from_slice(&new.to_le_bytes());
            out[lane] = old;
        }
        Ok(out)
    }
}

/// Write constant components `v` (component `c` at `index(c)`) into `mem` at `base`.
pub(super) fn write_leaves(
    mem: &mut [u8],
    base: usize,
    leaves: &[Leaf],
    v: &[u32],
    index: impl Fn(usize) -> usize,
) {
    let mut c0 = 0usize;
    for leaf in leaves {
        for c in 0..leaf.comps as usize {
            let x = v.get(index(c0 + c)).copied().unwrap_or(0);
            let a = base + leaf.offset as usize + c * leaf.width as usize;
            if leaf.width == 4 {
                if let Some(d) = mem.get_mut(a..a + 4) {
                    d.copy_from_slice(&x.to_le_bytes());
                }
            } else if let Some(d) = mem.get_mut(a) {
                *d = u8::from(x != 0);
            }
        }
        c0 += leaf.comps as usize;
    }
}
