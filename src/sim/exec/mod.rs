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
//!
//! Layout: this module holds the public API, the interpreter's state and the run loop
//! (workgroups, entry arguments, function calls); `kernel` loads a kernel and lays out
//! its types, `expression` evaluates expressions, `statement` executes statements and
//! control flow, `subgroup` runs the subgroup operations, `memory` addresses, loads,
//! stores and traces memory, and `math` computes on component vectors.

mod expression;
mod kernel;
mod math;
mod memory;
mod statement;
mod subgroup;

use std::ops::Range;

use naga::{
    AddressSpace, Expression, Function, Handle, Module, Type, TypeInner, valid::FunctionInfo,
};

use kernel::ExprMeta;
pub use kernel::Kernel;
use memory::write_leaves;

/// Everything that can go wrong loading or running a kernel. Each message names the
/// shader, and for unsupported input the naga construct, so a failure points at code.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    /// naga could not parse the WGSL.
    #[error("{shader}: WGSL parse error: {message}")]
    Parse {
        /// The shader's name.
        shader: String,
        /// What naga said.
        message: String,
    },
    /// naga found the module invalid.
    #[error("{shader}: validation error: {message}")]
    Validate {
        /// The shader's name.
        shader: String,
        /// What naga said.
        message: String,
    },
    /// A pipeline-override constant could not be applied.
    #[error("{shader}: override error: {message}")]
    Override {
        /// The shader's name.
        shader: String,
        /// What naga said.
        message: String,
    },
    /// The module has no compute entry point of that name.
    #[error("{shader}: no compute entry point named `{entry}`")]
    NoEntryPoint {
        /// The shader's name.
        shader: String,
        /// The entry point asked for.
        entry: String,
    },
    /// A construct the interpreter does not run.
    #[error("{shader}: unsupported by the simulator: {construct}")]
    Unsupported {
        /// The shader's name.
        shader: String,
        /// The naga construct.
        construct: String,
    },
    /// The shader reads a binding the launch did not bind.
    #[error("{shader}: no buffer bound at @group({group}) @binding({binding})")]
    MissingBinding {
        /// The shader's name.
        shader: String,
        /// The `@group` of the missing binding.
        group: u32,
        /// The `@binding` of the missing binding.
        binding: u32,
    },
    /// An access outside its buffer.
    #[error(
        "{shader}: out-of-bounds access (a bug in the kernel, or inputs it does not expect): {detail}"
    )]
    OutOfBounds {
        /// The shader's name.
        shader: String,
        /// What went wrong.
        detail: String,
    },
    /// A launch the kernel cannot take.
    #[error("{shader}: bad launch: {detail}")]
    Launch {
        /// The shader's name.
        shader: String,
        /// What went wrong.
        detail: String,
    },
    /// Any other failure while running.
    #[error("{shader}: {detail}")]
    Runtime {
        /// The shader's name.
        shader: String,
        /// What went wrong.
        detail: String,
    },
}

/// Memory space of a traced request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Space {
    /// A storage buffer.
    Storage,
    /// A uniform buffer.
    Uniform,
    /// A `var<workgroup>`: shared memory.
    Workgroup,
    /// A private array indexed with a value known only at run time: compilers place it
    /// in local memory (per-lane slots interleaved lane by lane, cached like storage).
    Local,
}

/// Direction of a traced request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Access {
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
    /// A bound buffer.
    Binding {
        /// Its `@group`.
        group: u32,
        /// Its `@binding`.
        binding: u32,
    },
    /// A `var<workgroup>`.
    Workgroup {
        /// Its index among the module's workgroup variables.
        var: u32,
    },
    /// A function or private variable in local memory.
    Local {
        /// Which local variable (a private one marked apart).
        var: u32,
    },
}

