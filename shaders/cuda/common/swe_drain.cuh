// CUDA twin of shaders/common/swe_drain.wgsl. Second order: the draining factor that keeps each
// layer's depth non-negative with its mass exact (shared by swe_fused_step, swe_drain and
// swe_drain_fix). CPU reference: drain_factor in src/solver/swe/muscl.rs,
// CpuSolver::accumulate in src/solver/swe/cpu.rs.
//
// Draining (Bollermann, Chen, Kurganov & Noelle 2013): a layer of cell i with depth h_i and
// outflow O_i = sum_j |G_ij| max(0, G_ij) (G the mass flux out of i) gets
// theta_i = (1 - DRAIN_MARGIN) h_i / (dt/|V_i| O_i) where dt/|V_i| O_i would take out more,
// else 1;
// an edge's rows of that layer (h, qx, qy) are scaled by theta of the cell its mass flux
// leaves, on both cells. A cell that drains writes its record (launch tag, dt, theta1,
// theta2); a record counts only in the launch of that tag and dt (a rejected and retaken
// step has a smaller dt), so nothing has to clear the records.

#define DRAIN_MARGIN 1.0e-3f

// theta of a layer of depth h whose outflow would take out `drop` = dt/|V| O (compared as
// depths, the update's own scale: denormals flushed to zero cannot hide a drop).
__device__ __forceinline__ float drain_factor(float depth, float drop) {
    float have = (1.0f - DRAIN_MARGIN) * fmaxf(depth, 0.0f);
    return drop > have ? have / drop : 1.0f;
}

// (theta1, theta2) of a drain record in the launch of `tag` and `dt`; 1 for older records.
__device__ __forceinline__ float2 drain_theta(float4 r, u32 tag, float dt) {
    if (__float_as_uint(r.x) == tag && __float_as_uint(r.y) == __float_as_uint(dt)) {
        return make_float2(r.z, r.w);
    }
    return make_float2(1.0f, 1.0f);
}

// A drain record for `tag` and `dt`.
__device__ __forceinline__ float4 drain_record(u32 tag, float dt, float2 theta) {
    return make_float4(__uint_as_float(tag), dt, theta.x, theta.y);
}

__device__ __forceinline__ bool drains(float2 theta) {
    return theta.x < 1.0f || theta.y < 1.0f;
}
