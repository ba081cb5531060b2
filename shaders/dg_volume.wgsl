// #include "common/dispatch.wgsl"
// #include "common/dg_euler.wgsl"
// #include "common/dg_tables.wgsl"
// #include "common/dg_rk.wgsl"

// DG volume term, one thread per element (Operator::rhs, first loop):
//   rhs_k = sum_q w_q (F(U_q) - F(U_0)) . (J^{-T} grad_ref phi_k)(x_q),  U_0 = c_0 phi_0,
// in deviation form (dg_euler.wgsl; dg_surface subtracts the same F(U_0) . n, and the two
// cancel exactly; so does dg_flux with LIFT = 1).
// The thread reads the element's coefficients of register range.pad (coalesced) and
// overwrites rhs; the colored surface kernel adds the edge terms afterwards. With LIFT = 1 the
// thread adds them itself from the edge fluxes dg_flux wrote for its three sides:
//   rhs_k += 1 / det J sum_s sum_q phi_k(x_{s,q}) flux[side_slot(i, s NQE + q)],
// and with HANGING = 1 (a mesh with hanging nodes) a side split into two faces (bit s of the
// neighbour record's mask) sums both halves instead: plane s at half 1's nodes and plane 3 + s
// at half 2's (dg_flux; Operator::gathered_rhs).
// With STAGE = 1 (and LIFT = 1) the thread applies Runge-Kutta stage range.color to its element
// (common/dg_rk.wgsl) instead of writing rhs: the rhs never goes to memory, which saves the
// 8 words per DOF of writing it here and reading it in dg_stage. That is safe in place because
// after dg_trace no kernel of the stage reads another element's coefficients. The host fuses
// at p <= 2 only (gpu.rs, FUSED_STAGE_MAX_ORDER: at p >= 3 one thread updating all its DOFs
// is slower than dg_stage's thread per DOF).

@group(0) @binding(0) var<storage, read_write> regs: array<f32>;
@group(0) @binding(1) var<storage, read_write> rhs: array<f32>;
@group(0) @binding(2) var<storage, read> tables: array<f32>;
// (xi_x, xi_y, eta_x, eta_y) per element.
@group(0) @binding(3) var<storage, read> inv_jac: array<vec4<f32>>;
// 1 / det J per element (LIFT = 1).
@group(0) @binding(4) var<storage, read> inv_det: array<f32>;
// The edge fluxes of dg_flux, NQE per element side (LIFT = 1).
@group(0) @binding(5) var<storage, read> fluxes: array<vec4<f32>>;
// The clock (dt = clock[1]), the stages and the low words of R0..R3 (STAGE = 1).
@group(0) @binding(6) var<storage, read> clock: array<f32>;
@group(0) @binding(7) var<storage, read> stages: array<Stage>;
@group(0) @binding(8) var<storage, read_write> regs_lo: array<f32>;
// Launch records (dispatch.wgsl): read when range.count is DEVICE_COUNT (an adapted mesh).
@group(0) @binding(9) var<storage, read> launches: array<u32>;
// Face neighbours (dg_limit's layout): [i].w the mask of element i's split sides (HANGING = 1).
@group(0) @binding(10) var<storage, read> neighbors: array<vec4<u32>>;
@group(1) @binding(0) var<uniform> range: ItemRange;

