// Time and event counters of a two-layer shallow-water run, kept on the GPU (mirrors
// GpuControl in src/solver/swe/gpu.rs). The host writes t_end and reads it back only to print
// or save.
struct Control {
    t: f32,
    dt: f32,
    t_end: f32,
    steps: u32,
    nonhyperbolic: u32,
    fallback: u32,
    chi_clamped: u32,
    clipped: u32,
    max_step_nonhyperbolic: u32,
    max_step_fallback: u32,
    last_dt: f32,
    pad: u32,
}
