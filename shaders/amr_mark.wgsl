// #include "common/dispatch.wgsl"
// #include "common/amr_tree.wgsl"

// Which slots start a coarsening cluster and which refine, one thread per slot up to the
// capacity (zeros past the active slots), for one exclusive scan over both halves:
//   marks[i] = 1 where slot i holds the first child of a cluster flagged -1,
//   marks[NE + i] = 1 where slot i is flagged +1.
// The scan numbers the clusters and the refined elements in slot order (the CPU reference's
// order in AdaptiveMesh::adapt).

override NE: u32 = 1u;

@group(0) @binding(0) var<storage, read> slots: array<u32>;
@group(0) @binding(1) var<storage, read> element_tree: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read> flags: array<i32>;
@group(0) @binding(3) var<storage, read_write> marks: array<u32>;
@group(0) @binding(4) var<storage, read> counters: array<u32>;
@group(1) @binding(0) var<uniform> range: ItemRange;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = linear_index(gid, nwg);
    if (i >= range.count) {
        return;
    }
    var cluster = 0u;
    var refine = 0u;
    if (i < counters[C_ACTIVE]) {
        let id = slots[i];
        let parent = element_tree[id].y;
        if (flags[i] < 0 && parent != NONE && element_tree[parent].z == id) {
            cluster = 1u;
        }
        if (flags[i] > 0) {
            refine = 1u;
        }
    }
    marks[i] = cluster;
    marks[NE + i] = refine;
}
