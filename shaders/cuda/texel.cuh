// The texel at (x, y), fetched with integer coordinates (PTX tex.2d.v4.f32.s32): the
// texel fetch WGSL's textureLoad becomes (SPIR-V OpImageFetch). tex2D samples at float
// coordinates instead (TEX), which read 1.5 x slower in the 1-D stencil (probe p32).
__device__ __forceinline__ float texel(cudaTextureObject_t src, unsigned x, unsigned y) {
    float4 v;
    asm("tex.2d.v4.f32.s32 {%0, %1, %2, %3}, [%4, {%5, %6}];"
        : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
        : "l"(src), "r"(x), "r"(y));
    return v.x;
}
