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

/// The ghost state of boundary edge e at the node of whole-edge parameter tq at time t, from
/// the inside state u: a wall mirrors the momentum, an inflow edge takes its constant state, an
/// exact edge the case function at x = m + (tq - 1/2) L tau, an outflow edge copies u.
__device__ __forceinline__ float4 boundary_ghost(
    float4 u, DgEdge e, float tq, float t, const float4* __restrict__ case_data) {
    u32 kind = (e.info >> 4u) & 7u;
    if (kind == EDGE_WALL) {
        return wall_ghost(u, make_float2(e.nx, e.ny));
    }
    if (kind == EDGE_INFLOW) {
        return case_data[2u + (e.info >> 9u)];
    }
    if (kind == EDGE_EXACT) {
        float2 x = make_float2(e.mx, e.my) + ((tq - 0.5f) * e.length) * make_float2(-e.ny, e.nx);
        return case_state(x, t, case_data[0], case_data[1]);
    }
    return u;
}
