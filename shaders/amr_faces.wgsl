// #include "common/dispatch.wgsl"
// #include "common/amr_tree.wgsl"
// #include "common/amr_face_owner.wgsl"
// #include "common/amr_reorder.wgsl"
// #include "common/group_scan.wgsl"

// The faces of the adapted mesh from the trees (AdaptiveMesh::faces and build_dg_mesh in
// src/solver/dg/amr), after amr_geometry's marks and their scan, one thread per slot writing
// the faces its element owns (those amr_geometry marked: the element is the face's left side),
// so that a workgroup's loads and stores fall on neighbouring slots and face numbers (per edge
// id they scattered, and most threads of the edge capacity had no face: amr_faces took 74 us
// at 240k elements on an H200). Face j of edge e: on each side the element at the edge's
// level, or the parent edge's element one level coarser (with the half it covers: 1 + m on the
// left, 2 - m on the right for child m); the finer side is the left one; normal, length and
// midpoint from the left element's own side. Writes the DgEdge record and the face
// neighbours: side s of the left element, and of the right one s or s + 3 for its second half,
// setting bit s of the right element's split mask (the first block's w, an atomic or). A face
// whose slots lie more than FAR_SLOTS apart counts in counters[C_FAR_FACES] (reorder::far_faces, as
// amr_permute counts it; the bookkeeping before cleared it), one atomic per workgroup (most faces
// are far before a reorder: one per face would all hit one word), and so the element half sides the
// faces cover in counters[C_SIDE_UNITS] (6 per element unless a face is missing: the host checks
// it, since a thread per slot never sees an edge no element owns);
// an edge without an element where one is needed in counters[C_ERROR].
// Each face also goes to its place in left-element order (GpuDg::edges_by_left, dg_flux's
// order: by left slot, then by color): the faces of every color whose left slots come before
// the thread's, from the face scan at each color's plane less its value at the plane's start
// (the color's offset; with the offsets read from the counters, atomic loads, this kernel took
// 1.4x its time at 240k elements on an H200), then its own faces of smaller colors. Without
// COLOR_ORDER (the gathered layout, whose solver reads the faces in left-element order only)
// the faces are written in that order alone, numbered by the scan of amr_geometry's one plane
// of face counts per slot: half the stores, and one scan plane instead of 2K.

// With the compaction in order (IN_ORDER) amr_geometry numbered the faces by workgroups of 256
// slots instead of a scan: face_numbers holds, from word 1, the first number of each plane,
// and from FACE_GROUP_WORDS the first number of each workgroup in each plane (FACE_GROUP_WORDS
// + g P + c; P planes, the 2K colors or one without COLOR_ORDER), and each workgroup here
// numbers its slots' faces within those by a scan of the same packed marks (face_mark_word).
// The new active count comes from counters[C_NEW_ACTIVE], and the first thread stores it as the
// active count (in order amr_geometry's launch reads the count it started from to its end).

// 1: the faces in color order and in left-element order; 0: in left-element order only.
override COLOR_ORDER: u32 = 1u;
// 1 with the compaction in order: the faces numbered by workgroups of slots (amr_geometry).
override IN_ORDER: u32 = 0u;
// face_numbers' words before the workgroups' first numbers (amr_geometry).
const FACE_GROUP_WORDS: u32 = 64u;

@group(0) @binding(0) var<storage, read> element_tree: array<vec4<u32>>;
@group(0) @binding(1) var<storage, read> vertices: array<vec2<f32>>;
@group(0) @binding(2) var<storage, read> edge_tree: array<vec4<u32>>;
@group(0) @binding(3) var<storage, read> edge_sides: array<vec2<u32>>;
@group(0) @binding(4) var<storage, read> items_scan: array<u32>;
// DgEdge records: left, right, info, nx, ny, length, mx, my; written as two vec4s each (two
// stores a face instead of eight).
@group(0) @binding(5) var<storage, read_write> faces: array<vec4<u32>>;
// Face neighbours, 4 words per slot: NE blocks of (side 0, 1, 2, split mask), then NE of the
// second halves.
@group(0) @binding(6) var<storage, read_write> neighbors: array<atomic<u32>>;
@group(0) @binding(7) var<storage, read_write> counters: array<atomic<u32>>;
@group(0) @binding(8) var<storage, read> slots: array<u32>;
// The face scan's block offsets (amr_scan leaves them for the reader to add); in order,
// amr_geometry's numbers of the planes and workgroups (above).
@group(0) @binding(9) var<storage, read> face_numbers: array<u32>;
@group(0) @binding(10) var<storage, read> element_edges: array<vec4<u32>>;
// The same DgEdge records in left-element order.
@group(0) @binding(11) var<storage, read_write> faces_by_left: array<vec4<u32>>;
@group(1) @binding(0) var<uniform> range: ItemRange;
@group(2) @binding(0) var<uniform> params: AmrParams;

