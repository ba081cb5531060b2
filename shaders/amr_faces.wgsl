// #include "common/dispatch.wgsl"
// #include "common/amr_tree.wgsl"

// The faces of the adapted mesh from the trees (AdaptiveMesh::faces and build_dg_mesh in
// src/solver/dg/amr), one thread per slot (phases 0, 2) or edge id (phase 1), range.pad:
//   0: slot i marks items[c * NE + i] when its element is the left (finer, or side 0 of an
//      edge between equals) side of a face of color c; an element has at most one face per
//      color, so the scan next numbers the faces by color, by left slot within a color: each
//      color's launch is dense and reads its left elements in memory order (locality);
//   1: face j of edge e: on each side the element at the edge's level, or the parent edge's
//      element one level coarser (with the half it covers: 1 + m on the left, 2 - m on the
//      right for child m); the finer side is the left one; normal, length and midpoint from
//      the left element's own side. Writes the DgEdge record and the face neighbours: side s
//      of the left element, and of the right one s or s + 3 for its second half. An edge
//      without an element where one is needed counts in counters[C_ERROR].
//   2: per slot, the split mask (bit s: side s has two faces) in the first block's w.

override NE: u32 = 1u;

@group(0) @binding(0) var<storage, read> element_tree: array<vec4<u32>>;
@group(0) @binding(1) var<storage, read> vertices: array<vec2<f32>>;
@group(0) @binding(2) var<storage, read> edge_tree: array<vec4<u32>>;
@group(0) @binding(3) var<storage, read> edge_sides: array<vec2<u32>>;
@group(0) @binding(4) var<storage, read_write> items: array<u32>;
@group(0) @binding(5) var<storage, read> items_scan: array<u32>;
// DgEdge records: left, right, info, nx, ny, length, mx, my.
@group(0) @binding(6) var<storage, read_write> faces: array<u32>;
@group(0) @binding(7) var<storage, read_write> neighbors: array<vec4<u32>>;
@group(0) @binding(8) var<storage, read_write> counters: array<u32>;
@group(0) @binding(9) var<storage, read> slots: array<u32>;
@group(0) @binding(10) var<storage, read> element_edges: array<vec4<u32>>;
@group(1) @binding(0) var<uniform> range: ItemRange;
@group(2) @binding(0) var<uniform> params: AmrParams;

// (slot, local side, half) of side s of edge e; slot NONE when there is none.
fn side_of(e: u32, s: u32) -> vec3<u32> {
    let here = edge_sides[2u * e + s];
    if (here.x != NONE) {
        return vec3<u32>(element_tree[here.x].w, here.y, 0u);
    }
    let parent = edge_tree[e].y;
    if (parent == NONE) {
        return vec3<u32>(NONE, 0u, 0u);
    }
    let up = edge_sides[2u * parent + s];
    if (up.x == NONE) {
        return vec3<u32>(NONE, 0u, 0u);
    }
    let m = e - edge_tree[parent].z;
    var half = 2u - m;
    if (s == 0u) {
        half = m + 1u;
    }
    return vec3<u32>(element_tree[up.x].w, up.y, half);
}

fn is_face(e: u32) -> bool {
    let t = edge_tree[e];
    return e < counters[C_EDGE_IDS] && (t.x & EDGE_ALIVE) != 0u && t.z == NONE;
}

// Color of the face that element `id` owns on local side s (it is the face's left side: its
// edge there is a live leaf with the element on side 0, or on side 1 with side 0 coarser);
// NONE when the side has no face of its own (a split side, or the right side of a face).
fn left_face_color(id: u32, s: u32) -> u32 {
    let e = element_edges[id][s];
    if (!is_face(e)) {
        return NONE;
    }
    let side0 = edge_sides[2u * e].x;
    if (side0 == id || (side0 == NONE && edge_sides[2u * e + 1u].x == id)) {
        return (edge_tree[e].x >> 8u) & 0xffu;
    }
    return NONE;
}

fn write_face(e: u32) {
    let t = edge_tree[e];
    let kind = t.w & 0xfu;
    let state = t.w >> 4u;
    let interior = kind == EDGE_INTERIOR;
    var l = side_of(e, 0u);
    var r = vec3<u32>(NONE, 0u, 0u);
    if (interior) {
        r = side_of(e, 1u);
    }
    if (l.x == NONE || (interior && r.x == NONE) || (!interior && l.z != 0u)) {
        counters[C_ERROR] = 1u;
        return;
    }
    if (l.z != 0u) {
        if (r.z != 0u) {
            counters[C_ERROR] = 1u;
            return;
        }
        let swap = l;
        l = r;
        r = swap;
    }
    let color = (t.x >> 8u) & 0xffu;
    let j = items_scan[color * NE + l.x];
    let id = slots[l.x];
    let a = vertices[3u * id + l.y];
    let b = vertices[3u * id + (l.y + 1u) % 3u];
    let d = b - a;
    let len = length(d);
    faces[8u * j] = l.x;
    faces[8u * j + 1u] = r.x;
    faces[8u * j + 2u] = l.y | (r.y << 2u) | (kind << 4u) | (r.z << 7u) | (state << 9u);
    faces[8u * j + 3u] = bitcast<u32>(d.y / len);
    faces[8u * j + 4u] = bitcast<u32>(-d.x / len);
    faces[8u * j + 5u] = bitcast<u32>(len);
    faces[8u * j + 6u] = bitcast<u32>(0.5 * (a.x + b.x));
    faces[8u * j + 7u] = bitcast<u32>(0.5 * (a.y + b.y));
    if (r.x != NONE) {
        neighbors[l.x][l.y] = r.x;
        if (r.z == 2u) {
            neighbors[NE + r.x][r.y] = l.x;
        } else {
            neighbors[r.x][r.y] = l.x;
        }
    }
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = linear_index(gid, nwg);
    if (i >= range.count) {
        return;
    }
    if (range.pad == 0u) {
        var owned = vec3<u32>(NONE);
        if (i < counters[C_ACTIVE]) {
            let id = slots[i];
            owned = vec3<u32>(left_face_color(id, 0u), left_face_color(id, 1u),
                              left_face_color(id, 2u));
        }
        for (var c = 0u; c < 2u * params.base_colors; c = c + 1u) {
            items[c * NE + i] = select(0u, 1u, any(owned == vec3<u32>(c)));
        }
    } else if (range.pad == 1u) {
        if (is_face(i)) {
            write_face(i);
        }
    } else if (i < counters[C_ACTIVE]) {
        var mask = 0u;
        for (var s = 0u; s < 3u; s = s + 1u) {
            if (neighbors[NE + i][s] != NONE) {
                mask = mask | (1u << s);
            }
        }
        neighbors[i].w = mask;
    }
}
