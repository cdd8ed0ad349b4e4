//! Adapters: the instance from the environment, the adapters it offers best first,
//! the one `--adapter` picks, and what the CLI and the CSV say about them.

use crate::error::{Error, Result};
use crate::text;

/// The instance from the environment: `WGPU_BACKEND` picks backends.
pub(crate) fn instance() -> Result<wgpu::Instance> {
    check_backend_names()?;
    Ok(wgpu::Instance::new(
        wgpu::InstanceDescriptor::new_without_display_handle_from_env(),
    ))
}

/// The variable that picks wgpu's backends.
const BACKEND_VARIABLE: &str = "WGPU_BACKEND";

/// The variable that picks an adapter where `--adapter` does not.
const ADAPTER_VARIABLE: &str = "WGPU_ADAPTER_NAME";

/// The environment variable `name`, checked ([`text::environment`]).
pub(super) fn environment(name: &str) -> Result<Option<String>> {
    text::environment(name).map_err(Error::Environment)
}

/// The names `WGPU_BACKEND` takes, as wgpu reads them.
const BACKEND_NAMES: &[&str] = &[
    "vulkan", "vk", "dx12", "d3d12", "metal", "mtl", "opengl", "gles", "gl", "webgpu", "noop",
];

/// An error where `WGPU_BACKEND` holds a name wgpu does not know: wgpu would skip it
/// and find no adapter, and the error would suggest installing a driver.
fn check_backend_names() -> Result<()> {
    let Some(value) = environment(BACKEND_VARIABLE)? else {
        return Ok(());
    };
    let lower = value.to_lowercase();
    match lower
        .split(',')
        .map(str::trim)
        .find(|name| !BACKEND_NAMES.contains(name))
    {
        Some(bad) => Err(Error::Environment(format!(
            "WGPU_BACKEND={value:?}: `{bad}` is not a backend; wgpu knows {}",
            BACKEND_NAMES.join(", ")
        ))),
        None => Ok(()),
    }
}

/// Every adapter of the instance, best first: real GPUs before software ones, and
/// Vulkan/Metal/DX12 before GL (the compute path of GL is the least complete).
pub fn adapters(instance: &wgpu::Instance) -> Vec<wgpu::Adapter> {
    let mut adapters = pollster::block_on(instance.enumerate_adapters(wgpu::Backends::all()));
    adapters.sort_by_key(|adapter| {
        let info = adapter.get_info();
        let device_rank = match info.device_type {
            wgpu::DeviceType::DiscreteGpu => 0,
            wgpu::DeviceType::IntegratedGpu => 1,
            wgpu::DeviceType::VirtualGpu => 2,
            wgpu::DeviceType::Cpu => 3,
            wgpu::DeviceType::Other => 4,
        };
        let backend_rank = match info.backend {
            wgpu::Backend::Vulkan | wgpu::Backend::Metal | wgpu::Backend::Dx12 => 0,
            _ => 1,
        };
        (device_rank, backend_rank)
    });
    adapters
}

/// Picks an adapter by index or case-insensitive name substring (`--adapter`, else
/// `WGPU_ADAPTER_NAME`), or the best one.
pub(crate) fn select_adapter(
    instance: &wgpu::Instance,
    selector: Option<&str>,
) -> Result<wgpu::Adapter> {
    let mut adapters = adapters(instance);
    if adapters.is_empty() {
        let backends = environment(BACKEND_VARIABLE)?
            .map(|b| format!(" for {BACKEND_VARIABLE}={b}"))
            .unwrap_or_default();
        return Err(Error::NoAdapter(backends));
    }
    let wanted = match selector {
        Some(selector) => Some(selector.to_owned()),
        None => environment(ADAPTER_VARIABLE)?,
    };
    let Some(wanted) = wanted else {
        return Ok(adapters.swap_remove(0));
    };
    let names: Vec<String> = adapters.iter().map(|a| info(a).name).collect();
    let listing = |indexes: &mut dyn Iterator<Item = usize>| {
        indexes
            .map(|i| format!("  {i}: {}", describe(&info(&adapters[i]))))
            .collect::<Vec<_>>()
            .join("\n")
    };
    // A GPU's UUID (or its first digits) or PCI bus id names it exactly; an index
    // never looks like one.
    if wanted.parse::<usize>().is_err() {
        let by_gpu: Vec<usize> = (0..adapters.len())
            .filter(|&i| {
                let gpu = super::identity::without_host(&adapters[i], &info(&adapters[i]));
                names_gpu(&gpu, &wanted)
            })
            .collect();
        if let [index] = by_gpu.as_slice() {
            return Ok(adapters.swap_remove(*index));
        }
    }
    match adapter_matches(&names, &wanted).as_slice() {
        [index] if !wanted.is_empty() => Ok(adapters.swap_remove(*index)),
        [] => Err(Error::AdapterNotFound {
            available: listing(&mut (0..adapters.len())),
            wanted,
        }),
        several => Err(Error::AdapterAmbiguous {
            matching: listing(&mut several.iter().copied()),
            wanted,
        }),
    }
}

