//! A user's kernel as naga reads it: its compute entry point and workgroup size (with
//! its overrides resolved), and each binding's name, access and byte layout from
//! `naga::proc::Layouter` — the sized part of a storage buffer, the element of a
//! runtime-sized array that ends it (alone or as a struct's last member), and a
//! uniform struct's fields with their offsets (vec3 alignment, padding).
//!
//! Parse and validation errors are one line: the file, line and column, and naga's
//! message.

use naga::{AddressSpace, Module, ScalarKind, TypeInner};

/// How the kernel sees a binding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BindingAccess {
    Uniform,
    ReadOnly,
    ReadWrite,
}

/// How a 32-bit word of a buffer compares: bit for bit, or as floats within the
/// tolerance (one f32, or two f16 halves).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Word {
    /// Bit for bit.
    Exact,
    /// One f32, within the tolerance.
    F32,
    /// Two f16 halves, each within the tolerance.
    F16x2,
}

/// A uniform field: `--uniform NAME.FIELD=…` writes its components at its offset.
#[derive(Clone, Debug, PartialEq)]
pub struct Field {
    /// The field's name (`NAME.FIELD`).
    pub name: String,
    /// Its byte offset in the uniform.
    pub offset: u32,
    /// The scalar type of its components.
    pub kind: ScalarKind,
    /// Bytes of one component: 4, or 2 for f16.
    pub width: u8,
    /// 1 for a scalar, 2 to 4 for a vector.
    pub(crate) components: u32,
}

/// A runtime-sized array ending a storage buffer: `--buffer NAME=COUNT` sizes it.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Tail {
    pub stride: u32,
    /// How each word of one element compares.
    pub words: Vec<Word>,
}

/// One binding of the kernel.
#[derive(Clone, Debug, PartialEq)]
pub struct KernelBinding {
    /// The WGSL variable's name.
    pub name: String,
    /// Its `@group` and `@binding`.
    pub slot: naga::ResourceBinding,
    pub(crate) access: BindingAccess,
    /// Bytes before the runtime-sized array, or of the whole binding if it has none.
    pub(crate) fixed_bytes: u32,
    /// How each word of the sized part compares.
    pub words: Vec<Word>,
    pub(crate) tail: Option<Tail>,
    /// A uniform's fields (a struct's members, or the variable itself); a fixed-size
    /// storage binding's too, where they are scalars and vectors.
    pub fields: Vec<Field>,
}

impl KernelBinding {
    /// Bytes of the binding with `count` elements in its runtime-sized array.
    pub fn bytes(&self, count: u64) -> u64 {
        let tail = self
            .tail
            .as_ref()
            .map_or(0, |t| u64::from(t.stride) * count);
        u64::from(self.fixed_bytes) + tail
    }

    /// How word `index` of the buffer compares.
    pub fn word(&self, index: usize) -> Word {
        match (self.words.get(index), &self.tail) {
            (Some(word), _) => *word,
            (None, Some(tail)) if !tail.words.is_empty() => {
                tail.words[(index - self.words.len()) % tail.words.len()]
            }
            _ => Word::Exact,
        }
    }
}

/// What `membench kernel` needs of a kernel.
#[derive(Clone, Debug)]
pub struct KernelShape {
    /// The entry point's name.
    pub entry: String,
    /// The entry point's workgroup size, overrides resolved.
    pub workgroup_size: [u32; 3],
    /// In group then binding order, numbered 0, 1, 2, … in each group.
    pub bindings: Vec<KernelBinding>,
    /// The names of its `override` constants.
    pub overrides: Vec<String>,
    /// Whether it uses subgroup operations or built-ins: its outputs may depend on the
    /// subgroup size the driver picks.
    pub(crate) uses_subgroups: bool,
}

