// #include "common/dispatch.cuh"
// #include "common/amr_tree.cuh"

// CUDA twin of shaders/amr_coarsen.wgsl. Coarsening of the sibling clusters, one thread per
// slot, the cluster k = marks_scan[i] when slot i holds its first child (AdaptiveMesh::coarsen
// in src/solver/dg/amr/tree.rs, the clusters in slot order), after amr_mark decided which
// sides free their split edges (work[i], their places in the ring from the scan's third part):
// the parent takes its first child's slot with the L2 projection
// c^P_m = 1/4 sum_c sum_k W^c_km c^c_k (weights W^c from Projection; computed after the block's
// clusters by all its threads, a coefficient each), the other three slots become holes
// 3k .. 3k + 2, and the element block, the interior edges and the freed split
// blocks join the tails of their rings in cluster order. The halves of a kept side (the
// children's edges there) lose their elements on this side. The cluster's thread does the
// element tree, the slots and the element and interior blocks; the block's threads then share
// out child 0's copy to the scratch register (a row each) and the parent's sides (one each),
// then the projection (as the WGSL twin).
//
// The WGSL override constants are preprocessor defines here (the host passes -D values); the
// capacity NE is the module constant of common/dispatch.cuh (WGSL: range.capacity).

#ifndef NP
#define NP 3u
#endif
// The solver's scratch register (GpuDg::SCRATCH_REGISTER: the limiter's, free between steps),
// which holds each cluster's child 0 coefficients, at its slot, for the projection.
#ifndef SCRATCH
#define SCRATCH 4u
#endif

__device__ __forceinline__ bool is_cluster(u32 i, const u32* marks, const u32* counters) {
    return i < counters[C_ACTIVE] && marks[i] == 1u;
}

// Coarsen the cluster whose first child is in slot i: the element tree, the slots and holes,
// the element and interior blocks, and its side job (`side_job`); returns the job for the
// projection: the children's slots (the parent takes child 0's).
__device__ uint4 coarsen(
    u32 i,
    u32* slots,
    uint4* element_tree,
    const uint4* element_edges,
    uint4* edge_tree,
    uint2* edge_sides,
    const u32* marks_scan,
    const u32* block_offsets,
    const u32* work,
    u32* rings,
    const u32* counters,
    u32* holes,
    uint4* side_job,
    const AmrParams& params) {
    // Numbers of the marks' scan: the block prefix plus the block offset (amr_scan 0).
    auto number = [&](u32 j) { return marks_scan[j] + block_offsets[j / SCAN_BLOCK]; };
    u32 k = number(i);
    u32 parent = element_tree[slots[i]].y;
    u32 block = element_tree[parent].z;
    u32 pos[4];
    for (u32 c = 0u; c < 4u; c = c + 1u) {
        pos[c] = element_tree[block + c].w;
    }
    slots[pos[0]] = parent;
    for (u32 c = 1u; c < 4u; c = c + 1u) {
        slots[pos[c]] = NONE;
        holes[3u * k + c - 1u] = pos[c];
    }
    for (u32 c = 0u; c < 4u; c = c + 1u) {
        element_tree[block + c].w = NONE;
    }
    element_tree[parent].w = pos[0];
    element_tree[parent].z = NONE;
    rings[ring_index(params, 0u, counters[C_RINGS], counters[C_RINGS + 1u] + k)] = block;
    u32 interior = element_edges[block + 3u].x;
    for (u32 e = interior; e < interior + 3u; e = e + 1u) {
        edge_tree[e].x = edge_tree[e].x & ~EDGE_ALIVE;
    }
    rings[ring_index(params, 2u, counters[C_RINGS + 4u], counters[C_RINGS + 5u] + k)] = interior;
    u32 freed = number(2u * NE + i) - number(2u * NE);
    *side_job = make_uint4(parent, block, work[i], freed);
    return make_uint4(pos[0], pos[1], pos[2], pos[3]);
}

// Side s of a cluster's parent (its side job: parent, element block, freed-side mask, ring
// place of its first freed split block; as the WGSL twin).
__device__ void parent_side(
    uint4 job,
    u32 s,
    const uint4* element_edges,
    uint4* edge_tree,
    uint2* edge_sides,
    u32* rings,
    const u32* counters,
    const AmrParams& params) {
    u32 parent = job.x;
    u32 block = job.y;
    u32 mask = job.z;
    u32 e = word(element_edges, parent, s);
    if ((mask & (1u << s)) == 0u) {
        // Kept: the halves are sides s of children s and s + 1 (read from the children, not
        // from edge e, whose halves a later cluster across may free in this launch).
        u32 side = edge_sides[2u * e].x != parent ? 1u : 0u;
        edge_sides[2u * word(element_edges, block + s, s) + side].x = NONE;
        edge_sides[2u * word(element_edges, block + (s + 1u) % 3u, s) + side].x = NONE;
        return;
    }
    u32 half = edge_tree[e].z;
    edge_tree[half].x = edge_tree[half].x & ~EDGE_ALIVE;
    edge_tree[half + 1u].x = edge_tree[half + 1u].x & ~EDGE_ALIVE;
    edge_tree[e].z = NONE;
    u32 at = counters[C_RINGS + 3u] + job.w + __popc(mask & ((1u << s) - 1u));
    rings[ring_index(params, 1u, counters[C_RINGS + 2u], at)] = half;
}

