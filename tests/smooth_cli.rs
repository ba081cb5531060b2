//! `chromaflow smooth` rejects bad input with clear messages and exit code 2.

use std::process::Command;

fn smooth(args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_chromaflow"))
        .arg("smooth")
        .args(args)
        .output()
        .expect("run chromaflow");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn bad_input_gives_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("o");
    let o = out.to_str().unwrap();
    let (code, err) = smooth(&["rect:200", "--metric", "bogus", "--out", o]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("unknown metric 'bogus'") && err.contains("shock"),
        "{err}"
    );
    for size in ["0", "100000"] {
        let (code, err) = smooth(&["rect:200", "--texture-size", size, "--out", o]);
        assert_eq!(code, 2, "{err}");
        assert!(
            err.contains(&format!("texture size {size} is out of range")),
            "{err}"
        );
    }
    let file = dir.path().join("metric.txt");
    std::fs::write(&file, "# header\n1 0 1\n1 0 oops\n").unwrap();
    let (code, err) = smooth(&[
        "rect:200",
        "--metric-file",
        file.to_str().unwrap(),
        "--out",
        o,
    ]);
    assert_ne!(code, 0);
    assert!(
        err.contains("metric.txt:3:") && err.contains("'oops' is not a number"),
        "{err}"
    );
}
