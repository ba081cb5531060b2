// #include "common/dispatch.wgsl"

// Iterated greedy (color reduction), step 3 of 4: every vertex v < range.count goes into the
// segment of its old color c in `order` (a counting sort: class_next[c - 1] starts at the
// segment's first slot). Ranks within colors up to LOCAL_CLASSES are taken in workgroup memory
// and each workgroup reserves one run per class with one global atomicAdd; larger colors take
// a slot each. The order inside a segment varies from run to run, which changes nothing: a
// class is an independent set, recolored in one launch whose result does not depend on the
// order of its vertices.

@group(0) @binding(0) var<storage, read> old_colors: array<u32>;
@group(0) @binding(1) var<storage, read_write> class_next: array<atomic<u32>>;
@group(0) @binding(2) var<storage, read_write> order: array<u32>;
@group(1) @binding(0) var<uniform> range: ItemRange;

const LOCAL_CLASSES: u32 = 64u;

var<workgroup> local_size: array<atomic<u32>, LOCAL_CLASSES>;
var<workgroup> local_first: array<u32, LOCAL_CLASSES>;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(local_invocation_id) lid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
) {
    atomicStore(&local_size[lid.x], 0u);
    workgroupBarrier();
    let v = linear_index(gid, nwg);
    var c = 0u;
    var rank = 0u;
    if (v < range.count) {
        c = old_colors[v];
        if (c != 0u && c <= LOCAL_CLASSES) {
            rank = atomicAdd(&local_size[c - 1u], 1u);
        }
    }
    workgroupBarrier();
    let s = atomicLoad(&local_size[lid.x]);
    if (s != 0u) {
        local_first[lid.x] = atomicAdd(&class_next[lid.x], s);
    }
    workgroupBarrier();
    if (c != 0u && c <= LOCAL_CLASSES) {
        order[local_first[c - 1u] + rank] = v;
    } else if (c != 0u) {
        order[atomicAdd(&class_next[c - 1u], 1u)] = v;
    }
}
