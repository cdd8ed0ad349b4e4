// p34: does the L2 persisting access window keep a hot buffer in the L2 while a stream
// passes? The suite (hierarchy/persist) times the hot reads and a 256 MiB stream in one
// kernel. Here the hot buffer's read is its own kernel, timed by its own events right
// after a streaming kernel has read 256 MiB, with and without a window over the hot
// buffer (hot 8, 16, 24, 30 MiB). The streaming kernel and the suite's combined kernel
// are timed in the same configurations. Every kernel's sums are verified against a CPU
// reference before its timing is printed.
//
// Build: nvcc -O3 -arch=sm_90 -o persist_window persist_window.cu
// Output: CSV on stdout, probe,variant,param,bytes,time_us_median,gbps; notes on stderr.
// Exit status: 0 if every kernel verified, 1 if one did not, 2 on a CUDA error.

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

constexpr unsigned WG = 256;                   // the hierarchy family's WORKGROUP
constexpr size_t STREAM_BYTES = 256ull << 20;  // STAGED_FULL_BYTES
constexpr size_t HOT_MAX_BYTES = 30ull << 20;
constexpr size_t HOT_SIZES[] = {8ull << 20, 16ull << 20, 24ull << 20, 30ull << 20};
constexpr unsigned STREAM_GROUPS = 4096;       // dram_workgroups(2^24 vec4s)
constexpr size_t BLOCK_VEC4S = WG;             // a block's step: CHUNK_BYTES = 4 KiB
constexpr int REPS = 21;

// Sums a block's uint4s and writes the wrapping sum of their words to sums[group].
__device__ __forceinline__ void block_sum(uint4 acc, unsigned* partial, unsigned* sums) {
    unsigned tid = threadIdx.x;
    partial[tid] = acc.x + acc.y + acc.z + acc.w;
    __syncthreads();
    for (unsigned stride = WG / 2; stride > 0; stride /= 2) {
        if (tid < stride) partial[tid] += partial[tid + stride];
        __syncthreads();
    }
    if (tid == 0) sums[blockIdx.x] = partial[0];
}

// A grid-stride read of n uint4s (the stream alone, or the hot buffer alone).
__global__ void __launch_bounds__(WG) read_all(const uint4* __restrict__ src, unsigned n, unsigned* __restrict__ sums) {
    __shared__ unsigned partial[WG];
    unsigned grid = gridDim.x * WG;
    uint4 acc = make_uint4(0, 0, 0, 0);
    for (unsigned i = blockIdx.x * WG + threadIdx.x; i < n; i += grid) {
        uint4 v = src[i];
        acc.x += v.x;
        acc.y += v.y;
        acc.z += v.z;
        acc.w += v.w;
    }
    block_sum(acc, partial, sums);
}

