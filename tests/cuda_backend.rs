//! The CUDA backend's contract that needs no GPU: every CUDA kernel in shaders/cuda/ has its
//! WGSL twin (same stem) and every CUDA file is embedded; without the `cuda` feature,
//! `--backend cuda` is a clear usage error telling how to rebuild; with it but without an
//! NVIDIA driver, a clear error naming the driver. The CUDA results themselves are checked on
//! the GPU machine by `chromaflow parity` (CI has no NVIDIA GPU).

use std::path::Path;
use std::process::Command;

fn files(dir: &Path, ext: &str) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == ext))
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn every_cuda_kernel_has_a_wgsl_twin() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("shaders");
    let cu = files(&root.join("cuda"), "cu");
    assert!(!cu.is_empty(), "no CUDA kernels in shaders/cuda");
    for stem in &cu {
        assert!(
            root.join(format!("{stem}.wgsl")).is_file(),
            "shaders/cuda/{stem}.cu has no twin shaders/{stem}.wgsl"
        );
    }
    for stem in files(&root.join("cuda").join("common"), "cuh") {
        assert!(
            root.join("common").join(format!("{stem}.wgsl")).is_file(),
            "shaders/cuda/common/{stem}.cuh has no twin shaders/common/{stem}.wgsl"
        );
    }
    // The workloads of the CUDA backend are complete: SWE, reduction, scan, vertex coloring,
    // DG, smoothing and the adaptation.
    for stem in [
        "swe_edge_flux",
        "swe_cell_gather",
        "swe_local_dt",
        "swe_time",
        "swe_update",
        "reduce_min",
        "scan_blocks",
        "scan_add",
        "vcolor_assign",
        "vcolor_detect",
        "vcolor_compact",
        "vcolor_class_count",
        "vcolor_class_offsets",
        "vcolor_class_bucket",
        "vcolor_recolor",
        "vcolor_max",
        "vcolor_eject_start",
        "vcolor_eject_propose",
        "vcolor_eject_resolve",
        "vcolor_eject_apply",
        "vcolor_eject_count",
        "dg_volume",
        "dg_surface",
        "dg_stage",
        "dg_limit",
        "dg_local_dt",
        "dg_time",
        "smooth_hardware",
        "smooth_texel",
        "smooth_buffer",
        "amr_flag",
        "amr_smooth",
        "amr_mark",
        "amr_scan",
        "amr_coarsen",
        "amr_refine",
        "amr_compact",
        "amr_geometry",
        "amr_faces",
    ] {
        assert!(
            cu.iter().any(|s| s == stem),
            "shaders/cuda/{stem}.cu missing"
        );
    }
}

/// On sm_90 and later the CUDA backend lets a kernel's launch overlap the previous kernel
/// (programmatic stream serialization): a kernel that read or wrote memory before
/// `await_previous_launches()` would race with the kernel before it. So that call must be the
/// first statement of every kernel, and the function must wait (griddepcontrol.wait).
#[test]
fn every_cuda_kernel_waits_for_the_launches_before_it() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("shaders/cuda");
    let dispatch = std::fs::read_to_string(root.join("common/dispatch.cuh")).unwrap();
    let body = dispatch
        .split("void await_previous_launches() {")
        .nth(1)
        .expect("dispatch.cuh defines await_previous_launches");
    let body = &body[..body.find("\n}").expect("the function ends")];
    assert!(
        body.contains("asm volatile(\"griddepcontrol.wait;\" ::: \"memory\");"),
        "await_previous_launches does not wait: {body}"
    );
    let mut kernels = 0;
    for stem in files(&root, "cu") {
        let src = std::fs::read_to_string(root.join(format!("{stem}.cu"))).unwrap();
        for (at, _) in src.match_indices("__global__ void ") {
            let rest = &src[at..];
            let name = &rest["__global__ void ".len()..rest.find('(').unwrap()];
            let open = rest.find('{').unwrap();
            assert!(
                rest[open + 1..]
                    .trim_start()
                    .starts_with("await_previous_launches();"),
                "shaders/cuda/{stem}.cu: kernel {name} does not start with \
                 await_previous_launches();"
            );
            kernels += 1;
        }
    }
    assert!(kernels >= 55, "only {kernels} kernels found");
}

