// reduce/neighbored, neighbored_less, interleaved, unroll*: one sum per block, its tree in global.
//
// Each block writes one partial sum, and its tree runs in global memory (the texts'
// reduceNeighbored, reduceNeighboredLess, reduceInterleaved, reduceUnrolling2/4/8).
//
// One define picks the kernel, as the WGSL's keys do: NEIGHBORED (`tid % (2 * stride)
// == 0`, divergent lanes in every warp), NEIGHBORED_LESS (step `stride` done by the
// first threads, `index = 2 * stride * tid`), INTERLEAVED (`tid < stride` adds element
// tid + stride, the stride halving), or UNROLL (each block first adds UNROLL consecutive
// blocks of WORKGROUP_SIZE elements, then runs the interleaved tree).
//
// The texts sum in place in their input; the input here is read-only, so the first
// step reads it and writes `scratch` (one block per block of threads), where the rest
// of the tree runs in place: the same global reads and writes. __syncthreads() makes
// one step's global writes visible to the block's next.

struct Params {
    unsigned blocks;
};

__constant__ Params params;

extern "C" __global__ void __launch_bounds__(BLOCK_SIZE)
reduce_global(const int* src, int* partials, int* scratch) {
    unsigned block = blockIdx.y * gridDim.x + blockIdx.x;
    // The overhang of a 2-D grid: whole blocks, so the barriers stay uniform.
    if (block >= params.blocks) {
        return;
    }
    unsigned tid = threadIdx.x;
    unsigned base = block * WORKGROUP_SIZE;
#if NEIGHBORED
    if (tid % 2 == 0) {
        scratch[base + tid] = src[base + tid] + src[base + tid + 1];
    }
    __syncthreads();
    for (unsigned stride = 2; stride < WORKGROUP_SIZE; stride *= 2) {
        if (tid % (2 * stride) == 0) {
            scratch[base + tid] += scratch[base + tid + stride];
        }
        __syncthreads();
    }
#elif NEIGHBORED_LESS
    if (2 * tid < WORKGROUP_SIZE) {
        unsigned index = base + 2 * tid;
        scratch[index] = src[index] + src[index + 1];
    }
    __syncthreads();
    for (unsigned stride = 2; stride < WORKGROUP_SIZE; stride *= 2) {
        unsigned index = 2 * stride * tid;
        if (index < WORKGROUP_SIZE) {
            scratch[base + index] += scratch[base + index + stride];
        }
        __syncthreads();
    }
#elif INTERLEAVED
    const unsigned half = WORKGROUP_SIZE / 2;
    if (tid < half) {
        scratch[base + tid] = src[base + tid] + src[base + tid + half];
    }
    __syncthreads();
    for (unsigned stride = half / 2; stride > 0; stride /= 2) {
        if (tid < stride) {
            scratch[base + tid] += scratch[base + tid + stride];
        }
        __syncthreads();
    }
#elif UNROLL
    unsigned first = block * WORKGROUP_SIZE * UNROLL + tid;
    int sum = 0;
#pragma unroll
    for (unsigned k = 0; k < UNROLL; k++) {
        sum += src[first + k * WORKGROUP_SIZE];
    }
    scratch[base + tid] = sum;
    __syncthreads();
    for (unsigned stride = WORKGROUP_SIZE / 2; stride > 0; stride /= 2) {
        if (tid < stride) {
            scratch[base + tid] += scratch[base + tid + stride];
        }
        __syncthreads();
    }
#else
#error "define NEIGHBORED, NEIGHBORED_LESS, INTERLEAVED or UNROLL"
#endif
    if (tid == 0) {
        partials[block] = scratch[base];
    }
}
