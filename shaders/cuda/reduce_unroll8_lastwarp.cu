// reduce/unroll8_lastwarp: reduce/unroll8 whose last warp sums 64 values without block barriers.
//
// The global-memory tree stops at 64 values, which the first warp sums through
// `volatile` accesses (the texts' reduceUnrollWarps8).
//
// The texts' warp-synchronous tail (`vmem[tid] += vmem[tid + 32]; ...` with no
// synchronisation) relies on a warp's 32 lanes running in lock-step, which Volta's
// independent thread scheduling ended: here each step reads, then __syncwarp(), then
// writes, then __syncwarp(), the form NVIDIA gives for such code since CUDA 9. Still
// no __syncthreads() for the last six steps, which is the point of the variant.
// The WGSL twin sums its last subgroup's values with subgroupAdd; both leave the
// block's sum in the first word of its scratch block, as the texts leave it in their
// input.

struct Params {
    unsigned blocks;
};

__constant__ Params params;

static_assert(WORKGROUP_SIZE >= 64, "the last warp adds 64 values");

extern "C" __global__ void __launch_bounds__(BLOCK_SIZE)
reduce_unroll8_lastwarp(const int* src, int* partials, int* scratch) {
    unsigned block = blockIdx.y * gridDim.x + blockIdx.x;
    // The overhang of a 2-D grid: whole blocks, so the barriers stay uniform.
    if (block >= params.blocks) {
        return;
    }
    unsigned tid = threadIdx.x;
    unsigned first = block * WORKGROUP_SIZE * UNROLL + tid;
    int sum = 0;
#pragma unroll
    for (unsigned k = 0; k < UNROLL; k++) {
        sum += src[first + k * WORKGROUP_SIZE];
    }
    // The unrolled sums go to `scratch`: the input is read-only.
    unsigned base = block * WORKGROUP_SIZE;
    scratch[base + tid] = sum;
    __syncthreads();
    for (unsigned stride = WORKGROUP_SIZE / 2; stride > 32; stride /= 2) {
        if (tid < stride) {
            scratch[base + tid] += scratch[base + tid + stride];
        }
        __syncthreads();
    }
    if (tid < 32) {
        volatile int* vmem = scratch + base;
        int v = vmem[tid];
#pragma unroll
        for (unsigned offset = 32; offset > 0; offset /= 2) {
            v += vmem[tid + offset];
            __syncwarp();
            vmem[tid] = v;
            __syncwarp();
        }
        if (tid == 0) {
            partials[block] = v;
        }
    }
}
