//! The CUDA backend: the same cases as wgpu, run through each experiment's CUDA C twin
//! (`shaders/cuda/`, compiled by NVRTC for the device), verified against the same CPU
//! reference and timed with CUDA events. Its rows are `api=cuda`, so that a device's
//! file shows what wgpu costs against the native toolchain.
//!
//! libcuda and libnvrtc are loaded at run time: without them (a machine with no NVIDIA
//! driver, CI) every entry point returns [`Error::CudaUnavailable`] with the reason,
//! never a panic. Buffers follow the case's binding order: storage buffers are the
//! kernel's pointer arguments, the uniform is copied into the module's `__constant__`
//! `params` (see [`compile`] for the conventions).

pub mod compile;
pub mod texture;
pub mod timing;
pub mod transfer;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use cudarc::driver::sys::{self, CUdevice_attribute};
use cudarc::driver::{
    CudaContext, CudaEvent, CudaFunction, CudaModule, CudaSlice, CudaStream, DevicePtr,
    DriverError, LaunchConfig, PinnedHostSlice, PushKernelArg, result,
};
use cudarc::nvrtc::Ptx;
use rayon::prelude::*;

use super::Backend;
use crate::error::{Error, Result};
use crate::measure::{Clock, Sampler, Timing};
use crate::results::{GpuIdentity, RunInfo};
use crate::suite::{
    Buffer, Cache, Case, CaseData, CudaBuild, CudaLaunch, Expected, Experiment, FLUSH_BYTES,
    Measure, POISON, Setting, TransferPath, Twin, check_inputs,
};
use compile::{Program, check_ptx};
use texture::Texture;
use timing::EventClock;

/// Words of the pinned staging buffer, the piece an input is uploaded and an output read
/// back and checked in: the host never holds a second copy of a large buffer.
const STAGING_WORDS: usize = 16 << 20;

/// Why the CUDA backend cannot run here, if it cannot: checked before any other cudarc
/// call, since cudarc panics on a missing library or symbol.
pub fn unavailable() -> Option<String> {
    // SAFETY: only tries to open the library by its usual names.
    if !unsafe { sys::is_culib_present() } {
        return Some(
            "libcuda not found (libcuda.so.1: no NVIDIA driver on the loader path)".to_owned(),
        );
    }
    if let Some(why) = compile::nvrtc_unavailable() {
        return Some(why);
    }
    // The cuda-13000 bindings time events with cuEventElapsedTime_v2 (CUDA 12.8,
    // driver R570): an older driver lacks it, and cudarc would panic looking it up.
    // SAFETY: looks the symbol up without calling it.
    let elapsed = unsafe { sys::culib().get::<unsafe extern "C" fn()>("cuEventElapsedTime_v2") };
    if elapsed.is_err() {
        return Some(format!(
            "the driver ({}) has no cuEventElapsedTime_v2: CUDA 12.8 (driver R570) or newer \
             is needed",
            driver_version().unwrap_or_else(|| "version unknown".to_owned())
        ));
    }
    None
}

/// The CUDA version the driver supports, e.g. `CUDA 13.0`. Call only once libcuda is
/// known to be present.
fn driver_version() -> Option<String> {
    let mut version = 0;
    // SAFETY: writes one int; cuDriverGetVersion needs no cuInit.
    unsafe { sys::cuDriverGetVersion(&mut version) }
        .result()
        .ok()?;
    Some(format!("CUDA {}.{}", version / 1000, version % 1000 / 10))
}

/// The NVIDIA kernel module's release (`580.159.04`), where Linux reports it.
fn kernel_module_release() -> Option<String> {
    let text = std::fs::read_to_string("/proc/driver/nvidia/version").ok()?;
    release_of(text.lines().next()?)
}

/// The release in `/proc/driver/nvidia/version`'s first line: the first version
/// number after "Kernel Module" (`... Open Kernel Module for x86_64  580.159.04  ...`).
fn release_of(line: &str) -> Option<String> {
    let after = &line[line.find("Kernel Module")? + "Kernel Module".len()..];
    after
        .split_whitespace()
        .find(|word| word.contains('.') && word.chars().all(|c| c.is_ascii_digit() || c == '.'))
        .map(str::to_owned)
}

