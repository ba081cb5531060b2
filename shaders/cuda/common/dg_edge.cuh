// CUDA twin of shaders/common/dg_edge.wgsl: the DG edge record and the state outside a
// boundary edge, shared by the colored surface kernel (dg_surface) and the gathered flux kernel
// (dg_flux). case_data: the case function's parameters at [0], [1], inflow state s at [2 + s].

/// Mirrors DgEdge in src/solver/dg/mesh.rs (32 bytes).
struct DgEdge {
    u32 left;
    u32 right;
    u32 info;   // left_local | right_local << 2 | kind << 4 | right_half << 7 | state << 9
    float nx;
    float ny;
    float length;
    float mx;
    float my;
};

/// The jump U_ghost - U at boundary edge e's node of whole-edge parameter tq at time t, where
/// the inside state U = u0 + du is the element's mean plus its higher modes' trace (deviation
/// form, dg_euler.cuh): a wall reverses the normal momentum, an inflow edge takes its constant
/// state, an exact edge the case function at x = m + (tq - 1/2) L tau; outflow: no jump.
__device__ __forceinline__ float4 boundary_jump(
    float4 u0, float4 du, DgEdge e, float tq, float t, const float4* __restrict__ case_data) {
    u32 kind = (e.info >> 4u) & 7u;
    float2 n = make_float2(e.nx, e.ny);
    if (kind == EDGE_WALL) {
        float4 u = u0 + du;
        float mn = 2.0f * (u.y * n.x + u.z * n.y);
        return make_float4(0.0f, -mn * n.x, -mn * n.y, 0.0f);
    }
    if (kind == EDGE_INFLOW) {
        return (case_data[2u + (e.info >> 9u)] - u0) - du;
    }
    if (kind == EDGE_EXACT) {
        float2 x = make_float2(e.mx, e.my) + ((tq - 0.5f) * e.length) * make_float2(-e.ny, e.nx);
        return (case_state(x, t, case_data[0], case_data[1]) - u0) - du;
    }
    return make_float4(0.0f, 0.0f, 0.0f, 0.0f);
}
