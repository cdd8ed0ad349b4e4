// reduce/smem_override: reduce/smem with the workgroup array sized by the WORKGROUP_SIZE override, WGSL's analogue of CUDA's dynamically sized shared memory.
//
// Every step ends in workgroupBarrier(), down to the last pair: the CUDA original's
// barrier-free `volatile` last warp is a data race in WGSL (see reduce_smem.wgsl).

struct Params {
    blocks: u32,
}

@group(0) @binding(0)
var<uniform> params: Params;
@group(0) @binding(1)
var<storage, read> src: array<i32>;
@group(0) @binding(2)
var<storage, read_write> partials: array<i32>;

override WORKGROUP_SIZE: u32 = 512;

var<workgroup> tile: array<i32, WORKGROUP_SIZE>;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let block = wid.y * nwg.x + wid.x;
    // The overhang of a 2-D grid; uniform per workgroup, so the barriers stay uniform.
    if block >= params.blocks {
        return;
    }
    tile[lid] = src[block * WORKGROUP_SIZE + lid];
    workgroupBarrier();
    for (var stride = WORKGROUP_SIZE / 2u; stride > 0u; stride /= 2u) {
        if lid < stride {
            tile[lid] += tile[lid + stride];
        }
        workgroupBarrier();
    }
    if lid == 0u {
        partials[block] = tile[0];
    }
}