/// One memory request of one subgroup. Borrowed slices keep the stream allocation-free.
#[derive(Debug)]
pub struct Request<'a> {
    /// The workgroup's id.
    pub workgroup: [u32; 3],
    /// Subgroup index within the workgroup (`local_invocation_index / subgroup_size`).
    pub subgroup: u32,
    /// The memory space it addresses.
    pub space: Space,
    /// The buffer or variable it addresses.
    pub target: Target,
    pub(crate) access: Access,
    pub(crate) bytes_per_lane: u32,
    /// Active lanes, as `subgroup_invocation_id`, ascending.
    pub lanes: &'a [u32],
    /// Byte address of each active lane within the buffer or workgroup variable, in the
    /// order of `lanes`.
    pub addresses: &'a [u64],
    /// When it issues on the workgroup's scoreboard ([`ExecStats::critical_ns`]), ns from
    /// the workgroup's start: the memory model tells a hit on a sector already in the
    /// L1 from one on a sector still on its way.
    pub(crate) issued_ns: f64,
    /// For a storage read: the dependent memory rounds on the workgroup's scoreboard
    /// before it issues (a load issued at round `r` is the workgroup's round `r + 1`
    /// when it waits for it), so that the memory model charges a round the latency of
    /// where its slowest load was served. None for other requests.
    pub round: Option<u32>,
}

/// Consumer of the request stream; requests are not stored, so memory stays flat as the
/// grid grows.
pub trait TraceSink {
    /// False lets the interpreter skip building requests altogether.
    fn enabled(&self) -> bool {
        true
    }
    /// Takes one request as it is made.
    fn request(&mut self, req: &Request<'_>);
}

/// The sink that wants nothing: run a kernel for its outputs only.
#[derive(Debug)]
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
pub struct BoundBuffer {
    /// Its `@group`.
    pub group: u32,
    /// Its `@binding`.
    pub binding: u32,
    /// Its bytes, read and written in place.
    pub data: Vec<u8>,
    /// For a `texture_2d<f32>` binding, its texels per row: `data` holds the texels row
    /// by row, and `textureLoad` at (x, y) reads the word at `y * width + x`, traced as
    /// a storage read where the device keeps it (row by row, or block-linear:
    /// [`Costs::block_linear_textures`]). The model knows no texture cache or unit of
    /// its own: past the layout, a texture read is a read of a buffer.
    pub(crate) texture_width: Option<u32>,
}

impl BoundBuffer {
    /// A buffer of `data` at `@group(group) @binding(binding)`.
    pub fn buffer(group: u32, binding: u32, data: Vec<u8>) -> BoundBuffer {
        BoundBuffer {
            group,
            binding,
            data,
            texture_width: None,
        }
    }
}

/// What the in-order scoreboard charges (see [`ExecStats::critical_ns`]); all zero by
/// default, which times nothing.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct Costs {
    /// Latency of a load from a storage buffer (one dependent memory round).
    pub(crate) global_ns: f64,
    /// Latency of a load from a storage buffer the workgroup has written (in the L2).
    pub(crate) l2_ns: f64,
    /// Latency of a load from workgroup, uniform or local memory.
    pub(crate) on_chip_ns: f64,
    /// A workgroup barrier.
    pub(crate) barrier_ns: f64,
    /// Instructions an integer division or remainder by a non-constant costs (GPUs
    /// without a divider emulate it).
    pub(crate) int_div_instructions: u32,
    /// Subgroup instructions one SM issues per clock (its schedulers), and its clock
    /// (0: issue takes no time): a workgroup of more subgroups than schedulers issues
    /// each instruction over several turns.
    pub(crate) schedulers: f64,
    pub(crate) clock_ghz: f64,
    /// Textures laid out block-linear, as NVIDIA GPUs lay out a tiled image: a texel's
    /// traced address is its place in the blocks of 64-byte × 8-row GOBs
    /// ([`block_linear_offset`]); otherwise the texels are traced row by row.
    pub(crate) block_linear_textures: bool,
}

/// GOBs stacked in one block of a block-linear image: 16 (128 rows), what an image of
/// 128 rows or more gets (an estimate: the driver chooses it).
const BLOCK_GOBS: u32 = 16;

/// The byte offset of byte `x` of row `y` in a block-linear image whose rows hold
/// `row_bytes`: blocks of [`BLOCK_GOBS`] GOBs, each GOB 64 bytes by 8 rows, in which
/// 16 bytes of two rows make each 32-byte sector. The layout is NVIDIA's since
/// Maxwell, as nouveau and the Switch emulators (yuzu, Ryujinx) decode it.
pub(crate) fn block_linear_offset(x: u32, y: u32, row_bytes: u32) -> u32 {
    let columns = row_bytes.div_ceil(64);
    let block = (y / (8 * BLOCK_GOBS)) * columns + x / 64;
    let gob = (y % (8 * BLOCK_GOBS)) / 8;
    block * 512 * BLOCK_GOBS
        + gob * 512
        + (x % 64) / 32 * 256
        + (y % 8) / 2 * 64
        + (x % 32) / 16 * 32
        + (y % 2) * 16
        + x % 16
}

