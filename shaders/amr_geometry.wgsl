// #include "common/dispatch.wgsl"
// #include "common/amr_tree.wgsl"
// #include "common/amr_face_owner.wgsl"
// #include "common/amr_book.wgsl"
// #include "common/group_scan.wgsl"

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
// - the face marks (AdaptiveMesh::faces and build_dg_mesh in src/solver/dg/amr), with GK19's
//   compaction in `items` (in order, numbered here; below): items[c * NE + i] = 1 when the element
//   is the left (finer, or side 0 of an edge between equals) side of a face of color c. An element
//   has at most one face per color, so the scan next numbers the faces by color, by left slot
//   within a color: each color's launch is dense and reads its left elements in memory order
//   (locality). Without COLOR_ORDER (the gathered layout, which reads the faces in left-element
//   order only) one plane instead: items[i] = the number of faces the element owns, 0 to 3, and the
//   scan numbers them by left slot;
// - the low words of the solver's register 0 (its double-float pairs) cleared from n up to the
//   slots in use, as the other per-slot arrays; below n they are what coarsening (zero for a
//   parent), refinement (zero for the children) and compaction (moved with the high words)
//   left, so an element the adaptation did not touch keeps its pairs whole.
// n and the slots in use come from the counts amr_scan 0 left (compaction_bounds; amr_scan 2,
// or in order amr_faces, stores n as the active count); the face marks from n up to the slots
// in use are cleared, and past them they are 0 already.
// With the compaction in order (IN_ORDER; Compaction::InOrder in src/solver/dg/amr/tree.rs)
// there is no compaction scan: slot i < n takes the element amr_refine staged there (its id in
// compaction_scan, its coefficients in register STAGING) and writes its own slot. n and the
// edge ids in use are computed here from the counts of amr_scan 0. Since each thread then marks
// its own slot, the launch numbers the faces itself instead of a scan launch after it (one
// dependent launch fewer an adaptation): its workgroups of 256 slots add their packed marks
// (face_mark_word) in workgroup memory and store the workgroup's count per plane in
// face_groups, and the last workgroup to finish (a ticket, as common/scan_blocks.wgsl's last
// workgroup: no workgroup waits on another) turns them into each workgroup's first number per
// plane and the planes' first numbers, then settles the counts and writes the solver's launch
// records (common/amr_book.wgsl). amr_faces numbers the faces within each workgroup by the
// same packed marks, and stores the new active count (the field threads below read the count
// this launch starts from). The slots' threads run up to the capacity rounded up to whole
// workgroups, S, and every such workgroup takes a ticket (the bookkeeping rewrites counts they
// read). Then come FIELD_THREADS threads per slot: thread S + f NE + i moves field f of slot
// i's coefficients (its NP rows, high and low words) from register STAGING, or clears its low
// words past n, so that the slot's own thread keeps only the geometry and the face marks. At
// 33k elements the launch fills under half the GPU and waits on each thread's chain of
// instructions (BENCHMARKS.md, session 28): the moves are taken out of that chain.
// face_groups: word 0 the ticket, 1 + c the first number of plane c, FACE_GROUP_WORDS + g P + c
// workgroup g's count in plane c (then its first number within the plane), P planes (2K, or 1
// without COLOR_ORDER).

override NP: u32 = 1u;
// 1 with the compaction in order; STAGING: the register where amr_refine staged the elements
// in their new slots (GpuDg::STAGING_REGISTER).
override IN_ORDER: u32 = 0u;
override STAGING: u32 = 1u;
// 1: the face marks per color (amr_faces writes the faces in color order and in left-element
// order); 0: one plane of face counts (left-element order only; COLOR_ORDER in amr_faces).
override COLOR_ORDER: u32 = 1u;

@group(0) @binding(0) var<storage, read_write> slots: array<u32>;
@group(0) @binding(1) var<storage, read> vertices: array<vec2<f32>>;
@group(0) @binding(2) var<storage, read_write> inv_jac: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read_write> inv_det: array<f32>;
@group(0) @binding(4) var<storage, read_write> heights: array<f32>;
@group(0) @binding(5) var<storage, read_write> neighbors: array<vec4<u32>>;
// Read only, except by the last workgroup's bookkeeping in order.
@group(0) @binding(6) var<storage, read_write> counters: array<u32>;
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
// In order: the ticket, the planes' first numbers and the workgroups' counts (above).
@group(0) @binding(17) var<storage, read_write> face_groups: array<atomic<u32>>;
// The DG solver's launch records (GpuDg::launch_words), for the bookkeeping in order.
@group(0) @binding(18) var<storage, read_write> launches: array<u32>;
@group(1) @binding(0) var<uniform> range: ItemRange;
@group(2) @binding(0) var<uniform> params: AmrParams;

