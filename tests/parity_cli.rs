//! `chromaflow parity` (the suite the GPU machine runs for wgpu against CUDA) passes its wgpu
//! column here, so a change that breaks the command or one of its checks fails CI, not the
//! next GPU session.

use std::process::Command;

#[test]
fn parity_quick_passes_on_the_wgpu_backend() {
    let out = Command::new(env!("CARGO_BIN_EXE_chromaflow"))
        .args(["parity", "--quick", "--backends", "wgpu"])
        .env("XDG_RUNTIME_DIR", std::env::temp_dir())
        .output()
        .expect("run chromaflow");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "parity failed ({:?}):\n{stdout}\n{stderr}",
        out.status
    );
    let summary = stdout
        .lines()
        .rev()
        .find(|l| l.contains("passed"))
        .unwrap_or_else(|| panic!("no summary line:\n{stdout}"));
    assert!(summary.contains(" 0 failed"), "{summary}");
    assert!(!summary.starts_with("0 passed"), "{summary}");
    assert!(!stdout.contains("| FAIL |"), "{stdout}");
}
