// Layout of the DG basis tables (BasisTables::packed) and of the DOF registers.
// Tables: vol_w[NQ], vol_phi[NQ][NP], vol_dxi[NQ][NP], vol_deta[NQ][NP], edge_w[NQE],
// edge_phi[9][NQE][NP], vertex_phi[3][NP], edge_t[NQE].
// edge_phi row e = local + 3 * half: half 0 the whole local edge, halves 1 and 2 the first and
// second half of it (EdgeInfo::right_half; a coarse element next to a refined neighbour).
// DOFs: register r, equation eq, mode k, element i at ((r * 4 + eq) * NP + k) * NE + i, so one
// thread per element reads and writes consecutive addresses across a warp (coalesced).

override NP: u32 = 3u;
override NQ: u32 = 4u;
override NQE: u32 = 2u;
// Largest NP (p = 4): private arrays are sized by it, loops run to NP.
const MAX_NP: u32 = 15u;
// Most edge quadrature nodes (p + 1 Gauss points, p <= 4); arrays of edge traces are sized by it.
const MAX_NQE: u32 = 5u;

fn t_vol_w(q: u32) -> u32 {
    return q;
}
fn t_vol_phi(q: u32, k: u32) -> u32 {
    return NQ + q * NP + k;
}
fn t_vol_dxi(q: u32, k: u32) -> u32 {
    return NQ + NQ * NP + q * NP + k;
}
fn t_vol_deta(q: u32, k: u32) -> u32 {
    return NQ + 2u * NQ * NP + q * NP + k;
}
fn t_edge_w(q: u32) -> u32 {
    return NQ + 3u * NQ * NP + q;
}
fn t_edge_phi(e: u32, q: u32, k: u32) -> u32 {
    return NQ + 3u * NQ * NP + NQE + (e * NQE + q) * NP + k;
}
fn t_vertex_phi(v: u32, k: u32) -> u32 {
    return NQ + 3u * NQ * NP + NQE + 9u * NQE * NP + v * NP + k;
}
fn t_edge_t(q: u32) -> u32 {
    return NQ + 3u * NQ * NP + NQE + 9u * NQE * NP + 3u * NP + q;
}

// Slot j = s NQE + q (side s, edge node q) of element i in the gathered layout's traces and
// edge fluxes: side-major planes, each holding an element side's NQE nodes next to each
// other, at ((s NE + i) NQE + q). The per-element kernels (dg_trace writing, dg_volume
// lifting) still touch consecutive vec4s across a warp (its NQE loads or stores of a side
// cover one span), and dg_flux's scattered side of an edge is NQE vec4s in a row: one
// 32-byte sector at p = 1, at most two at p = 2, instead of NQE sectors half used.
fn side_slot(i: u32, j: u32) -> u32 {
    return ((j / NQE) * range.capacity + i) * NQE + j % NQE;
}

fn dof(reg: u32, eq: u32, k: u32, i: u32) -> u32 {
    return ((reg * 4u + eq) * NP + k) * range.capacity + i;
}
