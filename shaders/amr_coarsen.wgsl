// #include "common/dispatch.wgsl"
// #include "common/amr_tree.wgsl"

// Coarsening of the sibling clusters, one thread per slot, the cluster k = marks_scan[i] when
// slot i holds its first child (AdaptiveMesh::coarsen in src/solver/dg/amr/tree.rs, the
// clusters in slot order), after amr_mark decided which sides free their split edges
// (work[i], their places in the ring from the scan's third part): the parent takes its first
// child's slot with the L2 projection c^P_m = 1/4 sum_c sum_k W^c_km c^c_k (weights W^c from
// Projection; computed after the workgroup's clusters by all its threads, a coefficient each),
// the other three slots become holes 3k .. 3k + 2, and the element block, the
// interior edges and the freed split blocks join the tails of their rings in cluster order.
// The halves of a kept side (the children's edges there) lose their elements on this side.
// The cluster's thread does the element tree, the slots and the element and interior blocks;
// the workgroup's threads then share out child 0's copy to the scratch register (a row each)
// and the parent's sides (one each: freeing or keeping the halves, the freed ones' ring places
// from the scan's third part and the freed sides before them), then the projection. At 33k
// elements the launch fills under half the GPU and waits on its cluster threads' chains
// (BENCHMARKS.md, session 28): these are taken out of them.

override NP: u32 = 3u;
// The solver's scratch register (GpuDg::SCRATCH_REGISTER: the limiter's, free between steps),
// which holds each cluster's child 0 coefficients, at its slot, for the projection.
override SCRATCH: u32 = 4u;

@group(0) @binding(0) var<storage, read_write> slots: array<u32>;
@group(0) @binding(1) var<storage, read_write> element_tree: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read> element_edges: array<vec4<u32>>;
@group(0) @binding(3) var<storage, read_write> edge_tree: array<vec4<u32>>;
@group(0) @binding(4) var<storage, read_write> edge_sides: array<vec2<u32>>;
@group(0) @binding(5) var<storage, read> marks: array<u32>;
@group(0) @binding(6) var<storage, read> marks_scan: array<u32>;
@group(0) @binding(7) var<storage, read> work: array<u32>;
@group(0) @binding(8) var<storage, read_write> rings: array<u32>;
@group(0) @binding(9) var<storage, read> counters: array<u32>;
@group(0) @binding(10) var<storage, read_write> holes: array<u32>;
@group(0) @binding(11) var<storage, read_write> regs: array<f32>;
@group(0) @binding(12) var<storage, read> weights: array<f32>;
// The marks' scan's block offsets (amr_scan 0 leaves them for the reader to add).
@group(0) @binding(13) var<storage, read> block_offsets: array<u32>;
// Register 0's low words (the solver's double-float pairs), 4 NP rows of NE: the parent's
// are zero (its projection is in the high words); every other slot's stay with its element.
@group(0) @binding(14) var<storage, read_write> regs_lo: array<f32>;
@group(1) @binding(0) var<uniform> range: ItemRange;
@group(2) @binding(0) var<uniform> params: AmrParams;

// The workgroup's clusters (coarsen's jobs): the children's slots, whose parents' coefficients
// its threads then project together, one coefficient each, as amr_refine projects its
// children; and per cluster its parent, element block, freed-side mask and first freed split
// block's ring place, for the sides.
var<workgroup> jobs: array<vec4<u32>, WORKGROUP_SIZE>;
var<workgroup> side_jobs: array<vec4<u32>, WORKGROUP_SIZE>;
var<workgroup> job_count: atomic<u32>;

// Number i of the scan amr_scan ran: its block's prefix plus the block's offset.
fn number(i: u32) -> u32 {
    return marks_scan[i] + block_offsets[i / SCAN_BLOCK];
}

fn is_cluster(i: u32) -> bool {
    return i < counters[C_ACTIVE] && marks[i] == 1u;
}

// Coarsen the cluster whose first child is in slot i, job `slot` of the workgroup: the
// element tree, the slots and holes, the element and interior blocks, and its side job
// (side_jobs[slot]); returns the job for the projection: the children's slots (the parent
// takes child 0's).
fn coarsen(i: u32, slot: u32) -> vec4<u32> {
    let k = number(i);
    let parent = element_tree[slots[i]].y;
    let block = element_tree[parent].z;
    var pos: array<u32, 4>;
    // #unroll
    for (var c = 0u; c < 4u; c = c + 1u) {
        pos[c] = element_tree[block + c].w;
    }
    slots[pos[0]] = parent;
    // #unroll
    for (var c = 1u; c < 4u; c = c + 1u) {
        slots[pos[c]] = NONE;
        holes[3u * k + c - 1u] = pos[c];
    }
    // #unroll
    for (var c = 0u; c < 4u; c = c + 1u) {
        element_tree[block + c].w = NONE;
    }
    element_tree[parent].w = pos[0];
    element_tree[parent].z = NONE;
    rings[ring_index(params, 0u, counters[C_RINGS], counters[C_RINGS + 1u] + k)] = block;
    let interior = element_edges[block + 3u].x;
    for (var e = interior; e < interior + 3u; e = e + 1u) {
        edge_tree[e].x = edge_tree[e].x & ~EDGE_ALIVE;
    }
    rings[ring_index(params, 2u, counters[C_RINGS + 4u], counters[C_RINGS + 5u] + k)] = interior;
    let freed = number(2u * range.capacity + i) - number(2u * range.capacity);
    side_jobs[slot] = vec4<u32>(parent, block, work[i], freed);
    return vec4<u32>(pos[0], pos[1], pos[2], pos[3]);
}

