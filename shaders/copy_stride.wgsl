// copy/stride: dst[i * stride] = src[i * stride], one f32 per invocation; only every stride-th word is useful.

struct Params {
    n: u32,
    stride: u32,
}

@group(0) @binding(0)
var<uniform> params: Params;
@group(0) @binding(1)
var<storage, read> src: array<f32>;
@group(0) @binding(2)
var<storage, read_write> dst: array<f32>;

override WORKGROUP_SIZE: u32 = 256;

// A grid wider than 65535 workgroups is dispatched as rows of nwg.x workgroups.
@compute @workgroup_size(WORKGROUP_SIZE)
fn main(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let i = (wid.y * nwg.x + wid.x) * WORKGROUP_SIZE + lid;
    if i < params.n {
        dst[i * params.stride] = src[i * params.stride];
    }
}
