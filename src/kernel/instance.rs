//! A user's kernel made into the suite's case: its buffers sized and filled, its
//! uniforms written where naga lays their fields out, its dispatch checked against the
//! device, and its references made by the interpreter — an [`Experiment`] and a
//! [`Case`] that the run's session verifies and times like any other.

use std::sync::{Arc, Mutex, PoisonError};

use super::checked::{self, Interpreted};
use super::reflect::{self, BindingAccess, KernelBinding, KernelShape, Word};
use crate::suite::{
    Buffer, Case, CaseData, Experiment, Family, Key, Measure, Params, Sizing, Twin, Value, Words,
    mix, shaders,
};

/// What a buffer starts as.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Init {
    /// Floats in [-1, 1), integers in [0, 2^16).
    #[default]
    Random,
    /// Every word zero.
    Zeros,
    /// Every element one.
    Ones,
    /// Each element its index (floats and integers).
    Ramp,
}

/// A buffer's first contents: made by an [`Init`], or given word by word.
#[derive(Clone, Debug, PartialEq)]
pub enum Fill {
    /// Made by an [`Init`].
    Init(Init),
    /// Given word by word.
    Words(Arc<Vec<u32>>),
}

/// How a kernel's outputs are checked.
#[derive(Clone, Debug, Default)]
pub enum Verify {
    /// Against the interpreter's run of the same WGSL on the same inputs.
    #[default]
    Interpreter,
    /// Not at all, for this reason (`--no-verify`).
    Skip(String),
    /// At the smaller sizes of this description (`--verify-size`), its own row.
    Smaller(Box<Description>),
    /// Against a reference written in Rust (the library's
    /// [`super::api::GpuKernel::reference`]), in place of the interpreter.
    Reference(Reference),
    /// At the smaller sizes of this description, its own row, chosen by membench: the
    /// sizes halved together until the interpreter's invocations are few enough.
    Chosen(Box<Description>),
}

/// A kernel's outputs computed in Rust: from every binding's first words (in group then
/// binding order, uniforms included), each `read_write` binding's words after one
/// dispatch, in that order.
#[derive(Clone)]
pub struct Reference(pub Arc<ReferenceFn>);

/// The closure of a [`Reference`].
pub type ReferenceFn = dyn Fn(&[&[u32]]) -> Vec<Vec<u32>> + Send + Sync;

impl std::fmt::Debug for Reference {
    // A closure: nothing to print but what it is.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Reference(a Rust closure)")
    }
}

/// One kernel at one set of sizes, as `membench kernel`'s flags (or the library's
/// [`super::api::GpuKernel`]) describe it, every expression evaluated.
#[derive(Clone, Debug, Default)]
pub struct Description {
    /// The variant of its rows (`--name`, else the file's stem).
    pub name: String,
    /// Where the WGSL came from, for messages.
    pub file: String,
    /// The WGSL text.
    pub source: String,
    /// The entry point; `None`: the module's only compute entry.
    pub entry: Option<String>,
    /// Pipeline-override constants and their values.
    pub overrides: Vec<(String, f64)>,
    /// The size variables: the rows' `param`.
    pub sizes: Vec<(String, u64)>,
    /// Element counts of runtime-sized arrays, by binding.
    pub counts: Vec<(String, u64)>,
    /// First contents by binding; the others random.
    pub fills: Vec<(String, Fill)>,
    /// Uniform fields (`NAME.FIELD`, or `NAME` for a uniform that is no struct) and
    /// their components.
    pub(crate) uniforms: Vec<(String, Vec<f64>)>,
    /// Workgroup counts; `None`: `n / <workgroup x>` rounded up, where a size `n` is.
    pub workgroups: Option<[u32; 3]>,
    /// The bytes the kernel must move, where declared.
    pub bytes: Option<u64>,
    /// How its outputs are checked.
    pub verify: Verify,
}

/// Where a row's bytes come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BytesSource {
    /// `--bytes`.
    Declared,
    /// The interpreter's distinct bytes read plus distinct bytes written.
    Interpreted,
    /// The bytes of every storage binding: the interpreter could not run the kernel.
    Footprint,
}

