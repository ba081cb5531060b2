// #include "common/dispatch.wgsl"
// #include "common/amr_tree.wgsl"

// Which edges the refinement splits, one thread per edge id (AdaptiveMesh::split_edge in
// src/solver/dg/amr/tree.rs, edges in id order): items[e] = 1 for a live leaf edge with an
// element flagged +1 on a side (scanned next, amr_scan 1, which numbers the split edges), and
// split_sides[e] = which sides refine (bit 0 side 0, bit 1 side 1), NONE for an edge that is
// not split. amr_refine then gives split edge number k the ring's k-th split block or new ids
// past the ring's length, from the refining side that writes its halves (side 0 when it
// refines, else side 1): split_sides tells each refining element whether it is that side and
// whether the other side refines too, without reading what the refinement rewrites.

@group(0) @binding(0) var<storage, read> element_tree: array<vec4<u32>>;
@group(0) @binding(1) var<storage, read> edge_tree: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read> edge_sides: array<vec2<u32>>;
@group(0) @binding(3) var<storage, read> flags: array<i32>;
@group(0) @binding(4) var<storage, read_write> items: array<u32>;
@group(0) @binding(5) var<storage, read> counters: array<u32>;
@group(0) @binding(6) var<storage, read_write> split_sides: array<u32>;
@group(1) @binding(0) var<uniform> range: ItemRange;

fn refines(element: u32) -> bool {
    if (element == NONE) {
        return false;
    }
    let pos = element_tree[element].w;
    return pos != NONE && flags[pos] > 0;
}

@compute @workgroup_size(WIDE_WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let e = wide_linear_index(gid, nwg);
    if (e >= range.count) {
        return;
    }
    // Nothing when amr_scan 0 decided that the adaptation does not run (the decision loaded
    // with the kernel's first loads, not before them).
    let runs = counters[C_DECISION] == ADAPT_RUNS;
    let edge_ids = counters[C_EDGE_IDS];
    if (!runs) {
        return;
    }
    // The record of an edge id in use only: the launch runs over the edge capacity.
    let live = e < edge_ids && (edge_tree[e].x & EDGE_ALIVE) != 0u;
    var sides = 0u;
    if (live && edge_tree[e].z == NONE) {
        sides = select(0u, 1u, refines(edge_sides[2u * e].x))
            | select(0u, 2u, refines(edge_sides[2u * e + 1u].x));
    }
    items[e] = select(0u, 1u, sides != 0u);
    split_sides[e] = select(NONE, sides, sides != 0u);
}