/// A driver error as this crate's, saying what was being done.
fn driver_error(doing: &'static str) -> impl Fn(DriverError) -> Error {
    move |error| Error::Cuda(format!("{doing}: {}", describe(&error)))
}

/// `CUDA_ERROR_NO_DEVICE (no CUDA-capable device is detected)`.
fn describe(error: &DriverError) -> String {
    match error.error_string() {
        Ok(text) => format!("{:?} ({})", error.0, text.to_string_lossy()),
        Err(_) => format!("{:?}", error.0),
    }
}

/// What `membench devices` and the results record of one CUDA device.
#[derive(Clone, Debug)]
pub struct CudaDevice {
    pub ordinal: usize,
    /// As the driver names it: the same as the wgpu adapter's name on Vulkan.
    pub name: String,
    pub compute_capability: (i32, i32),
    /// `domain:bus:device.0`, as wgpu writes an adapter's PCI bus id.
    pub pci_bus_id: String,
    pub memory_bytes: usize,
    pub multiprocessors: i32,
    pub shared_bytes_per_block: i32,
}

impl CudaDevice {
    fn query(ordinal: usize) -> Result<CudaDevice> {
        let failed = driver_error("querying a device");
        let device = i32::try_from(ordinal)
            .map_err(|_| Error::Cuda(format!("no device ordinal {ordinal}")))
            .and_then(|ordinal| result::device::get(ordinal).map_err(&failed))?;
        // SAFETY: `device` came from cuDeviceGet.
        let attribute = |attribute| unsafe { result::device::get_attribute(device, attribute) };
        let attribute = |which| attribute(which).map_err(&failed);
        let pci_bus_id = format!(
            "{:04x}:{:02x}:{:02x}.0",
            attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID)?,
            attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_PCI_BUS_ID)?,
            attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID)?
        );
        Ok(CudaDevice {
            ordinal,
            name: result::device::get_name(device).map_err(&failed)?,
            compute_capability: (
                attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?,
                attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?,
            ),
            pci_bus_id,
            // SAFETY: `device` came from cuDeviceGet.
            memory_bytes: unsafe { result::device::total_mem(device) }.map_err(&failed)?,
            multiprocessors: attribute(
                CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
            )?,
            shared_bytes_per_block: attribute(
                CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK,
            )?,
        })
    }

    /// Whether this is the wgpu adapter `name` at PCI bus `pci_bus_id` (empty where wgpu
    /// does not know it): the same name (GL appends `/PCIe/SSE2`), the same bus.
    pub fn is_adapter(&self, name: &str, pci_bus_id: &str) -> bool {
        let same_name = name == self.name
            || name
                .strip_prefix(self.name.as_str())
                .is_some_and(|rest| rest.starts_with('/'));
        same_name && (pci_bus_id.is_empty() || pci_bus_id.eq_ignore_ascii_case(&self.pci_bus_id))
    }

    /// Which physical GPU this is (NVML's UUID and link, where NVML is there), and the
    /// host: the same as the wgpu adapter's of the same GPU.
    pub fn identity(&self) -> GpuIdentity {
        let nvml = crate::backend::nvml::gpu_at(&self.pci_bus_id).map(|gpu| gpu.identity());
        GpuIdentity {
            host: crate::backend::wgpu::identity::host(),
            gpu_uuid: nvml
                .as_ref()
                .map_or_else(|| "-".to_owned(), |identity| identity.uuid.clone()),
            pci_bus_id: self.pci_bus_id.clone(),
            pcie_link: nvml.map(|identity| identity.pcie_link).unwrap_or_default(),
        }
    }

    /// What `membench devices` prints about this device.
    pub fn report(&self) -> String {
        let (major, minor) = self.compute_capability;
        format!(
            "cuda {}: {}\n   compute capability {major}.{minor}, {} SMs, {} MiB, PCI {}, \
             shared memory per block {} KiB, {}",
            self.ordinal,
            self.name,
            self.multiprocessors,
            self.memory_bytes >> 20,
            self.pci_bus_id,
            self.shared_bytes_per_block >> 10,
            driver_label(),
        )
    }
}

