//! `chromaflow bench backends` (the wgpu-vs-CUDA table the GPU machine runs) works on wgpu
//! alone with tiny sizes: every kernel of every workload gets a positive time in both wgpu
//! columns, and the CUDA column says why it is empty, so CI catches a broken command before
//! a GPU session does.

use std::process::Command;

#[test]
fn bench_backends_tiny_runs_every_kernel_on_wgpu() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("backends.json");
    let run = Command::new(env!("CARGO_BIN_EXE_chromaflow"))
        .args([
            "-q",
            "bench",
            "backends",
            "--dg-cells",
            "100",
            "--orders",
            "1,4",
            "--swe-cells",
            "100",
            "--smooth-vertices",
            "100",
            "--smooth-iterations",
            "4",
            "--texture-size",
            "16",
            "--color-vertices",
            "100",
            "--steps",
            "1",
            "--repeats",
            "1",
            "--json",
            "--out",
        ])
        .arg(&out)
        .env("XDG_RUNTIME_DIR", std::env::temp_dir())
        .env_remove("CHROMAFLOW_TRUSTED_KERNELS")
        .output()
        .expect("run chromaflow");
    let stdout = String::from_utf8_lossy(&run.stdout);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(
        run.status.success(),
        "bench backends failed ({:?}):\n{stdout}\n{stderr}",
        run.status
    );
    let printed: serde_json::Value = serde_json::from_str(&stdout).expect("JSON on stdout");
    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).expect("--out file")).unwrap();
    assert_eq!(printed, written, "--json and --out differ");
    let j = written;

    let workloads = j["workloads"].as_array().expect("workloads");
    let names: Vec<&str> = workloads
        .iter()
        .map(|w| w["workload"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["dg", "swe", "smooth", "color"]);
    for w in workloads {
        let name = w["workload"].as_str().unwrap();
        let rows = w["rows"].as_array().unwrap();
        assert!(
            rows.iter().any(|r| r["kind"] == "kernel"),
            "{name}: no kernel rows"
        );
        for r in rows {
            for col in ["wgpu_checked_ms", "wgpu_trusted_ms"] {
                let ms = r[col].as_f64();
                assert!(
                    ms.is_some_and(|v| v > 0.0 && v.is_finite()),
                    "{name} {}: {col} = {:?}",
                    r["kernel"],
                    r[col]
                );
            }
        }
        assert!(
            w["errors"].as_array().unwrap().is_empty(),
            "{name}: {}",
            w["errors"]
        );
    }
    // Every DG kernel group at the lowest and highest order (p = 2, 3 add little but compile
    // time), every shallow-water scheme, every sampling path.
    let dg_rows: Vec<&str> = workloads[0]["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["kernel"].as_str().unwrap())
        .collect();
    for p in [1, 4] {
        for k in ["volume", "surface", "stage", "limit", "time step"] {
            assert!(
                dg_rows.iter().any(|r| r.starts_with(&format!("p={p} {k}"))),
                "no DG row p={p} {k}: {dg_rows:?}"
            );
        }
    }
    let swe = workloads[1]["rows"].to_string();
    for scheme in ["pvm-ifcp", "ir-roe", "roe edge"] {
        assert!(swe.contains(scheme), "no {scheme} rows: {swe}");
    }
    let smooth = workloads[2]["rows"].to_string();
    for path in ["hardware", "shader", "buffer"] {
        assert!(smooth.contains(path), "no {path} rows: {smooth}");
    }

    let cuda = &j["columns"]["cuda"];
    if cfg!(feature = "cuda") && cuda["available"] == true {
        // A CUDA machine: the CUDA column ran too.
        return;
    }
    assert_eq!(cuda["available"], false, "{cuda}");
    let reason = cuda["reason"]
        .as_str()
        .expect("a reason for the missing CUDA column");
    if cfg!(feature = "cuda") {
        assert!(
            reason.contains("NVIDIA driver") || reason.contains("NVRTC"),
            "{reason}"
        );
    } else {
        assert!(
            reason.contains("built without CUDA support") && reason.contains("--features cuda"),
            "{reason}"
        );
    }
    for w in workloads {
        for r in w["rows"].as_array().unwrap() {
            assert!(
                r["cuda_ms"].is_null() && r["trusted_over_cuda"].is_null(),
                "{r}"
            );
        }
    }
    assert!(j["verdict"]["wgpu_trusted"].is_null(), "{}", j["verdict"]);
}

/// `bench dg --vortex` (the PyFR comparison) runs both surface layouts on the periodic vortex
/// at tiny size: each row is a physical run (the clock advanced every step, all values
/// finite), with DOF-RHS/s equal to elements x (p+1)(p+2)/2 x 4 x stages / seconds per step,
/// and the gathered row times its trace kernel apart.
#[test]
fn bench_dg_vortex_rows_follow_pyfr_convention() {
    let run = Command::new(env!("CARGO_BIN_EXE_chromaflow"))
        .args([
            "-q",
            "bench",
            "dg",
            "--vortex",
            "--cells",
            "120",
            "--orders",
            "1,2",
            "--surface",
            "colored,gathered",
            "--steps",
            "2",
            "--repeats",
            "1",
            "--copy-mib",
            "0",
            "--json",
        ])
        .env("XDG_RUNTIME_DIR", std::env::temp_dir())
        .output()
        .expect("run chromaflow");
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&run.stdout).expect("json");
    let elements = v["elements"].as_f64().expect("elements");
    let rows = v["rows"].as_array().expect("rows");
    assert_eq!(rows.len(), 4, "{rows:?}");
    for r in rows {
        assert_eq!(r["run_check"], "ok", "{r}");
        let p = r["p"].as_f64().unwrap();
        let stages = r["stages"].as_f64().unwrap();
        let per_step = r["ms_per_step"].as_f64().unwrap() / 1e3;
        let want = elements * (p + 1.0) * (p + 2.0) / 2.0 * 4.0 * stages / per_step;
        let got = r["dof_rhs_per_s"].as_f64().unwrap();
        assert!((got - want).abs() <= 1e-9 * want, "{got} vs {want}");
        let kernels = r["kernel_ms_per_step"].as_object().unwrap();
        let gathered = r["surface"] == "gathered";
        assert_eq!(kernels.contains_key("trace"), gathered, "{r}");
    }
}
