//! The tax-free build's SPIR-V: a kernel's WGSL compiled by naga as wgpu would, minus
//! what WebGPU's safety adds (index clamps, loop counters, guarded division, workgroup
//! zeroing), its overrides resolved, every barrier at the Workgroup memory scope the
//! WGSL spec gives it (naga widens `storageBarrier()` to Device scope; Tint does not),
//! and every loop marked for unrolling (naga leaves the loop control empty, and the
//! NVIDIA Vulkan compiler then keeps loops rolled that NVRTC unrolls on its own).
//! wgpu hands these words to the driver as they are (SPIR-V passthrough).

use std::collections::{HashMap, HashSet};

use rspirv::binary::{Assemble, Disassemble};
use rspirv::dr::{Instruction, Module, Operand};
use rspirv::spirv::{LoopControl, MemorySemantics, Op, Scope, Word};

use crate::error::{Error, Result};

/// SPIR-V 1.3 is the first with subgroup (`GroupNonUniform`) operations; every
/// Vulkan 1.1 driver takes it.
const SPIRV_VERSION: (u8, u8) = (1, 3);

/// What naga lets kernels use: what wgpu allows a device with `Features::SUBGROUP`
/// and `Features::SHADER_F16`, the shader features the suite requests (a kernel that
/// needs one runs only where the device has it), and the f16 conversions inside f32
/// that WGSL's `unpack2x16float` needs.
const CAPABILITIES: naga::valid::Capabilities = naga::valid::Capabilities::SUBGROUP
    .union(naga::valid::Capabilities::SHADER_FLOAT16)
    .union(naga::valid::Capabilities::SHADER_FLOAT16_IN_FLOAT32);

/// A kernel as the tax-free build gives it to the driver.
#[derive(Debug)]
pub(crate) struct TaxFree {
    /// The SPIR-V module, entry point `main`.
    pub words: Vec<u32>,
    /// The entry point's workgroup size, overrides resolved: passthrough asks for it.
    pub workgroup_size: [u32; 3],
    /// How many barriers had their memory scope narrowed from Device to Workgroup.
    #[cfg_attr(
        not(test),
        expect(dead_code, reason = "the tests count what the build changed")
    )]
    pub(crate) barriers_narrowed: usize,
    /// How many loops were marked for unrolling.
    #[cfg_attr(
        not(test),
        expect(dead_code, reason = "the tests count what the build changed")
    )]
    pub(crate) loops_unrolled: usize,
}

/// The tax-free SPIR-V of `source` with `overrides` applied; `kernel` names it in
/// errors.
pub(crate) fn tax_free(kernel: &str, source: &str, overrides: &[(&str, f64)]) -> Result<TaxFree> {
    let (module, workgroup_size, barriers_narrowed, loops_unrolled) =
        rewritten(kernel, source, overrides)?;
    Ok(TaxFree {
        words: module.assemble(),
        workgroup_size,
        barriers_narrowed,
        loops_unrolled,
    })
}

/// The tax-free SPIR-V of `source` as assembly text (`membench list --emit spirv`).
/// Barrier lines end in a comment naming their scopes and semantics, which the
/// instruction itself only gives as constant ids.
pub(crate) fn tax_free_text(
    kernel: &str,
    source: &str,
    overrides: &[(&str, f64)],
) -> Result<String> {
    let (module, ..) = rewritten(kernel, source, overrides)?;
    let constants = int_constants(&module);
    let value = |operand: &Operand| match operand {
        Operand::IdScope(id) | Operand::IdMemorySemantics(id) => {
            constants.get(id).map(|&(_, value)| value)
        }
        _ => None,
    };
    let notes: HashMap<String, String> = module
        .all_inst_iter()
        .filter(|inst| memory_scope_index(inst).is_some())
        .filter_map(|inst| {
            let (semantics, scopes) = inst.operands.split_last()?;
            let scopes = scopes
                .iter()
                .map(|scope| match value(scope).and_then(Scope::from_u32) {
                    Some(scope) => format!("{scope:?}"),
                    None => "?".to_owned(),
                })
                .collect::<Vec<_>>()
                .join(" ");
            let semantics = value(semantics)
                .and_then(MemorySemantics::from_bits)
                .map_or_else(|| "?".to_owned(), |semantics| semantics.disassemble());
            Some((inst.disassemble(), format!("; {scopes} {semantics}")))
        })
        .collect();
    Ok(module
        .disassemble()
        .lines()
        .map(|line| match notes.get(line) {
            Some(note) => format!("{line}    {note}"),
            None => line.to_owned(),
        })
        .collect::<Vec<_>>()
        .join("\n"))
}