// face_groups' words before the workgroups' counts: the ticket and a first number per plane.
const FACE_GROUP_WORDS: u32 = 64u;
// The field threads per slot with the compaction in order, one per conserved field
// (FIELD_THREADS in src/solver/dg/amr/gpu.rs sizes the launch).
const FIELD_THREADS: u32 = 4u;

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

// The face planes: the 2K colors, or one plane of face counts without COLOR_ORDER.
fn face_planes() -> u32 {
    return select(1u, 2u * params.base_colors, COLOR_ORDER != 0u);
}

// The geometry of element `id` and the colors of the faces it owns (NONE where it owns none):
// every load first (the vertices and the edges, then the edges' nodes and sides), so a thread
// waits on one chain of dependent loads.
struct ElementGeometry {
    inv_jac: vec4<f32>,
    inv_det: f32,
    height: f32,
    owned: vec3<u32>,
}

fn element_geometry(id: u32, edge_ids: u32) -> ElementGeometry {
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
    let longest = max(length(a), max(length(b), length(v2 - v1)));
    return ElementGeometry(vec4<f32>(b.y, -b.x, -a.y, a.x) / d, 1.0 / d, d / longest, owned);
}

// Slot i's geometry and, with GK19's compaction, its face marks in `items`.
fn store_geometry(i: u32, g: ElementGeometry) {
    inv_jac[i] = g.inv_jac;
    inv_det[i] = g.inv_det;
    heights[i] = g.height;
    if (IN_ORDER != 0u) {
        return;
    }
    if (COLOR_ORDER == 0u) {
        items[i] = dot(select(vec3<u32>(1u), vec3<u32>(0u), g.owned == vec3<u32>(NONE)),
                       vec3<u32>(1u));
        return;
    }
    for (var c = 0u; c < 2u * params.base_colors; c = c + 1u) {
        items[c * range.capacity + i] = select(0u, 1u, any(g.owned == vec3<u32>(c)));
    }
}

// With the compaction in order, field f of slot i: the element amr_refine staged in new slot
// i < n moves there, its NP rows of field f, high and low words; from n up to the slots in use
// the low words are cleared, as the other per-slot arrays.
fn move_field(i: u32, f: u32) {
    let runs = counters[C_DECISION] == ADAPT_RUNS;
    let bounds = compaction_bounds(counters[C_ACTIVE], counters[C_CLUSTERS], counters[C_REFINES]);
    if (!runs || f >= FIELD_THREADS || i >= bounds.y) {
        return;
    }
    let staged = STAGING * 4u * NP * range.capacity;
    // #unroll
    for (var k = 0u; k < NP; k = k + 1u) {
        let row = (f * NP + k) * range.capacity + i;
        if (i < bounds.x) {
            regs[row] = regs[staged + row];
            regs_lo[row] = regs_lo[staged + row];
        } else {
            regs_lo[row] = 0.0;
        }
    }
}

