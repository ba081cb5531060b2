// #include "common/dispatch.cuh"
// #include "common/dg_euler.cuh"
// #include "common/dg_tables.cuh"

// CUDA twin of shaders/dg_limit.wgsl. Slope + positivity limiter, one thread per element
// (Operator::limit): reads register src, writes register dst (src != dst, so neighbours' means
// are read unmodified).
// 1. Vertex-based: per component, bounds [m, M] of the means of the element and its face
//    neighbours (both of a side split by a hanging node); alpha = min over vertices of the
//    largest factor keeping u_v in [m, M]; if alpha < 1 keep mean + alpha * linear modes, drop
//    higher modes.
// 2. Zhang-Shu positivity at the volume and edge nodes (and the half-edge nodes of split
//    sides, where their fluxes are evaluated): scale density modes so rho_q >= eps, then all
//    modes so p_q >= eps (p is concave in U).
//
// neighbors: face neighbours (0xffffffff: none): [i] sides 0..2, w the bit mask of sides split
// into two faces; [NE + i] the second neighbours of split sides (read only when the mask is
// nonzero). range: count the elements, pad src | dst << 8 | slope << 16.
//
// launches: launch records (dispatch.cuh), read when range.count is DEVICE_COUNT (an adapted
// mesh).

#define EPS 1e-10f
// Floor relative to the mean, eps = max(EPS, EPS_REL * mean): a node pressure limited to
// 1e-10 comes out negative in another f32 kernel (FMA, summation order), NaN sound speed.
#define EPS_REL 1e-4f
#define LIMITER_TOL 1e-6f
#define SQRT2 1.41421356237f

/// WGSL min() / max() on vec4<f32>.
__device__ __forceinline__ float4 min4(float4 a, float4 b) {
    return make_float4(fminf(a.x, b.x), fminf(a.y, b.y), fminf(a.z, b.z), fminf(a.w, b.w));
}
__device__ __forceinline__ float4 max4(float4 a, float4 b) {
    return make_float4(fmaxf(a.x, b.x), fmaxf(a.y, b.y), fmaxf(a.z, b.z), fmaxf(a.w, b.w));
}

/// Component f of a vec4<u32>, as WGSL's nb[f].
__device__ __forceinline__ u32 at_u(uint4 v, u32 f) {
    return f == 0u ? v.x : (f == 1u ? v.y : (f == 2u ? v.z : v.w));
}

__device__ __forceinline__ float4 mean_of(const float* regs, u32 reg, u32 i) {
    return SQRT2 * make_float4(regs[dof(reg, 0u, 0u, i)], regs[dof(reg, 1u, 0u, i)],
                               regs[dof(reg, 2u, 0u, i)], regs[dof(reg, 3u, 0u, i)]);
}

// Bounds [lo, hi] of the element means around an element.
struct Bounds {
    float4 lo;
    float4 hi;
};

// `b` widened by the means of the neighbours nb.xyz (0xffffffff: none) in register `reg`.
__device__ __forceinline__ Bounds widen(Bounds b, const float* regs, u32 reg, uint4 nb) {
    #pragma unroll
    for (u32 f = 0u; f < 3u; f = f + 1u) {
        if (at_u(nb, f) != 0xffffffffu) {
            float4 m = mean_of(regs, reg, at_u(nb, f));
            b.lo = min4(b.lo, m);
            b.hi = max4(b.hi, m);
        }
    }
    return b;
}

// Zhang-Shu pressure limiter: theta = min(theta, (p_mean - eps_p) / (p_mean - p(u))) at a node
// value u whose pressure is below eps_p.
__device__ __forceinline__ float pressure_theta(float theta, float4 u, float p_mean, float eps_p) {
    float p = pressure(u);
    if (p < eps_p) {
        return fminf(theta, (p_mean - eps_p) / (p_mean - p));
    }
    return theta;
}

// Basis value of mode k at positivity node q: volume nodes 0..NQ, then the edge nodes by table
// row (whole edges, then halves: row (q - NQ) / NQE = side + 3 half).
__device__ __forceinline__ u32 node_phi(u32 q, u32 k) {
    if (q < NQ) {
        return t_vol_phi(q, k);
    }
    u32 qe = q - NQ;
    return t_edge_phi(qe / NQE, qe % NQE, k);
}

// Half-edge node q (q >= NQ + 3 NQE) lies on a side split into two faces.
__device__ __forceinline__ bool half_node_used(u32 split, u32 q) {
    return ((split >> (((q - NQ) / NQE) % 3u)) & 1u) != 0u;
}

