//! A case: one measurable configuration of an experiment, built through
//! [`CaseBuilder`], which applies the one rule for what a device cannot run.

use std::sync::Arc;

use super::{
    Binding, Cache, CaseId, CudaLaunch, Dispatch, Expected, Experiment, Grid, Key, Params, Sizing,
    Words, words,
};

/// The references a second dispatch's outputs must meet, made from the first's outputs
/// (each in the order of the case's outputs).
pub type Agree = Arc<dyn Fn(Vec<Arc<Vec<u32>>>) -> Vec<Expected> + Send + Sync>;

/// One measurable configuration of an experiment.
#[derive(Clone)]
pub struct Case {
    /// What distinguishes this case among its experiment's, e.g. `offset=3`.
    pub params: Params,
    /// The workgroup size the kernel is built with.
    pub workgroup_size: [u32; 3],
    /// Bytes of workgroup memory one workgroup uses: what a twin with dynamic shared
    /// memory is launched with.
    pub(crate) workgroup_storage_bytes: u32,
    /// Pipeline-overridable constants, by name.
    pub overrides: Vec<(&'static str, f64)>,
    /// Workgroup counts of one dispatch.
    pub workgroups: [u32; 3],
    /// Useful elements the kernel moves (for the CSV).
    pub elements: u64,
    /// Bytes the kernel must read plus bytes it must write: the numerator of its
    /// effective bandwidth.
    pub bytes: u64,
    /// Why this case cannot run on this device, if it cannot.
    pub skip: Option<String>,
    /// The buffers in binding order.
    pub buffers: Vec<Buffer>,
    /// Each buffer's group and binding, in `buffers`' order; empty: group 0, each
    /// buffer at its index (the suite's kernels). A user's kernel may bind several
    /// groups.
    pub slots: Vec<naga::ResourceBinding>,
    /// The kernel reads its addresses from its inputs (a pointer chase), so its memory
    /// trace is that of the real data only: the simulator predicts it on the inputs
    /// `data` builds, not on zero-filled buffers.
    pub(crate) addresses_from_data: bool,
    /// Builds the inputs and the reference outputs; called only when the case runs.
    pub data: Arc<dyn Fn() -> CaseData + Send + Sync>,
    /// The caches' state at each timed dispatch; a cold case's params say so.
    pub cache: Cache,
    /// Dispatches run once, untimed, before the sampler's own warm-up: a pointer chase
    /// walks its whole cycle, so that its timed loads find what the caches keep of it.
    pub(crate) untimed_first: u32,
    /// How the CUDA backend launches the case beyond its grid (a setting WGSL cannot
    /// express, which the case's params record); wgpu skips a case that has one.
    pub(crate) cuda_launch: CudaLaunch,
    /// How the clock issues the timed dispatches (the `launch` family's ways; else back
    /// to back in one pass).
    pub dispatch: Dispatch,
    /// What a second dispatch's outputs from the same inputs must be, from the
    /// first's, where the case checks that two dispatches agree (a user's kernel, at
    /// full size: a race shows as a disagreement).
    pub agree: Option<Agree>,
    /// Why the outputs are not checked, if they are not: its references are empty, and
    /// its rows say `verified` false with this reason (a user's kernel that the
    /// interpreter cannot run, or `--no-verify`).
    pub(crate) unverified: Option<String>,
}

impl std::fmt::Debug for Case {
    // Every field but `data`, a closure with nothing to print.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Case")
            .field("params", &self.params)
            .field("workgroup_size", &self.workgroup_size)
            .field("workgroup_storage_bytes", &self.workgroup_storage_bytes)
            .field("overrides", &self.overrides)
            .field("workgroups", &self.workgroups)
            .field("elements", &self.elements)
            .field("bytes", &self.bytes)
            .field("skip", &self.skip)
            .field("buffers", &self.buffers)
            .field("addresses_from_data", &self.addresses_from_data)
            .field("cache", &self.cache)
            .field("untimed_first", &self.untimed_first)
            .field("cuda_launch", &self.cuda_launch)
            .field("dispatch", &self.dispatch)
            .finish_non_exhaustive()
    }
}