/// Reads the kernel `source` (from `file`, for messages): its entry (`entry`, or the
/// only compute entry point) with `overrides` resolved, and its bindings.
pub fn shape(
    file: &str,
    source: &str,
    entry: Option<&str>,
    overrides: &[(String, f64)],
) -> Result<KernelShape, String> {
    let module = naga::front::wgsl::parse_str(source).map_err(|e| {
        let at = located(file, e.location(source));
        format!("{at}{}", one_line(e.message()))
    })?;
    let info = naga::valid::Validator::new(
        naga::valid::ValidationFlags::all(),
        naga::valid::Capabilities::all(),
    )
    .validate(&module)
    .map_err(|e| {
        let at = located(file, e.location(source));
        format!("{at}{}", chain(e.as_inner()))
    })?;
    let entry = choose_entry(file, &module, entry)?;
    let known: Vec<String> = module
        .overrides
        .iter()
        .filter_map(|(_, o)| o.name.clone())
        .collect();
    if let Some((name, _)) = overrides.iter().find(|(name, _)| !known.contains(name)) {
        return Err(format!(
            "{file}: no override `{name}` (the kernel's: {})",
            listed(&known)
        ));
    }
    let constants: naga::back::PipelineConstants = overrides.iter().cloned().collect();
    let (resolved, _) = naga::back::pipeline_constants::process_overrides(
        &module,
        &info,
        Some((naga::ShaderStage::Compute, &entry)),
        &constants,
    )
    .map_err(|e| format!("{file}: {} (give it with --override NAME=VALUE)", chain(&e)))?;
    let workgroup_size = resolved
        .entry_points
        .iter()
        .find(|ep| ep.name == entry)
        .map_or([1, 1, 1], |ep| ep.workgroup_size);
    Ok(KernelShape {
        bindings: bindings(file, &resolved)?,
        entry,
        workgroup_size,
        overrides: known,
        // A text search, conservative: a false hit only runs the interpreter at each
        // subgroup size the adapter may pick.
        uses_subgroups: source.contains("subgroup"),
    })
}

/// `FILE:LINE:COL: ` where naga knows the place, else `FILE: `.
fn located(file: &str, at: Option<naga::SourceLocation>) -> String {
    match at {
        Some(at) => format!("{file}:{}:{}: ", at.line_number, at.line_position),
        None => format!("{file}: "),
    }
}

/// An error and its causes on one line.
fn chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text = format!("{text}: {cause}");
        source = cause.source();
    }
    one_line(&text)
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn listed(names: &[String]) -> String {
    if names.is_empty() {
        "none".to_owned()
    } else {
        names.join(", ")
    }
}

fn choose_entry(file: &str, module: &Module, entry: Option<&str>) -> Result<String, String> {
    let computes: Vec<String> = module
        .entry_points
        .iter()
        .filter(|ep| ep.stage == naga::ShaderStage::Compute)
        .map(|ep| ep.name.clone())
        .collect();
    match (entry, computes.as_slice()) {
        (Some(wanted), _) if computes.iter().any(|name| name == wanted) => Ok(wanted.to_owned()),
        (Some(wanted), _) => Err(format!(
            "{file}: no compute entry point `{wanted}` (the kernel's: {})",
            listed(&computes)
        )),
        (None, [only]) => Ok(only.clone()),
        (None, []) => Err(format!("{file}: no @compute entry point")),
        (None, several) => Err(format!(
            "{file}: several compute entry points ({}): choose one with --entry",
            several.join(", ")
        )),
    }
}

fn bindings(file: &str, module: &Module) -> Result<Vec<KernelBinding>, String> {
    let mut layouter = naga::proc::Layouter::default();
    layouter
        .update(module.to_ctx())
        .map_err(|e| format!("{file}: layout: {e}"))?;
    let mut bound = Vec::new();
    for (_, global) in module.global_variables.iter() {
        let Some(slot) = &global.binding else {
            continue;
        };
        let name = global.name.clone().unwrap_or_default();
        let at = format!(
            "`{name}` (@group({}) @binding({}))",
            slot.group, slot.binding
        );
        let access = match global.space {
            AddressSpace::Uniform => BindingAccess::Uniform,
            AddressSpace::Storage { access } if access.contains(naga::StorageAccess::STORE) => {
                BindingAccess::ReadWrite
            }
            AddressSpace::Storage { .. } => BindingAccess::ReadOnly,
            _ => {
                return Err(format!(
                    "{file}: binding {at} is a texture or sampler: membench kernel binds \
                     storage and uniform buffers only"
                ));
            }
        };
        let mut layout = Layout::default();
        layout.walk(module, &layouter, global.ty, 0, true)?;
        let fields = match access {
            BindingAccess::Uniform => fields(module, global.ty, &name)
                .map_err(|why| format!("{file}: uniform {at}: {why}"))?,
            // A fixed-size storage binding of scalars and vectors (a shape kept in a
            // storage buffer) takes its values as a uniform does; others have none.
            _ if layout.tail.is_none() => fields(module, global.ty, &name).unwrap_or_default(),
            _ => Vec::new(),
        };
        let fixed_bytes = match &layout.tail {
            Some((offset, _)) => *offset,
            None => layouter[global.ty].size,
        };
        let mut words = layout.words;
        words.resize(fixed_bytes.div_ceil(4) as usize, Word::Exact);
        bound.push(KernelBinding {
            name,
            slot: *slot,
            access,
            fixed_bytes,
            words,
            tail: layout.tail.map(|(_, tail)| tail),
            fields,
        });
    }
    // In group then binding order: the interpreter and the wgpu path bind each at its
    // slot, so gaps are fine.
    bound.sort_by_key(|b| (b.slot.group, b.slot.binding));
    Ok(bound)
}

