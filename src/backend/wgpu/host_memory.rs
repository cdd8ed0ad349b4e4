//! Host memory the GPU copies to and from directly: a page-aligned host allocation
//! imported through `VK_EXT_external_memory_host` and wrapped as a wgpu buffer, wgpu's
//! analogue of CUDA's pinned memory. WebGPU has no such thing; on Vulkan, wgpu-hal
//! lets a program open the device with the extension and hand wgpu a buffer it made.
//! Elsewhere, or where the driver lacks the extension, the paths that need it are
//! skipped with the reason.

use std::alloc::Layout;
use std::ffi::CStr;

use ash::vk;
use wgpu::hal::api::Vulkan;

use crate::error::{Error, Result};

/// The extension.
const EXTENSION: &CStr = ash::ext::external_memory_host::NAME;

/// The handle type of a host allocation.
const HANDLE: vk::ExternalMemoryHandleTypeFlags =
    vk::ExternalMemoryHandleTypeFlags::HOST_ALLOCATION_EXT;

/// Opens `adapter`'s device as `request_device` would, with the extension enabled where
/// the adapter is Vulkan and offers it; `None` where it does not (the caller opens the
/// device the plain way).
pub(crate) fn open_device(
    adapter: &wgpu::Adapter,
    desc: &wgpu::DeviceDescriptor<'_>,
) -> Option<Result<(wgpu::Device, wgpu::Queue)>> {
    // SAFETY: the hal adapter is used only while `adapter`, which owns it, is alive; the
    // callback only adds an extension the adapter offers, which wgpu-hal permits.
    let opened = unsafe {
        let hal = adapter.as_hal::<Vulkan>()?;
        let instance = hal.shared_instance().raw_instance();
        let offered = instance
            .enumerate_device_extension_properties(hal.raw_physical_device())
            .ok()?
            .iter()
            .any(|e| e.extension_name_as_c_str() == Ok(EXTENSION));
        if !offered {
            return None;
        }
        hal.open_with_callback(
            desc.required_features,
            &desc.required_limits,
            &desc.memory_hints,
            Some(Box::new(|args| args.extensions.push(EXTENSION))),
        )
    };
    let opened = match opened {
        Ok(opened) => opened,
        Err(error) => return Some(Err(Error::Gpu(format!("opening the device: {error}")))),
    };
    // SAFETY: `opened` was just opened from this adapter with the descriptor's features
    // and limits.
    Some(
        unsafe { adapter.create_device_from_hal::<Vulkan>(opened, desc) }
            .map_err(|e| Error::Gpu(format!("opening the device: {e}"))),
    )
}

/// Why `device` cannot import host memory, if it cannot.
pub(crate) fn unavailable(device: &wgpu::Device) -> Option<String> {
    // SAFETY: only reads which extensions the device was opened with.
    let enabled = unsafe {
        device
            .as_hal::<Vulkan>()
            .map(|hal| hal.enabled_device_extensions().contains(&EXTENSION))
    };
    match enabled {
        Some(true) => None,
        Some(false) => Some("the Vulkan driver does not offer VK_EXT_external_memory_host".into()),
        None => Some("importing host memory needs Vulkan (VK_EXT_external_memory_host)".into()),
    }
}

/// A host allocation the GPU reads and writes as the buffer `buffer`.
pub(crate) struct HostBuffer {
    pub buffer: wgpu::Buffer,
    /// The allocation's address, as a number: it is freed by the buffer's drop callback.
    address: usize,
    len: usize,
}

impl HostBuffer {
    /// The host's view of the buffer's bytes: what the GPU reads, or wrote.
    pub(crate) fn bytes_mut(&mut self) -> &mut [u8] {
        // SAFETY: the allocation lives until `buffer`'s last user is gone, which is after
        // `self`; `&mut self` makes this view the only one on the host. The GPU touches
        // the bytes only inside a submission the caller waits for.
        unsafe { std::slice::from_raw_parts_mut(self.address as *mut u8, self.len) }
    }
}

