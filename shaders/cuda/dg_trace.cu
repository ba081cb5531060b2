// #include "common/dispatch.cuh"
// #include "common/dg_tables.cuh"

// CUDA twin of shaders/dg_trace.wgsl. DG traces of the gathered surface integral
// (Operator::traces), one thread per element: the state of element i at the NQE Gauss nodes of
// each of its sides s, in the side's own orientation,
//   trace[side_slot(i, s NQE + q)] = sum_{k >= 1} c_k(i) phi_k(x_{s,q}),
// its deviation from the mean c_0 phi_0 (deviation form, dg_euler: dg_flux adds the means),
// slot-major like the coefficients, so reads and writes are coalesced here and dg_flux reads
// states instead of gathering every coefficient of both elements per edge.
//
// range: first/count the elements, pad the register.

extern "C" __global__ void dg_trace(
    const float* __restrict__ regs,
    const float* __restrict__ tables,
    float4* __restrict__ traces,
    ItemRange range) {
    u32 i = linear_index();
    if (i >= range.count) {
        return;
    }
    u32 reg = range.pad;
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
