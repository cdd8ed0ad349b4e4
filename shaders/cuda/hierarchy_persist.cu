// hierarchy/persist: a grid-stride loop reads a streaming buffer far larger than the L2 once and, beside each of its uint4, one of a hot buffer that fits the L2, read round and round; each block writes the wrapping sum of what it read. The backend may set a persisting access policy window over the hot buffer on the stream (the case's params say so).

struct Params {
    unsigned vec4s;
    unsigned hot_vec4s;
};

__constant__ Params params;

extern "C" __global__ void __launch_bounds__(BLOCK_SIZE)
hierarchy_persist(const uint4* __restrict__ stream, const uint4* __restrict__ hot, unsigned* __restrict__ sums) {
    __shared__ unsigned partial[BLOCK_SIZE];
    unsigned group = blockIdx.y * gridDim.x + blockIdx.x;
    unsigned tid = threadIdx.x;
    unsigned grid = gridDim.x * gridDim.y * WORKGROUP_SIZE;
    uint4 acc = make_uint4(0, 0, 0, 0);
    RUNTIME_LOOP
    for (unsigned i = group * WORKGROUP_SIZE + tid; i < params.vec4s; i += grid) {
        uint4 s = stream[i];
        uint4 h = hot[i % params.hot_vec4s];
        acc.x += s.x + h.x;
        acc.y += s.y + h.y;
        acc.z += s.z + h.z;
        acc.w += s.w + h.w;
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
