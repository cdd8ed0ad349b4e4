// hierarchy/dram_read: a grid-stride loop reads every uint4 of a buffer far larger than the L2.
//
// Each uint4 is read once; each block writes the wrapping sum of what it read
// (BabelStream's read-only split).

struct Params {
    unsigned vec4s;
};

__constant__ Params params;

#include "block_sum.cuh"

extern "C" __global__ void __launch_bounds__(BLOCK_SIZE)
hierarchy_dram_read(const uint4* __restrict__ src, unsigned* __restrict__ sums) {
    unsigned group = blockIdx.y * gridDim.x + blockIdx.x;
    unsigned tid = threadIdx.x;
    unsigned grid = gridDim.x * gridDim.y * WORKGROUP_SIZE;
    uint4 acc = make_uint4(0, 0, 0, 0);
    RUNTIME_LOOP
    for (unsigned i = group * WORKGROUP_SIZE + tid; i < params.vec4s; i += grid) {
        uint4 v = src[i];
        acc.x += v.x;
        acc.y += v.y;
        acc.z += v.z;
        acc.w += v.w;
    }
    write_block_sum(sums, group, tid, acc.x + acc.y + acc.z + acc.w);
}
