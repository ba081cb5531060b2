// CUDA twin of shaders/common/swe_share.wgsl. Second order: one cell's share of an edge, scaled
// by the draining factors (common/swe_drain.cuh) where a cell drains (shared by swe_fused_step
// and swe_drain_fix; needs common/swe_flux.cuh, common/swe_muscl.cuh and common/swe_drain.cuh
// first, and STAGE). CPU reference: edge_parts2 in src/solver/swe/muscl.rs,
// CpuSolver::accumulate in src/solver/swe/cpu.rs.

// Cell c's (state w0, w1) share of edge s: the edge's length, the fluctuation rows (h1 q1x q1y
// h2 | q2x q2y) of its side, the in-cell terms (q1x q1y q2x q2y; order 2), the CFL speed and
// event flags, the edge's mass fluxes out of its left cell (h1, h2 rows) and the cell across it
// (NO_ELEMENT on the boundary).
struct EdgeShare {
    float length;
    float4 fl0;
    float2 fl1;
    float4 own;
    float lam;
    u32 flags;
    float2 g;
    bool left;
    u32 other;
};

__device__ __forceinline__ EdgeShare edge_share(
    u32 c,
    u32 s,
    float4 w0,
    float4 w1,
    const SweEdge* __restrict__ edges,
    const uint2* __restrict__ edge_slots,
    const float4* __restrict__ deltas,
    const float4* __restrict__ cells) {
    SweEdge e = edges[s];
    bool left = e.left == c;
    float4 wl0 = w0;
    float4 wl1 = w1;
    float4 wr0 = w0;
    float4 wr1 = w1;
    u32 other = NO_ELEMENT;
    if (e.kind == KIND_INTERIOR) {
        other = left ? e.right : e.left;
        float4 o0 = cells[2u * other];
        float4 o1 = cells[2u * other + 1u];
        if (left) {
            wr0 = o0;
            wr1 = o1;
        } else {
            wl0 = o0;
            wl1 = o1;
        }
    }
    EdgeOut out;
    float4 own = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    if (STAGE == 0u) {
        out = edge_contribution(wl0, wl1, wr0, wr1, e.kind, e.nx, e.ny, e.value);
    } else {
        uint2 sl = edge_slots[s];
        float4 dl0 = deltas[sl.x];
        float4 dl1 = deltas[sl.x + 1u];
        float4 dr0 = dl0;
        float4 dr1 = dl1;
        EdgeState el = state_at_edge(wl0, wl1, dl0, dl1);
        EdgeState er = el;
        if (e.kind == KIND_INTERIOR) {
            dr0 = deltas[sl.y];
            dr1 = deltas[sl.y + 1u];
            er = state_at_edge(wr0, wr1, dr0, dr1);
        }
        out = edge_contribution(el.w0, el.w1, er.w0, er.w1, e.kind, e.nx, e.ny, e.value);
        if (left) {
            own = in_cell_terms(wl0, wl1, dl0, dl1, e.nx, e.ny);
        } else {
            own = in_cell_terms(wr0, wr1, dr0, dr1, -e.nx, -e.ny);
        }
    }
    EdgeShare sh;
    sh.length = e.length;
    sh.fl0 = left ? out.left0 : out.right0;
    sh.fl1 = left ? out.left1 : out.right1;
    sh.own = own;
    sh.lam = out.lam;
    sh.flags = out.flags;
    sh.g = make_float2(out.left0.x, out.left0.w);
    sh.left = left;
    sh.other = other;
    return sh;
}

// The scale of the share's layer rows: theta of the cell each layer's mass flux leaves
// (`mine` for cell c, `theirs` for the cell across; 1 for inflow from the boundary).
__device__ __forceinline__ float2 drain_scale(EdgeShare sh, float2 mine, float2 theirs) {
    float2 from_left = sh.left ? mine : theirs;
    float2 from_right = sh.left ? theirs : mine;
    return make_float2(sh.g.x > 0.0f ? from_left.x : sh.g.x < 0.0f ? from_right.x : 1.0f,
                       sh.g.y > 0.0f ? from_left.y : sh.g.y < 0.0f ? from_right.y : 1.0f);
}

// The mass leaving cell c through the share's edge per unit length (h1, h2), >= 0.
__device__ __forceinline__ float2 share_outflow(EdgeShare sh) {
    float2 g = sh.left ? sh.g : make_float2(-sh.g.x, -sh.g.y);
    return make_float2(fmaxf(g.x, 0.0f), fmaxf(g.y, 0.0f));
}

// (theta1, theta2) of cell c in the launch of tag and dt (1 unless it drains; 1 for
// NO_ELEMENT).
__device__ __forceinline__ float2 theta_of(u32 c, u32 tag, float dt,
                                           const float4* __restrict__ drain) {
    if (c == NO_ELEMENT) {
        return make_float2(1.0f, 1.0f);
    }
    return drain_theta(drain[c], tag, dt);
}

// Whether cell c or a neighbour drains in the launch of tag and dt.
__device__ __forceinline__ bool needs_fix(u32 c, u32 tag, float dt,
                                          const SweEdge* __restrict__ edges,
                                          const uint4* __restrict__ cell_edges,
                                          const float4* __restrict__ drain) {
    bool any_drains = drains(theta_of(c, tag, dt, drain));
    uint4 slots = cell_edges[c];
    u32 slot[3] = {slots.x, slots.y, slots.z};
    for (int k = 0; k < 3; k = k + 1) {
        u32 s = slot[k];
        if (s != NO_ELEMENT) {
            SweEdge e = edges[s];
            if (e.kind == KIND_INTERIOR) {
                u32 other = e.left == c ? e.right : e.left;
                any_drains = any_drains || drains(theta_of(other, tag, dt, drain));
            }
        }
    }
    return any_drains;
}
