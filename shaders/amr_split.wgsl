// #include "common/dispatch.wgsl"
// #include "common/amr_tree.wgsl"

// Splitting the edges of the elements to refine, one thread per edge id
// (AdaptiveMesh::split_edge in src/solver/dg/amr/tree.rs, edges in id order). Phase range.pad:
//   0: items[e] = 1 for a live leaf edge with an element flagged +1 on a side (scanned next,
//      amr_scan 1);
//   1: edge e number k takes the ring's k-th split block, or new ids past the ring's length;
//      its halves get colors c and (c + K) mod 2K and no elements yet.

@group(0) @binding(0) var<storage, read> element_tree: array<vec4<u32>>;
@group(0) @binding(1) var<storage, read_write> edge_tree: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read_write> edge_sides: array<vec2<u32>>;
@group(0) @binding(3) var<storage, read> flags: array<i32>;
@group(0) @binding(4) var<storage, read_write> items: array<u32>;
@group(0) @binding(5) var<storage, read> items_scan: array<u32>;
@group(0) @binding(6) var<storage, read> rings: array<u32>;
@group(0) @binding(7) var<storage, read> counters: array<u32>;
// The split scan's block offsets (amr_scan leaves them for the reader to add).
@group(0) @binding(8) var<storage, read> block_offsets: array<u32>;
@group(1) @binding(0) var<uniform> range: ItemRange;
@group(2) @binding(0) var<uniform> params: AmrParams;

fn refines(element: u32) -> bool {
    if (element == NONE) {
        return false;
    }
    let pos = element_tree[element].w;
    return pos != NONE && flags[pos] > 0;
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let e = linear_index(gid, nwg);
    if (e >= range.count) {
        return;
    }
    if (range.pad == 0u) {
        let live = e < counters[C_EDGE_IDS] && (edge_tree[e].x & EDGE_ALIVE) != 0u;
        var split = 0u;
        if (live && edge_tree[e].z == NONE) {
            if (refines(edge_sides[2u * e].x) || refines(edge_sides[2u * e + 1u].x)) {
                split = 1u;
            }
        }
        items[e] = split;
        return;
    }
    if (items[e] == 0u) {
        return;
    }
    let k = items_scan[e] + block_offsets[e / SCAN_BLOCK];
    let len = counters[C_RINGS + 3u];
    var first: u32;
    if (k < len) {
        first = rings[ring_index(params, 1u, counters[C_RINGS + 2u], k)];
    } else {
        first = counters[C_EDGE_IDS] + 2u * (k - len);
    }
    let t = edge_tree[e];
    let colors = 2u * params.base_colors;
    let color = (t.x >> 8u) & 0xffu;
    let level = (t.x & 0xffu) + 1u;
    edge_tree[first] = vec4<u32>(level | (color << 8u) | EDGE_ALIVE, e, NONE, t.w);
    let second = (color + params.base_colors) % colors;
    edge_tree[first + 1u] = vec4<u32>(level | (second << 8u) | EDGE_ALIVE, e, NONE, t.w);
    for (var h = first; h < first + 2u; h = h + 1u) {
        edge_sides[2u * h] = vec2<u32>(NONE, 0u);
        edge_sides[2u * h + 1u] = vec2<u32>(NONE, 0u);
    }
    edge_tree[e].z = first;
}