impl Case {
    /// A case of `params`, sized for `sizing`: see [`CaseBuilder`].
    pub fn builder(sizing: &Sizing, params: Params) -> CaseBuilder<'_> {
        CaseBuilder {
            sizing,
            case: Case {
                params,
                workgroup_size: [1, 1, 1],
                workgroup_storage_bytes: 0,
                overrides: Vec::new(),
                workgroups: [0, 1, 1],
                elements: 0,
                bytes: 0,
                skip: None,
                buffers: Vec::new(),
                slots: Vec::new(),
                addresses_from_data: false,
                data: Arc::new(|| CaseData {
                    inputs: Vec::new(),
                    expected: Vec::new(),
                }),
                cache: Cache::Warm,
                untimed_first: 0,
                cuda_launch: CudaLaunch::Plain,
                dispatch: Dispatch::Pass,
                unverified: None,
                agree: None,
            },
        }
    }

    /// Buffer `index`'s group and binding: its slot, or group 0 at its index.
    pub fn slot(&self, index: usize) -> naga::ResourceBinding {
        slot(&self.slots, index)
    }

    /// The same case with every timed dispatch started cold (`cache=cold`).
    pub fn cold(self) -> Case {
        Case {
            params: self.params.with(Key::Cache, Cache::Cold.as_str()),
            cache: Cache::Cold,
            ..self
        }
    }

    /// The case's identity within `experiment`.
    pub fn id(&self, experiment: &Experiment) -> CaseId {
        CaseId {
            family: experiment.family,
            variant: experiment.variant.to_owned(),
            params: self.params.clone(),
        }
    }

    /// `WxHxD` with trailing 1s dropped, as the CSV's `workgroup` column.
    pub(crate) fn workgroup_label(&self) -> String {
        let [x, y, z] = self.workgroup_size;
        match (y, z) {
            (1, 1) => x.to_string(),
            (_, 1) => format!("{x}x{y}"),
            _ => format!("{x}x{y}x{z}"),
        }
    }
}

/// One binding's buffer as a case declares it: a uniform's contents, or the size of
/// an input or output in 32-bit words (every datum of the suite is a 4-byte f32, u32
/// or i32; uniform structs are whole words).
#[derive(Clone, Debug, PartialEq)]
pub enum Buffer {
    /// A uniform's contents, in words.
    Uniform(Vec<u32>),
    /// An input of this many words.
    Input(usize),
    /// An input read through the texture path: an `r32float` 2-D texture (WGSL
    /// `texture_2d<f32>`, read with `textureLoad`; CUDA: a texture object over a CUDA
    /// array, read with an integer texel fetch), its words the texels row by row.
    Texture {
        /// Texels per row.
        width: u32,
        /// Rows.
        height: u32,
    },
    /// Written by the kernel: created poisoned, then checked against the reference.
    Output(usize),
    /// Read and written by the kernel (an in-place update): filled from the case's
    /// inputs like an input, then checked against the reference like an output.
    InOut(usize),
}

/// Whether `inputs` are the input buffers `buffers` declare, in order and size; what
/// differs, where they are not.
pub(crate) fn check_inputs(buffers: &[Buffer], inputs: &[Words]) -> Result<(), String> {
    let declared: Vec<usize> = buffers
        .iter()
        .filter(|b| b.is_input())
        .map(Buffer::words)
        .collect();
    let given: Vec<usize> = inputs.iter().map(Words::len).collect();
    if declared == given {
        Ok(())
    } else {
        Err(format!(
            "inputs of {given:?} words where {declared:?} are declared"
        ))
    }
}

impl Buffer {
    /// The binding kind this buffer fills.
    pub fn binding(&self) -> Binding {
        match self {
            Buffer::Uniform(_) => Binding::Uniform,
            Buffer::Input(_) => Binding::ReadOnly,
            Buffer::Texture { .. } => Binding::Texture,
            Buffer::Output(_) | Buffer::InOut(_) => Binding::ReadWrite,
        }
    }

    /// Whether the case's data fills this buffer (an input buffer or a texture).
    pub(crate) fn is_input(&self) -> bool {
        matches!(
            self,
            Buffer::Input(_) | Buffer::Texture { .. } | Buffer::InOut(_)
        )
    }

    /// Whether the kernel writes this buffer, which is checked after a dispatch.
    pub(crate) fn is_output(&self) -> bool {
        matches!(self, Buffer::Output(_) | Buffer::InOut(_))
    }

    /// A uniform buffer holding `params` (a `#[repr(C)]` struct of whole words).
    pub fn uniform<P: bytemuck::Pod>(params: P) -> Buffer {
        Buffer::Uniform(words(params))
    }

    /// Its size in 32-bit words.
    pub fn words(&self) -> usize {
        match self {
            Buffer::Uniform(words) => words.len(),
            Buffer::Input(words) | Buffer::Output(words) | Buffer::InOut(words) => *words,
            Buffer::Texture { width, height } => *width as usize * *height as usize,
        }
    }

    pub(crate) fn len_bytes(&self) -> u64 {
        4 * self.words() as u64
    }
}

/// A case's data: its inputs in binding order, and what each output must hold after
/// one dispatch, in binding order.
#[derive(Debug)]
pub struct CaseData {
    /// The inputs, in binding order.
    pub inputs: Vec<Words>,
    /// What each output must hold, in binding order.
    pub expected: Vec<Expected>,
}

impl CaseData {
    /// Bytes of inputs and references held in memory: a made one holds none.
    #[cfg(test)]
    pub(crate) fn held_bytes(&self) -> u64 {
        let inputs = self.inputs.iter().map(Words::held_bytes);
        inputs
            .chain(self.expected.iter().map(Expected::held_bytes))
            .sum()
    }
}

/// Builds a [`Case`]: each step that needs something of the device (a workgroup's
/// invocations and memory, subgroups, a grid's dimensions) checks it against the
/// [`Sizing`], and the first need the device cannot meet becomes the case's skip reason.
#[derive(Debug)]
pub struct CaseBuilder<'a> {
    sizing: &'a Sizing,
    case: Case,
}

