//! Lock-step interpreter of naga IR for WGSL compute kernels that traces every memory
//! request.
//!
//! Why an interpreter of the IR rather than a hand-written model of each kernel: the
//! simulator must explain the measurement of the very WGSL that ran on the GPU, so it
//! loads the shader exactly as the GPU path does (parse, validate, resolve `override`s)
//! and executes that.
//!
//! Execution model:
//! - One workgroup at a time; all its invocations ("lanes", indexed by
//!   `local_invocation_index`) advance in lock-step. Every expression is evaluated for
//!   all lanes at once into a per-lane vector; control flow keeps an active mask, so
//!   `if`/`switch`/`loop`/`break`/`continue`/`return` only change which lanes are active.
//!   WGSL's uniformity rules put barriers in uniform control flow, so lock-step meets
//!   them trivially (a barrier reached by only part of the workgroup is an error).
//! - Values are flattened into 32-bit components (u32, i32, f32 as bits, bool as 0/1):
//!   component `c` of lane `l` lives at `c * lanes + l`. Vectors, arrays and structs are
//!   their components concatenated, so `Compose` is concatenation.
//! - Memory is bytes laid out as naga lays them out (struct member offsets, array
//!   strides from the IR, sizes from `proc::Layouter`). Pointers are a region plus a
//!   byte offset per lane; function and private variables get one slot per lane.
//! - Subgroups are groups of `subgroup_size` consecutive lanes.
//!
//! Tracing: every load and store to storage, uniform or workgroup memory becomes one
//! [`Request`] per subgroup with at least one active lane, in program order. A scalar or
//! vector access is one request (`vec4<f32>`: 16 bytes per lane); a load or store of a
//! struct, array or matrix is split into its scalar/vector leaves (matrix: per column),
//! one request per leaf in layout order. Atomics are one request with
//! [`Access::Atomic`] (a read-modify-write); `atomicLoad`/`atomicStore` are plain
//! [`Access::Read`]/[`Access::Write`]. Function and private memory is not traced.
//!
//! Not supported, each a [`SimError::Unsupported`] naming the construct: textures and
//! samplers, f16/f64/i64/u64, matrix products (matrices only load, store and combine
//! component-wise), pack/unpack and a few other math functions, derivatives, ray
//! queries, cooperative matrices, and a workgroup barrier reached by part of the
//! workgroup.

use std::ops::Range;

use naga::{
    AddressSpace, ArraySize, BinaryOperator as Bo, Block, Expression, Function, Handle, Literal,
    MathFunction as Mf, Module, ScalarKind, Statement, Type, TypeInner, UnaryOperator,
    valid::FunctionInfo,
};

/// Everything that can go wrong loading or running a kernel. Each message names the
/// shader, and for unsupported input the naga construct, so a failure points at code.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    #[error("{shader}: WGSL parse error: {message}")]
    Parse { shader: String, message: String },
    #[error("{shader}: validation error: {message}")]
    Validate { shader: String, message: String },
    #[error("{shader}: override error: {message}")]
    Override { shader: String, message: String },
    #[error("{shader}: no compute entry point named `{entry}`")]
    NoEntryPoint { shader: String, entry: String },
    #[error("{shader}: unsupported by the simulator: {construct}")]
    Unsupported { shader: String, construct: String },
    #[error("{shader}: no buffer bound at @group({group}) @binding({binding})")]
    MissingBinding {
        shader: String,
        group: u32,
        binding: u32,
    },
    #[error("{shader}: out-of-bounds access (a bug in the benchmark): {detail}")]
    OutOfBounds { shader: String, detail: String },
    #[error("{shader}: bad launch: {detail}")]
    Launch { shader: String, detail: String },
    #[error("{shader}: {detail}")]
    Runtime { shader: String, detail: String },
}

/// Memory space of a traced request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Space {
    Storage,
    Uniform,
    Workgroup,
}

/// Direction of a traced request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Access {
    Read,
    Write,
    /// A read-modify-write atomic (atomicAdd, atomicExchange, ...): one request that
    /// both reads and writes each lane's address.
    Atomic,
}

/// What a request addresses: a bound buffer, or a `var<workgroup>` by its index among
/// the module's workgroup variables in declaration order ([`Kernel::workgroup_vars`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Target {
    Binding { group: u32, binding: u32 },
    Workgroup { var: u32 },
}

/// One memory request of one subgroup. Borrowed slices keep the stream allocation-free.
#[derive(Debug)]
pub struct Request<'a> {
    pub workgroup: [u32; 3],
    /// Subgroup index within the workgroup (`local_invocation_index / subgroup_size`).
    pub subgroup: u32,
    pub space: Space,
    pub target: Target,
    pub access: Access,
    pub bytes_per_lane: u32,
    /// Active lanes, as `subgroup_invocation_id`, ascending.
    pub lanes: &'a [u32],
    /// Byte address of each active lane within the buffer or workgroup variable, in the
    /// order of `lanes`.
    pub addresses: &'a [u64],
}

/// Consumer of the request stream; requests are not stored, so memory stays flat as the
/// grid grows.
pub trait TraceSink {
    /// False lets the interpreter skip building requests altogether.
    fn enabled(&self) -> bool {
        true
    }
    fn request(&mut self, req: &Request<'_>);
}

/// The sink that wants nothing: run a kernel for its outputs only.
pub struct NoTrace;

impl TraceSink for NoTrace {
    fn enabled(&self) -> bool {
        false
    }
    fn request(&mut self, _req: &Request<'_>) {}
}

impl<F: FnMut(&Request<'_>)> TraceSink for F {
    fn request(&mut self, req: &Request<'_>) {
        self(req)
    }
}

/// A buffer bound at `@group(group) @binding(binding)`, as raw bytes (what the GPU sees).
#[derive(Clone, Debug)]
pub struct Binding {
    pub group: u32,
    pub binding: u32,
    pub data: Vec<u8>,
}

/// Which workgroups of a dispatch to run.
#[derive(Clone, Debug)]
pub struct Launch {
    /// The full dispatch grid; `num_workgroups` reads this even when only a window runs.
    pub num_workgroups: [u32; 3],
    /// Lanes per subgroup (32 NVIDIA, 64 some AMD, 8 lavapipe); 1..=128.
    pub subgroup_size: u32,
    /// Linear workgroup ids (`x + nx * (y + ny * z)`) to run, in order.
    pub workgroups: Range<u64>,
}

impl Launch {
    /// Every workgroup of the grid.
    pub fn all(num_workgroups: [u32; 3], subgroup_size: u32) -> Launch {
        let total = num_workgroups.iter().map(|&n| u64::from(n)).product();
        Launch {
            num_workgroups,
            subgroup_size,
            workgroups: 0..total,
        }
    }
}

/// Work done by a run, for cost accounting.
#[derive(Clone, Copy, Debug, Default)]
pub struct Stats {
    pub workgroups: u64,
    /// Lane-operations: each expression evaluated, each leaf loaded or stored and each
    /// atomic, times the lanes of the workgroup (inactive lanes included: lock-step
    /// evaluates expressions for all lanes and masks only side effects).
    pub lane_ops: u64,
    /// Requests handed to the sink (0 when the sink is not [`TraceSink::enabled`]).
    pub requests: u64,
}

/// Scalar kinds the interpreter computes with (all 32-bit but bool).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum K {
    U,
    I,
    F,
    B,
}

/// A scalar or vector at a byte offset: the unit of one traced access.
#[derive(Clone, Copy, Debug)]
struct Leaf {
    offset: u32,
    comps: u32,
    /// Bytes per component: 4, or 1 for bool in function/private/workgroup memory.
    width: u32,
}

#[derive(Clone, Debug)]
enum Pointee {
    Ty(Handle<Type>),
    Val(Leaf),
}

#[derive(Clone, Debug)]
struct ExprMeta {
    ncomp: u32,
    kind: K,
    ptr: Option<Pointee>,
}

/// A parsed, validated kernel with its overrides resolved, ready to run.
pub struct Kernel {
    name: String,
    module: Module,
    info: naga::valid::ModuleInfo,
    entry: usize,
    workgroup_size: [u32; 3],
    layouter: naga::proc::Layouter,
    /// Leaves of each type by handle index; `None` for runtime-sized or opaque types.
    type_leaves: Vec<Option<Vec<Leaf>>>,
    type_ncomp: Vec<u32>,
    fn_meta: Vec<Vec<ExprMeta>>,
    entry_meta: Vec<ExprMeta>,
    wg_vars: Vec<Handle<naga::GlobalVariable>>,
    private_vars: Vec<Handle<naga::GlobalVariable>>,
}

impl std::fmt::Debug for Kernel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Kernel")
            .field("name", &self.name)
            .field("workgroup_size", &self.workgroup_size)
            .finish_non_exhaustive()
    }
}

