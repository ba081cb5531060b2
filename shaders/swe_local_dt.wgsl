// #include "common/dispatch.wgsl"

// Local CFL step of each cell, condition (3): dt_i = 2 CFL |V_i| / sum_j |G_ij| lam_ij (the sum
// is acc[2i + 1].z after the flux pass); cells where nothing moves get BIG, cells with a NaN or
// Inf in their state or sum get -1, which the min-reduction (reduce_min.wgsl) carries to the
// time kernel: the run stops there instead of stepping on. Finiteness is tested on the bits
// (exponent all ones), which no fast-math assumption can fold away.

override CFL: f32 = 0.9;
const BIG: f32 = 3.0e38;

@group(0) @binding(0) var<storage, read> cells: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read> acc: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> dt_local: array<f32>;
@group(1) @binding(0) var<uniform> range: ItemRange;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = linear_index(gid, nwg);
    if (i >= range.count) {
        return;
    }
    let c = range.first + i;
    let s = acc[2u * c + 1u].z;
    let w1 = cells[2u * c + 1u];
    let inf = vec4<u32>(0x7f800000u);
    let finite = all((bitcast<vec4<u32>>(cells[2u * c]) & inf) != inf)
        && all((bitcast<vec4<u32>>(vec4<f32>(w1.xy, s, 0.0)) & inf) != inf);
    dt_local[c] = select(-1.0, select(BIG, 2.0 * CFL * w1.w / s, s > 0.0), finite);
}