impl std::fmt::Display for BytesSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            BytesSource::Declared => "declared (--bytes)",
            BytesSource::Interpreted => {
                "the interpreter's distinct bytes read plus distinct bytes written"
            }
            BytesSource::Footprint => {
                "every storage binding's bytes (the interpreter did not count them)"
            }
        })
    }
}

/// A kernel made ready for the session.
#[derive(Debug)]
pub(crate) struct Instance {
    pub experiment: &'static Experiment,
    pub case: Case,
    pub shape: KernelShape,
    pub(crate) bytes_source: BytesSource,
}

/// Invocations the interpreter verifies a kernel at without being asked to (about
/// seconds for a simple kernel in a release build): beyond, `--verify-size` names a
/// smaller size.
pub(crate) const INTERPRETED_INVOCATIONS: u64 = 1 << 22;

/// Elements of runtime-sized arrays the interpreter verifies a kernel at without being
/// asked: a kernel whose invocations each walk many (a layer norm's rows) costs by
/// its data, whatever its invocations.
pub(crate) const INTERPRETED_ELEMENTS: u64 = 1 << 24;

/// Whether the interpreter verifies `d` unasked: within both budgets (invocations it
/// cannot estimate count as within).
pub(crate) fn interpretable(d: &Description) -> bool {
    estimated_invocations(d).is_none_or(|i| i <= INTERPRETED_INVOCATIONS)
        && d.counts.iter().map(|(_, count)| count).sum::<u64>() <= INTERPRETED_ELEMENTS
}

/// A description's buffers made: its reflection, buffers, first contents and dispatch.
struct Prepared {
    shape: KernelShape,
    buffers: Vec<Buffer>,
    /// Each binding's first contents, word by word.
    inputs: Vec<Contents>,
    workgroups: [u32; 3],
}

/// A binding's first contents: `len` words, word `i` being `word(i)`.
#[derive(Clone)]
struct Contents {
    len: usize,
    word: Arc<dyn Fn(usize) -> u32 + Send + Sync>,
}

impl Contents {
    fn held(&self) -> Arc<Vec<u32>> {
        Arc::new((0..self.len).map(|i| (self.word)(i)).collect())
    }

    fn words(&self) -> Words {
        let word = Arc::clone(&self.word);
        Words::made(self.len, move |i| word(i))
    }
}

impl Prepared {
    fn of(d: &Description, sizing: &Sizing) -> Result<Prepared, String> {
        let shape = reflect::shape(&d.file, &d.source, d.entry.as_deref(), &d.overrides)?;
        check_names(d, &shape)?;
        let buffers = buffers(d, &shape, sizing)?;
        let inputs = shape
            .bindings
            .iter()
            .zip(&buffers)
            .enumerate()
            .map(|(index, (bound, buffer))| contents(d, bound, buffer, index))
            .collect();
        let workgroups = workgroups(d, &shape, sizing)?;
        Ok(Prepared {
            shape,
            buffers,
            inputs,
            workgroups,
        })
    }

    fn storage_bytes(&self) -> u64 {
        self.buffers
            .iter()
            .filter(|b| !matches!(b, Buffer::Uniform(_)))
            .map(Buffer::len_bytes)
            .sum()
    }

    fn invocations(&self) -> u64 {
        invocations(self.workgroups, self.shape.workgroup_size)
    }

    /// The interpreter's run on these contents; an error where it cannot run them, or
    /// they are too many invocations to run unasked.
    fn interpreted(&self, d: &Description, sizing: &Sizing) -> Result<Interpreted, String> {
        let invocations = self.invocations();
        if invocations > INTERPRETED_INVOCATIONS {
            return Err(format!(
                "{invocations} invocations are more than the interpreter runs unasked \
                 ({INTERPRETED_INVOCATIONS}), and the sizes do not halve evenly that far: \
                 name a smaller size with --verify-size NAME=EXPR"
            ));
        }
        let inputs: Vec<Arc<Vec<u32>>> = self.inputs.iter().map(Contents::held).collect();
        interpreted(d, &self.shape, &inputs, self.workgroups, sizing)
    }
}

