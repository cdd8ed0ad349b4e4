// Offsets 1, 2, 4, .., size / 2, then 1 again: the WGSL's next_offset.
__device__ __forceinline__ unsigned next_offset(unsigned offset, unsigned size) {
    return offset << 1 == size ? 1 : offset << 1;
}
