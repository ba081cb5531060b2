// What workgroups (blocks) that return at once cost a launch on the device (session 39,
// BENCHMARKS.md): the measurement behind trying, and dropping, adaptation kernels that stride
// their blocks over a grid capped at what the device holds (the launches sized for the buffers'
// capacity start blocks past the live slots). Not part of the build; on the GPU machine:
//   nvcc -O3 -arch=sm_90 -o empty_blocks benches/cuda/empty_blocks.cu
//   ./empty_blocks [live items, 129000] [capacity, 302000]
// A kernel with two dependent loads and a store per live item (threads past the item count,
// read from device memory, return at once), 20 launches in a CUDA graph, microseconds per launch
// (median of 100 graphs), for 64 and 256 threads per block, launched:
//   grid for n        : the blocks the live items need
//   grid for capacity : the blocks of the capacity (the live ones first, the rest return)
//   x5 capacity       : five times that (amr_refine's and amr_geometry's five threads per slot)
//   stride k/sm       : k blocks per multiprocessor looping over the live items
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { \
    printf("%s: %s\n", #x, cudaGetErrorString(e)); exit(1);} } while (0)

__global__ void chain(const unsigned* count, const unsigned* perm, const float* in, float* out) {
  unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned n = *count;
  if (t >= n) return;
  unsigned a = perm[t];
  unsigned b = perm[a];
  out[t] = in[b] * 2.0f + 1.0f;
}
__global__ void chain_stride(const unsigned* count, const unsigned* perm, const float* in,
                             float* out) {
  unsigned n = *count;
  for (unsigned t = blockIdx.x * blockDim.x + threadIdx.x; t < n; t += gridDim.x * blockDim.x) {
    unsigned a = perm[t];
    unsigned b = perm[a];
    out[t] = in[b] * 2.0f + 1.0f;
  }
}

static float time_graph(cudaStream_t s, int kind, unsigned blocks, unsigned threads,
                        unsigned* count, unsigned* perm, float* in, float* out) {
  const int K = 20, R = 100;
  cudaGraph_t g; cudaGraphExec_t ge;
  CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  for (int k = 0; k < K; k++) {
    if (kind == 0) chain<<<blocks, threads, 0, s>>>(count, perm, in, out);
    else chain_stride<<<blocks, threads, 0, s>>>(count, perm, in, out);
  }
  CK(cudaStreamEndCapture(s, &g));
  CK(cudaGraphInstantiate(&ge, g, 0));
  cudaEvent_t a, b; CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
  for (int w = 0; w < 5; w++) CK(cudaGraphLaunch(ge, s));
  std::vector<float> ms;
  for (int r = 0; r < R; r++) {
    CK(cudaEventRecord(a, s)); CK(cudaGraphLaunch(ge, s)); CK(cudaEventRecord(b, s));
    CK(cudaEventSynchronize(b)); float m; CK(cudaEventElapsedTime(&m, a, b)); ms.push_back(m);
  }
  std::sort(ms.begin(), ms.end());
  CK(cudaGraphExecDestroy(ge)); CK(cudaGraphDestroy(g));
  return 1000.0f * ms[R / 2] / K;
}

int main(int argc, char** argv) {
  unsigned n = argc > 1 ? atoi(argv[1]) : 129000;
  unsigned cap = argc > 2 ? atoi(argv[2]) : 302000;
  int sms; CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  unsigned *count, *perm; float *in, *out;
  CK(cudaMalloc(&count, 4)); CK(cudaMalloc(&perm, 4ull * cap));
  CK(cudaMalloc(&in, 4ull * cap)); CK(cudaMalloc(&out, 4ull * cap));
  std::vector<unsigned> p(cap);
  for (unsigned i = 0; i < cap; i++) p[i] = (unsigned)((i * 2654435761ull) % cap);
  CK(cudaMemcpy(perm, p.data(), 4ull * cap, cudaMemcpyHostToDevice));
  CK(cudaMemset(in, 0, 4ull * cap));
  CK(cudaMemcpy(count, &n, 4, cudaMemcpyHostToDevice));
  cudaStream_t s; CK(cudaStreamCreate(&s));
  printf("n %u capacity %u sms %d: us per launch, median of 100 graphs of 20\n", n, cap, sms);
  for (unsigned threads : {64u, 256u}) {
    unsigned exact = (n + threads - 1) / threads, full = (cap + threads - 1) / threads;
    printf("threads %3u  grid for n (%6u blocks) %6.2f  grid for capacity (%6u) %6.2f  "
           "x5 capacity (%6u) %6.2f",
           threads, exact, time_graph(s, 0, exact, threads, count, perm, in, out),
           full, time_graph(s, 0, full, threads, count, perm, in, out),
           5 * full, time_graph(s, 0, 5 * full, threads, count, perm, in, out));
    for (unsigned per_sm : {8u, 16u, 32u}) {
      unsigned g = sms * per_sm * 64 / threads;
      printf("  stride %u/sm (%u) %6.2f", per_sm * 64 / threads, g,
             time_graph(s, 1, g, threads, count, perm, in, out));
    }
    printf("\n");
  }
  return 0;
}
