// What a small transfer between two CUDA graphs costs on the device's timeline (session 38,
// BENCHMARKS.md): the reason CudaDevice::read_ahead copies a small read-back with a kernel into
// mapped page-locked memory. Not part of the build; on the GPU machine:
//   nvcc -O3 -arch=sm_90 -o read_back_gap benches/cuda/read_back_gap.cu
//   ./read_back_gap [threads per kernel, 33000] [kernels in the batch, 40]
// Every kernel is launched as chromaflow launches them (programmatic stream serialization, each
// waiting for the one before), with two dependent loads and a store per thread. Per iteration:
// a batch graph of dependent kernels, then an "adaptation" of 8 + 5 kernels in one of these
// forms (the host waits for an event after the eighth kernel, as a run waits for its counts):
//   none           : the batch alone
//   split+copy     : graph of 8, a 256-byte copy-engine D2H into page-locked memory, graph of 5
//   one+branch     : one graph of 13 with that copy on a side branch (from a buffer kept apart)
//   split          : graph of 8, graph of 5, no transfer
//   one            : one graph of 13, no transfer
//   split+kcopy    : graph of 8, a one-block kernel copying 64 words into mapped page-locked
//                    memory, graph of 5
//   one+kcopy      : one graph of 13 with that kernel after the eighth
//   split+h2d-page : graph of 8, a 4-byte H2D from pageable memory, graph of 5
//   split+h2d-pin  : the same from page-locked memory
//   split+kwrite   : graph of 8, a kernel copying one word from mapped page-locked memory, graph
//                    of 5
// Prints microseconds per iteration (median of 7 rounds of 200) and that minus "none".
#include <cuda_runtime.h>
#include <cstdio>
#include <vector>
#include <algorithm>

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { \
    printf("%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e)); exit(1); } } while (0)

__global__ void tiny(unsigned* a, const unsigned* idx, unsigned n, unsigned salt) {
    asm volatile("griddepcontrol.wait;" ::: "memory");
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned j = idx[i];
    unsigned k = idx[j];
    a[i] = a[k] + salt;
}

__global__ void copy_words(const unsigned* src, unsigned* host, unsigned n) {
    asm volatile("griddepcontrol.wait;" ::: "memory");
    unsigned i = threadIdx.x;
    if (i < n) host[i] = src[i];
    __threadfence_system();
}

// `kernel` on `blocks` x `threads` with programmatic stream serialization.
template <typename... Params, typename... Args>
static void launch_overlapped(cudaStream_t s, unsigned blocks, unsigned threads,
                              void (*kernel)(Params...), Args... args) {
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(blocks);
    cfg.blockDim = dim3(threads);
    cfg.stream = s;
    cudaLaunchAttribute at[1];
    at[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    at[0].val.programmaticStreamSerializationAllowed = 1;
    cfg.attrs = at;
    cfg.numAttrs = 1;
    CK(cudaLaunchKernelEx(&cfg, kernel, args...));
}

static void launch_copy(cudaStream_t s, const unsigned* src, unsigned* host, unsigned n) {
    launch_overlapped(s, 1, 64, copy_words, src, host, n);
}

static void launch(cudaStream_t s, unsigned* a, const unsigned* idx, unsigned n, unsigned salt) {
    launch_overlapped(s, (n + 255) / 256, 256, tiny, a, idx, n, salt);
}

int main(int argc, char** argv) {
    unsigned n = argc > 1 ? atoi(argv[1]) : 33000;
    int steps = argc > 2 ? atoi(argv[2]) : 40;
    int iters = 200, rounds = 7;
    unsigned *a, *idx, *mirror;
    CK(cudaMalloc(&a, n * 4));
    CK(cudaMalloc(&idx, n * 4));
    CK(cudaMalloc(&mirror, 256));
    std::vector<unsigned> h(n);
    for (unsigned i = 0; i < n; i++) h[i] = (i * 2654435761u) % n;
    CK(cudaMemcpy(idx, h.data(), n * 4, cudaMemcpyHostToDevice));
    CK(cudaMemset(a, 0, n * 4));
    unsigned* pinned;
    CK(cudaMallocHost(&pinned, 256));
    unsigned *mapped, *mapped_dev;
    CK(cudaHostAlloc(&mapped, 256, cudaHostAllocMapped));
    CK(cudaHostGetDevicePointer(&mapped_dev, mapped, 0));
    cudaStream_t s, side;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CK(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking));
    cudaEvent_t copied, fork, join, t0, t1;
    CK(cudaEventCreateWithFlags(&copied, cudaEventDisableTiming));
    CK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
    CK(cudaEventCreateWithFlags(&join, cudaEventDisableTiming));
    CK(cudaEventCreate(&t0));
    CK(cudaEventCreate(&t1));

    auto capture = [&](int k0, int k1, bool branch, int mark) {
        cudaGraph_t g;
        cudaGraphExec_t x;
        CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
        for (int k = k0; k < k1; k++) {
            launch(s, a, idx, n, k);
            if (k == 7 && (branch || mark)) {
                if (branch) {
                    CK(cudaEventRecord(fork, s));
                    CK(cudaStreamWaitEvent(side, fork, 0));
                    CK(cudaMemcpyAsync(pinned, mirror, 256, cudaMemcpyDeviceToHost, side));
                    CK(cudaEventRecordWithFlags(copied, side, cudaEventRecordExternal));
                    CK(cudaEventRecord(join, side));
                } else {
                    if (mark == 2) launch_copy(s, a, mapped_dev, 64);
                    CK(cudaEventRecordWithFlags(copied, s, cudaEventRecordExternal));
                }
            }
        }
        if (branch) CK(cudaStreamWaitEvent(s, join, 0));
        CK(cudaStreamEndCapture(s, &g));
        CK(cudaGraphInstantiate(&x, g, 0));
        return x;
    };
    cudaGraphExec_t batch = capture(100, 100 + steps, false, 0);
    cudaGraphExec_t g8 = capture(0, 8, false, 0);
    cudaGraphExec_t g5 = capture(8, 13, false, 0);
    cudaGraphExec_t g13b = capture(0, 13, true, 0);
    cudaGraphExec_t g13m = capture(0, 13, false, 1);
    cudaGraphExec_t g13k = capture(0, 13, false, 2);
    const char* names[] = {"none", "split+copy", "one+branch", "split", "one", "split+kcopy",
                           "one+kcopy", "split+h2d-page", "split+h2d-pin", "split+kwrite"};
    const int NV = 10;
    unsigned word = 7;
    std::vector<float> res[NV];
    unsigned check = 0;
    for (int r = 0; r < rounds; r++) {
        for (int v = 0; v < NV; v++) {
            CK(cudaStreamSynchronize(s));
            CK(cudaEventRecord(t0, s));
            for (int it = 0; it < iters; it++) {
                CK(cudaGraphLaunch(batch, s));
                // Two graphs with `between` queued between them, the host waiting after it.
                auto split = [&](auto between) {
                    CK(cudaGraphLaunch(g8, s));
                    between();
                    CK(cudaEventRecord(copied, s));
                    CK(cudaGraphLaunch(g5, s));
                    CK(cudaEventSynchronize(copied));
                };
                // One graph, the host waiting on the event node after its eighth kernel.
                auto one = [&](cudaGraphExec_t g) {
                    CK(cudaGraphLaunch(g, s));
                    CK(cudaEventSynchronize(copied));
                };
                switch (v) {
                    case 0: break;
                    case 1:
                        split([&] {
                            CK(cudaMemcpyAsync(pinned, a, 256, cudaMemcpyDeviceToHost, s));
                        });
                        break;
                    case 2: one(g13b); break;
                    case 3: split([] {}); break;
                    case 4: one(g13m); break;
                    case 5:
                        split([&] { launch_copy(s, a, mapped_dev, 64); });
                        check += mapped[3];
                        break;
                    case 6:
                        one(g13k);
                        check += mapped[3];
                        break;
                    case 7:
                        split([&] {
                            CK(cudaMemcpyAsync(a + 5, &word, 4, cudaMemcpyHostToDevice, s));
                        });
                        break;
                    case 8:
                        pinned[0] = word;
                        split([&] {
                            CK(cudaMemcpyAsync(a + 5, pinned, 4, cudaMemcpyHostToDevice, s));
                        });
                        break;
                    case 9:
                        mapped[0] = word;
                        split([&] { launch_copy(s, mapped_dev, a + 4, 1); });
                        break;
                }
            }
            CK(cudaEventRecord(t1, s));
            CK(cudaEventSynchronize(t1));
            float ms;
            CK(cudaEventElapsedTime(&ms, t0, t1));
            res[v].push_back(ms * 1000.f / iters);
        }
    }
    float base = 0;
    for (int v = 0; v < NV; v++) {
        std::sort(res[v].begin(), res[v].end());
        float med = res[v][rounds / 2];
        if (v == 0) base = med;
        printf("n %u steps %d %-11s %8.2f us/iter  adaptation %7.2f  (min %.2f max %.2f)\n", n,
               steps, names[v], med, med - base, res[v][0], res[v][rounds - 1]);
    }
    printf("check %u\n", check);
    return 0;
}