/// Which workgroups of a dispatch to run.
#[derive(Clone, Debug)]
pub struct Launch {
    /// The full dispatch grid; `num_workgroups` reads this even when only a window runs.
    pub(crate) num_workgroups: [u32; 3],
    /// Lanes per subgroup (32 NVIDIA, 64 some AMD, 8 lavapipe); 1..=128.
    pub subgroup_size: u32,
    /// Linear workgroup ids (`x + nx * (y + ny * z)`) to run, in order.
    pub workgroups: Range<u64>,
    pub(crate) costs: Costs,
}

/// The workgroups of a grid of `num_workgroups`, all three dimensions together.
pub(crate) fn grid_size(num_workgroups: [u32; 3]) -> u64 {
    num_workgroups.iter().map(|&n| u64::from(n)).product()
}

impl Launch {
    /// Every workgroup of the grid.
    pub fn all(num_workgroups: [u32; 3], subgroup_size: u32) -> Launch {
        Launch {
            num_workgroups,
            subgroup_size,
            workgroups: 0..grid_size(num_workgroups),
            costs: Costs::default(),
        }
    }
}

/// Work done by a run, for cost accounting.
#[derive(Clone, Copy, Debug, Default)]
pub struct ExecStats {
    /// Workgroups run.
    pub workgroups: u64,
    /// Lane-operations: each expression evaluated, each leaf loaded or stored and each
    /// atomic, times the lanes of the workgroup (inactive lanes included: lock-step
    /// evaluates expressions for all lanes and masks only side effects).
    pub(crate) lane_ops: u64,
    /// Requests handed to the sink (0 when the sink is not [`TraceSink::enabled`]).
    pub requests: u64,
    /// Arithmetic instructions issued: each expression, once per subgroup with an
    /// active lane, weighted by its instruction count. Memory instructions, branches,
    /// barriers and shuffles run on other units beside the arithmetic pipes (the memory
    /// terms and `shuffles` count them), and a loop the compiler unrolls computes its
    /// counter and exit test once for all its copies (counted as none).
    pub(crate) warp_ops: u64,
    /// Subgroup shuffles and broadcasts issued, once per subgroup with an active lane.
    pub(crate) shuffles: u64,
    /// Multiply-adds by the pipe that runs them, per lane and component: a subgroup
    /// with an active lane issues all its lanes, one instruction per component (a
    /// `vec4` `fma` is four), outside the counters and tests of unrolled loops.
    pub(crate) multiply_adds: MultiplyAdds,
    /// Per workgroup, summed: the critical path of an in-order core through the
    /// workgroup, by [`Launch::costs`]: every instruction waits for its operands, a
    /// load's result arrives a latency after it issues, barriers cost theirs and wait
    /// for the last subgroup to issue, as does the workgroup's end.
    pub(crate) critical_ns: f64,
    /// Per workgroup, summed: the storage loads along that critical path (dependent
    /// memory rounds).
    pub(crate) critical_rounds: u64,
}

/// Lane multiply-adds, by pipe: what the arithmetic term ([`crate::sim::model`]) charges
/// at each pipe's own rate, beside the issue of every instruction.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct MultiplyAdds {
    /// f32 `fma` and f32 multiplies (a multiply and the add that takes it compile to
    /// one fused multiply-add): the FMA pipe.
    pub(crate) f32: u64,
    /// 32-bit integer multiplies of two run-time values (a multiply and the add that
    /// takes it compile to one multiply-add, NVIDIA's `IMAD`): the integer pipe.
    /// A multiply by a constant is left out: compilers make it shifts and adds.
    pub(crate) int: u64,
}

impl MultiplyAdds {
    /// Both counts of `runs`, summed.
    pub(crate) fn sum<'a>(runs: impl IntoIterator<Item = &'a MultiplyAdds>) -> MultiplyAdds {
        runs.into_iter()
            .fold(MultiplyAdds::default(), |a, b| MultiplyAdds {
                f32: a.f32 + b.f32,
                int: a.int + b.int,
            })
    }
}

