// reduce/neighbored, neighbored_less, interleaved, unroll*: a workgroup sum by a tree in global.
//
// The unroll kernels are unroll2, unroll4, unroll8 and unroll8_lastwarp; each workgroup
// writes one partial sum, and its tree runs in global memory.
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
//   invocation), then runs the interleaved tree;
// - reduce_unroll8_lastwarp (UNROLL LASTWARP): unroll8 whose tree stops at one
//   subgroup's worth of values, which the first subgroup sums with subgroupAdd instead
//   of further barrier-separated steps.
//
// The CUDA original sums in place in its input; here the input is bound read-only, so
// the first step reads it and writes `scratch` (one block per workgroup), where the rest
// of the tree runs in place: the same reads and writes of global memory.
// storageBarrier() is what makes one step's global writes visible to the next
// (workgroupBarrier() would not).
//
// The CUDA unroll8_lastwarp finishes the last warp with `volatile` loads and stores and
// no barrier, relying on the 32 lanes of a warp running in lock-step. That cannot be
// ported literally: WGSL has no `volatile`, promises no lock-step execution (nor does
// CUDA since Volta's independent thread scheduling), and lanes reading what other lanes
// write without a barrier between them is a data race, whose result is indeterminate.
// The intent, no barrier for the last subgroup, is what subgroupAdd does, correctly.

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
@group(0) @binding(3)
var<storage, read_write> scratch: array<i32>;

override WORKGROUP_SIZE: u32 = 512;
#if UNROLL
#if LASTWARP
override UNROLL: u32 = 8;
#else
override UNROLL: u32 = 2;
#endif
#endif
#if LASTWARP
// The subgroup size, shared so that the tree's loop bound is workgroup-uniform (a
// barrier's loop must be).
var<workgroup> shared_subgroup_size: u32;
#endif

#import workgroup_index

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
#if LASTWARP
    @builtin(subgroup_size) subgroup_size: u32,
    @builtin(subgroup_id) subgroup: u32,
    @builtin(subgroup_invocation_id) lane: u32,
#endif
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
#if LASTWARP
    if lid == 0u {
        shared_subgroup_size = subgroup_size;
    }
    // A subgroup larger than the workgroup holds all of it.
    let width = min(workgroupUniformLoad(&shared_subgroup_size), WORKGROUP_SIZE);
    storageBarrier();
    for (var stride = WORKGROUP_SIZE / 2u; stride >= width; stride /= 2u) {
#else
    storageBarrier();
    for (var stride = WORKGROUP_SIZE / 2u; stride > 0u; stride /= 2u) {
#endif
        if lid < stride {
            scratch[base + lid] += scratch[base + lid + stride];
        }
        storageBarrier();
    }
#endif
#if LASTWARP
    // `width` values remain, one per lane of the first subgroup.
    if subgroup == 0u {
        let total = subgroupAdd(scratch[base + lane]);
        if lane == 0u {
            // Where the original leaves it, too.
            scratch[base] = total;
            partials[block] = total;
        }
    }
#else
    if lid == 0u {
        partials[block] = scratch[base];
    }
#endif
}
