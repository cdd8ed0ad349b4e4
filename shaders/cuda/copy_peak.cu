// copy/peak: dst[i] = src[i] over float4, one float4 per thread or a grid-stride loop.
//
// It is the practical bandwidth ceiling.

struct Params {
    unsigned n;
};

__constant__ Params params;

// With one float4 per thread the grid covers n and the loop runs once; with a
// grid-stride launch a fixed grid walks the buffer in steps of its own size.
extern "C" __global__ void __launch_bounds__(BLOCK_SIZE)
copy_peak(const float4* __restrict__ src, float4* __restrict__ dst) {
    unsigned grid = gridDim.x * gridDim.y * WORKGROUP_SIZE;
    RUNTIME_LOOP
    for (unsigned i = (blockIdx.y * gridDim.x + blockIdx.x) * WORKGROUP_SIZE + threadIdx.x;
         i < params.n; i += grid) {
        dst[i] = src[i];
    }
}