/// When a value is ready on the scoreboard, after how many dependent storage loads,
/// and whether it derives from run-time data (a buffer or a built-in) rather than
/// from constants and loop counters alone.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Ready {
    at: f64,
    rounds: u32,
    runtime: bool,
}

impl Ready {
    /// The later of two, tainted by either.
    fn join(self, other: Ready) -> Ready {
        let later = if other.at > self.at { other } else { self };
        Ready {
            runtime: self.runtime || other.runtime,
            ..later
        }
    }
}

/// The variant name of an IR node from its `Debug` form (`ImageLoad { .. }` -> `ImageLoad`).
fn variant<T: std::fmt::Debug>(x: &T) -> String {
    let s = format!("{x:?}");
    s.split(|c: char| !c.is_alphanumeric() && c != '_')
        .next()
        .unwrap_or_default()
        .to_string()
}

/// Where a pointer points. Binding slots index the `bindings` slice of [`run`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Region {
    Buf(u32, Space),
    Wg(u32),
    Private(u32),
    Local(u32),
}

/// An evaluated expression: components (`c * lanes + lane`), or a region and each lane's
/// byte offset into it.
#[derive(Clone, Debug)]
enum Value {
    Data(Vec<u32>),
    Ptr(Region, Vec<u32>),
}

/// A loop or switch being executed, with the lanes waiting at its end (`brk`) and, for a
/// loop, at its continuing block (`cont`).
enum Construct {
    Loop {
        brk: Vec<bool>,
        cont: Vec<bool>,
        /// Some lanes left on a condition derived from run-time data.
        runtime_exit: bool,
        /// An `if` whose branch is a lone `break` tested a condition derived from
        /// run-time data, whether or not a lane left.
        runtime_test: bool,
    },
    Switch {
        brk: Vec<bool>,
    },
}

/// One function invocation: its expressions' values, active lanes, enclosing
/// constructs, return value, and where its variables start in `local_mem`.
struct Frame<'k> {
    fun: &'k Function,
    fi: &'k FunctionInfo,
    meta: &'k [ExprMeta],
    vals: Vec<Option<Value>>,
    /// Per expression, when its value is ready.
    ready: Vec<Ready>,
    args: Vec<Value>,
    active: Vec<bool>,
    constructs: Vec<Construct>,
    ret: Vec<u32>,
    local_base: u32,
}

/// Run the workgroups `launch.workgroups` of `kernel` over `bindings`, streaming
/// requests to `sink`. Buffers are updated in place, as on the GPU.
pub fn run(
    kernel: &Kernel,
    bindings: &mut [BoundBuffer],
    launch: &Launch,
    sink: &mut dyn TraceSink,
) -> Result<ExecStats, SimError> {
    let (lanes, sg) = check_launch(kernel, launch)?;
    let nwg = launch.num_workgroups;
    let m = &kernel.module;
    let slot_of = binding_slots(m, bindings);
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
        stats: ExecStats::default(),
        costs: launch.costs,
        now: Ready::default(),
        operands: Ready::default(),
        local_ready: Vec::new(),
        private_ready: vec![Ready::default(); kernel.private_vars.len()],
        spill: false,
        form: LoopForm::default(),
        runtime_condition: false,
        written: Vec::new(),
        stores_at: 0.0,
        skew_ns: 0.0,
    };
    for id in launch.workgroups.clone() {
        let x = id % u64::from(nwg[0]);
        let y = (id / u64::from(nwg[0])) % u64::from(nwg[1]);
        let z = id / (u64::from(nwg[0]) * u64::from(nwg[1]));
        #[expect(
            clippy::cast_possible_truncation,
            reason = "x, y and z are below `nwg`'s u32s: check_launch keeps the ids in the grid"
        )]
        let wid = [x as u32, y as u32, z as u32];
        ex.wid = wid;
        ex.now = Ready::default();
        ex.stores_at = 0.0;
        ex.skew_ns = 0.0;
        ex.written.clear();
        ex.workgroup()?;
        ex.stats.workgroups += 1;
        // A workgroup ends when its last store has its data, and its last subgroup
        // has issued.
        ex.stats.critical_ns += ex.now.at.max(ex.stores_at) + ex.skew_ns;
        ex.stats.critical_rounds += u64::from(ex.now.rounds);
    }
    Ok(ex.stats)
}

