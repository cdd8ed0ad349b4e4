// p33: is the DRAM ceiling why cp.async gains nothing at 16-byte elements? The suite's
// hierarchy/staged_* and staged_async_* kernel (shaders/cuda/hierarchy_staged.cu: 256
// threads, tiles of 256 elements, STAGES slots, the tile summed in reverse order,
// cp.async.ca with one commit group a tile) at 4, 8 and 16 B elements, 1 and 2 stages,
// sync and async, in four settings:
//   dram_full: the suite's case (256 MiB read once, min(tiles / 8, 4096) blocks);
//   dram_1sm:  the same 256 MiB with one block per SM (#SMs blocks, and dynamic shared
//              memory so large that a second block cannot fit): latency hiding scarce;
//   l2_full:   the same grid and bytes read, but every tile index folded into the first
//              8 MiB, which the 50 MB L2 keeps: no DRAM ceiling;
//   l2_1sm:    both.
// Every launch reads the same 256 MiB worth of tiles; the sums are verified against a
// CPU reference before any timing is printed.
//
// Build: nvcc -O3 -arch=sm_90 -o staged_async staged_async.cu
// Output: CSV on stdout, probe,variant,param,bytes,time_us_median,gbps; notes on stderr.
// Exit status: 0 if every case verified, 1 if one did not, 2 on a CUDA error.

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CK(call)                                                                    \
    do {                                                                            \
        cudaError_t e_ = (call);                                                    \
        if (e_ != cudaSuccess) {                                                    \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,           \
                    cudaGetErrorString(e_));                                        \
            exit(2);                                                                \
        }                                                                           \
    } while (0)

constexpr unsigned WG = 256;                      // the hierarchy family's WORKGROUP
constexpr size_t BUFFER_BYTES = 256ull << 20;     // STAGED_FULL_BYTES
constexpr size_t L2_BYTES = 8ull << 20;           // the L2-resident working set
constexpr unsigned MIN_TILES = 8, MAX_GROUPS = 4096;  // STAGED_MIN_TILES, STAGED_WORKGROUPS
constexpr int REPS = 21;

__device__ __forceinline__ unsigned fold(unsigned v) { return v; }
__device__ __forceinline__ unsigned fold(uint2 v) { return v.x + v.y; }
__device__ __forceinline__ unsigned fold(uint4 v) { return v.x + v.y + v.z + v.w; }

// Logical tile t of the launch is physical tile
//   ((t * mul) + (t >> lap_shift) * lap_mul) & mask.
// dram_*: mul 1, lap_mul 0, mask all ones: physical = logical, the suite's order.
// l2_*: mask = tiles in 8 MiB - 1 (a power of two), mul and lap_mul odd: within each lap
// of 8 MiB every physical tile is read once, and the lap term moves a block's tiles
// from lap to lap, so that no block (and so no L1) reads the same tile again soon:
// the re-reads come from the L2. Both settings run the same instructions.
struct TileMap {
    unsigned mul, lap_shift, lap_mul, mask;
    __host__ __device__ unsigned operator()(unsigned t) const {
        return (t * mul + (t >> lap_shift) * lap_mul) & mask;
    }
};

template <class E, bool ASYNC>
__device__ __forceinline__ void stage(E* to, const E* from) {
    if constexpr (ASYNC) {
        unsigned shared_address = (unsigned)__cvta_generic_to_shared(to);
        asm volatile("cp.async.ca.shared.global [%0], [%1], %2;\n" ::"r"(shared_address), "l"(from),
                     "n"(sizeof(E))
                     : "memory");
    } else {
        *to = *from;
    }
}

template <bool ASYNC>
__device__ __forceinline__ void commit() {
    if constexpr (ASYNC) asm volatile("cp.async.commit_group;\n" ::: "memory");
}

template <bool ASYNC, unsigned STAGES>
__device__ __forceinline__ void wait_oldest() {
    if constexpr (ASYNC) asm volatile("cp.async.wait_group %0;\n" ::"n"(STAGES - 1) : "memory");
}

