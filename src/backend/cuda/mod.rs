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
//!
//! Its files are laid out as the wgpu backend's, one concern each: `device` (discovery),
//! this file (the context and the [`Backend`]), `buffers` (staging, uploads,
//! poisoning), `kernel` (a case made ready to launch, and launching it), `persisting`
//! (the L2 persisting window), `verify`, [`compile`] (NVRTC), the clock ([`timing`]),
//! [`texture`] inputs and [`transfer`].

mod buffers;
pub mod compile;
mod device;
mod kernel;
mod persisting;
pub mod texture;
pub mod timing;
pub mod transfer;
mod verify;

pub use device::CudaDevice;
pub(crate) use device::devices_report;
pub use device::{devices, unavailable};
pub use kernel::Prepared;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use cudarc::driver::{
    CudaContext, CudaEvent, CudaModule, CudaSlice, CudaStream, DriverError, PinnedHostSlice,
};

use super::Backend;
use crate::error::{Error, Result};
use crate::measure::{Sampler, TimedWork, Timing};
use crate::results::RunInfo;
use crate::suite::{
    Cache, Case, CaseData, CudaBuild, CudaLaunch, Expected, Experiment, Measure, Setting,
    TransferPath, Twin, Words,
};
use device::driver_label;
use timing::EventClock;

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

/// The CUDA backend on one device in one build: a context, the stream everything runs
/// on, and the modules compiled so far. Its builds ([`Cuda::with_build`]) share all but
/// the build.
#[derive(Clone, Debug)]
pub struct Cuda {
    /// The CUDA device the context is on.
    pub device: CudaDevice,
    /// How the twins are compiled.
    build: CudaBuild,
    ctx: Arc<CudaContext>,
    /// The one stream: cudarc tracks no events on a single stream, so nothing but the
    /// kernels lies between the timing events.
    stream: Arc<CudaStream>,
    /// How long one launch (or batch) may take before the device counts as hung.
    timeout: Duration,
    /// Modules by [`compile::Program::cache_key`] (which holds the build's defines):
    /// cases that differ only in their data share one.
    modules: Arc<Mutex<HashMap<String, Arc<CudaModule>>>>,
    /// Page-locked host memory of [`buffers::STAGING_WORDS`] (made on first use) that
    /// inputs and outputs pass through: the driver copies pageable memory at a fraction
    /// of the link's speed.
    staging: Arc<Mutex<Option<PinnedHostSlice<u32>>>>,
    /// What a cold launch's untimed flush clears ([`crate::suite::FLUSH_BYTES`]), made on
    /// first use.
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
    pub(crate) fn for_adapter(name: &str, pci_bus_id: &str, timeout: Duration) -> Result<Cuda> {
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
        // SAFETY: the backend orders its work itself: kernels and copies on one stream,
        // a transfer's or a graph's own streams synchronised before their buffers are
        // read or dropped. Without this, every launch after a second stream exists
        // would also record an event per buffer, and the launch cost would depend on
        // whether a transfer case ran first.
        unsafe { ctx.disable_event_tracking() };
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

    /// The columns every CUDA row of a run on `host` records: the same device name as
    /// wgpu's rows, backend `cuda`, the driver, warps of 32.
    pub fn run_info(&self, host: &str) -> RunInfo {
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
            gpu: self.device.identity(host),
        }
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
            _ => case
                .dispatch
                .cuda_lacks()
                .map(|what| format!("not in CUDA: {what}"))
                .or_else(|| self.beyond_persisting_limits(case.cuda_launch)),
        }
    }

    fn prepare(&self, experiment: &Experiment, case: &Case, inputs: &[Words]) -> Result<Prepared> {
        self.build(experiment, case, inputs)
    }

    fn verify(&self, prepared: &Prepared, expected: &[Expected]) -> Result<()> {
        self.check(prepared, expected)
    }

    fn clock<'a>(
        &'a self,
        prepared: &'a Prepared,
        cache: Cache,
    ) -> Result<Box<dyn TimedWork + 'a>> {
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
        // followed it (docs/transfers.md): no transfer inherits them.
        self.leave_persisting(&mut self.persisting.lock().unwrap_or_else(|e| e.into_inner()))?;
        transfer::measure(self, experiment, case, path, sampler, data)
    }
}

#[cfg(test)]
mod tests {
    use cudarc::driver::sys;

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
}
