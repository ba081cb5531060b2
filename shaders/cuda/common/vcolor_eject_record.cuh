// CUDA twin of shaders/common/vcolor_eject_record.wgsl: the launch record of an ejection
// round's launches, shared by vcolor_eject_count and vcolor_eject_tail.

/// record = [0, count, launch_grid(count)], no workgroups for an empty list (CUDA launches the
/// host's bound; the grid-stride loops stop at the list's length).
__device__ __forceinline__ void write_defect_record(u32* record, u32 count) {
    uint3 grid = count == 0u ? make_uint3(0u, 0u, 0u) : launch_grid(count);
    record[0] = 0u;
    record[1] = count;
    record[2] = grid.x;
    record[3] = grid.y;
    record[4] = grid.z;
}
