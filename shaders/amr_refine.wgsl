// #include "common/dispatch.wgsl"
// #include "common/amr_tree.wgsl"

// Refinement, one thread per slot flagged +1, refined element number k in slot order
// (AdaptiveMesh::refine and split_edge in src/solver/dg/amr/tree.rs). A side whose edge amr_mark
// marked is split here: split edge number j (amr_scan 0's part of the edges) takes the ring's j-th
// split block or new ids past the ring's length, its halves get colors c and (c + K) mod 2K; the
// side that writes them (side 0 when it refines, else side 1: split_sides) writes their records,
// the edge's child link and, when the other side does not refine, clears the other side's entries
// of the halves. The rings' lengths count the blocks amr_coarsen freed into them (amr_scan 1 adds
// them to the counters after this phase). The four children C0..C3 (corners at v0, v1, v2, then the
// centre one) take the ring's k-th element block or new ids; C0 takes the parent's slot, C1..C3
// holes 3k .. 3k + 2 left by coarsening, then new slots past the active ones. Child c gets c^c_k =
// sum_m W^c_km c^P_m (exact), computed after the workgroup's refinements by all its threads, a
// coefficient each, from the parent's coefficients (copied to the scratch register first with
// GK19's compaction, whose children overwrite the parent's slot). Side s of the parent is split:
// its halves go to children s and s + 1 (in the order the parent walks it); the
// interior edges (side s of corner child s + 2 and of the centre child) take the ring's k-th
// interior block or new ids, with the color of parent side s.
// With the compaction in order (IN_ORDER) the launch also places every element in its new slot,
// which amr_geometry then moves it to: a refined element's children, and over the other slots
// the element that stays (or the parent that coarsening put in its first child's slot), staged
// in order, the elements from slot i at placed_at(i) onwards; amr_scan 2 then adds the freed
// blocks to the rings' lengths (there is no amr_scan 1). The launch then has FIELD_THREADS more
// threads per slot (range.count = (1 + FIELD_THREADS) NE): thread (1 + f) NE + i stages field f
// of the element that stays in slot i (its NP rows, high and low words), so that the slot's own
// thread keeps the refinement, or the staged id, alone (the launch fills under half the GPU and
// waits on its threads' chains: BENCHMARKS.md, session 28). Register 0 is not written then, so
// the projection reads the parents there, and no scratch copy is made.

override NP: u32 = 3u;
// The solver's scratch register (GpuDg::SCRATCH_REGISTER: the limiter's, free between steps),
// which holds each refined parent's coefficients, at its slot, for the projection.
override SCRATCH: u32 = 4u;
// 1 with the compaction in order (Compaction::InOrder in src/solver/dg/amr/tree.rs), whose
// elements this launch also stages in their new slots: in register STAGING (a stage register
// of the solver, free between steps; GpuDg::STAGING_REGISTER), high and low words, with their
// ids in `placed`.
override IN_ORDER: u32 = 0u;
override STAGING: u32 = 1u;
// The field threads per slot with the compaction in order, one per conserved field
// (FIELD_THREADS in src/solver/dg/amr/gpu.rs sizes the launch).
const FIELD_THREADS: u32 = 4u;

@group(0) @binding(0) var<storage, read_write> slots: array<u32>;
@group(0) @binding(1) var<storage, read_write> element_tree: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read_write> element_edges: array<vec4<u32>>;
@group(0) @binding(3) var<storage, read_write> vertices: array<vec2<f32>>;
@group(0) @binding(4) var<storage, read_write> edge_tree: array<vec4<u32>>;
@group(0) @binding(5) var<storage, read_write> edge_sides: array<vec2<u32>>;
@group(0) @binding(6) var<storage, read> flags: array<i32>;
@group(0) @binding(7) var<storage, read> marks_scan: array<u32>;
@group(0) @binding(8) var<storage, read> rings: array<u32>;
@group(0) @binding(9) var<storage, read> counters: array<u32>;
@group(0) @binding(10) var<storage, read> holes: array<u32>;
@group(0) @binding(11) var<storage, read_write> regs: array<f32>;
@group(0) @binding(12) var<storage, read> weights: array<f32>;
// The marks' scan's block offsets (amr_scan 0 leaves them for the reader to add).
@group(0) @binding(13) var<storage, read> block_offsets: array<u32>;
// amr_mark's sides that refine per edge (NONE: not split).
@group(0) @binding(14) var<storage, read> split_sides: array<u32>;
// Register 0's low words (the solver's double-float pairs), 4 NP rows of NE: the children's
// are zero (their projections are in the high words).
@group(0) @binding(15) var<storage, read_write> regs_lo: array<f32>;
// With the compaction in order: new slot j's element id (amr_geometry takes it from here).
@group(0) @binding(16) var<storage, read_write> placed: array<u32>;
@group(1) @binding(0) var<uniform> range: ItemRange;
@group(2) @binding(0) var<uniform> params: AmrParams;

