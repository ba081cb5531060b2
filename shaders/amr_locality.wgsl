// #include "common/dispatch.wgsl"
// #include "common/amr_tree.wgsl"
// #include "common/amr_reorder.wgsl"

// The locality of the faces (reorder::far_faces, the exact CPU reference): the number of faces
// whose left and right slots differ by more than FAR_SLOTS, in counters[C_FAR_FACES]. A far
// face's right element sits outside what its launch's neighbouring threads read, so it costs
// the surface kernel its own memory sectors; the count, read with the next adaptation's counters,
// is what triggers a reorder. range.pad 0: one thread clears the count; 1: one thread per face
// adds its own (atomic adds of 1: the total does not depend on their order).

@group(0) @binding(0) var<storage, read> faces: array<u32>;
@group(0) @binding(1) var<storage, read_write> counters: array<atomic<u32>>;
@group(1) @binding(0) var<uniform> range: ItemRange;
@group(2) @binding(0) var<uniform> params: ReorderParams;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let f = linear_index(gid, nwg);
    if (f >= range.count) {
        return;
    }
    if (range.pad == 0u) {
        atomicStore(&counters[C_FAR_FACES], 0u);
        return;
    }
    if (f >= atomicLoad(&counters[C_COLOR_OFFSETS + params.colors])) {
        return;
    }
    let left = faces[8u * f];
    let right = faces[8u * f + 1u];
    if (right != NONE && max(left, right) - min(left, right) > FAR_SLOTS) {
        atomicAdd(&counters[C_FAR_FACES], 1u);
    }
}
