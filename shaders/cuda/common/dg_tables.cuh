// CUDA twin of shaders/common/dg_tables.wgsl: layout of the DG basis tables
// (BasisTables::packed) and of the DOF registers.
// Tables: vol_w[NQ], vol_phi[NQ][NP], vol_dxi[NQ][NP], vol_deta[NQ][NP], edge_w[NQE],
// edge_phi[9][NQE][NP], vertex_phi[3][NP], edge_t[NQE].
// edge_phi row e = local + 3 * half: half 0 the whole local edge, halves 1 and 2 the first and
// second half of it (EdgeInfo::right_half; a coarse element next to a refined neighbour).
// DOFs: register r, equation eq, mode k, element i at ((r * 4 + eq) * NP + k) * NE + i, so one
// thread per element reads and writes consecutive addresses across a warp (coalesced).
//
// The WGSL override constants are preprocessor defines here (the host passes -D values); the
// capacity NE is the module constant of common/dispatch.cuh (WGSL: range.capacity).

#ifndef NP
#define NP 3u
#endif
#ifndef NQ
#define NQ 4u
#endif
#ifndef NQE
#define NQE 2u
#endif
// Largest NP (p = 4): private arrays are sized by it, loops run to NP.
#define MAX_NP 15u
// Most edge quadrature nodes (p + 1 Gauss points, p <= 4); arrays of edge traces are sized by it.
#define MAX_NQE 5u

__device__ __forceinline__ u32 t_vol_w(u32 q) {
    return q;
}
__device__ __forceinline__ u32 t_vol_phi(u32 q, u32 k) {
    return NQ + q * NP + k;
}
__device__ __forceinline__ u32 t_vol_dxi(u32 q, u32 k) {
    return NQ + NQ * NP + q * NP + k;
}
__device__ __forceinline__ u32 t_vol_deta(u32 q, u32 k) {
    return NQ + 2u * NQ * NP + q * NP + k;
}
__device__ __forceinline__ u32 t_edge_w(u32 q) {
    return NQ + 3u * NQ * NP + q;
}
__device__ __forceinline__ u32 t_edge_phi(u32 e, u32 q, u32 k) {
    return NQ + 3u * NQ * NP + NQE + (e * NQE + q) * NP + k;
}
__device__ __forceinline__ u32 t_vertex_phi(u32 v, u32 k) {
    return NQ + 3u * NQ * NP + NQE + 9u * NQE * NP + v * NP + k;
}
__device__ __forceinline__ u32 t_edge_t(u32 q) {
    return NQ + 3u * NQ * NP + NQE + 9u * NQE * NP + 3u * NP + q;
}

/// Slot j = s NQE + q (side s, edge node q) of element i in the gathered layout's traces and
/// edge fluxes: side-major planes, each holding an element side's NQE nodes next to each
/// other, at ((s NE + i) NQE + q). The per-element kernels (dg_trace writing, dg_volume
/// lifting) still touch consecutive float4s across a warp (its NQE loads or stores of a side
/// cover one span), and dg_flux's scattered side of an edge is NQE float4s in a row: one
/// 32-byte sector at p = 1, at most two at p = 2, instead of NQE sectors half used.
__device__ __forceinline__ u32 side_slot(u32 i, u32 j) {
    return ((j / NQE) * NE + i) * NQE + j % NQE;
}

__device__ __forceinline__ u32 dof(u32 reg, u32 eq, u32 k, u32 i) {
    return ((reg * 4u + eq) * NP + k) * NE + i;
}
