// reduce/smem, smem_override: one element per thread into shared memory, then a tree there.
//
// The tree is interleaved and __syncthreads()-separated down to the last pair (the
// texts' reduceSmem and reduceSmemDyn).
//
// With STATIC_TILE the array is sized at compile time for the largest block the suite
// runs (`__shared__ int smem[DIM]`); without, it is `extern __shared__`, sized at
// launch with the case's WORKGROUP_SIZE words: dynamic shared memory, what the WGSL's
// override-sized array stands for. Like the WGSL kernel, every step ends in a barrier
// (no volatile last warp: reduce/unroll8_lastwarp is where that is measured).

struct Params {
    unsigned blocks;
};

__constant__ Params params;

// The WGSL's static tile.
#define TILE_WORDS 1024

extern "C" __global__ void __launch_bounds__(BLOCK_SIZE)
reduce_smem(const int* __restrict__ src, int* __restrict__ partials) {
#if STATIC_TILE
    __shared__ int tile[TILE_WORDS];
#else
    extern __shared__ int tile[];
#endif
    unsigned block = blockIdx.y * gridDim.x + blockIdx.x;
    // The overhang of a 2-D grid: whole blocks, so the barriers stay uniform.
    if (block >= params.blocks) {
        return;
    }
    unsigned tid = threadIdx.x;
    tile[tid] = src[block * WORKGROUP_SIZE + tid];
    __syncthreads();
    for (unsigned stride = WORKGROUP_SIZE / 2; stride > 0; stride /= 2) {
        if (tid < stride) {
            tile[tid] += tile[tid + stride];
        }
        __syncthreads();
    }
    if (tid == 0) {
        partials[block] = tile[0];
    }
}
