// launch/*: dst[i] = scale * src[i], one float per thread: gpu-small-kernels' scale
// kernel, launched on a stream, one launch per synchronisation, or from a graph.

struct Params {
    unsigned n;
    float scale;
};

__constant__ Params params;

// A grid wider than 65535 blocks is launched as rows of gridDim.x blocks.
extern "C" __global__ void __launch_bounds__(BLOCK_SIZE)
launch_scale(const float* __restrict__ src, float* __restrict__ dst) {
    unsigned i = (blockIdx.y * gridDim.x + blockIdx.x) * WORKGROUP_SIZE + threadIdx.x;
    if (i < params.n) {
        dst[i] = params.scale * src[i];
    }
}
