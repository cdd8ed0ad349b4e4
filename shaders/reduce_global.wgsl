// reduce/neighbored, neighbored_less, interleaved, unroll2, unroll4, unroll8: one partial sum per workgroup, the tree in global memory.
//
// The kernels made from this file (see `permutations`):
// - reduce_neighbored (NEIGHBORED): neighbouring pairs, `lid % (2 * stride) == 0`
//   (divergent lanes in every subgroup);
// - reduce_neighbored_less (NEIGHBORED_LESS): neighbouring pairs, but step `stride` is
//   done by the first lanes (`index = 2 * stride * lid`), so whole subgroups fall idle
//   instead of diverging;
// - reduce_interleaved (INTERLEAVED): interleaved pairs, `lid < stride` adds element
//   lid + stride, the stride halving each step (coalesced, and whole subgroups fall
//   idle);
// - reduce_unroll (UNROLL; unroll2, unroll4, unroll8): each workgroup first adds UNROLL
//   consecutive blocks of WORKGROUP_SIZE elements (UNROLL coalesced loads in flight per
//   invocation), then runs the interleaved tree.
//
// The CUDA original sums in place in its input; here the input is bound read-only, so
// the first step reads it and writes `scratch` (one block per workgroup), where the rest
// of the tree runs in place: the same reads and writes of global memory.
// storageBarrier() is what makes one step's global writes visible to the next
// (workgroupBarrier() would not).

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
#if UNROLL
override UNROLL: u32 = 2;
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
#if NEIGHBORED
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
#endif
#if NEIGHBORED_LESS
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
#endif
#if INTERLEAVED
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
#endif
#if UNROLL
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
#endif
    if lid == 0u {
        partials[block] = scratch[base];
    }
}