/// The variant name of an IR node from its `Debug` form ("ImageLoad { .. }" -> "ImageLoad").
fn variant<T: std::fmt::Debug>(x: &T) -> String {
    let s = format!("{x:?}");
    s.split(|c: char| !c.is_alphanumeric() && c != '_')
        .next()
        .unwrap_or_default()
        .to_string()
}

fn scalar_kind(s: naga::Scalar) -> Option<(K, u32)> {
    match (s.kind, s.width) {
        (ScalarKind::Uint, 4) => Some((K::U, 4)),
        (ScalarKind::Sint, 4) => Some((K::I, 4)),
        (ScalarKind::Float, 4) => Some((K::F, 4)),
        (ScalarKind::Bool, _) => Some((K::B, 1)),
        _ => None,
    }
}

fn matrix_column_stride(rows: naga::VectorSize, width: u32) -> u32 {
    match rows {
        naga::VectorSize::Bi => 2 * width,
        _ => 4 * width,
    }
}

/// Leaves of a type in layout order, or `None` if it has no fixed size or holds
/// something the interpreter does not model (images, f16, 64-bit, ...).
fn leaves_of(types: &naga::UniqueArena<Type>, inner: &TypeInner) -> Option<Vec<Leaf>> {
    Some(match *inner {
        TypeInner::Scalar(s) | TypeInner::Atomic(s) => {
            let (_, width) = scalar_kind(s)?;
            vec![Leaf {
                offset: 0,
                comps: 1,
                width,
            }]
        }
        TypeInner::Vector { size, scalar } => {
            let (_, width) = scalar_kind(scalar)?;
            vec![Leaf {
                offset: 0,
                comps: size as u32,
                width,
            }]
        }
        TypeInner::Matrix {
            columns,
            rows,
            scalar,
        } => {
            let (_, width) = scalar_kind(scalar)?;
            let stride = matrix_column_stride(rows, width);
            (0..columns as u32)
                .map(|c| Leaf {
                    offset: c * stride,
                    comps: rows as u32,
                    width,
                })
                .collect()
        }
        TypeInner::Array {
            base,
            size: ArraySize::Constant(n),
            stride,
        } => {
            let elem = leaves_of(types, &types[base].inner)?;
            // Huge fixed arrays (e.g. a sized storage buffer) are only ever indexed,
            // never loaded whole: don't spend memory listing their leaves.
            if elem.len() * n.get() as usize > MAX_LEAVES {
                return None;
            }
            let mut out = Vec::with_capacity(elem.len() * n.get() as usize);
            for i in 0..n.get() {
                out.extend(elem.iter().map(|l| Leaf {
                    offset: l.offset + i * stride,
                    ..*l
                }));
            }
            out
        }
        TypeInner::Struct { ref members, .. } => {
            let mut out = Vec::new();
            for m in members {
                let ml = leaves_of(types, &types[m.ty].inner)?;
                out.extend(ml.iter().map(|l| Leaf {
                    offset: l.offset + m.offset,
                    ..*l
                }));
            }
            out
        }
        _ => return None,
    })
}

/// Bound on the leaves listed for one type (a value of 64K scalars is already absurd).
const MAX_LEAVES: usize = 1 << 16;

fn ncomp_of(leaves: &Option<Vec<Leaf>>) -> u32 {
    leaves
        .as_ref()
        .map(|ls| ls.iter().map(|l| l.comps).sum())
        .unwrap_or(0)
}

impl Kernel {
    /// Load the kernel `name` (used in every error message) with entry point `main`.
    pub fn load(name: &str, wgsl: &str, overrides: &[(&str, f64)]) -> Result<Kernel, SimError> {
        Kernel::load_entry(name, wgsl, "main", overrides)
    }

