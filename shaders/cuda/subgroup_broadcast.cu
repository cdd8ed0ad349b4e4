// subgroup/broadcast: `rounds` rounds of v = __shfl_sync(v, SOURCE_LANE) + rotl1(v).
//
// Every lane takes the source lane's value (the texts' test_shfl_broadcast).

struct Params {
    unsigned rounds;
};

__constant__ Params params;

#define FULL_MASK 0xffffffffu
// The WGSL's SOURCE_LANE.
#define SOURCE_LANE 3

// v rotated left by one bit: a lane's own term that feeds its high bits into low ones.
__device__ __forceinline__ unsigned rotl1(unsigned v) {
    return (v << 1) | (v >> 31);
}

extern "C" __global__ void __launch_bounds__(BLOCK_SIZE)
subgroup_broadcast(const unsigned* __restrict__ src, unsigned* __restrict__ dst) {
    unsigned i = blockIdx.x * WORKGROUP_SIZE + threadIdx.x;
    unsigned v = src[i];
    RUNTIME_LOOP
    for (unsigned round = 0; round < params.rounds; round++) {
        v = __shfl_sync(FULL_MASK, v, SOURCE_LANE) + rotl1(v);
    }
    dst[i] = v;
    // The result depends on the warp size, which the reference replays.
    if (threadIdx.x == 0) {
        dst[gridDim.x * WORKGROUP_SIZE + blockIdx.x] = warpSize;
    }
}
