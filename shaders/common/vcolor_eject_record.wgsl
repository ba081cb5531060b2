// The launch record of an ejection round's launches, shared by vcolor_eject_count (after every
// launched round) and vcolor_eject_tail (when it hands the list back). The including kernel
// binds `record`.

/// record = [0, count, launch_grid(count)]: the next round's three launches dispatch exactly
/// the list's workgroups, none once the list is empty.
fn write_defect_record(count: u32) {
    let grid = select(launch_grid(count), vec3<u32>(0u, 0u, 0u), count == 0u);
    record[0] = 0u;
    record[1] = count;
    record[2] = grid.x;
    record[3] = grid.y;
    record[4] = grid.z;
}