/// How the words of a type compare, walked with their byte offsets.
#[derive(Default)]
struct Layout {
    words: Vec<Word>,
    /// The runtime-sized array: its byte offset and element.
    tail: Option<(u32, Tail)>,
}

impl Layout {
    fn mark(&mut self, offset: u32, word: Word) {
        let index = (offset / 4) as usize;
        if self.words.len() <= index {
            self.words.resize(index + 1, Word::Exact);
        }
        self.words[index] = word;
    }

    fn scalar(&mut self, offset: u32, scalar: naga::Scalar, count: u32) {
        let word = match (scalar.kind, scalar.width) {
            (ScalarKind::Float, 4) => Word::F32,
            (ScalarKind::Float, 2) => Word::F16x2,
            _ => Word::Exact,
        };
        for component in 0..count {
            self.mark(offset + component * u32::from(scalar.width), word);
        }
    }

    /// Walks type `ty` at byte `offset`; `last` where a runtime-sized array may end it.
    fn walk(
        &mut self,
        module: &Module,
        layouter: &naga::proc::Layouter,
        ty: naga::Handle<naga::Type>,
        offset: u32,
        last: bool,
    ) -> Result<(), String> {
        match &module.types[ty].inner {
            TypeInner::Scalar(scalar) | TypeInner::Atomic(scalar) => {
                self.scalar(offset, *scalar, 1)
            }
            TypeInner::Vector { size, scalar } => self.scalar(offset, *scalar, *size as u32),
            TypeInner::Matrix {
                columns,
                rows,
                scalar,
            } => {
                let column = layouter[ty].size / *columns as u32;
                for c in 0..*columns as u32 {
                    self.scalar(offset + c * column, *scalar, *rows as u32);
                }
            }
            TypeInner::Array { base, size, stride } => match size {
                naga::ArraySize::Constant(count) => {
                    for index in 0..count.get() {
                        self.walk(module, layouter, *base, offset + index * stride, false)?;
                    }
                }
                naga::ArraySize::Dynamic if last => {
                    let mut element = Layout::default();
                    element.walk(module, layouter, *base, 0, false)?;
                    let mut words = element.words;
                    words.resize((stride / 4) as usize, Word::Exact);
                    self.tail = Some((
                        offset,
                        Tail {
                            stride: *stride,
                            words,
                        },
                    ));
                }
                _ => return Err("an array sized by an override".to_owned()),
            },
            TypeInner::Struct { members, .. } => {
                for (index, member) in members.iter().enumerate() {
                    let last = last && index + 1 == members.len();
                    self.walk(module, layouter, member.ty, offset + member.offset, last)?;
                }
            }
            other => return Err(format!("a {other:?} in a buffer")),
        }
        Ok(())
    }
}

