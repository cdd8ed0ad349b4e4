// reduce/unroll2, unroll4, unroll8: each workgroup first adds UNROLL consecutive blocks of WORKGROUP_SIZE elements (UNROLL coalesced loads in flight per invocation), then runs the interleaved tree in global memory.

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
override UNROLL: u32 = 2;

// The CUDA original stores the unrolled sums in place in its input; the input is bound
// read-only here, so they go to `scratch` (one block per workgroup), where the tree runs.
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
    let first = block * WORKGROUP_SIZE * UNROLL + lid;
    var sum = 0;
    // UNROLL is a pipeline constant: the driver unrolls this loop.
    for (var k = 0u; k < UNROLL; k++) {
        sum += src[first + k * WORKGROUP_SIZE];
    }
    let base = block * WORKGROUP_SIZE;
    scratch[base + lid] = sum;
    storageBarrier();
    for (var stride = WORKGROUP_SIZE / 2u; stride > 0u; stride /= 2u) {
        if lid < stride {
            scratch[base + lid] += scratch[base + lid + stride];
        }
        storageBarrier();
    }
    if lid == 0u {
        partials[block] = scratch[base];
    }
}
