// hierarchy/dram_write: a grid-stride loop writes every uint4 of a buffer far larger than the L2.
//
// It writes a known pattern, a hash of each index, and reads nothing (BabelStream's
// write-only split).

struct Params {
    unsigned vec4s;
};

__constant__ Params params;

// The WGSL's pattern: varied, non-zero words from a few integer operations.
__device__ uint4 pattern(unsigned i) {
    unsigned h = (i ^ 0x9E3779B9u) * 0x85EBCA6Bu;
    return make_uint4(h | 1u, (h ^ 0xC2B2AE35u) | 1u, (h * 0x27D4EB2Fu) | 1u, ~h | 1u);
}

extern "C" __global__ void __launch_bounds__(BLOCK_SIZE)
hierarchy_dram_write(uint4* __restrict__ dst) {
    unsigned grid = gridDim.x * gridDim.y * WORKGROUP_SIZE;
    RUNTIME_LOOP
    for (unsigned i = (blockIdx.y * gridDim.x + blockIdx.x) * WORKGROUP_SIZE + threadIdx.x;
         i < params.vec4s; i += grid) {
        dst[i] = pattern(i);
    }
}
