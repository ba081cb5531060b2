// #include "common/dispatch.wgsl"
// #include "common/dg_euler.wgsl"
// #include "common/dg_tables.wgsl"
// #include "common/dg_edge.wgsl"

// DG edge fluxes of the gathered surface integral (Operator::edge_fluxes), one thread per
// edge node (edge range.first + t / NQE, node q = t % NQE), all edges in one launch: with
// U_K = U_0K + dU_K the means plus the traces dg_trace wrote (U_R a ghost state on boundary
// edges) and, in deviation form (dg_euler.wgsl), G_K = (F*(U_L, U_R) - F(U_0K)) . n w_q L_e
// at node q (left parameter t_q, right 1 - t_q),
//   flux[side_slot(L, l NQE + q)] = -G_L,  flux[side_slot(R, r NQE + NQE - 1 - q)] = +G_R,
// so every element side owns its slots and no two threads write one word: no colors, no
// atomics. dg_volume (LIFT = 1) then adds sum_s sum_q phi_k(x_{s,q}) flux_{s,q} / det J.
// The jump of the means U_0R - U_0L is taken from their hi and lo words (dg_trace's means).
// At a hanging node the right element is the coarse one and the edge is half h of its side r
// (DgEdge info): its trace there is taken at that half's nodes from its coefficients (register
// range.pad, modes k >= 1, as dg_surface does), and +G_R goes to the half's own plane of slots,
// plane r for half 1 and 3 + r for half 2 (Operator::edge_fluxes, flux_plane), which
// dg_volume's lift reads with the half's nodes.
// A thread per node rather than per edge: NQE times the threads to hide the loads' latency
// with, and an edge's NQE threads read and write the NQE neighbouring slots of each side
// (side_slot) together, so the scattered right side is one coalesced span. On an adapted mesh
// (range.count DEVICE_COUNT) the edges come from a launch record whose grid has a thread per
// edge node (face_nodes_record in src/solver/dg/gpu.rs): with a thread per edge taking its NQE
// nodes in turn, this kernel took 1.3x (33k elements) to 1.7x (240k) its time on an H200.

@group(0) @binding(0) var<storage, read> traces: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read_write> fluxes: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> tables: array<f32>;
@group(0) @binding(3) var<storage, read> edges: array<DgEdge>;
// [0], [1]: the case function's parameters; [2 + s]: inflow state s (conserved).
@group(0) @binding(4) var<storage, read> case_data: array<vec4<f32>>;
// t, dt, ..., t_lo (dg_time.wgsl).
@group(0) @binding(5) var<storage, read> clock: array<f32>;
// c_0 hi and lo of element i at 2i and 2i + 1 (dg_trace).
@group(0) @binding(6) var<storage, read> means: array<vec4<f32>>;
// The registers (the coarse side's trace on a half edge).
@group(0) @binding(7) var<storage, read> regs: array<f32>;
// Launch records (dispatch.wgsl): read when range.count is DEVICE_COUNT (an adapted mesh).
@group(0) @binding(8) var<storage, read> launches: array<u32>;
// first/count: the edges (NQE threads each); color: bits of the stage time fraction c; pad:
// register.
@group(1) @binding(0) var<uniform> range: ItemRange;

// The deviation dU of element i (modes k >= 1 of register reg) at node q of table row `row`.
fn deviation_at(reg: u32, i: u32, row: u32, q: u32) -> vec4<f32> {
    var u = vec4<f32>(0.0);
    // #unroll
    for (var k = 1u; k < NP; k = k + 1u) {
        let c = vec4<f32>(regs[dof(reg, 0u, k, i)], regs[dof(reg, 1u, k, i)],
                          regs[dof(reg, 2u, k, i)], regs[dof(reg, 3u, k, i)]);
        u = u + c * tables[t_edge_phi(row, q, k)];
    }
    return u;
}

// Node q of edge number `index`.
fn edge_node(index: u32, q: u32) {
    let e = edges[index];
    let left = (e.info & 3u) * NQE;
    let right_local = (e.info >> 2u) & 3u;
    let half = (e.info >> 7u) & 3u;
    // The right side's plane: its side, or 3 + side for the second half of a split side.
    let right = (right_local + select(0u, 3u, half == 2u)) * NQE;
    let interior = e.right != 0xffffffffu;
    let n = vec2<f32>(e.nx, e.ny);
    let ml = means[2u * e.left];
    let u0l = ml * PHI0;
    let dul = traces[side_slot(e.left, left + q)];
    // The jump U_R - U_L, and U_0R - U_0L (0 on a boundary edge).
    var du: vec4<f32>;
    var d0 = vec4<f32>(0.0);
    if (interior) {
        d0 = ((means[2u * e.right] - ml) + (means[2u * e.right + 1u] - means[2u * e.left + 1u]))
            * PHI0;
        var dur: vec4<f32>;
        if (half == 0u) {
            dur = traces[side_slot(e.right, right + NQE - 1u - q)];
        } else {
            dur = deviation_at(range.pad, e.right, right_local + 3u * half, NQE - 1u - q);
        }
        du = d0 + (dur - dul);
    } else {
        let t = clock[0] + (clock[6] + bitcast<f32>(range.color) * clock[1]);
        du = boundary_jump(u0l, dul, e, tables[t_edge_t(q)], t);
    }
    let v0l = u0l.yz / u0l.x;
    let p0l = pressure(u0l);
    // F* - F(U_0L) . n = (F(U_L) - F(U_0L)) . n + (F* - F(U_L) . n).
    let fl = normal_flux_change(u0l, p0l, primitive_change(u0l, v0l, dul), dul, n)
        + numerical_flux_change(u0l + dul, du, n);
    let w = tables[t_edge_w(q)] * e.length;
    fluxes[side_slot(e.left, left + q)] = -fl * w;
    if (interior) {
        // F(U_0R) . n - F(U_0L) . n: the right side's terms are the left's minus this.
        let df0 = normal_flux_change(u0l, p0l, primitive_change(u0l, v0l, d0), d0, n);
        fluxes[side_slot(e.right, right + NQE - 1u - q)] = (fl - df0) * w;
    }
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let thread = linear_index(gid, nwg);
    var first = range.first;
    var count = range.count;
    if (range.count == DEVICE_COUNT) {
        first = launches[range.first];
        count = launches[range.first + 1u];
    }
    let s = thread / NQE;
    if (s >= count) {
        return;
    }
    edge_node(first + s, thread % NQE);
}