/// The driver as the `driver` column records it: `580.95.05, CUDA 13.0`.
fn driver_label() -> String {
    let version = driver_version().unwrap_or_else(|| "CUDA version unknown".to_owned());
    match kernel_module_release() {
        Some(release) => format!("{release}, {version}"),
        None => version,
    }
}

/// What `membench devices` prints about CUDA: each device, or why there are none.
pub fn devices_report() -> String {
    match devices() {
        Ok(devices) if devices.is_empty() => "cuda: the driver sees no device".to_owned(),
        Ok(devices) => devices
            .iter()
            .map(CudaDevice::report)
            .collect::<Vec<_>>()
            .join("\n"),
        Err(error) => format!("cuda: {error}"),
    }
}

/// Every CUDA device, or why there are none to use.
pub fn devices() -> Result<Vec<CudaDevice>> {
    if let Some(why) = unavailable() {
        return Err(Error::CudaUnavailable(why));
    }
    result::init().map_err(|e| Error::CudaUnavailable(format!("cuInit: {}", describe(&e))))?;
    let count = result::device::get_count()
        .map_err(|e| Error::CudaUnavailable(format!("cuDeviceGetCount: {}", describe(&e))))?;
    (0..usize::try_from(count).unwrap_or(0))
        .map(CudaDevice::query)
        .collect()
}

/// The CUDA backend on one device in one build: a context, the stream everything runs
/// on, and the modules compiled so far. Its builds ([`Cuda::with_build`]) share all but
/// the build.
#[derive(Clone)]
pub struct Cuda {
    pub device: CudaDevice,
    /// How the twins are compiled.
    build: CudaBuild,
    ctx: Arc<CudaContext>,
    /// The one stream: cudarc tracks no events on a single stream, so nothing but the
    /// kernels lies between the timing events.
    stream: Arc<CudaStream>,
    /// How long one launch (or batch) may take before the device counts as hung.
    timeout: Duration,
    /// Modules by [`Program::cache_key`] (which holds the build's defines): cases that
    /// differ only in their data share one.
    modules: Arc<Mutex<HashMap<String, Arc<CudaModule>>>>,
    /// Page-locked host memory of [`STAGING_WORDS`] (made on first use) that inputs and
    /// outputs pass through: the driver copies pageable memory at a fraction of the
    /// link's speed.
    staging: Arc<Mutex<Option<PinnedHostSlice<u32>>>>,
    /// What a cold launch's untimed flush clears ([`FLUSH_BYTES`]), made on first use.
    flush: Arc<Mutex<Option<CudaSlice<u32>>>>,
    /// The persisting window the stream has now, as the case that set it asked
    /// ([`CudaLaunch::PersistingWindow`]); `None`: none.
    persisting: Arc<Mutex<Option<CudaLaunch>>>,
}

impl Cuda {
    /// The backend on the device with CUDA ordinal `ordinal`.
    pub fn open(ordinal: usize, timeout: Duration) -> Result<Cuda> {
        let device = devices()?
            .into_iter()
            .find(|device| device.ordinal == ordinal)
            .ok_or_else(|| Error::CudaUnavailable(format!("no CUDA device {ordinal}")))?;
        Cuda::on(device, timeout)
    }

    /// The backend on the CUDA device that is wgpu's adapter `name` at `pci_bus_id`
    /// (`AdapterInfo::device_pci_bus_id`, empty if unknown), so that both measure the
    /// same GPU.
    /// Every error is [`Error::CudaUnavailable`]: a run goes on without CUDA.
    pub fn for_adapter(name: &str, pci_bus_id: &str, timeout: Duration) -> Result<Cuda> {
        Cuda::matching(name, pci_bus_id, timeout).map_err(|error| match error {
            Error::CudaUnavailable(_) => error,
            other => Error::CudaUnavailable(other.to_string()),
        })
    }

