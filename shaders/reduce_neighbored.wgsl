// reduce/neighbored: one partial sum per workgroup, the tree in global memory with neighbouring pairs, `lid % (2 * stride) == 0` (divergent lanes in every subgroup).

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

// The CUDA original sums in place in its input; here the input is bound read-only, so
// the first step reads it and writes `scratch`, where the rest of the tree runs in
// place: the same reads and writes of global memory. storageBarrier() is what makes
// one step's global writes visible to the next (workgroupBarrier() would not).
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
    if lid % 2u == 0u {
        scratch[base + lid] = src[base + lid] + src[base + lid + 1u];
    }
    storageBarrier();
    for (var stride = 2u; stride < WORKGROUP_SIZE; stride *= 2u) {
        if lid % (2u * stride) == 0u {
            scratch[base + lid] += scratch[base + lid + stride];
        }
        storageBarrier();
    }
    if lid == 0u {
        partials[block] = scratch[base];
    }
}
