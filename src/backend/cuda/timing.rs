//! The CUDA clock: events around back-to-back launches on the backend's stream. One
//! sample is `repeats` launches between two events; samples are queued in batches of
//! at most about [`BATCH_TARGET_NS`] of work, each waited for with the hang timeout.
//! A cold launch follows an untimed clear of [`FLUSH_BYTES`], which evicts what the last
//! one left in the L2.

use cudarc::driver::sys::{self, CUevent_flags};
use cudarc::driver::{CudaEvent, DevicePtr};

use super::{Cuda, Prepared, driver_error};
use crate::error::{Error, Result};
use crate::measure::{TimedWork, Timer};
use crate::suite::{Cache, FLUSH_BYTES};

/// GPU work queued before the host waits for it: far inside the hang timeout.
const BATCH_TARGET_NS: f64 = 0.5e9;

/// A prepared case on CUDA events.
#[derive(Debug)]
pub struct EventClock<'a> {
    cuda: &'a Cuda,
    prepared: &'a Prepared,
    cache: Cache,
    /// The fastest launch seen so far: sizes the batches.
    fastest_launch_ns: Option<f64>,
}

impl<'a> EventClock<'a> {
    pub fn new(cuda: &'a Cuda, prepared: &'a Prepared, cache: Cache) -> Self {
        EventClock {
            cuda,
            prepared,
            cache,
            fastest_launch_ns: None,
        }
    }

    /// An event that records time (events without it are cheaper but cannot be timed).
    fn record(&self) -> Result<CudaEvent> {
        self.cuda
            .stream
            .record_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
            .map_err(driver_error("recording an event"))
    }

    /// `samples` samples of `repeats` launches each, queued back to back. Warm: one
    /// event pair around a sample's launches. Cold: one around each launch, after an
    /// untimed flush; the sample is their sum.
    fn batch(&self, samples: u32, repeats: u32) -> Result<Vec<f64>> {
        let mut pairs = Vec::with_capacity(samples as usize);
        let per_sample = match self.cache {
            Cache::Warm => 1,
            Cache::Cold => repeats as usize,
        };
        for _ in 0..samples {
            match self.cache {
                Cache::Warm => {
                    let start = self.record()?;
                    for _ in 0..repeats {
                        self.cuda.launch(self.prepared)?;
                    }
                    pairs.push((start, self.record()?));
                }
                Cache::Cold => {
                    for _ in 0..repeats {
                        self.cuda.flush()?;
                        let start = self.record()?;
                        self.cuda.launch(self.prepared)?;
                        pairs.push((start, self.record()?));
                    }
                }
            }
        }
        if let Some((_, last)) = pairs.last() {
            self.cuda.wait(last)?;
        }
        let launches: Vec<f64> = pairs
            .iter()
            .map(|(start, end)| {
                let ms = start
                    .elapsed_ms(end)
                    .map_err(driver_error("reading an event pair"))?;
                let ns = f64::from(ms) * 1e6;
                if ns > 0.0 {
                    Ok(ns)
                } else {
                    Err(Error::Cuda("an event pair did not advance".to_owned()))
                }
            })
            .collect::<Result<_>>()?;
        Ok(launches
            .chunks(per_sample.max(1))
            .map(|sample| sample.iter().sum())
            .collect())
    }
}

impl TimedWork for EventClock<'_> {
    fn timer(&self) -> Timer {
        Timer::Gpu
    }

    fn samples_ns(&mut self, samples: u32, repeats: u32, warmup: u32) -> Result<Vec<f64>> {
        // Another case may share the module, and with it `params` and the attributes.
        self.cuda.settle(self.prepared)?;
        for _ in 0..warmup {
            self.cuda.launch(self.prepared)?;
        }
        let per_batch = match self.fastest_launch_ns {
            Some(ns) => ((BATCH_TARGET_NS / (ns * f64::from(repeats.max(1)))) as u32).max(1),
            None => samples,
        };
        let mut times = Vec::with_capacity(samples as usize);
        let mut left = samples;
        while left > 0 {
            let batch = left.min(per_batch);
            times.extend(self.batch(batch, repeats)?);
            left -= batch;
        }
        let fastest = times.iter().copied().fold(f64::INFINITY, f64::min) / f64::from(repeats);
        self.fastest_launch_ns = Some(self.fastest_launch_ns.map_or(fastest, |f| f.min(fastest)));
        Ok(times)
    }
}

impl Cuda {
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
}