// (slot, local side, half) of side s of edge e, whose side s holds `here` (element id, local
// side) and whose parent is `parent`; slot NONE when there is none.
fn side_of(e: u32, s: u32, here: vec2<u32>, parent: u32) -> vec3<u32> {
    if (here.x != NONE) {
        return vec3<u32>(element_tree[here.x].w, here.y, 0u);
    }
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

// Corner k of a triangle with corners v0, v1, v2.
fn corner(v0: vec2<f32>, v1: vec2<f32>, v2: vec2<f32>, k: u32) -> vec2<f32> {
    return select(select(v2, v1, k == 1u), v0, k == 0u);
}

// Face of edge e that the element in slot i owns on its side s, from corner a to corner b,
// written at `by_color` in color order (with COLOR_ORDER) and at `by_left` in left-element
// order: (1 when its slots lie far apart else 0, the element half sides it covers: 2 for the
// left side, whole, and 2 or 1 for the right, whole or half); zeros when there is no face to
// write. The owner is the left side, whole (on side 0, or on side 1 with side 0 coarser):
// (i, s, 0), so only the right side is looked up in the trees, and the owner's corners were
// loaded with its edges.
fn write_face(e: u32, i: u32, s: u32, a: vec2<f32>, b: vec2<f32>, by_color: u32,
              by_left: u32) -> vec2<u32> {
    let t = edge_tree[e];
    let kind = t.w & 0xfu;
    let state = t.w >> 4u;
    let interior = kind == EDGE_INTERIOR;
    let here0 = edge_sides[2u * e];
    let here1 = edge_sides[2u * e + 1u];
    // The owner's side of the edge: 0 when an element holds side 0 (the owner), else 1.
    let own = select(1u, 0u, here0.x != NONE);
    let own_here = select(here0, here1, own == 1u);
    var r = vec3<u32>(NONE, 0u, 0u);
    if (interior) {
        r = side_of(e, 1u - own, select(here1, here0, own == 1u), t.y);
    }
    if ((interior && r.x == NONE) || (!interior && own == 1u) || own_here.y != s) {
        atomicStore(&counters[C_ERROR], 1u);
        return vec2<u32>(0u);
    }
    let d = b - a;
    let len = length(d);
    let info = s | (r.y << 2u) | (kind << 4u) | (r.z << 7u) | (state << 9u);
    let mid = 0.5 * (a + b);
    let head = vec4<u32>(i, r.x, info, bitcast<u32>(d.y / len));
    let tail = vec4<u32>(bitcast<u32>(-d.x / len), bitcast<u32>(len), bitcast<u32>(mid.x),
                         bitcast<u32>(mid.y));
    if (COLOR_ORDER != 0u) {
        faces[2u * by_color] = head;
        faces[2u * by_color + 1u] = tail;
    }
    faces_by_left[2u * by_left] = head;
    faces_by_left[2u * by_left + 1u] = tail;
    if (r.x == NONE) {
        return vec2<u32>(0u, 2u);
    }
    atomicStore(&neighbors[4u * i + s], r.x);
    if (r.z == 2u) {
        atomicStore(&neighbors[4u * (range.capacity + r.x) + r.y], i);
        atomicOr(&neighbors[4u * r.x + 3u], 1u << r.y);
    } else {
        atomicStore(&neighbors[4u * r.x + r.y], i);
    }
    let far = select(0u, 1u, max(i, r.x) - min(i, r.x) > FAR_SLOTS);
    return vec2<u32>(far, select(3u, 4u, r.z == 0u));
}

// The workgroup's far faces and covered half sides, added to counters[C_FAR_FACES] and
// counters[C_SIDE_UNITS] by one thread.
var<workgroup> group_far: atomic<u32>;
var<workgroup> group_units: atomic<u32>;

// The face planes: the 2K colors, or one plane of face counts without COLOR_ORDER.
fn face_planes() -> u32 {
    return select(1u, 2u * params.base_colors, COLOR_ORDER != 0u);
}

// The numbers of slot i's faces from the face scan (GK19's compaction): per side, its number
// in color order (with COLOR_ORDER, for the sides in `colors`), and in w the faces of lower
// slots (each color's scan at slot i less at its first; without COLOR_ORDER the one plane's
// scan at slot i).
fn scanned_numbers(i: u32, colors: vec3<u32>) -> vec4<u32> {
    var numbers = vec4<u32>(0u);
    if (COLOR_ORDER == 0u) {
        numbers.w = items_scan[i] + face_numbers[i / SCAN_BLOCK];
        return numbers;
    }
    for (var c = 0u; c < face_planes(); c = c + 1u) {
        let first = c * range.capacity;
        let item = first + i;
        let number = items_scan[item] + face_numbers[item / SCAN_BLOCK];
        numbers.w = numbers.w + number - (items_scan[first] + face_numbers[first / SCAN_BLOCK]);
        // #unroll
        for (var s = 0u; s < 3u; s = s + 1u) {
            if (colors[s] == c) {
                numbers[s] = number;
            }
        }
    }
    return numbers;
}

// The same numbers with the compaction in order: the workgroup's first numbers (amr_geometry)
// plus the scan of the packed marks over the workgroup's slots (`colors` NONE for a slot
// with no faces, or past n). Called by every thread of a workgroup of slots.
fn grouped_numbers(lid: u32, group: u32, colors: vec3<u32>) -> vec4<u32> {
    let planes = face_planes();
    var numbers = vec4<u32>(0u);
    for (var w = 0u; w < (planes + 2u) / 3u; w = w + 4u) {
        var marks = vec4<u32>(0u);
        // #unroll
        for (var k = 0u; k < 4u; k = k + 1u) {
            marks[k] = face_mark_word(colors, w + k, COLOR_ORDER != 0u);
        }
        let before = group_scan(lid, marks).before;
        // #unroll
        for (var k = 0u; k < 4u; k = k + 1u) {
            // #unroll
            for (var lane = 0u; lane < 3u; lane = lane + 1u) {
                let plane = 3u * (w + k) + lane;
                if (plane < planes) {
                    let within = mark_lane(before[k], lane);
                    let first = face_numbers[FACE_GROUP_WORDS + group * planes + plane];
                    numbers.w = numbers.w + first + within;
                    // #unroll
                    for (var s = 0u; s < 3u; s = s + 1u) {
                        if (colors[s] == plane) {
                            numbers[s] = face_numbers[1u + plane] + first + within;
                        }
                    }
                }
            }
        }
    }
    return numbers;
}

@compute @workgroup_size(WIDE_WORKGROUP_SIZE)
fn main(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let i = wide_linear_index(gid, nwg);
    let group = wid.x + wid.y * nwg.x;
    if (lid == 0u) {
        atomicStore(&group_far, 0u);
        atomicStore(&group_units, 0u);
    }
    workgroupBarrier();
    // Nothing when amr_scan 0 decided that the adaptation does not run (the decision loaded
    // with the new count, not before it).
    let runs = atomicLoad(&counters[C_DECISION]) == ADAPT_RUNS;
    let num_active = atomicLoad(&counters[C_NEW_ACTIVE]);
    if (runs && i == 0u) {
        atomicStore(&counters[C_ACTIVE], num_active);
    }
    let live = runs && i < range.count && i < num_active;
    var edges = vec4<u32>(0u);
    var v0 = vec2<f32>(0.0);
    var v1 = vec2<f32>(0.0);
    var v2 = vec2<f32>(0.0);
    // The colors of the faces this element owns (NONE for a side it does not own).
    var colors = vec3<u32>(NONE);
    if (live) {
        let id = slots[i];
        edges = element_edges[id];
        v0 = vertices[3u * id];
        v1 = vertices[3u * id + 1u];
        v2 = vertices[3u * id + 2u];
        let edge_ids = atomicLoad(&counters[C_EDGE_IDS]);
        colors = vec3<u32>(owned_face_color(id, edges.x, edge_ids),
                           owned_face_color(id, edges.y, edge_ids),
                           owned_face_color(id, edges.z, edge_ids));
    }
    var numbers = vec4<u32>(0u);
    if (IN_ORDER != 0u) {
        numbers = grouped_numbers(lid, group, colors);
    }
    var written = vec2<u32>(0u);
    if (any(colors != vec3<u32>(NONE))) {
        if (IN_ORDER == 0u) {
            numbers = scanned_numbers(i, colors);
        }
        for (var s = 0u; s < 3u; s = s + 1u) {
            if (colors[s] != NONE) {
                let lower = select(0u, 1u, colors[(s + 1u) % 3u] < colors[s])
                    + select(0u, 1u, colors[(s + 2u) % 3u] < colors[s]);
                let a = corner(v0, v1, v2, s);
                let b = corner(v0, v1, v2, (s + 1u) % 3u);
                written = written
                    + write_face(edges[s], i, s, a, b, numbers[s], numbers.w + lower);
            }
        }
    }
    if (written.x != 0u) {
        atomicAdd(&group_far, written.x);
    }
    if (written.y != 0u) {
        atomicAdd(&group_units, written.y);
    }
    workgroupBarrier();
    if (lid == 0u) {
        let far = atomicLoad(&group_far);
        if (far > 0u) {
            atomicAdd(&counters[C_FAR_FACES], far);
        }
        let units = atomicLoad(&group_units);
        if (units > 0u) {
            atomicAdd(&counters[C_SIDE_UNITS], units);
        }
    }
}