// Side s of a cluster's parent (its side job: parent, element block, freed-side mask, ring
// place of its first freed split block): the halves of a freed side die and their block joins
// the ring after the freed sides before it; those of a kept side lose their elements here.
fn parent_side(job: vec4<u32>, s: u32) {
    let parent = job.x;
    let block = job.y;
    let mask = job.z;
    let e = element_edges[parent][s];
    if ((mask & (1u << s)) == 0u) {
        // Kept: the halves are sides s of children s and s + 1 (read from the children, not
        // from edge e, whose halves a later cluster across may free in this launch).
        var side = 0u;
        if (edge_sides[2u * e].x != parent) {
            side = 1u;
        }
        edge_sides[2u * element_edges[block + s][s] + side].x = NONE;
        edge_sides[2u * element_edges[block + (s + 1u) % 3u][s] + side].x = NONE;
        return;
    }
    let half = edge_tree[e].z;
    edge_tree[half].x = edge_tree[half].x & ~EDGE_ALIVE;
    edge_tree[half + 1u].x = edge_tree[half + 1u].x & ~EDGE_ALIVE;
    edge_tree[e].z = NONE;
    let at = counters[C_RINGS + 3u] + job.w + countOneBits(mask & ((1u << s) - 1u));
    rings[ring_index(params, 1u, counters[C_RINGS + 2u], at)] = half;
}

// Coefficient m of the parent of `job`: c^P_m = 1/4 sum_c sum_k W^c_km c^c_k (over c, then k,
// in order), child 0's coefficients from the scratch register; its low words zero (the
// projection is in the high words).
fn project(job: vec4<u32>, m: u32) {
    var u = vec4<f32>(0.0);
    // #unroll
    for (var c = 0u; c < 4u; c = c + 1u) {
        let base = select(0u, SCRATCH * 4u * NP, c == 0u);
        // #unroll
        for (var kk = 0u; kk < NP; kk = kk + 1u) {
            let a = vec4<f32>(
                regs[(base + 0u * NP + kk) * range.capacity + job[c]],
                regs[(base + 1u * NP + kk) * range.capacity + job[c]],
                regs[(base + 2u * NP + kk) * range.capacity + job[c]],
                regs[(base + 3u * NP + kk) * range.capacity + job[c]],
            );
            u = u + (0.25 * weights[(c * NP + kk) * NP + m]) * a;
        }
    }
    regs[(0u * NP + m) * range.capacity + job.x] = u.x;
    regs[(1u * NP + m) * range.capacity + job.x] = u.y;
    regs[(2u * NP + m) * range.capacity + job.x] = u.z;
    regs[(3u * NP + m) * range.capacity + job.x] = u.w;
    regs_lo[(0u * NP + m) * range.capacity + job.x] = 0.0;
    regs_lo[(1u * NP + m) * range.capacity + job.x] = 0.0;
    regs_lo[(2u * NP + m) * range.capacity + job.x] = 0.0;
    regs_lo[(3u * NP + m) * range.capacity + job.x] = 0.0;
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
    let i = linear_index(gid, nwg);
    // Nothing when amr_scan 0 decided that the adaptation does not run (the decision loaded
    // with the cluster mark, not before it).
    let runs = counters[C_DECISION] == ADAPT_RUNS;
    let cluster = i < range.count && is_cluster(i);
    if (runs && cluster) {
        let slot = atomicAdd(&job_count, 1u);
        jobs[slot] = coarsen(i, slot);
    }
    // The jobs, seen by the whole workgroup.
    workgroupBarrier();
    let clusters = atomicLoad(&job_count);
    // Child 0's coefficients to the scratch register (the parent takes its slot), a row a
    // thread, and the parents' sides, a side a thread.
    let rows = 4u * NP * clusters;
    for (var t = lid; t < rows + 3u * clusters; t = t + WORKGROUP_SIZE) {
        if (t < rows) {
            let row = (t % (4u * NP)) * range.capacity + jobs[t / (4u * NP)].x;
            regs[SCRATCH * 4u * NP * range.capacity + row] = regs[row];
        } else {
            parent_side(side_jobs[(t - rows) / 3u], (t - rows) % 3u);
        }
    }
    // Child 0's copies in the scratch register, seen by the whole workgroup.
    storageBarrier();
    workgroupBarrier();
    let items = NP * clusters;
    for (var t = lid; t < items; t = t + WORKGROUP_SIZE) {
        project(jobs[t / NP], t % NP);
    }
}