// With GK19's compaction, slot i's thread: its moves, geometry and marks as above.
fn gk19_slot(i: u32) {
    if (i >= range.capacity) {
        return;
    }
    // Nothing when amr_scan 0 decided that the adaptation does not run (the decision loaded
    // with the kernel's first loads, not before them).
    let runs = counters[C_DECISION] == ADAPT_RUNS;
    // The new count n and the slots in use (amr_scan 2 settles the counts after this launch).
    let bounds = compaction_bounds(counters[C_ACTIVE], counters[C_CLUSTERS], counters[C_REFINES]);
    let holes_below = counters[C_COMPACT_HOLES];
    let edge_ids = counters[C_EDGE_IDS];
    // The slots past those in use hold what this launch writes past n already: an earlier
    // adaptation cleared them when they were last in use (before that, the solver's upload
    // and the face marks' zeroed buffer).
    if (!runs || i >= bounds.y) {
        return;
    }
    neighbors[i] = vec4<u32>(NONE, NONE, NONE, 0u);
    neighbors[range.capacity + i] = vec4<u32>(NONE);
    if (i < bounds.x) {
        // A hole's element moves into it, and that element's thread writes the slot.
        if (!is_hole(i, holes_below)) {
            store_geometry(i, element_geometry(slots[i], edge_ids));
        }
        return;
    }
    let id = slots[i];
    if (id != NONE) {
        let to = holes[compaction_number(i) - holes_below];
        slots[to] = id;
        element_tree[id].w = to;
        // #unroll
        for (var j = 0u; j < 4u * NP; j = j + 1u) {
            regs[j * range.capacity + to] = regs[j * range.capacity + i];
            regs_lo[j * range.capacity + to] = regs_lo[j * range.capacity + i];
        }
        store_geometry(to, element_geometry(id, edge_ids));
    }
    for (var j = 0u; j < 4u * NP; j = j + 1u) {
        regs_lo[j * range.capacity + i] = 0.0;
    }
    inv_jac[i] = vec4<f32>(0.0);
    inv_det[i] = 0.0;
    heights[i] = 0.0;
    let planes = face_planes();
    for (var c = 0u; c < planes; c = c + 1u) {
        items[c * range.capacity + i] = 0u;
    }
}

// With the compaction in order, what slot i's thread stores: nothing (state 0: past the slots
// in use, or no adaptation), the element amr_refine staged there (1, below n) with its
// geometry, or zeros and no neighbours (2, from n up to the slots in use). Loaded and computed
// before the workgroup's ticket, stored after it: the storage barrier before the ticket waits
// for a thread's earlier stores.
struct InOrderSlot {
    state: u32,
    id: u32,
    geometry: ElementGeometry,
}

fn in_order_slot(i: u32) -> InOrderSlot {
    var slot = InOrderSlot(0u, NONE, ElementGeometry(vec4<f32>(0.0), 0.0, 0.0, vec3<u32>(NONE)));
    if (i >= range.capacity) {
        return slot;
    }
    let runs = counters[C_DECISION] == ADAPT_RUNS;
    let refines = counters[C_REFINES];
    let clusters = counters[C_CLUSTERS];
    let bounds = compaction_bounds(counters[C_ACTIVE], clusters, refines);
    let edge_ids = settled_edge_ids(counters[C_EDGE_IDS], counters[C_SPLITS],
                                    counters[C_RINGS + 3u] + counters[C_SPLIT_FREES], refines,
                                    counters[C_RINGS + 5u] + clusters);
    if (!runs || i >= bounds.y) {
        return slot;
    }
    slot.state = 2u;
    if (i < bounds.x) {
        slot.state = 1u;
        slot.id = compaction_scan[i];
        slot.geometry = element_geometry(slot.id, edge_ids);
    }
    return slot;
}

fn store_in_order_slot(i: u32, slot: InOrderSlot) {
    if (slot.state == 0u) {
        return;
    }
    neighbors[i] = vec4<u32>(NONE, NONE, NONE, 0u);
    neighbors[range.capacity + i] = vec4<u32>(NONE);
    store_geometry(i, slot.geometry);
    if (slot.state == 1u) {
        slots[i] = slot.id;
        element_tree[slot.id].w = i;
    }
}

// Whether the adaptation runs, then whether this is the last workgroup (one thread's load or
// ticket for the workgroup); the workgroup's packed marks; the planes' first numbers (the last
// workgroup's, for the bookkeeping).
var<workgroup> group_flag: u32;
var<workgroup> group_marks: array<atomic<u32>, MARK_WORDS>;
var<workgroup> plane_starts: array<u32, FACE_GROUP_WORDS>;

// The first face number of color c (common/amr_book.wgsl), from the last workgroup.
fn face_color_start(c: u32) -> u32 {
    return plane_starts[c];
}

// Counts c .. c + 3 of workgroup g (0 past the planes).
fn group_counts(g: u32, c: u32, planes: u32) -> vec4<u32> {
    var counts = vec4<u32>(0u);
    // #unroll
    for (var k = 0u; k < 4u; k = k + 1u) {
        if (c + k < planes) {
            counts[k] = atomicLoad(&face_groups[FACE_GROUP_WORDS + g * planes + c + k]);
        }
    }
    return counts;
}