/// The kernel `description` at its sizes, as a case of `sizing`'s device.
pub(crate) fn instance(description: &Description, sizing: &Sizing) -> Result<Instance, String> {
    let d = description;
    let prepared = Prepared::of(d, sizing)?;
    crate::suite::check_variant(&d.name)
        .map_err(|why| format!("{why}: give the kernel a --name that is one"))?;
    // Named apart from the suite's kernels, which a user's may share a name with.
    let kernel_name = shaders::register(
        &format!("kernel:{}", d.name),
        &d.source,
        &prepared.shape.entry,
    )?;
    let experiment = experiment(&d.name, kernel_name);
    let footprint: u64 = prepared.buffers.iter().map(Buffer::len_bytes).sum();
    let (checked, unverified) = verification(d, &prepared, sizing);
    #[expect(
        clippy::cast_possible_truncation,
        reason = "whole bytes of a scaled count of u64 bytes; `as` saturates"
    )]
    let (bytes, bytes_source) = match (d.bytes, &checked) {
        (Some(bytes), _) => (bytes, BytesSource::Declared),
        // A Rust reference counts no bytes.
        (None, Some(_)) if matches!(d.verify, Verify::Reference(_)) => {
            (prepared.storage_bytes(), BytesSource::Footprint)
        }
        (None, Some((interpreted, scale))) => {
            let bytes = (interpreted.read_bytes + interpreted.written_bytes) as f64 * scale;
            (bytes.round() as u64, BytesSource::Interpreted)
        }
        (None, None) => (prepared.storage_bytes(), BytesSource::Footprint),
    };
    let params = match d.sizes.is_empty() {
        true => Params::new(),
        false => Params::new().with(Key::Size, Value::Vars(d.sizes.clone())),
    };
    // The footprint places the row against the device's levels (and in the report).
    let params = params.with(Key::Footprint, footprint);
    let overrides: Vec<(&'static str, f64)> = d
        .overrides
        .iter()
        .map(|(name, value)| (leak(name), *value))
        .collect();
    let builder = Case::builder(sizing, params)
        .workgroup(prepared.shape.workgroup_size, 0)
        .needs_subgroups(prepared.shape.uses_subgroups)
        .workgroups(prepared.workgroups)
        .constants(overrides)
        .moves(bytes / 4, bytes)
        .buffers(prepared.buffers.clone())
        .slots(prepared.shape.bindings.iter().map(|b| b.slot).collect());
    let builder = match unverified {
        Some(why) => builder.unverified(why),
        None => builder,
    };
    // References only where the interpreter ran these very inputs.
    let references = checked
        .filter(|(_, scale)| *scale == 1.0)
        .map(|(interpreted, _)| Arc::new(interpreted));
    let written: Vec<KernelBinding> = prepared
        .shape
        .bindings
        .iter()
        .filter(|b| b.access == BindingAccess::ReadWrite)
        .cloned()
        .collect();
    let data_inputs: Vec<Contents> = prepared
        .shape
        .bindings
        .iter()
        .zip(&prepared.inputs)
        .filter(|(b, _)| b.access != BindingAccess::Uniform)
        .map(|(_, contents)| contents.clone())
        .collect();
    let agreeing = written.clone();
    let builder = builder.agree(Arc::new(move |first: Vec<Arc<Vec<u32>>>| {
        agreeing
            .iter()
            .zip(first)
            .map(|(bound, words)| checked::agreeing(bound, words))
            .collect()
    }));
    let case = builder.data(move || CaseData {
        inputs: data_inputs.iter().map(Contents::words).collect(),
        expected: match &references {
            Some(interpreted) => expectations(&written, interpreted),
            None => Vec::new(),
        },
    });
    Ok(Instance {
        experiment,
        case,
        shape: prepared.shape,
        bytes_source,
    })
}

