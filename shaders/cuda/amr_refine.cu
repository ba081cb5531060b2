// #include "common/dispatch.cuh"
// #include "common/amr_tree.cuh"

// CUDA twin of shaders/amr_refine.wgsl. Refinement, one thread per slot flagged +1, refined
// element number k in slot order (AdaptiveMesh::refine and split_edge in
// src/solver/dg/amr/tree.rs). A side whose edge amr_mark marked is split here: split edge
// number j (amr_scan 0's part of the edges) takes the ring's j-th split block or new ids past the
// ring's length, its halves get colors c and (c + K) mod 2K; the side that writes them (side 0
// when it refines, else side 1: split_sides) writes their records, the edge's child link and,
// when the other side does not refine, clears the other side's entries of the halves. The
// rings' lengths count the blocks amr_coarsen freed into them (amr_scan 1 adds them to the
// counters after this phase). The four children C0..C3 (corners at v0, v1, v2, then the centre
// one) take the ring's k-th element block or new ids; C0 takes the parent's slot, C1..C3 holes
// 3k .. 3k + 2 left by coarsening, then new slots past the active ones. Child c gets
// c^c_k = sum_m W^c_km c^P_m (exact), computed after the block's refinements by all its
// threads, a coefficient each, from the parent's coefficients (copied to the scratch register
// first with GK19's compaction, whose children overwrite the parent's slot). Side s of the
// parent is split: its halves go to children s and s + 1 (in the order the parent walks it);
// the interior edges (side s of corner child s + 2 and of the centre child)
// take the ring's k-th interior block or new ids, with the color of parent side s.
// With the compaction in order (IN_ORDER) the launch also places every element in its new slot,
// which amr_geometry then moves it to: a refined element's children, and over the other slots
// the element that stays (or the parent that coarsening put in its first child's slot), staged
// in order, the elements from slot i at placed_at(i) onwards; amr_scan 2 then adds the freed
// blocks to the rings' lengths (there is no amr_scan 1). The launch then has 4 more threads per
// slot (range.count = 5 NE, as the WGSL twin's FIELD_THREADS): thread (1 + f) NE + i stages
// field f of the element that stays in slot i, so that the slot's own thread keeps the
// refinement, or the staged id, alone. Register 0 is not written then, so the projection reads
// the parents there, and no scratch copy is made.
//
// The WGSL override constants are preprocessor defines here (the host passes -D values); the
// capacity NE is the module constant of common/dispatch.cuh (WGSL: range.capacity).

#ifndef NP
#define NP 3u
#endif
// The solver's scratch register (GpuDg::SCRATCH_REGISTER: the limiter's, free between steps),
// which holds each refined parent's coefficients, at its slot, for the projection.
#ifndef SCRATCH
#define SCRATCH 4u
#endif
// 1 with the compaction in order (Compaction::InOrder in src/solver/dg/amr/tree.rs), whose
// elements this launch also stages in their new slots: in register STAGING (a stage register
// of the solver, free between steps; GpuDg::STAGING_REGISTER), high and low words, with their
// ids in `placed`.
#ifndef IN_ORDER
#define IN_ORDER 0u
#endif
#ifndef STAGING
#define STAGING 1u
#endif

// Length of ring r with the blocks this adaptation's coarsening freed into it (the clusters'
// element and interior blocks, the freed split blocks).
__device__ __forceinline__ u32 ring_length(u32 r, const u32* counters) {
    u32 freed = r == 1u ? counters[C_SPLIT_FREES] : counters[C_CLUSTERS];
    return counters[C_RINGS + 2u * r + 1u] + freed;
}

// Numbers of the marks' scan: the block prefix plus the block offset (amr_scan 0).
__device__ __forceinline__ u32 number(u32 i, const u32* marks_scan, const u32* block_offsets) {
    return marks_scan[i] + block_offsets[i / SCAN_BLOCK];
}

// With the compaction in order, the new slot of the first element that comes from slot i: the
// elements that come from the slots before it, i + 3 (refined before i) - (vacated before i)
// (amr_scan 0's second and fourth parts).
__device__ __forceinline__ u32 placed_at(u32 i, const u32* marks_scan, const u32* block_offsets) {
    u32 refined = number(NE + i, marks_scan, block_offsets) - number(NE, marks_scan, block_offsets);
    u32 vacated = number(3u * NE + i, marks_scan, block_offsets) -
                  number(3u * NE, marks_scan, block_offsets);
    return i + 3u * refined - vacated;
}

