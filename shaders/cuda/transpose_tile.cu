// transpose through a tile in shared memory: rows of the ny x nx input are read
// coalesced into the tile, and after __syncthreads() the tile's columns are written as
// coalesced rows of the nx x ny output.
//
// The tile is TILE_X = WG_X * TILES_X columns by TILE_Y = WG_Y * ROWS rows, each row
// padded by PAD words (the texts' tile[BDIMY][BDIMX + IPAD]).

struct Params {
    unsigned nx;
    unsigned ny;
};

__constant__ Params params;

#define TILE_X (WG_X * TILES_X)
#define TILE_Y (WG_Y * ROWS)

static_assert(TILE_Y * (TILE_X + PAD) == TILE_WORDS, "the tile the case declares");

extern "C" __global__ void __launch_bounds__(BLOCK_SIZE)
transpose_tile(const float* __restrict__ src, float* __restrict__ dst) {
    __shared__ float tile[TILE_Y][TILE_X + PAD];
    unsigned x0 = blockIdx.x * TILE_X;
    unsigned y0 = blockIdx.y * TILE_Y;
#pragma unroll
    for (unsigned r = 0; r < ROWS; r++) {
#pragma unroll
        for (unsigned j = 0; j < TILES_X; j++) {
            unsigned tx = threadIdx.x + j * WG_X;
            unsigned ty = threadIdx.y + r * WG_Y;
            unsigned ix = x0 + tx;
            unsigned iy = y0 + ty;
            if (ix < params.nx && iy < params.ny) {
                tile[ty][tx] = src[iy * params.nx + ix];
            }
        }
    }
    __syncthreads();
    // The output block is TILE_X rows of TILE_Y: consecutive threads take consecutive
    // elements of its rows, so writes stay coalesced.
    unsigned t = threadIdx.y * WG_X + threadIdx.x;
#pragma unroll
    for (unsigned m = 0; m < ROWS * TILES_X; m++) {
        unsigned e = t + m * WG_X * WG_Y;
        unsigned c = e % TILE_Y;
        unsigned r = e / TILE_Y;
        unsigned ox = y0 + c;
        unsigned oy = x0 + r;
        if (ox < params.ny && oy < params.nx) {
            dst[oy * params.ny + ox] = tile[c][r];
        }
    }
}