/// What the interpreter made of the kernel (at a smaller size, with the scale of this
/// size's storage bytes to that one's), and why the outputs are not checked, if not.
fn verification(
    d: &Description,
    prepared: &Prepared,
    sizing: &Sizing,
) -> (Option<(Interpreted, f64)>, Option<String>) {
    match &d.verify {
        Verify::Skip(why) => (None, Some(why.clone())),
        Verify::Reference(reference) => match referenced(reference, prepared) {
            Ok(outputs) => (Some((outputs, 1.0)), None),
            Err(why) => (None, Some(why)),
        },
        Verify::Interpreter => match prepared.interpreted(d, sizing) {
            Ok(interpreted) => (Some((interpreted, 1.0)), None),
            Err(why) => (None, Some(format!("the interpreter did not run it: {why}"))),
        },
        Verify::Smaller(smaller) | Verify::Chosen(smaller) => {
            let chosen = match &d.verify {
                Verify::Chosen(_) => format!(
                    " (chosen: the sizes halved together until at most \
                     {INTERPRETED_INVOCATIONS} invocations and {INTERPRETED_ELEMENTS} array \
                     elements, seconds in the interpreter)"
                ),
                _ => String::new(),
            };
            let at = Params::new().with(Key::Size, Value::Vars(smaller.sizes.clone()));
            let ran = Prepared::of(smaller, sizing).and_then(|small| {
                let scale = prepared.storage_bytes() as f64 / small.storage_bytes().max(1) as f64;
                Ok((small.interpreted(smaller, sizing)?, scale))
            });
            match ran {
                Ok(ran) => (
                    Some(ran),
                    Some(format!("verified at {at}{chosen}, that row")),
                ),
                Err(why) => (
                    None,
                    Some(format!("the interpreter did not run {at}: {why}")),
                ),
            }
        }
    }
}

/// The outputs `reference` computes from the prepared inputs, as the interpreter's
/// would be; an error where their lengths are not the bindings'.
fn referenced(reference: &Reference, prepared: &Prepared) -> Result<Interpreted, String> {
    let inputs: Vec<Arc<Vec<u32>>> = prepared.inputs.iter().map(Contents::held).collect();
    let slices: Vec<&[u32]> = inputs.iter().map(|words| words.as_slice()).collect();
    let outputs = (reference.0)(&slices);
    let written: Vec<(&KernelBinding, usize)> = prepared
        .shape
        .bindings
        .iter()
        .zip(&inputs)
        .filter(|(b, _)| b.access == BindingAccess::ReadWrite)
        .map(|(b, words)| (b, words.len()))
        .collect();
    if outputs.len() != written.len() {
        return Err(format!(
            "the Rust reference gave {} outputs where the kernel has {} read_write bindings",
            outputs.len(),
            written.len()
        ));
    }
    for ((bound, len), output) in written.iter().zip(&outputs) {
        if output.len() != *len {
            return Err(format!(
                "the Rust reference gave {} words for `{}`, which has {len}",
                output.len(),
                bound.name
            ));
        }
    }
    Ok(Interpreted {
        // One reference, whatever the subgroup size.
        outputs: vec![(0, outputs.into_iter().map(Arc::new).collect())],
        read_bytes: 0,
        written_bytes: 0,
    })
}

/// The interpreter's run, at each subgroup size the adapter may pick where the kernel
/// uses subgroups.
fn interpreted(
    d: &Description,
    shape: &KernelShape,
    inputs: &[Arc<Vec<u32>>],
    workgroups: [u32; 3],
    sizing: &Sizing,
) -> Result<Interpreted, String> {
    let overrides: Vec<(&str, f64)> = d.overrides.iter().map(|(n, v)| (n.as_str(), *v)).collect();
    let kernel = crate::sim::Kernel::load_entry(&d.name, &d.source, &shape.entry, &overrides)
        .map_err(|e| e.to_string())?;
    let sizes = subgroup_sizes(shape.uses_subgroups, sizing.subgroup_sizes);
    checked::interpret(&kernel, &shape.bindings, inputs, workgroups, &sizes)
}

