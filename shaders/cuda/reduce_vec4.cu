// reduce/smem_unroll4, subgroup_add, subgroup_shuffle: one partial sum per block of int4 loads.
//
// A grid-stride loop of int4 loads, four in flight per thread, then a sum over the
// block.
//
// One define picks how the block combines its threads' sums, as the WGSL's keys do:
// SMEM, a __syncthreads()-separated tree in shared memory; ADD, __reduce_add_sync
// (CUDA's subgroupAdd) within each warp and once more over the warps' sums; SHUFFLE, a
// __shfl_xor_sync butterfly within each warp and once more over the warps' sums.

struct Params {
    unsigned vec4s;
};

__constant__ Params params;

#define FULL_MASK 0xffffffffu
#define WARPS ((WORKGROUP_SIZE + 31) / 32)

#if SHUFFLE
// After log2(width) exchanges with lane ^ mask every lane holds the sum of its warp's
// `width` lanes.
__device__ int butterfly(int value) {
    const unsigned width = WORKGROUP_SIZE < 32 ? WORKGROUP_SIZE : 32;
    int sum = value;
#pragma unroll
    for (unsigned mask = width / 2; mask > 0; mask /= 2) {
        sum += __shfl_xor_sync(FULL_MASK, sum, mask);
    }
    return sum;
}
#define WARP_SUM(value) butterfly(value)
#elif ADD
#define WARP_SUM(value) __reduce_add_sync(FULL_MASK, value)
#endif

extern "C" __global__ void __launch_bounds__(BLOCK_SIZE)
reduce_vec4(const int4* __restrict__ src, int* __restrict__ partials) {
    unsigned stride = gridDim.x * WORKGROUP_SIZE;
    unsigned i = blockIdx.x * WORKGROUP_SIZE + threadIdx.x;
    int4 acc = make_int4(0, 0, 0, 0);
    // Four independent loads per step keep four int4s in flight per thread.
    RUNTIME_LOOP
    for (; i + 3 * stride < params.vec4s; i += 4 * stride) {
        int4 a = src[i];
        int4 b = src[i + stride];
        int4 c = src[i + 2 * stride];
        int4 d = src[i + 3 * stride];
        acc.x += (a.x + b.x) + (c.x + d.x);
        acc.y += (a.y + b.y) + (c.y + d.y);
        acc.z += (a.z + b.z) + (c.z + d.z);
        acc.w += (a.w + b.w) + (c.w + d.w);
    }
    RUNTIME_LOOP
    for (; i < params.vec4s; i += stride) {
        int4 a = src[i];
        acc.x += a.x;
        acc.y += a.y;
        acc.z += a.z;
        acc.w += a.w;
    }
    int sum = acc.x + acc.y + acc.z + acc.w;
    unsigned tid = threadIdx.x;
#if SMEM
    __shared__ int tile[WORKGROUP_SIZE];
    tile[tid] = sum;
    __syncthreads();
    for (unsigned half = WORKGROUP_SIZE / 2; half > 0; half /= 2) {
        if (tid < half) {
            tile[tid] += tile[tid + half];
        }
        __syncthreads();
    }
    if (tid == 0) {
        partials[blockIdx.x] = tile[0];
    }
#else
    __shared__ int warp_sums[WARPS];
    unsigned lane = tid % 32;
    unsigned warp = tid / 32;
    int warp_sum = WARP_SUM(sum);
    if (lane == 0) {
        warp_sums[warp] = warp_sum;
    }
    __syncthreads();
    if (warp == 0) {
        int part = 0;
        RUNTIME_LOOP
        for (unsigned w = lane; w < WARPS; w += 32) {
            part += warp_sums[w];
        }
        int total = WARP_SUM(part);
        if (lane == 0) {
            partials[blockIdx.x] = total;
        }
    }
#endif
}
