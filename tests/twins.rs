//! Every WGSL kernel and its CUDA twin share one interface: the runtime passes the same
//! argument list to both (the WGSL bindings in (group, binding) order without the item range
//! and samplers; the CUDA parameters in that order with the range last), so a twin whose
//! parameters drift from the WGSL (order, element type, constness, name) fails here, as does a
//! `#[repr(C)]` Rust mirror whose size differs from the WGSL struct's layout. A kernel without
//! a twin must be listed in `WGSL_ONLY` on purpose.

use chromaflow::runtime::interface::{
    cuda_entries, cuda_parameters, reflect_kernel, twin_mismatch, KernelInterface,
};
use chromaflow::runtime::shaders::kernel_names;
use std::path::Path;

/// Kernels that have no CUDA twin, and why.
const WGSL_ONLY: &[(&str, &str)] = &[(
    "green_gauss_gradient",
    "the smallest test of the per-color machinery, not a solver kernel",
)];

fn cuda_source(stem: &str) -> Option<String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("shaders/cuda/{stem}.cu"));
    std::fs::read_to_string(path).ok()
}

/// Every mismatch between `iface` and the kernel `entry` of `source`.
fn mismatches(iface: &KernelInterface, source: &str, entry: &str) -> Vec<String> {
    let Some(params) = cuda_parameters(source, entry) else {
        return vec![format!("no kernel {entry}")];
    };
    let args = iface.arguments();
    let mut out = Vec::new();
    if params.len() != args.len() + 1 {
        out.push(format!(
            "{} parameters, expected {} arguments + the item range",
            params.len(),
            args.len()
        ));
        return out;
    }
    for (a, p) in args.iter().zip(&params) {
        if let Some(m) = twin_mismatch(a, p) {
            out.push(m);
        }
    }
    let last = params.last().map(String::as_str).unwrap_or("");
    if last != "ItemRange range" {
        out.push(format!(
            "last parameter '{last}', expected 'ItemRange range'"
        ));
    }
    out
}

#[test]
fn every_cuda_entry_takes_the_wgsl_arguments_in_order() {
    let mut failures = Vec::new();
    let mut checked = 0;
    for stem in kernel_names() {
        let iface = reflect_kernel(stem).unwrap();
        let Some(source) = cuda_source(stem) else {
            if !WGSL_ONLY.iter().any(|(s, _)| *s == stem) {
                failures.push(format!(
                    "{stem}: no shaders/cuda/{stem}.cu and not in WGSL_ONLY"
                ));
            }
            continue;
        };
        let entries = cuda_entries(&source);
        if !entries.iter().any(|e| e == stem) {
            failures.push(format!("{stem}.cu: no entry point named {stem}"));
        }
        for entry in &entries {
            checked += 1;
            for m in mismatches(&iface, &source, entry) {
                failures.push(format!("{stem}.cu {entry}: {m}"));
            }
        }
    }
    assert!(checked >= 20, "only {checked} CUDA entry points found");
    assert!(
        failures.is_empty(),
        "twins drifted:\n{}",
        failures.join("\n")
    );
}

#[test]
fn every_cuda_kernel_has_a_wgsl_twin() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("shaders/cuda");
    let names: Vec<&str> = kernel_names().collect();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "cu") {
            let stem = path.file_stem().unwrap().to_str().unwrap().to_string();
            assert!(names.contains(&stem.as_str()), "{stem}.cu has no WGSL twin");
        }
    }
}

#[test]
fn the_check_catches_a_drifted_twin() {
    let iface = reflect_kernel("swe_edge_flux").unwrap();
    let good = cuda_source("swe_edge_flux").unwrap();
    assert!(mismatches(&iface, &good, "swe_edge_flux").is_empty());
    let swapped = good.replacen(
        "const SweEdge* __restrict__ edges,\n    const float4* __restrict__ cells,",
        "const float4* __restrict__ cells,\n    const SweEdge* __restrict__ edges,",
        1,
    );
    assert_ne!(swapped, good, "the test's edit must apply");
    assert!(!mismatches(&iface, &swapped, "swe_edge_flux").is_empty());
    let writable = good.replacen("const float4* __restrict__ cells", "float4* cells", 1);
    assert!(!mismatches(&iface, &writable, "swe_edge_flux").is_empty());
    let dropped = good.replacen("    u32* __restrict__ counters,\n", "", 1);
    assert!(!mismatches(&iface, &dropped, "swe_edge_flux").is_empty());
}

/// Size of the WGSL struct `name` in kernel `stem`.
fn wgsl_size(stem: &str, name: &str) -> u32 {
    reflect_kernel(stem)
        .unwrap()
        .structs
        .iter()
        .find(|(n, _)| n == name)
        .unwrap_or_else(|| panic!("no struct {name} in {stem}.wgsl"))
        .1
}