// Whether slot i is vacated: a coarsened cluster's child other than its first (amr_mark).
__device__ __forceinline__ bool vacated(u32 i, const u32* marks_scan, const u32* block_offsets) {
    return number(3u * NE + i + 1u, marks_scan, block_offsets) !=
           number(3u * NE + i, marks_scan, block_offsets);
}

// With the compaction in order: field f of the element in slot i, which stays (or is the
// parent that coarsening put there), staged in new slot j (its id by the slot's own thread).
__device__ __forceinline__ void stage_field(u32 i, u32 j, u32 f, float* regs, float* regs_lo) {
    u32 staged = STAGING * 4u * NP * NE;
#pragma unroll
    for (u32 k = 0u; k < NP; k = k + 1u) {
        u32 row = (f * NP + k) * NE;
        regs[staged + row + j] = regs[row + i];
        regs_lo[staged + row + j] = regs_lo[row + i];
    }
}

// The register the projection reads the parents from: register 0 with the compaction in order
// (this launch writes only the stage register), else the parents' copies in SCRATCH.
#define PARENT_REGISTER (IN_ORDER != 0u ? 0u : SCRATCH)

// The field threads per slot with the compaction in order, one per conserved field (the WGSL
// twin's FIELD_THREADS; src/solver/dg/amr/gpu.rs sizes the launch).
#define FIELD_THREADS 4u

// Block number k of ring r (width ids each) or a new one past `next`.
__device__ __forceinline__ u32 block(
    u32 r,
    u32 k,
    u32 next,
    u32 width,
    const u32* rings,
    const u32* counters,
    const AmrParams& params) {
    u32 len = ring_length(r, counters);
    if (k < len) {
        return rings[ring_index(params, r, counters[C_RINGS + 2u * r], k)];
    }
    return next + width * (k - len);
}

// The first of the two halves of side edge e (the refining element on its side `side`): the
// halves it had, or those of this adaptation's split (written here by one of its sides).
__device__ u32 halves(
    u32 e,
    u32 side,
    uint4* edge_tree,
    uint2* edge_sides,
    const u32* rings,
    const u32* counters,
    const u32* split_sides,
    const u32* marks_scan,
    const u32* block_offsets,
    const AmrParams& params) {
    u32 sides = split_sides[e];
    if (sides == NONE) {
        return edge_tree[e].z;
    }
    u32 edges = edge_part(NE, IN_ORDER);
    u32 k = number(edges + e, marks_scan, block_offsets) - number(edges, marks_scan, block_offsets);
    u32 len = ring_length(1u, counters);
    u32 first = k < len ? rings[ring_index(params, 1u, counters[C_RINGS + 2u], k)]
                        : counters[C_EDGE_IDS] + 2u * (k - len);
    u32 writer = (sides & 1u) != 0u ? 0u : 1u;
    if (side != writer) {
        return first;
    }
    uint4 t = edge_tree[e];
    u32 colors = 2u * params.base_colors;
    u32 color = (t.x >> 8u) & 0xffu;
    u32 level = (t.x & 0xffu) + 1u;
    edge_tree[first] = make_uint4(level | (color << 8u) | EDGE_ALIVE, e, NONE, t.w);
    u32 second = (color + params.base_colors) % colors;
    edge_tree[first + 1u] = make_uint4(level | (second << 8u) | EDGE_ALIVE, e, NONE, t.w);
    if (sides != 3u) {
        edge_sides[2u * first + 1u - side] = make_uint2(NONE, 0u);
        edge_sides[2u * first + 3u - side] = make_uint2(NONE, 0u);
    }
    edge_tree[e].z = first;
    return first;
}

