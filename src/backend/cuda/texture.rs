//! A case's texture input in CUDA: a CUDA array (the GPU's own 2-D texture layout, as a
//! Vulkan image of optimal tiling is for wgpu's `r32float` texture) and a texture
//! object over it, point-filtered, addressed by unnormalised texel coordinates, which
//! the twin reads with an integer texel fetch (PTX `tex.2d.v4.f32.s32`), as WGSL's
//! `textureLoad` does. Destroyed on drop.

use std::sync::Arc;

use cudarc::driver::CudaContext;
use cudarc::driver::sys::{self, CUaddress_mode, CUarray_format, CUfilter_mode, CUmemorytype};

use crate::suite::Words;

use super::{Cuda, driver_error};
use crate::error::{Error, Result};

/// A texture object over a CUDA array of f32 texels.
#[derive(Debug)]
pub(crate) struct Texture {
    ctx: Arc<CudaContext>,
    array: sys::CUarray,
    /// The kernel argument (`cudaTextureObject_t`).
    pub(crate) object: sys::CUtexObject,
}

// SAFETY: the handles are plain driver handles, usable from any thread on which their
// context is current (`Drop` makes it current).
unsafe impl Send for Texture {}
// SAFETY: as above; nothing mutates a texture after it is made.
unsafe impl Sync for Texture {}

impl Texture {
    /// A `width` × `height` texture holding `words` (f32 bits) row by row, copied in
    /// from the pinned staging buffer a band of rows at a time.
    pub(super) fn new(cuda: &Cuda, (width, height): (u32, u32), words: &Words) -> Result<Texture> {
        let (w, h) = (width as usize, height as usize);
        if words.len() != w * h {
            return Err(Error::Cuda(format!(
                "{} words for a {width}x{height} texture",
                words.len()
            )));
        }
        cuda.ctx
            .bind_to_thread()
            .map_err(driver_error("making the context current"))?;
        let descriptor = sys::CUDA_ARRAY_DESCRIPTOR {
            Width: w,
            Height: h,
            Format: CUarray_format::CU_AD_FORMAT_FLOAT,
            NumChannels: 1,
        };
        let mut array = std::ptr::null_mut();
        // SAFETY: writes one handle; the descriptor outlives the call.
        unsafe { sys::cuArrayCreate_v2(&mut array, &descriptor) }
            .result()
            .map_err(|e| {
                Error::Cuda(format!(
                    "creating a {width}x{height} CUDA array: {}",
                    super::describe(&e)
                ))
            })?;
        // From here on, drop frees the array (the object 0 is never destroyed).
        let mut texture = Texture {
            ctx: cuda.ctx.clone(),
            array,
            object: 0,
        };
        cuda.with_staging(|staging| {
            let band_rows = (staging.len() / w.max(1)).max(1);
            let band_words = band_rows * w.max(1);
            for (band, start) in (0..words.len()).step_by(band_words).enumerate() {
                let rows = words.piece(start..(start + band_words).min(words.len()));
                staging[..rows.len()].copy_from_slice(&rows);
                // Every field named: a zeroed CUDA_MEMCPY2D is invalid (its memory-type
                // enums start at 1), and Rust aborts on one.
                let copy = sys::CUDA_MEMCPY2D {
                    srcXInBytes: 0,
                    srcY: 0,
                    srcMemoryType: CUmemorytype::CU_MEMORYTYPE_HOST,
                    srcHost: staging.as_ptr().cast(),
                    srcDevice: 0,
                    srcArray: std::ptr::null_mut(),
                    srcPitch: 4 * w,
                    dstXInBytes: 0,
                    dstY: band * band_rows,
                    dstMemoryType: CUmemorytype::CU_MEMORYTYPE_ARRAY,
                    dstHost: std::ptr::null_mut(),
                    dstDevice: 0,
                    dstArray: array,
                    dstPitch: 0,
                    WidthInBytes: 4 * w,
                    Height: rows.len() / w,
                };
                // SAFETY: the source holds `Height` rows of `WidthInBytes` in pinned
                // memory and the band lies within the array; the copy is synchronous.
                unsafe { sys::cuMemcpy2D_v2(&copy) }
                    .result()
                    .map_err(driver_error("uploading a texture"))?;
            }
            Ok(())
        })?;
        // SAFETY: all-zero is a valid descriptor of either kind; the fields that matter
        // are set below.
        let mut resource: sys::CUDA_RESOURCE_DESC = unsafe { std::mem::zeroed() };
        resource.resType = sys::CUresourcetype::CU_RESOURCE_TYPE_ARRAY;
        resource.res.array.hArray = array;
        // SAFETY: as above.
        let mut sampling: sys::CUDA_TEXTURE_DESC = unsafe { std::mem::zeroed() };
        // The kernels never read outside the texture; clamp keeps a stray read in it.
        sampling.addressMode = [CUaddress_mode::CU_TR_ADDRESS_MODE_CLAMP; 3];
        // textureLoad's semantics: the texel itself, no filtering; flags 0: coordinates
        // in texels, not normalised.
        sampling.filterMode = CUfilter_mode::CU_TR_FILTER_MODE_POINT;
        // SAFETY: writes one handle; the descriptors outlive the call.
        unsafe {
            sys::cuTexObjectCreate(&mut texture.object, &resource, &sampling, std::ptr::null())
        }
        .result()
        .map_err(driver_error("creating a texture object"))?;
        Ok(texture)
    }
}

impl Drop for Texture {
    fn drop(&mut self) {
        // Launches that read the texture finish before it goes; errors cannot be
        // reported from a drop, and the context frees what is left when it goes.
        if self.ctx.bind_to_thread().is_err() || self.ctx.synchronize().is_err() {
            return;
        }
        // SAFETY: both handles were made by `new` in this context and are not used
        // after this.
        unsafe {
            if self.object != 0 {
                let _ = sys::cuTexObjectDestroy(self.object);
            }
            let _ = sys::cuArrayDestroy(self.array);
        }
    }
}