    /// Load exactly as the GPU path does: parse, validate with every capability, resolve
    /// `override`s for the compute entry point `entry`.
    pub fn load_entry(
        name: &str,
        wgsl: &str,
        entry: &str,
        overrides: &[(&str, f64)],
    ) -> Result<Kernel, SimError> {
        use naga::valid::{Capabilities, ValidationFlags, Validator};
        let shader = name.to_string();
        let module = naga::front::wgsl::parse_str(wgsl).map_err(|e| SimError::Parse {
            shader: shader.clone(),
            message: e.emit_to_string(wgsl),
        })?;
        let info = Validator::new(ValidationFlags::all(), Capabilities::all())
            .validate(&module)
            .map_err(|e| SimError::Validate {
                shader: shader.clone(),
                message: e.emit_to_string(wgsl),
            })?;
        let mut constants = naga::back::PipelineConstants::default();
        for &(k, v) in overrides {
            constants.insert(k.to_string(), v);
        }
        let (module, info) = naga::back::pipeline_constants::process_overrides(
            &module,
            &info,
            Some((naga::ShaderStage::Compute, entry)),
            &constants,
        )
        .map_err(|e| SimError::Override {
            shader: shader.clone(),
            message: e.to_string(),
        })?;
        let (module, info) = (module.into_owned(), info.into_owned());
        let entry_index = module
            .entry_points
            .iter()
            .position(|ep| ep.name == entry && ep.stage == naga::ShaderStage::Compute)
            .ok_or_else(|| SimError::NoEntryPoint {
                shader: shader.clone(),
                entry: entry.to_string(),
            })?;
        let mut layouter = naga::proc::Layouter::default();
        layouter
            .update(module.to_ctx())
            .map_err(|e| SimError::Validate {
                shader: shader.clone(),
                message: e.to_string(),
            })?;
        let type_leaves: Vec<Option<Vec<Leaf>>> = module
            .types
            .iter()
            .map(|(_, t)| leaves_of(&module.types, &t.inner))
            .collect();
        let type_ncomp = type_leaves.iter().map(ncomp_of).collect();
        let mut kernel = Kernel {
            name: shader,
            workgroup_size: module.entry_points[entry_index].workgroup_size,
            entry: entry_index,
            layouter,
            type_leaves,
            type_ncomp,
            fn_meta: Vec::new(),
            entry_meta: Vec::new(),
            wg_vars: Vec::new(),
            private_vars: Vec::new(),
            module,
            info,
        };
        for (h, f) in kernel.module.functions.iter() {
            let m = kernel.metas(f, &kernel.info[h])?;
            kernel.fn_meta.push(m);
        }
        let ep = &kernel.module.entry_points[entry_index];
        kernel.entry_meta = kernel.metas(&ep.function, kernel.info.get_entry_point(entry_index))?;
        for (h, g) in kernel.module.global_variables.iter() {
            match g.space {
                AddressSpace::WorkGroup => kernel.wg_vars.push(h),
                AddressSpace::Private => kernel.private_vars.push(h),
                _ => {}
            }
        }
        Ok(kernel)
    }

    /// The kernel's name as given to [`Kernel::load`].
    pub fn name(&self) -> &str {
        &self.name
    }

    /// `@workgroup_size` after overrides.
    pub fn workgroup_size(&self) -> [u32; 3] {
        self.workgroup_size
    }

    /// Names of the `var<workgroup>`s; [`Target::Workgroup`]'s `var` indexes this.
    pub fn workgroup_vars(&self) -> Vec<String> {
        self.wg_vars
            .iter()
            .map(|&h| {
                self.module.global_variables[h]
                    .name
                    .clone()
                    .unwrap_or_default()
            })
            .collect()
    }

    fn unsupported(&self, construct: impl Into<String>) -> SimError {
        SimError::Unsupported {
            shader: self.name.clone(),
            construct: construct.into(),
        }
    }

    fn runtime(&self, detail: impl Into<String>) -> SimError {
        SimError::Runtime {
            shader: self.name.clone(),
            detail: detail.into(),
        }
    }

    fn metas(&self, f: &Function, fi: &FunctionInfo) -> Result<Vec<ExprMeta>, SimError> {
        let types = &self.module.types;
        let mut out = Vec::with_capacity(f.expressions.len());
        for (h, _) in f.expressions.iter() {
            let inner = fi[h].ty.inner_with(types);
            let scalar_meta = |s: naga::Scalar| {
                scalar_kind(s)
                    .map(|(k, _)| k)
                    .ok_or_else(|| self.unsupported(format!("scalar type {s:?}")))
            };
            let m = match *inner {
                TypeInner::Scalar(s) | TypeInner::Atomic(s) => ExprMeta {
                    ncomp: 1,
                    kind: scalar_meta(s)?,
                    ptr: None,
                },
                TypeInner::Vector { size, scalar } => ExprMeta {
                    ncomp: size as u32,
                    kind: scalar_meta(scalar)?,
                    ptr: None,
                },
                TypeInner::Matrix {
                    columns,
                    rows,
                    scalar,
                } => ExprMeta {
                    ncomp: columns as u32 * rows as u32,
                    kind: scalar_meta(scalar)?,
                    ptr: None,
                },
                TypeInner::Pointer { base, .. } => ExprMeta {
                    ncomp: 0,
                    kind: K::U,
                    ptr: Some(Pointee::Ty(base)),
                },
                TypeInner::ValuePointer { size, scalar, .. } => {
                    let (_, width) = scalar_kind(scalar)
                        .ok_or_else(|| self.unsupported(format!("scalar type {scalar:?}")))?;
                    ExprMeta {
                        ncomp: 0,
                        kind: scalar_meta(scalar)?,
                        ptr: Some(Pointee::Val(Leaf {
                            offset: 0,
                            comps: size.map_or(1, |s| s as u32),
                            width,
                        })),
                    }
                }
                TypeInner::Array { .. } | TypeInner::Struct { .. } => ExprMeta {
                    ncomp: ncomp_of(&leaves_of(types, inner)),
                    kind: K::U,
                    ptr: None,
                },
                // Opaque handles (textures, samplers, ...): an error if ever evaluated.
                _ => ExprMeta {
                    ncomp: 0,
                    kind: K::U,
                    ptr: None,
                },
            };
            out.push(m);
        }
        Ok(out)
    }

    /// Components of a constant expression in `global_expressions`.
    fn const_value(&self, h: Handle<Expression>) -> Result<Vec<u32>, SimError> {
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

    fn literal(&self, lit: Literal) -> Result<u32, SimError> {
        Ok(match lit {
            Literal::F32(x) => x.to_bits(),
            Literal::U32(x) => x,
            Literal::I32(x) => x as u32,
            Literal::Bool(b) => u32::from(b),
            other => return Err(self.unsupported(format!("Literal::{}", variant(&other)))),
        })
    }
}

/// Where a pointer points. Binding slots index the `bindings` slice of [`run`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Region {
    Buf(u32, Space),
    Wg(u32),
    Private(u32),
    Local(u32),
}

#[derive(Clone, Debug)]
enum Value {
    Data(Vec<u32>),
    Ptr(Region, Vec<u32>),
}

enum Construct {
    Loop { brk: Vec<bool>, cont: Vec<bool> },
    Switch { brk: Vec<bool> },
}

struct Frame<'k> {
    fun: &'k Function,
    fi: &'k FunctionInfo,
    meta: &'k [ExprMeta],
    vals: Vec<Option<Value>>,
    args: Vec<Value>,
    active: Vec<bool>,
    constructs: Vec<Construct>,
    ret: Vec<u32>,
    local_base: u32,
}

/// Bound on iterations of one loop, so a kernel that never terminates is an error.
const MAX_LOOP_ITERATIONS: u64 = 1 << 32;