/// Lanes per workgroup and per subgroup, once the launch is known to fit the kernel.
fn check_launch(kernel: &Kernel, launch: &Launch) -> Result<(usize, usize), SimError> {
    let lanes = kernel
        .workgroup_size
        .iter()
        .map(|&n| n as usize)
        .product::<usize>();
    let bad = |detail: String| SimError::Launch {
        shader: kernel.name.clone(),
        detail,
    };
    if lanes == 0 {
        return Err(bad("empty workgroup".into()));
    }
    if u32::try_from(lanes).is_err() {
        return Err(bad(format!(
            "{lanes} lanes in a workgroup: more than a u32 counts"
        )));
    }
    let sg = launch.subgroup_size as usize;
    if !(1..=128).contains(&sg) {
        return Err(bad(format!(
            "subgroup size {sg} outside 1..=128 (a ballot holds 128 lanes)"
        )));
    }
    let total: u64 = launch
        .num_workgroups
        .iter()
        .map(|&n| u64::from(n))
        .product();
    if launch.workgroups.end > total {
        return Err(bad(format!(
            "workgroups {:?} beyond the grid of {total}",
            launch.workgroups
        )));
    }
    Ok((lanes, sg))
}

/// The slot in `bindings` (and the space) of each storage or uniform global variable,
/// and of each texture (read as storage: see [`BoundBuffer::texture_width`]), by handle
/// index; `None` where nothing is bound.
#[expect(
    clippy::cast_possible_truncation,
    reason = "an index among the launch's bindings, which WGSL numbers in u32"
)]
fn binding_slots(m: &Module, bindings: &[BoundBuffer]) -> Vec<Option<(u32, Space)>> {
    let mut slot_of = vec![None; m.global_variables.len()];
    for (h, g) in m.global_variables.iter() {
        let space = match g.space {
            AddressSpace::Storage { .. } => Space::Storage,
            AddressSpace::Uniform => Space::Uniform,
            AddressSpace::Handle if matches!(m.types[g.ty].inner, TypeInner::Image { .. }) => {
                Space::Storage
            }
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
    slot_of
}

/// How the compiler treats the loop [`Exec`] runs (outside loops: the default, rolled).
#[derive(Clone, Default)]
struct LoopForm<'k> {
    /// Unrolled whole, its exit known at compile time ([`Exec::ensure`]).
    dataflow: bool,
    /// Unrolled, with or without a run-time trip count: its exit tests (the conditions
    /// of the `if`s in its body that break) in function `exit_fun`, and its continuing
    /// block while `continuing`, issue no instructions.
    unrolled: bool,
    exit_tests: Vec<Handle<Expression>>,
    exit_fun: Option<&'k Function>,
    continuing: bool,
}

/// The interpreter over one run: the kernel, every memory, the workgroup being run and
/// the trace sink.
struct Exec<'k, 'r> {
    k: &'k Kernel,
    bindings: &'r mut [BoundBuffer],
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
    stats: ExecStats,
    costs: Costs,
    /// The scoreboard's clock: where the workgroup's in-order issue stands.
    now: Ready,
    /// The operands of the expression being evaluated, joined.
    operands: Ready,
    /// When the value stored in each function variable (parallel to `local_mem`) and
    /// private variable is ready.
    local_ready: Vec<Ready>,
    private_ready: Vec<Ready>,
    /// The load or store under way is to a function or private variable in local
    /// memory (traced as [`Space::Local`]).
    spill: bool,
    /// How the compiler treats the loop running now.
    form: LoopForm<'k>,
    /// Whether the last branch condition derived from run-time data (a loop whose
    /// exit does cannot be unrolled).
    runtime_condition: bool,
    /// Binding slots this workgroup has stored to.
    written: Vec<u32>,
    /// When the data of the stores that did not hold back issue (in unrolled loops)
    /// is all ready: a workgroup barrier waits for it.
    stores_at: f64,
    /// How far the workgroup's last subgroup issues behind its first: its subgroups
    /// share the SM's [`Costs::schedulers`], so every instruction of more subgroups
    /// than schedulers delays the last one; a barrier and the workgroup's end wait
    /// for it.
    skew_ns: f64,
}

impl<'k> Exec<'k, '_> {
    /// When the value in function variable `i` (`Region::Local`) or private variable
    /// `i` is ready.
    fn var_ready(&mut self, region: Region, i: u32) -> &mut Ready {
        let slots = match region {
            Region::Private(_) => &mut self.private_ready,
            _ => &mut self.local_ready,
        };
        let i = i as usize;
        if slots.len() <= i {
            slots.resize(i + 1, Ready::default());
        }
        &mut slots[i]
    }

    fn err_unsupported(&self, what: impl Into<String>) -> SimError {
        self.k.unsupported(what)
    }

    /// Run the entry point for every lane of workgroup `self.wid`, from fresh workgroup
    /// and private memory.
    fn workgroup(&mut self) -> Result<(), SimError> {
        let k = self.k;
        let m = &k.module;
        let l = self.lanes;
        for mem in &mut self.wg_mem {
            mem.fill(0);
        }
        // Private variables: one slot per lane, initialised per invocation.
        self.private_ready.fill(Ready::default());
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

    /// The value of an entry-point argument: a built-in, or a struct of built-ins.
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

    /// A built-in input's value in every lane.
    #[expect(
        clippy::cast_possible_truncation,
        reason = "lane indices of one workgroup: check_launch keeps its lanes within u32"
    )]
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
        let local_base = u32::try_from(self.local_mem.len()).map_err(|_| SimError::Runtime {
            shader: k.name.clone(),
            detail: "more local variables than a u32 counts".into(),
        })?;
        for (_, lv) in fun.local_variables.iter() {
            let size = k.layouter[lv.ty].to_stride() as usize * l;
            self.local_mem.push(vec![0u8; size]);
            self.local_ready.push(Ready::default());
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
            ready: vec![Ready::default(); fun.expressions.len()],
            args,
            active,
            constructs: Vec::new(),
            ret: vec![0; ret_n * l],
            local_base,
        };
        self.init_locals(&mut fr)?;
        let r = self.block(&mut fr, &fun.body);
        self.local_mem.truncate(local_base as usize);
        self.local_ready.truncate(local_base as usize);
        r?;
        Ok(fr.ret)
    }

    /// Local initialisers are constant expressions: store them for every lane.
    fn init_locals(&mut self, fr: &mut Frame<'k>) -> Result<(), SimError> {
        let k = self.k;
        let l = self.lanes;
        let fun = fr.fun;
        for (i, (_, lv)) in fun.local_variables.iter().enumerate() {
            if let Some(init) = lv.init {
                self.ensure(fr, init)?;
                let Some(Value::Data(v)) = &fr.vals[init.index()] else {
                    return Err(k.runtime("local initialiser is not a value"));
                };
                let stride = k.layouter[lv.ty].to_stride() as usize;
                let leaves = k.type_leaves[lv.ty.index()]
                    .as_deref()
                    .ok_or_else(|| k.unsupported("local variable of unsized type"))?;
                if let Some(mem) = self.local_mem.get_mut(fr.local_base as usize + i) {
                    for lane in 0..l {
                        write_leaves(mem, lane * stride, leaves, v, |c| c * l + lane);
                    }
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_linear_offsets_follow_the_gob_and_its_blocks() {
        // An image of 8192 four-byte texels a row: 512 GOBs across.
        let row = 8192 * 4;
        let at = |x, y| block_linear_offset(x, y, row);
        // Within a GOB: 16 bytes of two rows make a 32-byte sector.
        assert_eq!([at(0, 0), at(15, 0), at(0, 1), at(16, 0)], [0, 15, 16, 32]);
        assert_eq!([at(0, 2), at(32, 0), at(63, 7)], [64, 256, 511]);
        // The next GOB down, then the next block across and the next block down.
        assert_eq!(at(0, 8), 512);
        assert_eq!(at(64, 0), 512 * BLOCK_GOBS);
        assert_eq!(at(0, 8 * BLOCK_GOBS), 512 * BLOCK_GOBS * 512);
        // Every byte of an image of whole blocks has a place of its own.
        let (width, height) = (256u32, 256u32);
        let mut seen = std::collections::HashSet::new();
        for y in 0..height {
            for x in 0..width {
                assert!(seen.insert(block_linear_offset(x, y, width)));
            }
        }
        assert_eq!(seen.iter().max(), Some(&(width * height - 1)));
    }
}
