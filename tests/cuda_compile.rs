//! Every CUDA twin compiles with NVRTC, with the runtime's options and the twins' default
//! defines (the capacity NE a module constant), the kernels of a fixed-size DG solver also with
//! NE compiled in, for compute_90 (the H100 and H200: launches overlap through griddepcontrol) and
//! compute_80 (without it). Needs NVRTC, not a GPU: `.ci/run` installs it from PyPI and runs
//! `cargo test --features cuda --test cuda_compile`; without the feature this file is empty.
//! A twin that does not compile used to be found only on the GPU machine.
#![cfg(feature = "cuda")]

use chromaflow::runtime::cuda::{compile_check, define_u32, kernel_source};
use chromaflow::runtime::shaders::{kernel_names, KERNEL_DIR_ENV};

const ARCHITECTURES: [&str; 2] = ["compute_90", "compute_80"];

/// The NVRTC failures of compiling `stems` with `defines` for every architecture, a thread per
/// core.
fn failures(stems: &[&str], defines: &[String]) -> Vec<String> {
    let jobs: Vec<(&str, &str)> = stems
        .iter()
        .flat_map(|s| ARCHITECTURES.iter().map(move |a| (*s, *a)))
        .collect();
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    let chunk = jobs.len().div_ceil(threads).max(1);
    std::thread::scope(|scope| {
        let handles: Vec<_> = jobs
            .chunks(chunk)
            .map(|part| {
                scope.spawn(move || {
                    part.iter()
                        .filter_map(|(stem, arch)| compile_check(stem, arch, defines).err())
                        .map(|e| e.to_string())
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("compile thread"))
            .collect()
    })
}

#[test]
fn every_cuda_twin_compiles_with_nvrtc() {
    let stems: Vec<&str> = kernel_names()
        .filter(|s| kernel_source(s).is_ok())
        .collect();
    assert!(stems.len() > 40, "only {} CUDA twins found", stems.len());
    let failed = failures(&stems, &[]);
    assert!(failed.is_empty(), "{}", failed.join("\n\n"));
    // A solver sized exactly to its mesh compiles its capacity in (FIXED_CAPACITY_CONSTANT).
    let fixed = [
        "dg_volume",
        "dg_surface",
        "dg_trace",
        "dg_flux",
        "dg_limit",
        "dg_local_dt",
    ];
    let failed = failures(&fixed, &[define_u32("NE", 1000)]);
    assert!(failed.is_empty(), "{}", failed.join("\n\n"));
    // The adaptation's compaction in order (IN_ORDER) takes other paths in these.
    let in_order = ["amr_mark", "amr_scan", "amr_refine", "amr_geometry"];
    let failed = failures(&in_order, &[define_u32("IN_ORDER", 1)]);
    assert!(failed.is_empty(), "{}", failed.join("\n\n"));
    // Phase 0's scan reads only its live blocks (LIVE_BLOCKS), with either compaction.
    for in_order in [0, 1] {
        let defines = [
            define_u32("LIVE_BLOCKS", 1),
            define_u32("IN_ORDER", in_order),
        ];
        let failed = failures(&["amr_scan"], &defines);
        assert!(failed.is_empty(), "{}", failed.join("\n\n"));
    }
    // A run's smoothing computes the flags in its pass 0 (FLAGGED); queues of none hand every
    // rise in amr_settle to the last block (QUEUE_SLOTS 0, a smoothing the conformance checks).
    let failed = failures(&["amr_smooth"], &[define_u32("FLAGGED", 1)]);
    assert!(failed.is_empty(), "{}", failed.join("\n\n"));
    let failed = failures(&["amr_settle"], &[define_u32("QUEUE_SLOTS", 0)]);
    assert!(failed.is_empty(), "{}", failed.join("\n\n"));

    // The check fails where it should: a twin with a syntax error, from a kernel directory.
    let dir = std::env::temp_dir().join(format!("chromaflow-nvrtc-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("cuda")).expect("temp dir");
    let broken = kernel_source("scan_add").expect("scan_add.cu") + "\nthis is not CUDA\n";
    std::fs::write(dir.join("cuda/scan_add.cu"), broken).expect("write");
    std::env::set_var(KERNEL_DIR_ENV, &dir);
    let failed = failures(&["scan_add"], &[]);
    std::env::remove_var(KERNEL_DIR_ENV);
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(failed.len(), ARCHITECTURES.len(), "{failed:?}");
    assert!(
        failed
            .iter()
            .all(|f| f.contains("shaders/cuda/scan_add.cu")),
        "{failed:?}"
    );
}
