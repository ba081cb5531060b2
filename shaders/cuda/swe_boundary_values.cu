// #include "common/dispatch.cuh"
// #include "common/swe_control.cuh"
// #include "common/swe_flux.cuh"

// CUDA twin of shaders/swe_boundary_values.wgsl. Driven boundaries, first launch of a stage:
// one thread per driven edge writes the boundary value of the clock's time t (t^n; t^n + dt
// before Heun's second stage at order 2) into its edge (edges[slot].value), which the flux
// kernels hand to boundary_state: value = scale * g(t) with g the boundary's series (t_i, g_i),
// linear in between, the first value before t_0 and the last after t_last (binary search). scale is -1/L for a discharge (q_b per unit length,
// outward) and 1 for an elevation. CPU reference: DrivenBoundaries::value in
// src/solver/swe/boundary.rs.

struct DrivenEdge {
    u32 slot;
    u32 first;
    u32 count;
    float scale;
};

__device__ float series_value(const float2* __restrict__ series, u32 first, u32 count, float t) {
    u32 last = first + count - 1u;
    if (t <= series[first].x) {
        return series[first].y;
    }
    if (t >= series[last].x) {
        return series[last].y;
    }
    u32 lo = first;
    u32 hi = last;
    while (hi - lo > 1u) {
        u32 mid = lo + (hi - lo) / 2u;
        if (series[mid].x <= t) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    float2 a = series[lo];
    float2 b = series[hi];
    return a.y + (t - a.x) / (b.x - a.x) * (b.y - a.y);
}

extern "C" __global__ void swe_boundary_values(
    const Control* __restrict__ control,
    const DrivenEdge* __restrict__ driven,
    const float2* __restrict__ series,
    SweEdge* __restrict__ edges,
    ItemRange range) {
    await_previous_launches();
    u32 i = linear_index();
    if (i >= range.count) {
        return;
    }
    DrivenEdge d = driven[range.first + i];
    edges[d.slot].value = d.scale * series_value(series, d.first, d.count, control->t);
}