/// Run the workgroups `launch.workgroups` of `kernel` over `bindings`, streaming
/// requests to `sink`. Buffers are updated in place, as on the GPU.
pub fn run(
    kernel: &Kernel,
    bindings: &mut [Binding],
    launch: &Launch,
    sink: &mut dyn TraceSink,
) -> Result<Stats, SimError> {
    let ws = kernel.workgroup_size;
    let lanes = ws.iter().map(|&n| n as usize).product::<usize>();
    let bad = |detail: String| SimError::Launch {
        shader: kernel.name.clone(),
        detail,
    };
    if lanes == 0 {
        return Err(bad("empty workgroup".into()));
    }
    let sg = launch.subgroup_size as usize;
    if !(1..=128).contains(&sg) {
        return Err(bad(format!(
            "subgroup size {sg} outside 1..=128 (a ballot holds 128 lanes)"
        )));
    }
    let nwg = launch.num_workgroups;
    let total: u64 = nwg.iter().map(|&n| u64::from(n)).product();
    if launch.workgroups.end > total {
        return Err(bad(format!(
            "workgroups {:?} beyond the grid of {total}",
            launch.workgroups
        )));
    }
    let m = &kernel.module;
    let mut slot_of = vec![None; m.global_variables.len()];
    for (h, g) in m.global_variables.iter() {
        let space = match g.space {
            AddressSpace::Storage { .. } => Space::Storage,
            AddressSpace::Uniform => Space::Uniform,
            _ => continue,
        };
        if let Some(rb) = g.binding
            && let Some(i) = bindings
                .iter()
                .position(|b| b.group == rb.group && b.binding == rb.binding)
        {
            slot_of[h.index()] = Some((i as u32, space));
        }
    }
    let wg_mem = kernel
        .wg_vars
        .iter()
        .map(|&h| vec![0u8; kernel.layouter[m.global_variables[h].ty].size as usize])
        .collect();
    let private_mem = kernel
        .private_vars
        .iter()
        .map(|&h| vec![0u8; kernel.layouter[m.global_variables[h].ty].to_stride() as usize * lanes])
        .collect();
    let trace = sink.enabled();
    let mut ex = Exec {
        k: kernel,
        bindings,
        slot_of,
        wg_mem,
        private_mem,
        local_mem: Vec::new(),
        sink,
        trace,
        lanes,
        sg,
        wid: [0; 3],
        nwg,
        lane_buf: Vec::with_capacity(sg),
        addr_buf: Vec::with_capacity(sg),
        stats: Stats::default(),
    };
    for id in launch.workgroups.clone() {
        let x = id % u64::from(nwg[0]);
        let y = (id / u64::from(nwg[0])) % u64::from(nwg[1]);
        let z = id / (u64::from(nwg[0]) * u64::from(nwg[1]));
        ex.wid = [x as u32, y as u32, z as u32];
        ex.workgroup()?;
        ex.stats.workgroups += 1;
    }
    Ok(ex.stats)
}

struct Exec<'k, 'r> {
    k: &'k Kernel,
    bindings: &'r mut [Binding],
    slot_of: Vec<Option<(u32, Space)>>,
    wg_mem: Vec<Vec<u8>>,
    private_mem: Vec<Vec<u8>>,
    local_mem: Vec<Vec<u8>>,
    sink: &'r mut dyn TraceSink,
    trace: bool,
    lanes: usize,
    sg: usize,
    wid: [u32; 3],
    nwg: [u32; 3],
    lane_buf: Vec<u32>,
    addr_buf: Vec<u64>,
    stats: Stats,
}

fn any(mask: &[bool]) -> bool {
    mask.iter().any(|&b| b)
}

fn f(x: u32) -> f32 {
    f32::from_bits(x)
}

