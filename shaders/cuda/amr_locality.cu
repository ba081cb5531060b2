// #include "common/dispatch.cuh"
// #include "common/amr_tree.cuh"
// #include "common/amr_reorder.cuh"

// CUDA twin of shaders/amr_locality.wgsl. The locality of the faces (reorder::far_faces, the
// exact CPU reference): the number of faces whose left and right slots differ by more than
// FAR_SLOTS, in counters[C_FAR_FACES]. A far face's right element sits outside what its
// launch's neighbouring threads read, so it costs the surface kernel its own memory sectors;
// the count, read with the next adaptation's counters, is what triggers a reorder. range.pad 0: one
// thread clears the count; 1: one thread per face adds its own (atomic adds of 1: the total
// does not depend on their order).

extern "C" __global__ void amr_locality(
    const u32* __restrict__ faces,
    u32* counters,
    ReorderParams params,
    ItemRange range) {
    await_previous_launches();
    u32 f = linear_index();
    if (f >= range.count) {
        return;
    }
    if (range.pad == 0u) {
        counters[C_FAR_FACES] = 0u;
        return;
    }
    if (f >= counters[C_COLOR_OFFSETS + params.colors]) {
        return;
    }
    u32 left = faces[8u * f];
    u32 right = faces[8u * f + 1u];
    if (right != NONE && max(left, right) - min(left, right) > FAR_SLOTS) {
        atomicAdd(&counters[C_FAR_FACES], 1u);
    }
}
