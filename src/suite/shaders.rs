//! The suite's WGSL, flattened and embedded at build time from `shaders/` (see
//! `build.rs`): `shaders/<kernel>.wgsl`, or a source that `shaders/permutations` makes
//! the kernel from, with its `#import`s, `#if`s and `${KEY}`s resolved. The CUDA C
//! twins (`shaders/cuda/*.cu`) are embedded with their `#include`d headers in place:
//! [`cuda_source`].

/// A kernel's `shaders/permutations` keys: (KEY, VALUE), no VALUE for a FLAG.
pub(crate) type KernelKeys = &'static [(&'static str, Option<&'static str>)];

include!(concat!(env!("OUT_DIR"), "/shaders.rs"));
include!(concat!(env!("OUT_DIR"), "/cuda.rs"));

/// The flat WGSL of a kernel: what the GPU and the simulator run.
pub fn source(kernel: &str) -> Option<&'static str> {
    SHADERS
        .iter()
        .find(|(name, _)| *name == kernel)
        .map(|(_, source)| *source)
        .or_else(|| registered(kernel).map(|r| r.source))
}

/// The compute entry point of a kernel: `main` for the suite's, the one given for a
/// registered kernel.
pub fn entry(kernel: &str) -> &'static str {
    registered(kernel).map_or("main", |r| r.entry)
}

/// A kernel from outside the suite (`membench kernel`, the library's
/// [`crate::kernel`]), registered at run time. Leaked: experiments and pipelines name
/// kernels by `&'static str`, and a process registers a few at most.
#[derive(Clone, Copy)]
struct Registered {
    name: &'static str,
    source: &'static str,
    entry: &'static str,
    reflection: &'static Reflection,
}

static REGISTERED: std::sync::Mutex<Vec<Registered>> = std::sync::Mutex::new(Vec::new());

fn registered(kernel: &str) -> Option<Registered> {
    let all = REGISTERED
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    all.iter().find(|r| r.name == kernel).copied()
}

/// Registers `source` as kernel `name` with entry point `entry`, reflected as the
/// suite's kernels are; the same registration again is the one before. A name of the
/// suite's, or one registered with another text, is refused.
pub(crate) fn register(name: &str, source: &str, entry: &str) -> Result<&'static str, String> {
    if SHADERS.iter().any(|(suite, _)| *suite == name) {
        return Err(format!(
            "`{name}` is a kernel of the suite: give your kernel another --name"
        ));
    }
    let mut all = REGISTERED
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(known) = all.iter().find(|r| r.name == name) {
        return if known.source == source && known.entry == entry {
            Ok(known.name)
        } else {
            Err(format!(
                "a kernel named `{name}` with another text is already registered"
            ))
        };
    }
    let reflection = reflect(name, source)?;
    let registered = Registered {
        name: Box::leak(name.to_owned().into_boxed_str()),
        source: Box::leak(source.to_owned().into_boxed_str()),
        entry: Box::leak(entry.to_owned().into_boxed_str()),
        reflection: Box::leak(Box::new(reflection)),
    };
    all.push(registered);
    Ok(registered.name)
}

/// Where a kernel's WGSL comes from: `shaders/<kernel>.wgsl`, or its source file and
/// the keys its `shaders/permutations` line sets (`shaders/bank_tile.wgsl PAD=1`).
pub fn origin(kernel: &str) -> Option<&'static str> {
    ORIGINS
        .iter()
        .find(|(name, _)| *name == kernel)
        .map(|(_, origin)| *origin)
}

/// The keys a kernel's `shaders/permutations` line sets, (KEY, VALUE) with no VALUE
/// for a FLAG; none for a plain file. Its CUDA twin is compiled with them as defines,
/// so that one twin source makes the same variants.
#[cfg(feature = "cuda")]
pub(crate) fn keys(kernel: &str) -> KernelKeys {
    KEYS.iter()
        .find(|(name, _)| *name == kernel)
        .map_or(&[], |(_, keys)| *keys)
}

/// The text of `shaders/cuda/<name>.cu`, a CUDA C twin.
#[cfg(any(test, feature = "cuda"))]
pub(crate) fn cuda_source(name: &str) -> Option<&'static str> {
    CUDA_SOURCES
        .iter()
        .find(|(stem, _)| *stem == name)
        .map(|(_, source)| *source)
}

/// What a kernel declares, read from its WGSL with naga: each binding in group then
/// binding order, the byte size of its uniform struct, and its
/// `override` constants.
#[derive(Debug, PartialEq)]
pub struct Reflection {
    /// Each binding's kind, in group then binding order.
    pub bindings: Vec<crate::suite::Binding>,
    /// Each binding's group and binding, in the order of `bindings`.
    pub slots: Vec<naga::ResourceBinding>,
    pub(crate) uniform_bytes: Option<u64>,
    /// The names of its `override` constants.
    pub overrides: Vec<String>,
}

