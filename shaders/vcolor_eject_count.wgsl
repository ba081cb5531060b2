// #include "common/dispatch.wgsl"
// #include "common/vcolor_eject_record.wgsl"

// Color reduction, after an ejection attempt's start and after each launched round (one
// thread): the length of the defect list just filled (filled_count[0]) becomes the launch
// record the next round's three launches are dispatched from (write_defect_record: their grid
// follows the defects on the device; no workgroups once none is left) and the entry
// range.first of the submit's defect log the host reads back once per submit. The other
// list's length is zeroed for the next round's step 3, which fills it.

@group(0) @binding(0) var<storage, read> filled_count: array<u32>;
@group(0) @binding(1) var<storage, read_write> emptied_count: array<u32>;
@group(0) @binding(2) var<storage, read_write> record: array<u32>;
@group(0) @binding(3) var<storage, read_write> defect_log: array<u32>;
@group(1) @binding(0) var<uniform> range: ItemRange;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    if (linear_index(gid, nwg) != 0u) {
        return;
    }
    let count = filled_count[0];
    write_defect_record(count);
    emptied_count[0] = 0u;
    defect_log[range.first] = count;
}
