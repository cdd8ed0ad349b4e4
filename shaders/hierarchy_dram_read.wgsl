// hierarchy/dram_read: a grid-stride loop reads every vec4<u32> of a buffer far larger than the L2 once; each workgroup writes the wrapping sum of what it read (BabelStream's read-only split).

struct Params {
    vec4s: u32,
}

@group(0) @binding(0)
var<uniform> params: Params;
@group(0) @binding(1)
var<storage, read> src: array<vec4<u32>>;
@group(0) @binding(2)
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
        acc += src[i];
    }
    let sum = workgroup_sum(lid, acc.x + acc.y + acc.z + acc.w);
    if lid == 0u {
        sums[group] = sum;
    }
}