#[cfg(feature = "cuda")]
#[test]
fn every_cuda_file_is_embedded_and_current() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("shaders/cuda");
    let mut on_disk: Vec<String> = files(&root, "cu")
        .into_iter()
        .map(|s| format!("{s}.cu"))
        .chain(
            files(&root.join("common"), "cuh")
                .into_iter()
                .map(|s| format!("common/{s}.cuh")),
        )
        .collect();
    on_disk.sort();
    let mut embedded: Vec<String> = chromaflow::runtime::cuda::CUDA_FILES
        .iter()
        .map(|(n, _)| n.to_string())
        .collect();
    embedded.sort();
    assert_eq!(on_disk, embedded, "shaders/cuda and CUDA_FILES differ");
    for (name, src) in chromaflow::runtime::cuda::CUDA_FILES {
        assert_eq!(
            &std::fs::read_to_string(root.join(name)).unwrap(),
            src,
            "{name} embedded copy is stale"
        );
    }
    // Includes expand and every kernel's entry point is an extern "C" __global__ function.
    for name in files(&root, "cu") {
        let src = chromaflow::runtime::cuda::kernel_source(&name).unwrap();
        assert!(
            src.contains(&format!("extern \"C\" __global__ void {name}(")),
            "{name}.cu: no kernel {name}"
        );
        assert!(
            !src.contains("// #include"),
            "{name}.cu: unexpanded include"
        );
    }
    assert_eq!(
        chromaflow::runtime::cuda::define_f32("GRAVITY", 9.81),
        "-DGRAVITY=9.81e0f"
    );
    assert_eq!(
        chromaflow::runtime::cuda::define_u32("SCHEME", 2),
        "-DSCHEME=2u"
    );
}

fn chromaflow(args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_chromaflow"))
        .args(args)
        .output()
        .expect("run chromaflow");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[cfg(not(feature = "cuda"))]
#[test]
fn backend_cuda_without_the_feature_says_how_to_rebuild() {
    for args in [
        &[
            "--backend",
            "cuda",
            "swe",
            "--cells",
            "100",
            "--final-time",
            "0.01",
        ][..],
        &["bench", "swe", "--backend", "cuda", "--sizes", "1000"][..],
        &["bench", "color", "--backend", "cuda", "--sizes", "1000"][..],
        &[
            "color",
            "rect:200",
            "--vertices",
            "--gpu",
            "data",
            "--backend",
            "cuda",
        ][..],
        &[
            "--backend",
            "cuda",
            "dg",
            "--cells",
            "200",
            "--t-end",
            "0.01",
        ][..],
        &["bench", "dg", "--backend", "cuda", "--cells", "200"][..],
        &["parity", "--backends", "cuda"][..],
        &["--backend", "cuda", "smooth", "rect:200"][..],
        &["bench", "smooth", "--backend", "cuda", "--sizes", "1000"][..],
    ] {
        let (code, err) = chromaflow(args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(
            err.contains("built without CUDA support") && err.contains("--features cuda"),
            "{args:?}: {err}"
        );
    }
}

/// With the feature but no NVIDIA driver (CI), the error names the driver; on a CUDA machine
/// this test is ignored by design (the parity command covers it).
#[cfg(feature = "cuda")]
#[test]
fn backend_cuda_without_a_driver_is_a_clear_error() {
    if chromaflow::runtime::cuda::libraries_present().is_ok() {
        return;
    }
    let (code, err) = chromaflow(&["--backend", "cuda", "swe", "--cells", "100"]);
    assert_ne!(code, 0);
    assert!(
        err.contains("NVIDIA driver") || err.contains("NVRTC"),
        "{err}"
    );
}

/// `smooth` and `bench smooth` take `--backend cuda`: with the feature but no NVIDIA driver
/// (CI) the error names the driver, before any output is written.
#[cfg(feature = "cuda")]
#[test]
fn smooth_backend_cuda_without_a_driver_is_a_clear_error() {
    if chromaflow::runtime::cuda::libraries_present().is_ok() {
        return;
    }
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("smooth_cuda_no_driver");
    let out = out.to_string_lossy();
    for args in [
        &[
            "--backend",
            "cuda",
            "smooth",
            "rect:200",
            "--iterations",
            "1",
            "--out",
            &out,
        ][..],
        &[
            "bench",
            "smooth",
            "--backend",
            "cuda",
            "--sizes",
            "1000",
            "--iterations",
            "1",
        ][..],
    ] {
        let (code, err) = chromaflow(args);
        assert_ne!(code, 0, "{args:?}");
        assert!(
            err.contains("NVIDIA driver") || err.contains("NVRTC"),
            "{args:?}: {err}"
        );
    }
}

/// The CUDA solver and coloring on the device against the CPU reference; needs an NVIDIA GPU.
/// Run on the GPU machine with `cargo test --features cuda --test cuda_backend -- --ignored`
/// (or, with the full table, `chromaflow parity --backends wgpu,cuda`).
#[cfg(feature = "cuda")]
#[test]
#[ignore = "needs an NVIDIA GPU and driver; run on the GPU machine (CI has none)"]
fn cuda_parity_quick() {
    let (code, err) = chromaflow(&["parity", "--backends", "cuda", "--quick"]);
    assert_eq!(
        code, 0,
        "CUDA parity failed (is there an NVIDIA driver?):\n{err}"
    );
}
