//! Which physical GPU an adapter is: its UUID (NVML's where NVIDIA's driver is there,
//! else Vulkan's device UUID), its PCI bus id and link, and the host it is in. Two GPUs
//! of one model differ here and nowhere else.

use crate::backend::nvml;
use crate::error::{Error, Result};
use crate::results::GpuIdentity;
use crate::text;

/// What an adapter without one records: a software adapter is no physical GPU.
pub(crate) const NONE: &str = "-";

/// The identity of `adapter` (described by `info`) on this host; an error where the
/// host's name is unfit for a row ([`host`]).
pub fn of(adapter: &wgpu::Adapter, info: &wgpu::AdapterInfo) -> Result<GpuIdentity> {
    Ok(GpuIdentity {
        host: host()?,
        ..without_host(adapter, info)
    })
}

/// The GPU's part of [`of`], the host left empty: what names a GPU on this machine
/// (`--adapter`, `membench devices`).
pub(crate) fn without_host(adapter: &wgpu::Adapter, info: &wgpu::AdapterInfo) -> GpuIdentity {
    let software = info.device_type == wgpu::DeviceType::Cpu;
    let pci_bus_id = if info.device_pci_bus_id.is_empty() || software {
        NONE.to_owned()
    } else {
        info.device_pci_bus_id.clone()
    };
    let from_nvml = nvml::gpu_at(&pci_bus_id).map(|gpu| gpu.identity());
    let gpu_uuid = match &from_nvml {
        Some(identity) if !identity.uuid.is_empty() => identity.uuid.clone(),
        _ if software => NONE.to_owned(),
        _ => vulkan_uuid(adapter).unwrap_or_else(|| NONE.to_owned()),
    };
    GpuIdentity {
        host: String::new(),
        gpu_uuid,
        pci_bus_id,
        pcie_link: from_nvml
            .map(|identity| identity.pcie_link)
            .unwrap_or_default(),
    }
}

/// The variable that names the host where the system's name is the wrong one.
pub(crate) const HOST_VARIABLE: &str = "MEMBENCH_HOST";

/// This machine's name: [`HOST_VARIABLE`] where set (a pod's host name is the pod's, not
/// the node's), trimmed, else the system's. A name a row, a path or a terminal could not
/// take is refused here, before it reaches any, with one line naming its source.
pub fn host() -> Result<String> {
    if let Some(host) = crate::text::environment(HOST_VARIABLE).map_err(Error::Environment)? {
        return Ok(host);
    }
    let system = gethostname::gethostname().to_string_lossy().into_owned();
    match text::unfit(&system) {
        None => Ok(system),
        Some(why) => Err(Error::Environment(format!(
            "the system's host name \"{}\": {why}; set {HOST_VARIABLE} to a plain one",
            text::shown(&system)
        ))),
    }
}

/// The adapter's `VkPhysicalDeviceIDProperties::deviceUUID` as `8-4-4-4-12` hex, where it
/// is a Vulkan adapter of Vulkan 1.1 or later with a UUID that is not all zeros.
fn vulkan_uuid(adapter: &wgpu::Adapter) -> Option<String> {
    // SAFETY: the raw instance and physical device are only read, while `adapter`
    // (which owns them) is alive.
    let bytes = unsafe {
        let hal = adapter.as_hal::<wgpu::hal::api::Vulkan>()?;
        let instance = hal.shared_instance().raw_instance();
        let physical = hal.raw_physical_device();
        let api = instance
            .get_physical_device_properties(physical)
            .api_version;
        if api < ash::vk::API_VERSION_1_1 {
            return None;
        }
        let mut id = ash::vk::PhysicalDeviceIDProperties::default();
        let mut properties = ash::vk::PhysicalDeviceProperties2::default().push_next(&mut id);
        instance.get_physical_device_properties2(physical, &mut properties);
        id.device_uuid
    };
    (bytes != [0; 16]).then(|| uuid_text(&bytes))
}

/// 16 bytes as a UUID's text: `8-4-4-4-12` lower-case hex digits.
fn uuid_text(bytes: &[u8; 16]) -> String {
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..]
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_uuid_reads_as_nvidia_smi_writes_its_digits() {
        let bytes = [
            0x8f, 0x2e, 0x1c, 0x3a, 0x51, 0x6b, 0x4d, 0x2e, 0x9a, 0x0b, 0x7c, 0x11, 0x22, 0x33,
            0x44, 0x55,
        ];
        assert_eq!(uuid_text(&bytes), "8f2e1c3a-516b-4d2e-9a0b-7c1122334455");
    }
}
