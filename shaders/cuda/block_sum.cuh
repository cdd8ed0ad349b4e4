// Writes the wrapping sum of one unsigned from every thread of the block to sums[group].
//
// The WGSL's workgroup_sum: a __syncthreads()-separated tree in shared memory, so call it
// from every thread of the block; WORKGROUP_SIZE must be a power of two. Thread 0 writes.
__device__ __forceinline__ void write_block_sum(unsigned* sums, unsigned group, unsigned tid,
                                                unsigned value) {
    __shared__ unsigned partial[BLOCK_SIZE];
    partial[tid] = value;
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
