//! The suite's own cases on the simulator: the buffers a case gives the GPU, bound to
//! the interpreter at the same bindings, so the simulated kernel is the measured one.

use crate::experiments::{BufferInit, Case, Expected, Experiment, POISON, Prepared};
use crate::shaders;
use crate::sim::{Binding, Kernel, Launch, NoTrace, SimError, run};

/// Loads a case's kernel with its override constants.
pub fn load(experiment: &Experiment, case: &Case) -> Result<Kernel, SimError> {
    let source = shaders::source(experiment.kernel).ok_or_else(|| SimError::Runtime {
        shader: experiment.kernel.to_owned(),
        detail: format!("no shaders/{}.wgsl", experiment.kernel),
    })?;
    Kernel::load(experiment.kernel, source, &case.overrides)
}

/// Turns a case's buffers into interpreter bindings (outputs poisoned), and returns
/// what each output must hold afterwards, by binding index.
pub fn bindings(prepared: Prepared) -> (Vec<Binding>, Vec<(usize, Expected)>) {
    let mut bindings = Vec::new();
    let mut expected = Vec::new();
    for (index, init) in prepared.buffers.into_iter().enumerate() {
        let words = match init {
            BufferInit::Uniform(words) | BufferInit::Input(words) => words,
            BufferInit::Output { expected: e } => {
                let poison = vec![POISON; e.len_words()];
                expected.push((index, e));
                poison
            }
        };
        bindings.push(Binding {
            group: 0,
            binding: index as u32,
            data: bytemuck::cast_slice(&words).to_vec(),
        });
    }
    (bindings, expected)
}

/// Runs every workgroup of one dispatch of the case in the interpreter and checks its
/// outputs against the case's CPU reference, as the GPU path does.
pub fn execute(experiment: &Experiment, case: &Case, subgroup_size: u32) -> Result<(), String> {
    let kernel = load(experiment, case).map_err(|e| e.to_string())?;
    let (mut bindings, expected) = bindings((case.prepare)());
    run(
        &kernel,
        &mut bindings,
        &Launch::all(case.workgroups, subgroup_size),
        &mut NoTrace,
    )
    .map_err(|e| e.to_string())?;
    for (index, expected) in expected {
        let words: Vec<u32> = bindings[index]
            .data
            .chunks_exact(4)
            .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
            .collect();
        expected.check(&words)?;
    }
    Ok(())
}
