// copy/offset, stride, peak: dst[j] = src[j], each invocation moving an f32 or a vec4<f32>.
//
// The kernels made from this file (see `permutations`):
// - copy_offset (OFFSET): one f32 per invocation i, at j = i + offset, shifted off the
//   32-byte sector grid by `offset` words;
// - copy_stride (STRIDE): one f32 per invocation i, at j = i * stride, only every
//   stride-th word useful;
// - copy_peak (PEAK): vec4<f32>s, one per invocation or a grid-stride loop; the practical
//   bandwidth ceiling.

struct Params {
    n: u32,
#if OFFSET
    offset: u32,
#endif
#if STRIDE
    stride: u32,
#endif
}

@group(0) @binding(0)
var<uniform> params: Params;
#if PEAK
@group(0) @binding(1)
var<storage, read> src: array<vec4<f32>>;
@group(0) @binding(2)
var<storage, read_write> dst: array<vec4<f32>>;
#else
@group(0) @binding(1)
var<storage, read> src: array<f32>;
@group(0) @binding(2)
var<storage, read_write> dst: array<f32>;
#endif

override WORKGROUP_SIZE: u32 = 256;

#import workgroup_index

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
#if PEAK
    // With one vec4 per invocation the grid covers n and the loop runs once; with a
    // grid-stride launch a fixed grid walks the buffer in steps of its own size.
    let grid = nwg.x * nwg.y * WORKGROUP_SIZE;
    for (var i = workgroup_index(wid, nwg) * WORKGROUP_SIZE + lid; i < params.n; i += grid) {
        dst[i] = src[i];
    }
#else
    let i = workgroup_index(wid, nwg) * WORKGROUP_SIZE + lid;
    if i < params.n {
#if OFFSET
        dst[i + params.offset] = src[i + params.offset];
#endif
#if STRIDE
        dst[i * params.stride] = src[i * params.stride];
#endif
    }
#endif
}
