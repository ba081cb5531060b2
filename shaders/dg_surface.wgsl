// #include "common/dispatch.wgsl"
// #include "common/dg_euler.wgsl"
// #include "common/dg_tables.wgsl"
// #include "common/dg_edge.wgsl"

// DG surface term, one thread per edge, one dispatch per edge color (Operator::rhs, second
// loop). With F* the numerical flux at edge node q (left parameter t_q, right 1 - t_q on its
// whole edge, or ((h - 1) + (1 - t_q)) / 2 when the edge is half h of the right element's side
// next to a hanging node; L_e is then the half face's length):
//   rhs_k(L) -= L_e / det J_L sum_q w_q phi_k(x_q) (F*(U_L, U_R) - F(U_0L)) . n
//   rhs_k(R) += L_e / det J_R sum_q w_q phi_k(x_q) (F*(U_L, U_R) - F(U_0R)) . n
// with U_0K = c_0 phi_0 the element's mean (deviation form, dg_euler.wgsl; dg_volume subtracts
// the same F(U_0K)).
// U_R is a ghost state on boundary edges. No two edges of one color share an element, so the
// read-modify-write of rhs needs no atomics.

@group(0) @binding(0) var<storage, read> regs: array<f32>;
@group(0) @binding(1) var<storage, read_write> rhs: array<f32>;
@group(0) @binding(2) var<storage, read> tables: array<f32>;
@group(0) @binding(3) var<storage, read> edges: array<DgEdge>;
// 1 / det J per element.
@group(0) @binding(4) var<storage, read> inv_det: array<f32>;
// [0], [1]: the case function's parameters; [2 + s]: inflow state s (conserved).
@group(0) @binding(5) var<storage, read> case_data: array<vec4<f32>>;
// t, dt, ..., t_lo (dg_time.wgsl).
@group(0) @binding(6) var<storage, read> clock: array<f32>;
// Launch records (dispatch.wgsl): read when range.count is DEVICE_COUNT (an adapted mesh).
@group(0) @binding(7) var<storage, read> launches: array<u32>;
// first/count: the color's edges; color: bits of the stage time fraction c; pad: register.
@group(1) @binding(0) var<uniform> range: ItemRange;