/// `bytes` of zeroed, page-aligned host memory imported as a buffer with `usage` (a
/// copy's source or destination, storage), on a device opened by [`open_device`].
pub(crate) fn import(
    device: &wgpu::Device,
    label: &str,
    bytes: u64,
    usage: wgpu::BufferUsages,
) -> Result<HostBuffer> {
    if let Some(why) = unavailable(device) {
        return Err(Error::Case(why));
    }
    let failed = |what: &str, error: vk::Result| Error::Gpu(format!("{label}: {what}: {error}"));
    // SAFETY: every Vulkan object made here is made on the device wgpu uses, bound
    // before wgpu sees it, and destroyed by the drop callback once wgpu is done with the
    // buffer; the host allocation outlives the memory imported from it.
    unsafe {
        let hal = device
            .as_hal::<Vulkan>()
            .ok_or_else(|| Error::Case("not a Vulkan device".into()))?;
        let raw = hal.raw_device().clone();
        let instance = hal.shared_instance().raw_instance();
        let mut host_properties = vk::PhysicalDeviceExternalMemoryHostPropertiesEXT::default();
        let mut properties =
            vk::PhysicalDeviceProperties2::default().push_next(&mut host_properties);
        instance.get_physical_device_properties2(hal.raw_physical_device(), &mut properties);
        let align = crate::host_len(
            host_properties
                .min_imported_host_pointer_alignment
                .max(4096),
        );
        let size = crate::host_len(bytes).next_multiple_of(align);
        let layout = Layout::from_size_align(size, align)
            .map_err(|e| Error::Case(format!("{label}: {e}")))?;
        let host = std::alloc::alloc_zeroed(layout);
        if host.is_null() {
            return Err(Error::Case(format!(
                "{label}: no {size} bytes of host memory"
            )));
        }
        let free_host = || std::alloc::dealloc(host, layout);

        let ext = ash::ext::external_memory_host::Device::new(instance, &raw);
        let mut pointer = vk::MemoryHostPointerPropertiesEXT::default();
        let result = (ext.fp().get_memory_host_pointer_properties_ext)(
            raw.handle(),
            HANDLE,
            host.cast(),
            &mut pointer,
        );
        if result != vk::Result::SUCCESS {
            free_host();
            return Err(failed("vkGetMemoryHostPointerPropertiesEXT", result));
        }
        let mut external = vk::ExternalMemoryBufferCreateInfo::default().handle_types(HANDLE);
        let info = vk::BufferCreateInfo::default()
            .size(size as u64)
            .usage(
                vk::BufferUsageFlags::TRANSFER_SRC
                    | vk::BufferUsageFlags::TRANSFER_DST
                    | vk::BufferUsageFlags::STORAGE_BUFFER,
            )
            .sharing_mode(vk::SharingMode::EXCLUSIVE)
            .push_next(&mut external);
        let buffer = match raw.create_buffer(&info, None) {
            Ok(buffer) => buffer,
            Err(error) => {
                free_host();
                return Err(failed("vkCreateBuffer", error));
            }
        };
        let fits =
            raw.get_buffer_memory_requirements(buffer).memory_type_bits & pointer.memory_type_bits;
        let types = instance.get_physical_device_memory_properties(hal.raw_physical_device());
        // A coherent type: the host reads and writes the bytes with no flush.
        let coherent =
            vk::MemoryPropertyFlags::HOST_VISIBLE | vk::MemoryPropertyFlags::HOST_COHERENT;
        let Some(type_index) = (0..types.memory_type_count).find(|&i| {
            fits & (1 << i) != 0
                && types.memory_types[i as usize]
                    .property_flags
                    .contains(coherent)
        }) else {
            raw.destroy_buffer(buffer, None);
            free_host();
            return Err(Error::Case(format!(
                "{label}: no host-coherent memory type can import host memory"
            )));
        };
        let mut import = vk::ImportMemoryHostPointerInfoEXT::default()
            .handle_type(HANDLE)
            .host_pointer(host.cast());
        let allocate = vk::MemoryAllocateInfo::default()
            .allocation_size(size as u64)
            .memory_type_index(type_index)
            .push_next(&mut import);
        let memory = match raw.allocate_memory(&allocate, None) {
            Ok(memory) => memory,
            Err(error) => {
                raw.destroy_buffer(buffer, None);
                free_host();
                return Err(failed("vkAllocateMemory", error));
            }
        };
        if let Err(error) = raw.bind_buffer_memory(buffer, memory, 0) {
            raw.free_memory(memory, None);
            raw.destroy_buffer(buffer, None);
            free_host();
            return Err(failed("vkBindBufferMemory", error));
        }
        let address = host as usize;
        let release = {
            let raw = raw.clone();
            move || {
                raw.destroy_buffer(buffer, None);
                raw.free_memory(memory, None);
                std::alloc::dealloc(address as *mut u8, layout);
            }
        };
        drop(hal);
        let hal_buffer =
            wgpu::hal::vulkan::Buffer::from_raw_externally_owned(buffer, Box::new(release));
        let buffer = device.create_buffer_from_hal::<Vulkan>(
            hal_buffer,
            &wgpu::BufferDescriptor {
                label: Some(label),
                size: bytes,
                usage,
                mapped_at_creation: false,
            },
        );
        Ok(HostBuffer {
            buffer,
            address,
            len: crate::host_len(bytes),
        })
    }
}
