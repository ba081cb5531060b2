// CUDA twin of shaders/common/vcolor_first_fit.wgsl: the first-fit color choice shared by
// vcolor_assign and vcolor_recolor. WGSL reads the kernel's bindings; here the kernel passes
// them in.

/// Smallest color >= 1 not held by a same-class neighbour of v (0 = uncolored neighbour).
/// Colors are searched in windows of 32 with a bit mask; the loop ends because once the window
/// passes the degree of v no neighbour color falls inside it. Colors of neighbours being
/// written by other threads are read with volatile loads (WGSL storage reads are not cached
/// across the launch either).
__device__ u32 smallest_free_color(
    u32 v,
    const u32* adjacency_offsets,
    const u32* adjacency,
    const u32* vertex_class,
    const volatile u32* colors) {
    u32 class_v = vertex_class[v];
    u32 begin = adjacency_offsets[v];
    u32 end = adjacency_offsets[v + 1u];
    u32 window = 0u;
    u32 chosen = 0u;
    for (;;) {
        u32 used = 0u;
        for (u32 j = begin; j < end; j = j + 1u) {
            u32 u = adjacency[j];
            if (vertex_class[u] == class_v) {
                u32 c = colors[u];
                if (c > window && c <= window + 32u) {
                    used = used | (1u << (c - window - 1u));
                }
            }
        }
        if (used != 0xffffffffu) {
            // countTrailingZeros(~used) + 1 = __ffs(~used) (1-based index of the lowest set bit).
            chosen = window + (u32)__ffs((int)~used);
            break;
        }
        window = window + 32u;
    }
    return chosen;
}