// Coefficient m of the parent of `job`: c^P_m = 1/4 sum_c sum_k W^c_km c^c_k (over c, then k,
// in order), child 0's coefficients from the scratch register; its low words zero (the
// projection is in the high words).
__device__ void project(uint4 job, u32 m, float* regs, const float* weights, float* regs_lo) {
    float4 u = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
#pragma unroll
    for (u32 c = 0u; c < 4u; c = c + 1u) {
        u32 base = c == 0u ? SCRATCH * 4u * NP : 0u;
#pragma unroll
        for (u32 kk = 0u; kk < NP; kk = kk + 1u) {
            float4 a = make_float4(
                regs[(base + 0u * NP + kk) * NE + at(job, c)],
                regs[(base + 1u * NP + kk) * NE + at(job, c)],
                regs[(base + 2u * NP + kk) * NE + at(job, c)],
                regs[(base + 3u * NP + kk) * NE + at(job, c)]);
            u = u + (0.25f * weights[(c * NP + kk) * NP + m]) * a;
        }
    }
    regs[(0u * NP + m) * NE + job.x] = u.x;
    regs[(1u * NP + m) * NE + job.x] = u.y;
    regs[(2u * NP + m) * NE + job.x] = u.z;
    regs[(3u * NP + m) * NE + job.x] = u.w;
    regs_lo[(0u * NP + m) * NE + job.x] = 0.0f;
    regs_lo[(1u * NP + m) * NE + job.x] = 0.0f;
    regs_lo[(2u * NP + m) * NE + job.x] = 0.0f;
    regs_lo[(3u * NP + m) * NE + job.x] = 0.0f;
}

// The block's clusters (coarsen's jobs): the children's slots, whose parents' coefficients its
// threads then project together, one coefficient each, as amr_refine projects its children;
// and the side jobs (parent, element block, freed-side mask, first freed block's ring place).
__shared__ uint4 jobs[WORKGROUP_SIZE];
__shared__ uint4 side_jobs[WORKGROUP_SIZE];
__shared__ u32 job_count;

extern "C" __global__ void amr_coarsen(
    u32* slots,
    uint4* element_tree,
    const uint4* __restrict__ element_edges,
    uint4* edge_tree,
    uint2* edge_sides,
    const u32* __restrict__ marks,
    const u32* __restrict__ marks_scan,
    const u32* __restrict__ work,
    u32* rings,
    const u32* __restrict__ counters,
    u32* holes,
    float* regs,
    const float* __restrict__ weights,
    const u32* __restrict__ block_offsets,
    float* regs_lo,
    AmrParams params,
    ItemRange range) {
    await_previous_launches();
    if (threadIdx.x == 0u) {
        job_count = 0u;
    }
    __syncthreads();
    u32 i = linear_index();
    // Nothing when amr_scan 0 decided that the adaptation does not run (the decision loaded
    // with the cluster mark, not before it).
    bool runs = counters[C_DECISION] == ADAPT_RUNS;
    bool cluster = i < range.count && is_cluster(i, marks, counters);
    if (runs && cluster) {
        u32 slot = atomicAdd(&job_count, 1u);
        jobs[slot] =
            coarsen(i, slots, element_tree, element_edges, edge_tree, edge_sides, marks_scan,
                    block_offsets, work, rings, counters, holes, &side_jobs[slot], params);
    }
    // The jobs, seen by the whole block.
    __syncthreads();
    u32 clusters = job_count;
    // Child 0's coefficients to the scratch register (the parent takes its slot), a row a
    // thread, and the parents' sides, a side a thread.
    u32 rows = 4u * NP * clusters;
    for (u32 t = threadIdx.x; t < rows + 3u * clusters; t = t + WORKGROUP_SIZE) {
        if (t < rows) {
            u32 row = (t % (4u * NP)) * NE + jobs[t / (4u * NP)].x;
            regs[SCRATCH * 4u * NP * NE + row] = regs[row];
        } else {
            parent_side(side_jobs[(t - rows) / 3u], (t - rows) % 3u, element_edges, edge_tree,
                        edge_sides, rings, counters, params);
        }
    }
    // Child 0's copies in the scratch register, seen by the whole block.
    __syncthreads();
    u32 items = NP * clusters;
    for (u32 t = threadIdx.x; t < items; t = t + WORKGROUP_SIZE) {
        project(jobs[t / NP], t % NP, regs, weights, regs_lo);
    }
}