extern "C" __global__ void dg_limit(
    float* regs,
    const float* __restrict__ tables,
    const uint4* __restrict__ neighbors,
    const float* __restrict__ clock,
    const u32* __restrict__ launches,
    ItemRange range) {
    await_previous_launches();
    u32 i = linear_index();
    u32 count = range.count;
    if (count == DEVICE_COUNT) {
        count = launches[range.first + 1u];
    }
    if (i >= count || clock[1] == 0.0f) {
        return;
    }
    u32 src = range.pad & 255u;
    u32 dst = (range.pad >> 8u) & 255u;
    bool slope = (range.pad >> 16u) != 0u;
    float4 c[MAX_NP];
    #pragma unroll
    for (u32 k = 0u; k < NP; k = k + 1u) {
        c[k] = make_float4(regs[dof(src, 0u, k, i)], regs[dof(src, 1u, k, i)],
                           regs[dof(src, 2u, k, i)], regs[dof(src, 3u, k, i)]);
    }
    float4 mean = SQRT2 * c[0];
    uint4 nb = neighbors[i];
    u32 split = nb.w;
    if (slope && NP > 1u) {
        Bounds b = widen(Bounds{mean, mean}, regs, src, nb);
        if (split != 0u) {
            b = widen(b, regs, src, neighbors[NE + i]);
        }
        float4 lo = b.lo;
        float4 hi = b.hi;
        #pragma unroll
        for (u32 eq = 0u; eq < 4u; eq = eq + 1u) {
            float tol = LIMITER_TOL * (fmaxf(fabsf(at(hi, eq)), fabsf(at(lo, eq))) + 1e-12f);
            float alpha = 1.0f;
            #pragma unroll
            for (u32 v = 0u; v < 3u; v = v + 1u) {
                float uv = 0.0f;
                #pragma unroll
                for (u32 k = 0u; k < NP; k = k + 1u) {
                    uv = uv + at(c[k], eq) * tables[t_vertex_phi(v, k)];
                }
                float d = uv - at(mean, eq);
                if (d > tol) {
                    alpha = fminf(alpha, (at(hi, eq) - at(mean, eq)) / d);
                } else if (d < -tol) {
                    alpha = fminf(alpha, (at(lo, eq) - at(mean, eq)) / d);
                }
            }
            if (alpha < 1.0f) {
                float a = fmaxf(alpha, 0.0f);
                #pragma unroll
                for (u32 k = 1u; k < NP; k = k + 1u) {
                    if (k < 3u) {
                        at(c[k], eq) = at(c[k], eq) * a;
                    } else {
                        at(c[k], eq) = 0.0f;
                    }
                }
            }
        }
    }
    if (NP > 1u) {
        // Density: volume nodes then edge nodes.
        float rho_min = 1e30f;
        // Unrolled here, unlike the WGSL twin's node loops: NVCC's unrolled p = 4 kernel runs
        // 2.88 ms at 1M triangles on the H100, the Vulkan driver's 7.06 (the twin: 2.63 rolled).
        #pragma unroll
        for (u32 q = 0u; q < NQ + 3u * NQE; q = q + 1u) {
            float r = 0.0f;
            #pragma unroll
            for (u32 k = 0u; k < NP; k = k + 1u) {
                r = r + c[k].x * tables[node_phi(q, k)];
            }
            rho_min = fminf(rho_min, r);
        }
        // Half-edge nodes of split sides, behind one branch: conforming elements skip them.
        if (split != 0u) {
            #pragma unroll
            for (u32 h = 0u; h < 6u * NQE; h = h + 1u) {
                u32 q = NQ + 3u * NQE + h;
                if (half_node_used(split, q)) {
                    float r = 0.0f;
                    #pragma unroll
                    for (u32 k = 0u; k < NP; k = k + 1u) {
                        r = r + c[k].x * tables[node_phi(q, k)];
                    }
                    rho_min = fminf(rho_min, r);
                }
            }
        }
        float eps_rho = fmaxf(EPS, EPS_REL * mean.x);
        if (rho_min < eps_rho) {
            float theta = fminf(fmaxf((mean.x - eps_rho) / (mean.x - rho_min), 0.0f), 1.0f);
            #pragma unroll
            for (u32 k = 1u; k < NP; k = k + 1u) {
                c[k].x = c[k].x * theta;
            }
        }
        float p_mean = pressure(mean);
        float eps_p = fmaxf(EPS, EPS_REL * p_mean);
        float theta = 1.0f;
        #pragma unroll
        for (u32 q = 0u; q < NQ + 3u * NQE; q = q + 1u) {
            float4 u = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
            #pragma unroll
            for (u32 k = 0u; k < NP; k = k + 1u) {
                u = u + tables[node_phi(q, k)] * c[k];
            }
            theta = pressure_theta(theta, u, p_mean, eps_p);
        }
        if (split != 0u) {
            #pragma unroll
            for (u32 h = 0u; h < 6u * NQE; h = h + 1u) {
                u32 q = NQ + 3u * NQE + h;
                if (half_node_used(split, q)) {
                    float4 u = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
                    #pragma unroll
                    for (u32 k = 0u; k < NP; k = k + 1u) {
                        u = u + tables[node_phi(q, k)] * c[k];
                    }
                    theta = pressure_theta(theta, u, p_mean, eps_p);
                }
            }
        }
        if (theta < 1.0f) {
            float th = fmaxf(theta, 0.0f);
            #pragma unroll
            for (u32 k = 1u; k < NP; k = k + 1u) {
                c[k] = th * c[k];
            }
        }
    }
    #pragma unroll
    for (u32 k = 0u; k < NP; k = k + 1u) {
        regs[dof(dst, 0u, k, i)] = c[k].x;
        regs[dof(dst, 1u, k, i)] = c[k].y;
        regs[dof(dst, 2u, k, i)] = c[k].z;
        regs[dof(dst, 3u, k, i)] = c[k].w;
    }
}