// The workgroup's refinements (refine's jobs), whose children's coefficients its threads then
// project together, one coefficient each: a thread alone took 4 NP^2 steps of loads and adds
// per refinement (at p = 4 the launch took 45 us on an H200 for a few refinements).
var<workgroup> jobs: array<vec4<u32>, WORKGROUP_SIZE>;
var<workgroup> job_count: atomic<u32>;

// Number i of the scan amr_scan ran: its block's prefix plus the block's offset.
fn number(i: u32) -> u32 {
    return marks_scan[i] + block_offsets[i / SCAN_BLOCK];
}

// With the compaction in order, the new slot of the first element that comes from slot i: the
// elements that come from the slots before it, i + 3 (refined before i) - (vacated before i)
// (amr_scan 0's second and fourth parts).
fn placed_at(i: u32) -> u32 {
    let refined = number(range.capacity + i) - number(range.capacity);
    let vacated = number(3u * range.capacity + i) - number(3u * range.capacity);
    return i + 3u * refined - vacated;
}

// Whether slot i is vacated: a coarsened cluster's child other than its first (amr_mark).
fn vacated(i: u32) -> bool {
    return number(3u * range.capacity + i + 1u) != number(3u * range.capacity + i);
}

// With the compaction in order: field f of the element in slot i, which stays (or is the
// parent that coarsening put there), staged in new slot j (its id by the slot's own thread).
fn stage_field(i: u32, j: u32, f: u32) {
    let staged = STAGING * 4u * NP * range.capacity;
    // #unroll
    for (var k = 0u; k < NP; k = k + 1u) {
        let row = (f * NP + k) * range.capacity;
        regs[staged + row + j] = regs[row + i];
        regs_lo[staged + row + j] = regs_lo[row + i];
    }
}

// The register the projection reads the parents from: register 0 with the compaction in order
// (this launch writes only the stage register), else the parents' copies in SCRATCH.
fn parent_register() -> u32 {
    return select(SCRATCH, 0u, IN_ORDER != 0u);
}

// Length of ring r with the blocks this adaptation's coarsening freed into it (the clusters'
// element and interior blocks, the freed split blocks).
fn ring_length(r: u32) -> u32 {
    let freed = select(counters[C_CLUSTERS], counters[C_SPLIT_FREES], r == 1u);
    return counters[C_RINGS + 2u * r + 1u] + freed;
}

// Block number k of ring r (width ids each) or a new one past `next`.
fn block(r: u32, k: u32, next: u32, width: u32) -> u32 {
    let len = ring_length(r);
    if (k < len) {
        return rings[ring_index(params, r, counters[C_RINGS + 2u * r], k)];
    }
    return next + width * (k - len);
}

// The first of the two halves of side edge e (the refining element on its side `side`): the
// halves it had, or those of this adaptation's split (written here by one of its sides).
fn halves(e: u32, side: u32) -> u32 {
    let sides = split_sides[e];
    if (sides == NONE) {
        return edge_tree[e].z;
    }
    let edges = edge_part(range.capacity, IN_ORDER);
    let k = number(edges + e) - number(edges);
    let len = ring_length(1u);
    var first: u32;
    if (k < len) {
        first = rings[ring_index(params, 1u, counters[C_RINGS + 2u], k)];
    } else {
        first = counters[C_EDGE_IDS] + 2u * (k - len);
    }
    let writer = select(1u, 0u, (sides & 1u) != 0u);
    if (side != writer) {
        return first;
    }
    let t = edge_tree[e];
    let colors = 2u * params.base_colors;
    let color = (t.x >> 8u) & 0xffu;
    let level = (t.x & 0xffu) + 1u;
    edge_tree[first] = vec4<u32>(level | (color << 8u) | EDGE_ALIVE, e, NONE, t.w);
    let second = (color + params.base_colors) % colors;
    edge_tree[first + 1u] = vec4<u32>(level | (second << 8u) | EDGE_ALIVE, e, NONE, t.w);
    if (sides != 3u) {
        edge_sides[2u * first + 1u - side] = vec2<u32>(NONE, 0u);
        edge_sides[2u * first + 3u - side] = vec2<u32>(NONE, 0u);
    }
    edge_tree[e].z = first;
    return first;
}

