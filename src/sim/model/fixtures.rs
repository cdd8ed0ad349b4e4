//! What the model's tests share: the suite's kernels, the H100 preset, bindings, and a
//! run of every workgroup into a fresh [`MemoryModel`].

use super::counts::Counts;
use super::memory::MemoryModel;
use crate::sim::device::{DeviceModel, preset};
use crate::sim::exec::{BoundBuffer, Kernel, Launch, run};

/// A suite kernel as the GPU gets it (flattened by `build.rs`), with workgroups of 256
/// invocations.
pub(super) fn suite_kernel(name: &str) -> Kernel {
    let source = crate::suite::shaders::source(name).unwrap();
    Kernel::load(name, source, &[("WORKGROUP_SIZE", 256.0)]).unwrap()
}

/// The H100 preset.
pub(super) fn h100() -> DeviceModel {
    *preset("h100").unwrap()
}

/// A binding of group 0.
pub(super) fn bind(binding: u32, data: Vec<u8>) -> BoundBuffer {
    BoundBuffer::buffer(0, binding, data)
}

/// A 16-byte uniform of `words`, zero-padded.
pub(super) fn params(words: &[u32]) -> Vec<u8> {
    let mut w = words.to_vec();
    w.resize(4, 0);
    w.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// Run every workgroup into a fresh model and return its counts.
pub(super) fn counts(
    k: &Kernel,
    b: &mut [BoundBuffer],
    grid: [u32; 3],
    device: &DeviceModel,
) -> Counts {
    let lanes = k.workgroup_size().iter().product();
    let mut m = MemoryModel::new(device, grid, device.workgroups_in_flight(lanes));
    run(k, b, &Launch::all(grid, device.subgroup_size), &mut m).unwrap();
    m.finish()
}

/// `copy_offset` or `copy_stride` over `n` invocations, buffers of `len` f32.
pub(super) fn copy_bindings(n: u32, param: u32, len: usize) -> Vec<BoundBuffer> {
    vec![
        bind(0, params(&[n, param])),
        bind(1, vec![0; 4 * len]),
        bind(2, vec![0; 4 * len]),
    ]
}
