// #include "common/dispatch.wgsl"
// #include "common/amr_tree.wgsl"
// #include "common/amr_face_owner.wgsl"

// The adapted mesh per slot, one thread per slot up to the capacity, after amr_compact listed
// the holes:
// - the compaction's second half (GK19 Algorithm 4; AdaptiveMesh::compact in
//   src/solver/dg/amr/tree.rs): occupied slot p at or past the new active count n (below the
//   slots in use), number H + j in the compaction scan (amr_scan 1: its block prefixes plus its
//   block offsets; H holes), moves into hole j with its coefficients (the high and the low
//   words of register 0's double-float pairs), and its thread writes the rest of the slot it
//   moved into below; slot p < n is a hole when the scan counts it (its number and the next
//   differ), which this thread reads instead of the slot the move writes;
// - the geometry for the DG kernels (element_geometry in src/solver/dg/mesh.rs): with
//   x = v0 + J xi, the inverse Jacobian (xi_x, xi_y, eta_x, eta_y) = (J11, -J01, -J10, J00) /
//   det J, 1 / det J and the smallest height det J / longest side; the slots from the new
//   active count n up to those in use get zeros and no neighbours, as on the host, and the
//   launch returns at once past them (they have those already: cleared when they were last
//   in use, or by the solver's upload). Both neighbour blocks are cleared for amr_faces;
// - the face marks (AdaptiveMesh::faces and build_dg_mesh in src/solver/dg/amr):
//   items[c * NE + i] = 1 when the element is the left (finer, or side 0 of an edge between
//   equals) side of a face of color c. An element has at most one face per color, so the scan
//   next numbers the faces by color, by left slot within a color: each color's launch is dense
//   and reads its left elements in memory order (locality). Without COLOR_ORDER (the gathered
//   layout, which reads the faces in left-element order only) one plane instead:
//   items[i] = the number of faces the element owns, 0 to 3, and the scan numbers them by
//   left slot;
// - the low words of the solver's register 0 (its double-float pairs) cleared from n up to the
//   slots in use, as the other per-slot arrays; below n they are what coarsening (zero for a
//   parent), refinement (zero for the children) and compaction (moved with the high words)
//   left, so an element the adaptation did not touch keeps its pairs whole.
// n and the slots in use come from the counts amr_scan 0 left (compaction_bounds; amr_scan 2
// stores n as the active count after the face scan); the face marks from n up to the slots in
// use are cleared, and past them they are 0 already.
// With the compaction in order (IN_ORDER; Compaction::InOrder in src/solver/dg/amr/tree.rs)
// there is no compaction scan: slot i < n takes the element amr_refine staged there (its id in
// compaction_scan, its coefficients in register STAGING) and writes its own slot; n and the
// edge ids in use are computed here from the counts of amr_scan 0 (amr_scan 2 stores them).
// The launch then has FIELD_THREADS more threads per slot (range.count = (1 + FIELD_THREADS) NE):
// thread (1 + f) NE + i moves field f of slot i's coefficients (its NP rows, high and low words)
// from register STAGING, or clears its low words past n, so that the slot's own thread keeps only
// the geometry and the face marks. At 33k elements the launch fills under half the GPU and
// waits on each thread's chain of instructions (BENCHMARKS.md, session 28): the moves are taken
// out of that chain.

override NP: u32 = 1u;
// 1 with the compaction in order; STAGING: the register where amr_refine staged the elements
// in their new slots (GpuDg::STAGING_REGISTER).
override IN_ORDER: u32 = 0u;
override STAGING: u32 = 1u;
// 1: the face marks per color (amr_faces writes the faces in color order and in left-element
// order); 0: one plane of face counts (left-element order only; COLOR_ORDER in amr_faces).
override COLOR_ORDER: u32 = 1u;
// The field threads per slot with the compaction in order, one per conserved field
// (FIELD_THREADS in src/solver/dg/amr/gpu.rs sizes the launch).
const FIELD_THREADS: u32 = 4u;

@group(0) @binding(0) var<storage, read_write> slots: array<u32>;
@group(0) @binding(1) var<storage, read> vertices: array<vec2<f32>>;
@group(0) @binding(2) var<storage, read_write> inv_jac: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read_write> inv_det: array<f32>;
@group(0) @binding(4) var<storage, read_write> heights: array<f32>;
@group(0) @binding(5) var<storage, read_write> neighbors: array<vec4<u32>>;
@group(0) @binding(6) var<storage, read> counters: array<u32>;
@group(0) @binding(7) var<storage, read> element_edges: array<vec4<u32>>;
@group(0) @binding(8) var<storage, read> edge_tree: array<vec4<u32>>;
@group(0) @binding(9) var<storage, read> edge_sides: array<vec2<u32>>;
@group(0) @binding(10) var<storage, read_write> items: array<u32>;
// Register 0's low words: 4 NP rows of NE.
@group(0) @binding(11) var<storage, read_write> regs_lo: array<f32>;
@group(0) @binding(12) var<storage, read_write> element_tree: array<vec4<u32>>;
// Register 0's high words: 4 NP rows of NE.
@group(0) @binding(13) var<storage, read_write> regs: array<f32>;
// The compaction scan (amr_scan 1: block prefixes, block offsets) and its holes (amr_compact);
// with the compaction in order, the ids amr_refine staged per new slot, in compaction_scan.
@group(0) @binding(14) var<storage, read> compaction_scan: array<u32>;
@group(0) @binding(15) var<storage, read> compaction_offsets: array<u32>;
@group(0) @binding(16) var<storage, read> holes: array<u32>;
@group(1) @binding(0) var<uniform> range: ItemRange;
@group(2) @binding(0) var<uniform> params: AmrParams;