/// Naga's SPIR-V of `source` and its workgroup size, with overrides resolved and no
/// runtime checks; its barriers are as naga writes them.
fn naga_spirv(
    kernel: &str,
    source: &str,
    overrides: &[(&str, f64)],
) -> Result<(Vec<u32>, [u32; 3])> {
    let fail = |what: &str, detail: String| Error::Gpu(format!("{kernel}: {what}: {detail}"));
    let module =
        naga::front::wgsl::parse_str(source).map_err(|e| fail("WGSL", e.emit_to_string(source)))?;
    let info = naga::valid::Validator::new(naga::valid::ValidationFlags::all(), CAPABILITIES)
        .validate(&module)
        .map_err(|e| fail("validation", e.emit_to_string(source)))?;
    let constants: naga::back::PipelineConstants = overrides
        .iter()
        .map(|&(name, value)| (name.to_owned(), value))
        .collect();
    let stage = naga::ShaderStage::Compute;
    let entry_point = crate::suite::shaders::entry(kernel);
    let (module, info) = naga::back::pipeline_constants::process_overrides(
        &module,
        &info,
        Some((stage, entry_point)),
        &constants,
    )
    .map_err(|e| fail("overrides", e.to_string()))?;
    let workgroup_size = module
        .entry_points
        .iter()
        .find(|entry| entry.name == entry_point && entry.stage == stage)
        .map(|entry| entry.workgroup_size)
        .ok_or_else(|| {
            fail(
                "entry point",
                format!("no compute entry point {entry_point}"),
            )
        })?;
    let unchecked = naga::proc::BoundsCheckPolicy::Unchecked;
    let options = naga::back::spv::Options {
        lang_version: SPIRV_VERSION,
        // Names only: they make the assembly readable and change no code.
        flags: naga::back::spv::WriterFlags::DEBUG,
        // The WGSL's @group/@binding, which wgpu's Vulkan layouts use as they are.
        fake_missing_bindings: true,
        bounds_check_policies: naga::proc::BoundsCheckPolicies {
            index: unchecked,
            buffer: unchecked,
            image_load: unchecked,
            binding_array: unchecked,
        },
        zero_initialize_workgroup_memory: naga::back::spv::ZeroInitializeWorkgroupMemoryMode::None,
        force_loop_bounding: false,
        emit_int_div_checks: false,
        ..Default::default()
    };
    let pipeline = naga::back::spv::PipelineOptions {
        shader_stage: stage,
        entry_point: entry_point.to_owned(),
    };
    let words = naga::back::spv::write_vec(&module, &info, &options, Some(&pipeline))
        .map_err(|e| fail("SPIR-V", e.to_string()))?;
    Ok((words, workgroup_size))
}

/// Naga's SPIR-V with its barriers narrowed and its loops marked for unrolling: the
/// module, its workgroup size, how many barriers and how many loops changed.
fn rewritten(
    kernel: &str,
    source: &str,
    overrides: &[(&str, f64)],
) -> Result<(Module, [u32; 3], usize, usize)> {
    let (words, workgroup_size) = naga_spirv(kernel, source, overrides)?;
    let mut module = rspirv::dr::load_words(words)
        .map_err(|e| Error::Gpu(format!("{kernel}: naga's SPIR-V: {e}")))?;
    let barriers =
        narrow_barriers(&mut module).map_err(|e| Error::Gpu(format!("{kernel}: barriers: {e}")))?;
    let loops = unroll_loops(&mut module);
    Ok((module, workgroup_size, barriers, loops))
}

