//! Verification on the device: a kernel run once and its outputs read back and
//! compared with their CPU references, and any WGSL run once for tests.

use super::GpuContext;
use super::kernel::BoundKernel;
use super::pipelines::Pipeline;
use crate::error::{Error, Result};
use crate::suite::{Buffer, Expected, WgpuBuild, Words};

impl GpuContext {
    /// Whether `buffers`, one after the other, hold what `expected` says.
    pub(crate) fn check_output(
        &self,
        buffers: &[&wgpu::Buffer],
        expected: &Expected,
    ) -> Result<()> {
        let mut checker = expected.checker();
        let mut left = 4 * expected.len_words() as u64;
        for buffer in buffers {
            let bytes = left.min(buffer.size());
            self.read_pieces(buffer, bytes, |piece| checker.feed(piece))?;
            left -= bytes;
        }
        checker.finish().map_err(Error::Verification)
    }

    /// Runs the kernel once and checks every output against its reference.
    pub fn verify(&self, kernel: &BoundKernel, expected: &[Expected]) -> Result<()> {
        self.scoped(|| {
            self.dispatch_once(kernel)?;
            for (output, expected) in kernel.outputs.iter().zip(expected) {
                self.check_output(&[output], expected)?;
            }
            Ok(())
        })?
    }

    /// Runs an arbitrary WGSL kernel once: `inputs` bound read-only at bindings 0..k,
    /// an output of `output_words` words at binding k, returned. For tests that hold
    /// the simulator against the GPU.
    pub fn run_wgsl(
        &self,
        source: &str,
        inputs: &[&[u32]],
        output_words: usize,
        workgroups: [u32; 3],
    ) -> Result<Vec<u32>> {
        let mut buffers: Vec<Buffer> = inputs.iter().map(|i| Buffer::Input(i.len())).collect();
        buffers.push(Buffer::Output(output_words));
        let pipeline = Pipeline {
            label: "wgsl",
            source,
            buffers: &buffers,
            slots: &[],
            overrides: &[],
            build: WgpuBuild::Default,
        };
        let inputs: Vec<Words> = inputs.iter().map(|i| Words::Held(i.to_vec())).collect();
        let kernel = self.assemble(&pipeline, &inputs, workgroups)?;
        self.scoped(|| {
            self.dispatch_once(&kernel)?;
            let mut words = Vec::with_capacity(output_words);
            self.read_pieces(&kernel.outputs[0], 4 * output_words as u64, |piece| {
                words.extend_from_slice(piece);
            })?;
            Ok(words)
        })?
    }
}