// Slot p's number in the compaction scan.
fn compaction_number(p: u32) -> u32 {
    return compaction_scan[p] + compaction_offsets[p / SCAN_BLOCK];
}

// Whether slot p < n is a hole: its compaction mark, the scan's next number less its own (past
// the last slot the total, H holes and H moves).
fn is_hole(p: u32, holes_below: u32) -> bool {
    var next = 2u * holes_below;
    if (p + 1u < range.capacity) {
        next = compaction_number(p + 1u);
    }
    return next != compaction_number(p);
}

// The geometry and face marks of element `id` in slot i: every load first (the vertices and
// the edges, then the edges' nodes and sides), the stores after, so a thread waits on one
// chain of dependent loads.
fn element_geometry(i: u32, id: u32, edge_ids: u32) {
    let v0 = vertices[3u * id];
    let v1 = vertices[3u * id + 1u];
    let v2 = vertices[3u * id + 2u];
    let edges = element_edges[id];
    let owned = vec3<u32>(owned_face_color(id, edges.x, edge_ids),
                          owned_face_color(id, edges.y, edge_ids),
                          owned_face_color(id, edges.z, edge_ids));
    let a = v1 - v0;
    let b = v2 - v0;
    let d = a.x * b.y - b.x * a.y;
    inv_jac[i] = vec4<f32>(b.y, -b.x, -a.y, a.x) / d;
    inv_det[i] = 1.0 / d;
    let longest = max(length(a), max(length(b), length(v2 - v1)));
    heights[i] = d / longest;
    if (COLOR_ORDER == 0u) {
        items[i] = dot(select(vec3<u32>(1u), vec3<u32>(0u), owned == vec3<u32>(NONE)),
                       vec3<u32>(1u));
        return;
    }
    for (var c = 0u; c < 2u * params.base_colors; c = c + 1u) {
        items[c * range.capacity + i] = select(0u, 1u, any(owned == vec3<u32>(c)));
    }
}

// With the compaction in order, field f of slot i: the element amr_refine staged in new slot
// i < n moves there, its NP rows of field f, high and low words; past n the low words are
// cleared, as the other per-slot arrays.
fn move_field(i: u32, f: u32, new_active: u32) {
    let staged = STAGING * 4u * NP * range.capacity;
    // #unroll
    for (var k = 0u; k < NP; k = k + 1u) {
        let row = (f * NP + k) * range.capacity + i;
        if (i < new_active) {
            regs[row] = regs[staged + row];
            regs_lo[row] = regs_lo[staged + row];
        } else {
            regs_lo[row] = 0.0;
        }
    }
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let t = linear_index(gid, nwg);
    if (t >= range.count) {
        return;
    }
    let i = t % range.capacity;
    // Nothing when amr_scan 0 decided that the adaptation does not run (the decision loaded
    // with the kernel's first loads, not before them).
    let runs = counters[C_DECISION] == ADAPT_RUNS;
    let refines = counters[C_REFINES];
    let clusters = counters[C_CLUSTERS];
    // The new count n and the slots in use (amr_scan 2 settles the counts after this launch).
    let bounds = compaction_bounds(counters[C_ACTIVE], clusters, refines);
    let holes_below = counters[C_COMPACT_HOLES];
    var edge_ids = counters[C_EDGE_IDS];
    // The slots past those in use hold what this launch writes past n already: an earlier
    // adaptation cleared them when they were last in use (before that, the solver's upload
    // and the face marks' zeroed buffer).
    if (!runs || i >= bounds.y) {
        return;
    }
    let new_active = bounds.x;
    if (IN_ORDER != 0u) {
        if (t >= range.capacity) {
            let field = t / range.capacity - 1u;
            if (field < FIELD_THREADS) {
                move_field(i, field, new_active);
            }
            return;
        }
        edge_ids = settled_edge_ids(edge_ids, counters[C_SPLITS],
                                    counters[C_RINGS + 3u] + counters[C_SPLIT_FREES], refines,
                                    counters[C_RINGS + 5u] + clusters);
    }
    neighbors[i] = vec4<u32>(NONE, NONE, NONE, 0u);
    neighbors[range.capacity + i] = vec4<u32>(NONE);
    if (IN_ORDER != 0u) {
        if (i < new_active) {
            // The element amr_refine staged in new slot i moves there (its coefficients by
            // the field threads).
            let id = compaction_scan[i];
            slots[i] = id;
            element_tree[id].w = i;
            element_geometry(i, id, edge_ids);
            return;
        }
    } else if (i < new_active) {
        // A hole's element moves into it, and that element's thread writes the slot.
        if (!is_hole(i, holes_below)) {
            element_geometry(i, slots[i], edge_ids);
        }
        return;
    }
    let id = slots[i];
    if (IN_ORDER == 0u && id != NONE) {
        let to = holes[compaction_number(i) - holes_below];
        slots[to] = id;
        element_tree[id].w = to;
        // #unroll
        for (var j = 0u; j < 4u * NP; j = j + 1u) {
            regs[j * range.capacity + to] = regs[j * range.capacity + i];
            regs_lo[j * range.capacity + to] = regs_lo[j * range.capacity + i];
        }
        element_geometry(to, id, edge_ids);
    }
    if (IN_ORDER == 0u) {
        for (var j = 0u; j < 4u * NP; j = j + 1u) {
            regs_lo[j * range.capacity + i] = 0.0;
        }
    }
    inv_jac[i] = vec4<f32>(0.0);
    inv_det[i] = 0.0;
    heights[i] = 0.0;
    let planes = select(1u, 2u * params.base_colors, COLOR_ORDER != 0u);
    for (var c = 0u; c < planes; c = c + 1u) {
        items[c * range.capacity + i] = 0u;
    }
}
