//! The simulator as a backend: the buffers a case gives the GPU, bound to the
//! interpreter at the same bindings, so the simulated kernel is the measured one;
//! executed in full and verified like on a GPU, or sampled for a prediction.

use std::cell::RefCell;

use super::Backend;
use crate::error::{Error, Result};
use crate::measure::TimedWork;
use crate::sim::device::DeviceModel;
use crate::sim::model::{self, Prediction};
use crate::sim::{BoundBuffer, Kernel, Launch, NoTrace, SimError, run};
use crate::suite::shaders;
use rayon::prelude::*;

use crate::suite::{
    Buffer, Cache, Case, Expected, Experiment, Family, PIECE_WORDS, POISON, Setting, Words,
};

/// Loads a case's kernel with its override constants.
pub fn load(experiment: &Experiment, case: &Case) -> Result<Kernel, SimError> {
    let missing = |detail: String| SimError::Runtime {
        shader: experiment.name(),
        detail,
    };
    let kernel = experiment.kernel_for(case).map_err(missing)?;
    let source =
        shaders::source(kernel).ok_or_else(|| missing(format!("no kernel named {kernel}")))?;
    Kernel::load_entry(kernel, source, shaders::entry(kernel), &case.overrides)
}

/// The interpreter as a backend: every workgroup of a dispatch, in lock-step, with
/// subgroups of `subgroup_size`.
#[derive(Debug)]
pub struct Simulator {
    /// Lanes per subgroup the interpreter runs together.
    pub subgroup_size: u32,
}

/// A case loaded into the interpreter, its bindings as the last dispatch left them.
#[derive(Debug)]
pub struct Loaded {
    kernel: Kernel,
    bindings: RefCell<Vec<BoundBuffer>>,
    workgroups: [u32; 3],
    /// The binding index of each output, in order.
    outputs: Vec<usize>,
}

impl Backend for Simulator {
    type Prepared = Loaded;

    /// The interpreter runs the WGSL as written, like wgpu's default build.
    fn setting(&self) -> Setting {
        Setting::WGPU
    }

    fn prepare(&self, experiment: &Experiment, case: &Case, inputs: &[Words]) -> Result<Loaded> {
        let kernel = load(experiment, case).map_err(|e| Error::Case(e.to_string()))?;
        Ok(Loaded {
            kernel,
            bindings: RefCell::new(bindings(case, inputs)),
            workgroups: case.workgroups,
            outputs: case
                .buffers
                .iter()
                .enumerate()
                .filter(|(_, b)| b.is_output())
                .map(|(index, _)| index)
                .collect(),
        })
    }

    fn verify(&self, loaded: &Loaded, expected: &[Expected]) -> Result<()> {
        let mut bindings = loaded.bindings.borrow_mut();
        run(
            &loaded.kernel,
            &mut bindings,
            &Launch::all(loaded.workgroups, self.subgroup_size),
            &mut NoTrace,
        )
        .map_err(|e| Error::Case(e.to_string()))?;
        for (&index, expected) in loaded.outputs.iter().zip(expected) {
            let words: Vec<u32> = bytemuck::pod_collect_to_vec(&bindings[index].data);
            expected.check(&words).map_err(Error::Verification)?;
        }
        Ok(())
    }

    /// The interpreter has no clock of the device: its time is the model's
    /// prediction ([`predict`]), never a measurement.
    fn clock<'a>(&'a self, _: &'a Loaded, _: Cache) -> Result<Box<dyn TimedWork + 'a>> {
        Err(Error::Case(
            "the simulator predicts time (membench simulate); it measures none".to_owned(),
        ))
    }
}

/// Interpreter bindings for a case: uniforms as declared, inputs from `inputs` (in
/// binding order), outputs poisoned.
pub fn bindings(case: &Case, inputs: &[Words]) -> Vec<BoundBuffer> {
    let mut inputs = inputs.iter();
    case.buffers
        .iter()
        .enumerate()
        .map(|(index, buffer)| {
            let bytes = match buffer {
                Buffer::Uniform(words) => bytemuck::cast_slice(words).to_vec(),
                Buffer::Input(_) | Buffer::Texture { .. } | Buffer::InOut(_) => {
                    inputs.next().map_or_else(Vec::new, bytes)
                }
                Buffer::Output(words) => bytemuck::cast_slice(&vec![POISON; *words]).to_vec(),
            };
            bound(case.slot(index), buffer, bytes)
        })
        .collect()
}

/// The bytes of `words`, made a piece at a time: a made input is never held twice.
fn bytes(words: &Words) -> Vec<u8> {
    let mut bytes = vec![0u8; 4 * words.len()];
    bytes
        .par_chunks_mut(4 * PIECE_WORDS)
        .enumerate()
        .for_each(|(piece, to)| {
            let start = piece * PIECE_WORDS;
            let from = words.piece(start..start + to.len() / 4);
            to.copy_from_slice(bytemuck::cast_slice(&from));
        });
    bytes
}

/// The interpreter's binding at `slot` of `buffer`, holding `data`: a texture's texels
/// row by row (see [`BoundBuffer::texture_width`]).
fn bound(slot: naga::ResourceBinding, buffer: &Buffer, data: Vec<u8>) -> BoundBuffer {
    BoundBuffer {
        texture_width: match buffer {
            Buffer::Texture { width, .. } => Some(*width),
            _ => None,
        },
        ..BoundBuffer::buffer(slot.group, slot.binding, data)
    }
}