/// Whether `wanted` is the GPU `gpu`'s PCI bus id, its UUID, or the UUID's first eight
/// digits or more (as `{uuid}` writes them).
fn names_gpu(gpu: &crate::results::GpuIdentity, wanted: &str) -> bool {
    let wanted = wanted.to_lowercase();
    let uuid = gpu.gpu_uuid.to_lowercase();
    let digits = uuid.trim_start_matches("gpu-");
    (gpu.pci_bus_id != super::identity::NONE && gpu.pci_bus_id.eq_ignore_ascii_case(&wanted))
        || (uuid != super::identity::NONE
            && (uuid == wanted || (wanted.len() >= 8 && digits.starts_with(&wanted))))
}

/// The indexes of the adapters (by `names`) that `wanted` names: an index, or a
/// case-insensitive substring of their names (an empty one names them all).
fn adapter_matches(names: &[String], wanted: &str) -> Vec<usize> {
    match wanted.parse::<usize>() {
        Ok(index) => (index < names.len()).then_some(index).into_iter().collect(),
        Err(_) => {
            let needle = wanted.to_lowercase();
            (0..names.len())
                .filter(|&i| names[i].to_lowercase().contains(&needle))
                .collect()
        }
    }
}

/// The PCI vendor's name where known, with its id.
pub(super) fn vendor_name(id: u32) -> String {
    let name = match id {
        0x10de => "NVIDIA",
        0x1002 => "AMD",
        0x8086 => "Intel",
        0x106b => "Apple",
        0x13b5 => "ARM",
        0x5143 => "Qualcomm",
        0x10005 => "Mesa",
        _ => "",
    };
    format!("{name} {id:#06x}").trim().to_owned()
}

/// What `adapter` says of itself, its name and its driver's with every character a
/// terminal or a row could not take escaped ([`text::shown`]): how an adapter's
/// description enters membench.
pub fn info(adapter: &wgpu::Adapter) -> wgpu::AdapterInfo {
    let info = adapter.get_info();
    let fit = |text: String| text::shown(&text).into_owned();
    wgpu::AdapterInfo {
        name: fit(info.name),
        driver: fit(info.driver),
        driver_info: fit(info.driver_info),
        ..info
    }
}

/// `name (backend, type)`.
pub(crate) fn describe(info: &wgpu::AdapterInfo) -> String {
    format!("{} ({:?}, {:?})", info.name, info.backend, info.device_type)
}

/// Subgroup size as the adapter reports it: one number, or `min-max` where the
/// driver may choose per pipeline; empty where subgroups are not offered.
pub(crate) fn subgroup_label(adapter: &wgpu::Adapter) -> String {
    let info = adapter.get_info();
    if !adapter.features().contains(wgpu::Features::SUBGROUP) || info.subgroup_max_size == 0 {
        String::new()
    } else if info.subgroup_min_size == info.subgroup_max_size {
        info.subgroup_max_size.to_string()
    } else {
        format!("{}-{}", info.subgroup_min_size, info.subgroup_max_size)
    }
}

/// The optional features the suite uses, where the adapter offers them.
pub(super) fn wanted_features(adapter: &wgpu::Adapter) -> wgpu::Features {
    adapter.features()
        & (wgpu::Features::TIMESTAMP_QUERY
            | wgpu::Features::TIMESTAMP_QUERY_INSIDE_ENCODERS
            | wgpu::Features::SUBGROUP
            // f16 arithmetic: the compute family's f16 sweep.
            | wgpu::Features::SHADER_F16
            // SPIR-V given to the driver as it is: the tax-free build.
            | wgpu::Features::PASSTHROUGH_SHADERS
            // Storage the host maps directly: one of the transfer paths.
            | wgpu::Features::MAPPABLE_PRIMARY_BUFFERS)
}

