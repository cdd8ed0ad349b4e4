//! Device discovery: whether the driver and NVRTC are here to use, every CUDA device
//! and what `membench devices` and the CSV say of it, and which device is a given wgpu
//! adapter (the CUDA side of the wgpu backend's `adapter` and `identity`).

use cudarc::driver::result;
use cudarc::driver::sys::{self, CUdevice_attribute};

use super::{compile, describe, driver_error};
use crate::error::{Error, Result};
use crate::results::GpuIdentity;

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

/// What `membench devices` and the results record of one CUDA device.
#[derive(Clone, Debug)]
pub struct CudaDevice {
    pub(crate) ordinal: usize,
    /// As the driver names it: the same as the wgpu adapter's name on Vulkan.
    pub name: String,
    pub(crate) compute_capability: (i32, i32),
    /// `domain:bus:device.0`, as wgpu writes an adapter's PCI bus id.
    pub pci_bus_id: String,
    pub(crate) memory_bytes: usize,
    pub(crate) multiprocessors: i32,
    pub(crate) shared_bytes_per_block: i32,
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
    pub(crate) fn is_adapter(&self, name: &str, pci_bus_id: &str) -> bool {
        let same_name = name == self.name
            || name
                .strip_prefix(self.name.as_str())
                .is_some_and(|rest| rest.starts_with('/'));
        same_name && (pci_bus_id.is_empty() || pci_bus_id.eq_ignore_ascii_case(&self.pci_bus_id))
    }

    /// Which physical GPU this is (NVML's UUID and link, where NVML is there), on `host`:
    /// the same as the wgpu adapter's of the same GPU.
    pub fn identity(&self, host: &str) -> GpuIdentity {
        let nvml = crate::backend::nvml::gpu_at(&self.pci_bus_id).map(|gpu| gpu.identity());
        GpuIdentity {
            host: host.to_owned(),
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
pub(super) fn driver_label() -> String {
    let version = driver_version().unwrap_or_else(|| "CUDA version unknown".to_owned());
    match kernel_module_release() {
        Some(release) => format!("{release}, {version}"),
        None => version,
    }
}

/// What `membench devices` prints about CUDA: each device, or why there are none.
pub(crate) fn devices_report() -> String {
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

#[cfg(test)]
mod tests {
    use super::*;

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