#[test]
fn rust_mirrors_have_the_wgsl_struct_sizes() {
    use chromaflow::runtime::{ItemRange, RangeRecord};
    use chromaflow::solver::dg::amr::gpu::AmrParams;
    use chromaflow::solver::dg::amr::reorder::ReorderParams;
    use chromaflow::solver::dg::mesh::DgEdge;
    use chromaflow::solver::gradient::GpuEdge;
    use chromaflow::solver::swe::boundary::GpuDrivenEdge;
    use chromaflow::solver::swe::gpu::GaugeState;
    use chromaflow::solver::swe::mesh::SweEdge;
    use std::mem::size_of;
    let table: &[(&str, &str, usize)] = &[
        // WGSL's ItemRange is the runtime's range record up to its reserved words: the
        // launch's range, then the kernel's capacity.
        (
            "reduce_min",
            "ItemRange",
            std::mem::offset_of!(RangeRecord, reserved),
        ),
        ("green_gauss_gradient", "Edge", size_of::<GpuEdge>()),
        ("swe_edge_flux", "SweEdge", size_of::<SweEdge>()),
        (
            "swe_boundary_values",
            "DrivenEdge",
            size_of::<GpuDrivenEdge>(),
        ),
        ("swe_gauges", "GaugeState", size_of::<GaugeState>()),
        ("dg_surface", "DgEdge", size_of::<DgEdge>()),
        ("amr_flag", "AmrParams", size_of::<AmrParams>()),
        ("amr_permute", "ReorderParams", size_of::<ReorderParams>()),
    ];
    assert_eq!(
        std::mem::offset_of!(RangeRecord, capacity),
        size_of::<ItemRange>()
    );
    for (stem, name, rust) in table {
        assert_eq!(
            wgsl_size(stem, name) as usize,
            *rust,
            "{name} in {stem}.wgsl vs its Rust mirror"
        );
    }
}

/// A kernel's thread index follows its workgroup width on both backends: a kernel declaring
/// WIDE_WORKGROUP_SIZE threads takes its index from wide_linear_index in WGSL and in its CUDA
/// twin, one of WORKGROUP_SIZE from linear_index, and both includes define the runtime's
/// widths. A wide kernel indexed as a narrow one (or the reverse) would skip or repeat items
/// past its first workgroup.
#[test]
fn every_kernel_indexes_its_threads_by_its_own_workgroup_width() {
    use chromaflow::runtime::{WIDE_WORKGROUP_SIZE, WORKGROUP_SIZE};
    let shaders = Path::new(env!("CARGO_MANIFEST_DIR")).join("shaders");
    let read = |path: &str| std::fs::read_to_string(shaders.join(path)).expect(path);
    for (path, want) in [
        (
            "common/dispatch.wgsl",
            format!("const WIDE_WORKGROUP_SIZE: u32 = {WIDE_WORKGROUP_SIZE}u;"),
        ),
        (
            "cuda/common/dispatch.cuh",
            format!("#define WIDE_WORKGROUP_SIZE {WIDE_WORKGROUP_SIZE}u"),
        ),
    ] {
        assert!(read(path).contains(&want), "{path} lacks '{want}'");
    }
    // (calls of wide_linear_index, calls of linear_index alone) in a source.
    let calls = |src: &str| {
        let wide = src.matches("wide_linear_index(").count();
        (wide, src.matches("linear_index(").count() - wide)
    };
    let mut wide_kernels = 0;
    for stem in kernel_names() {
        let size = reflect_kernel(stem).expect(stem).workgroup_size;
        let mut sources = vec![(format!("{stem}.wgsl"), read(&format!("{stem}.wgsl")))];
        if let Some(cuda) = cuda_source(stem) {
            sources.push((format!("cuda/{stem}.cu"), cuda));
        }
        for (path, src) in &sources {
            let (wide, narrow) = calls(src);
            if size == WIDE_WORKGROUP_SIZE && (wide > 0 || narrow > 0) {
                assert!(
                    wide > 0 && narrow == 0,
                    "{path}: {WIDE_WORKGROUP_SIZE} threads a workgroup, indexed by linear_index"
                );
            }
            if size == WORKGROUP_SIZE {
                assert_eq!(
                    wide, 0,
                    "{path}: {WORKGROUP_SIZE} threads a workgroup, indexed by wide_linear_index"
                );
            }
        }
        if size == WIDE_WORKGROUP_SIZE && calls(&sources[0].1).0 > 0 {
            wide_kernels += 1;
        }
    }
    assert_eq!(
        wide_kernels, 4,
        "amr_mark, amr_compact, amr_geometry and amr_faces are wide"
    );
}
