// #include "common/dispatch.cuh"
// #include "common/swe_flux.cuh"

// CUDA twin of shaders/swe_cell_gather.wgsl. Cell-centred gather (no coloring, one launch): each
// thread owns one cell and computes the fluctuations of its own three edges, so every interior
// edge is computed twice. It writes the cell's accumulator (sum of |edge| * contribution, CFL
// sum in acc[2c + 1].z) with plain stores. Same results as swe_edge_flux up to f32 summation
// order; used to compare the two layouts.

extern "C" __global__ void swe_cell_gather(
    const SweEdge* __restrict__ edges,
    const float4* __restrict__ cells,
    float4* __restrict__ acc,
    u32* __restrict__ counters,
    const uint4* __restrict__ cell_edges,
    ItemRange range) {
    await_previous_launches();
    u32 i = linear_index();
    if (i >= range.count) {
        return;
    }
    u32 c = range.first + i;
    uint4 slots = cell_edges[c];
    u32 slot[4] = {slots.x, slots.y, slots.z, slots.w};
    float4 sum0 = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    float4 sum1 = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    for (int k = 0; k < 3; k = k + 1) {
        u32 s = slot[k];
        if (s == NO_ELEMENT) {
            continue;
        }
        SweEdge e = edges[s];
        float4 wl0 = cells[2u * e.left];
        float4 wl1 = cells[2u * e.left + 1u];
        float4 wr0 = wl0;
        float4 wr1 = wl1;
        if (e.kind == KIND_INTERIOR) {
            wr0 = cells[2u * e.right];
            wr1 = cells[2u * e.right + 1u];
        }
        EdgeOut out = edge_contribution(wl0, wl1, wr0, wr1, e.kind, e.nx, e.ny, e.value);
        if (e.left == c) {
            sum0 = sum0 + e.length * out.left0;
            sum1 = sum1 + e.length * make_float4(out.left1.x, out.left1.y, out.lam, 0.0f);
            if ((out.flags & FLAG_NONHYPERBOLIC) != 0u) {
                atomicAdd(&counters[0], 1u);
            }
            if ((out.flags & FLAG_FALLBACK) != 0u) {
                atomicAdd(&counters[1], 1u);
            }
            if ((out.flags & FLAG_CHI_CLAMPED) != 0u) {
                atomicAdd(&counters[2], 1u);
            }
        } else {
            sum0 = sum0 + e.length * out.right0;
            sum1 = sum1 + e.length * make_float4(out.right1.x, out.right1.y, out.lam, 0.0f);
        }
    }
    acc[2u * c] = sum0;
    acc[2u * c + 1u] = sum1;
}