    fn matching(name: &str, pci_bus_id: &str, timeout: Duration) -> Result<Cuda> {
        let devices = devices()?;
        match devices.iter().find(|d| d.is_adapter(name, pci_bus_id)) {
            Some(device) => Cuda::on(device.clone(), timeout),
            None => Err(Error::CudaUnavailable(format!(
                "no CUDA device is the adapter {name}{} (CUDA sees: {})",
                if pci_bus_id.is_empty() {
                    String::new()
                } else {
                    format!(" at {pci_bus_id}")
                },
                if devices.is_empty() {
                    "none".to_owned()
                } else {
                    devices
                        .iter()
                        .map(|d| format!("{} at {}", d.name, d.pci_bus_id))
                        .collect::<Vec<_>>()
                        .join(", ")
                }
            ))),
        }
    }

    fn on(device: CudaDevice, timeout: Duration) -> Result<Cuda> {
        let ctx = CudaContext::new(device.ordinal)
            .map_err(|e| Error::CudaUnavailable(format!("creating a context: {}", describe(&e))))?;
        let stream = ctx.default_stream();
        Ok(Cuda {
            device,
            build: CudaBuild::Default,
            ctx,
            stream,
            timeout,
            modules: Arc::default(),
            flush: Arc::default(),
            persisting: Arc::default(),
            staging: Arc::default(),
        })
    }

    /// The same device, context, stream, modules and staging buffer with the twins
    /// compiled in `build`.
    pub fn with_build(&self, build: CudaBuild) -> Cuda {
        Cuda {
            build,
            ..self.clone()
        }
    }

    /// The columns every CUDA row of a run records: the same device name as wgpu's
    /// rows, backend `cuda`, the driver, warps of 32.
    pub fn run_info(&self) -> RunInfo {
        RunInfo {
            device: self.device.name.clone(),
            // As wgpu's rows name the vendor (PCI id 0x10de).
            vendor: "NVIDIA 0x10de".to_owned(),
            backend: "cuda".to_owned(),
            driver: driver_label(),
            subgroup_size: "32".to_owned(),
            setting: self.setting(),
            timestamp_utc: humantime::format_rfc3339_seconds(std::time::SystemTime::now())
                .to_string(),
            gpu: self.device.identity(),
        }
    }