/// Why `adapter` runs no compute shaders, if it runs none. wgpu asks EGL for a desktop
/// OpenGL 3.3 context; Mesa gives 4.5, but NVIDIA's driver gives exactly 3.3, whose
/// GLSL 3.30 naga cannot write compute shaders in (they need OpenGL 4.3), and opening
/// the device then fails as "Parent device is lost".
pub(crate) fn no_compute(adapter: &wgpu::Adapter) -> Option<String> {
    let info = adapter.get_info();
    if !adapter
        .get_downlevel_capabilities()
        .flags
        .contains(wgpu::DownlevelFlags::COMPUTE_SHADERS)
    {
        return Some(String::new());
    }
    let desktop_gl = info.backend == wgpu::Backend::Gl && !info.driver_info.contains("OpenGL ES");
    let version = gl_version(&info.driver_info)?;
    (desktop_gl && version < (4, 3)).then(|| {
        format!(
            ": its OpenGL context is version {}.{} and compute shaders need 4.3 (wgpu asks \
             EGL for 3.3, which this driver gives as it is)",
            version.0, version.1
        )
    })
}

/// The (major, minor) an OpenGL version string starts with ("3.3.0 NVIDIA 580.159.04",
/// "4.5 (Core Profile) Mesa 22.3.6").
fn gl_version(text: &str) -> Option<(u32, u32)> {
    let mut parts = text.split_whitespace().next()?.split('.');
    Some((parts.next()?.parse().ok()?, parts.next()?.parse().ok()?))
}

/// What `membench devices` prints about one adapter.
pub(crate) fn adapter_report(index: usize, adapter: &wgpu::Adapter) -> String {
    let info = info(adapter);
    let limits = adapter.limits();
    let features = adapter.features();
    let yes_no = |feature| {
        if features.contains(feature) {
            "yes"
        } else {
            "no"
        }
    };
    let subgroup = subgroup_label(adapter);
    let identity = super::identity::without_host(adapter, &info);
    // Clocks, power limit, ECC and MIG, where NVML knows the GPU.
    let nvml = crate::backend::nvml::gpu_at(&identity.pci_bus_id)
        .map_or_else(String::new, |gpu| format!("\n   {}", gpu.report()));
    format!(
        "{index}: {}\n   backend {:?}, type {:?}, driver {} {}\n   GPU {}, PCI bus {}{}\n   compute shaders {}, subgroup size {}, timestamps {} (inside encoders {}), \
         subgroups {}, mappable storage {}\n   \
         max storage binding {} MiB, max buffer {} MiB, workgroup invocations {}, workgroup storage {} KiB, \
         workgroups per dimension {}",
        info.name,
        info.backend,
        info.device_type,
        info.driver,
        info.driver_info,
        identity.gpu_uuid,
        identity.pci_bus_id,
        nvml,
        if no_compute(adapter).is_none() {
            "yes"
        } else {
            "no"
        },
        if subgroup.is_empty() { "-" } else { &subgroup },
        yes_no(wgpu::Features::TIMESTAMP_QUERY),
        yes_no(wgpu::Features::TIMESTAMP_QUERY_INSIDE_ENCODERS),
        yes_no(wgpu::Features::SUBGROUP),
        yes_no(wgpu::Features::MAPPABLE_PRIMARY_BUFFERS),
        limits.max_storage_buffer_binding_size >> 20,
        limits.max_buffer_size >> 20,
        limits.max_compute_invocations_per_workgroup,
        limits.max_compute_workgroup_storage_size >> 10,
        limits.max_compute_workgroups_per_dimension,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gl_versions_are_read_from_the_driver_string() {
        assert_eq!(gl_version("3.3.0 NVIDIA 580.159.04"), Some((3, 3)));
        assert_eq!(gl_version("4.5 (Core Profile) Mesa 22.3.6"), Some((4, 5)));
        assert_eq!(gl_version("NVIDIA"), None);
        assert_eq!(gl_version(""), None);
    }

    #[test]
    fn adapters_are_named_by_index_or_by_part_of_one_name() {
        let names = ["llvmpipe (LLVM 15)", "llvmpipe (LLVM 15)", "NVIDIA H100"].map(String::from);
        assert_eq!(adapter_matches(&names, "1"), [1]);
        assert_eq!(adapter_matches(&names, "3"), [0usize; 0]);
        assert_eq!(adapter_matches(&names, "h100"), [2]);
        assert_eq!(adapter_matches(&names, "LLVMpipe"), [0, 1]);
        assert_eq!(adapter_matches(&names, ""), [0, 1, 2]);
    }
}
