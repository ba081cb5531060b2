// #include "common/dispatch.wgsl"
// #include "common/dg_euler.wgsl"
// #include "common/dg_tables.wgsl"

// Slope + positivity limiter, one thread per element (Operator::limit): reads register src,
// writes register dst (src != dst, so neighbours' means are read unmodified).
// 1. Vertex-based: per component, bounds [m, M] of the means of the element and its face
//    neighbours (both of a side split by a hanging node); alpha = min over vertices of the
//    largest factor keeping u_v in [m, M]; if alpha < 1 keep mean + alpha * linear modes, drop
//    higher modes.
// 2. Zhang-Shu positivity at the volume and edge nodes (and the half-edge nodes of split
//    sides, where their fluxes are evaluated): scale density modes so rho_q >= eps, then all
//    modes so p_q >= eps (p is concave in U).

const EPS: f32 = 1e-10;
// Floor relative to the mean, eps = max(EPS, EPS_REL * mean): a node pressure limited to
// 1e-10 comes out negative in another f32 kernel (FMA, summation order), NaN sound speed.
const EPS_REL: f32 = 1e-4;
const LIMITER_TOL: f32 = 1e-6;
const SQRT2: f32 = 1.41421356237;

@group(0) @binding(0) var<storage, read_write> regs: array<f32>;
@group(0) @binding(1) var<storage, read> tables: array<f32>;
// Face neighbours (0xffffffff: none): [i] sides 0..2, w the bit mask of sides split into two
// faces; [NE + i] the second neighbours of split sides (read only when the mask is nonzero).
@group(0) @binding(2) var<storage, read> neighbors: array<vec4<u32>>;
@group(0) @binding(3) var<storage, read> clock: array<f32>;
// Launch records (dispatch.wgsl): read when range.count is DEVICE_COUNT (an adapted mesh).
@group(0) @binding(4) var<storage, read> launches: array<u32>;
// count: elements; pad: src | dst << 8 | slope << 16.
@group(1) @binding(0) var<uniform> range: ItemRange;

fn mean_of(reg: u32, i: u32) -> vec4<f32> {
    return vec4<f32>(regs[dof(reg, 0u, 0u, i)], regs[dof(reg, 1u, 0u, i)],
                     regs[dof(reg, 2u, 0u, i)], regs[dof(reg, 3u, 0u, i)]) * SQRT2;
}

// Bounds [lo, hi] of the element means around an element.
struct Bounds {
    lo: vec4<f32>,
    hi: vec4<f32>,
}

