// Probe: how long a block of the row copy (and of naive_col) lives, and how far apart its warps end,
// by block shape (SM clock, one block in 8 sampled). Row copy: dst[iy*n+ix] = src[iy*n+ix];
// naive_col: dst[iy*n+ix] = src[ix*n+iy] (reads a column, writes a row).
#include <cstdio>
#include <vector>
#include <algorithm>
__device__ __forceinline__ long long clk() { long long c; asm volatile("mov.u64 %0, %%clock64;" : "=l"(c)); return c; }
template <bool COL>
__global__ void copy(const float* __restrict__ src, float* __restrict__ dst, unsigned n, long long* t) {
    long long t0 = clk();
    unsigned ix = blockIdx.x * blockDim.x + threadIdx.x, iy = blockIdx.y * blockDim.y + threadIdx.y;
    float v = COL ? src[ix * n + iy] : src[iy * n + ix];
    dst[iy * n + ix] = v;
    // The value's use (the store) has issued: the load is back.
    long long t1 = clk();
    unsigned block = blockIdx.y * gridDim.x + blockIdx.x;
    unsigned lane = (threadIdx.y * blockDim.x + threadIdx.x) & 31, warp = (threadIdx.y * blockDim.x + threadIdx.x) >> 5;
    if ((block & 7) == 0 && lane == 0) {
        unsigned w = (block >> 3) * 32 + warp;
        t[2 * w] = t0;
        t[2 * w + 1] = t1;
    }
}
int main() {
    unsigned n = 8192; size_t bytes = (size_t)n * n * 4;
    float *a, *b; cudaMalloc(&a, bytes); cudaMalloc(&b, bytes); cudaMemset(a, 1, bytes);
    int shapes[][2] = {{32,32},{64,16},{128,8},{256,4},{1024,1},{32,16},{64,8},{512,1}};
    size_t slots = (size_t)n * n / 512 / 8 * 64 + 64;
    long long* t; cudaMalloc(&t, slots * 8);
    std::vector<long long> h(slots);
    cudaEvent_t s, e; cudaEventCreate(&s); cudaEventCreate(&e);
    for (int col = 0; col < 2; col++) for (auto& sh : shapes) {
        dim3 block(sh[0], sh[1]), grid(n / sh[0], n / sh[1]);
        unsigned warps = sh[0] * sh[1] / 32, blocks = grid.x * grid.y;
        for (int r = 0; r < 3; r++) {
            cudaMemset(t, 0, slots * 8);
            cudaEventRecord(s);
            if (col) copy<true><<<grid, block>>>(a, b, n, t); else copy<false><<<grid, block>>>(a, b, n, t);
            cudaEventRecord(e); cudaEventSynchronize(e);
            float ms; cudaEventElapsedTime(&ms, s, e);
            if (r < 2) continue;
            cudaMemcpy(h.data(), t, slots * 8, cudaMemcpyDeviceToHost);
            double life = 0, spread = 0, warp_time = 0, start_spread = 0; unsigned nb = 0;
            for (unsigned bi = 0; bi < blocks; bi += 8) {
                long long smin = 1LL << 62, smax = 0, emin = 1LL << 62, emax = 0; double wt = 0;
                for (unsigned w = 0; w < warps; w++) {
                    long long t0 = h[2 * ((bi >> 3) * 32 + w)], t1 = h[2 * ((bi >> 3) * 32 + w) + 1];
                    smin = std::min(smin, t0); smax = std::max(smax, t0); emin = std::min(emin, t1); emax = std::max(emax, t1);
                    wt += double(t1 - t0);
                }
                life += double(emax - smin); spread += double(emax - emin); start_spread += double(smax - smin); warp_time += wt / warps; nb++;
            }
            printf("%s %4dx%-4d %7.1f us %6.0f GB/s | block life %6.0f clk, warp start spread %5.0f, warp end spread %5.0f, warp load-to-store %5.0f clk (%u blocks)\n",
                   col ? "naive_col" : "copy_row ", sh[0], sh[1], ms * 1000, 2.0 * bytes / (ms * 1e6),
                   life / nb, start_spread / nb, spread / nb, warp_time / nb, nb);
        }
    }
}