// Refine the element in slot i (flagged +1, num_active elements): its children, their edges
// and vertices, and with GK19's compaction its coefficients copied to the scratch register for
// the projection; the job for the projection: the parent's slot (child 0's) and the slots of
// children 1..3, or in order the parent's slot and from job.y on the children's staged slots
// (written to `placed`).
fn refine(i: u32, num_active: u32) -> vec4<u32> {
    let k = number(range.capacity + i) - number(range.capacity);
    let id = slots[i];
    let level = element_tree[id].x + 1u;
    let children = block(0u, k, counters[C_ELEMENT_IDS], 4u);
    var pos: array<u32, 4>;
    if (IN_ORDER != 0u) {
        // Child c in new slot placed_at(i) + c, where amr_geometry moves it.
        let at = placed_at(i);
        // #unroll
        for (var c = 0u; c < 4u; c = c + 1u) {
            pos[c] = at + c;
            placed[at + c] = children + c;
        }
    } else {
        let num_holes = 3u * counters[C_CLUSTERS];
        pos[0] = i;
        // #unroll
        for (var c = 1u; c < 4u; c = c + 1u) {
            let j = 3u * k + c - 1u;
            if (j < num_holes) {
                pos[c] = holes[j];
            } else {
                pos[c] = num_active + j - num_holes;
            }
        }
    }
    if (IN_ORDER == 0u) {
        // #unroll
        for (var j = 0u; j < 4u * NP; j = j + 1u) {
            regs[(SCRATCH * 4u * NP + j) * range.capacity + i] = regs[j * range.capacity + i];
        }
    }
    let v0 = vertices[3u * id];
    let v1 = vertices[3u * id + 1u];
    let v2 = vertices[3u * id + 2u];
    let m01 = 0.5 * (v0 + v1);
    let m12 = 0.5 * (v1 + v2);
    let m20 = 0.5 * (v2 + v0);
    let child_vertices = array<vec2<f32>, 12>(v0, m01, m20, m01, v1, m12, m20, m12, v2, m12, m20, m01);
    // #unroll
    for (var c = 0u; c < 4u; c = c + 1u) {
        let cid = children + c;
        element_tree[cid] = vec4<u32>(level, id, NONE, pos[c]);
        if (IN_ORDER == 0u) {
            slots[pos[c]] = cid;
        }
        // #unroll
        for (var j = 0u; j < 3u; j = j + 1u) {
            vertices[3u * cid + j] = child_vertices[3u * c + j];
        }
    }
    element_tree[id].z = children;
    element_tree[id].w = NONE;
    let sides = element_edges[id];
    var new_edges: array<vec4<u32>, 4>;
    // #unroll
    for (var s = 0u; s < 3u; s = s + 1u) {
        let e = sides[s];
        var side = 0u;
        if (edge_sides[2u * e].x != id) {
            side = 1u;
        }
        let first = halves(e, side);
        var a = first;
        var b = first + 1u;
        if (side == 1u) {
            a = first + 1u;
            b = first;
        }
        let ca = children + s;
        let cb = children + (s + 1u) % 3u;
        new_edges[s][s] = a;
        new_edges[(s + 1u) % 3u][s] = b;
        edge_sides[2u * a + side] = vec2<u32>(ca, s);
        edge_sides[2u * b + side] = vec2<u32>(cb, s);
    }
    // Edge ids past those the splits took (amr_scan 1 takes them after this phase).
    let split_ids = 2u * new_split_blocks(counters[C_SPLITS], ring_length(1u));
    let interior = block(2u, k, counters[C_EDGE_IDS] + split_ids, 3u);
    // #unroll
    for (var s = 0u; s < 3u; s = s + 1u) {
        let corner = (s + 2u) % 3u;
        let e = interior + s;
        let color = (edge_tree[sides[s]].x >> 8u) & 0xffu;
        edge_tree[e] = vec4<u32>(level | (color << 8u) | EDGE_ALIVE, NONE, NONE, EDGE_INTERIOR);
        edge_sides[2u * e] = vec2<u32>(children + corner, s);
        edge_sides[2u * e + 1u] = vec2<u32>(children + 3u, s);
        new_edges[corner][s] = e;
        new_edges[3][s] = e;
    }
    // #unroll
    for (var c = 0u; c < 4u; c = c + 1u) {
        new_edges[c].w = 0u;
        element_edges[children + c] = new_edges[c];
    }
    if (IN_ORDER != 0u) {
        return vec4<u32>(i, pos[0], pos[1], pos[2]);
    }
    return vec4<u32>(i, pos[1], pos[2], pos[3]);
}

