// copy/offset, copy/stride: dst[j] = src[j], one f32 per invocation i, at j = i + offset (shifted off the 32-byte sector grid by `offset` words) or j = i * stride (only every stride-th word useful).
//
// The kernels made from this file (see `permutations`): copy_offset (OFFSET) and
// copy_stride (STRIDE).

struct Params {
    n: u32,
#if OFFSET
    offset: u32,
#endif
#if STRIDE
    stride: u32,
#endif
}

#import bind_f32

override WORKGROUP_SIZE: u32 = 256;

#import workgroup_index

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let i = workgroup_index(wid, nwg) * WORKGROUP_SIZE + lid;
    if i < params.n {
#if OFFSET
        dst[i + params.offset] = src[i + params.offset];
#endif
#if STRIDE
        dst[i * params.stride] = src[i * params.stride];
#endif
    }
}
