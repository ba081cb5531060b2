// #include "common/dispatch.wgsl"
// #include "common/amr_tree.wgsl"

// Which slots start a coarsening cluster, which refine, and what each cluster frees, one thread
// per slot up to the capacity (zeros past the active slots), for one exclusive scan over the
// three parts:
//   marks[i] = 1 where slot i holds the first child of a cluster flagged -1,
//   marks[NE + i] = 1 where slot i is flagged +1,
//   marks[2 NE + i] = the split edges of the cluster's parent whose halves are freed, and
//      work[i] the mask of their sides (AdaptiveMesh::coarsen in src/solver/dg/amr/tree.rs):
//      per side, the halves are freed unless the element across is still refined when the
//      cluster runs in the reference's order, i.e. refined and not a cluster of a smaller slot.
// The scan numbers the clusters and the refined elements in slot order (the CPU reference's
// order in AdaptiveMesh::adapt) and places each cluster's freed split blocks in their ring.
// Nothing in the trees changes here (a smoothing that asks for more room than there is leaves
// them as they were): amr_coarsen takes the halves of the kept sides from the parent's edges.

@group(0) @binding(0) var<storage, read> slots: array<u32>;
@group(0) @binding(1) var<storage, read> element_tree: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read> flags: array<i32>;
@group(0) @binding(3) var<storage, read_write> marks: array<u32>;
@group(0) @binding(4) var<storage, read> counters: array<u32>;
@group(0) @binding(5) var<storage, read> element_edges: array<vec4<u32>>;
@group(0) @binding(6) var<storage, read> edge_sides: array<vec2<u32>>;
@group(0) @binding(7) var<storage, read_write> work: array<u32>;
@group(1) @binding(0) var<uniform> range: ItemRange;

// Whether slot pos holds the first child of a coarsening cluster (smoothed flags: the whole
// cluster is flagged -1 when its first child is).
fn starts_cluster(pos: u32) -> bool {
    if (pos >= counters[C_ACTIVE] || flags[pos] >= 0) {
        return false;
    }
    let id = slots[pos];
    let parent = element_tree[id].y;
    return parent != NONE && element_tree[parent].z == id;
}

// The sides of the parent of the cluster starting at slot i whose split edges are freed.
fn freed_sides(i: u32) -> u32 {
    let parent = element_tree[slots[i]].y;
    var mask = 0u;
    // #unroll
    for (var s = 0u; s < 3u; s = s + 1u) {
        let e = element_edges[parent][s];
        var side = 0u;
        if (edge_sides[2u * e].x != parent) {
            side = 1u;
        }
        let other = edge_sides[2u * e + 1u - side].x;
        var refined = false;
        if (other != NONE) {
            let first = element_tree[other].z;
            if (first != NONE) {
                let pos = element_tree[first].w;
                refined = !(pos != NONE && pos < i && starts_cluster(pos));
            }
        }
        if (!refined) {
            mask = mask | (1u << s);
        }
    }
    return mask;
}

@compute @workgroup_size(WIDE_WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = wide_linear_index(gid, nwg);
    if (i >= range.count) {
        return;
    }
    let cluster = starts_cluster(i);
    var mask = 0u;
    if (cluster) {
        mask = freed_sides(i);
    }
    marks[i] = select(0u, 1u, cluster);
    marks[range.capacity + i] = select(0u, 1u, i < counters[C_ACTIVE] && flags[i] > 0);
    marks[2u * range.capacity + i] = countOneBits(mask);
    work[i] = mask;
}