/// The subgroup sizes to interpret at: each power of two the adapter allows where the
/// kernel uses subgroups, else one (which the outputs do not depend on).
fn subgroup_sizes(uses_subgroups: bool, allowed: Option<(u32, u32)>) -> Vec<u32> {
    let (min, max) = allowed.unwrap_or((32, 32));
    let min = min.clamp(1, 128).next_power_of_two();
    if !uses_subgroups {
        return vec![min];
    }
    std::iter::successors(Some(min), |s| Some(s * 2))
        .take_while(|&s| s <= max.min(128))
        .collect()
}

/// The references of the read-write bindings, in binding order.
fn expectations(
    written: &[KernelBinding],
    interpreted: &Interpreted,
) -> Vec<crate::suite::Expected> {
    written
        .iter()
        .enumerate()
        .map(|(index, bound)| {
            let references = interpreted
                .outputs
                .iter()
                .map(|(size, outputs)| (*size, Arc::clone(&outputs[index])))
                .collect();
            checked::expected(bound, references)
        })
        .collect()
}

/// An error naming a flag's binding or field that the kernel does not have.
fn check_names(d: &Description, shape: &KernelShape) -> Result<(), String> {
    let names: Vec<&str> = shape.bindings.iter().map(|b| b.name.as_str()).collect();
    let unknown = |flag: &str, name: &str| {
        format!(
            "{}: {flag} {name}: no binding `{name}` (the kernel's: {})",
            d.file,
            names.join(", ")
        )
    };
    for (name, _) in &d.counts {
        match shape.bindings.iter().find(|b| &b.name == name) {
            None => return Err(unknown("--buffer", name)),
            Some(b) if b.tail.is_none() => {
                return Err(format!(
                    "{}: --buffer {name}: `{name}` has a fixed size; --buffer sizes a \
                     runtime-sized array",
                    d.file
                ));
            }
            Some(_) => {}
        }
    }
    for (name, _) in &d.fills {
        match shape.bindings.iter().find(|b| &b.name == name) {
            None => return Err(unknown("--init", name)),
            Some(b) if b.access == BindingAccess::Uniform => {
                return Err(format!(
                    "{}: --init {name}: `{name}` is a uniform; set its fields with --uniform",
                    d.file
                ));
            }
            Some(_) => {}
        }
    }
    Ok(())
}

/// Each binding's buffer: a uniform's words, a storage buffer's size, within the
/// device's limits.
fn buffers(d: &Description, shape: &KernelShape, sizing: &Sizing) -> Result<Vec<Buffer>, String> {
    let mut unset = Vec::new();
    let mut buffers = Vec::new();
    for bound in &shape.bindings {
        if bound.access == BindingAccess::Uniform {
            buffers.push(Buffer::Uniform(uniform(d, bound, &mut unset)?));
            continue;
        }
        if given(d, bound) {
            uniform(d, bound, &mut unset)?;
        }
        let count = match (&bound.tail, d.counts.iter().find(|(n, _)| *n == bound.name)) {
            (None, _) => 0,
            (Some(_), Some((_, count))) => *count,
            (Some(_), None) => {
                return Err(format!(
                    "{}: `{}` is a runtime-sized array: give its element count with --buffer \
                     {}=EXPR",
                    d.file, bound.name, bound.name
                ));
            }
        };
        let bytes = bound.bytes(count);
        if bytes > sizing.max_binding_bytes {
            return Err(format!(
                "{}: `{}` of {bytes} bytes exceeds the device's largest storage binding \
                 (max_storage_buffer_binding_size, max_buffer_size) of {} bytes",
                d.file, bound.name, sizing.max_binding_bytes
            ));
        }
        // Whole 16-byte rows, as the GPU's buffers are made: arrayLength sees the same.
        let words = usize::try_from(bytes.div_ceil(16) * 4).map_err(|e| e.to_string())?;
        buffers.push(match bound.access {
            BindingAccess::ReadOnly => Buffer::Input(words),
            _ => Buffer::InOut(words),
        });
    }
    if !unset.is_empty() {
        return Err(format!(
            "{}: fields not set: {} (give each with --uniform NAME.FIELD=VALUE)",
            d.file,
            unset.join(", ")
        ));
    }
    if let Some((name, _)) = d.uniforms.iter().find(|(name, _)| {
        !shape
            .bindings
            .iter()
            .flat_map(|b| b.fields.iter().map(move |f| field_name(b, &f.name)))
            .any(|known| &known == name)
    }) {
        return Err(format!(
            "{}: --uniform {name}: no such uniform field (the kernel's: {})",
            d.file,
            uniform_fields(shape).join(", ")
        ));
    }
    Ok(buffers)
}

