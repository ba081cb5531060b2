// #include "common/dispatch.cuh"
// #include "common/dg_tables.cuh"

// CUDA twin of shaders/dg_trace.wgsl. DG traces of the gathered surface integral
// (Operator::traces), one thread per element: the state of element i at the NQE Gauss nodes of
// each of its sides s, in the side's own orientation,
//   trace[side_slot(i, s NQE + q)] = sum_{k >= 1} c_k(i) phi_k(x_{s,q}),
// its deviation from the mean c_0 phi_0 (deviation form, dg_euler: dg_flux adds the means),
// slot-major like the coefficients, so reads and writes are coalesced here and dg_flux reads
// states instead of gathering every coefficient of both elements per edge. It also copies the
// mean coefficient c_0 as hi and lo words next to each other (means[2i], means[2i + 1]), so
// dg_flux reads one element's mean in one 32-byte sector and the jump of the means across an
// edge keeps the lo words (the p = 3 f32 floor of issue 13).
//
// regs_lo: the low words of R0..R3. range: first/count the elements, pad the register.

extern "C" __global__ void dg_trace(
    const float* __restrict__ regs,
    const float* __restrict__ tables,
    float4* __restrict__ traces,
    const float* __restrict__ regs_lo,
    float4* __restrict__ means,
    ItemRange range) {
    u32 i = linear_index();
    if (i >= range.count) {
        return;
    }
    u32 reg = range.pad;
    means[2u * i] = make_float4(regs[dof(reg, 0u, 0u, i)], regs[dof(reg, 1u, 0u, i)],
                                regs[dof(reg, 2u, 0u, i)], regs[dof(reg, 3u, 0u, i)]);
    means[2u * i + 1u] = make_float4(regs_lo[dof(reg, 0u, 0u, i)], regs_lo[dof(reg, 1u, 0u, i)],
                                     regs_lo[dof(reg, 2u, 0u, i)], regs_lo[dof(reg, 3u, 0u, i)]);
    float4 u[3u * MAX_NQE];
    #pragma unroll
    for (u32 j = 0u; j < 3u * NQE; j = j + 1u) {
        u[j] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    }
    #pragma unroll
    for (u32 k = 1u; k < NP; k = k + 1u) {
        float4 c = make_float4(regs[dof(reg, 0u, k, i)], regs[dof(reg, 1u, k, i)],
                               regs[dof(reg, 2u, k, i)], regs[dof(reg, 3u, k, i)]);
        // j = s NQE + q, one loop as in the WGSL twin.
        #pragma unroll
        for (u32 j = 0u; j < 3u * NQE; j = j + 1u) {
            u[j] = u[j] + tables[t_edge_phi(j / NQE, j % NQE, k)] * c;
        }
    }
    #pragma unroll
    for (u32 j = 0u; j < 3u * NQE; j = j + 1u) {
        traces[side_slot(i, j)] = u[j];
    }
}
