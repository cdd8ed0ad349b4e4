//! Loading a kernel: parse, validate and resolve overrides as the GPU path does, then
//! lay out what the interpreter needs up front: the scalar/vector leaves and component
//! count of every type, and the shape of every expression's value.

use naga::{
    AddressSpace, ArraySize, Function, Handle, Module, ScalarKind, Type, TypeInner,
    valid::{FunctionInfo, ModuleInfo},
};

use super::SimError;

/// Scalar kinds the interpreter computes with (all 32-bit but bool).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum K {
    U,
    I,
    F,
    B,
}

/// A scalar or vector at a byte offset: the unit of one traced access.
#[derive(Clone, Copy, Debug)]
pub(super) struct Leaf {
    pub(super) offset: u32,
    pub(super) comps: u32,
    /// Bytes per component: 4, or 1 for bool in function/private/workgroup memory.
    pub(super) width: u32,
}

#[derive(Clone, Debug)]
pub(super) enum Pointee {
    Ty(Handle<Type>),
    Val(Leaf),
}

#[derive(Clone, Debug)]
pub(super) struct ExprMeta {
    pub(super) ncomp: u32,
    pub(super) kind: K,
    pub(super) ptr: Option<Pointee>,
}

/// A parsed, validated kernel with its overrides resolved, ready to run.
pub struct Kernel {
    pub(super) name: String,
    pub(super) module: Module,
    pub(super) info: ModuleInfo,
    pub(super) entry: usize,
    pub(super) workgroup_size: [u32; 3],
    pub(super) layouter: naga::proc::Layouter,
    /// Leaves of each type by handle index; `None` for runtime-sized or opaque types.
    pub(super) type_leaves: Vec<Option<Vec<Leaf>>>,
    pub(super) type_ncomp: Vec<u32>,
    pub(super) fn_meta: Vec<Vec<ExprMeta>>,
    pub(super) entry_meta: Vec<ExprMeta>,
    pub(super) wg_vars: Vec<Handle<naga::GlobalVariable>>,
    pub(super) private_vars: Vec<Handle<naga::GlobalVariable>>,
}

impl std::fmt::Debug for Kernel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Kernel")
            .field("name", &self.name)
            .field("workgroup_size", &self.workgroup_size)
            .finish_non_exhaustive()
    }
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

pub(super) fn matrix_column_stride(rows: naga::VectorSize, width: u32) -> u32 {
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

/// Parse, validate with every capability and resolve `override`s for the compute entry
/// point `entry`: the module exactly as the GPU path builds its pipeline from.
fn front(
    shader: &str,
    wgsl: &str,
    entry: &str,
    overrides: &[(&str, f64)],
) -> Result<(Module, ModuleInfo), SimError> {
    use naga::valid::{Capabilities, ValidationFlags, Validator};
    let module = naga::front::wgsl::parse_str(wgsl).map_err(|e| SimError::Parse {
        shader: shader.to_string(),
        message: e.emit_to_string(wgsl),
    })?;
    let info = Validator::new(ValidationFlags::all(), Capabilities::all())
        .validate(&module)
        .map_err(|e| SimError::Validate {
            shader: shader.to_string(),
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
        shader: shader.to_string(),
        message: e.to_string(),
    })?;
    Ok((module.into_owned(), info.into_owned()))
}

impl Kernel {
    /// Load the kernel `name` (used in every error message) with entry point `main`.
    pub fn load(name: &str, wgsl: &str, overrides: &[(&str, f64)]) -> Result<Kernel, SimError> {
        Kernel::load_entry(name, wgsl, "main", overrides)
    }

    /// Load exactly as the GPU path does: parse, validate with every capability, resolve
    /// `override`s for the compute entry point `entry`.
    pub(crate) fn load_entry(
        name: &str,
        wgsl: &str,
        entry: &str,
        overrides: &[(&str, f64)],
    ) -> Result<Kernel, SimError> {
        let shader = name.to_string();
        let (module, info) = front(&shader, wgsl, entry, overrides)?;
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

    /// Names of the `var<workgroup>`s; [`Target::Workgroup`](super::Target::Workgroup)'s `var` indexes this.
    #[cfg(test)]
    pub(crate) fn workgroup_vars(&self) -> Vec<String> {
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

    pub(super) fn unsupported(&self, construct: impl Into<String>) -> SimError {
        SimError::Unsupported {
            shader: self.name.clone(),
            construct: construct.into(),
        }
    }

    pub(super) fn runtime(&self, detail: impl Into<String>) -> SimError {
        SimError::Runtime {
            shader: self.name.clone(),
            detail: detail.into(),
        }
    }

    fn metas(&self, f: &Function, fi: &FunctionInfo) -> Result<Vec<ExprMeta>, SimError> {
        let types = &self.module.types;
        let mut out = Vec::with_capacity(f.expressions.len());
        for (h, _) in f.expressions.iter() {
            out.push(self.meta_of(fi[h].ty.inner_with(types))?);
        }
        Ok(out)
    }

    /// The shape of a value (or the pointee of a pointer) of type `inner`.
    fn meta_of(&self, inner: &TypeInner) -> Result<ExprMeta, SimError> {
        let types = &self.module.types;
        let scalar_meta = |s: naga::Scalar| {
            scalar_kind(s)
                .map(|(k, _)| k)
                .ok_or_else(|| self.unsupported(format!("scalar type {s:?}")))
        };
        Ok(match *inner {
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
        })
    }
}
