// transpose without a tile: the row and column copies that bound it, the naive
// transposes, their 4x unrolled and diagonally remapped forms, chosen by the defines
// READ_ROWS, WRITE_ROWS, UNROLL and DIAGONAL (the WGSL kernel's overrides).
//
// The input is read at in[iy*nx + ix] when READ_ROWS (one row of a ny x nx matrix),
// else at in[ix*ny + iy] (one column of it, seen as nx x ny); the output likewise with
// WRITE_ROWS. With TEXTURE the input is a texture object over a CUDA array holding the
// same words row by row (nx wide when READ_ROWS, else ny wide), read as the texel of
// that word: the texture path.

struct Params {
    unsigned nx;
    unsigned ny;
};

__constant__ Params params;

#if TEXTURE
#include "texel.cuh"
#endif

extern "C" __global__ void __launch_bounds__(BLOCK_SIZE)
#if TEXTURE
transpose_naive(cudaTextureObject_t src, float* __restrict__ dst) {
#else
transpose_naive(const float* __restrict__ src, float* __restrict__ dst) {
#endif
    unsigned block_x = blockIdx.x;
    unsigned block_y = blockIdx.y;
#if DIAGONAL
    // The general (any grid shape) form of block_y = blockIdx.x,
    // block_x = (blockIdx.x + blockIdx.y) % gridDim.x: a bijection on the grid.
    unsigned linear = blockIdx.x + gridDim.x * blockIdx.y;
    block_y = linear % gridDim.y;
    block_x = (linear / gridDim.y + block_y) % gridDim.x;
#endif
    unsigned iy = block_y * WG_Y + threadIdx.y;
    unsigned x0 = block_x * WG_X * UNROLL + threadIdx.x;
    // UNROLL elements WG_X apart along x: all their loads in flight before the stores.
#pragma unroll
    for (unsigned k = 0; k < UNROLL; k++) {
        unsigned ix = x0 + k * WG_X;
        if (ix < params.nx && iy < params.ny) {
            unsigned row = iy * params.nx + ix;
            unsigned col = ix * params.ny + iy;
#if TEXTURE
            // Word iy*nx + ix is texel (ix, iy) of rows nx wide; ix*ny + iy is (iy, ix).
            unsigned tx = READ_ROWS ? ix : iy;
            unsigned ty = READ_ROWS ? iy : ix;
            dst[WRITE_ROWS ? row : col] = texel(src, tx, ty);
#else
            dst[WRITE_ROWS ? row : col] = src[READ_ROWS ? row : col];
#endif
        }
    }
}
