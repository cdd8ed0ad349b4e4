// p45: is a cold reduction slower because the flush left dirty lines in the L2?
// Times one reduction (CUDA events) after: nothing (warm), a memset flush, a read-only
// flush, a memset then a read-only flush, a memset then a ~200 us spin.
#include <cstdio>
#include <vector>
#include <algorithm>
__global__ void reduce(const float4* in, size_t n4, float* partial) {
  float s = 0.f;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n4; i += (size_t)gridDim.x * blockDim.x) {
    float4 v = in[i]; s += v.x + v.y + v.z + v.w;
  }
  for (int o = 16; o; o >>= 1) s += __shfl_down_sync(~0u, s, o);
  __shared__ float w[32];
  if ((threadIdx.x & 31) == 0) w[threadIdx.x >> 5] = s;
  __syncthreads();
  if (threadIdx.x < 32) { s = threadIdx.x < blockDim.x / 32 ? w[threadIdx.x] : 0.f;
    for (int o = 16; o; o >>= 1) s += __shfl_down_sync(~0u, s, o);
    if (threadIdx.x == 0) partial[blockIdx.x] = s; }
}
__global__ void readflush(const uint4* in, size_t n4, unsigned* sink) {
  unsigned s = 0;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n4; i += (size_t)gridDim.x * blockDim.x) {
    uint4 v = in[i]; s ^= v.x ^ v.y ^ v.z ^ v.w; }
  if (s == 0x12345678u) *sink = s;
}
__global__ void spin(long long cycles) { long long t = clock64(); while (clock64() - t < cycles) {} }
int main(int argc, char** argv) {
  const size_t flush_bytes = 256ull << 20;
  float* in; unsigned* fl; float* partial; unsigned* sink;
  cudaMalloc(&in, 256ull << 20); cudaMalloc(&fl, flush_bytes); cudaMalloc(&partial, 1 << 20); cudaMalloc(&sink, 4);
  std::vector<float> h((256ull << 20) / 4); for (size_t i = 0; i < h.size(); i++) h[i] = (i % 7) * 0.25f;
  cudaMemcpy(in, h.data(), 256ull << 20, cudaMemcpyHostToDevice);
  cudaMemset(fl, 1, flush_bytes);
  int sms; cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  const char* modes[] = {"warm", "memset", "readflush", "memset+readflush", "memset+spin200us"};
  printf("mib,mode,median_us,min_us\n");
  for (size_t mib : {16, 64, 256}) {
    size_t n4 = (mib << 20) / 16; int blocks = sms * 8;
    for (int m = 0; m < 5; m++) {
      std::vector<float> t;
      for (int r = 0; r < 31; r++) {
        if (m == 0) reduce<<<blocks, 256>>>((float4*)in, n4, partial);
        if (m == 1 || m == 3 || m == 4) cudaMemsetAsync(fl, r, flush_bytes);
        if (m == 2 || m == 3) readflush<<<sms * 8, 256>>>((uint4*)fl, flush_bytes / 16, sink);
        if (m == 4) spin<<<1, 1>>>(400000);
        cudaEventRecord(a); reduce<<<blocks, 256>>>((float4*)in, n4, partial); cudaEventRecord(b);
        cudaEventSynchronize(b); float ms; cudaEventElapsedTime(&ms, a, b); if (r) t.push_back(ms * 1e3f);
      }
      std::sort(t.begin(), t.end());
      printf("%zu,%s,%.2f,%.2f\n", mib, modes[m], t[t.size() / 2], t[0]);
    }
  }
  printf("err,%s\n", cudaGetErrorString(cudaGetLastError()));
}