// Refine the element in slot i (flagged +1, num_active elements): its children, their edges
// and vertices, and its coefficients copied to the scratch register for the projection; the
// job for the projection: the parent's slot (child 0's) and the slots of children 1..3, or in
// order the parent's slot and from job.y on the children's staged slots (written to `placed`).
__device__ uint4 refine(
    u32 i,
    u32 num_active,
    u32* slots,
    uint4* element_tree,
    uint4* element_edges,
    float2* vertices,
    uint4* edge_tree,
    uint2* edge_sides,
    const u32* marks_scan,
    const u32* rings,
    const u32* counters,
    const u32* holes,
    float* regs,
    const u32* block_offsets,
    const u32* split_sides,
    u32* placed,
    const AmrParams& params) {
    u32 k = number(NE + i, marks_scan, block_offsets) - number(NE, marks_scan, block_offsets);
    u32 id = slots[i];
    u32 level = element_tree[id].x + 1u;
    u32 children = block(0u, k, counters[C_ELEMENT_IDS], 4u, rings, counters, params);
    u32 pos[4];
    if (IN_ORDER != 0u) {
        // Child c in new slot placed_at(i) + c, where amr_geometry moves it.
        u32 at = placed_at(i, marks_scan, block_offsets);
        for (u32 c = 0u; c < 4u; c = c + 1u) {
            pos[c] = at + c;
            placed[at + c] = children + c;
        }
    } else {
        u32 num_holes = 3u * counters[C_CLUSTERS];
        pos[0] = i;
        for (u32 c = 1u; c < 4u; c = c + 1u) {
            u32 j = 3u * k + c - 1u;
            if (j < num_holes) {
                pos[c] = holes[j];
            } else {
                pos[c] = num_active + j - num_holes;
            }
        }
    }
    if (IN_ORDER == 0u) {
        for (u32 j = 0u; j < 4u * NP; j = j + 1u) {
            regs[(SCRATCH * 4u * NP + j) * NE + i] = regs[j * NE + i];
        }
    }
    float2 v0 = vertices[3u * id];
    float2 v1 = vertices[3u * id + 1u];
    float2 v2 = vertices[3u * id + 2u];
    float2 m01 = 0.5f * (v0 + v1);
    float2 m12 = 0.5f * (v1 + v2);
    float2 m20 = 0.5f * (v2 + v0);
    float2 child_vertices[12] = {v0, m01, m20, m01, v1, m12, m20, m12, v2, m12, m20, m01};
    for (u32 c = 0u; c < 4u; c = c + 1u) {
        u32 cid = children + c;
        element_tree[cid] = make_uint4(level, id, NONE, pos[c]);
        if (IN_ORDER == 0u) {
            slots[pos[c]] = cid;
        }
        for (u32 j = 0u; j < 3u; j = j + 1u) {
            vertices[3u * cid + j] = child_vertices[3u * c + j];
        }
    }
    element_tree[id].z = children;
    element_tree[id].w = NONE;
    uint4 sides = element_edges[id];
    // Zeroed as a WGSL var is.
    uint4 new_edges[4] = {};
    for (u32 s = 0u; s < 3u; s = s + 1u) {
        u32 e = at(sides, s);
        u32 side = 0u;
        if (edge_sides[2u * e].x != id) {
            side = 1u;
        }
        u32 first = halves(e, side, edge_tree, edge_sides, rings, counters, split_sides,
                           marks_scan, block_offsets, params);
        u32 a = first;
        u32 b = first + 1u;
        if (side == 1u) {
            a = first + 1u;
            b = first;
        }
        u32 ca = children + s;
        u32 cb = children + (s + 1u) % 3u;
        at(new_edges[s], s) = a;
        at(new_edges[(s + 1u) % 3u], s) = b;
        edge_sides[2u * a + side] = make_uint2(ca, s);
        edge_sides[2u * b + side] = make_uint2(cb, s);
    }
    // Edge ids past those the splits took (amr_scan 1 takes them after this phase).
    u32 split_ids = 2u * new_split_blocks(counters[C_SPLITS], ring_length(1u, counters));
    u32 interior = block(2u, k, counters[C_EDGE_IDS] + split_ids, 3u, rings, counters, params);
    for (u32 s = 0u; s < 3u; s = s + 1u) {
        u32 corner = (s + 2u) % 3u;
        u32 e = interior + s;
        u32 color = (edge_tree[at(sides, s)].x >> 8u) & 0xffu;
        edge_tree[e] = make_uint4(level | (color << 8u) | EDGE_ALIVE, NONE, NONE, EDGE_INTERIOR);
        edge_sides[2u * e] = make_uint2(children + corner, s);
        edge_sides[2u * e + 1u] = make_uint2(children + 3u, s);
        at(new_edges[corner], s) = e;
        at(new_edges[3], s) = e;
    }
    for (u32 c = 0u; c < 4u; c = c + 1u) {
        new_edges[c].w = 0u;
        element_edges[children + c] = new_edges[c];
    }
    if (IN_ORDER != 0u) {
        return make_uint4(i, pos[0], pos[1], pos[2]);
    }
    return make_uint4(i, pos[1], pos[2], pos[3]);
}

