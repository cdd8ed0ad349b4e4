// reduce/interleaved: the tree in global memory with interleaved pairs, `lid < stride` adds element lid + stride, the stride halving each step (coalesced, and whole subgroups fall idle).

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

// The first step reads the read-only input into `scratch`, where the CUDA original
// works in place in its input (see reduce_neighbored.wgsl).
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
    let base = block * WORKGROUP_SIZE;
    let half = WORKGROUP_SIZE / 2u;
    if lid < half {
        scratch[base + lid] = src[base + lid] + src[base + lid + half];
    }
    storageBarrier();
    for (var stride = half / 2u; stride > 0u; stride /= 2u) {
        if lid < stride {
            scratch[base + lid] += scratch[base + lid + stride];
        }
        storageBarrier();
    }
    if lid == 0u {
        partials[block] = scratch[base];
    }
}