/// A uniform's fields: a struct's scalar and vector members, or the variable itself.
fn fields(module: &Module, ty: naga::Handle<naga::Type>, name: &str) -> Result<Vec<Field>, String> {
    let field = |name: &str, ty: naga::Handle<naga::Type>, offset: u32| {
        let (scalar, components) = match &module.types[ty].inner {
            TypeInner::Scalar(scalar) => (*scalar, 1),
            TypeInner::Vector { size, scalar } => (*scalar, *size as u32),
            _ => {
                return Err(format!(
                    "`{name}` is neither a scalar nor a vector: --uniform cannot set it"
                ));
            }
        };
        Ok(Field {
            name: name.to_owned(),
            offset,
            kind: scalar.kind,
            width: scalar.width,
            components,
        })
    };
    match &module.types[ty].inner {
        TypeInner::Struct { members, .. } => members
            .iter()
            .map(|m| field(m.name.as_deref().unwrap_or_default(), m.ty, m.offset))
            .collect(),
        _ => Ok(vec![field(name, ty, 0)?]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const STRUCTS: &str = "
        struct Meta { scale: f32, shape: vec3<i32>, n: u32 }
        struct Rows { count: u32, pad: u32, data: array<vec2<f32>> }
        @group(0) @binding(0) var<uniform> info: Meta;
        @group(0) @binding(1) var<storage, read> rows: Rows;
        @group(0) @binding(2) var<storage, read_write> out: array<f32>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) id: vec3<u32>) {
            out[id.x] = rows.data[id.x].x * info.scale + f32(info.shape.y + i32(info.n));
        }
    ";

    #[test]
    fn a_uniform_struct_with_a_vec3_member_is_laid_out_as_naga_lays_it_out() {
        let shape = shape("k.wgsl", STRUCTS, None, &[]).unwrap();
        assert_eq!(shape.entry, "main");
        assert_eq!(shape.workgroup_size, [64, 1, 1]);
        let info = &shape.bindings[0];
        assert_eq!(info.access, BindingAccess::Uniform);
        let offsets: Vec<(&str, u32, u32)> = info
            .fields
            .iter()
            .map(|f| (f.name.as_str(), f.offset, f.components))
            .collect();
        // vec3<i32> aligns to 16 bytes; the u32 after it fills its fourth word.
        assert_eq!(offsets, [("scale", 0, 1), ("shape", 16, 3), ("n", 28, 1)]);
        assert_eq!(info.fixed_bytes, 32);
        assert_eq!(info.word(0), Word::F32);
        assert_eq!(info.word(5), Word::Exact);
    }

    #[test]
    fn a_runtime_array_ending_a_struct_sizes_the_buffer_after_its_header() {
        let shape = shape("k.wgsl", STRUCTS, None, &[]).unwrap();
        let rows = &shape.bindings[1];
        assert_eq!(
            (rows.access, rows.fixed_bytes),
            (BindingAccess::ReadOnly, 8)
        );
        let tail = rows.tail.as_ref().unwrap();
        assert_eq!(
            (tail.stride, tail.words.as_slice()),
            (8, &[Word::F32; 2][..])
        );
        assert_eq!(rows.bytes(100), 808);
        assert_eq!((rows.word(0), rows.word(2)), (Word::Exact, Word::F32));
        let out = &shape.bindings[2];
        assert_eq!(
            (out.access, out.fixed_bytes, out.bytes(10)),
            (BindingAccess::ReadWrite, 0, 40)
        );
    }

    #[test]
    fn bindings_keep_their_group_and_binding_in_that_order() {
        let source = "@group(1) @binding(2) var<storage, read_write> out: array<f32>;
            @group(1) @binding(0) var<storage, read> input: array<f32>;
            @group(0) @binding(0) var<uniform> scale: f32;
            @compute @workgroup_size(64) fn main(@builtin(global_invocation_id) id: vec3<u32>) {
                out[id.x] = input[id.x] * scale;
            }";
        let shape = shape("k.wgsl", source, None, &[]).unwrap();
        let slots: Vec<(&str, u32, u32)> = shape
            .bindings
            .iter()
            .map(|b| (b.name.as_str(), b.slot.group, b.slot.binding))
            .collect();
        assert_eq!(slots, [("scale", 0, 0), ("input", 1, 0), ("out", 1, 2)]);
    }

    #[test]
    fn bad_kernels_get_one_line_naming_the_place_or_the_binding() {
        let error = shape("k.wgsl", "fn main( {", None, &[]).unwrap_err();
        assert!(error.starts_with("k.wgsl:1:"), "{error}");
        assert!(!error.contains('\n'), "{error}");
        let invalid = "@compute @workgroup_size(1) fn main() { let x: u32 = 1.5; }";
        let error = shape("k.wgsl", invalid, None, &[]).unwrap_err();
        assert!(error.starts_with("k.wgsl:"), "{error}");
        assert!(!error.contains('\n'), "{error}");
        let texture = "@group(0) @binding(0) var t: texture_2d<f32>;
            @compute @workgroup_size(1) fn main() { _ = textureLoad(t, vec2(0), 0); }";
        let error = shape("k.wgsl", texture, None, &[]).unwrap_err();
        assert_eq!(
            error,
            "k.wgsl: binding `t` (@group(0) @binding(0)) is a texture or sampler: membench \
             kernel binds storage and uniform buffers only"
        );
        let two = "@compute @workgroup_size(1) fn a() {} @compute @workgroup_size(1) fn b() {}";
        let error = shape("k.wgsl", two, None, &[]).unwrap_err();
        assert_eq!(
            error,
            "k.wgsl: several compute entry points (a, b): choose one with --entry"
        );
        assert_eq!(shape("k.wgsl", two, Some("b"), &[]).unwrap().entry, "b");
        let error = shape("k.wgsl", two, Some("c"), &[]).unwrap_err();
        assert_eq!(
            error,
            "k.wgsl: no compute entry point `c` (the kernel's: a, b)"
        );
    }

    #[test]
    fn overrides_resolve_the_workgroup_size_and_unknown_ones_are_refused() {
        let source = "override WG: u32; @compute @workgroup_size(WG) fn main() {}";
        let shape_of = |overrides: &[(String, f64)]| shape("k.wgsl", source, None, overrides);
        let shape = shape_of(&[("WG".to_owned(), 128.0)]).unwrap();
        assert_eq!(shape.workgroup_size, [128, 1, 1]);
        let error = shape_of(&[]).unwrap_err();
        assert!(error.contains("--override"), "{error}");
        let error = shape_of(&[("wg".to_owned(), 1.0)]).unwrap_err();
        assert_eq!(error, "k.wgsl: no override `wg` (the kernel's: WG)");
    }
}
