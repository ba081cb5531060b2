// #include "common/dispatch.cuh"

// CUDA twin of shaders/vcolor_eject_count.wgsl. Color reduction, after an ejection attempt's
// start and after each round (one thread): the length of the defect list just filled becomes
// the launch record of the next round's launches ([0, count, launch_grid(count)], no
// workgroups for an empty list; CUDA launches the host's bound and the grid-stride loops stop
// at the list's length) and entry range.first of the submit's defect log; the other list's
// length is zeroed for the next round's step 3.

extern "C" __global__ void vcolor_eject_count(
    const u32* __restrict__ filled_count,
    u32* __restrict__ emptied_count,
    u32* __restrict__ record,
    u32* __restrict__ defect_log,
    ItemRange range) {
    if (linear_index() != 0u) {
        return;
    }
    u32 count = filled_count[0];
    // No workgroups once the list is empty (wgpu dispatches nothing; CUDA's launches return).
    uint3 grid = count == 0u ? make_uint3(0u, 0u, 0u) : launch_grid(count);
    record[0] = 0u;
    record[1] = count;
    record[2] = grid.x;
    record[3] = grid.y;
    record[4] = grid.z;
    emptied_count[0] = 0u;
    defect_log[range.first] = count;
}
