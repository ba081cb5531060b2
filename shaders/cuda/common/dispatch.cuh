// CUDA twin of shaders/common/dispatch.wgsl, shared by every per-item kernel: the thread index
// of a 1D launch spread over a 2D grid of blocks (the host launches the same grids as wgpu), the
// ItemRange every kernel takes as its last parameter (by value instead of a uniform), and the
// small float2/float4 arithmetic WGSL has built in.

#define WORKGROUP_SIZE 64u

typedef unsigned int u32;

/// The range of items (edges of one color, or all cells) a launch works on: items
/// first .. first + count. Passed by value per color (mirrors ItemRange in src/gpu/dispatch.rs).
struct ItemRange {
    u32 first;
    u32 count;
    u32 color;
    u32 pad;
};

/// The element capacity of the solver's buffers, the stride of its per-element arrays
/// (WGSL: range.capacity): set by the host once in each module it loads, a module per capacity
/// from one compile (CudaDevice::module), so a kernel compiles once whatever the mesh's size.
/// Buffers that never grow may have it compiled in instead (-DNE, FIXED_CAPACITY_CONSTANT in
/// src/runtime: faster for some DG kernels, slower for others).
#ifndef NE
__constant__ u32 NE;
#endif

/// The first statement of every kernel. On sm_90 and later the host launches each kernel with
/// programmatic stream serialization, so a kernel's blocks may be scheduled as the kernel before
/// it in the stream drains: every thread waits here (griddepcontrol.wait) until the kernels
/// before it have finished and their writes are visible. Launches still take effect in order;
/// only the next launch's latency overlaps the previous kernel's tail. Before sm_90, and for a
/// launch without the attribute, the wait returns at once.
__device__ __forceinline__ void await_previous_launches() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

/// WGSL: gid.x + gid.y * nwg.x * WORKGROUP_SIZE with gid the global invocation id.
__device__ __forceinline__ u32 linear_index() {
    return (blockIdx.x * WORKGROUP_SIZE + threadIdx.x) + blockIdx.y * gridDim.x * WORKGROUP_SIZE;
}

/// Threads per block of the per-item kernels whose threads mostly return at once
/// (WIDE_WORKGROUP_SIZE in common/dispatch.wgsl; the runtime launches such a kernel in blocks
/// as wide as its WGSL twin declares).
#define WIDE_WORKGROUP_SIZE 256u

/// WGSL: gid.x + gid.y * nwg.x * WIDE_WORKGROUP_SIZE.
__device__ __forceinline__ u32 wide_linear_index() {
    return (blockIdx.x * WIDE_WORKGROUP_SIZE + threadIdx.x) +
           blockIdx.y * gridDim.x * WIDE_WORKGROUP_SIZE;
}

/// Items per block of the runtime's exclusive scan (SCAN_BLOCK in src/runtime/scan.rs):
/// scan_blocks scans blocks of this many, and scan_add or a kernel consuming the scan adds
/// block_offsets[i / SCAN_BLOCK] to item i.
#define SCAN_BLOCK 1024u

/// Words of a device launch record, [first, count, groups x, groups y, groups z, 0, 0, 0]
/// (LAUNCH_WORDS in src/runtime): a launch whose range.count is DEVICE_COUNT takes its first item
/// and count from the record at word range.first of its launch-words buffer. CUDA cannot take
/// the grid from device memory: the host launches an upper bound and threads past count return.
#define LAUNCH_WORDS 8u
#define DEVICE_COUNT 0xffffffffu
/// Workgroups per grid dimension a record asks for at most (WebGPU's guaranteed limit).
#define MAX_GROUPS_PER_DIM 65535u

/// The workgroup grid of a record for `threads` threads (at least one workgroup): x up to
/// MAX_GROUPS_PER_DIM, then rows, as the host's grid_for; linear_index undoes it.
__device__ __forceinline__ uint3 launch_grid(u32 threads) {
    u32 groups = max((threads + WORKGROUP_SIZE - 1u) / WORKGROUP_SIZE, 1u);
    u32 x = min(groups, MAX_GROUPS_PER_DIM);
    return make_uint3(x, (groups + x - 1u) / x, 1u);
}

__device__ __forceinline__ float4 operator+(float4 a, float4 b) {
    return make_float4(a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w);
}
__device__ __forceinline__ float4 operator-(float4 a, float4 b) {
    return make_float4(a.x - b.x, a.y - b.y, a.z - b.z, a.w - b.w);
}
__device__ __forceinline__ float4 operator*(float s, float4 a) {
    return make_float4(s * a.x, s * a.y, s * a.z, s * a.w);
}
__device__ __forceinline__ float4 operator/(float4 a, float s) {
    return make_float4(a.x / s, a.y / s, a.z / s, a.w / s);
}
__device__ __forceinline__ float2 operator+(float2 a, float2 b) {
    return make_float2(a.x + b.x, a.y + b.y);
}
__device__ __forceinline__ float2 operator-(float2 a, float2 b) {
    return make_float2(a.x - b.x, a.y - b.y);
}
__device__ __forceinline__ float2 operator*(float2 a, float2 b) {
    return make_float2(a.x * b.x, a.y * b.y);
}
__device__ __forceinline__ float2 operator/(float2 a, float2 b) {
    return make_float2(a.x / b.x, a.y / b.y);
}
__device__ __forceinline__ float2 operator*(float s, float2 a) {
    return make_float2(s * a.x, s * a.y);
}

/// Component k of a vector, as WGSL's v[k] (read and write).
__device__ __forceinline__ float& at(float2& v, int k) {
    return k == 0 ? v.x : v.y;
}
__device__ __forceinline__ float& at(float4& v, int k) {
    return k == 0 ? v.x : (k == 1 ? v.y : (k == 2 ? v.z : v.w));
}

/// WGSL sign(): -1, 0 or 1.
__device__ __forceinline__ float sign(float x) {
    return x > 0.0f ? 1.0f : (x < 0.0f ? -1.0f : 0.0f);
}
