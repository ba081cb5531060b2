// #include "common/dispatch.wgsl"
// #include "common/amr_tree.wgsl"
// #include "common/amr_indicator.wgsl"

// Refinement flags from the indicator, one thread per slot (common/amr_indicator.wgsl;
// indicator() and flags() in src/solver/dg/amr/indicator.rs): eps_i = h_i |grad q(U_i)| (GK19
// eq. 10), with params.jumps plus the largest jump of q's element means across the faces.

override NP: u32 = 3u;

@group(0) @binding(0) var<storage, read> regs: array<f32>;
// Per mode k: (phi_k, d phi_k / d xi, d phi_k / d eta, 0) at the reference centroid.
@group(0) @binding(1) var<storage, read> centroid_basis: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> inv_jac: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read> heights: array<f32>;
// Face neighbours (dg_limit.wgsl's layout): [i] sides 0..2 and the mask of split sides in w,
// [NE + i] the second neighbours of split sides.
@group(0) @binding(4) var<storage, read> neighbors: array<vec4<u32>>;
@group(0) @binding(5) var<storage, read_write> flags: array<i32>;
@group(0) @binding(6) var<storage, read> counters: array<u32>;
@group(1) @binding(0) var<uniform> range: ItemRange;
@group(2) @binding(0) var<uniform> params: AmrParams;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = linear_index(gid, nwg);
    if (i >= min(range.count, counters[C_ACTIVE])) {
        return;
    }
    flags[i] = indicator_flag(i);
}
