// #include "common/dispatch.cuh"

// CUDA twin of shaders/stream_copy.wgsl. Streaming copy dst[i] = src[i] of float4, one thread
// per element: the yardstick the benchmarks' effective bandwidths are compared with, and the
// copy of a small read-back queued ahead into mapped host memory (CudaDevice::read_ahead).

extern "C" __global__ void stream_copy(
    const float4* __restrict__ src,
    float4* __restrict__ dst,
    ItemRange range) {
    await_previous_launches();
    u32 i = linear_index();
    if (i >= range.count) {
        return;
    }
    dst[range.first + i] = src[range.first + i];
}