// The mean U_0 = c_0 phi_0 of element i in register reg (the deviation form's reference state).
fn element_mean(reg: u32, i: u32) -> vec4<f32> {
    return vec4<f32>(regs[dof(reg, 0u, 0u, i)], regs[dof(reg, 1u, 0u, i)],
                     regs[dof(reg, 2u, 0u, i)], regs[dof(reg, 3u, 0u, i)]) * PHI0;
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let s = linear_index(gid, nwg);
    var first = range.first;
    var count = range.count;
    if (count == DEVICE_COUNT) {
        first = launches[range.first];
        count = launches[range.first + 1u];
    }
    if (s >= count) {
        return;
    }
    let e = edges[first + s];
    let reg = range.pad;
    let ll = e.info & 3u;
    // The right trace's table row: its whole local edge, or half 1 / 2 of it.
    let rl = ((e.info >> 2u) & 3u) + 3u * ((e.info >> 7u) & 3u);
    let interior = e.right != 0xffffffffu;
    let n = vec2<f32>(e.nx, e.ny);
    let t = clock[0] + (clock[6] + bitcast<f32>(range.color) * clock[1]);
    // The means U_0K, the traces dU of the higher modes, and per node the jump U_R - U_L.
    // Traces first (k outer, so one element's coefficients are read once and dropped), then
    // the left side's terms in place of the left traces, then rhs_k += phi_k(x_q) F*_q: the
    // thread holds 2 NQE vec4s instead of 4 NP, which keeps p = 3, 4 in registers.
    let u0l = element_mean(reg, e.left);
    var u0r = u0l;
    if (interior) {
        u0r = element_mean(reg, e.right);
    }
    var ul: array<vec4<f32>, MAX_NQE>;
    var ur: array<vec4<f32>, MAX_NQE>;
    // #unroll
    for (var q = 0u; q < NQE; q = q + 1u) {
        ul[q] = vec4<f32>(0.0);
        ur[q] = vec4<f32>(0.0);
    }
    // #unroll
    for (var k = 1u; k < NP; k = k + 1u) {
        let cl = vec4<f32>(regs[dof(reg, 0u, k, e.left)], regs[dof(reg, 1u, k, e.left)],
                           regs[dof(reg, 2u, k, e.left)], regs[dof(reg, 3u, k, e.left)]);
        // #unroll
        for (var q = 0u; q < NQE; q = q + 1u) {
            ul[q] = ul[q] + cl * tables[t_edge_phi(ll, q, k)];
        }
        if (interior) {
            let cr = vec4<f32>(regs[dof(reg, 0u, k, e.right)], regs[dof(reg, 1u, k, e.right)],
                               regs[dof(reg, 2u, k, e.right)], regs[dof(reg, 3u, k, e.right)]);
            // #unroll
            for (var q = 0u; q < NQE; q = q + 1u) {
                ur[q] = ur[q] + cr * tables[t_edge_phi(rl, NQE - 1u - q, k)];
            }
        }
    }
    let v0l = u0l.yz / u0l.x;
    let p0l = pressure(u0l);
    let d0 = u0r - u0l;
    // F(U_0R) . n - F(U_0L) . n: the right side's terms are the left's minus this.
    let df0 = normal_flux_change(u0l, p0l, primitive_change(u0l, v0l, d0), d0, n);
    // #unroll
    for (var q = 0u; q < NQE; q = q + 1u) {
        // The jump U_R - U_L.
        var du = d0 + (ur[q] - ul[q]);
        if (!interior) {
            du = boundary_jump(u0l, ul[q], e, tables[t_edge_t(q)], t);
        }
        // F* - F(U_0L) . n = (F(U_L) - F(U_0L)) . n + (F* - F(U_L) . n).
        let fl = normal_flux_change(u0l, p0l, primitive_change(u0l, v0l, ul[q]), ul[q], n)
            + numerical_flux_change(u0l + ul[q], du, n);
        let wl = tables[t_edge_w(q)] * e.length;
        ul[q] = fl * wl;
        ur[q] = (fl - df0) * wl;
    }
    let dl = inv_det[e.left];
    // #unroll
    for (var k = 0u; k < NP; k = k + 1u) {
        var a = vec4<f32>(0.0);
        // #unroll
        for (var q = 0u; q < NQE; q = q + 1u) {
            a = a + tables[t_edge_phi(ll, q, k)] * ul[q];
        }
        a = a * dl;
        add_rhs(k, e.left, -a);
    }
    if (interior) {
        let dr = inv_det[e.right];
        // #unroll
        for (var k = 0u; k < NP; k = k + 1u) {
            var a = vec4<f32>(0.0);
            // #unroll
            for (var q = 0u; q < NQE; q = q + 1u) {
                a = a + tables[t_edge_phi(rl, NQE - 1u - q, k)] * ur[q];
            }
            a = a * dr;
            add_rhs(k, e.right, a);
        }
    }
}

// rhs_k(i) += a, the four equations of mode k of element i. A plain read-modify-write: no two
// edges of one color share an element.
fn add_rhs(k: u32, i: u32, a: vec4<f32>) {
    rhs[dof(0u, 0u, k, i)] = rhs[dof(0u, 0u, k, i)] + a.x;
    rhs[dof(0u, 1u, k, i)] = rhs[dof(0u, 1u, k, i)] + a.y;
    rhs[dof(0u, 2u, k, i)] = rhs[dof(0u, 2u, k, i)] + a.z;
    rhs[dof(0u, 3u, k, i)] = rhs[dof(0u, 3u, k, i)] + a.w;
}