// hierarchy_staged.cu's kernel, with the tile index passed through `map` and the
// parameters as arguments. The loop's trip count is a run-time value, unrolled as
// nvcc likes (the suite's default build: RUNTIME_LOOP empty).
template <class E, unsigned STAGES, bool ASYNC>
__global__ void __launch_bounds__(WG) staged(const E* src, unsigned* sums, unsigned tiles, TileMap map) {
    __shared__ E tile[STAGES * WG];
    __shared__ unsigned partial[WG];
    unsigned group = blockIdx.x;
    unsigned groups = gridDim.x;
    unsigned tid = threadIdx.x;
    unsigned ahead = group;
    for (unsigned slot = 0; slot + 1 < STAGES; slot++) {
        if (ahead < tiles) {
            stage<E, ASYNC>(&tile[slot * WG + tid], &src[map(ahead) * WG + tid]);
        }
        commit<ASYNC>();
        ahead += groups;
    }
    unsigned acc = 0;
    unsigned slot = 0;
    for (unsigned current = group; current < tiles; current += groups) {
        unsigned into = (slot + STAGES - 1) % STAGES;
        if (ahead < tiles) {
            stage<E, ASYNC>(&tile[into * WG + tid], &src[map(ahead) * WG + tid]);
        }
        commit<ASYNC>();
        ahead += groups;
        wait_oldest<ASYNC, STAGES>();
        __syncthreads();
        acc += fold(tile[slot * WG + WG - 1 - tid]);
        __syncthreads();
        slot = (slot + 1) % STAGES;
    }
    partial[tid] = acc;
    __syncthreads();
    for (unsigned stride = WG / 2; stride > 0; stride /= 2) {
        if (tid < stride) partial[tid] += partial[tid + stride];
        __syncthreads();
    }
    if (tid == 0) sums[group] = partial[0];
}

// A dependent FMA chain on every SM: keeps the GPU busy while its clocks come up.
__global__ void spin(float* sink, int iters) {
    float a = threadIdx.x;
    for (int i = 0; i < iters; i++) a = a * 0.999f + 1.0f;
    if (a == -1.0f) *sink = a;  // never true; keeps the chain
}

// ---- Host ----

// About 300 ms of spin before the first measurement (the suite warms up ~200 ms).
static void spin_up(int sms) {
    float* sink;
    CK(cudaMalloc(&sink, 4));
    auto t0 = std::chrono::steady_clock::now();
    while (std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(300)) {
        spin<<<sms * 4, 256>>>(sink, 1 << 18);
        CK(cudaGetLastError());
        CK(cudaDeviceSynchronize());
    }
    CK(cudaFree(sink));
}

static uint64_t mix64(uint64_t x) {  // splitmix64's finaliser
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

static unsigned log2u(size_t v) {
    unsigned s = 0;
    while ((size_t(1) << s) < v) s++;
    return s;
}

static cudaEvent_t ev0, ev1;
static int failures = 0;
static int sms = 0, smem_optin = 0;

struct Setting {
    const char* name;
    bool l2;       // tiles folded into the first 8 MiB
    bool one_sm;   // one block per SM
};

template <class E, unsigned STAGES, bool ASYNC>
static void run(const Setting& s, const unsigned* d_src, unsigned* d_sums,
                const std::vector<uint32_t>& h_words) {
    using K = void (*)(const E*, unsigned*, unsigned, TileMap);
    K kernel = staged<E, STAGES, ASYNC>;
    const size_t ebytes = sizeof(E);
    const size_t tile_bytes = WG * ebytes;
    const unsigned tiles = (unsigned)(BUFFER_BYTES / tile_bytes);  // logical tiles a launch
    const unsigned phys = (unsigned)((s.l2 ? L2_BYTES : BUFFER_BYTES) / tile_bytes);
    TileMap map = s.l2 ? TileMap{0x9E3779B1u, log2u(phys), 0x85EBCA6Bu, phys - 1}
                       : TileMap{1u, 31u, 0u, 0xFFFFFFFFu};
    unsigned groups = s.one_sm ? (unsigned)sms : std::min(std::max(tiles / MIN_TILES, 1u), MAX_GROUPS);

    size_t dyn = 0;
    if (s.one_sm) {
        // As much dynamic shared memory as one block may have: a second cannot fit.
        cudaFuncAttributes fa;
        CK(cudaFuncGetAttributes(&fa, kernel));
        dyn = (size_t)smem_optin - fa.sharedSizeBytes;
        CK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)dyn));
        int per_sm = 0;
        CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, WG, dyn));
        if (per_sm != 1) {
            fprintf(stderr, "p33: %s: %d blocks fit an SM, not 1\n", s.name, per_sm);
            failures++;
            return;
        }
    } else {
        // No dynamic shared memory allowed, as the suite's launch: undoes a 1sm setting.
        CK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, 0));
    }

    // Reference: each group's wrapping sum of the words of its tiles.
    const size_t tile_words = tile_bytes / 4;
    std::vector<uint32_t> tile_sum(phys);
    for (unsigned p = 0; p < phys; p++) {
        uint32_t sum = 0;
        for (size_t w = 0; w < tile_words; w++) sum += h_words[p * tile_words + w];
        tile_sum[p] = sum;
    }
    std::vector<uint32_t> want(groups, 0);
    for (unsigned t = 0; t < tiles; t++) want[t % groups] += tile_sum[map(t)];

    const E* src = reinterpret_cast<const E*>(d_src);
    auto launch = [&] { kernel<<<groups, WG, dyn>>>(src, d_sums, tiles, map); };

    CK(cudaMemset(d_sums, 0xff, (size_t)MAX_GROUPS * 4 * 2));
    launch();
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    std::vector<uint32_t> got(groups);
    CK(cudaMemcpy(got.data(), d_sums, groups * 4, cudaMemcpyDeviceToHost));
    char variant[64], param[160];
    snprintf(variant, sizeof variant, "%s_%s_%zuB_s%u", s.name, ASYNC ? "async" : "sync", ebytes, STAGES);
    snprintf(param, sizeof param, "size=%zu;footprint=%zu;elem=%zu;stages=%u;async=%d;blocks=%u;dynsmem=%zu",
             BUFFER_BYTES, (size_t)phys * tile_bytes, ebytes, STAGES, (int)ASYNC, groups, dyn);
    for (unsigned g = 0; g < groups; g++) {
        if (got[g] != want[g]) {
            fprintf(stderr, "p33 %s: FAILED verification: group %u got %u want %u\n", variant, g, got[g], want[g]);
            failures++;
            return;
        }
    }

    launch();  // warm-up (and, for l2_*, the 8 MiB into the L2)
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    std::vector<float> ms(REPS);
    for (int r = 0; r < REPS; r++) {
        CK(cudaEventRecord(ev0));
        launch();
        CK(cudaEventRecord(ev1));
        CK(cudaEventSynchronize(ev1));
        CK(cudaGetLastError());
        CK(cudaEventElapsedTime(&ms[r], ev0, ev1));
    }
    std::sort(ms.begin(), ms.end());
    double us = ms[REPS / 2] * 1e3;
    unsigned long long bytes = (unsigned long long)tiles * tile_bytes;  // bytes read
    printf("p33,%s,%s,%llu,%.2f,%.1f\n", variant, param, bytes, us, bytes / us / 1e3);
    fflush(stdout);
}

