// constant/uniform, constant/storage: every thread folds `r` reads of a 256-word table.
//
// All lanes read the same element (broadcast) or each its own (divergent).
//
// With UNIFORM the table is in __constant__ memory (the constant cache, which serves
// one address per request and serialises distinct ones); with STORAGE it is a global
// buffer read through the read-only cache with __ldg.

struct Params {
    // Reads per thread.
    unsigned r;
    // 255: read k is of element (offset + k) & index_mask. From constant memory, so
    // that the compiler cannot prove the reads repeat and hoist them out of the loop.
    unsigned index_mask;
#if UNIFORM
    // The table on the next 16-byte row, as in the WGSL's uniform.
    unsigned align[2];
    unsigned table[256];
#endif
};

__constant__ Params params;

extern "C" __global__ void __launch_bounds__(BLOCK_SIZE) constant(
#if STORAGE
    const unsigned* __restrict__ table,
#endif
    unsigned* __restrict__ dst) {
    unsigned i = threadIdx.x;
    // Broadcast: every lane reads element k; divergent: lane i reads element i + k.
    unsigned offset = DIVERGENT ? i : 0;
    unsigned r = params.r;
    unsigned index_mask = params.index_mask;
    unsigned acc = 0;
    RUNTIME_LOOP
    for (unsigned k = 0; k < r; k++) {
        unsigned e = (offset + k) & index_mask;
#if UNIFORM
        acc = acc * MIX + params.table[e];
#elif STORAGE
        acc = acc * MIX + __ldg(&table[e]);
#endif
    }
    dst[blockIdx.x * WORKGROUP_SIZE + i] = acc;
}
