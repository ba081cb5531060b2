// #include "common/dispatch.wgsl"

// Color reduction, start of an ejection attempt on the top color k = range.color: its vertices
// become uncolored (0, "defects" the rounds must place in colors 1 .. k-1, flagged in
// `defect`) and every tabu color is cleared. The host saved the colors first and restores them
// if the attempt fails.

@group(0) @binding(0) var<storage, read_write> colors: array<u32>;
@group(0) @binding(1) var<storage, read_write> tabu: array<u32>;
@group(0) @binding(2) var<storage, read_write> defect: array<u32>;
@group(1) @binding(0) var<uniform> range: ItemRange;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let v = linear_index(gid, nwg);
    if (v >= range.count) {
        return;
    }
    tabu[v] = 0u;
    let top = colors[v] == range.color;
    if (top) {
        colors[v] = 0u;
    }
    defect[v] = select(0u, 1u, top);
}
