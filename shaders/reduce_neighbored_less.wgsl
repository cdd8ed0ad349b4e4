// reduce/neighbored_less: neighbouring pairs as in reduce/neighbored, but step `stride` is done by the first lanes (`index = 2 * stride * lid`), so whole subgroups fall idle instead of diverging.

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
    if 2u * lid < WORKGROUP_SIZE {
        let index = base + 2u * lid;
        scratch[index] = src[index] + src[index + 1u];
    }
    storageBarrier();
    for (var stride = 2u; stride < WORKGROUP_SIZE; stride *= 2u) {
        let index = 2u * stride * lid;
        if index < WORKGROUP_SIZE {
            scratch[base + index] += scratch[base + index + stride];
        }
        storageBarrier();
    }
    if lid == 0u {
        partials[block] = scratch[base];
    }
}
