// bank/stride: an unsigned tile in shared memory read with lane l at word (l * stride) mod WORDS.
//
// The tile is flat, written once, then read `r` times: gcd(stride, 32)-way bank
// conflicts.

struct Params {
    // Reads per thread.
    unsigned r;
    // 31: read k XORs every lane's word with `k & shift_mask`, which permutes the banks
    // and keeps the ways.
    unsigned shift_mask;
    unsigned stride;
};

__constant__ Params params;

static_assert(BLOCK_SIZE == WORDS, "one thread per tile word");

extern "C" __global__ void __launch_bounds__(BLOCK_SIZE)
bank_stride(const unsigned* __restrict__ src, unsigned* __restrict__ dst) {
    __shared__ unsigned tile[WORDS];
    unsigned l = threadIdx.x;
    unsigned g = blockIdx.x * WORDS + l;
    tile[l] = src[g];
    __syncthreads();
    unsigned word = l * params.stride % WORDS;
    unsigned r = params.r;
    unsigned shift_mask = params.shift_mask;
    unsigned acc = 0;
    RUNTIME_LOOP
    for (unsigned k = 0; k < r; k++) {
        acc = acc * MIX + tile[word ^ (k & shift_mask)];
    }
    dst[g] = acc;
}
