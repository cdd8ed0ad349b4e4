// stencil: out[i] = sum over k = 1..4 of c[k] * (in[i + k] - in[i - k]).
//
// Neighbours outside the array read as 0 (the texts' stencil_1d and
// stencil_1d_read_only).
//
// One define set picks the kernel, as the WGSL's keys do: with TILE, the block stages
// its inputs and a 4-element halo on each side in shared memory, and the coefficients
// come from __constant__ memory (UNIFORM_COEF), through the read-only cache with __ldg
// (STORAGE_COEF) or are compile-time constants C1..C4 (CONST_COEF); without TILE,
// global_direct reads every neighbour straight from global memory, with C1..C4, and
// with TEXTURE reads them as texels of a texture object over a CUDA array
// TEXTURE_WIDTH texels wide that holds the input row by row.

#define RADIUS 4

struct Params {
    unsigned n;
#if UNIFORM_COEF
    // c[1..4], on the next 16-byte row as in the WGSL's uniform.
    unsigned align[3];
    float c[RADIUS];
#endif
};

__constant__ Params params;

// src[j], or 0 outside the array (an index below 0 has wrapped past n).
#if TEXTURE
#include "texel.cuh"

__device__ __forceinline__ float input(cudaTextureObject_t src, unsigned j) {
    return j < params.n ? texel(src, j % TEXTURE_WIDTH, j / TEXTURE_WIDTH) : 0.0f;
}
#else
__device__ __forceinline__ float input(const float* __restrict__ src, unsigned j) {
    return j < params.n ? src[j] : 0.0f;
}
#endif

extern "C" __global__ void __launch_bounds__(BLOCK_SIZE) stencil(
#if STORAGE_COEF
    const float* __restrict__ coefficients,
#endif
#if TEXTURE
    cudaTextureObject_t src,
#else
    const float* __restrict__ src,
#endif
    float* __restrict__ dst) {
#if CONST_COEF
    const float c[RADIUS] = {C1, C2, C3, C4};
#endif
    unsigned first = (blockIdx.y * gridDim.x + blockIdx.x) * WORKGROUP_SIZE;
#if TILE
    // The workgroup's inputs with RADIUS neighbours on each side.
    __shared__ float tile[WORKGROUP_SIZE + 2 * RADIUS];
    // The 2-D grid's overhang is whole blocks: leaving early keeps the barrier uniform.
    if (first >= params.n) {
        return;
    }
    unsigned lid = threadIdx.x;
    unsigned i = first + lid;
    tile[RADIUS + lid] = input(src, i);
    if (lid < RADIUS) {
        tile[lid] = input(src, first - RADIUS + lid);
        tile[RADIUS + WORKGROUP_SIZE + lid] = input(src, first + WORKGROUP_SIZE + lid);
    }
    __syncthreads();
    if (i < params.n) {
        unsigned centre = RADIUS + lid;
        float sum = 0.0f;
#pragma unroll
        for (unsigned k = 1; k <= RADIUS; k++) {
#if UNIFORM_COEF
            sum += params.c[k - 1] * (tile[centre + k] - tile[centre - k]);
#elif STORAGE_COEF
            sum += __ldg(&coefficients[k - 1]) * (tile[centre + k] - tile[centre - k]);
#elif CONST_COEF
            sum += c[k - 1] * (tile[centre + k] - tile[centre - k]);
#endif
        }
        dst[i] = sum;
    }
#else
    unsigned i = first + threadIdx.x;
    if (i < params.n) {
        float sum = 0.0f;
#pragma unroll
        for (unsigned k = 1; k <= RADIUS; k++) {
            sum += c[k - 1] * (input(src, i + k) - input(src, i - k));
        }
        dst[i] = sum;
    }
#endif
}
