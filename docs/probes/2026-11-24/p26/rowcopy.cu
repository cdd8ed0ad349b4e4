// Probe: the row copy of transpose_naive (READ_ROWS, WRITE_ROWS) in blocks W x H, 8192^2 floats; times by events.
#include <cstdio>
__global__ void copy_row(const float* __restrict__ src, float* __restrict__ dst, unsigned nx, unsigned ny) {
    unsigned ix = blockIdx.x * blockDim.x + threadIdx.x, iy = blockIdx.y * blockDim.y + threadIdx.y;
    if (ix < nx && iy < ny) dst[iy * nx + ix] = src[iy * nx + ix];
}
int main(int argc, char** argv) {
    unsigned n = 8192; size_t bytes = (size_t)n * n * 4;
    float *a, *b; cudaMalloc(&a, bytes); cudaMalloc(&b, bytes); cudaMemset(a, 1, bytes);
    int shapes[][2] = {{32,32},{64,16},{128,8},{256,4},{1024,1}};
    int reps = argc > 1 ? atoi(argv[1]) : 20;
    cudaEvent_t s, e; cudaEventCreate(&s); cudaEventCreate(&e);
    for (auto& sh : shapes) {
        dim3 block(sh[0], sh[1]), grid(n / sh[0], n / sh[1]);
        copy_row<<<grid, block>>>(a, b, n, n);
        cudaEventRecord(s);
        for (int r = 0; r < reps; r++) copy_row<<<grid, block>>>(a, b, n, n);
        cudaEventRecord(e); cudaEventSynchronize(e);
        float ms; cudaEventElapsedTime(&ms, s, e);
        printf("block %dx%d: %.1f us, %.0f GB/s\n", sh[0], sh[1], ms * 1000 / reps, 2.0 * bytes / (ms / reps * 1e6));
    }
}
