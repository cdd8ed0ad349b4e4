// hierarchy/dram_copy: a grid-stride loop copies every uint4 of a buffer far larger than the L2.
//
// BabelStream's copy, beside its read-only and write-only splits.

struct Params {
    unsigned vec4s;
};

__constant__ Params params;

extern "C" __global__ void __launch_bounds__(BLOCK_SIZE)
hierarchy_dram_copy(const uint4* __restrict__ src, uint4* __restrict__ dst) {
    unsigned grid = gridDim.x * gridDim.y * WORKGROUP_SIZE;
    RUNTIME_LOOP
    for (unsigned i = (blockIdx.y * gridDim.x + blockIdx.x) * WORKGROUP_SIZE + threadIdx.x;
         i < params.vec4s; i += grid) {
        dst[i] = src[i];
    }
}