// `b` widened by the means of the neighbours nb.xyz (0xffffffff: none) in register `reg`.
fn widen(b: Bounds, reg: u32, nb: vec4<u32>) -> Bounds {
    var out = b;
    // #unroll
    for (var f = 0u; f < 3u; f = f + 1u) {
        if (nb[f] != 0xffffffffu) {
            let m = mean_of(reg, nb[f]);
            out.lo = min(out.lo, m);
            out.hi = max(out.hi, m);
        }
    }
    return out;
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = linear_index(gid, nwg);
    var count = range.count;
    if (count == DEVICE_COUNT) {
        count = launches[range.first + 1u];
    }
    if (i >= count || clock[1] == 0.0) {
        return;
    }
    let src = range.pad & 255u;
    let dst = (range.pad >> 8u) & 255u;
    let slope = (range.pad >> 16u) != 0u;
    var c: array<vec4<f32>, MAX_NP>;
    // #unroll
    for (var k = 0u; k < NP; k = k + 1u) {
        c[k] = vec4<f32>(regs[dof(src, 0u, k, i)], regs[dof(src, 1u, k, i)],
                         regs[dof(src, 2u, k, i)], regs[dof(src, 3u, k, i)]);
    }
    let mean = c[0] * SQRT2;
    let nb = neighbors[i];
    let split = nb.w;
    if (slope && NP > 1u) {
        var b = widen(Bounds(mean, mean), src, nb);
        if (split != 0u) {
            b = widen(b, src, neighbors[range.capacity + i]);
        }
        let lo = b.lo;
        let hi = b.hi;
        // #unroll
        for (var eq = 0u; eq < 4u; eq = eq + 1u) {
            let tol = LIMITER_TOL * (max(abs(hi[eq]), abs(lo[eq])) + 1e-12);
            var alpha = 1.0;
            // #unroll
            for (var v = 0u; v < 3u; v = v + 1u) {
                var uv = 0.0;
                // #unroll
                for (var k = 0u; k < NP; k = k + 1u) {
                    uv = uv + c[k][eq] * tables[t_vertex_phi(v, k)];
                }
                let d = uv - mean[eq];
                if (d > tol) {
                    alpha = min(alpha, (hi[eq] - mean[eq]) / d);
                } else if (d < -tol) {
                    alpha = min(alpha, (lo[eq] - mean[eq]) / d);
                }
            }
            if (alpha < 1.0) {
                let a = max(alpha, 0.0);
                // #unroll
                for (var k = 1u; k < NP; k = k + 1u) {
                    if (k < 3u) {
                        c[k][eq] = c[k][eq] * a;
                    } else {
                        c[k][eq] = 0.0;
                    }
                }
            }
        }
    }
    if (NP > 1u) {
        // Density: volume nodes then edge nodes.
        var rho_min = 1e30;
        // The node loops are not unrolled: unrolled (NQ + 3 NQE nodes x NP modes, twice) the
        // p = 4 kernel outgrew the instruction cache and ran 2.7x slower on the H100 (7.06
        // against 2.63 ms at 1M triangles). NVCC's unrolled twin does not (2.88 ms).
        for (var q = 0u; q < NQ + 3u * NQE; q = q + 1u) {
            var r = 0.0;
            // #unroll
            for (var k = 0u; k < NP; k = k + 1u) {
                r = r + c[k].x * tables[node_phi(q, k)];
            }
            rho_min = min(rho_min, r);
        }
        // Half-edge nodes of split sides, behind one branch: conforming elements skip them.
        if (split != 0u) {
            // #unroll
            for (var h = 0u; h < 6u * NQE; h = h + 1u) {
                let q = NQ + 3u * NQE + h;
                if (half_node_used(split, q)) {
                    var r = 0.0;
                    // #unroll
                    for (var k = 0u; k < NP; k = k + 1u) {
                        r = r + c[k].x * tables[node_phi(q, k)];
                    }
                    rho_min = min(rho_min, r);
                }
            }
        }
        let eps_rho = max(EPS, EPS_REL * mean.x);
        if (rho_min < eps_rho) {
            let theta = clamp((mean.x - eps_rho) / (mean.x - rho_min), 0.0, 1.0);
            // #unroll
            for (var k = 1u; k < NP; k = k + 1u) {
                c[k].x = c[k].x * theta;
            }
        }
        let p_mean = pressure(mean);
        let eps_p = max(EPS, EPS_REL * p_mean);
        var theta = 1.0;
        // Not unrolled, like the density's node loop.
        for (var q = 0u; q < NQ + 3u * NQE; q = q + 1u) {
            var u = vec4<f32>(0.0);
            // #unroll
            for (var k = 0u; k < NP; k = k + 1u) {
                u = u + c[k] * tables[node_phi(q, k)];
            }
            theta = pressure_theta(theta, u, p_mean, eps_p);
        }
        if (split != 0u) {
            // #unroll
            for (var h = 0u; h < 6u * NQE; h = h + 1u) {
                let q = NQ + 3u * NQE + h;
                if (half_node_used(split, q)) {
                    var u = vec4<f32>(0.0);
                    // #unroll
                    for (var k = 0u; k < NP; k = k + 1u) {
                        u = u + c[k] * tables[node_phi(q, k)];
                    }
                    theta = pressure_theta(theta, u, p_mean, eps_p);
                }
            }
        }
        if (theta < 1.0) {
            let th = max(theta, 0.0);
            // #unroll
            for (var k = 1u; k < NP; k = k + 1u) {
                c[k] = c[k] * th;
            }
        }
    }
    // #unroll
    for (var k = 0u; k < NP; k = k + 1u) {
        regs[dof(dst, 0u, k, i)] = c[k].x;
        regs[dof(dst, 1u, k, i)] = c[k].y;
        regs[dof(dst, 2u, k, i)] = c[k].z;
        regs[dof(dst, 3u, k, i)] = c[k].w;
    }
}

// Zhang-Shu pressure limiter: theta = min(theta, (p_mean - eps_p) / (p_mean - p(u))) at a node
// value u whose pressure is below eps_p.
fn pressure_theta(theta: f32, u: vec4<f32>, p_mean: f32, eps_p: f32) -> f32 {
    let p = pressure(u);
    if (p < eps_p) {
        return min(theta, (p_mean - eps_p) / (p_mean - p));
    }
    return theta;
}

// Basis value of mode k at positivity node q: volume nodes 0..NQ, then the edge nodes by table
// row (whole edges, then halves: row (q - NQ) / NQE = side + 3 half).
fn node_phi(q: u32, k: u32) -> u32 {
    if (q < NQ) {
        return t_vol_phi(q, k);
    }
    let qe = q - NQ;
    return t_edge_phi(qe / NQE, qe % NQE, k);
}

// Half-edge node q (q >= NQ + 3 NQE) lies on a side split into two faces.
fn half_node_used(split: u32, q: u32) -> bool {
    return ((split >> (((q - NQ) / NQE) % 3u)) & 1u) != 0u;
}