/// `NAME.FIELD`, or `NAME` for a uniform that is not a struct.
fn field_name(bound: &KernelBinding, field: &str) -> String {
    if field == bound.name && bound.fields.len() == 1 {
        bound.name.clone()
    } else {
        format!("{}.{field}", bound.name)
    }
}

fn uniform_fields(shape: &KernelShape) -> Vec<String> {
    shape
        .bindings
        .iter()
        .flat_map(|b| b.fields.iter().map(move |f| field_name(b, &f.name)))
        .collect()
}

/// Whether `--uniform` sets a field of storage binding `bound`: then it starts with
/// those values, and every field must be given.
fn given(d: &Description, bound: &KernelBinding) -> bool {
    bound.access != BindingAccess::Uniform
        && bound.fields.iter().any(|field| {
            let name = field_name(bound, &field.name);
            d.uniforms.iter().any(|(given, _)| *given == name)
        })
}

/// A uniform's words with its fields written (or a storage binding's that `--uniform`
/// sets); the fields not given are added to `unset`.
fn uniform(
    d: &Description,
    bound: &KernelBinding,
    unset: &mut Vec<String>,
) -> Result<Vec<u32>, String> {
    let mut words = vec![0u32; bound.fixed_bytes.div_ceil(4) as usize];
    for field in &bound.fields {
        let name = field_name(bound, &field.name);
        let Some((_, values)) = d.uniforms.iter().find(|(n, _)| *n == name) else {
            unset.push(name);
            continue;
        };
        if values.len() != field.components as usize {
            return Err(format!(
                "{}: --uniform {name}: {} component{} given where the field has {}",
                d.file,
                values.len(),
                crate::plural(values.len()),
                field.components
            ));
        }
        for (index, &value) in values.iter().enumerate() {
            let word = component(field.kind, field.width, value)
                .map_err(|why| format!("{}: --uniform {name}: {why}", d.file))?;
            let at = (field.offset / 4) as usize + index;
            words[at] = word;
        }
    }
    Ok(words)
}

/// One component's bits.
#[expect(
    clippy::cast_possible_truncation,
    reason = "`whole` checks an integer's range first; a float field takes the nearest f32"
)]
fn component(kind: naga::ScalarKind, width: u8, value: f64) -> Result<u32, String> {
    let whole = |low: f64, high: f64| {
        (value.fract() == 0.0 && (low..=high).contains(&value))
            .then_some(value)
            .ok_or_else(|| format!("{value} is not a whole number in [{low}, {high}]"))
    };
    match (kind, width) {
        (naga::ScalarKind::Float, 4) => Ok((value as f32).to_bits()),
        (naga::ScalarKind::Sint, 4) => {
            Ok(whole(f64::from(i32::MIN), f64::from(i32::MAX))? as i32 as u32)
        }
        (naga::ScalarKind::Uint, 4) => Ok(whole(0.0, f64::from(u32::MAX))? as u32),
        (naga::ScalarKind::Bool, _) => Ok(u32::from(whole(0.0, 1.0)? == 1.0)),
        _ => Err(format!("a {kind:?} field of {width} bytes cannot be set")),
    }
}

