// #include "common/f32_pair.wgsl"

// One SSP Runge-Kutta stage (rk::step) at one DOF j of a register, in difference form around
// the base register B (the first with a_B != 0; every combination is convex):
//   R_dst[j] = R_B[j] + (sum_{r != B} a_r (R_r[j] - R_B[j]) + b dt rhs[j])
// (and optionally R_dst2 with a2, b2). Registers R0..R3 are f32 pairs R = hi + lo (regs,
// regs_lo, which the including kernel declares read_write, n DOFs per register); volume,
// surface and limiter read hi. The bracket is an O(dt rhs) increment in plain f32; it goes into
// lo, and lo's part on the grid ulp(hi_B) moves into hi (split_pair), so neither the
// coefficients' f32 rounding (they sum to 1 +- 3e-8) nor increments below half an ulp of hi
// are lost (issue 13: both drained ~1e-8 of the mass per step). Used by dg_stage (one thread per
// DOF, rhs from memory) and by dg_volume with STAGE = 1 (one thread per element, rhs in
// registers: it never goes to memory).

struct Stage {
    a: vec4<f32>,
    a2: vec4<f32>,
    b: f32,
    b2: f32,
    dst: u32,    // register of hi (the limiter's scratch when the limiter is on)
    dst2: u32,   // 0xffffffff: none
    // The stage's register: its lo word is the pair's when dst is that register, else 0 (the
    // limiter writes its hi from the scratch's hi alone).
    lo_dst: u32,
    pad0: u32,
    pad1: u32,
    pad2: u32,
}

// (hi_B, lo_B + increment) of sum_r a_r R_r[j] + b dt f in difference form (see the top),
// f = rhs[j]: stage_combine before its split, for a caller that loads every DOF of an element
// before it stores any (dg_volume with STAGE = 1).
fn stage_sum(a: vec4<f32>, b: f32, dt: f32, f: f32, j: u32, n: u32) -> vec2<f32> {
    let base = select(select(select(3u, 2u, a.z != 0.0), 1u, a.y != 0.0), 0u, a.x != 0.0);
    let hb = regs[base * n + j];
    let lb = regs_lo[base * n + j];
    var increment = b * dt * f;
    // #unroll
    for (var r = 0u; r < 4u; r = r + 1u) {
        if (a[r] != 0.0 && r != base) {
            increment = increment + a[r] * ((regs[r * n + j] - hb) + (regs_lo[r * n + j] - lb));
        }
    }
    return vec2<f32>(hb, lb + increment);
}

// hi + lo of sum_r a_r R_r[j] + b dt f in difference form (see the top), f = rhs[j].
fn stage_combine(a: vec4<f32>, b: f32, dt: f32, f: f32, j: u32, n: u32) -> vec2<f32> {
    let v = stage_sum(a, b, dt, f, j, n);
    return split_pair(v.x, v.y);
}

// Store stage s's dst (not dst2) at DOF j from stage_sum's (hi_B, lo_B + increment) = v.
fn stage_store(s: Stage, v: vec2<f32>, j: u32, n: u32) {
    let pair = split_pair(v.x, v.y);
    regs[s.dst * n + j] = pair.x;
    regs_lo[s.lo_dst * n + j] = select(0.0, pair.y, s.dst == s.lo_dst);
}

// Stage s at DOF j with rhs value f: reads every register at j before writing, so in-place
// stages are safe.
fn stage_apply(s: Stage, dt: f32, f: f32, j: u32, n: u32) {
    let v = stage_sum(s.a, s.b, dt, f, j, n);
    if (s.dst2 != 0xffffffffu) {
        let v2 = stage_combine(s.a2, s.b2, dt, f, j, n);
        regs[s.dst2 * n + j] = v2.x;
        regs_lo[s.dst2 * n + j] = v2.y;
    }
    stage_store(s, v, j, n);
}
