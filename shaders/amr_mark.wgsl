// #include "common/dispatch.wgsl"
// #include "common/amr_tree.wgsl"

// The smoothed flags, f_i = a_i - level_i from amr_smooth's `after`, stored for the phases
// after it; which slots start a coarsening cluster, which refine, and what each cluster frees,
// one thread per slot up to the capacity (zeros past the active slots), for one exclusive scan
// over the three parts:
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
@group(0) @binding(2) var<storage, read_write> flags: array<i32>;
@group(0) @binding(3) var<storage, read_write> marks: array<u32>;
@group(0) @binding(4) var<storage, read> counters: array<u32>;
@group(0) @binding(5) var<storage, read> element_edges: array<vec4<u32>>;
@group(0) @binding(6) var<storage, read> edge_sides: array<vec2<u32>>;
@group(0) @binding(7) var<storage, read_write> work: array<u32>;
// Per slot: the level its element ends at (amr_smooth).
@group(0) @binding(8) var<storage, read> after: array<u32>;
@group(1) @binding(0) var<uniform> range: ItemRange;

// The smoothed flag of active slot pos (its element's record `own`).
fn smoothed_flag(pos: u32, own: vec4<u32>) -> i32 {
    return i32(after[pos]) - i32(own.x);
}

// Whether slot pos holds the first child of a coarsening cluster (smoothed flags: the whole
// cluster is flagged -1 when its first child is).
fn starts_cluster(pos: u32) -> bool {
    if (pos >= counters[C_ACTIVE]) {
        return false;
    }
    let id = slots[pos];
    let own = element_tree[id];
    let parent = own.y;
    return smoothed_flag(pos, own) < 0 && parent != NONE && element_tree[parent].z == id;
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
    var refines = false;
    if (i < counters[C_ACTIVE]) {
        let f = smoothed_flag(i, element_tree[slots[i]]);
        flags[i] = f;
        refines = f > 0;
    }
    let cluster = starts_cluster(i);
    var mask = 0u;
    if (cluster) {
        mask = freed_sides(i);
    }
    marks[i] = select(0u, 1u, cluster);
    marks[range.capacity + i] = select(0u, 1u, refines);
    marks[2u * range.capacity + i] = countOneBits(mask);
    work[i] = mask;
}
