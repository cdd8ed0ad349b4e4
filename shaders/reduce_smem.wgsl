// reduce/smem, smem_override: one element per invocation into a workgroup array, then a tree there.
//
// The tree is interleaved and barrier-separated down to the last pair.
//
// The kernels made from this file (see `permutations`): reduce_smem (STATIC_TILE), the
// array sized at compile time for the largest workgroup the suite runs (CUDA's
// `__shared__ int smem[DIM]`); reduce_smem_override, the array sized by the
// WORKGROUP_SIZE override, WGSL's analogue of CUDA's dynamically sized shared memory.
//
// The CUDA original finishes the last warp with `volatile` shared-memory accesses and no
// barrier, relying on a warp's lanes running in lock-step. WGSL has no `volatile` and
// no lock-step guarantee (nor has CUDA since Volta): lanes reading what other lanes
// write without a barrier is a data race with an indeterminate result. So every step
// here ends in workgroupBarrier(); reduce/unroll8_lastwarp and reduce/subgroup_add do
// without the last barriers correctly, with subgroup operations.

struct Params {
    // Workgroups, each summing its block of the input into partials[block].
    blocks: u32,
}

@group(0) @binding(0)
var<uniform> params: Params;
@group(0) @binding(1)
var<storage, read> src: array<i32>;
@group(0) @binding(2)
var<storage, read_write> partials: array<i32>;

override WORKGROUP_SIZE: u32 = 512;

#if STATIC_TILE
const TILE_WORDS: u32 = 1024;
var<workgroup> tile: array<i32, TILE_WORDS>;
#else
var<workgroup> tile: array<i32, WORKGROUP_SIZE>;
#endif

#import workgroup_index

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let block = workgroup_index(wid, nwg);
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
