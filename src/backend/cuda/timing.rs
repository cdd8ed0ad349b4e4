//! The CUDA clock: events around back-to-back launches on the backend's stream. One
//! sample is `repeats` launches between two events; samples are queued in batches of
//! at most about [`BATCH_TARGET_NS`] of work, each waited for with the hang timeout.
//! A cold launch follows an untimed clear of [`FLUSH_BYTES`], which evicts what the last
//! one left in the L2. The launch family's ways of issuing ([`Dispatch`]): a sample's
//! launches captured in a graph and the graph launched between the events, or launches
//! each synchronised (or all, then one synchronisation) on the host clock.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use cudarc::driver::sys::{self, CUevent_flags};
use cudarc::driver::{CudaEvent, CudaGraph, CudaStream, DevicePtr};

use super::{Cuda, Prepared, driver_error};
use crate::error::{Error, Result};
use crate::measure::{TimedWork, Timer};
use crate::suite::{Cache, Dispatch, FLUSH_BYTES};

/// GPU work queued before the host waits for it: far inside the hang timeout.
const BATCH_TARGET_NS: f64 = 0.5e9;

/// A prepared case on CUDA events.
#[derive(Debug)]
pub(crate) struct EventClock<'a> {
    cuda: &'a Cuda,
    prepared: &'a Prepared,
    cache: Cache,
    /// The fastest launch seen so far: sizes the batches.
    fastest_launch_ns: Option<f64>,
    /// A graph of as many launches, per sample size ([`Dispatch::Graph`]).
    graphs: CapturedGraphs,
    /// The stream graphs are captured and launched on: CUDA captures no work on the
    /// legacy default stream the backend's launches use.
    graph_stream: Option<Arc<CudaStream>>,
}

impl<'a> EventClock<'a> {
    pub(crate) fn new(cuda: &'a Cuda, prepared: &'a Prepared, cache: Cache) -> Self {
        EventClock {
            cuda,
            prepared,
            cache,
            fastest_launch_ns: None,
            graphs: CapturedGraphs::default(),
            graph_stream: None,
        }
    }

    /// The stream a sample's events are recorded on: the graphs' once they exist.
    fn timed_stream(&self) -> &Arc<CudaStream> {
        self.graph_stream.as_ref().unwrap_or(&self.cuda.stream)
    }

    /// Queues `repeats` launches: one by one, or as the graph of that many.
    fn issue(&self, repeats: u32) -> Result<()> {
        if self.prepared.dispatch != Dispatch::Graph {
            for _ in 0..repeats {
                self.cuda.launch(self.prepared)?;
            }
            return Ok(());
        }
        let graph = self
            .graphs
            .0
            .get(&repeats)
            .ok_or_else(|| Error::Internal("a graph not captured".to_owned()))?;
        graph.launch().map_err(driver_error("launching a graph"))
    }

    /// Captures a graph of `repeats` launches, unless one is made.
    fn capture(&mut self, repeats: u32) -> Result<()> {
        if self.graphs.0.contains_key(&repeats) {
            return Ok(());
        }
        if self.graph_stream.is_none() {
            // The new stream does not wait for the default one: what was queued there
            // (inputs, the settled parameters) finishes first.
            self.cuda
                .stream
                .synchronize()
                .map_err(driver_error("synchronising the stream"))?;
            let made = self.cuda.ctx.new_stream();
            self.graph_stream = Some(made.map_err(driver_error("creating a stream"))?);
        }
        let stream = self.timed_stream();
        let mode = sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL;
        stream
            .begin_capture(mode)
            .map_err(driver_error("capturing a graph"))?;
        let launched = (0..repeats).try_for_each(|_| self.cuda.launch_on(self.prepared, stream));
        // The capture ends whatever became of the launches.
        let graph = stream
            .end_capture(sys::CUgraphInstantiate_flags(0))
            .map_err(driver_error("instantiating a graph"));
        launched?;
        let graph = graph?.ok_or_else(|| Error::Cuda("a graph captured empty".to_owned()))?;
        graph.upload().map_err(driver_error("uploading a graph"))?;
        self.graphs.0.insert(repeats, graph);
        Ok(())
    }

    /// One sample of `repeats` launches on the host clock, each synchronised or all and
    /// then one synchronisation.
    fn host_sample(&self, repeats: u32) -> Result<f64> {
        let synchronise = || {
            self.cuda
                .stream
                .synchronize()
                .map_err(driver_error("synchronising the stream"))
        };
        let each = self.prepared.dispatch == Dispatch::SubmitEach;
        let start = Instant::now();
        for _ in 0..repeats {
            self.cuda.launch(self.prepared)?;
            if each {
                synchronise()?;
            }
        }
        if !each {
            synchronise()?;
        }
        Ok(start.elapsed().as_nanos() as f64)
    }

    /// An event that records time (events without it are cheaper but cannot be timed).
    fn record(&self) -> Result<CudaEvent> {
        self.timed_stream()
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
                    self.issue(repeats)?;
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

/// Graphs by their launches; printed as those counts (a graph has nothing to print).
#[derive(Default)]
struct CapturedGraphs(HashMap<u32, CudaGraph>);

impl std::fmt::Debug for CapturedGraphs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_set().entries(self.0.keys()).finish()
    }
}

impl TimedWork for EventClock<'_> {
    fn timer(&self) -> Timer {
        if self.prepared.dispatch.host_clock() {
            Timer::Wall
        } else {
            Timer::Gpu
        }
    }

    fn samples_ns(&mut self, samples: u32, repeats: u32, warmup: u32) -> Result<Vec<f64>> {
        // Another case may share the module, and with it `params` and the attributes.
        self.cuda.settle(self.prepared)?;
        if self.prepared.dispatch.host_clock() {
            for _ in 0..warmup.div_ceil(repeats.max(1)) {
                self.host_sample(repeats)?;
            }
            return (0..samples).map(|_| self.host_sample(repeats)).collect();
        }
        if self.prepared.dispatch == Dispatch::Graph {
            // A cold launch follows a flush on the default stream, which the graphs'
            // stream would not wait for.
            if self.cache == Cache::Cold {
                return Err(Error::Internal(
                    "a cold case launched from a graph".to_owned(),
                ));
            }
            self.capture(repeats)?;
            for _ in 0..warmup.div_ceil(repeats.max(1)) {
                self.issue(repeats)?;
            }
        } else {
            for _ in 0..warmup {
                self.cuda.launch(self.prepared)?;
            }
        }
        #[expect(
            clippy::cast_possible_truncation,
            reason = "a whole number of launches per batch, at least 1; `as` saturates a huge one"
        )]
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
