// Second order: the draining factor that keeps each layer's depth non-negative with its mass
// exact (shared by swe_fused_step, swe_drain and swe_drain_fix). CPU reference: drain_factor
// in src/solver/swe/muscl.rs, CpuSolver::accumulate in src/solver/swe/cpu.rs.
//
// Draining (Bollermann, Chen, Kurganov & Noelle 2013): a layer of cell i with depth h_i and
// outflow O_i = sum_j |G_ij| max(0, G_ij) (G the mass flux out of i) gets
// theta_i = (1 - DRAIN_MARGIN) h_i / (dt/|V_i| O_i) where dt/|V_i| O_i would take out more,
// else 1;
// an edge's rows of that layer (h, qx, qy) are scaled by theta of the cell its mass flux
// leaves, on both cells. A cell that drains writes its record (launch tag, dt, theta1,
// theta2); a record counts only in the launch of that tag and dt (a rejected and retaken
// step has a smaller dt), so nothing has to clear the records.

const DRAIN_MARGIN: f32 = 1.0e-3;

// theta of a layer of depth h whose outflow would take out `drop` = dt/|V| O (compared as
// depths, the update's own scale: denormals flushed to zero cannot hide a drop).
fn drain_factor(depth: f32, drop: f32) -> f32 {
    let have = (1.0 - DRAIN_MARGIN) * max(depth, 0.0);
    return select(1.0, have / drop, drop > have);
}

// (theta1, theta2) of a drain record in the launch of `tag` and `dt`; 1 for older records.
fn drain_theta(r: vec4<f32>, tag: u32, dt: f32) -> vec2<f32> {
    if (bitcast<u32>(r.x) == tag && bitcast<u32>(r.y) == bitcast<u32>(dt)) {
        return r.zw;
    }
    return vec2<f32>(1.0);
}

// A drain record for `tag` and `dt`.
fn drain_record(tag: u32, dt: f32, theta: vec2<f32>) -> vec4<f32> {
    return vec4<f32>(bitcast<f32>(tag), dt, theta);
}
