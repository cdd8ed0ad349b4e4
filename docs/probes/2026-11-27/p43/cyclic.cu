// p43: does the L2 keep part of a buffer streamed through it again and again?
//
// One launch reads a buffer `reps` times in the same order (grid-stride, 16-byte loads
// `__ldcg`, so the L1 is bypassed): every line is reused after the whole buffer passed.
// A least-recently-used L2 keeps nothing of a buffer larger than itself; a
// thrash-resistant one (bimodal insertion) keeps about its size over the buffer's.
// Each launch's sum is checked against the CPU's before its time counts; a wrong one
// prints the size and exits 1. Prints per size the GB/s (median of 5 launches after one
// untimed) and the hit share it implies between the L2's rate (the median at 8 to
// 32 MiB) and DRAM's (1 GiB).
// Build and run: nvcc -O3 -arch=sm_90 -o cyclic cyclic.cu && ./cyclic
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <vector>
#include <cuda_runtime.h>

#define CHECK(x)                                                                   \
    do {                                                                           \
        cudaError_t e = (x);                                                       \
        if (e != cudaSuccess) {                                                    \
            fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e));                \
            return 1;                                                              \
        }                                                                          \
    } while (0)

__host__ __device__ uint4 word(size_t i) {
    uint32_t h = (uint32_t)i * 2654435761u ^ 0x9e3779b9u;
    return make_uint4(h, h * 747796405u, h ^ 0x85ebca6bu, h * 2891336453u);
}

__global__ void fill(uint4* buf, size_t n) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        buf[i] = word(i);
}

__global__ void cyclic(const uint4* __restrict__ buf, size_t n, int reps, uint32_t* out) {
    uint32_t acc = 0;
    for (int r = 0; r < reps; ++r) {
        for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
             i += (size_t)gridDim.x * blockDim.x) {
            uint4 v = __ldcg(buf + i);
            acc += v.x ^ v.y ^ v.z ^ v.w;
        }
    }
    atomicAdd(out, acc);
}

int main() {
    int sms = 0;
    CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    int l2 = 0;
    CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0));
    const size_t most = size_t(1) << 30;
    uint4* buf;
    uint32_t* out;
    CHECK(cudaMalloc(&buf, most));
    CHECK(cudaMalloc(&out, 4));
    fill<<<sms * 8, 256>>>(buf, most / 16);
    CHECK(cudaDeviceSynchronize());
    std::vector<double> sizes;
    for (double mib = 8; mib < 1024; mib *= 1.149) sizes.push_back(mib);
    sizes.push_back(1024);
    cudaEvent_t start, stop;
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&stop));
    std::vector<std::pair<double, double>> rates;
    for (double mib : sizes) {
        size_t bytes = (size_t)(mib * (1 << 20)) / 4096 * 4096;
        int reps = (int)std::max<size_t>(1, (size_t(4) << 30) / bytes);
        uint32_t pass = 0;
        for (size_t i = 0; i < bytes / 16; ++i) {
            uint4 v = word(i);
            pass += v.x ^ v.y ^ v.z ^ v.w;
        }
        std::vector<float> ms;
        for (int k = 0; k < 6; ++k) {
            CHECK(cudaMemset(out, 0, 4));
            CHECK(cudaEventRecord(start));
            cyclic<<<sms * 4, 512>>>(buf, bytes / 16, reps, out);
            CHECK(cudaEventRecord(stop));
            CHECK(cudaEventSynchronize(stop));
            float t;
            CHECK(cudaEventElapsedTime(&t, start, stop));
            uint32_t sum;
            CHECK(cudaMemcpy(&sum, out, 4, cudaMemcpyDeviceToHost));
            if (sum != pass * (uint32_t)reps) {
                fprintf(stderr, "%.1f MiB: sum %u, expected %u\n", mib, sum, pass * (uint32_t)reps);
                return 1;
            }
            if (k > 0) ms.push_back(t);
        }
        std::sort(ms.begin(), ms.end());
        double gbps = (double)bytes * reps / (ms[ms.size() / 2] * 1e6);
        rates.push_back({(double)bytes, gbps});
    }
    std::vector<double> inside;
    for (auto& [bytes, gbps] : rates)
        if (bytes >= 8.0 * (1 << 20) && bytes <= 32.0 * (1 << 20)) inside.push_back(gbps);
    std::sort(inside.begin(), inside.end());
    double l2_rate = inside[inside.size() / 2], dram = rates.back().second;
    printf("L2 %d bytes, %d SMs; L2 rate %.0f GB/s, DRAM %.0f GB/s\n", l2, sms, l2_rate, dram);
    for (auto& [bytes, gbps] : rates) {
        double h = (1 / dram - 1 / gbps) / (1 / dram - 1 / l2_rate);
        printf("%7.1f MiB: %6.0f GB/s, hit share %.3f, L2/buffer %.3f\n", bytes / (1 << 20), gbps,
               h, std::min(1.0, l2 / bytes));
    }
    return 0;
}
