// hierarchy/dram_copy: a grid-stride loop copies every vec4<u32> of a buffer far larger than the L2 (BabelStream's copy, beside its read-only and write-only splits).

struct Params {
    vec4s: u32,
}

@group(0) @binding(0)
var<uniform> params: Params;
@group(0) @binding(1)
var<storage, read> src: array<vec4<u32>>;
@group(0) @binding(2)
var<storage, read_write> dst: array<vec4<u32>>;

override WORKGROUP_SIZE: u32 = 256;

#import workgroup_index

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let grid = nwg.x * nwg.y * WORKGROUP_SIZE;
    for (var i = workgroup_index(wid, nwg) * WORKGROUP_SIZE + lid; i < params.vec4s; i += grid) {
        dst[i] = src[i];
    }
}
