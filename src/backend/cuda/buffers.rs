//! Buffers between host and device: the pinned staging buffer every upload and
//! readback goes through, inputs uploaded through it, and outputs poisoned before a
//! kernel writes them.

use cudarc::driver::sys;
use cudarc::driver::{CudaSlice, DevicePtr};
use rayon::prelude::*;

use super::{Cuda, driver_error};
use crate::error::{Error, Result};
use crate::suite::{POISON, Words};

/// Words of the pinned staging buffer, the piece an input is uploaded and an output read
/// back and checked in: the host never holds a second copy of a large buffer.
pub(super) const STAGING_WORDS: usize = 16 << 20;

impl Cuda {
    /// A device buffer holding `words`, copied in through the staging buffer piece by
    /// piece.
    pub(super) fn upload(&self, words: &[u32]) -> Result<CudaSlice<u32>> {
        self.upload_pieces(words.len(), |start, to| {
            let from = &words[start..start + to.len()];
            to.par_chunks_mut(1 << 18)
                .zip(from.par_chunks(1 << 18))
                .for_each(|(to, from)| to.copy_from_slice(from))
        })
    }

    /// A device buffer holding `words`, made and copied in piece by piece: made words
    /// are never held whole.
    pub(super) fn upload_words(&self, words: &Words) -> Result<CudaSlice<u32>> {
        self.upload_pieces(words.len(), |start, to| words.fill(start, to))
    }

    /// A device buffer of `len` words, `fill` writing each piece of them in turn from its
    /// first word on.
    fn upload_pieces(
        &self,
        len: usize,
        fill: impl Fn(usize, &mut [u32]),
    ) -> Result<CudaSlice<u32>> {
        if len == 0 {
            return self.poisoned(0);
        }
        // SAFETY: every word is written by the copies below before anything reads it.
        let mut buffer = unsafe { self.stream.alloc::<u32>(len) }
            .map_err(driver_error("allocating an input"))?;
        self.with_staging(|staging| {
            let piece_words = staging.len();
            for start in (0..len).step_by(piece_words) {
                let host = &mut staging[..piece_words.min(len - start)];
                fill(start, host);
                self.stream
                    .memcpy_htod(&*host, &mut buffer.slice_mut(start..start + host.len()))
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
    pub(super) fn with_staging<T>(&self, work: impl FnOnce(&mut [u32]) -> Result<T>) -> Result<T> {
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
    pub(super) fn poisoned(&self, words: usize) -> Result<CudaSlice<u32>> {
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
}
