// The refinement indicator's flag of a slot (indicator() and flags() in
// src/solver/dg/amr/indicator.rs), shared by amr_flag and amr_smooth's pass 0 when it computes
// the flags itself. The including kernel declares the bindings it reads: regs (register 0's
// high words, 4 NP rows of NE), centroid_basis (per mode k: (phi_k, d phi_k / d xi,
// d phi_k / d eta, 0) at the reference centroid), inv_jac, heights, neighbors (dg_limit.wgsl's
// layout: [i] sides 0..2 and the mask of split sides in w, [NE + i] the second neighbours of
// split sides), params (AmrParams), range and the override NP. eps_i = h_i |grad q(U_i)| at
// the centroid (GK19 eq. 10), +1 above threshold * delta, -1 below threshold / delta, else 0;
// only 0 / +1 when refining only. q is density, pressure or energy (params.field); for
// pressure
//   grad p = (gamma - 1) (grad E - (m . grad m) / rho + |m|^2 grad rho / (2 rho^2)).
// With params.jumps, eps_i += max_j |q(U_i mean) - q(U_j mean)| over the face neighbours j
// (jumps() in indicator.rs): a step on the element edges (projected, each side constant) has
// no gradient inside an element, but a jump across its faces.

fn field_gradient(u: vec4<f32>, gx: vec4<f32>, gy: vec4<f32>) -> vec2<f32> {
    if (params.field == 0u) {
        return vec2<f32>(gx.x, gy.x);
    }
    if (params.field == 2u) {
        return vec2<f32>(gx.w, gy.w);
    }
    let m2 = u.y * u.y + u.z * u.z;
    let px = gx.w - (u.y * gx.y + u.z * gx.z) / u.x + m2 * gx.x / (2.0 * u.x * u.x);
    let py = gy.w - (u.y * gy.y + u.z * gy.z) / u.x + m2 * gy.x / (2.0 * u.x * u.x);
    return (params.gamma - 1.0) * vec2<f32>(px, py);
}

fn field_value(u: vec4<f32>) -> f32 {
    if (params.field == 0u) {
        return u.x;
    }
    if (params.field == 2u) {
        return u.w;
    }
    return (params.gamma - 1.0) * (u.w - 0.5 * (u.y * u.y + u.z * u.z) / u.x);
}

// q at the mean of element j (mode 0 times the constant phi_0).
fn mean_value(j: u32) -> f32 {
    let a = vec4<f32>(regs[j], regs[NP * range.capacity + j], regs[2u * NP * range.capacity + j],
                      regs[3u * NP * range.capacity + j]);
    return field_value(centroid_basis[0].x * a);
}

// Largest |q(mean i) - q(mean j)| over the neighbours j in nb.xyz (NONE: none).
fn largest_jump(q: f32, nb: vec4<u32>, jump: f32) -> f32 {
    var m = jump;
    for (var s = 0u; s < 3u; s = s + 1u) {
        if (nb[s] != NONE) {
            m = max(m, abs(mean_value(nb[s]) - q));
        }
    }
    return m;
}

// The flag of the element in slot i.
fn indicator_flag(i: u32) -> i32 {
    let g = inv_jac[i];
    var u = vec4<f32>(0.0);
    var gx = vec4<f32>(0.0);
    var gy = vec4<f32>(0.0);
    for (var k = 0u; k < NP; k = k + 1u) {
        let b = centroid_basis[k];
        let a = vec4<f32>(
            regs[(0u * NP + k) * range.capacity + i],
            regs[(1u * NP + k) * range.capacity + i],
            regs[(2u * NP + k) * range.capacity + i],
            regs[(3u * NP + k) * range.capacity + i],
        );
        u = u + b.x * a;
        gx = gx + (b.y * g.x + b.z * g.z) * a;
        gy = gy + (b.y * g.y + b.z * g.w) * a;
    }
    var eps = heights[i] * length(field_gradient(u, gx, gy));
    if (params.jumps != 0u) {
        let q = mean_value(i);
        let nb = neighbors[i];
        var jump = largest_jump(q, nb, 0.0);
        if (nb.w != 0u) {
            jump = largest_jump(q, neighbors[range.capacity + i], jump);
        }
        eps = eps + jump;
    }
    var f = 0;
    if (eps > params.threshold * params.delta) {
        f = 1;
    } else if (eps < params.threshold / params.delta && params.refine_only == 0u) {
        f = -1;
    }
    return f;
}
