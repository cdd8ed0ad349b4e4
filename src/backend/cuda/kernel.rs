//! A case made ready to launch: its twin compiled for the device (once per program and
//! build) and loaded, its inputs uploaded, its outputs poisoned and its arguments in
//! binding order; its launch settings made the case's, and one launch queued.

use std::sync::Arc;

use cudarc::driver::sys;
use cudarc::driver::{
    CudaFunction, CudaModule, CudaSlice, CudaStream, LaunchConfig, PushKernelArg,
};
use cudarc::nvrtc::Ptx;

use super::compile::{Program, check_ptx};
use super::texture::Texture;
use super::{Cuda, driver_error};
use crate::error::{Error, Result};
use crate::suite::{Buffer, Case, CudaLaunch, Dispatch, Experiment, Words, check_inputs};

/// The words of an input not given (refused by [`check_inputs`] first).
static NONE: Words = Words::Held(Vec::new());

/// One kernel argument: a storage buffer, a texture object, or an output (by its index
/// in [`Prepared::outputs`]).
#[derive(Debug)]
pub(super) enum Argument {
    Buffer(CudaSlice<u32>),
    Texture(Texture),
    Output(usize),
}

/// A case ready to launch: its twin, buffers and launch shape.
#[derive(Debug)]
pub struct Prepared {
    pub(super) label: String,
    /// Holds `params`, which the uniform is copied into.
    module: Arc<CudaModule>,
    function: CudaFunction,
    uniform: Option<Vec<u32>>,
    /// The kernel's arguments: the storage buffers and textures in binding order.
    pub(super) storage: Vec<Argument>,
    /// The outputs, in order.
    pub(super) outputs: Vec<CudaSlice<u32>>,
    config: LaunchConfig,
    /// The case's launch settings beyond the grid, applied by [`Cuda::settle`].
    pub(super) launch: CudaLaunch,
    /// How the clock issues the timed launches.
    pub(super) dispatch: Dispatch,
}

impl Cuda {
    /// The loaded module of `program`, compiled for this device and its PTX checked
    /// against `buffers` on first use (every case of one program has the same
    /// bindings).
    pub(super) fn module(&self, program: &Program, buffers: &[Buffer]) -> Result<Arc<CudaModule>> {
        let arch = self.device.compute_capability;
        let key = program.cache_key(arch);
        let mut modules = self
            .modules
            .lock()
            .map_err(|_| Error::Internal("the module cache was poisoned".to_owned()))?;
        if let Some(module) = modules.get(&key) {
            return Ok(module.clone());
        }
        let ptx = program.compile(arch)?;
        check_ptx(&ptx, program.entry(), buffers, program.twin.dynamic_shared)?;
        let module = self
            .ctx
            .load_module(Ptx::from_src(ptx))
            .map_err(driver_error("loading the PTX"))?;
        modules.insert(key, module.clone());
        Ok(module)
    }

    /// `case`'s buffers made and its twin loaded: inputs uploaded, outputs poisoned.
    pub(super) fn build(
        &self,
        experiment: &Experiment,
        case: &Case,
        inputs: &[Words],
    ) -> Result<Prepared> {
        experiment.kernel_for(case).map_err(Error::Cuda)?;
        let program = Program::of(experiment, case, self.build)?;
        let module = self.module(&program, &case.buffers)?;
        let function = module
            .load_function(program.entry())
            .map_err(driver_error("finding the twin's entry"))?;
        check_inputs(&case.buffers, inputs)
            .map_err(|why| Error::Cuda(format!("{}: {why}", experiment.name())))?;
        let mut inputs = inputs.iter();
        let mut uniform = None;
        let mut storage = Vec::new();
        let mut outputs = Vec::new();
        for buffer in &case.buffers {
            match buffer {
                Buffer::Uniform(words) => uniform = Some(words.clone()),
                Buffer::Input(_) => {
                    let words = inputs.next().unwrap_or(&NONE);
                    storage.push(Argument::Buffer(self.upload_words(words)?));
                }
                Buffer::Texture { width, height } => {
                    let words = inputs.next().unwrap_or(&NONE);
                    storage.push(Argument::Texture(Texture::new(
                        self,
                        (*width, *height),
                        words,
                    )?));
                }
                // A user kernel's (`membench kernel`), which has no twin: never here.
                Buffer::InOut(_) => {
                    return Err(Error::Cuda(format!(
                        "{}: a read-write input has no CUDA twin",
                        experiment.name()
                    )));
                }
                Buffer::Output(words) => {
                    outputs.push(self.poisoned(*words)?);
                    storage.push(Argument::Output(outputs.len() - 1));
                }
            }
        }
        let [x, y, z] = case.workgroups;
        let [bx, by, bz] = case.workgroup_size;
        let prepared = Prepared {
            label: experiment.name(),
            module,
            function,
            uniform,
            storage,
            outputs,
            launch: case.cuda_launch,
            dispatch: case.dispatch,
            config: LaunchConfig {
                grid_dim: (x, y, z),
                block_dim: (bx, by, bz),
                shared_mem_bytes: if program.twin.dynamic_shared {
                    case.workgroup_storage_bytes
                } else {
                    0
                },
            },
        };
        self.upload_uniform(&prepared)?;
        self.stream
            .synchronize()
            .map_err(driver_error("making the buffers"))?;
        Ok(prepared)
    }

