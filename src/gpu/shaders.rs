//! WGSL shaders embedded in the binary, with a tiny `// #include "path"` preprocessor so kernels
//! share code from `shaders/common/` (each file is included once per kernel).

use crate::error::{Error, Result};
use std::sync::atomic::{AtomicBool, Ordering};

/// When set, kernels are built without wgpu's runtime checks (index clamping on every buffer
/// and array access, and a counter bounding every loop). Off by default: the checks keep a
/// kernel bug from corrupting memory. Turned on by `--trusted-kernels` (or the environment
/// variable CHROMAFLOW_TRUSTED_KERNELS=1) for speed, on kernels the test suite has verified.
static TRUSTED_KERNELS: AtomicBool = AtomicBool::new(false);

/// Build later pipelines without runtime checks (see [`TRUSTED_KERNELS`]).
pub fn set_trusted_kernels(on: bool) {
    TRUSTED_KERNELS.store(on, Ordering::Relaxed);
}

/// Whether pipelines are built without runtime checks.
pub fn trusted_kernels() -> bool {
    TRUSTED_KERNELS.load(Ordering::Relaxed)
        || std::env::var("CHROMAFLOW_TRUSTED_KERNELS").is_ok_and(|v| v == "1")
}

/// Embeds `shaders/<path>` as a (path, source) pair.
macro_rules! shader {
    ($path:literal) => {
        ($path, include_str!(concat!("../../shaders/", $path)))
    };
}

/// Every shader file under `shaders/` (kernels and shared code), embedded at build time.
/// A test checks this list against the directory so a new file cannot be forgotten.
pub const SHADER_FILES: &[(&str, &str)] = &[
    shader!("common/dispatch.wgsl"),
    shader!("common/vcolor_first_fit.wgsl"),
    shader!("green_gauss_gradient.wgsl"),
    shader!("reduce_min.wgsl"),
    shader!("scan_add.wgsl"),
    shader!("scan_blocks.wgsl"),
    shader!("vcolor_assign.wgsl"),
    shader!("vcolor_compact.wgsl"),
    shader!("vcolor_detect.wgsl"),
    shader!("vcolor_recolor.wgsl"),
    shader!("common/swe_flux.wgsl"),
    shader!("common/swe_control.wgsl"),
    shader!("swe_edge_flux.wgsl"),
    shader!("swe_cell_gather.wgsl"),
    shader!("swe_local_dt.wgsl"),
    shader!("swe_time.wgsl"),
    shader!("swe_update.wgsl"),
    shader!("common/smooth_relocate.wgsl"),
    shader!("smooth_hardware.wgsl"),
    shader!("smooth_texel.wgsl"),
    shader!("smooth_buffer.wgsl"),
    shader!("common/dg_euler.wgsl"),
    shader!("common/dg_tables.wgsl"),
    shader!("dg_volume.wgsl"),
    shader!("dg_surface.wgsl"),
    shader!("dg_stage.wgsl"),
    shader!("dg_limit.wgsl"),
    shader!("dg_local_dt.wgsl"),
    shader!("dg_time.wgsl"),
];

/// Names of the kernel shaders (the files outside `common/`), one entry point `main` each.
pub fn kernel_names() -> impl Iterator<Item = &'static str> {
    SHADER_FILES
        .iter()
        .map(|(n, _)| *n)
        .filter(|n| !n.starts_with("common/"))
        .map(|n| n.trim_end_matches(".wgsl"))
}

fn raw_source(file: &str) -> Result<&'static str> {
    embedded(SHADER_FILES, file)
}

/// The source of `file` in an embedded (path, source) list.
pub fn embedded(files: &'static [(&str, &str)], file: &str) -> Result<&'static str> {
    files
        .iter()
        .find(|(n, _)| *n == file)
        .map(|(_, s)| *s)
        .ok_or_else(|| Error::Gpu(format!("shader file '{file}' is not embedded")))
}

/// The full WGSL source of kernel `name` (file stem), with includes expanded.
pub fn kernel_source(name: &str) -> Result<String> {
    expand_includes(&format!("{name}.wgsl"), &raw_source)
}

/// Expand `// #include "path"` lines recursively (each file once), reading files with `read`.
/// Shared by the WGSL kernels and their CUDA twins.
pub fn expand_includes(file: &str, read: &dyn Fn(&str) -> Result<&'static str>) -> Result<String> {
    fn go(
        file: &str,
        read: &dyn Fn(&str) -> Result<&'static str>,
        out: &mut String,
        seen: &mut Vec<String>,
    ) -> Result<()> {
        if seen.iter().any(|s| s == file) {
            return Ok(());
        }
        seen.push(file.to_string());
        for line in read(file)?.lines() {
            if let Some(rest) = line.trim().strip_prefix("// #include") {
                go(rest.trim().trim_matches('"'), read, out, seen)?;
            } else {
                out.push_str(line);
                out.push('\n');
            }
        }
        Ok(())
    }
    let mut out = String::new();
    go(file, read, &mut out, &mut Vec::new())?;
    Ok(out)
}

/// Compile kernel `name` into a compute pipeline with entry point `main` and an automatic layout
/// from the given bind group layouts.
pub fn compute_pipeline(
    device: &wgpu::Device,
    name: &str,
    layouts: &[&wgpu::BindGroupLayout],
    constants: &[(&str, f64)],
) -> Result<wgpu::ComputePipeline> {
    let source = kernel_source(name)?;
    let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
    let desc = wgpu::ShaderModuleDescriptor {
        label: Some(name),
        source: wgpu::ShaderSource::Wgsl(source.into()),
    };
    let module = if trusted_kernels() {
        // SAFETY: every kernel guards its indices by the item range and by mesh connectivity
        // validated on the host; the GPU-vs-CPU tests exercise each one with the checks on.
        // Loops are bounded by degree or level counts. The user opts in explicitly.
        unsafe { device.create_shader_module_trusted(desc, wgpu::ShaderRuntimeChecks::unchecked()) }
    } else {
        device.create_shader_module(desc)
    };
    let opt_layouts: Vec<Option<&wgpu::BindGroupLayout>> =
        layouts.iter().map(|l| Some(*l)).collect();
    let layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
        label: Some(name),
        bind_group_layouts: &opt_layouts,
        immediate_size: 0,
    });
    let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some(name),
        layout: Some(&layout),
        module: &module,
        entry_point: Some("main"),
        compilation_options: wgpu::PipelineCompilationOptions {
            constants,
            zero_initialize_workgroup_memory: false,
        },
        cache: None,
    });
    match pollster::block_on(scope.pop()) {
        Some(e) => Err(Error::Gpu(format!("kernel shaders/{name}.wgsl: {e}"))),
        None => Ok(pipeline),
    }
}
