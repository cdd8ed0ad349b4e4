// copy/offset, copy/launch: dst[i + offset] = src[i + offset], one float per thread.
//
// The copy is shifted off the 32-byte sector grid by `offset` words.

struct Params {
    unsigned n;
    unsigned offset;
};

__constant__ Params params;

// A grid wider than 65535 blocks is launched as rows of gridDim.x blocks.
extern "C" __global__ void __launch_bounds__(BLOCK_SIZE)
copy_offset(const float* __restrict__ src, float* __restrict__ dst) {
    unsigned i = (blockIdx.y * gridDim.x + blockIdx.x) * WORKGROUP_SIZE + threadIdx.x;
    if (i < params.n) {
        dst[i + params.offset] = src[i + params.offset];
    }
}