// Coefficient kk of child c of `job`: c^c_kk = sum_m W^c_{kk m} c^P_m (exact for the
// polynomials of the parent; the sum over m in order), from the parent in PARENT_REGISTER;
// its low words zero (the projection is in the high words). It goes to slot job[c],
// or with the compaction in order to staged slot job.y + c.
__device__ void project(
    uint4 job,
    u32 c,
    u32 kk,
    float* regs,
    const float* weights,
    float* regs_lo) {
    float4 u = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
#pragma unroll
    for (u32 m = 0u; m < NP; m = m + 1u) {
        float4 parent = make_float4(
            regs[(PARENT_REGISTER * 4u * NP + 0u * NP + m) * NE + job.x],
            regs[(PARENT_REGISTER * 4u * NP + 1u * NP + m) * NE + job.x],
            regs[(PARENT_REGISTER * 4u * NP + 2u * NP + m) * NE + job.x],
            regs[(PARENT_REGISTER * 4u * NP + 3u * NP + m) * NE + job.x]);
        u = u + weights[(c * NP + kk) * NP + m] * parent;
    }
    u32 to = IN_ORDER != 0u ? job.y + c : at(job, c);
    u32 reg = IN_ORDER != 0u ? STAGING * 4u * NP : 0u;
    regs[(reg + 0u * NP + kk) * NE + to] = u.x;
    regs[(reg + 1u * NP + kk) * NE + to] = u.y;
    regs[(reg + 2u * NP + kk) * NE + to] = u.z;
    regs[(reg + 3u * NP + kk) * NE + to] = u.w;
    regs_lo[(reg + 0u * NP + kk) * NE + to] = 0.0f;
    regs_lo[(reg + 1u * NP + kk) * NE + to] = 0.0f;
    regs_lo[(reg + 2u * NP + kk) * NE + to] = 0.0f;
    regs_lo[(reg + 3u * NP + kk) * NE + to] = 0.0f;
}

// The block's refinements (refine's jobs), whose children's coefficients its threads then
// project together, one coefficient each: a thread alone took 4 NP^2 steps of loads and adds
// per refinement (at p = 4 the launch took 45 us on an H200 for a few refinements).
__shared__ uint4 jobs[WORKGROUP_SIZE];
__shared__ u32 job_count;

extern "C" __global__ void amr_refine(
    u32* slots,
    uint4* element_tree,
    uint4* element_edges,
    float2* vertices,
    uint4* edge_tree,
    uint2* edge_sides,
    const int* __restrict__ flags,
    const u32* __restrict__ marks_scan,
    const u32* __restrict__ rings,
    const u32* __restrict__ counters,
    const u32* __restrict__ holes,
    float* regs,
    const float* __restrict__ weights,
    const u32* __restrict__ block_offsets,
    const u32* __restrict__ split_sides,
    float* regs_lo,
    u32* placed,
    AmrParams params,
    ItemRange range) {
    await_previous_launches();
    if (threadIdx.x == 0u) {
        job_count = 0u;
    }
    __syncthreads();
    u32 t = linear_index();
    u32 i = t % NE;
    // 0: the slot's own thread; 1 + f: its field f (in order).
    u32 field = t / NE;
    u32 num_active = counters[C_ACTIVE];
    // Nothing when amr_scan 0 decided that the adaptation does not run (the decision loaded
    // with the active count, not before it).
    bool runs = counters[C_DECISION] == ADAPT_RUNS;
    if (runs && t < range.count && i < num_active) {
        if (field == 0u) {
            if (flags[i] > 0) {
                jobs[atomicAdd(&job_count, 1u)] =
                    refine(i, num_active, slots, element_tree, element_edges, vertices,
                           edge_tree, edge_sides, marks_scan, rings, counters, holes, regs,
                           block_offsets, split_sides, placed, params);
            } else if (IN_ORDER != 0u && !vacated(i, marks_scan, block_offsets)) {
                placed[placed_at(i, marks_scan, block_offsets)] = slots[i];
            }
        } else if (field <= FIELD_THREADS && flags[i] <= 0 &&
                   !vacated(i, marks_scan, block_offsets)) {
            stage_field(i, placed_at(i, marks_scan, block_offsets), field - 1u, regs, regs_lo);
        }
    }
    // The jobs (and with GK19's compaction the parents' copies in the scratch register), seen
    // by the whole block.
    __syncthreads();
    u32 items = 4u * NP * job_count;
    for (u32 t = threadIdx.x; t < items; t = t + WORKGROUP_SIZE) {
        u32 kk = t % NP;
        u32 c = (t / NP) % 4u;
        project(jobs[t / (4u * NP)], c, kk, regs, weights, regs_lo);
    }
}
