// #include "common/dispatch.cuh"

// CUDA twin of shaders/vcolor_class_offsets.wgsl. Iterated greedy (color reduction), step 2 of
// 4, one block: class_first[c - 1] = sum of the class sizes of colors < c for c = 1 .. k
// (k = range.count) and class_first[k] = n; class_next starts at class_first; class_size and
// largest[0] are zeroed for what follows. Chunks of WORKGROUP_SIZE classes are scanned in
// shared memory (Hillis-Steele).

extern "C" __global__ void vcolor_class_offsets(
    u32* __restrict__ class_size,
    u32* __restrict__ class_first,
    u32* __restrict__ class_next,
    u32* __restrict__ largest,
    ItemRange range) {
    await_previous_launches();
    __shared__ u32 sums[WORKGROUP_SIZE];
    u32 lid = threadIdx.x;
    u32 carry = 0u;
    for (u32 base = 0u; base < range.count; base = base + WORKGROUP_SIZE) {
        u32 i = base + lid;
        u32 s = 0u;
        if (i < range.count) {
            s = class_size[i];
            class_size[i] = 0u;
        }
        sums[lid] = s;
        __syncthreads();
        for (u32 offset = 1u; offset < WORKGROUP_SIZE; offset = offset * 2u) {
            u32 add = 0u;
            if (lid >= offset) {
                add = sums[lid - offset];
            }
            __syncthreads();
            sums[lid] = sums[lid] + add;
            __syncthreads();
        }
        if (i < range.count) {
            u32 first = carry + sums[lid] - s;
            class_first[i] = first;
            class_next[i] = first;
        }
        carry = carry + sums[WORKGROUP_SIZE - 1u];
        __syncthreads();
    }
    if (lid == 0u) {
        class_first[range.count] = carry;
        largest[0] = 0u;
    }
}