template <class E>
static void run_width(const Setting& s, const unsigned* d_src, unsigned* d_sums,
                      const std::vector<uint32_t>& h_words) {
    run<E, 1, false>(s, d_src, d_sums, h_words);
    run<E, 1, true>(s, d_src, d_sums, h_words);
    run<E, 2, false>(s, d_src, d_sums, h_words);
    run<E, 2, true>(s, d_src, d_sums, h_words);
}

int main() {
    int dev = 0;
    CK(cudaSetDevice(dev));
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, dev));
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    CK(cudaDeviceGetAttribute(&smem_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
    int l2 = 0;
    CK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
    fprintf(stderr, "p33: %s, cc %d.%d, %d SMs, L2 %d B, %d B shared a block at most\n", prop.name,
            prop.major, prop.minor, sms, l2, smem_optin);
    if (prop.major < 8) {
        fprintf(stderr, "p33: cp.async needs compute capability 8.0\n");
        return 2;
    }
    if ((size_t)l2 < 2 * L2_BYTES) fprintf(stderr, "p33: warning: an L2 of %d B may not keep 8 MiB\n", l2);
    CK(cudaEventCreate(&ev0));
    CK(cudaEventCreate(&ev1));

    // Words with all 32 bits random (as the suite's random_words).
    const size_t words = BUFFER_BYTES / 4;
    std::vector<uint32_t> h_words(words);
    for (size_t i = 0; i < words; i++) h_words[i] = (uint32_t)mix64(i ^ 0x5033ull);
    unsigned *d_src, *d_sums;
    CK(cudaMalloc(&d_src, BUFFER_BYTES));
    CK(cudaMalloc(&d_sums, (size_t)MAX_GROUPS * 4 * 2));
    CK(cudaMemcpy(d_src, h_words.data(), BUFFER_BYTES, cudaMemcpyHostToDevice));

    spin_up(sms);
    printf("probe,variant,param,bytes,time_us_median,gbps\n");
    fflush(stdout);
    const Setting settings[] = {
        {"dram_full", false, false},
        {"dram_1sm", false, true},
        {"l2_full", true, false},
        {"l2_1sm", true, true},
    };
    for (const Setting& s : settings) {
        run_width<unsigned>(s, d_src, d_sums, h_words);
        run_width<uint2>(s, d_src, d_sums, h_words);
        run_width<uint4>(s, d_src, d_sums, h_words);
    }

    CK(cudaFree(d_src));
    CK(cudaFree(d_sums));
    if (failures) fprintf(stderr, "p33: %d case(s) failed\n", failures);
    return failures ? 1 : 0;
}
