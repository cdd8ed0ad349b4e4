// localmem/register_array, dynamic_index: a running mean over a per-thread window of W = 32.
//
// The mean runs along each of `series` interleaved series (element j of series t at j *
// series + t).
//
// With REGISTER_ARRAY the window is indexed only by the unrolled loop's constants,
// which the compiler keeps in registers; with DYNAMIC_INDEX its slot is computed at
// run time as (j + n) % W, an index it cannot resolve, so the array may go to local
// memory (the CUDA Programming Guide's "Local Memory").
//
// Element addresses are 64-bit (`size_t`): with 32-bit unsigned indices, whose
// wrap-around NVRTC must keep, register_array's 32 loads issue two ahead of their
// stores instead of fifteen (SASS), and it ran slower than the 64-bit form
// (docs/tax.md, A lesson from writing the twins).

struct Params {
    unsigned n;
    unsigned series;
};

__constant__ Params params;

#define W 32

extern "C" __global__ void __launch_bounds__(BLOCK_SIZE)
localmem(const float* __restrict__ src, float* __restrict__ dst) {
    unsigned t = blockIdx.x * WORKGROUP_SIZE + threadIdx.x;
    unsigned series = params.series;
    if (t >= series) {
        return;
    }
    // Zero: before a series' first W elements the missing ones count as 0.
    float window[W];
#pragma unroll
    for (unsigned j = 0; j < W; j++) {
        window[j] = 0.0f;
    }
    float sum = 0.0f;
#if REGISTER_ARRAY
    unsigned length = params.n / series;
    // Whole windows, slot j of each: once the inner loop is unrolled, every index is a
    // constant.
    RUNTIME_LOOP
    for (unsigned base = 0; base < length; base += W) {
#pragma unroll
        for (unsigned j = 0; j < W; j++) {
            size_t at = (size_t)(base + j) * series + t;
            float x = src[at];
            sum += x - window[j];
            window[j] = x;
            dst[at] = sum * (1.0f / W);
        }
    }
#elif DYNAMIC_INDEX
    unsigned n = params.n;
    unsigned length = n / series;
    RUNTIME_LOOP
    for (unsigned j = 0; j < length; j++) {
        // A ring buffer rotated by n: the slot of step j holds the element of step
        // j - W, as in register_array, but the compiler cannot know which slot it is.
        unsigned slot = (j + n) % W;
        size_t at = (size_t)j * series + t;
        float x = src[at];
        sum += x - window[slot];
        window[slot] = x;
        dst[at] = sum * (1.0f / W);
    }
#endif
}
