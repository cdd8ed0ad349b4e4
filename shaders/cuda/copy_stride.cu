// copy/stride: dst[i * stride] = src[i * stride], one float per thread.
//
// Only every stride-th word is useful.

struct Params {
    unsigned n;
    unsigned stride;
};

__constant__ Params params;

// A grid wider than 65535 blocks is launched as rows of gridDim.x blocks.
extern "C" __global__ void __launch_bounds__(BLOCK_SIZE)
copy_stride(const float* __restrict__ src, float* __restrict__ dst) {
    unsigned i = (blockIdx.y * gridDim.x + blockIdx.x) * WORKGROUP_SIZE + threadIdx.x;
    if (i < params.n) {
        dst[i * params.stride] = src[i * params.stride];
    }
}
