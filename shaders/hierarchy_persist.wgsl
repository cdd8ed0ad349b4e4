// hierarchy/persist: a grid-stride loop reads a streaming buffer far larger than the L2 once and, beside each of its vec4<u32>, one of a hot buffer that fits the L2, read round and round; each workgroup writes the wrapping sum of what it read. The CUDA twin may keep the hot buffer in the L2 through a persisting access policy window, which WebGPU has no API for.

struct Params {
    vec4s: u32,
    hot_vec4s: u32,
}

@group(0) @binding(0)
var<uniform> params: Params;
@group(0) @binding(1)
var<storage, read> stream: array<vec4<u32>>;
@group(0) @binding(2)
var<storage, read> hot: array<vec4<u32>>;
@group(0) @binding(3)
var<storage, read_write> sums: array<u32>;

override WORKGROUP_SIZE: u32 = 256;

#import workgroup_index
#import workgroup_sum

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let group = workgroup_index(wid, nwg);
    let grid = nwg.x * nwg.y * WORKGROUP_SIZE;
    var acc = vec4<u32>();
    for (var i = group * WORKGROUP_SIZE + lid; i < params.vec4s; i += grid) {
        acc += stream[i] + hot[i % params.hot_vec4s];
    }
    let sum = workgroup_sum(lid, acc.x + acc.y + acc.z + acc.w);
    if lid == 0u {
        sums[group] = sum;
    }
}
