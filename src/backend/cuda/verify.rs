//! Verification on the device: the twin run once and its outputs read back through the
//! staging buffer and compared with their CPU references.

use cudarc::driver::CudaSlice;

use super::kernel::Prepared;
use super::{Cuda, driver_error};
use crate::error::{Error, Result};
use crate::suite::Expected;

impl Cuda {
    /// Runs the twin once and checks every output against its reference.
    pub(super) fn check(&self, prepared: &Prepared, expected: &[Expected]) -> Result<()> {
        self.settle(prepared)?;
        self.launch(prepared)?;
        let done = self
            .stream
            .record_event(None)
            .map_err(driver_error("recording an event"))?;
        self.wait(&done)?;
        for (output, expected) in prepared.outputs.iter().zip(expected) {
            self.check_output(output, expected)?;
        }
        Ok(())
    }

    /// Whether `output` holds what `expected` says, read back piece by piece.
    pub(super) fn check_output(&self, output: &CudaSlice<u32>, expected: &Expected) -> Result<()> {
        let mut checker = expected.checker();
        let words = expected.len_words().min(output.len());
        self.with_staging(|staging| {
            let mut start = 0;
            while start < words {
                let end = (start + staging.len()).min(words);
                let piece = &mut staging[..end - start];
                self.stream
                    .memcpy_dtoh(&output.slice(start..end), piece)
                    .map_err(driver_error("reading an output"))?;
                // Into pinned memory the copy is asynchronous: done before it is read.
                self.stream
                    .synchronize()
                    .map_err(driver_error("reading an output"))?;
                checker.feed(piece);
                start = end;
            }
            Ok(())
        })?;
        checker.finish().map_err(Error::Verification)
    }
}
