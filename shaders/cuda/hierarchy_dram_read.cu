// hierarchy/dram_read: a grid-stride loop reads every uint4 of a buffer far larger than the L2 once; each block writes the wrapping sum of what it read (BabelStream's read-only split).

struct Params {
    unsigned vec4s;
};

__constant__ Params params;

extern "C" __global__ void __launch_bounds__(BLOCK_SIZE)
hierarchy_dram_read(const uint4* __restrict__ src, unsigned* __restrict__ sums) {
    __shared__ unsigned partial[BLOCK_SIZE];
    unsigned group = blockIdx.y * gridDim.x + blockIdx.x;
    unsigned tid = threadIdx.x;
    unsigned grid = gridDim.x * gridDim.y * WORKGROUP_SIZE;
    uint4 acc = make_uint4(0, 0, 0, 0);
    RUNTIME_LOOP
    for (unsigned i = group * WORKGROUP_SIZE + tid; i < params.vec4s; i += grid) {
        uint4 v = src[i];
        acc.x += v.x;
        acc.y += v.y;
        acc.z += v.z;
        acc.w += v.w;
    }
    partial[tid] = acc.x + acc.y + acc.z + acc.w;
    __syncthreads();
    for (unsigned stride = WORKGROUP_SIZE / 2; stride > 0; stride /= 2) {
        if (tid < stride) {
            partial[tid] += partial[tid + stride];
        }
        __syncthreads();
    }
    if (tid == 0) {
        sums[group] = partial[0];
    }
}
