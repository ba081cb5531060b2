// #include "common/dispatch.wgsl"
// #include "common/amr_tree.wgsl"

// The smoothed flags, f_i = a_i - level_i from amr_smooth's `after`, stored for the phases after
// it; which slots start a coarsening cluster, which refine, what each cluster frees and which edges
// the refinement splits, for one exclusive scan over the four parts (five in order) (a thread per
// slot up to the capacity NE, zeros past the active slots, and the edge ids in use at a stride
// of the launch's threads, at most 2 NE (GpuAdaptation sizes it): most of the edge capacity is
// room to refine, with no thread of its own):
//   marks[i] = 1 where slot i holds the first child of a cluster flagged -1,
//   marks[NE + i] = 1 where slot i is flagged +1,
//   marks[2 NE + i] = the split edges of the cluster's parent whose halves are freed, and
//      work[i] the mask of their sides (AdaptiveMesh::coarsen in src/solver/dg/amr/tree.rs):
//      per side, the halves are freed unless the element across is still refined when the
//      cluster runs in the reference's order, i.e. refined and not a cluster of a smaller slot;
//   marks[3 NE + i] = 1, with the compaction in order (IN_ORDER = 1; Compaction::InOrder in
//      src/solver/dg/amr/tree.rs), where slot i holds a child of a coarsening cluster other
//      than its first: the slot the cluster vacates (its parent takes the first child's), so
//      that the scan gives every slot the number of new elements before it (amr_refine);
//   marks[E0 + e] = 1 where edge e is split (AdaptiveMesh::split_edge, edges in id order):
//      a live edge with an element flagged +1 on a side that is a leaf once the coarsening
//      has run, and split_sides[e] = which sides refine (bit 0 side 0, bit 1 side 1), NONE for
//      an edge that is not split. An edge with halves becomes a leaf when the cluster across
//      from the refining side coarsens (its halves are freed then: the refining side is a
//      leaf, so not refined), which the smoothed flags tell here, before amr_coarsen runs.
// (E0 = 3 NE, or 4 NE in order: edge_part.) The scan numbers the clusters, the refined elements and
// the split edges in the CPU reference's order (AdaptiveMesh::adapt) and places each cluster's
// freed split blocks in their ring; amr_refine gives split edge number j its halves from the side
// that writes them (side 0 when it refines, else side 1: split_sides tells each refining element
// whether it is that side and whether the other side refines too, without reading what the
// refinement rewrites). Nothing in the trees changes here (a smoothing that asks for more room than
// there is leaves them as they were): amr_coarsen takes the halves of the kept sides from the
// parent's edges.

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
@group(0) @binding(9) var<storage, read> edge_tree: array<vec4<u32>>;
@group(0) @binding(10) var<storage, read_write> split_sides: array<u32>;
@group(1) @binding(0) var<uniform> range: ItemRange;
// 1 with the compaction in order (the fourth part of slots).
override IN_ORDER: u32 = 0u;
@group(2) @binding(0) var<uniform> params: AmrParams;

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

// Whether the active element `element` refines (its smoothed flag is +1).
fn refines(element: u32) -> bool {
    if (element == NONE) {
        return false;
    }
    let own = element_tree[element];
    return own.w != NONE && smoothed_flag(own.w, own) > 0;
}

// Whether the element `element` (not a leaf) has children that coarsen: its first child is
// active and starts a cluster.
fn children_coarsen(element: u32) -> bool {
    if (element == NONE) {
        return false;
    }
    let first = element_tree[element].z;
    if (first == NONE) {
        return false;
    }
    let pos = element_tree[first].w;
    return pos != NONE && starts_cluster(pos);
}

// The sides of edge e that refine when e is split, 0 when it is not (the split marks above).
fn split_sides_of(e: u32) -> u32 {
    let t = edge_tree[e];
    if ((t.x & EDGE_ALIVE) == 0u) {
        return 0u;
    }
    let left = edge_sides[2u * e].x;
    let right = edge_sides[2u * e + 1u].x;
    let sides = select(0u, 1u, refines(left)) | select(0u, 2u, refines(right));
    if (sides == 0u || t.z == NONE) {
        return sides;
    }
    // Halves: only one side is a leaf, the one that refines; they go when the other's
    // children coarsen.
    let other = select(left, right, sides == 1u);
    return select(0u, sides, children_coarsen(other));
}

@compute @workgroup_size(WIDE_WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = wide_linear_index(gid, nwg);
    if (i >= range.count) {
        return;
    }
    if (i < range.capacity) {
        var refined = false;
        var vacated = false;
        if (i < counters[C_ACTIVE]) {
            let f = smoothed_flag(i, element_tree[slots[i]]);
            flags[i] = f;
            refined = f > 0;
            vacated = f < 0;
        }
        let cluster = starts_cluster(i);
        var mask = 0u;
        if (cluster) {
            mask = freed_sides(i);
        }
        marks[i] = select(0u, 1u, cluster);
        marks[range.capacity + i] = select(0u, 1u, refined);
        marks[2u * range.capacity + i] = countOneBits(mask);
        work[i] = mask;
        if (IN_ORDER != 0u) {
            marks[3u * range.capacity + i] = select(0u, 1u, vacated && !cluster);
        }
    }
    // The edge ids in use at a stride of the launch's threads (range.count, at least NE); the
    // marks past them stay 0 (amr_scan 0 skips their blocks).
    let edge_ids = counters[C_EDGE_IDS];
    for (var e = i; e < edge_ids; e = e + range.count) {
        let sides = split_sides_of(e);
        marks[edge_part(range.capacity, IN_ORDER) + e] = select(0u, 1u, sides != 0u);
        split_sides[e] = select(NONE, sides, sides != 0u);
    }
}