// The last workgroup, once every workgroup's counts are stored: the first number of each
// workgroup holding slots below n in each plane (a run of those workgroups a thread, summed,
// scanned across the threads four planes at a time, then stored over the counts), the planes'
// first numbers, and the bookkeeping.
fn number_groups(lid: u32, planes: u32) {
    let n = compaction_bounds(counters[C_ACTIVE], counters[C_CLUSTERS], counters[C_REFINES]).x;
    let live = (n + WIDE_WORKGROUP_SIZE - 1u) / WIDE_WORKGROUP_SIZE;
    let run = (live + WIDE_WORKGROUP_SIZE - 1u) / WIDE_WORKGROUP_SIZE;
    let first = min(lid * run, live);
    let end = min(first + run, live);
    var start = 0u;
    for (var c = 0u; c < planes; c = c + 4u) {
        // The first workgroup's counts kept (most threads number one workgroup or none).
        var sum = vec4<u32>(0u);
        var first_counts = sum;
        for (var g = first; g < end; g = g + 1u) {
            let counts = group_counts(g, c, planes);
            if (g == first) {
                first_counts = counts;
            }
            sum = sum + counts;
        }
        let scan = group_scan(lid, sum);
        var number = scan.before;
        for (var g = first; g < end; g = g + 1u) {
            var counts = first_counts;
            if (g != first) {
                counts = group_counts(g, c, planes);
            }
            // #unroll
            for (var k = 0u; k < 4u; k = k + 1u) {
                if (c + k < planes) {
                    atomicStore(&face_groups[FACE_GROUP_WORDS + g * planes + c + k], number[k]);
                }
            }
            number = number + counts;
        }
        // #unroll
        for (var k = 0u; k < 4u; k = k + 1u) {
            if (c + k < planes) {
                if (lid == 0u) {
                    plane_starts[c + k] = start;
                }
                start = start + scan.total[k];
            }
        }
    }
    if (lid == 0u) {
        for (var c = 0u; c < planes; c = c + 1u) {
            atomicStore(&face_groups[1u + c], plane_starts[c]);
        }
        book_faces(start, settle(0u));
        atomicStore(&face_groups[0], 0u);
    }
}

@compute @workgroup_size(WIDE_WORKGROUP_SIZE)
fn main(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let i = wide_linear_index(gid, nwg);
    if (IN_ORDER == 0u) {
        gk19_slot(i);
        return;
    }
    let group = wid.x + wid.y * nwg.x;
    let groups = (range.capacity + WIDE_WORKGROUP_SIZE - 1u) / WIDE_WORKGROUP_SIZE;
    // The field threads take no ticket: they read only counts the bookkeeping keeps.
    if (group >= groups) {
        let u = i - groups * WIDE_WORKGROUP_SIZE;
        if (i < range.count) {
            move_field(u % range.capacity, u / range.capacity);
        }
        return;
    }
    if (lid < MARK_WORDS) {
        atomicStore(&group_marks[lid], 0u);
    }
    if (lid == 0u) {
        group_flag = select(0u, 1u, counters[C_DECISION] == ADAPT_RUNS);
    }
    if (workgroupUniformLoad(&group_flag) == 0u) {
        return;
    }
    let slot = in_order_slot(i);
    let words = (face_planes() + 2u) / 3u;
    for (var w = 0u; w < words; w = w + 1u) {
        let word = face_mark_word(slot.geometry.owned, w, COLOR_ORDER != 0u);
        if (word != 0u) {
            atomicAdd(&group_marks[w], word);
        }
    }
    workgroupBarrier();
    let planes = face_planes();
    if (lid < planes) {
        let count = mark_lane(atomicLoad(&group_marks[lid / 3u]), lid % 3u);
        atomicStore(&face_groups[FACE_GROUP_WORDS + group * planes + lid], count);
    }
    // Release this workgroup's counts before the ticket.
    storageBarrier();
    if (lid == 0u) {
        group_flag = select(0u, 1u, atomicAdd(&face_groups[0], 1u) == groups - 1u);
    }
    if (workgroupUniformLoad(&group_flag) != 0u) {
        // Acquire every workgroup's counts (all their tickets were taken before ours).
        storageBarrier();
        number_groups(lid, planes);
    }
    store_in_order_slot(i, slot);
}
