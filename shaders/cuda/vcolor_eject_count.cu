// #include "common/dispatch.cuh"
// #include "common/vcolor_eject_record.cuh"

// CUDA twin of shaders/vcolor_eject_count.wgsl. Color reduction, after an ejection attempt's
// start and after each launched round (one thread): the length of the defect list just filled
// becomes the launch record of the next round's launches (write_defect_record; CUDA launches
// the host's bound and the grid-stride loops stop at the list's length) and entry range.first
// of the submit's defect log; the other list's length is zeroed for the next round's step 3.

extern "C" __global__ void vcolor_eject_count(
    const u32* __restrict__ filled_count,
    u32* __restrict__ emptied_count,
    u32* __restrict__ record,
    u32* __restrict__ defect_log,
    ItemRange range) {
    await_previous_launches();
    if (linear_index() != 0u) {
        return;
    }
    u32 count = filled_count[0];
    write_defect_record(record, count);
    emptied_count[0] = 0u;
    defect_log[range.first] = count;
}
