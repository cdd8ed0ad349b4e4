// transpose through a padded 32 x 32 tile, moving float4s: each thread reads four
// consecutive elements of an input row and writes four consecutive elements of an
// output row, so every global access is 16 bytes wide. Rows of the ny x nx input and of
// the nx x ny output are whole float4s (nx and ny multiples of 4).

struct Params {
    unsigned nx;
    unsigned ny;
};

__constant__ Params params;

#define TILE 32
// float4s per tile row: the block is TILE / 4 x WG_Y threads.
static_assert(BLOCK_X == TILE / 4, "a block row covers a tile row");

extern "C" __global__ void __launch_bounds__(BLOCK_SIZE)
transpose_tile_vec4(const float4* __restrict__ src, float4* __restrict__ dst) {
    // Row stride 33: both the float4 stores and the column reads hit 32 banks.
    __shared__ float tile[TILE][TILE + 1];
    unsigned x0 = blockIdx.x * TILE;
    unsigned y0 = blockIdx.y * TILE;
    unsigned ix = x0 + 4 * threadIdx.x;
    RUNTIME_LOOP
    for (unsigned ty = threadIdx.y; ty < TILE; ty += WG_Y) {
        unsigned iy = y0 + ty;
        if (ix < params.nx && iy < params.ny) {
            float4 v = src[(iy * params.nx + ix) / 4];
            tile[ty][4 * threadIdx.x] = v.x;
            tile[ty][4 * threadIdx.x + 1] = v.y;
            tile[ty][4 * threadIdx.x + 2] = v.z;
            tile[ty][4 * threadIdx.x + 3] = v.w;
        }
    }
    __syncthreads();
    // Output row r of the block is tile column r; this thread writes its elements
    // c..c+3, which are tile rows c..c+3.
    unsigned c = 4 * threadIdx.x;
    unsigned ox = y0 + c;
    RUNTIME_LOOP
    for (unsigned r = threadIdx.y; r < TILE; r += WG_Y) {
        unsigned oy = x0 + r;
        if (ox < params.ny && oy < params.nx) {
            dst[(oy * params.ny + ox) / 4] =
                make_float4(tile[c][r], tile[c + 1][r], tile[c + 2][r], tile[c + 3][r]);
        }
    }
}