    /// Copies the case's uniform into the module's `params`.
    fn upload_uniform(&self, prepared: &Prepared) -> Result<()> {
        let Some(words) = &prepared.uniform else {
            return Ok(());
        };
        let bytes: &[u8] = bytemuck::cast_slice(words);
        let mut params = prepared
            .module
            .get_global("params", &self.stream)
            .map_err(driver_error("finding __constant__ params"))?;
        if params.len() != bytes.len() {
            return Err(Error::Cuda(format!(
                "{}: __constant__ params has {} bytes, the uniform {}",
                prepared.label,
                params.len(),
                bytes.len()
            )));
        }
        self.stream
            .memcpy_htod(bytes, &mut params)
            .map_err(driver_error("writing __constant__ params"))
    }

    /// Makes the module's state the case's before its launches (the check, every
    /// batch): the uniform in `params` and the function's launch settings
    /// ([`CudaLaunch`]). Cases with the same twin and defines share the module, and so
    /// `params` and the function's attributes: each case sets them all, a plain launch
    /// back to the driver's default.
    pub(super) fn settle(&self, prepared: &Prepared) -> Result<()> {
        self.upload_uniform(prepared)?;
        self.persist(prepared)?;
        let percent = match prepared.launch {
            CudaLaunch::Carveout { percent } => i32::try_from(percent)
                .ok()
                .filter(|p| (0..=100).contains(p))
                .ok_or_else(|| Error::Case(format!("a carve-out of {percent} %")))?,
            // No preference: the driver's choice.
            _ => sys::CUshared_carveout::CU_SHAREDMEM_CARVEOUT_DEFAULT as i32,
        };
        prepared
            .function
            .set_attribute(
                sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT,
                percent,
            )
            .map_err(driver_error("setting the shared-memory carve-out"))
    }

    /// Queues one launch of the prepared twin.
    pub(super) fn launch(&self, prepared: &Prepared) -> Result<()> {
        self.launch_on(prepared, &self.stream)
    }

    /// Queues one launch of `prepared` on `stream`.
    pub(super) fn launch_on(&self, prepared: &Prepared, stream: &Arc<CudaStream>) -> Result<()> {
        let mut launch = stream.launch_builder(&prepared.function);
        for argument in &prepared.storage {
            match argument {
                Argument::Buffer(buffer) => launch.arg(buffer),
                Argument::Texture(texture) => launch.arg(&texture.object),
                Argument::Output(index) => match prepared.outputs.get(*index) {
                    Some(output) => launch.arg(output),
                    None => return Err(Error::Internal("an output out of range".to_owned())),
                },
            };
        }
        // SAFETY: `check_ptx` held the entry to one pointer per storage buffer, which are
        // passed in binding order, each as large as the case declares and the WGSL
        // kernel (whose index math the twin repeats) indexes within.
        unsafe { launch.launch(prepared.config) }
            .map(drop)
            .map_err(driver_error("launching the twin"))
    }
}