/// A binding's first contents: its fill, as its words' kinds say.
fn contents(d: &Description, bound: &KernelBinding, buffer: &Buffer, index: usize) -> Contents {
    let len = buffer.words();
    if let Buffer::Uniform(words) = buffer {
        let words = Arc::new(words.clone());
        return Contents {
            len,
            word: Arc::new(move |i| words[i]),
        };
    }
    let set = given(d, bound)
        .then(|| uniform(d, bound, &mut Vec::new()).ok())
        .flatten();
    let fill = match set {
        Some(words) => Fill::Words(Arc::new(words)),
        None => d
            .fills
            .iter()
            .find(|(name, _)| *name == bound.name)
            .map_or(Fill::Init(Init::Random), |(_, fill)| fill.clone()),
    };
    let word: Arc<dyn Fn(usize) -> u32 + Send + Sync> = match fill {
        Fill::Words(words) => Arc::new(move |i| words.get(i).copied().unwrap_or(0)),
        Fill::Init(init) => {
            let seed = 0x6b65_726e_656c + index as u64;
            let bound = bound.clone();
            Arc::new(move |at| initial(init, bound.word(at), element(&bound, at), mix(at, seed)))
        }
    };
    Contents { len, word }
}

/// The element of its array that word `at` of `bound` belongs to (for a ramp).
fn element(bound: &KernelBinding, at: usize) -> u64 {
    let byte = 4 * at as u64;
    match &bound.tail {
        Some(tail) if byte >= u64::from(bound.fixed_bytes) => {
            (byte - u64::from(bound.fixed_bytes)) / u64::from(tail.stride)
        }
        _ => at as u64,
    }
}

