// #include "common/dispatch.cuh"
// #include "common/swe_flux.cuh"

// CUDA twin of shaders/swe_reconstruct.wgsl. Second order, step 1 of a stage: the limited MUSCL
// reconstruction of each cell (one thread per cell). Variables v = (h1, eta2 = h2 - H, u1x,
// u1y, u2x, u2y) with desingularised velocities; least-squares gradients over the three face
// neighbours (a boundary ghost repeats the cell's own values); Barth-Jespersen limiting against
// the min/max over the 2-ring; a layer that is dry or would get a negative depth at an edge
// midpoint is reconstructed flat (lower layer: grad eta2 = -grad H). Writes the increments at
// the cell's three edge midpoints, two float4 per slot: (dh1, du1x, du1y, dh2),
// (du2x, du2y, dH, deta2). CPU reference: src/solver/swe/muscl.rs.

__device__ __forceinline__ void cell_vars(const float4* cells, u32 c, float v[6]) {
    float4 w0 = cells[2u * c];
    float4 w1 = cells[2u * c + 1u];
    float d1 = desing(w0.x);
    float d2 = desing(w0.w);
    v[0] = w0.x;
    v[1] = w0.w - w1.z;
    v[2] = w0.y / d1;
    v[3] = w0.z / d1;
    v[4] = w1.x / d2;
    v[5] = w1.y / d2;
}

extern "C" __global__ void swe_reconstruct(
    const float4* __restrict__ cells,
    const float4* __restrict__ recon,
    const uint4* __restrict__ neighbors,
    float4* __restrict__ deltas,
    ItemRange range) {
    await_previous_launches();
    u32 i = linear_index();
    if (i >= range.count) {
        return;
    }
    u32 c = range.first + i;
    float me[6];
    cell_vars(cells, c, me);
    float lo[6], hi[6], nv[3][6];
    #pragma unroll
    for (int v = 0; v < 6; v = v + 1) {
        lo[v] = me[v];
        hi[v] = me[v];
    }
    uint4 nb4 = neighbors[c];
    u32 nb[3] = {nb4.x, nb4.y, nb4.z};
    #pragma unroll
    for (int k = 0; k < 3; k = k + 1) {
        u32 j = nb[k];
        #pragma unroll
        for (int v = 0; v < 6; v = v + 1) {
            nv[k][v] = me[v];
        }
        if (j == NO_ELEMENT) {
            continue;
        }
        cell_vars(cells, j, nv[k]);
        #pragma unroll
        for (int v = 0; v < 6; v = v + 1) {
            lo[v] = fminf(lo[v], nv[k][v]);
            hi[v] = fmaxf(hi[v], nv[k][v]);
        }
        uint4 nn4 = neighbors[j];
        u32 nn[3] = {nn4.x, nn4.y, nn4.z};
        for (int m = 0; m < 3; m = m + 1) {
            if (nn[m] != NO_ELEMENT) {
                float u[6];
                cell_vars(cells, nn[m], u);
                #pragma unroll
                for (int v = 0; v < 6; v = v + 1) {
                    lo[v] = fminf(lo[v], u[v]);
                    hi[v] = fmaxf(hi[v], u[v]);
                }
            }
        }
    }
    float4 r0 = recon[4u * c];
    float4 r1 = recon[4u * c + 1u];
    float4 r2 = recon[4u * c + 2u];
    float4 r3 = recon[4u * c + 3u];
    float wx[3] = {r0.x, r0.z, r1.x};
    float wy[3] = {r0.y, r0.w, r1.y};
    float dx[3] = {r2.x, r2.z, r3.x};
    float dy[3] = {r2.y, r2.w, r3.y};
    float2 grad_h = make_float2(r1.z, r1.w);
    float gx[6], gy[6];
    #pragma unroll
    for (int v = 0; v < 6; v = v + 1) {
        gx[v] = 0.0f;
        gy[v] = 0.0f;
        #pragma unroll
        for (int k = 0; k < 3; k = k + 1) {
            float dv = nv[k][v] - me[v];
            gx[v] = gx[v] + wx[k] * dv;
            gy[v] = gy[v] + wy[k] * dv;
        }
        // Barth-Jespersen factor (see barth_jespersen in muscl.rs).
        float alpha = 1.0f;
        #pragma unroll
        for (int k = 0; k < 3; k = k + 1) {
            float d = gx[v] * dx[k] + gy[v] * dy[k];
            if (d > 0.0f) {
                alpha = fminf(alpha, (hi[v] - me[v]) / d);
            } else if (d < 0.0f) {
                alpha = fminf(alpha, (lo[v] - me[v]) / d);
            }
        }
        alpha = fmaxf(alpha, 0.0f);
        gx[v] = alpha * gx[v];
        gy[v] = alpha * gy[v];
    }
    float2 g_h2 = make_float2(gx[1] + grad_h.x, gy[1] + grad_h.y);
    float h1 = me[0];
    float h2 = cells[2u * c].w;
    bool flat1 = h1 < DRY_TOL;
    bool flat2 = h2 < DRY_TOL;
    #pragma unroll
    for (int k = 0; k < 3; k = k + 1) {
        flat1 = flat1 || h1 + (gx[0] * dx[k] + gy[0] * dy[k]) < 0.0f;
        flat2 = flat2 || h2 + (g_h2.x * dx[k] + g_h2.y * dy[k]) < 0.0f;
    }
    if (flat1) {
        gx[0] = 0.0f;
        gy[0] = 0.0f;
        gx[2] = 0.0f;
        gy[2] = 0.0f;
        gx[3] = 0.0f;
        gy[3] = 0.0f;
    }
    if (flat2) {
        gx[1] = -grad_h.x;
        gy[1] = -grad_h.y;
        g_h2 = make_float2(0.0f, 0.0f);
        gx[4] = 0.0f;
        gy[4] = 0.0f;
        gx[5] = 0.0f;
        gy[5] = 0.0f;
    }
    #pragma unroll
    for (int k = 0; k < 3; k = k + 1) {
        float inc[6];
        #pragma unroll
        for (int v = 0; v < 6; v = v + 1) {
            inc[v] = gx[v] * dx[k] + gy[v] * dy[k];
        }
        float dh2 = g_h2.x * dx[k] + g_h2.y * dy[k];
        float dh = grad_h.x * dx[k] + grad_h.y * dy[k];
        deltas[6u * c + 2u * (u32)k] = make_float4(inc[0], inc[2], inc[3], dh2);
        deltas[6u * c + 2u * (u32)k + 1u] = make_float4(inc[4], inc[5], dh, inc[1]);
    }
}