// The suite's hierarchy_persist kernel (parameters as arguments): each uint4 of the
// stream, and beside it the hot buffer's uint4 i mod hot_vec4s.
__global__ void __launch_bounds__(WG) combined(const uint4* __restrict__ stream, const uint4* __restrict__ hot,
                                               unsigned vec4s, unsigned hot_vec4s, unsigned* __restrict__ sums) {
    __shared__ unsigned partial[WG];
    unsigned grid = gridDim.x * WG;
    uint4 acc = make_uint4(0, 0, 0, 0);
    for (unsigned i = blockIdx.x * WG + threadIdx.x; i < vec4s; i += grid) {
        uint4 s = stream[i];
        uint4 h = hot[i % hot_vec4s];
        acc.x += s.x + h.x;
        acc.y += s.y + h.y;
        acc.z += s.z + h.z;
        acc.w += s.w + h.w;
    }
    block_sum(acc, partial, sums);
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

// The wrapping word sum of each block of BLOCK_VEC4S uint4s.
static std::vector<uint32_t> block_sums(const std::vector<uint32_t>& words) {
    size_t bw = BLOCK_VEC4S * 4;
    std::vector<uint32_t> out(words.size() / bw);
    for (size_t b = 0; b < out.size(); b++) {
        uint32_t s = 0;
        for (size_t w = 0; w < bw; w++) s += words[b * bw + w];
        out[b] = s;
    }
    return out;
}

// A grid-stride kernel's sums: block b of the data goes to group b mod groups.
static std::vector<uint32_t> grid_sums(const std::vector<uint32_t>& blocks, size_t nblocks, unsigned groups) {
    std::vector<uint32_t> out(groups, 0);
    for (size_t b = 0; b < nblocks; b++) out[b % groups] += blocks[b];
    return out;
}

static bool check(const char* what, const unsigned* d_sums, const std::vector<uint32_t>& want) {
    std::vector<uint32_t> got(want.size());
    CK(cudaMemcpy(got.data(), d_sums, want.size() * 4, cudaMemcpyDeviceToHost));
    for (size_t g = 0; g < want.size(); g++) {
        if (got[g] != want[g]) {
            fprintf(stderr, "p34 %s: FAILED verification: group %zu got %u want %u\n", what, g, got[g], want[g]);
            return false;
        }
    }
    return true;
}

static double median(std::vector<float> ms) {
    std::sort(ms.begin(), ms.end());
    return ms[ms.size() / 2] * 1e3;  // µs
}

static void row(const char* variant, const char* param, unsigned long long bytes, double us) {
    printf("p34,%s,%s,%llu,%.2f,%.1f\n", variant, param, bytes, us, bytes / us / 1e3);
    fflush(stdout);
}

struct Config {
    const char* name;
    bool window;
    float hit;
    cudaAccessProperty miss;
    bool setaside_hot;  // set-aside = the hot buffer's size (the suite), else the device max
    bool setaside_zero; // no set-aside at all
};

static int failures = 0;
static int max_persist = 0, max_window = 0, sms = 0;
static cudaStream_t st;
static cudaEvent_t ev[6];

// Clears the stream's window, resets every persisting line, then sets the set-aside
// and the window the configuration asks for. Returns the set-aside in force and the
// window's bytes.
static void apply(const Config& c, const void* hot, size_t hot_bytes, size_t* setaside, size_t* window) {
    CK(cudaStreamSynchronize(st));
    cudaStreamAttrValue a;
    memset(&a, 0, sizeof a);
    a.accessPolicyWindow.base_ptr = nullptr;
    a.accessPolicyWindow.num_bytes = 0;
    a.accessPolicyWindow.hitRatio = 0.0f;
    a.accessPolicyWindow.hitProp = cudaAccessPropertyNormal;
    a.accessPolicyWindow.missProp = cudaAccessPropertyNormal;
    CK(cudaStreamSetAttribute(st, cudaStreamAttributeAccessPolicyWindow, &a));
    CK(cudaCtxResetPersistingL2Cache());
    size_t want = c.setaside_zero ? 0 : c.setaside_hot ? std::min(hot_bytes, (size_t)max_persist) : (size_t)max_persist;
    CK(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, want));
    CK(cudaDeviceGetLimit(setaside, cudaLimitPersistingL2CacheSize));
    *window = 0;
    if (c.window) {
        *window = std::min(hot_bytes, (size_t)max_window);
        a.accessPolicyWindow.base_ptr = const_cast<void*>(hot);
        a.accessPolicyWindow.num_bytes = *window;
        a.accessPolicyWindow.hitRatio = c.hit;
        a.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
        a.accessPolicyWindow.missProp = c.miss;
        CK(cudaStreamSetAttribute(st, cudaStreamAttributeAccessPolicyWindow, &a));
    }
    CK(cudaStreamSynchronize(st));
}

