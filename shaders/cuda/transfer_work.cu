// transfer/overlap, transfer/mapped_read: dst[i] = ROUNDS rounds of an integer mix of src[i].
//
// With no rounds, a copy.

// The transfer paths launch it per chunk with a grid of exactly the chunk's words
// (chunks are whole blocks), so no bound is needed; src may be mapped host memory.
extern "C" __global__ void __launch_bounds__(BLOCK_SIZE)
transfer_work(const unsigned* __restrict__ src, unsigned* __restrict__ dst) {
    unsigned i = (blockIdx.y * gridDim.x + blockIdx.x) * WORKGROUP_SIZE + threadIdx.x;
    unsigned x = src[i];
    for (unsigned round = 0; round < ROUNDS; round++) {
        x = x * 747796405u + 2891336453u;
        x ^= x >> 13;
    }
    dst[i] = x;
}
