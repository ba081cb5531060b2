// #include "common/dispatch.cuh"

// CUDA twin of shaders/vcolor_eject_start.wgsl. Color reduction, start of an ejection attempt
// on the top color k = range.color: its vertices become uncolored (0, flagged in `defect`) and
// every tabu color is cleared. The host saved the colors first and restores them if the attempt
// fails.

extern "C" __global__ void vcolor_eject_start(
    u32* __restrict__ colors,
    u32* __restrict__ tabu,
    u32* __restrict__ defect,
    ItemRange range) {
    u32 v = linear_index();
    if (v >= range.count) {
        return;
    }
    tabu[v] = 0u;
    bool top = colors[v] == range.color;
    if (top) {
        colors[v] = 0u;
    }
    defect[v] = top ? 1u : 0u;
}