int main() {
    int dev = 0;
    CK(cudaSetDevice(dev));
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, dev));
    int l2 = 0;
    CK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    CK(cudaDeviceGetAttribute(&max_persist, cudaDevAttrMaxPersistingL2CacheSize, dev));
    CK(cudaDeviceGetAttribute(&max_window, cudaDevAttrMaxAccessPolicyWindowSize, dev));
    fprintf(stderr, "p34: %s, cc %d.%d, %d SMs, L2 %d B, persisting at most %d B, window at most %d B\n",
            prop.name, prop.major, prop.minor, sms, l2, max_persist, max_window);
    if (max_persist <= 0 || max_window <= 0) {
        fprintf(stderr, "p34: this device has no persisting L2\n");
        return 2;
    }
    CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    for (auto& e : ev) CK(cudaEventCreate(&e));

    // Words with all 32 bits random (as the suite's random_words), stream and hot apart.
    std::vector<uint32_t> h_stream(STREAM_BYTES / 4), h_hot(HOT_MAX_BYTES / 4);
    for (size_t i = 0; i < h_stream.size(); i++) h_stream[i] = (uint32_t)mix64(i ^ 0x5034ull);
    for (size_t i = 0; i < h_hot.size(); i++) h_hot[i] = (uint32_t)mix64(i ^ (0xB0B0ull << 32));
    std::vector<uint32_t> stream_blocks = block_sums(h_stream), hot_blocks = block_sums(h_hot);

    const unsigned vec4s = (unsigned)(STREAM_BYTES / 16);
    uint4 *d_stream, *d_hot;
    unsigned *d_ssum, *d_hsum, *d_csum;
    CK(cudaMalloc(&d_stream, STREAM_BYTES));
    CK(cudaMalloc(&d_hot, HOT_MAX_BYTES));
    CK(cudaMalloc(&d_ssum, STREAM_GROUPS * 4));
    CK(cudaMalloc(&d_hsum, STREAM_GROUPS * 4));
    CK(cudaMalloc(&d_csum, STREAM_GROUPS * 4));
    CK(cudaMemcpy(d_stream, h_stream.data(), STREAM_BYTES, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(d_hot, h_hot.data(), HOT_MAX_BYTES, cudaMemcpyHostToDevice));
    const std::vector<uint32_t> want_stream = grid_sums(stream_blocks, stream_blocks.size(), STREAM_GROUPS);

    const cudaAccessProperty STREAMING = cudaAccessPropertyStreaming, NORMAL = cudaAccessPropertyNormal;
    const Config configs[] = {
        {"none", false, 0.0f, NORMAL, false, true},
        {"none_setaside", false, 0.0f, NORMAL, false, false},
        {"hit100_streaming", true, 1.0f, STREAMING, false, false},
        {"hit100_normal", true, 1.0f, NORMAL, false, false},
        {"hit50_streaming", true, 0.5f, STREAMING, false, false},
        {"hit50_normal", true, 0.5f, NORMAL, false, false},
        {"hit100_streaming_setaside_hot", true, 1.0f, STREAMING, true, false},
    };

    spin_up(sms);
    printf("probe,variant,param,bytes,time_us_median,gbps\n");
    fflush(stdout);

    for (size_t hot_bytes : HOT_SIZES) {
        const unsigned hot_vec4s = (unsigned)(hot_bytes / 16);
        const size_t hot_nblocks = hot_vec4s / BLOCK_VEC4S;
        const unsigned hot_groups = (unsigned)std::min<size_t>(hot_nblocks, (size_t)sms * 8);
        const std::vector<uint32_t> want_hot = grid_sums(hot_blocks, hot_nblocks, hot_groups);
        std::vector<uint32_t> want_comb(STREAM_GROUPS, 0);
        for (size_t b = 0; b < stream_blocks.size(); b++)
            want_comb[b % STREAM_GROUPS] += stream_blocks[b] + hot_blocks[b % hot_nblocks];

        auto stream_k = [&] { read_all<<<STREAM_GROUPS, WG, 0, st>>>(d_stream, vec4s, d_ssum); };
        auto hot_k = [&] { read_all<<<hot_groups, WG, 0, st>>>(d_hot, hot_vec4s, d_hsum); };
        auto comb_k = [&] { combined<<<STREAM_GROUPS, WG, 0, st>>>(d_stream, d_hot, vec4s, hot_vec4s, d_csum); };

        for (const Config& c : configs) {
            size_t setaside = 0, window = 0;
            apply(c, d_hot, hot_bytes, &setaside, &window);
            char param[200];
            snprintf(param, sizeof param, "config=%s;hot=%zu;window=%zu;hit=%d;miss=%s;setaside=%zu", c.name,
                     hot_bytes, window, c.window ? (int)(c.hit * 100 + 0.5f) : 0,
                     !c.window ? "-" : c.miss == STREAMING ? "streaming" : "normal", setaside);

            // Warm-up pass, verified: stream, then hot.
            CK(cudaMemsetAsync(d_ssum, 0xff, STREAM_GROUPS * 4, st));
            CK(cudaMemsetAsync(d_hsum, 0xff, STREAM_GROUPS * 4, st));
            stream_k();
            CK(cudaGetLastError());
            hot_k();
            CK(cudaGetLastError());
            CK(cudaStreamSynchronize(st));
            bool ok = check("stream", d_ssum, want_stream) && check("hot", d_hsum, want_hot);
            if (!ok) {
                fprintf(stderr, "p34: %s failed\n", param);
                failures++;
                continue;
            }
            // The hot read alone, each right after 256 MiB of stream has passed.
            std::vector<float> t_stream(REPS), t_hot(REPS);
            for (int r = 0; r < REPS; r++) {
                CK(cudaEventRecord(ev[0], st));
                stream_k();
                CK(cudaEventRecord(ev[1], st));
                CK(cudaEventRecord(ev[2], st));
                hot_k();
                CK(cudaEventRecord(ev[3], st));
                CK(cudaEventSynchronize(ev[3]));
                CK(cudaGetLastError());
                CK(cudaEventElapsedTime(&t_stream[r], ev[0], ev[1]));
                CK(cudaEventElapsedTime(&t_hot[r], ev[2], ev[3]));
            }
            row("hot_after_stream", param, hot_bytes, median(t_hot));
            row("stream", param, STREAM_BYTES, median(t_stream));

            // The hot read right after itself: the L2-warm rate, without a window.
            if (!c.window && c.setaside_zero) {
                std::vector<float> t_warm(REPS);
                hot_k();
                for (int r = 0; r < REPS; r++) {
                    CK(cudaEventRecord(ev[4], st));
                    hot_k();
                    CK(cudaEventRecord(ev[5], st));
                    CK(cudaEventSynchronize(ev[5]));
                    CK(cudaGetLastError());
                    CK(cudaEventElapsedTime(&t_warm[r], ev[4], ev[5]));
                }
                if (check("hot (warm)", d_hsum, want_hot)) {
                    row("hot_after_hot", param, hot_bytes, median(t_warm));
                } else {
                    failures++;
                }
            }

            // The suite's combined kernel in the same configuration.
            CK(cudaMemsetAsync(d_csum, 0xff, STREAM_GROUPS * 4, st));
            comb_k();
            CK(cudaGetLastError());
            CK(cudaStreamSynchronize(st));
            if (!check("combined", d_csum, want_comb)) {
                fprintf(stderr, "p34: %s failed\n", param);
                failures++;
                continue;
            }
            std::vector<float> t_comb(REPS);
            for (int r = 0; r < REPS; r++) {
                CK(cudaEventRecord(ev[4], st));
                comb_k();
                CK(cudaEventRecord(ev[5], st));
                CK(cudaEventSynchronize(ev[5]));
                CK(cudaGetLastError());
                CK(cudaEventElapsedTime(&t_comb[r], ev[4], ev[5]));
            }
            row("combined", param, 2 * STREAM_BYTES, median(t_comb));
        }
    }

    Config off = {"none", false, 0.0f, cudaAccessPropertyNormal, false, true};
    size_t s0, w0;
    apply(off, d_hot, 0, &s0, &w0);
    CK(cudaFree(d_stream));
    CK(cudaFree(d_hot));
    CK(cudaFree(d_ssum));
    CK(cudaFree(d_hsum));
    CK(cudaFree(d_csum));
    if (failures) fprintf(stderr, "p34: %d configuration(s) failed\n", failures);
    return failures ? 1 : 0;
}
