// hierarchy/staged_*, staged_async_*: each block stages tiles in shared memory and sums them.
//
// Tiles are of WORKGROUP_SIZE elements, STAGES of them in flight; each tile is read back
// in reverse order, and the block writes the wrapping sum of what it read.
//
// As the WGSL. With ASYNC the staging is `cp.async.ca.shared.global` (global to shared
// without registers, cached in L1 and L2, as the plain loads are), each tile's copies
// one commit group, and `cp.async.wait_group STAGES-1` before a tile is summed: the
// copies of the tiles ahead stay in flight while the current one is summed. Needs
// compute capability 8.0 or newer. Elements are 4 bytes, 8 (VEC2) or 16 (VEC4).

#if VEC4
typedef uint4 elem_t;
__device__ unsigned fold(elem_t v) { return v.x + v.y + v.z + v.w; }
#elif VEC2
typedef uint2 elem_t;
__device__ unsigned fold(elem_t v) { return v.x + v.y; }
#else
typedef unsigned elem_t;
__device__ unsigned fold(elem_t v) { return v; }
#endif

struct Params {
    unsigned tiles;
};

__constant__ Params params;

#include "block_sum.cuh"

// Copies one element from global into shared memory.
__device__ void stage(elem_t* to, const elem_t* from) {
#if ASYNC
    unsigned shared_address = (unsigned)__cvta_generic_to_shared(to);
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2;\n" ::"r"(shared_address), "l"(from),
                 "n"(sizeof(elem_t))
                 : "memory");
#else
    *to = *from;
#endif
}

// Closes the copies issued since the last commit into one group (ASYNC only).
__device__ void commit() {
#if ASYNC
    asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}

// Waits until at most STAGES - 1 groups are in flight: the oldest tile has arrived.
__device__ void wait_oldest() {
#if ASYNC
    asm volatile("cp.async.wait_group %0;\n" ::"n"(STAGES - 1) : "memory");
#endif
}

extern "C" __global__ void __launch_bounds__(BLOCK_SIZE)
hierarchy_staged(const elem_t* src, unsigned* sums) {
    __shared__ elem_t tile[TILE_ELEMS];
    unsigned group = blockIdx.y * gridDim.x + blockIdx.x;
    unsigned groups = gridDim.x * gridDim.y;
    unsigned tid = threadIdx.x;
    unsigned ahead = group;
    for (unsigned slot = 0; slot + 1 < STAGES; slot++) {
        if (ahead < params.tiles) {
            stage(&tile[slot * WORKGROUP_SIZE + tid], &src[ahead * WORKGROUP_SIZE + tid]);
        }
        // Every tile one group, even past the end: wait_group counts groups.
        commit();
        ahead += groups;
    }
    unsigned acc = 0;
    unsigned slot = 0;
    RUNTIME_LOOP
    for (unsigned current = group; current < params.tiles; current += groups) {
        unsigned into = (slot + STAGES - 1) % STAGES;
        if (ahead < params.tiles) {
            stage(&tile[into * WORKGROUP_SIZE + tid], &src[ahead * WORKGROUP_SIZE + tid]);
        }
        commit();
        ahead += groups;
        wait_oldest();
        __syncthreads();
        acc += fold(tile[slot * WORKGROUP_SIZE + WORKGROUP_SIZE - 1 - tid]);
        __syncthreads();
        slot = (slot + 1) % STAGES;
    }
    write_block_sum(sums, group, tid, acc);
}
