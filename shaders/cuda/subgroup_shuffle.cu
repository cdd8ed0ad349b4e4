// subgroup/shuffle_up, shuffle_down, shuffle_xor: `rounds` rounds of a shuffle by d plus rotl1(v).
//
// Each round is v = __shfl_{up,down,xor}_sync(v, d) + rotl1(v), d = 2^(round mod
// log2(warpSize)) (the texts' test_shfl_up, test_shfl_down, test_shfl_xor).
//
// One define picks the shuffle, as the WGSL's keys do: UP, where lanes below d keep
// their own value; DOWN, where lanes whose lane + d is not a lane keep their own; XOR,
// butterfly rounds with mask d.

struct Params {
    unsigned rounds;
};

__constant__ Params params;

#define FULL_MASK 0xffffffffu

// v rotated left by one bit: a lane's own term that feeds its high bits into low ones.
__device__ __forceinline__ unsigned rotl1(unsigned v) {
    return (v << 1) | (v >> 31);
}

#include "next_offset.cuh"

extern "C" __global__ void __launch_bounds__(BLOCK_SIZE)
subgroup_shuffle(const unsigned* __restrict__ src, unsigned* __restrict__ dst) {
    unsigned i = blockIdx.x * WORKGROUP_SIZE + threadIdx.x;
    unsigned lane = threadIdx.x % warpSize;
    unsigned v = src[i];
    unsigned offset = 1;
    RUNTIME_LOOP
    for (unsigned round = 0; round < params.rounds; round++) {
#if UP
        unsigned shifted = __shfl_up_sync(FULL_MASK, v, offset);
        v = (lane >= offset ? shifted : v) + rotl1(v);
#elif DOWN
        unsigned shifted = __shfl_down_sync(FULL_MASK, v, offset);
        v = (lane + offset < warpSize ? shifted : v) + rotl1(v);
#elif XOR
        v = __shfl_xor_sync(FULL_MASK, v, offset) + rotl1(v);
#else
#error "define UP, DOWN or XOR"
#endif
        offset = next_offset(offset, warpSize);
    }
    dst[i] = v;
    // The result depends on the warp size, which the reference replays.
    if (threadIdx.x == 0) {
        dst[gridDim.x * WORKGROUP_SIZE + blockIdx.x] = warpSize;
    }
}
