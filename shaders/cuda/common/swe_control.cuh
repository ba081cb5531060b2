// CUDA twin of shaders/common/swe_control.wgsl: time and event counters of a two-layer
// shallow-water run, kept on the GPU (mirrors GpuControl in src/solver/swe/gpu.rs). The host
// writes t_end and reads it back only to print or save.
struct Control {
    float t;
    float dt;
    float t_end;
    u32 steps;
    u32 nonhyperbolic;
    u32 fallback;
    u32 chi_clamped;
    u32 clipped;
    u32 max_step_nonhyperbolic;
    u32 max_step_fallback;
    float last_dt;
    u32 pad;
};