/// Parses and validates `source` as naga (and so wgpu) would, then reflects it.
pub fn reflect(kernel: &str, source: &str) -> Result<Reflection, String> {
    use crate::suite::Binding;
    let module = naga::front::wgsl::parse_str(source)
        .map_err(|e| format!("{kernel}: {}", e.emit_to_string(source)))?;
    naga::valid::Validator::new(
        naga::valid::ValidationFlags::all(),
        naga::valid::Capabilities::all(),
    )
    .validate(&module)
    .map_err(|e| format!("{kernel}: {}", e.emit_to_string(source)))?;
    let mut layouter = naga::proc::Layouter::default();
    layouter
        .update(module.to_ctx())
        .map_err(|e| format!("{kernel}: layout: {e}"))?;
    let mut bound: Vec<(naga::ResourceBinding, Binding, naga::Handle<naga::Type>)> = Vec::new();
    for (_, global) in module.global_variables.iter() {
        let Some(slot) = &global.binding else {
            continue;
        };
        let binding = match global.space {
            naga::AddressSpace::Uniform => Binding::Uniform,
            naga::AddressSpace::Storage { access }
                if access.contains(naga::StorageAccess::STORE) =>
            {
                Binding::ReadWrite
            }
            naga::AddressSpace::Storage { .. } => Binding::ReadOnly,
            naga::AddressSpace::Handle if is_float_texture_2d(&module.types[global.ty].inner) => {
                Binding::Texture
            }
            other => return Err(format!("{kernel}: unsupported binding space {other:?}")),
        };
        bound.push((*slot, binding, global.ty));
    }
    bound.sort_by_key(|(slot, _, _)| (slot.group, slot.binding));
    let uniform_bytes = bound
        .iter()
        .find(|(_, binding, _)| *binding == Binding::Uniform)
        .map(|(_, _, ty)| u64::from(layouter[*ty].size));
    Ok(Reflection {
        slots: bound.iter().map(|(slot, _, _)| *slot).collect(),
        bindings: bound.into_iter().map(|(_, binding, _)| binding).collect(),
        uniform_bytes,
        overrides: module
            .overrides
            .iter()
            .filter_map(|(_, o)| o.name.clone())
            .collect(),
    })
}

/// [`reflect`] for a kernel of the suite, whose cases bind buffer `i` at
/// `@group(0) @binding(i)`: an error where its bindings are numbered otherwise.
pub fn reflect_suite(kernel: &str, source: &str) -> Result<Reflection, String> {
    reflect(kernel, source).and_then(|reflection| numbered(kernel, reflection))
}

/// `reflection` of the suite's kernel `kernel`, whose cases bind buffer `i` at
/// `@group(0) @binding(i)`: an error where its bindings are numbered otherwise. (A
/// user's kernel names each buffer's slot: [`crate::suite::Case::slots`].)
fn numbered(kernel: &str, reflection: Reflection) -> Result<Reflection, String> {
    if reflection.slots.iter().any(|slot| slot.group != 0) {
        return Err(format!(
            "{kernel}: a binding outside group 0; the suite uses group 0"
        ));
    }
    if (0u32..)
        .zip(&reflection.slots)
        .any(|(i, slot)| slot.binding != i)
    {
        return Err(format!("{kernel}: bindings are not numbered 0, 1, 2, …"));
    }
    Ok(reflection)
}

/// Whether `ty` is `texture_2d<f32>`: the one texture the suite binds.
fn is_float_texture_2d(ty: &naga::TypeInner) -> bool {
    matches!(
        ty,
        naga::TypeInner::Image {
            dim: naga::ImageDimension::D2,
            arrayed: false,
            class: naga::ImageClass::Sampled {
                kind: naga::ScalarKind::Float,
                multi: false,
            },
        }
    )
}

/// The reflection of `kernel`, every shader reflected once per process: the one
/// source of a kernel's binding signature and uniform size.
pub fn signature(kernel: &str) -> Result<&'static Reflection, String> {
    static ALL: std::sync::OnceLock<Vec<(&str, Result<Reflection, String>)>> =
        std::sync::OnceLock::new();
    let all = ALL.get_or_init(|| {
        SHADERS
            .iter()
            .map(|(name, source)| (*name, reflect_suite(name, source)))
            .collect()
    });
    match all.iter().find(|(name, _)| *name == kernel) {
        Some((_, Ok(reflection))) => Ok(reflection),
        Some((_, Err(error))) => Err(error.clone()),
        None => registered(kernel)
            .map(|r| r.reflection)
            .ok_or_else(|| format!("no shader named {kernel}")),
    }
}
