// #include "common/dispatch.wgsl"
// #include "common/amr_tree.wgsl"
// #include "common/scan_fused.wgsl"
// #include "common/scan_numbers.wgsl"

// Which slots start a coarsening cluster, which refine, and what each cluster frees, one thread
// per slot up to the capacity (zeros past the active slots), and their exclusive scan over the
// three parts fused into this launch (common/scan_fused.wgsl); the marks are scan_in:
//   marks[i] = 1 where slot i holds the first child of a cluster flagged -1,
//   marks[NE + i] = 1 where slot i is flagged +1,
//   marks[2 NE + i] = the split edges of the cluster's parent whose halves are freed, and
//      work[i] the mask of their sides (AdaptiveMesh::coarsen in src/solver/dg/amr/tree.rs):
//      per side, the halves are freed unless the element across is still refined when the
//      cluster runs in the reference's order, i.e. refined and not a cluster of a smaller slot.
// The scan numbers the clusters and the refined elements in slot order (the CPU reference's
// order in AdaptiveMesh::adapt) and places each cluster's freed split blocks in their ring;
// its last workgroup counts the clusters, refined elements and freed split blocks from the
// parts' first numbers and the total, hands the smoothing's top (amr_smooth) to C_TOP_LEVEL for
// the host, and copies the solver's clock past the counters (C_CLOCK), all read back together.
// Nothing in the trees changes here (a smoothing that asks for more room than there is leaves
// them as they were): amr_coarsen takes the halves of the kept sides from the parent's edges.

override NE: u32 = 1u;

@group(0) @binding(0) var<storage, read> slots: array<u32>;
@group(0) @binding(1) var<storage, read> element_tree: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read> flags: array<i32>;
// The marks, NE per part.
@group(0) @binding(3) var<storage, read_write> scan_in: array<u32>;
@group(0) @binding(4) var<storage, read_write> counters: array<u32>;
@group(0) @binding(5) var<storage, read> element_edges: array<vec4<u32>>;
@group(0) @binding(6) var<storage, read> edge_sides: array<vec2<u32>>;
@group(0) @binding(7) var<storage, read_write> work: array<u32>;
@group(0) @binding(8) var<storage, read_write> scan_out: array<u32>;
@group(0) @binding(9) var<storage, read_write> scan_blocks_prefix: array<atomic<u32>>;
@group(0) @binding(10) var<storage, read_write> scan_state: array<atomic<u32>>;
// The DG solver's clock (GpuDg::clock_buffer), its f32 bits.
@group(0) @binding(11) var<storage, read> clock: array<u32>;
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

// The scan's bookkeeping (its last workgroup, every other one has counted its marks).
fn scan_done(lid: u32) {
    if (lid != 0u) {
        return;
    }
    let clusters = scan_part_start(1u);
    let marked = scan_part_start(2u);
    counters[C_CLUSTERS] = clusters;
    counters[C_REFINES] = marked - clusters;
    counters[C_SPLIT_FREES] = scan_total() - marked;
    counters[C_TOP_LEVEL] = counters[C_SMOOTH_TOP];
    counters[C_SMOOTH_TOP] = 0u;
    for (var k = 0u; k < CLOCK_WORDS; k = k + 1u) {
        counters[C_CLOCK + k] = clock[k];
    }
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(
    @builtin(local_invocation_id) lid: vec3<u32>,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
) {
    // range.count = NE threads, the length of each part.
    let group = wid.x + wid.y * nwg.x;
    if (group >= scan_blocks_per_part(NE)) {
        return;
    }
    let i = group * WORKGROUP_SIZE + lid.x;
    if (i < NE) {
        let cluster = starts_cluster(i);
        var mask = 0u;
        if (cluster) {
            mask = freed_sides(i);
        }
        scan_in[i] = select(0u, 1u, cluster);
        scan_in[NE + i] = select(0u, 1u, i < counters[C_ACTIVE] && flags[i] > 0);
        scan_in[2u * NE + i] = countOneBits(mask);
        work[i] = mask;
    }
    fused_scan(lid.x, group, 3u, NE);
}
