// #include "common/dispatch.wgsl"
// #include "common/dg_euler.wgsl"
// #include "common/dg_tables.wgsl"

// DG surface term, one thread per edge, one dispatch per edge color (Operator::rhs, second
// loop). With F* the numerical flux at edge node q (left parameter t_q, right 1 - t_q):
//   rhs_k(L) -= L_e / det J_L sum_q w_q phi_k(x_q) F*(U_L, U_R) . n
//   rhs_k(R) += L_e / det J_R sum_q w_q phi_k(x_q) F*(U_L, U_R) . n
// U_R is a ghost state on boundary edges. No two edges of one color share an element, so the
// read-modify-write of rhs needs no atomics.

struct DgEdge {
    left: u32,
    right: u32,
    info: u32,   // left_local | right_local << 2 | kind << 4 | state << 8
    nx: f32,
    ny: f32,
    length: f32,
    mx: f32,
    my: f32,
}

@group(0) @binding(0) var<storage, read> regs: array<f32>;
@group(0) @binding(1) var<storage, read_write> rhs: array<f32>;
@group(0) @binding(2) var<storage, read> tables: array<f32>;
@group(0) @binding(3) var<storage, read> edges: array<DgEdge>;
// 1 / det J per element.
@group(0) @binding(4) var<storage, read> inv_det: array<f32>;
// [0], [1]: the case function's parameters; [2 + s]: inflow state s (conserved).
@group(0) @binding(5) var<storage, read> case_data: array<vec4<f32>>;
// t, dt, ...
@group(0) @binding(6) var<storage, read> clock: array<f32>;
// first/count: the color's edges; color: bits of the stage time fraction c; pad: register.
@group(1) @binding(0) var<uniform> range: ItemRange;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let s = linear_index(gid, nwg);
    if (s >= range.count) {
        return;
    }
    let e = edges[range.first + s];
    let reg = range.pad;
    let ll = e.info & 3u;
    let rl = (e.info >> 2u) & 3u;
    let kind = (e.info >> 4u) & 15u;
    let state = e.info >> 8u;
    let interior = e.right != 0xffffffffu;
    let n = vec2<f32>(e.nx, e.ny);
    let tau = vec2<f32>(-e.ny, e.nx);
    let t = clock[0] + bitcast<f32>(range.color) * clock[1];
    var cl: array<vec4<f32>, MAX_NP>;
    var cr: array<vec4<f32>, MAX_NP>;
    var al: array<vec4<f32>, MAX_NP>;
    var ar: array<vec4<f32>, MAX_NP>;
    // #unroll
    for (var k = 0u; k < NP; k = k + 1u) {
        cl[k] = vec4<f32>(regs[dof(reg, 0u, k, e.left)], regs[dof(reg, 1u, k, e.left)],
                          regs[dof(reg, 2u, k, e.left)], regs[dof(reg, 3u, k, e.left)]);
        if (interior) {
            cr[k] = vec4<f32>(regs[dof(reg, 0u, k, e.right)], regs[dof(reg, 1u, k, e.right)],
                              regs[dof(reg, 2u, k, e.right)], regs[dof(reg, 3u, k, e.right)]);
        }
        al[k] = vec4<f32>(0.0);
        ar[k] = vec4<f32>(0.0);
    }
    // #unroll
    for (var q = 0u; q < NQE; q = q + 1u) {
        let qr = NQE - 1u - q;
        var ul = vec4<f32>(0.0);
        // #unroll
        for (var k = 0u; k < NP; k = k + 1u) {
            ul = ul + cl[k] * tables[t_edge_phi(ll, q, k)];
        }
        var ur = ul;
        if (interior) {
            ur = vec4<f32>(0.0);
            // #unroll
            for (var k = 0u; k < NP; k = k + 1u) {
                ur = ur + cr[k] * tables[t_edge_phi(rl, qr, k)];
            }
        } else if (kind == EDGE_WALL) {
            ur = wall_ghost(ul, n);
        } else if (kind == EDGE_INFLOW) {
            ur = case_data[2u + state];
        } else if (kind == EDGE_EXACT) {
            let x = vec2<f32>(e.mx, e.my) + (tables[t_edge_t(q)] - 0.5) * e.length * tau;
            ur = case_state(x, t, case_data[0], case_data[1]);
        }
        let f = numerical_flux(ul, ur, n) * (tables[t_edge_w(q)] * e.length);
        // #unroll
        for (var k = 0u; k < NP; k = k + 1u) {
            al[k] = al[k] - tables[t_edge_phi(ll, q, k)] * f;
            ar[k] = ar[k] + tables[t_edge_phi(rl, qr, k)] * f;
        }
    }
    let dl = inv_det[e.left];
    // #unroll
    for (var k = 0u; k < NP; k = k + 1u) {
        // #unroll
        for (var eq = 0u; eq < 4u; eq = eq + 1u) {
            let j = dof(0u, eq, k, e.left);
            rhs[j] = rhs[j] + al[k][eq] * dl;
        }
    }
    if (interior) {
        let dr = inv_det[e.right];
        // #unroll
        for (var k = 0u; k < NP; k = k + 1u) {
            // #unroll
            for (var eq = 0u; eq < 4u; eq = eq + 1u) {
                let j = dof(0u, eq, k, e.right);
                rhs[j] = rhs[j] + ar[k][eq] * dr;
            }
        }
    }
}