/// Asks the driver to unroll every loop: sets `Unroll` (and clears `DontUnroll`) in the
/// loop control of each `OpLoopMerge`; returns how many loops there are. The NVIDIA
/// Vulkan compiler honours the hint: with it, the reductions' tree loops (a barrier
/// per step) and the bank loop ran up to 1.46× faster, A/B in one command (README,
/// "What wgpu costs").
fn unroll_loops(module: &mut Module) -> usize {
    let mut count = 0;
    for inst in module.all_inst_iter_mut() {
        if inst.class.opcode != Op::LoopMerge {
            continue;
        }
        if let Some(Operand::LoopControl(control)) = inst.operands.get_mut(2) {
            *control = (*control - LoopControl::DONT_UNROLL) | LoopControl::UNROLL;
            count += 1;
        }
    }
    count
}

/// Gives every `OpControlBarrier` and `OpMemoryBarrier` whose memory scope is Device the
/// Workgroup scope (a constant of the same type, reused or added); returns how many
/// changed. Their semantics stay as they are.
fn narrow_barriers(module: &mut Module) -> Result<usize, String> {
    let constants = int_constants(module);
    let device: HashSet<(Word, Word)> = module
        .all_inst_iter()
        .filter_map(memory_scope)
        .filter_map(|id| match constants.get(&id) {
            Some(&(ty, value)) if value == Scope::Device as u32 => Some((id, ty)),
            _ => None,
        })
        .collect();
    let mut workgroup = HashMap::new();
    for (device_id, ty) in device {
        let existing = constants
            .iter()
            .find(|&(_, &constant)| constant == (ty, Scope::Workgroup as u32))
            .map(|(&id, _)| id);
        let id = match existing {
            Some(id) => id,
            None => add_constant(module, ty, Scope::Workgroup as u32)?,
        };
        workgroup.insert(device_id, id);
    }
    let mut count = 0;
    for inst in module.all_inst_iter_mut() {
        if let Some(index) = memory_scope_index(inst)
            && let Some(Operand::IdScope(scope)) = inst.operands.get_mut(index)
            && let Some(&narrow) = workgroup.get(scope)
        {
            *scope = narrow;
            count += 1;
        }
    }
    Ok(count)
}

/// The position of a barrier's memory-scope operand; `None` for other instructions.
fn memory_scope_index(inst: &Instruction) -> Option<usize> {
    match inst.class.opcode {
        Op::ControlBarrier => Some(1),
        Op::MemoryBarrier => Some(0),
        _ => None,
    }
}

/// The id of a barrier's memory scope; `None` for other instructions.
fn memory_scope(inst: &Instruction) -> Option<Word> {
    match inst.operands.get(memory_scope_index(inst)?)? {
        Operand::IdScope(id) => Some(*id),
        _ => None,
    }
}

/// Type and value of every 32-bit integer constant, by id: scopes and memory
/// semantics are such constants.
fn int_constants(module: &Module) -> HashMap<Word, (Word, u32)> {
    let int32: HashSet<Word> = module
        .types_global_values
        .iter()
        .filter(|inst| inst.class.opcode == Op::TypeInt)
        .filter(|inst| inst.operands.first() == Some(&Operand::LiteralBit32(32)))
        .filter_map(|inst| inst.result_id)
        .collect();
    module
        .types_global_values
        .iter()
        .filter(|inst| inst.class.opcode == Op::Constant)
        .filter_map(
            |inst| match (inst.result_type, inst.result_id, &inst.operands[..]) {
                (Some(ty), Some(id), [Operand::LiteralBit32(value)]) if int32.contains(&ty) => {
                    Some((id, (ty, *value)))
                }
                _ => None,
            },
        )
        .collect()
}

