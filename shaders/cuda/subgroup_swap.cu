// subgroup/swap: each lane holds 4 values and swaps one with a partner lane's in every round.
//
// In round r, lane l with bit m = 2^(r mod log2(warpSize)) clear exchanges its element
// `first` with element `second` of lane l ^ m (the texts' test_shfl_swap: one
// __shfl_xor_sync between two local swaps).
//
// The text selects the lower lane of each pair with `laneIdx / mask + 1 == 1`, true
// only for lanes below the mask; the lower lane of a pair is the one whose mask bit is
// clear, as here.

struct Params {
    unsigned rounds;
    unsigned first;
    unsigned second;
};

__constant__ Params params;

#define FULL_MASK 0xffffffffu

#include "next_offset.cuh"

__device__ __forceinline__ void swap(unsigned* value, unsigned first, unsigned second) {
    unsigned kept = value[first];
    value[first] = value[second];
    value[second] = kept;
}

extern "C" __global__ void __launch_bounds__(BLOCK_SIZE)
subgroup_swap(const uint4* __restrict__ src, unsigned* __restrict__ dst) {
    unsigned i = blockIdx.x * WORKGROUP_SIZE + threadIdx.x;
    unsigned lane = threadIdx.x % warpSize;
    uint4 loaded = src[i];
    unsigned value[4] = {loaded.x, loaded.y, loaded.z, loaded.w};
    unsigned first = params.first;
    unsigned second = params.second;
    unsigned offset = 1;
    RUNTIME_LOOP
    for (unsigned round = 0; round < params.rounds; round++) {
        bool lower = (lane & offset) == 0;
        // The lower lane moves its `first` into the exchanged slot and back after it.
        if (lower) {
            swap(value, first, second);
        }
        value[second] = __shfl_xor_sync(FULL_MASK, value[second], offset);
        if (lower) {
            swap(value, first, second);
        }
        offset = next_offset(offset, warpSize);
    }
    for (unsigned k = 0; k < 4; k++) {
        dst[4 * i + k] = value[k];
    }
    // The result depends on the warp size, which the reference replays.
    if (threadIdx.x == 0) {
        dst[4 * gridDim.x * WORKGROUP_SIZE + blockIdx.x] = warpSize;
    }
}
