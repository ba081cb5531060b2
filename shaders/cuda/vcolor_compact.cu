// #include "common/dispatch.cuh"

// CUDA twin of shaders/vcolor_compact.wgsl. Speculative greedy vertex coloring, recolor phase:
// flagged vertices lose their color and are scattered to the next worklist at their
// exclusive-prefix-sum position (no atomics). Thread 0 logs the round's conflict count at
// conflict_log[range.color].

extern "C" __global__ void vcolor_compact(
    const u32* __restrict__ worklist,
    const u32* __restrict__ conflict,
    const u32* __restrict__ position,
    u32* __restrict__ next_worklist,
    u32* __restrict__ colors,
    const u32* __restrict__ live_count,
    const u32* __restrict__ round_conflicts,
    u32* __restrict__ conflict_log,
    ItemRange range) {
    await_previous_launches();
    u32 i = linear_index();
    if (i == 0u) {
        conflict_log[range.color] = round_conflicts[0];
    }
    if (i >= min(range.count, live_count[0])) {
        return;
    }
    if (conflict[i] != 0u) {
        u32 v = worklist[i];
        colors[v] = 0u;
        next_worklist[position[i]] = v;
    }
}