/// Runs every workgroup of one dispatch of the case in the interpreter and checks its
/// outputs against the case's CPU reference, as the GPU path does.
pub fn execute(experiment: &Experiment, case: &Case, subgroup_size: u32) -> Result<(), String> {
    let simulator = Simulator { subgroup_size };
    let data = (case.data)();
    simulator
        .prepare(experiment, case, &data.inputs)
        .and_then(|loaded| simulator.verify(&loaded, &data.expected))
        .map_err(|e| e.to_string())
}

/// Workgroups the prediction of one case simulates at most: a few waves of a large
/// GPU, so a whole suite adds seconds, not minutes, to a run.
pub(crate) const PREDICT_WORKGROUPS: u64 = 1024;

/// Interpreter lane-operations one prediction may spend (about a second in a release
/// build): only kernels whose workgroups loop at length (the on-chip experiments, whose
/// workgroups all do the same) reach it and are sampled on fewer workgroups.
pub(crate) const PREDICT_LANE_OPS: u64 = 1 << 27;

/// Host memory a prediction of `case` takes, about: its inputs where they are its
/// addresses (a chase touches all of them); else the share of its zero-filled buffers
/// that the sampled window's workgroups own (their pages are committed only where the
/// window touches them: the 1 GiB hierarchy case's window of a quarter of its
/// workgroups committed about a fifth of its bytes).
pub(crate) fn prediction_bytes(case: &Case) -> u64 {
    let bytes: u64 = case.buffers.iter().map(Buffer::len_bytes).sum();
    if case.addresses_from_data {
        return bytes;
    }
    let workgroups = crate::sim::exec::grid_size(case.workgroups);
    bytes / workgroups.div_ceil(PREDICT_WORKGROUPS).max(1)
}

/// Predicts one dispatch of the case on `device` from a window of its workgroups
/// (bounded by [`PREDICT_WORKGROUPS`] and [`PREDICT_LANE_OPS`]).
///
/// Inputs and outputs are zero-filled buffers of their real sizes (the uniforms are
/// the case's own): the suite's addresses depend on indices, not on data, so the
/// trace is that of the real inputs, and pages the window never touches cost nothing.
/// A case whose addresses are its data ([`Case::addresses_from_data`]) is predicted on
/// its real inputs, its outputs poisoned as for a dispatch.
pub fn predict(
    experiment: &Experiment,
    case: &Case,
    device: &DeviceModel,
) -> Result<Prediction, SimError> {
    let kernel = load(experiment, case)?;
    let mut bindings: Vec<BoundBuffer> = if case.addresses_from_data {
        // The addresses are the data (a pointer chase): on zeros it would chase one word.
        bindings(case, &(case.data)().inputs)
    } else {
        case.buffers
            .iter()
            .enumerate()
            .map(|(index, buffer)| {
                let data = match buffer {
                    Buffer::Uniform(words) => bytemuck::cast_slice(words).to_vec(),
                    Buffer::Input(_)
                    | Buffer::Texture { .. }
                    | Buffer::Output(_)
                    | Buffer::InOut(_) => {
                        vec![0; crate::host_len(buffer.len_bytes())]
                    }
                };
                bound(case.slot(index), buffer, data)
            })
            .collect()
    };
    let prediction = model::predict_sampled(
        &kernel,
        &mut bindings,
        case.workgroups,
        device,
        case.bytes,
        model::Sampling {
            max_workgroups: PREDICT_WORKGROUPS,
            max_lane_ops: PREDICT_LANE_OPS,
            untimed_first: case.untimed_first,
            cold: case.cache == crate::suite::Cache::Cold,
        },
    )?;
    // The launch family times its dispatches' issue; the others, their kernels.
    if experiment.family != Family::Launch {
        return Ok(prediction);
    }
    crate::sim::dispatch::issued(&prediction, case.dispatch, device, case.bytes).ok_or_else(|| {
        SimError::Unsupported {
            shader: experiment.name(),
            construct: crate::sim::dispatch::unpriced(case.dispatch)
                .unwrap_or_default()
                .to_owned(),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suite::{Sizing, select};

    fn case(id: &str) -> Case {
        let selected = select(&Sizing::nominal(false), &[id.to_owned()]).unwrap();
        selected.into_iter().next().unwrap().1
    }

    #[test]
    fn a_prediction_counts_a_chase_whole_and_zero_filled_buffers_by_the_windows_share() {
        let bytes = |case: &Case| case.buffers.iter().map(Buffer::len_bytes).sum::<u64>();
        // The chase's addresses are its data: every byte is made.
        let chase = case("latency/chase/footprint=1073741824");
        assert_eq!(prediction_bytes(&chase), bytes(&chase));
        // 4096 workgroups, a window of 1024: a quarter of the buffers' bytes.
        let sweep = case("hierarchy/dram_read/size=1073741824");
        let workgroups = crate::sim::exec::grid_size(sweep.workgroups);
        assert_eq!(workgroups, 4 * PREDICT_WORKGROUPS);
        assert_eq!(prediction_bytes(&sweep), bytes(&sweep) / 4);
    }
}
