// #include "common/dispatch.cuh"
// #include "common/swe_flux.cuh"

// CUDA twin of shaders/swe_edge_flux.wgsl. Colored edge scatter, one launch per edge color:
// each thread owns one edge, computes its fluctuations once and adds |edge| * contribution to
// both cells' accumulators (plain read-modify-write: no two edges of one color share a cell),
// plus |edge| * lam_max to each cell's CFL sum (acc[2c + 1].z). CPU reference:
// CpuSolver::edge_pass in src/solver/swe/cpu.rs. Launches of one stream run in order, so color
// c + 1 sees the writes of color c.
//
// swe_edge_flux_atomic (CUDA only: WGSL has no float atomics) is the same edge work in one
// launch over all edges, scattering with atomicAdd instead of relying on the coloring; it
// exists to measure the coloring against atomics (`bench swe --layouts atomic`).

__device__ __forceinline__ void count_flags(u32 flags, u32* counters) {
    if (flags != 0u) {
        if ((flags & FLAG_NONHYPERBOLIC) != 0u) {
            atomicAdd(&counters[0], 1u);
        }
        if ((flags & FLAG_FALLBACK) != 0u) {
            atomicAdd(&counters[1], 1u);
        }
        if ((flags & FLAG_CHI_CLAMPED) != 0u) {
            atomicAdd(&counters[2], 1u);
        }
    }
}

extern "C" __global__ void swe_edge_flux(
    const SweEdge* __restrict__ edges,
    const float4* __restrict__ cells,
    float4* __restrict__ acc,
    u32* __restrict__ counters,
    ItemRange range) {
    await_previous_launches();
    u32 i = linear_index();
    if (i >= range.count) {
        return;
    }
    SweEdge e = edges[range.first + i];
    float4 wl0 = cells[2u * e.left];
    float4 wl1 = cells[2u * e.left + 1u];
    float4 wr0 = wl0;
    float4 wr1 = wl1;
    if (e.kind == KIND_INTERIOR) {
        wr0 = cells[2u * e.right];
        wr1 = cells[2u * e.right + 1u];
    }
    EdgeOut out = edge_contribution(wl0, wl1, wr0, wr1, e.kind, e.nx, e.ny, e.value);
    float len = e.length;
    acc[2u * e.left] = acc[2u * e.left] + len * out.left0;
    acc[2u * e.left + 1u] = acc[2u * e.left + 1u] + len * make_float4(out.left1.x, out.left1.y, out.lam, 0.0f);
    if (e.kind == KIND_INTERIOR) {
        acc[2u * e.right] = acc[2u * e.right] + len * out.right0;
        acc[2u * e.right + 1u] = acc[2u * e.right + 1u] + len * make_float4(out.right1.x, out.right1.y, out.lam, 0.0f);
    }
    count_flags(out.flags, counters);
}

__device__ __forceinline__ void atomic_add4(float4* p, float4 v) {
    float* f = reinterpret_cast<float*>(p);
    atomicAdd(f, v.x);
    atomicAdd(f + 1, v.y);
    atomicAdd(f + 2, v.z);
    atomicAdd(f + 3, v.w);
}

extern "C" __global__ void swe_edge_flux_atomic(
    const SweEdge* __restrict__ edges,
    const float4* __restrict__ cells,
    float4* acc,
    u32* __restrict__ counters,
    ItemRange range) {
    await_previous_launches();
    u32 i = linear_index();
    if (i >= range.count) {
        return;
    }
    SweEdge e = edges[range.first + i];
    float4 wl0 = cells[2u * e.left];
    float4 wl1 = cells[2u * e.left + 1u];
    float4 wr0 = wl0;
    float4 wr1 = wl1;
    if (e.kind == KIND_INTERIOR) {
        wr0 = cells[2u * e.right];
        wr1 = cells[2u * e.right + 1u];
    }
    EdgeOut out = edge_contribution(wl0, wl1, wr0, wr1, e.kind, e.nx, e.ny, e.value);
    float len = e.length;
    float* al = reinterpret_cast<float*>(&acc[2u * e.left]);
    atomic_add4(&acc[2u * e.left], len * out.left0);
    atomicAdd(al + 4, len * out.left1.x);
    atomicAdd(al + 5, len * out.left1.y);
    atomicAdd(al + 6, len * out.lam);
    if (e.kind == KIND_INTERIOR) {
        float* ar = reinterpret_cast<float*>(&acc[2u * e.right]);
        atomic_add4(&acc[2u * e.right], len * out.right0);
        atomicAdd(ar + 4, len * out.right1.x);
        atomicAdd(ar + 5, len * out.right1.y);
        atomicAdd(ar + 6, len * out.lam);
    }
    count_flags(out.flags, counters);
}
