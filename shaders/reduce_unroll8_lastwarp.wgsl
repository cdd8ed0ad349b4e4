// reduce/unroll8_lastwarp: reduce/unroll8 whose global-memory tree stops at one subgroup's worth of values, which the first subgroup sums with subgroupAdd instead of further barrier-separated steps.
//
// The CUDA original finishes the last warp with `volatile` loads and stores and no
// barrier, relying on the 32 lanes of a warp running in lock-step. That cannot be
// ported literally: WGSL has no `volatile`, promises no lock-step execution (nor does
// CUDA since Volta's independent thread scheduling), and lanes reading what other lanes
// write without a barrier between them is a data race, whose result is indeterminate.
// The intent, no barrier for the last subgroup, is what subgroupAdd does, correctly.

struct Params {
    blocks: u32,
}

@group(0) @binding(0)
var<uniform> params: Params;
@group(0) @binding(1)
var<storage, read> src: array<i32>;
@group(0) @binding(2)
var<storage, read_write> partials: array<i32>;
@group(0) @binding(3)
var<storage, read_write> scratch: array<i32>;

override WORKGROUP_SIZE: u32 = 512;
override UNROLL: u32 = 8;

// The subgroup size, shared so that the tree's loop bound is workgroup-uniform (a
// barrier's loop must be).
var<workgroup> shared_subgroup_size: u32;

#import workgroup_index

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
    @builtin(subgroup_size) subgroup_size: u32,
    @builtin(subgroup_id) subgroup: u32,
    @builtin(subgroup_invocation_id) lane: u32,
) {
    let block = workgroup_index(wid, nwg);
    // The overhang of a 2-D grid; uniform per workgroup, so the barriers stay uniform.
    if block >= params.blocks {
        return;
    }
    let first = block * WORKGROUP_SIZE * UNROLL + lid;
    var sum = 0;
    for (var k = 0u; k < UNROLL; k++) {
        sum += src[first + k * WORKGROUP_SIZE];
    }
    // The unrolled sums go to `scratch`: the input is bound read-only.
    let base = block * WORKGROUP_SIZE;
    scratch[base + lid] = sum;
    if lid == 0u {
        shared_subgroup_size = subgroup_size;
    }
    // A subgroup larger than the workgroup holds all of it.
    let width = min(workgroupUniformLoad(&shared_subgroup_size), WORKGROUP_SIZE);
    storageBarrier();
    for (var stride = WORKGROUP_SIZE / 2u; stride >= width; stride /= 2u) {
        if lid < stride {
            scratch[base + lid] += scratch[base + lid + stride];
        }
        storageBarrier();
    }
    // `width` values remain, one per lane of the first subgroup.
    if subgroup == 0u {
        let total = subgroupAdd(scratch[base + lane]);
        if lane == 0u {
            // Where the original leaves it, too.
            scratch[base] = total;
            partials[block] = total;
        }
    }
}
