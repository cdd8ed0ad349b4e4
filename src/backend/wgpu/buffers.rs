//! Buffers between host and device: the staging buffers every upload and readback
//! goes through, outputs poisoned before a kernel writes them, and mapping.

use std::cell::RefCell;
use std::sync::OnceLock;

use super::GpuContext;
use crate::error::{Error, Result};
use crate::suite::{POISON, Words};
use rayon::prelude::*;

/// Bytes of each staging buffer: outputs and inputs go through in pieces of this size.
const STAGING_BYTES: u64 = 64 << 20;

/// The staging and poison buffers every case reuses, made on first use: allocating a
/// fresh staging buffer of hundreds of MiB costs more than filling it, and poison is
/// cheaper copied on the device.
#[derive(Debug, Default)]
pub(super) struct Staging {
    /// Host writes, the device copies from (`MAP_WRITE | COPY_SRC`).
    upload: OnceLock<wgpu::Buffer>,
    /// The device copies into, the host reads (`MAP_READ | COPY_DST`).
    readback: OnceLock<wgpu::Buffer>,
    /// [`POISON`] words, copied over outputs before they are verified.
    poison: OnceLock<wgpu::Buffer>,
}

impl GpuContext {
    /// Maps every one of `buffers` whole in `mode` and waits until all are mapped (or
    /// one fails): the GPU must first finish what it does with them.
    pub(crate) fn map_all<'a>(
        &self,
        buffers: impl IntoIterator<Item = &'a wgpu::Buffer>,
        mode: wgpu::MapMode,
    ) -> Result<()> {
        let (sender, receiver) = std::sync::mpsc::channel();
        let mut pending = 0;
        for buffer in buffers {
            let sender = sender.clone();
            buffer.map_async(mode, .., move |result| {
                // The receiver outlives the poll below; a failed send cannot happen.
                let _ = sender.send(result);
            });
            pending += 1;
        }
        self.device
            .poll(wgpu::PollType::Wait {
                submission_index: None,
                timeout: Some(self.timeout),
            })
            .map_err(|_| Error::Timeout(self.timeout))?;
        for _ in 0..pending {
            receiver
                .recv_timeout(self.timeout)
                .map_err(|_| Error::Timeout(self.timeout))?
                .map_err(|error| Error::Map(error.to_string()))?;
        }
        Ok(())
    }

    /// Maps `buffer` for reading, waits for it, and hands the words of its first
    /// `bytes` to `read`.
    pub(crate) fn read_mapped<T>(
        &self,
        buffer: &wgpu::Buffer,
        bytes: u64,
        read: impl FnOnce(&[u32]) -> T,
    ) -> Result<T> {
        self.map_all([buffer], wgpu::MapMode::Read)?;
        let view = buffer
            .get_mapped_range(..bytes)
            .map_err(|error| Error::Map(error.to_string()))?;
        let words =
            bytemuck::try_cast_slice(&view).map_err(|error| Error::Map(error.to_string()))?;
        let value = read(words);
        drop(view);
        buffer.unmap();
        Ok(value)
    }

    /// A staging buffer of the context (made on first use) with `usage`.
    fn staging_buffer<'a>(
        &self,
        slot: &'a OnceLock<wgpu::Buffer>,
        label: &str,
        usage: wgpu::BufferUsages,
    ) -> &'a wgpu::Buffer {
        slot.get_or_init(|| {
            self.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size: STAGING_BYTES.min(self.limits.max_buffer_size),
                usage,
                mapped_at_creation: false,
            })
        })
    }

    /// A buffer holding `words`, copied in through the upload staging buffer piece
    /// by piece.
    pub(crate) fn upload(
        &self,
        label: &str,
        usage: wgpu::BufferUsages,
        words: &[u32],
    ) -> Result<wgpu::Buffer> {
        self.upload_words(label, usage, &Words::Held(words.to_vec()))
    }

    /// A buffer holding `words`, made and copied in through the upload staging buffer
    /// piece by piece: made words are never held whole.
    pub(crate) fn upload_words(
        &self,
        label: &str,
        usage: wgpu::BufferUsages,
        words: &Words,
    ) -> Result<wgpu::Buffer> {
        let buffer = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(label),
            // Uniform bindings are read in 16-byte rows.
            size: (4 * words.len() as u64).next_multiple_of(16),
            usage: usage | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let staging = self.upload_staging();
        let piece_words = crate::host_len(staging.size()) / 4;
        for start in (0..words.len()).step_by(piece_words.max(1)) {
            let range = start..(start + piece_words).min(words.len());
            let bytes = 4 * range.len() as u64;
            self.map_all([staging], wgpu::MapMode::Write)?;
            match words.held() {
                Some(held) => write_parallel(staging, bytemuck::cast_slice(&held[range]))?,
                None => PIECE.with_borrow_mut(|piece| {
                    piece.resize(range.len(), 0);
                    words.fill(start, piece);
                    write_parallel(staging, bytemuck::cast_slice(piece))
                })?,
            }
            staging.unmap();
            let mut encoder = self.device.create_command_encoder(&Default::default());
            let offset = 4 * start as u64;
            encoder.copy_buffer_to_buffer(staging, 0, &buffer, offset, bytes);
            self.submit_and_wait(encoder.finish())?;
        }
        Ok(buffer)
    }

    /// The upload staging buffer (host writes, the device copies from).
    fn upload_staging(&self) -> &wgpu::Buffer {
        self.staging_buffer(
            &self.staging.upload,
            "staging.upload",
            wgpu::BufferUsages::MAP_WRITE | wgpu::BufferUsages::COPY_SRC,
        )
    }

    /// An `r32float` 2-D texture of `width` × `height` texels holding `words` row by row,
    /// copied in through the upload staging buffer a band of rows at a time: a buffer
    /// to texture copy takes rows at multiples of [`wgpu::COPY_BYTES_PER_ROW_ALIGNMENT`]
    /// bytes, so each row is padded in the staging buffer.
    pub(crate) fn upload_texture(
        &self,
        label: &str,
        (width, height): (u32, u32),
        words: &Words,
    ) -> Result<wgpu::Texture> {
        let max = self.limits.max_texture_dimension_2d;
        if width > max || height > max {
            return Err(Error::SizeLimit {
                what: "a texture side",
                requested: u64::from(width.max(height)),
                limit: u64::from(max),
            });
        }
        if words.len() as u64 != u64::from(width) * u64::from(height) {
            return Err(Error::Gpu(format!(
                "{label}: {} words for a {width}x{height} texture",
                words.len()
            )));
        }
        let size = wgpu::Extent3d {
            width,
            height,
            depth_or_array_layers: 1,
        };
        let texture = self.device.create_texture(&wgpu::TextureDescriptor {
            label: Some(label),
            size,
            mip_level_count: 1,
            sample_count: 1,
            dimension: wgpu::TextureDimension::D2,
            format: wgpu::TextureFormat::R32Float,
            // Read by textureLoad; filled by copies from the staging buffer.
            usage: wgpu::TextureUsages::TEXTURE_BINDING | wgpu::TextureUsages::COPY_DST,
            view_formats: &[],
        });
        let staging = self.upload_staging();
        let row_bytes = 4 * width as usize;
        let padded_row_bytes =
            row_bytes.next_multiple_of(wgpu::COPY_BYTES_PER_ROW_ALIGNMENT as usize);
        let band_rows = (crate::host_len(staging.size()) / padded_row_bytes).max(1);
        let band_words = band_rows * width as usize;
        for (band, start) in (0..words.len()).step_by(band_words).enumerate() {
            let piece = words.piece(start..(start + band_words).min(words.len()));
            let rows: &[u8] = bytemuck::cast_slice(&piece);
            let band_height = rows.len() / row_bytes;
            // Mapped views are write-only: rows are padded on the host first, unless
            // they need no padding.
            let padded: Vec<u8>;
            let band_bytes = if padded_row_bytes == row_bytes {
                rows
            } else {
                let mut band = vec![0u8; band_height * padded_row_bytes];
                band.par_chunks_mut(padded_row_bytes)
                    .zip(rows.par_chunks(row_bytes))
                    .for_each(|(to, from)| to[..row_bytes].copy_from_slice(from));
                padded = band;
                &padded
            };
            self.map_all([staging], wgpu::MapMode::Write)?;
            write_parallel(staging, band_bytes)?;
            staging.unmap();
            let mut encoder = self.device.create_command_encoder(&Default::default());
            encoder.copy_buffer_to_texture(
                wgpu::TexelCopyBufferInfo {
                    buffer: staging,
                    layout: wgpu::TexelCopyBufferLayout {
                        offset: 0,
                        bytes_per_row: Some(crate::to_u32(padded_row_bytes, "a texture row")?),
                        rows_per_image: Some(crate::to_u32(band_height, "a texture band")?),
                    },
                },
                wgpu::TexelCopyTextureInfo {
                    texture: &texture,
                    mip_level: 0,
                    origin: wgpu::Origin3d {
                        x: 0,
                        y: crate::to_u32(band * band_rows, "a texture's rows")?,
                        z: 0,
                    },
                    aspect: wgpu::TextureAspect::All,
                },
                wgpu::Extent3d {
                    height: crate::to_u32(band_height, "a texture band")?,
                    ..size
                },
            );
            self.submit_and_wait(encoder.finish())?;
        }
        Ok(texture)
    }

    /// An output buffer of `words` filled with [`POISON`] by copies on the device.
    pub(super) fn poisoned(&self, label: &str, words: usize) -> Result<wgpu::Buffer> {
        let size = (4 * words as u64).next_multiple_of(16);
        let buffer = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(label),
            size,
            // COPY_SRC: outputs are copied to a mappable buffer for verification.
            usage: wgpu::BufferUsages::STORAGE
                | wgpu::BufferUsages::COPY_SRC
                | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let poison = match self.staging.poison.get() {
            Some(poison) => poison,
            None => {
                let words = (STAGING_BYTES.min(self.limits.max_buffer_size) / 4) as usize;
                let poison = self.upload(
                    "staging.poison",
                    wgpu::BufferUsages::COPY_SRC,
                    &vec![POISON; words],
                )?;
                self.staging.poison.get_or_init(|| poison)
            }
        };
        let mut encoder = self.device.create_command_encoder(&Default::default());
        let mut offset = 0;
        while offset < size {
            let piece = (size - offset).min(poison.size());
            encoder.copy_buffer_to_buffer(poison, 0, &buffer, offset, piece);
            offset += piece;
        }
        self.queue.submit([encoder.finish()]);
        Ok(buffer)
    }

    /// Copies the first `bytes` of `buffer` to the host through the readback staging
    /// buffer and hands them to `visit` piece by piece, in order.
    pub(crate) fn read_pieces(
        &self,
        buffer: &wgpu::Buffer,
        bytes: u64,
        mut visit: impl FnMut(&[u32]),
    ) -> Result<()> {
        let staging = self.staging_buffer(
            &self.staging.readback,
            "staging.readback",
            wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        );
        let mut offset = 0;
        while offset < bytes {
            let piece = (bytes - offset).min(staging.size());
            let mut encoder = self.device.create_command_encoder(&Default::default());
            encoder.copy_buffer_to_buffer(buffer, offset, staging, 0, piece);
            self.submit_and_wait(encoder.finish())?;
            self.read_mapped(staging, piece, &mut visit)?;
            offset += piece;
        }
        Ok(())
    }
}

thread_local! {
    /// The piece of made words an upload copies to the staging buffer, kept from upload
    /// to upload: with fresh memory for each piece a run's page faults doubled
    /// (docs/method.md, what a run costs).
    static PIECE: RefCell<Vec<u32>> = const { RefCell::new(Vec::new()) };
}

/// Writes `bytes` at the start of the mapped `staging` buffer, on all cores: a copy
/// of tens of MiB is bound by one core's memory bandwidth.
fn write_parallel(staging: &wgpu::Buffer, bytes: &[u8]) -> Result<()> {
    // Mapped ranges start at multiples of 8 bytes.
    let part = bytes
        .len()
        .div_ceil(rayon::current_num_threads())
        .max(1 << 20)
        .next_multiple_of(8);
    let views = (0..bytes.len())
        .step_by(part)
        .map(|start| {
            let end = (start + part).min(bytes.len());
            staging
                .get_mapped_range_mut(start as u64..end as u64)
                .map(|view| (view, &bytes[start..end]))
                .map_err(|error| Error::Map(error.to_string()))
        })
        .collect::<Result<Vec<_>>>()?;
    views
        .into_par_iter()
        .for_each(|(mut view, part)| view.copy_from_slice(part));
    Ok(())
}