/// A word of kind `word` as `init` makes it, from the element's index and a hash.
#[expect(
    clippy::cast_possible_truncation,
    reason = "a ramp takes the element's low 32 bits, as a u32 counter would"
)]
fn initial(init: Init, word: Word, element: u64, hash: u64) -> u32 {
    let unit = |h: u64| (h >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0;
    let half = |v: f32| u32::from(checked::f32_to_f16(v));
    match (init, word) {
        (Init::Zeros, _) => 0,
        (Init::Ones, Word::Exact) => 1,
        (Init::Ones, Word::F32) => 1f32.to_bits(),
        (Init::Ones, Word::F16x2) => half(1.0) * 0x1_0001,
        (Init::Ramp, Word::Exact) => element as u32,
        (Init::Ramp, Word::F32) => (element as f32).to_bits(),
        (Init::Ramp, Word::F16x2) => half(element as f32) * 0x1_0001,
        (Init::Random, Word::Exact) => (hash & 0xFFFF) as u32,
        (Init::Random, Word::F32) => unit(hash).to_bits(),
        (Init::Random, Word::F16x2) => half(unit(hash)) | half(unit(hash << 20)) << 16,
    }
}

/// The dispatch: given, or `n / <workgroup x>` rounded up (a 2-D grid where that
/// exceeds the device's limit in x, see [`grid`]); within the device's limit.
fn workgroups(d: &Description, shape: &KernelShape, sizing: &Sizing) -> Result<[u32; 3], String> {
    let workgroups = match (d.workgroups, d.sizes.iter().find(|(name, _)| name == "n")) {
        (Some(workgroups), _) => workgroups,
        (None, Some((_, n))) => grid(
            n.div_ceil(u64::from(shape.workgroup_size[0])),
            sizing.max_workgroups_per_dimension,
        )
        .map_err(|why| format!("{}: {why}", d.file))?,
        (None, None) => {
            return Err(format!(
                "{}: give the dispatch with --workgroups X[,Y[,Z]] (or a size `n`, which \
                 dispatches n/{} workgroups)",
                d.file, shape.workgroup_size[0]
            ));
        }
    };
    let limit = sizing.max_workgroups_per_dimension;
    if let Some(count) = workgroups.iter().find(|&&count| count > limit) {
        return Err(format!(
            "{}: {count} workgroups in one dimension exceed the device's \
             max_compute_workgroups_per_dimension of {limit}",
            d.file
        ));
    }
    if workgroups.contains(&0) {
        return Err(format!(
            "{}: a dispatch of {workgroups:?} workgroups runs nothing",
            d.file
        ));
    }
    Ok(workgroups)
}

/// The invocations of a dispatch of `workgroups` workgroups of `size`.
fn invocations(workgroups: [u32; 3], size: [u32; 3]) -> u64 {
    let count = |dims: [u32; 3]| dims.iter().map(|&d| u64::from(d)).product::<u64>();
    count(workgroups) * count(size)
}

/// About the invocations of `d`'s dispatch before a device is known (the default
/// grid's split aside): `None` where the kernel does not reflect or has no dispatch.
pub(crate) fn estimated_invocations(d: &Description) -> Option<u64> {
    let shape = reflect::shape(&d.file, &d.source, d.entry.as_deref(), &d.overrides).ok()?;
    let size = shape.workgroup_size;
    match (d.workgroups, d.sizes.iter().find(|(name, _)| name == "n")) {
        (Some(workgroups), _) => Some(invocations(workgroups, size)),
        (None, Some((_, n))) => {
            let x = n.div_ceil(u64::from(size[0]));
            Some(x * u64::from(size[0]) * u64::from(size[1]) * u64::from(size[2]))
        }
        (None, None) => None,
    }
}

/// `count` workgroups as a grid: all in x where `limit` allows, else a 2-D grid of
/// about `count` (x × y ≥ count, y as small as can be): the kernel then indexes
/// `global_id.y * (num_workgroups.x * <workgroup x>) + global_id.x` and guards.
pub(crate) fn grid(count: u64, limit: u32) -> Result<[u32; 3], String> {
    let limit64 = u64::from(limit.max(1));
    let y = count.div_ceil(limit64);
    let x = count.div_ceil(y.max(1));
    match (u32::try_from(x), u32::try_from(y)) {
        (Ok(x), Ok(y)) if y <= limit => Ok([x, y, 1]),
        _ => Err(format!(
            "{count} workgroups exceed the device's max_compute_workgroups_per_dimension \
             of {limit} even as a 2-D grid"
        )),
    }
}

/// The experiment `name` of kernel `kernel`: one per name, leaked (an experiment is
/// `'static`, as the registry's are; a process measures a few kernels at most).
fn experiment(name: &str, kernel: &'static str) -> &'static Experiment {
    static MADE: Mutex<Vec<&'static Experiment>> = Mutex::new(Vec::new());
    let mut made = MADE.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(known) = made.iter().find(|e| e.variant == name) {
        return known;
    }
    let experiment: &'static Experiment = Box::leak(Box::new(Experiment {
        family: Family::Kernel,
        variant: leak(name),
        kernel: Some(kernel),
        // Its cases are made from the flags, never from a sizing alone.
        cases: |_| Vec::new(),
        measure: Measure::Kernel,
        twin: Twin::None("a user's kernel has no CUDA twin"),
    }));
    made.push(experiment);
    experiment
}

/// `name`, leaked: overrides are named by `&'static str` in a case.
fn leak(name: &str) -> &'static str {
    static LEAKED: Mutex<Vec<&'static str>> = Mutex::new(Vec::new());
    let mut leaked = LEAKED.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(known) = leaked.iter().find(|known| **known == name) {
        return known;
    }
    let made: &'static str = Box::leak(name.to_owned().into_boxed_str());
    leaked.push(made);
    made
}

#[cfg(test)]
mod tests {
    use super::grid;

    #[test]
    fn the_default_grid_is_1_d_within_the_limit_and_2_d_beyond() {
        assert_eq!(grid(4096, 65535), Ok([4096, 1, 1]));
        assert_eq!(grid(65535, 65535), Ok([65535, 1, 1]));
        // saxpy at n = 2^28 in workgroups of 256.
        let [x, y, _] = grid(1 << 20, 65535).unwrap();
        assert_eq!((x, y), (61681, 17));
        assert!(u64::from(x) * u64::from(y) >= 1 << 20);
        assert!(
            grid(1 << 40, 65535)
                .unwrap_err()
                .contains("even as a 2-D grid")
        );
    }
}
