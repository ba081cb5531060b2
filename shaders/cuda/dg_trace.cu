// #include "common/dispatch.cuh"
// #include "common/dg_tables.cuh"

// CUDA twin of shaders/dg_trace.wgsl. DG traces of the gathered surface integral
// (Operator::traces), one thread per element: the state of element i at the NQE Gauss nodes of
// each of its sides s, in the side's own orientation,
//   trace[side_slot(i, s NQE + q)] = sum_{k >= 1} c_k(i) phi_k(x_{s,q}),
// its deviation from the mean c_0 phi_0 (deviation form, dg_euler: dg_flux adds the means),
// in the side-major layout of side_slot (the block stages each side and writes it as one span,
// so reads and writes are coalesced here), and dg_flux reads states instead of gathering every
// coefficient of both elements per edge. It also copies the
// mean coefficient c_0 as hi and lo words next to each other (means[2i], means[2i + 1]), so
// dg_flux reads one element's mean in one 32-byte sector and the jump of the means across an
// edge keeps the lo words (the p = 3 f32 floor of issue 13).
//
// regs_lo: the low words of R0..R3. range: first/count the elements, pad the register.
// launches: launch records (dispatch.cuh), read when range.count is DEVICE_COUNT (an adapted
// mesh).

/// Write staged[0 .. per_thread * live) to out[base ..] as one span (see the twin); every
/// thread of the block calls it (it has barriers).
__device__ __forceinline__ void write_staged(const float4* staged, float4* out, u32 lid, u32 live,
                                             u32 per_thread, u32 base) {
    __syncthreads();
    u32 span = live * per_thread;
    for (u32 k = 0u; k < per_thread; k = k + 1u) {
        u32 o = lid + k * WORKGROUP_SIZE;
        if (o < span) {
            out[base + o] = staged[o];
        }
    }
    __syncthreads();
}

extern "C" __global__ void dg_trace(
    const float* __restrict__ regs,
    const float* __restrict__ tables,
    float4* __restrict__ traces,
    const float* __restrict__ regs_lo,
    float4* __restrict__ means,
    const u32* __restrict__ launches,
    ItemRange range) {
    await_previous_launches();
    __shared__ float4 staged[WORKGROUP_SIZE * MAX_NQE];
    u32 first = (blockIdx.x + blockIdx.y * gridDim.x) * WORKGROUP_SIZE;
    u32 count = range.count == DEVICE_COUNT ? launches[range.first + 1u] : range.count;
    if (first >= count) {
        return;
    }
    u32 live = min(count - first, WORKGROUP_SIZE);
    u32 lid = threadIdx.x;
    u32 i = first + lid;
    u32 reg = range.pad;
    float4 u[3u * MAX_NQE];
    #pragma unroll
    for (u32 j = 0u; j < 3u * NQE; j = j + 1u) {
        u[j] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    }
    if (lid < live) {
        staged[2u * lid] = make_float4(regs[dof(reg, 0u, 0u, i)], regs[dof(reg, 1u, 0u, i)],
                                       regs[dof(reg, 2u, 0u, i)], regs[dof(reg, 3u, 0u, i)]);
        staged[2u * lid + 1u] = make_float4(regs_lo[dof(reg, 0u, 0u, i)], regs_lo[dof(reg, 1u, 0u, i)],
                                            regs_lo[dof(reg, 2u, 0u, i)], regs_lo[dof(reg, 3u, 0u, i)]);
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
    }
    write_staged(staged, means, lid, live, 2u, 2u * first);
    #pragma unroll
    for (u32 j = 0u; j < 3u * NQE; j = j + 1u) {
        staged[lid * NQE + j % NQE] = u[j];
        if (j % NQE == NQE - 1u) {
            write_staged(staged, traces, lid, live, NQE, side_slot(first, j - j % NQE));
        }
    }
}