fn b(x: bool) -> u32 {
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

impl<'k> Exec<'k, '_> {
    fn err_unsupported(&self, what: impl Into<String>) -> SimError {
        self.k.unsupported(what)
    }

    fn workgroup(&mut self) -> Result<(), SimError> {
        let k = self.k;
        let m = &k.module;
        let l = self.lanes;
        for mem in &mut self.wg_mem {
            mem.fill(0);
        }
        // Private variables: one slot per lane, initialised per invocation.
        for (i, &h) in k.private_vars.iter().enumerate() {
            let g = &m.global_variables[h];
            let stride = k.layouter[g.ty].to_stride() as usize;
            let init = match g.init {
                Some(e) => Some(k.const_value(e)?),
                None => None,
            };
            let leaves = k.type_leaves[g.ty.index()]
                .as_deref()
                .ok_or_else(|| k.unsupported("var<private> of unsized type"))?;
            let Some(mem) = self.private_mem.get_mut(i) else {
                continue;
            };
            mem.fill(0);
            if let Some(init) = init {
                for lane in 0..l {
                    write_leaves(mem, lane * stride, leaves, &init, |c| c);
                }
            }
        }
        let ep = &m.entry_points[k.entry];
        let mut args = Vec::with_capacity(ep.function.arguments.len());
        for a in &ep.function.arguments {
            args.push(self.entry_arg(a.binding.as_ref(), a.ty)?);
        }
        let fi = k.info.get_entry_point(k.entry);
        self.call(&ep.function, fi, &k.entry_meta, args, vec![true; l])?;
        Ok(())
    }

    fn entry_arg(
        &self,
        binding: Option<&naga::Binding>,
        ty: Handle<Type>,
    ) -> Result<Value, SimError> {
        let k = self.k;
        match binding {
            Some(naga::Binding::BuiltIn(bi)) => self.builtin(*bi).map(Value::Data),
            Some(other) => Err(k.unsupported(format!("entry argument binding {other:?}"))),
            None => match k.module.types[ty].inner {
                TypeInner::Struct { ref members, .. } => {
                    let mut out = Vec::new();
                    for mb in members {
                        match self.entry_arg(mb.binding.as_ref(), mb.ty)? {
                            Value::Data(d) => out.extend(d),
                            Value::Ptr(..) => {
                                return Err(k.unsupported("pointer entry argument"));
                            }
                        }
                    }
                    Ok(Value::Data(out))
                }
                _ => Err(k.unsupported("entry argument without binding")),
            },
        }
    }

    fn builtin(&self, bi: naga::BuiltIn) -> Result<Vec<u32>, SimError> {
        use naga::BuiltIn as B;
        let l = self.lanes;
        let ws = self.k.workgroup_size;
        let lid = |lane: usize, c: usize| -> u32 {
            let lane = lane as u32;
            match c {
                0 => lane % ws[0],
                1 => (lane / ws[0]) % ws[1],
                _ => lane / (ws[0] * ws[1]),
            }
        };
        let per_lane3 = |g: &dyn Fn(usize, usize) -> u32| -> Vec<u32> {
            (0..3)
                .flat_map(|c| (0..l).map(move |lane| (c, lane)))
                .map(|(c, lane)| g(lane, c))
                .collect()
        };
        let wid = self.wid;
        let nwg = self.nwg;
        let sg = self.sg as u32;
        Ok(match bi {
            B::LocalInvocationId => per_lane3(&lid),
            B::LocalInvocationIndex => (0..l as u32).collect(),
            B::GlobalInvocationId => {
                per_lane3(&|lane, c| wid[c].wrapping_mul(ws[c]).wrapping_add(lid(lane, c)))
            }
            B::WorkGroupId => per_lane3(&|_, c| wid[c]),
            B::NumWorkGroups => per_lane3(&|_, c| nwg[c]),
            B::WorkGroupSize => per_lane3(&|_, c| ws[c]),
            B::SubgroupSize => vec![sg; l],
            B::SubgroupInvocationId => (0..l as u32).map(|i| i % sg).collect(),
            B::SubgroupId => (0..l as u32).map(|i| i / sg).collect(),
            B::NumSubgroups => vec![(l as u32).div_ceil(sg); l],
            other => return Err(self.err_unsupported(format!("BuiltIn::{other:?}"))),
        })
    }

    /// Run `fun` for the lanes in `active`; returns the per-lane return value.
    fn call(
        &mut self,
        fun: &'k Function,
        fi: &'k FunctionInfo,
        meta: &'k [ExprMeta],
        args: Vec<Value>,
        active: Vec<bool>,
    ) -> Result<Vec<u32>, SimError> {
        let k = self.k;
        let l = self.lanes;
        let local_base = self.local_mem.len() as u32;
        for (_, lv) in fun.local_variables.iter() {
            let size = k.layouter[lv.ty].to_stride() as usize * l;
            self.local_mem.push(vec![0u8; size]);
        }
        let ret_n = fun
            .result
            .as_ref()
            .map_or(0, |r| k.type_ncomp[r.ty.index()] as usize);
        let mut fr = Frame {
            fun,
            fi,
            meta,
            vals: vec![None; fun.expressions.len()],
            args,
            active,
            constructs: Vec::new(),
            ret: vec![0; ret_n * l],
            local_base,
        };
        // Local initialisers are constant expressions: store them for every lane.
        for (i, (_, lv)) in fun.local_variables.iter().enumerate() {
            if let Some(init) = lv.init {
                self.ensure(&mut fr, init)?;
                let Some(Value::Data(v)) = &fr.vals[init.index()] else {
                    return Err(k.runtime("local initialiser is not a value"));
                };
                let stride = k.layouter[lv.ty].to_stride() as usize;
                let leaves = k.type_leaves[lv.ty.index()]
                    .as_deref()
                    .ok_or_else(|| k.unsupported("local variable of unsized type"))?;
                if let Some(mem) = self.local_mem.get_mut(local_base as usize + i) {
                    for lane in 0..l {
                        write_leaves(mem, lane * stride, leaves, v, |c| c * l + lane);
                    }
                }
            }
        }
        let r = self.block(&mut fr, &fun.body);
        self.local_mem.truncate(local_base as usize);
        r?;
        Ok(fr.ret)
    }

    fn ensure(&mut self, fr: &mut Frame<'k>, h: Handle<Expression>) -> Result<(), SimError> {
        if fr.vals[h.index()].is_none() {
            self.eval(fr, h)?;
        }
        Ok(())
    }

    fn data<'f>(&self, fr: &'f Frame<'k>, h: Handle<Expression>) -> Result<&'f [u32], SimError> {
        match fr.vals.get(h.index()) {
            Some(Some(Value::Data(d))) => Ok(d),
            _ => Err(self.k.runtime(format!(
                "expression {h:?} used as a value before it was set"
            ))),
        }
    }

    fn ptr<'f>(
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

    fn leaves_of_ptr(&self, meta: &'k ExprMeta) -> Result<&'k [Leaf], SimError> {
        let k = self.k;
        match &meta.ptr {
            Some(Pointee::Val(leaf)) => Ok(std::slice::from_ref(leaf)),
            Some(Pointee::Ty(t)) => k.type_leaves[t.index()]
                .as_deref()
                .ok_or_else(|| k.unsupported("load or store of a runtime-sized or opaque type")),
            None => Err(k.runtime("not a pointer")),
        }
    }

    fn broadcast(&self, comps: &[u32]) -> Vec<u32> {
        let l = self.lanes;
        let mut out = Vec::with_capacity(comps.len() * l);
        for &c in comps {
            out.extend(std::iter::repeat_n(c, l));
        }
        out
    }

    fn eval(&mut self, fr: &mut Frame<'k>, h: Handle<Expression>) -> Result<(), SimError> {
        let k = self.k;
        let fun = fr.fun;
        let l = self.lanes;
        self.stats.lane_ops += l as u64;
        let meta = &fr.meta[h.index()];
        let v = match fun.expressions[h] {
            Expression::Literal(lit) => Value::Data(vec![k.literal(lit)?; l]),
            Expression::Constant(c) => {
                Value::Data(self.broadcast(&k.const_value(k.module.constants[c].init)?))
            }
            Expression::ZeroValue(_) => Value::Data(vec![0; meta.ncomp as usize * l]),
            Expression::Compose { ref components, .. } => {
                let mut out = Vec::with_capacity(meta.ncomp as usize * l);
                for &c in components {
                    self.ensure(fr, c)?;
                    out.extend_from_slice(self.data(fr, c)?);
                }
                Value::Data(out)
            }
            Expression::Splat { size, value } => {
                self.ensure(fr, value)?;
                Value::Data(self.data(fr, value)?.repeat(size as usize))
            }
            Expression::Swizzle {
                size,
                vector,
                pattern,
            } => {
                self.ensure(fr, vector)?;
                let v = self.data(fr, vector)?;
                let mut out = Vec::with_capacity(size as usize * l);
                for &p in &pattern[..size as usize] {
                    let c = p as usize;
                    out.extend_from_slice(&v[c * l..(c + 1) * l]);
                }
                Value::Data(out)
            }
            Expression::FunctionArgument(i) => fr
                .args
                .get(i as usize)
                .cloned()
                .ok_or_else(|| k.runtime("missing function argument"))?,
            Expression::GlobalVariable(g) => self.global_ptr(g)?,
            Expression::LocalVariable(lv) => {
                let stride = k.layouter[fun.local_variables[lv].ty].to_stride();
                Value::Ptr(
                    Region::Local(fr.local_base + lv.index() as u32),
                    (0..l as u32).map(|i| i * stride).collect(),
                )
            }
            Expression::Load { pointer } => {
                self.ensure(fr, pointer)?;
                let leaves = self.leaves_of_ptr(&fr.meta[pointer.index()])?;
                let (region, offs) = self.ptr(fr, pointer)?;
                Value::Data(self.load(region, offs, leaves, &fr.active, Access::Read)?)
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
            Expression::Unary { op, expr } => {
                self.ensure(fr, expr)?;
                let a = self.data(fr, expr)?;
                let kind = fr.meta[expr.index()].kind;
                Value::Data(match (op, kind) {
                    (UnaryOperator::Negate, K::F) => funary(a, |x| -x),
                    (UnaryOperator::Negate, _) => a.iter().map(|&x| x.wrapping_neg()).collect(),
                    (UnaryOperator::LogicalNot, _) => a.iter().map(|&x| x ^ 1).collect(),
                    (UnaryOperator::BitwiseNot, _) => a.iter().map(|&x| !x).collect(),
                })
            }
            Expression::Binary { op, left, right } => {
                self.ensure(fr, left)?;
                self.ensure(fr, right)?;
                let kind = fr.meta[left.index()].kind;
                let a = self.data(fr, left)?;
                let bv = self.data(fr, right)?;
                Value::Data(self.binary(op, kind, a, bv)?)
            }
            Expression::Select {
                condition,
                accept,
                reject,
            } => {
                self.ensure(fr, condition)?;
                self.ensure(fr, accept)?;
                self.ensure(fr, reject)?;
                let c = self.data(fr, condition)?;
                let a = self.data(fr, accept)?;
                let r = self.data(fr, reject)?;
                let n = a.len().max(r.len());
                Value::Data(
                    (0..n)
                        .map(|i| {
                            if pick(c, i, l) != 0 {
                                pick(a, i, l)
                            } else {
                                pick(r, i, l)
                            }
                        })
                        .collect(),
                )
            }
            Expression::Relational { fun: rf, argument } => {
                self.ensure(fr, argument)?;
                let a = self.data(fr, argument)?;
                use naga::RelationalFunction as R;
                Value::Data(match rf {
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
                })
            }
            Expression::Math {
                fun: mf,
                arg,
                arg1,
                arg2,
                arg3,
            } => {
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
                Value::Data(self.math(mf, kind, a, a1, a2, a3)?)
            }
            Expression::As {
                expr,
                kind: to,
                convert,
            } => {
                self.ensure(fr, expr)?;
                let from = fr.meta[expr.index()].kind;
                let a = self.data(fr, expr)?;
                Value::Data(self.cast(a, from, to, convert)?)
            }
            Expression::ArrayLength(p) => {
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
                Value::Data(vec![n as u32; l])
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
        fr.vals[h.index()] = Some(v);
        Ok(())
    }

    fn global_ptr(&self, g: Handle<naga::GlobalVariable>) -> Result<Value, SimError> {
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
    fn buf(&self, r: Region) -> Result<&[u8], SimError> {
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

    /// `base[index]` for a pointer or a value; `dynamic` is the index expression, else
    /// `index` is the constant one.
    fn access(
        &mut self,
        fr: &mut Frame<'k>,
        base: Handle<Expression>,
        dynamic: Option<Handle<Expression>>,
        index: u32,
    ) -> Result<Value, SimError> {
        let k = self.k;
        let l = self.lanes;
        let types = &k.module.types;
        let idx: Vec<u32> = match dynamic {
            Some(d) => self.data(fr, d)?.to_vec(),
            None => Vec::new(),
        };
        let idx_at = |lane: usize| -> u32 { if dynamic.is_some() { idx[lane] } else { index } };
        if let Some(pointee) = &fr.meta[base.index()].ptr {
            // Pointer: advance each lane's byte offset.
            let (region, offs) = self.ptr(fr, base)?;
            let (stride, len, what): (u32, Option<u64>, &str) = match pointee {
                Pointee::Val(leaf) => (leaf.width, Some(u64::from(leaf.comps)), "vector"),
                Pointee::Ty(t) => match types[*t].inner {
                    TypeInner::Struct { ref members, .. } => {
                        let off = members
                            .get(index as usize)
                            .map(|m| m.offset)
                            .ok_or_else(|| k.runtime("struct member out of range"))?;
                        let offs = offs.iter().map(|&o| o.wrapping_add(off)).collect();
                        return Ok(Value::Ptr(region, offs));
                    }
                    TypeInner::Array { size, stride, .. } => match size {
                        ArraySize::Constant(n) => (stride, Some(u64::from(n.get())), "array"),
                        _ => (stride, None, "runtime-sized array"),
                    },
                    TypeInner::Vector { size, scalar } => {
                        (u32::from(scalar.width), Some(size as u64), "vector")
                    }
                    TypeInner::Matrix {
                        columns,
                        rows,
                        scalar,
                    } => (
                        matrix_column_stride(rows, u32::from(scalar.width)),
                        Some(columns as u64),
                        "matrix",
                    ),
                    ref other => {
                        return Err(k.unsupported(format!(
                            "indexing a pointer to TypeInner::{}",
                            variant(other)
                        )));
                    }
                },
            };
            let buf_len = self.buf(region)?.len() as u64;
            let mut out = Vec::with_capacity(l);
            for (lane, &o) in offs.iter().enumerate() {
                let i = idx_at(lane);
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
            return Ok(Value::Ptr(region, out));
        }
        // Value: select components.
        let inner = fr.fi[base].ty.inner_with(types);
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
        if dynamic.is_none() {
            let s = index as usize * elem;
            return Ok(Value::Data(v[s * l..(s + elem) * l].to_vec()));
        }
        let mut out = vec![0u32; elem * l];
        for lane in 0..l {
            let i = idx_at(lane) as usize;
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

    /// Emit one request per subgroup with an active lane.
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
        let (space, target) = match region {
            Region::Buf(slot, space) => {
                let Some(bd) = self.bindings.get(slot as usize) else {
                    return;
                };
                (
                    space,
                    Target::Binding {
                        group: bd.group,
                        binding: bd.binding,
                    },
                )
            }
            Region::Wg(v) => (Space::Workgroup, Target::Workgroup { var: v }),
            _ => return,
        };
        let l = self.lanes;
        let sg = self.sg;
        for s in 0..l.div_ceil(sg) {
            self.lane_buf.clear();
            self.addr_buf.clear();
            for lane in s * sg..((s + 1) * sg).min(l) {
                if active[lane] {
                    self.lane_buf.push((lane - s * sg) as u32);
                    self.addr_buf.push(u64::from(offs[lane]) + u64::from(extra));
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

    fn load(
        &mut self,
        region: Region,
        offs: &[u32],
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
            self.trace(region, access, n as u32, offs, leaf.offset, active);
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

    fn store(
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
            for lane in 0..l {
                if !active[lane] {
                    continue;
                }
                let a = offs[lane] as usize + leaf.offset as usize;
                if a + n > len {
                    return Err(self.oob(region, lane, a, n, len));
                }
                let buf = self.buf_mut(region)?;
                for c in 0..leaf.comps as usize {
                    let x = value[(c0 + c) * l + lane];
                    if leaf.width == 4 {
                        buf[a + 4 * c..a + 4 * c + 4].copy_from_slice(&x.to_le_bytes());
                    } else {
                        buf[a + c] = u8::from(x != 0);
                    }
                }
            }
            c0 += leaf.comps as usize;
        }
        Ok(())
    }

    fn binary(&self, op: Bo, kind: K, a: &[u32], bv: &[u32]) -> Result<Vec<u32>, SimError> {
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

    fn cast(
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

    fn math(
        &self,
        mf: Mf,
        kind: K,
        a: &[u32],
        a1: &[u32],
        a2: &[u32],
        a3: &[u32],
    ) -> Result<Vec<u32>, SimError> {
        let l = self.lanes;
        let i = |x: u32| x as i32;
        let per_lane_sum = |v: Vec<u32>, add: fn(u32, u32) -> u32| -> Vec<u32> {
            let n = v.len() / l;
            (0..l)
                .map(|lane| (1..n).fold(v[lane], |acc, c| add(acc, v[c * l + lane])))
                .collect()
        };
        let fadd = |x: u32, y: u32| (f(x) + f(y)).to_bits();
        Ok(match (mf, kind) {
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
            (Mf::Saturate, K::F) => funary(a, |x| x.clamp(0.0, 1.0)),
            (Mf::Cos, K::F) => funary(a, f32::cos),
            (Mf::Sin, K::F) => funary(a, f32::sin),
            (Mf::Tan, K::F) => funary(a, f32::tan),
            (Mf::Cosh, K::F) => funary(a, f32::cosh),
            (Mf::Sinh, K::F) => funary(a, f32::sinh),
            (Mf::Tanh, K::F) => funary(a, f32::tanh),
            (Mf::Acos, K::F) => funary(a, f32::acos),
            (Mf::Asin, K::F) => funary(a, f32::asin),
            (Mf::Atan, K::F) => funary(a, f32::atan),
            (Mf::Acosh, K::F) => funary(a, f32::acosh),
            (Mf::Asinh, K::F) => funary(a, f32::asinh),
            (Mf::Atanh, K::F) => funary(a, f32::atanh),
            (Mf::Atan2, K::F) => fbinary(a, a1, l, f32::atan2),
            (Mf::Radians, K::F) => funary(a, f32::to_radians),
            (Mf::Degrees, K::F) => funary(a, f32::to_degrees),
            (Mf::Ceil, K::F) => funary(a, f32::ceil),
            (Mf::Floor, K::F) => funary(a, f32::floor),
            (Mf::Round, K::F) => funary(a, f32::round_ties_even),
            (Mf::Fract, K::F) => funary(a, |x| x - x.floor()),
            (Mf::Trunc, K::F) => funary(a, f32::trunc),
            (Mf::Exp, K::F) => funary(a, f32::exp),
            (Mf::Exp2, K::F) => funary(a, f32::exp2),
            (Mf::Log, K::F) => funary(a, f32::ln),
            (Mf::Log2, K::F) => funary(a, f32::log2),
            (Mf::Pow, K::F) => fbinary(a, a1, l, f32::powf),
            (Mf::Sqrt, K::F) => funary(a, f32::sqrt),
            (Mf::InverseSqrt, K::F) => funary(a, |x| 1.0 / x.sqrt()),
            (Mf::Step, K::F) => fbinary(a, a1, l, |e, x| if x >= e { 1.0 } else { 0.0 }),
            (Mf::Fma, K::F) => map3(a, a1, a2, l, |x, y, z| f(x).mul_add(f(y), f(z)).to_bits()),
            (Mf::Mix, K::F) => map3(a, a1, a2, l, |x, y, t| {
                (f(x) * (1.0 - f(t)) + f(y) * f(t)).to_bits()
            }),
            (Mf::SmoothStep, K::F) => map3(a, a1, a2, l, |e0, e1, x| {
                let t = ((f(x) - f(e0)) / (f(e1) - f(e0))).clamp(0.0, 1.0);
                (t * t * (3.0 - 2.0 * t)).to_bits()
            }),
            (Mf::Sign, K::F) => funary(a, |x| {
                if x == 0.0 || x.is_nan() {
                    x
                } else {
                    x.signum()
                }
            }),
            (Mf::Sign, K::I) => a.iter().map(|&x| i(x).signum() as u32).collect(),
            (Mf::Dot, K::F) => per_lane_sum(fbinary(a, a1, l, |x, y| x * y), fadd),
            (Mf::Dot, K::U | K::I) => {
                per_lane_sum(map2(a, a1, l, u32::wrapping_mul), u32::wrapping_add)
            }
            (Mf::Length, K::F) => funary(
                &per_lane_sum(fbinary(a, a, l, |x, y| x * y), fadd),
                f32::sqrt,
            ),
            (Mf::Distance, K::F) => {
                let d = fbinary(a, a1, l, |x, y| x - y);
                funary(
                    &per_lane_sum(fbinary(&d, &d, l, |x, y| x * y), fadd),
                    f32::sqrt,
                )
            }
            (Mf::Normalize, K::F) => {
                let len = funary(
                    &per_lane_sum(fbinary(a, a, l, |x, y| x * y), fadd),
                    f32::sqrt,
                );
                fbinary(a, &len, l, |x, y| x / y)
            }
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
            (Mf::CountOneBits, K::U | K::I) => a.iter().map(|&x| x.count_ones()).collect(),
            (Mf::CountLeadingZeros, K::U | K::I) => a.iter().map(|&x| x.leading_zeros()).collect(),
            (Mf::CountTrailingZeros, K::U | K::I) => {
                a.iter().map(|&x| x.trailing_zeros()).collect()
            }
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
            (Mf::InsertBits, K::U | K::I) => {
                let n = a.len();
                (0..n)
                    .map(|j| {
                        insert_bits(
                            pick(a, j, l),
                            pick(a1, j, l),
                            pick(a2, j, l),
                            pick(a3, j, l),
                        )
                    })
                    .collect()
            }
            (other, kind) => {
                return Err(self.err_unsupported(format!("MathFunction::{other:?} on {kind:?}")));
            }
        })
    }

    fn block(&mut self, fr: &mut Frame<'k>, block: &'k Block) -> Result<(), SimError> {
        for stmt in block.iter() {
            if !any(&fr.active) {
                break;
            }
            self.statement(fr, stmt)?;
        }
        Ok(())
    }

    fn statement(&mut self, fr: &mut Frame<'k>, stmt: &'k Statement) -> Result<(), SimError> {
        let k = self.k;
        let l = self.lanes;
        match *stmt {
            Statement::Emit(ref range) => {
                for h in range.clone() {
                    self.eval(fr, h)?;
                }
            }
            Statement::Block(ref b) => self.block(fr, b)?,
            Statement::If {
                condition,
                ref accept,
                ref reject,
            } => {
                self.ensure(fr, condition)?;
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
            }
            Statement::Switch {
                selector,
                ref cases,
            } => {
                self.ensure(fr, selector)?;
                let sel = self.data(fr, selector)?.to_vec();
                let saved = fr.active.clone();
                let value_of = |v: &naga::SwitchValue| match *v {
                    naga::SwitchValue::I32(x) => Some(x as u32),
                    naga::SwitchValue::U32(x) => Some(x),
                    naga::SwitchValue::Default => None,
                };
                let matches_any: Vec<bool> = sel
                    .iter()
                    .map(|&s| cases.iter().any(|c| value_of(&c.value) == Some(s)))
                    .collect();
                fr.constructs.push(Construct::Switch {
                    brk: vec![false; l],
                });
                let mut carry = vec![false; l];
                let mut exited = vec![false; l];
                for case in cases {
                    let want = value_of(&case.value);
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
                    _ => return Err(k.runtime("construct stack out of order")),
                };
                fr.active = (0..l).map(|i| exited[i] || brk[i] || carry[i]).collect();
            }
            Statement::Loop {
                ref body,
                ref continuing,
                break_if,
            } => {
                fr.constructs.push(Construct::Loop {
                    brk: vec![false; l],
                    cont: vec![false; l],
                });
                let mut iterations = 0u64;
                loop {
                    iterations += 1;
                    if iterations > MAX_LOOP_ITERATIONS {
                        return Err(k.runtime("loop ran 2^32 iterations: does it terminate?"));
                    }
                    self.block(fr, body)?;
                    if let Some(Construct::Loop { cont, .. }) = fr.constructs.last_mut() {
                        for (a, c) in fr.active.iter_mut().zip(cont.iter_mut()) {
                            *a |= *c;
                            *c = false;
                        }
                    }
                    self.block(fr, continuing)?;
                    if let Some(bi) = break_if
                        && any(&fr.active)
                    {
                        self.ensure(fr, bi)?;
                        let c = self.data(fr, bi)?.to_vec();
                        if let Some(Construct::Loop { brk, .. }) = fr.constructs.last_mut() {
                            for lane in 0..l {
                                if fr.active[lane] && c[lane] != 0 {
                                    brk[lane] = true;
                                    fr.active[lane] = false;
                                }
                            }
                        }
                    }
                    if !any(&fr.active) {
                        break;
                    }
                }
                match fr.constructs.pop() {
                    Some(Construct::Loop { brk, .. }) => fr.active = brk,
                    _ => return Err(k.runtime("construct stack out of order")),
                }
            }
            Statement::Break => {
                let active = std::mem::replace(&mut fr.active, vec![false; l]);
                match fr.constructs.last_mut() {
                    Some(Construct::Loop { brk, .. } | Construct::Switch { brk }) => {
                        for (x, a) in brk.iter_mut().zip(active) {
                            *x |= a;
                        }
                    }
                    None => return Err(k.runtime("break outside a loop or switch")),
                }
            }
            Statement::Continue => {
                let active = std::mem::replace(&mut fr.active, vec![false; l]);
                let cont = fr.constructs.iter_mut().rev().find_map(|c| match c {
                    Construct::Loop { cont, .. } => Some(cont),
                    Construct::Switch { .. } => None,
                });
                match cont {
                    Some(cont) => {
                        for (x, a) in cont.iter_mut().zip(active) {
                            *x |= a;
                        }
                    }
                    None => return Err(k.runtime("continue outside a loop")),
                }
            }
            Statement::Return { value } => {
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
            }
            Statement::ControlBarrier(flags) => {
                // Lock-step meets every barrier; one reached by part of the workgroup
                // would mean divergent control flow, which lock-step cannot honour.
                // A subgroup-only barrier needs no workgroup-wide check.
                if flags != naga::Barrier::SUB_GROUP && !fr.active.iter().all(|&a| a) {
                    return Err(k.unsupported(
                        "a barrier reached by only part of the workgroup (non-uniform control flow)",
                    ));
                }
            }
            Statement::MemoryBarrier(_) => {}
            Statement::Store { pointer, value } => {
                self.ensure(fr, pointer)?;
                self.ensure(fr, value)?;
                let leaves = self.leaves_of_ptr(&fr.meta[pointer.index()])?;
                let (region, offs) = self.ptr(fr, pointer)?;
                let v = self.data(fr, value)?;
                self.store(region, offs, leaves, &fr.active, v)?;
            }
            Statement::WorkGroupUniformLoad { pointer, result } => {
                if !fr.active.iter().all(|&a| a) {
                    return Err(k.unsupported(
                        "workgroupUniformLoad reached by only part of the workgroup",
                    ));
                }
                self.ensure(fr, pointer)?;
                let leaves = self.leaves_of_ptr(&fr.meta[pointer.index()])?;
                let (region, offs) = self.ptr(fr, pointer)?;
                let v = self.load(region, offs, leaves, &fr.active, Access::Read)?;
                fr.vals[result.index()] = Some(Value::Data(v));
            }
            Statement::Call {
                function,
                ref arguments,
                result,
            } => {
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
            }
            Statement::Atomic {
                pointer,
                ref fun,
                value,
                result,
            } => {
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
            }
            Statement::SubgroupBallot { result, predicate } => {
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
            }
            Statement::SubgroupCollectiveOperation {
                op,
                collective_op,
                argument,
                result,
            } => {
                self.ensure(fr, argument)?;
                let kind = fr.meta[argument.index()].kind;
                let (identity, comb) = reduction(kind, op).ok_or_else(|| {
                    k.unsupported(format!("SubgroupOperation::{op:?} on {kind:?}"))
                })?;
                let a = self.data(fr, argument)?;
                let n = a.len() / l;
                let sg = self.sg;
                let mut out = vec![0u32; a.len()];
                for c in 0..n {
                    for s in 0..l.div_ceil(sg) {
                        let lanes = s * sg..((s + 1) * sg).min(l);
                        let mut acc = identity;
                        if collective_op == naga::CollectiveOperation::Reduce {
                            for lane in lanes.clone() {
                                if fr.active[lane] {
                                    acc = comb(acc, a[c * l + lane]);
                                }
                            }
                            for lane in lanes {
                                out[c * l + lane] = acc;
                            }
                        } else {
                            for lane in lanes {
                                if !fr.active[lane] {
                                    continue;
                                }
                                let x = a[c * l + lane];
                                if collective_op == naga::CollectiveOperation::ExclusiveScan {
                                    out[c * l + lane] = acc;
                                    acc = comb(acc, x);
                                } else {
                                    acc = comb(acc, x);
                                    out[c * l + lane] = acc;
                                }
                            }
                        }
                    }
                }
                fr.vals[result.index()] = Some(Value::Data(out));
            }
            Statement::SubgroupGather {
                ref mode,
                argument,
                result,
            } => {
                use naga::GatherMode as G;
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
                    let first = (base..end).find(|&x| fr.active[x]);
                    for lane in base..end {
                        let me = (lane - base) as u32;
                        let i = idx[lane];
                        // Source subgroup_invocation_id; out of range keeps the lane's own
                        // value (as NVIDIA's shfl does); WGSL leaves it indeterminate.
                        let src: Option<usize> = match *mode {
                            G::BroadcastFirst => first.map(|x| x - base),
                            G::Broadcast(_) | G::Shuffle(_) => Some(i as usize),
                            G::ShuffleDown(_) => Some(me as usize + i as usize),
                            G::ShuffleUp(_) => me.checked_sub(i).map(|x| x as usize),
                            G::ShuffleXor(_) => Some((me ^ i) as usize),
                            G::QuadBroadcast(_) => Some((me & !3) as usize + i as usize),
                            G::QuadSwap(d) => Some((me ^ (d as u32 + 1)) as usize),
                        };
                        if let Some(src) = src
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
            }
            ref other => {
                return Err(k.unsupported(format!("Statement::{}", variant(other))));
            }
        }
        Ok(())
    }

    #[expect(clippy::too_many_arguments, reason = "one atomic statement, unpacked")]
    fn atomic(
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
fn write_leaves(
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
