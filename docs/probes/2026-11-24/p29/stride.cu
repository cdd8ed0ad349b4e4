// A row copy in 32x32 blocks over a matrix of width W floats: a block's 32 warps read
// 128 bytes each, 4W bytes apart (W = 32: 4 KiB contiguous, as one 1024x1 block).
// Where the time steps up with W is the granule at which a tall block's rows part.
#include <cstdio>
#include <vector>
#include <algorithm>
__global__ void tile(const float* __restrict__ src, float* __restrict__ dst, unsigned W) {
    unsigned tiles_x = W / 32;
    unsigned bx = blockIdx.x % tiles_x, by = blockIdx.x / tiles_x;
    size_t i = (size_t)(by * 32 + threadIdx.y) * W + bx * 32 + threadIdx.x;
    dst[i] = src[i];
}
__global__ void flat(const float* __restrict__ src, float* __restrict__ dst) {
    size_t i = (size_t)blockIdx.x * 1024 + threadIdx.x;
    dst[i] = src[i];
}
int main() {
    const size_t n = 8192ull * 8192;
    float *a, *b;
    cudaMalloc(&a, n * 4); cudaMalloc(&b, n * 4);
    std::vector<float> h(n); for (size_t i = 0; i < n; i++) h[i] = float(i % 1000003) + 1.0f;
    cudaMemcpy(a, h.data(), n * 4, cudaMemcpyHostToDevice);
    cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
    unsigned widths[] = {0, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192};
    for (int pass = 0; pass < 2; pass++)
    for (unsigned W : widths) {
        std::vector<float> ms;
        for (int r = 0; r < 25; r++) {
            cudaEventRecord(e0);
            if (W == 0) flat<<<n / 1024, 1024>>>(a, b);
            else tile<<<n / 1024, dim3(32, 32)>>>(a, b, W);
            cudaEventRecord(e1); cudaEventSynchronize(e1);
            float t; cudaEventElapsedTime(&t, e0, e1); if (r >= 5) ms.push_back(t);
        }
        std::sort(ms.begin(), ms.end());
        cudaMemset(b, 0, 4096);
        if (W == 0) flat<<<n / 1024, 1024>>>(a, b); else tile<<<n / 1024, dim3(32, 32)>>>(a, b, W);
        cudaMemcpy(h.data(), b, n * 4, cudaMemcpyDeviceToHost);
        bool ok = true; for (size_t i = 0; i < n; i += 4099) ok &= h[i] == float(i % 1000003) + 1.0f;
        ok &= h[0] == 1.0f && h[n - 1] == float((n - 1) % 1000003) + 1.0f;
        double med = ms[ms.size() / 2];
        printf("pass %d %s W=%5u  row pitch %6u B  %8.1f us  %7.1f GB/s  %s\n", pass,
               W ? "32x32 " : "1024x1", W, W * 4, med * 1e3, 2.0 * n * 4 / (med * 1e-3) / 1e9,
               ok ? "verified" : "FAILED");
    }
    cudaError_t err = cudaGetLastError();
    printf("cuda: %s\n", cudaGetErrorString(err));
}
