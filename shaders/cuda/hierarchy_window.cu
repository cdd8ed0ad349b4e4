// hierarchy/window: every block re-reads one window of `vec4s` uint4s and writes the sum it read.
//
// Each thread makes `loads` loads from its block's own rotation; the sum is wrapping.
//
// As the WGSL: the block reads WORKGROUP_SIZE consecutive uint4s a step and moves on
// round the window, a contiguous band that wraps. Plain loads: the L1 serves the
// window while it fits, then the L2.

struct Params {
    unsigned vec4s;
    unsigned loads;
    // uint4s between neighbouring blocks' starting points.
    unsigned rotation;
};

__constant__ Params params;

#include "block_sum.cuh"

extern "C" __global__ void __launch_bounds__(BLOCK_SIZE)
hierarchy_window(const uint4* src, unsigned* sums) {
    unsigned group = blockIdx.y * gridDim.x + blockIdx.x;
    unsigned tid = threadIdx.x;
    unsigned at = (group * params.rotation + tid) % params.vec4s;
    uint4 acc = make_uint4(0, 0, 0, 0);
    RUNTIME_LOOP
    for (unsigned load = 0; load < params.loads; load++) {
        uint4 v = src[at];
        acc.x += v.x;
        acc.y += v.y;
        acc.z += v.z;
        acc.w += v.w;
        // One wrap at most, and no division in the loop.
        at += WORKGROUP_SIZE;
        if (at >= params.vec4s) {
            at -= params.vec4s;
        }
    }
    write_block_sum(sums, group, tid, acc.x + acc.y + acc.z + acc.w);
}