/// Adds `OpConstant ty value` right after the declaration of `ty`; returns its id.
fn add_constant(module: &mut Module, ty: Word, value: u32) -> Result<Word, String> {
    let header = module.header.as_mut().ok_or("the module has no header")?;
    let id = header.bound;
    header.bound += 1;
    let globals = &mut module.types_global_values;
    let at = globals
        .iter()
        .position(|inst| inst.result_id == Some(ty))
        .ok_or_else(|| format!("type %{ty} is not declared"))?;
    let constant = Instruction::new(
        Op::Constant,
        Some(ty),
        Some(id),
        vec![Operand::LiteralBit32(value)],
    );
    globals.insert(at + 1, constant);
    Ok(id)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suite::{REGISTRY, Sizing, shaders};

    /// A kernel whose `storageBarrier()` naga widens to Device scope.
    const STORAGE_BARRIER: &str = "@group(0) @binding(0) var<storage, read_write> data: array<u32>;\n\
        override WORKGROUP_SIZE: u32;\n\
        @compute @workgroup_size(WORKGROUP_SIZE)\n\
        fn main(@builtin(local_invocation_index) i: u32) {\n\
            data[i] = i;\n\
            storageBarrier();\n\
            data[i] += data[WORKGROUP_SIZE - 1u - i];\n\
        }\n";

    /// The loop control of every `OpLoopMerge` of `words`.
    fn loop_controls(words: &[u32]) -> Vec<LoopControl> {
        let module = rspirv::dr::load_words(words).unwrap();
        module
            .all_inst_iter()
            .filter(|inst| inst.class.opcode == Op::LoopMerge)
            .map(|inst| match inst.operands[2] {
                Operand::LoopControl(control) => control,
                ref other => panic!("loop control operand {other:?}"),
            })
            .collect()
    }

    /// (execution, memory) scope of every `OpControlBarrier` of `words`.
    fn control_barrier_scopes(words: &[u32]) -> Vec<(u32, u32)> {
        let module = rspirv::dr::load_words(words).unwrap();
        let constants = int_constants(&module);
        let value = |operand: &Operand| match operand {
            Operand::IdScope(id) => constants[id].1,
            other => panic!("scope operand {other:?}"),
        };
        module
            .all_inst_iter()
            .filter(|inst| inst.class.opcode == Op::ControlBarrier)
            .map(|inst| (value(&inst.operands[0]), value(&inst.operands[1])))
            .collect()
    }

    #[test]
    fn every_kernel_is_valid_tax_free_spirv_with_workgroup_barriers() {
        let workgroup = Scope::Workgroup as u32;
        let mut built = HashSet::new();
        let (mut narrowed, mut unrolled) = (0, 0);
        for experiment in REGISTRY {
            let Some(kernel) = experiment.kernel else {
                continue;
            };
            let source = shaders::source(kernel).unwrap();
            for case in (experiment.cases)(&Sizing::nominal(true)) {
                if !built.insert(format!("{kernel} {:?}", case.overrides)) {
                    continue;
                }
                let spirv = tax_free(kernel, source, &case.overrides).unwrap();
                assert_eq!(spirv.workgroup_size, case.workgroup_size, "{kernel}");
                // naga's SPIR-V reader lacks the StorageInputOutput16 capability its
                // writer declares for every f16 module: those are read by the driver only.
                if !source.contains("enable f16;") {
                    let bytes: Vec<u8> = bytemuck::cast_slice(&spirv.words).to_vec();
                    let module =
                        naga::front::spv::parse_u8_slice(&bytes, &Default::default()).unwrap();
                    naga::valid::Validator::new(naga::valid::ValidationFlags::all(), CAPABILITIES)
                        .validate(&module)
                        .unwrap_or_else(|e| panic!("{kernel}: {e:?}"));
                }
                let scopes = control_barrier_scopes(&spirv.words);
                assert!(
                    scopes
                        .iter()
                        .all(|&scopes| scopes == (workgroup, workgroup)),
                    "{kernel}: {scopes:?}"
                );
                // naga widens exactly the storage barriers, one instruction each.
                let storage_barriers = source.matches("storageBarrier();").count();
                assert_eq!(spirv.barriers_narrowed, storage_barriers, "{kernel}");
                narrowed += spirv.barriers_narrowed;
                let loops = loop_controls(&spirv.words);
                assert_eq!(loops.len(), spirv.loops_unrolled, "{kernel}");
                assert!(
                    loops.iter().all(|&control| control == LoopControl::UNROLL),
                    "{kernel}: {loops:?}"
                );
                unrolled += spirv.loops_unrolled;
            }
        }
        assert!(narrowed > 0, "no barrier narrowed");
        assert!(unrolled > 0, "no loop marked");
    }

    #[test]
    fn naga_gives_storage_barrier_device_scope_and_tax_free_workgroup() {
        let overrides = [("WORKGROUP_SIZE", 64.0)];
        let (words, workgroup_size) = naga_spirv("test", STORAGE_BARRIER, &overrides).unwrap();
        assert_eq!(workgroup_size, [64, 1, 1]);
        let (workgroup, device) = (Scope::Workgroup as u32, Scope::Device as u32);
        assert_eq!(control_barrier_scopes(&words), [(workgroup, device)]);
        let spirv = tax_free("test", STORAGE_BARRIER, &overrides).unwrap();
        assert_eq!(spirv.barriers_narrowed, 1);
        assert_eq!(
            control_barrier_scopes(&spirv.words),
            [(workgroup, workgroup)]
        );
    }

    #[test]
    fn naga_leaves_loops_to_the_driver_and_tax_free_asks_to_unroll() {
        let source = "@group(0) @binding(0) var<storage, read_write> data: array<u32>;\n\
            @compute @workgroup_size(64)\n\
            fn main(@builtin(local_invocation_index) i: u32) {\n\
                for (var k = 0u; k < data[0]; k++) { data[i] += k; }\n\
                for (var k = 0u; k < 4u; k++) { data[i] *= 3u; workgroupBarrier(); }\n\
            }\n";
        let (words, _) = naga_spirv("test", source, &[]).unwrap();
        assert_eq!(loop_controls(&words), [LoopControl::NONE; 2]);
        let spirv = tax_free("test", source, &[]).unwrap();
        assert_eq!(spirv.loops_unrolled, 2);
        assert_eq!(loop_controls(&spirv.words), [LoopControl::UNROLL; 2]);
    }

    #[test]
    fn a_memory_barrier_gets_a_workgroup_constant_where_none_exists() {
        let mut builder = rspirv::dr::Builder::new();
        let uint = builder.type_int(32, 0);
        let device = builder.constant_bit32(uint, Scope::Device as u32);
        let semantics = MemorySemantics::ACQUIRE_RELEASE | MemorySemantics::UNIFORM_MEMORY;
        let semantics = builder.constant_bit32(uint, semantics.bits());
        let void = builder.type_void();
        let function = builder.type_function(void, []);
        builder
            .begin_function(void, None, rspirv::spirv::FunctionControl::NONE, function)
            .unwrap();
        builder.begin_block(None).unwrap();
        builder.memory_barrier(device, semantics).unwrap();
        builder.ret().unwrap();
        builder.end_function().unwrap();
        let mut module = builder.module();
        assert!(!int_constants(&module).values().any(|&(_, v)| v == 2));
        assert_eq!(narrow_barriers(&mut module), Ok(1));
        let constants = int_constants(&module);
        let scope = module.all_inst_iter().find_map(memory_scope).unwrap();
        assert_eq!(constants[&scope], (uint, Scope::Workgroup as u32));
        // The id is new and the module still loads: the bound grew past it.
        assert_ne!(scope, device);
        rspirv::dr::load_words(module.assemble()).unwrap();
    }

    #[test]
    fn assembly_names_the_workgroup_scope_of_barriers() {
        let text = tax_free_text("test", STORAGE_BARRIER, &[("WORKGROUP_SIZE", 64.0)]).unwrap();
        let barriers: Vec<&str> = text
            .lines()
            .filter(|line| line.contains("OpControlBarrier"))
            .collect();
        assert_eq!(barriers.len(), 1, "{text}");
        assert!(
            barriers[0].ends_with("; Workgroup Workgroup AcquireRelease|UniformMemory"),
            "{}",
            barriers[0]
        );
        assert!(text.contains("OpEntryPoint GLCompute"), "{text}");
    }

    #[test]
    fn a_missing_override_is_an_error() {
        let error = tax_free("test", STORAGE_BARRIER, &[]).unwrap_err();
        assert!(error.to_string().contains("test: overrides"), "{error}");
    }
}
