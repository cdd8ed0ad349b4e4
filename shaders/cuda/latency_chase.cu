// latency/chase: one thread follows `steps` dependent loads i = next[i] around a random cycle.
//
// The cycle is of line-sized slots; the thread then writes where it stopped and the
// wrapping sum of the indices it visited.
//
// The pointer chase of the latency microbenchmarks: every load's address is the value
// of the one before, so only one is in flight and the time per step is the latency of
// the level that holds the footprint. `next` is a plain global pointer (no
// __restrict__, no __ldg): the loads take the ordinary L1/L2 path, as in the texts'
// chase. A launch resumes where the previous one stopped (out[0]); out[0] holding no
// index (the poison the output is created with) starts the chase at slot 0.

struct Params {
    unsigned steps;
    // Words of `next`: an out[0] at or past it is not an index.
    unsigned words;
};

__constant__ Params params;

extern "C" __global__ void __launch_bounds__(BLOCK_SIZE)
latency_chase(const unsigned* next, unsigned* out) {
    if (threadIdx.x != 0) {
        return;
    }
    unsigned i = out[0];
    if (i >= params.words) {
        i = 0;
    }
    unsigned sum = 0;
    RUNTIME_LOOP
    for (unsigned step = 0; step < params.steps; step++) {
        i = next[i];
        sum += i;
    }
    out[0] = i;
    out[1] = sum;
}