// 1: add the gathered surface integral (dg_trace + dg_flux); 0: dg_surface adds it.
override LIFT: u32 = 0u;
// 1: the lift reads each element's split sides (a mesh with hanging nodes); 0: none is split.
override HANGING: u32 = 0u;
// 1: apply the stage instead of writing rhs (see the top).
override STAGE: u32 = 0u;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = linear_index(gid, nwg);
    var count = range.count;
    if (count == DEVICE_COUNT) {
        count = launches[range.first + 1u];
    }
    if (i >= count) {
        return;
    }
    let reg = range.pad;
    var c: array<vec4<f32>, MAX_NP>;
    var r: array<vec4<f32>, MAX_NP>;
    // #unroll
    for (var k = 0u; k < NP; k = k + 1u) {
        c[k] = vec4<f32>(regs[dof(reg, 0u, k, i)], regs[dof(reg, 1u, k, i)],
                         regs[dof(reg, 2u, k, i)], regs[dof(reg, 3u, k, i)]);
        r[k] = vec4<f32>(0.0);
    }
    let g = inv_jac[i];
    // The element's mean U_0 and, per node, the higher modes' part dU = U - U_0.
    let u0 = c[0] * PHI0;
    let v0 = u0.yz / u0.x;
    let p0 = pressure(u0);
    let h0 = u0.w + p0;
    // Not unrolled: unrolling the node loop too makes the p = 4 kernel too large for the
    // instruction cache (fetch stalls were most of its time on the H100).
    for (var q = 0u; q < NQ; q = q + 1u) {
        var du = vec4<f32>(0.0);
        // #unroll
        for (var k = 1u; k < NP; k = k + 1u) {
            du = du + c[k] * tables[t_vol_phi(q, k)];
        }
        let ch = primitive_change(u0, v0, du);
        let dh = du.w + ch.dp;
        let f = vec4<f32>(du.y, du.y * ch.v1.x + u0.y * ch.dv.x + ch.dp,
                          du.z * ch.v1.x + u0.z * ch.dv.x, dh * ch.v1.x + h0 * ch.dv.x);
        let h = vec4<f32>(du.z, du.y * ch.v1.y + u0.y * ch.dv.y,
                          du.z * ch.v1.y + u0.z * ch.dv.y + ch.dp, dh * ch.v1.y + h0 * ch.dv.y);
        let w = tables[t_vol_w(q)];
        // #unroll
        for (var k = 0u; k < NP; k = k + 1u) {
            let dxi = tables[t_vol_dxi(q, k)];
            let deta = tables[t_vol_deta(q, k)];
            let gx = dxi * g.x + deta * g.z;
            let gy = dxi * g.y + deta * g.w;
            r[k] = r[k] + w * (f * gx + h * gy);
        }
    }
    if (LIFT == 1u) {
        let d = inv_det[i];
        var split = 0u;
        if (HANGING == 1u) {
            split = neighbors[i].w;
        }
        // Not unrolled, like the node loop.
        for (var j = 0u; j < 3u * NQE; j = j + 1u) {
            let s = j / NQE;
            let f = fluxes[side_slot(i, j)] * d;
            if (((split >> s) & 1u) == 0u) {
                // #unroll
                for (var k = 0u; k < NP; k = k + 1u) {
                    r[k] = r[k] + f * tables[t_edge_phi(s, j % NQE, k)];
                }
            } else {
                let f2 = fluxes[side_slot(i, j + 3u * NQE)] * d;
                // #unroll
                for (var k = 0u; k < NP; k = k + 1u) {
                    r[k] = r[k] + f * tables[t_edge_phi(3u + s, j % NQE, k)]
                        + f2 * tables[t_edge_phi(6u + s, j % NQE, k)];
                }
            }
        }
    }
    if (STAGE == 1u) {
        let dt = clock[1];
        if (dt == 0.0) {
            return;
        }
        let s = stages[range.color];
        let n = 4u * NP * range.capacity;
        if (s.dst2 != 0xffffffffu) {
            // #unroll
            for (var k = 0u; k < NP; k = k + 1u) {
                stage_apply(s, dt, r[k].x, dof(0u, 0u, k, i), n);
                stage_apply(s, dt, r[k].y, dof(0u, 1u, k, i), n);
                stage_apply(s, dt, r[k].z, dof(0u, 2u, k, i), n);
                stage_apply(s, dt, r[k].w, dof(0u, 3u, k, i), n);
            }
            return;
        }
        // Every DOF's loads first, then every store: a store may alias a later DOF's load as
        // far as the compiler knows, so interleaved, the element's DOFs run one memory latency
        // after another. r[k] becomes lo_B + increment, hi[k] holds hi_B.
        var hi: array<vec4<f32>, MAX_NP>;
        // #unroll
        for (var k = 0u; k < NP; k = k + 1u) {
            let x = stage_sum(s.a, s.b, dt, r[k].x, dof(0u, 0u, k, i), n);
            let y = stage_sum(s.a, s.b, dt, r[k].y, dof(0u, 1u, k, i), n);
            let z = stage_sum(s.a, s.b, dt, r[k].z, dof(0u, 2u, k, i), n);
            let w = stage_sum(s.a, s.b, dt, r[k].w, dof(0u, 3u, k, i), n);
            hi[k] = vec4<f32>(x.x, y.x, z.x, w.x);
            r[k] = vec4<f32>(x.y, y.y, z.y, w.y);
        }
        // #unroll
        for (var k = 0u; k < NP; k = k + 1u) {
            stage_store(s, vec2<f32>(hi[k].x, r[k].x), dof(0u, 0u, k, i), n);
            stage_store(s, vec2<f32>(hi[k].y, r[k].y), dof(0u, 1u, k, i), n);
            stage_store(s, vec2<f32>(hi[k].z, r[k].z), dof(0u, 2u, k, i), n);
            stage_store(s, vec2<f32>(hi[k].w, r[k].w), dof(0u, 3u, k, i), n);
        }
        return;
    }
    // #unroll
    for (var k = 0u; k < NP; k = k + 1u) {
        rhs[dof(0u, 0u, k, i)] = r[k].x;
        rhs[dof(0u, 1u, k, i)] = r[k].y;
        rhs[dof(0u, 2u, k, i)] = r[k].z;
        rhs[dof(0u, 3u, k, i)] = r[k].w;
    }
}
