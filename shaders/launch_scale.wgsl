// launch/*: dst[i] = scale * src[i], one f32 per invocation: gpu-small-kernels' scale
// kernel, whose dispatches the launch family issues in every way it prices.

struct Params {
    n: u32,
    scale: f32,
}

@group(0) @binding(0)
var<uniform> params: Params;
@group(0) @binding(1)
var<storage, read> src: array<f32>;
@group(0) @binding(2)
var<storage, read_write> dst: array<f32>;

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
        dst[i] = params.scale * src[i];
    }
}