// Coefficient kk of child c of `job`: c^c_kk = sum_m W^c_{kk m} c^P_m (exact for the
// polynomials of the parent; the sum over m in order), from the parent in parent_register();
// its low words zero (the projection is in the high words). It goes to slot job[c],
// or with the compaction in order to staged slot job.y + c.
fn project(job: vec4<u32>, c: u32, kk: u32) {
    var u = vec4<f32>(0.0);
    let parent_rows = parent_register() * 4u * NP;
    // #unroll
    for (var m = 0u; m < NP; m = m + 1u) {
        let parent = vec4<f32>(
            regs[(parent_rows + 0u * NP + m) * range.capacity + job.x],
            regs[(parent_rows + 1u * NP + m) * range.capacity + job.x],
            regs[(parent_rows + 2u * NP + m) * range.capacity + job.x],
            regs[(parent_rows + 3u * NP + m) * range.capacity + job.x],
        );
        u = u + weights[(c * NP + kk) * NP + m] * parent;
    }
    var to = job[c];
    var reg = 0u;
    if (IN_ORDER != 0u) {
        to = job.y + c;
        reg = STAGING * 4u * NP;
    }
    regs[(reg + 0u * NP + kk) * range.capacity + to] = u.x;
    regs[(reg + 1u * NP + kk) * range.capacity + to] = u.y;
    regs[(reg + 2u * NP + kk) * range.capacity + to] = u.z;
    regs[(reg + 3u * NP + kk) * range.capacity + to] = u.w;
    regs_lo[(reg + 0u * NP + kk) * range.capacity + to] = 0.0;
    regs_lo[(reg + 1u * NP + kk) * range.capacity + to] = 0.0;
    regs_lo[(reg + 2u * NP + kk) * range.capacity + to] = 0.0;
    regs_lo[(reg + 3u * NP + kk) * range.capacity + to] = 0.0;
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    if (lid == 0u) {
        atomicStore(&job_count, 0u);
    }
    workgroupBarrier();
    let t = linear_index(gid, nwg);
    let i = t % range.capacity;
    // 0: the slot's own thread; 1 + f: its field f (in order).
    let field = t / range.capacity;
    let num_active = counters[C_ACTIVE];
    // Nothing when amr_scan 0 decided that the adaptation does not run (the decision loaded
    // with the active count, not before it).
    let runs = counters[C_DECISION] == ADAPT_RUNS;
    if (runs && t < range.count && i < num_active) {
        if (field == 0u) {
            if (flags[i] > 0) {
                jobs[atomicAdd(&job_count, 1u)] = refine(i, num_active);
            } else if (IN_ORDER != 0u && !vacated(i)) {
                placed[placed_at(i)] = slots[i];
            }
        } else if (field <= FIELD_THREADS && flags[i] <= 0 && !vacated(i)) {
            stage_field(i, placed_at(i), field - 1u);
        }
    }
    // The jobs (and with GK19's compaction the parents' copies in the scratch register), seen
    // by the whole workgroup.
    storageBarrier();
    workgroupBarrier();
    let items = 4u * NP * atomicLoad(&job_count);
    for (var t = lid; t < items; t = t + WORKGROUP_SIZE) {
        let kk = t % NP;
        let c = (t / NP) % 4u;
        project(jobs[t / (4u * NP)], c, kk);
    }
}