impl CaseBuilder<'_> {
    /// Skips the case for `reason`, unless an earlier step already did.
    pub(crate) fn skip_if(mut self, reason: Option<String>) -> Self {
        if self.case.skip.is_none() {
            self.case.skip = reason;
        }
        self
    }

    /// Workgroups of `size` invocations using `storage_bytes` of workgroup memory.
    pub fn workgroup(mut self, size: [u32; 3], storage_bytes: u32) -> Self {
        self.case.workgroup_size = size;
        self.case.workgroup_storage_bytes = storage_bytes;
        let invocations = size.iter().product();
        let reason = self.sizing.workgroup_skip(invocations, storage_bytes);
        self.skip_if(reason)
    }

    /// Whether the kernel needs subgroup operations.
    pub(crate) fn needs_subgroups(self, needed: bool) -> Self {
        let reason = needed.then(|| self.sizing.subgroup_skip()).flatten();
        self.skip_if(reason)
    }

    /// One dispatch of `groups` workgroups laid out as `grid`.
    pub fn grid(mut self, grid: Grid, groups: u64) -> Self {
        match grid.workgroups(groups, self.sizing.max_workgroups_per_dimension) {
            Ok(workgroups) => {
                self.case.workgroups = workgroups;
                self
            }
            Err(reason) => self.skip_if(Some(reason)),
        }
    }

    /// One dispatch of exactly these workgroup counts.
    pub fn workgroups(mut self, workgroups: [u32; 3]) -> Self {
        self.case.workgroups = workgroups;
        self
    }

    /// A pipeline-overridable constant of the kernel.
    pub fn constant(mut self, name: &'static str, value: f64) -> Self {
        self.case.overrides.push((name, value));
        self
    }

    /// Pipeline-overridable constants of the kernel.
    pub fn constants(mut self, constants: impl IntoIterator<Item = (&'static str, f64)>) -> Self {
        self.case.overrides.extend(constants);
        self
    }

    /// The useful elements the case moves and the bytes it must read plus write.
    pub fn moves(mut self, elements: u64, bytes: u64) -> Self {
        self.case.elements = elements;
        self.case.bytes = bytes;
        self
    }

    /// The buffers, in binding order.
    pub fn buffers(mut self, buffers: Vec<Buffer>) -> Self {
        self.case.buffers = buffers;
        self
    }

    /// Two dispatches from the same inputs checked to agree: see [`Case::agree`].
    pub fn agree(mut self, agree: Agree) -> Self {
        self.case.agree = Some(agree);
        self
    }

    /// Each buffer's group and binding: see [`Case::slots`].
    pub fn slots(mut self, slots: Vec<naga::ResourceBinding>) -> Self {
        self.case.slots = slots;
        self
    }

    /// A CUDA-only launch setting (which `params` must record): see
    /// [`Case::cuda_launch`].
    pub(crate) fn cuda_launch(mut self, launch: CudaLaunch) -> Self {
        self.case.cuda_launch = launch;
        self
    }

    /// How the clock issues the timed dispatches: see [`Case::dispatch`].
    pub fn dispatch(mut self, dispatch: Dispatch) -> Self {
        self.case.dispatch = dispatch;
        self
    }

    /// The kernel's addresses are read from its inputs: see [`Case::addresses_from_data`].
    pub(crate) fn addresses_from_data(mut self) -> Self {
        self.case.addresses_from_data = true;
        self
    }

    /// The outputs are not checked, for `why`: see [`Case::unverified`].
    pub(crate) fn unverified(mut self, why: String) -> Self {
        self.case.unverified = Some(why);
        self
    }

    /// `dispatches` run once, untimed, before the sampler starts ([`Case::untimed_first`]).
    pub(crate) fn untimed_first(mut self, dispatches: u32) -> Self {
        self.case.untimed_first = dispatches;
        self
    }

    /// The case, whose inputs and references `data` builds when it runs.
    pub fn data(mut self, data: impl Fn() -> CaseData + Send + Sync + 'static) -> Case {
        self.case.data = Arc::new(data);
        self.case
    }

    /// The case, with data shared with other cases.
    pub(crate) fn shared_data(mut self, data: Arc<dyn Fn() -> CaseData + Send + Sync>) -> Case {
        self.case.data = data;
        self.case
    }
}

/// The bind groups `count` buffers at `slots` take: 0 up to the last one bound.
pub fn groups(slots: &[naga::ResourceBinding], count: usize) -> u32 {
    (0..count)
        .map(|index| slot(slots, index).group + 1)
        .max()
        .unwrap_or(1)
}

/// Buffer `index`'s group and binding among `slots` (see [`Case::slots`]).
pub fn slot(slots: &[naga::ResourceBinding], index: usize) -> naga::ResourceBinding {
    slots.get(index).cloned().unwrap_or(naga::ResourceBinding {
        group: 0,
        binding: u32::try_from(index).unwrap_or(u32::MAX),
    })
}
