// Probe: the most blocks resident at once, per width, as the residency example measures
// them on Vulkan (same kernel, nvcc).
#include <cstdio>
#include <vector>
__global__ void resident(unsigned* counters, const unsigned* next, unsigned* sink, unsigned iters) {
    unsigned lid = threadIdx.x;
    if (lid == 0) {
        unsigned live = atomicAdd(&counters[0], 1u) + 1u;
        atomicMax(&counters[1], live);
    }
    unsigned x = (blockIdx.x * blockDim.x + lid) & 1048575u;
    for (unsigned k = 0; k < iters; k++) x = next[x];
    sink[blockIdx.x * blockDim.x + lid] = x;
    __syncthreads();
    if (lid == 0) atomicSub(&counters[0], 1u);
}
int main() {
    int sms; cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    unsigned n = 1u << 20;
    std::vector<unsigned> h(n);
    for (unsigned i = 0; i < n; i++) h[i] = (i * 1664525u + 1013904223u) & (n - 1);
    unsigned *next, *sink, *counters;
    cudaMalloc(&next, n * 4); cudaMemcpy(next, h.data(), n * 4, cudaMemcpyHostToDevice);
    unsigned groups = sms * 48;
    cudaMalloc(&sink, (size_t)groups * 1024 * 4); cudaMalloc(&counters, 8);
    for (unsigned wg : {64u, 128u, 256u, 512u, 1024u}) for (unsigned iters : {400u, 40u}) {
        cudaMemset(counters, 0, 8);
        resident<<<groups, wg>>>(counters, next, sink, iters);
        unsigned c[2]; cudaMemcpy(c, counters, 8, cudaMemcpyDeviceToHost);
        int occ; cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, resident, wg, 0);
        printf("cuda wg=%u iters=%u groups=%u live_after=%u peak=%u per_sm=%.2f invocations_per_sm=%.0f occupancy_api=%d err=%s\n",
               wg, iters, groups, c[0], c[1], c[1] / double(sms), c[1] * double(wg) / sms, occ, cudaGetErrorString(cudaGetLastError()));
    }
}
