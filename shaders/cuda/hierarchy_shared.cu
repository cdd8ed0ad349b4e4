// hierarchy/shared, shared_l1_bypass: every block reads one chunk of a shared buffer per pass.
//
// Chunks are of WORKGROUP_SIZE uint4s, a different one each pass; each block writes the
// wrapping sum of what it read.
//
// As the WGSL: block g reads chunk (g + pass * step) mod chunks. With L1_BYPASS the
// loads are `__ldcg` (cache global: L2 only), so no L1 can serve, whatever the
// schedule; without, plain loads, as the WGSL's.

struct Params {
    unsigned chunks;
    unsigned passes;
    unsigned step;
};

__constant__ Params params;

#include "block_sum.cuh"

extern "C" __global__ void __launch_bounds__(BLOCK_SIZE)
hierarchy_shared(const uint4* src, unsigned* sums) {
    unsigned group = blockIdx.y * gridDim.x + blockIdx.x;
    unsigned tid = threadIdx.x;
    unsigned chunk = group % params.chunks;
    uint4 acc = make_uint4(0, 0, 0, 0);
    RUNTIME_LOOP
    for (unsigned round = 0; round < params.passes; round++) {
#if L1_BYPASS
        uint4 v = __ldcg(&src[chunk * WORKGROUP_SIZE + tid]);
#else
        uint4 v = src[chunk * WORKGROUP_SIZE + tid];
#endif
        acc.x += v.x;
        acc.y += v.y;
        acc.z += v.z;
        acc.w += v.w;
        // step < chunks: one wrap at most, and no division in the loop.
        chunk += params.step;
        if (chunk >= params.chunks) {
            chunk -= params.chunks;
        }
    }
    write_block_sum(sums, group, tid, acc.x + acc.y + acc.z + acc.w);
}