    /// The loaded module of `program`, compiled for this device and its PTX checked
    /// against `buffers` on first use (every case of one program has the same
    /// bindings).
    fn module(&self, program: &Program, buffers: &[Buffer]) -> Result<Arc<CudaModule>> {
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
    fn build(&self, experiment: &Experiment, case: &Case, inputs: &[Vec<u32>]) -> Result<Prepared> {
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
                    let words = inputs.next().map_or(&[][..], Vec::as_slice);
                    storage.push(Argument::Buffer(self.upload(words)?));
                }
                Buffer::Texture { width, height } => {
                    let words = inputs.next().map_or(&[][..], Vec::as_slice);
                    storage.push(Argument::Texture(Texture::new(
                        self,
                        (*width, *height),
                        words,
                    )?));
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

    /// A device buffer holding `words`, copied in through the staging buffer piece by
    /// piece.
    fn upload(&self, words: &[u32]) -> Result<CudaSlice<u32>> {
        if words.is_empty() {
            return self.poisoned(0);
        }
        // SAFETY: every word is written by the copies below before anything reads it.
        let mut buffer = unsafe { self.stream.alloc::<u32>(words.len()) }
            .map_err(driver_error("allocating an input"))?;
        self.with_staging(|staging| {
            let piece_words = staging.len();
            for (index, piece) in words.chunks(piece_words).enumerate() {
                let host = &mut staging[..piece.len()];
                host.par_chunks_mut(1 << 18)
                    .zip(piece.par_chunks(1 << 18))
                    .for_each(|(to, from)| to.copy_from_slice(from));
                let start = index * piece_words;
                self.stream
                    .memcpy_htod(&*host, &mut buffer.slice_mut(start..start + piece.len()))
                    .map_err(driver_error("uploading an input"))?;
                // From pinned memory the copy is asynchronous: done before the next piece.
                self.stream
                    .synchronize()
                    .map_err(driver_error("uploading an input"))?;
            }
            Ok(())
        })?;
        Ok(buffer)
    }

    /// Runs `work` on the staging buffer, made on first use.
    fn with_staging<T>(&self, work: impl FnOnce(&mut [u32]) -> Result<T>) -> Result<T> {
        let mut slot = self
            .staging
            .lock()
            .map_err(|_| Error::Internal("the staging buffer was poisoned".to_owned()))?;
        let pinned = match &mut *slot {
            Some(pinned) => pinned,
            // SAFETY: any bits are a u32; each piece is written before it is read.
            None => slot.insert(
                unsafe { self.ctx.alloc_pinned::<u32>(STAGING_WORDS) }
                    .map_err(driver_error("allocating pinned staging memory"))?,
            ),
        };
        let staging = pinned
            .as_mut_slice()
            .map_err(driver_error("waiting for the staging buffer"))?;
        work(staging)
    }

    /// A device buffer of `words` words, every one [`POISON`].
    fn poisoned(&self, words: usize) -> Result<CudaSlice<u32>> {
        // SAFETY: every word is set by the fill below before anything reads it.
        let buffer = unsafe { self.stream.alloc::<u32>(words.max(1)) }
            .map_err(driver_error("allocating an output"))?;
        {
            let (pointer, _recorded) = buffer.device_ptr(&self.stream);
            // SAFETY: `pointer` is the start of `buffer`, which holds `buffer.len()` words
            // and outlives the fill (freeing is ordered after it on the same stream).
            unsafe {
                sys::cuMemsetD32Async(pointer, POISON, buffer.len(), self.stream.cu_stream())
            }
            .result()
            .map_err(driver_error("poisoning an output"))?;
        }
        Ok(buffer)
    }

    /// Makes the module's state the case's before its launches (the check, every
    /// batch): the uniform in `params` and the function's launch settings
    /// ([`CudaLaunch`]). Cases with the same twin and defines share the module, and so
    /// `params` and the function's attributes: each case sets them all, a plain launch
    /// back to the driver's default.
    fn settle(&self, prepared: &Prepared) -> Result<()> {
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

    /// Puts the stream's L2 access policy window and the context's persisting set-aside
    /// where the case wants them. When the case differs from the one that set the last
    /// window, that window is cleared, its persisting lines are reset and the set-aside
    /// goes back to 0 first: no case inherits another's lines.
    fn persist(&self, prepared: &Prepared) -> Result<()> {
        let mut active = self.persisting.lock().unwrap_or_else(|e| e.into_inner());
        let wanted = matches!(prepared.launch, CudaLaunch::PersistingWindow { .. })
            .then_some(prepared.launch);
        if active.is_none() && wanted.is_none() {
            return Ok(());
        }
        // The raw context calls below act on the thread's current context.
        self.ctx
            .bind_to_thread()
            .map_err(driver_error("making the context current"))?;
        if *active != wanted {
            self.leave_persisting(&mut active)?;
        }
        // The window is set again at every batch, even for the same launch: it holds the
        // hot buffer's address, and another build of the same case has its own buffer.
        let Some(CudaLaunch::PersistingWindow {
            buffer,
            bytes,
            hit_percent,
            set_aside,
        }) = wanted
        else {
            return Ok(());
        };
        let Some(Argument::Buffer(slice)) = prepared.storage.get(buffer) else {
            return Err(Error::Case(format!(
                "{}: argument {buffer} is no buffer to put a window on",
                prepared.label
            )));
        };
        if bytes > 4 * slice.len() as u64 {
            return Err(Error::Case(format!(
                "{}: a window of {bytes} bytes over a buffer of {}",
                prepared.label,
                4 * slice.len()
            )));
        }
        if let Some(why) = self.beyond_persisting_limits(prepared.launch) {
            return Err(Error::Case(why));
        }
        // SAFETY: a plain call on the current context.
        unsafe {
            sys::cuCtxSetLimit(
                sys::CUlimit::CU_LIMIT_PERSISTING_L2_CACHE_SIZE,
                set_aside as usize,
            )
        }
        .result()
        .map_err(driver_error("setting the persisting L2 set-aside"))?;
        let (pointer, _) = slice.device_ptr(&self.stream);
        self.set_window(Some(sys::CUaccessPolicyWindow {
            base_ptr: pointer as *mut std::ffi::c_void,
            num_bytes: bytes as usize,
            hitRatio: hit_percent as f32 / 100.0,
            hitProp: sys::CUaccessProperty::CU_ACCESS_PROPERTY_PERSISTING,
            missProp: sys::CUaccessProperty::CU_ACCESS_PROPERTY_STREAMING,
        }))?;
        *active = wanted;
        Ok(())
    }

    /// Clears the stream's window, resets its persisting lines and sets the set-aside
    /// back to 0, if a case left them (`active`); binds the context first, since the
    /// raw context calls act on the thread's current one.
    fn leave_persisting(&self, active: &mut Option<CudaLaunch>) -> Result<()> {
        if active.is_none() {
            return Ok(());
        }
        self.ctx
            .bind_to_thread()
            .map_err(driver_error("making the context current"))?;
        self.set_window(None)?;
        // SAFETY: plain calls on the current context, after the stream's work.
        unsafe {
            sys::cuCtxResetPersistingL2Cache()
                .result()
                .map_err(driver_error("resetting the persisting L2 lines"))?;
            sys::cuCtxSetLimit(sys::CUlimit::CU_LIMIT_PERSISTING_L2_CACHE_SIZE, 0)
                .result()
                .map_err(driver_error("clearing the persisting L2 set-aside"))?;
        }
        *active = None;
        Ok(())
    }

    /// Why this device cannot run a persisting window as `launch` asks: a set-aside or
    /// a window larger than it allows (an H100 lets 32 768 000 bytes persist).
    fn beyond_persisting_limits(&self, launch: CudaLaunch) -> Option<String> {
        let CudaLaunch::PersistingWindow {
            bytes, set_aside, ..
        } = launch
        else {
            return None;
        };
        let limit = |attribute| self.device_attribute(attribute).ok();
        let most =
            limit(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE)?;
        let widest =
            limit(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE)?;
        (set_aside > most || bytes > widest).then(|| {
            format!(
                "a persisting set-aside of {set_aside} bytes and a window of {bytes}: this device allows {most} and {widest}"
            )
        })
    }

    /// Sets the stream's access policy window, or clears it (`None`: a window of 0
    /// bytes).
    fn set_window(&self, window: Option<sys::CUaccessPolicyWindow>) -> Result<()> {
        let window = window.unwrap_or(sys::CUaccessPolicyWindow {
            base_ptr: std::ptr::null_mut(),
            num_bytes: 0,
            hitRatio: 0.0,
            hitProp: sys::CUaccessProperty::CU_ACCESS_PROPERTY_NORMAL,
            missProp: sys::CUaccessProperty::CU_ACCESS_PROPERTY_NORMAL,
        });
        let value = sys::CUstreamAttrValue {
            accessPolicyWindow: window,
        };
        // SAFETY: the stream lives as long as the backend; the value outlives the call.
        unsafe {
            sys::cuStreamSetAttribute(
                self.stream.cu_stream(),
                sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW,
                &value,
            )
        }
        .result()
        .map_err(driver_error("setting the stream's L2 access policy window"))
    }

    /// A device attribute of this backend's GPU, in bytes.
    fn device_attribute(&self, attribute: sys::CUdevice_attribute) -> Result<u64> {
        let value = self
            .ctx
            .attribute(attribute)
            .map_err(driver_error("reading a device attribute"))?;
        Ok(u64::try_from(value).unwrap_or(0))
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

    /// Queues one launch of the prepared twin.
    fn launch(&self, prepared: &Prepared) -> Result<()> {
        let mut launch = self.stream.launch_builder(&prepared.function);
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

    /// Queues the clear of [`FLUSH_BYTES`] on the stream, which streams them through the
    /// L2 and evicts what a kernel left there.
    fn flush(&self) -> Result<()> {
        let mut flush = self.flush.lock().unwrap_or_else(|e| e.into_inner());
        if flush.is_none() {
            // SAFETY: the buffer is only ever written.
            let buffer = unsafe { self.stream.alloc::<u32>((FLUSH_BYTES / 4) as usize) }
                .map_err(driver_error("allocating the flush buffer"))?;
            *flush = Some(buffer);
        }
        let Some(buffer) = flush.as_ref() else {
            unreachable!("made above");
        };
        let (pointer, _) = buffer.device_ptr(&self.stream);
        // SAFETY: the buffer holds `len` words and lives as long as the backend.
        unsafe { sys::cuMemsetD32Async(pointer, 0, buffer.len(), self.stream.cu_stream()) }
            .result()
            .map_err(driver_error("flushing the L2"))
    }

    /// Waits for `event` with the timeout, so that a hung kernel is an error.
    /// Polls without sleeping for the first [`SPIN`]: a host-clock transfer's time ends
    /// here, and a sleep's wake-up (50 µs and more) would be part of it.
    fn wait(&self, event: &CudaEvent) -> Result<()> {
        const SPIN: Duration = Duration::from_millis(5);
        let started = Instant::now();
        while !event
            .try_is_complete()
            .map_err(driver_error("running the twin"))?
        {
            let waited = started.elapsed();
            if waited > self.timeout {
                return Err(Error::Timeout(self.timeout));
            }
            if waited > SPIN {
                std::thread::sleep(Duration::from_micros(50));
            } else {
                std::hint::spin_loop();
            }
        }
        Ok(())
    }

    /// Runs the twin once and checks every output against its reference.
    fn check(&self, prepared: &Prepared, expected: &[Expected]) -> Result<()> {
        self.settle(prepared)?;
        self.launch(prepared)?;
        let done = self
            .stream
            .record_event(None)
            .map_err(driver_error("recording an event"))?;
        self.wait(&done)?;
        for (output, expected) in prepared.outputs.iter().zip(expected) {
            self.check_output(output, expected)?;
        }
        Ok(())
    }

    /// Whether `output` holds what `expected` says, read back piece by piece.
    fn check_output(&self, output: &CudaSlice<u32>, expected: &Expected) -> Result<()> {
        let mut checker = expected.checker();
        let words = expected.len_words().min(output.len());
        self.with_staging(|staging| {
            let mut start = 0;
            while start < words {
                let end = (start + staging.len()).min(words);
                let piece = &mut staging[..end - start];
                self.stream
                    .memcpy_dtoh(&output.slice(start..end), piece)
                    .map_err(driver_error("reading an output"))?;
                // Into pinned memory the copy is asynchronous: done before it is read.
                self.stream
                    .synchronize()
                    .map_err(driver_error("reading an output"))?;
                checker.feed(piece);
                start = end;
            }
            Ok(())
        })?;
        checker.finish().map_err(Error::Verification)
    }
}

/// One kernel argument: a storage buffer, a texture object, or an output (by its index
/// in [`Prepared::outputs`]).
enum Argument {
    Buffer(CudaSlice<u32>),
    Texture(Texture),
    Output(usize),
}

/// A case ready to launch: its twin, buffers and launch shape.
pub struct Prepared {
    label: String,
    /// Holds `params`, which the uniform is copied into.
    module: Arc<CudaModule>,
    function: CudaFunction,
    uniform: Option<Vec<u32>>,
    /// The kernel's arguments: the storage buffers and textures in binding order.
    storage: Vec<Argument>,
    /// The outputs, in order.
    outputs: Vec<CudaSlice<u32>>,
    config: LaunchConfig,
    /// The case's launch settings beyond the grid, applied by [`Cuda::settle`].
    launch: CudaLaunch,
}

impl Backend for Cuda {
    type Prepared = Prepared;

    fn setting(&self) -> Setting {
        Setting::Cuda(self.build)
    }

    /// Every kernel, and in the default build the transfer paths CUDA has
    /// ([`TransferPath::in_cuda`]): transfers move bytes the same whatever the build.
    fn takes(&self, experiment: &Experiment) -> bool {
        match experiment.measure {
            Measure::Kernel => true,
            Measure::Transfer(path) => self.build == CudaBuild::Default && path.in_cuda(),
        }
    }

    fn skip(&self, experiment: &Experiment, case: &Case) -> Option<String> {
        match (experiment.twin, experiment.kernel) {
            (Twin::None(why), Some(_)) => Some(format!("no CUDA twin: {why}")),
            _ => self.beyond_persisting_limits(case.cuda_launch),
        }
    }

    fn prepare(
        &self,
        experiment: &Experiment,
        case: &Case,
        inputs: &[Vec<u32>],
    ) -> Result<Prepared> {
        self.build(experiment, case, inputs)
    }

    fn verify(&self, prepared: &Prepared, expected: &[Expected]) -> Result<()> {
        self.check(prepared, expected)
    }

    fn clock<'a>(&'a self, prepared: &'a Prepared, cache: Cache) -> Result<Box<dyn Clock + 'a>> {
        Ok(Box::new(EventClock::new(self, prepared, cache)))
    }

    fn transfer(
        &self,
        experiment: &Experiment,
        case: &Case,
        path: TransferPath,
        sampler: Sampler,
        data: &CaseData,
    ) -> Result<Timing> {
        // A persist case's window and set-aside halved a 256 MiB device copy that
        // followed it (H100: 1161 against 2971 GB/s alone): no transfer inherits them.
        self.leave_persisting(&mut self.persisting.lock().unwrap_or_else(|e| e.into_inner()))?;
        transfer::measure(self, experiment, case, path, sampler, data)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// This machine and CI have no NVIDIA driver: the backend says so, naming the
    /// library, and nothing panics.
    #[test]
    fn without_libcuda_the_backend_is_unavailable_not_a_panic() {
        // SAFETY: only tries to open the library.
        if unsafe { sys::is_culib_present() } {
            stderrln!("libcuda is present: the unavailable path is not reachable here");
            return;
        }
        let opened = Cuda::open(0, Duration::from_secs(1));
        let error = opened.err().map(|e| e.to_string()).unwrap_or_default();
        assert_eq!(
            error,
            "CUDA backend unavailable: libcuda not found (libcuda.so.1: no NVIDIA driver on \
             the loader path)"
        );
        let matching = Cuda::for_adapter("NVIDIA H100 80GB HBM3", "", Duration::from_secs(1));
        assert!(matches!(matching, Err(Error::CudaUnavailable(_))));
        assert!(matches!(devices(), Err(Error::CudaUnavailable(_))));
        assert!(unavailable().is_some_and(|why| why.contains("libcuda")));
    }

    #[test]
    fn the_release_is_read_from_either_kernel_module() {
        let open = "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  \
                    Release Build  (nixbld@)";
        assert_eq!(release_of(open).as_deref(), Some("580.159.04"));
        let proprietary = "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar";
        assert_eq!(release_of(proprietary).as_deref(), Some("550.54.15"));
        assert_eq!(release_of("no module here"), None);
    }

    #[test]
    fn devices_match_adapters_by_name_and_bus() {
        let device = CudaDevice {
            ordinal: 1,
            name: "NVIDIA H100 80GB HBM3".to_owned(),
            compute_capability: (9, 0),
            pci_bus_id: "0000:1b:00.0".to_owned(),
            memory_bytes: 80 << 30,
            multiprocessors: 132,
            shared_bytes_per_block: 48 << 10,
        };
        assert!(device.is_adapter("NVIDIA H100 80GB HBM3", ""));
        assert!(device.is_adapter("NVIDIA H100 80GB HBM3", "0000:1B:00.0"));
        assert!(device.is_adapter("NVIDIA H100 80GB HBM3/PCIe/SSE2", ""));
        assert!(!device.is_adapter("NVIDIA H100 80GB HBM3", "0000:2a:00.0"));
        assert!(!device.is_adapter("NVIDIA H100 80GB HBM3e", ""));
        assert!(!device.is_adapter("llvmpipe (LLVM 15.0.6, 256 bits)", ""));
    }
}
