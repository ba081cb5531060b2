//! `CHROMAFLOW_KERNEL_DIR` (src/runtime/shaders.rs): a directory's files replace the embedded
//! kernel sources of the same path below `shaders/`, so a variant of a kernel runs without a
//! rebuild; the files it lacks stay embedded; a variable naming no directory, or a file that
//! cannot be read, is an error naming it. A test binary of its own: the variable is
//! process-wide.

use chromaflow::runtime::scan::{exclusive_scan_cpu, gpu_exclusive_scan, SCAN_BLOCK};
use chromaflow::runtime::shaders::{kernel_source, KERNEL_DIR_ENV};
use chromaflow::runtime::Runtime;

/// The line of shaders/scan_add.wgsl the variant changes: the block offset added to an item.
const ADD_LINE: &str = "output[i] = output[i] + block_offsets[i / SCAN_BLOCK];";

#[test]
fn a_kernel_directory_replaces_the_files_it_holds_and_only_those() {
    let root = std::env::temp_dir().join(format!("chromaflow-kernel-dir-{}", std::process::id()));
    let dir = root.join("variant");
    std::fs::create_dir_all(&dir).expect("temp dir");
    let embedded_blocks = kernel_source("scan_blocks").expect("scan_blocks");
    let embedded_add_source = kernel_source("scan_add").expect("scan_add");
    let embedded_add = include_str!("../shaders/scan_add.wgsl");
    assert!(
        embedded_add.contains(ADD_LINE),
        "scan_add.wgsl lacks '{ADD_LINE}'"
    );
    // scan_add adding one more to every item it touches (those past the first block).
    let variant = embedded_add.replace(
        ADD_LINE,
        "output[i] = output[i] + block_offsets[i / SCAN_BLOCK] + 1u;",
    );
    std::fs::write(dir.join("scan_add.wgsl"), &variant).expect("write the variant");

    std::env::set_var(KERNEL_DIR_ENV, &dir);
    assert!(kernel_source("scan_add")
        .expect("scan_add")
        .contains("SCAN_BLOCK] + 1u;"));
    assert_eq!(
        kernel_source("scan_blocks").expect("scan_blocks"),
        embedded_blocks,
        "a file the directory lacks stays embedded"
    );
    let rt = Runtime::wgpu().expect("a GPU adapter is required (CI: lavapipe)");
    let values: Vec<u32> = (0..2 * SCAN_BLOCK + 5).map(|i| i % 7).collect();
    let (gpu, _) = gpu_exclusive_scan(&rt, &values).expect("scan");
    let cpu = exclusive_scan_cpu(&values);
    for (i, (g, c)) in gpu.iter().zip(&cpu).enumerate() {
        let want = c + u32::from(i >= SCAN_BLOCK as usize);
        assert_eq!(*g, want, "item {i}: the variant's scan_add ran, or did not");
    }

    std::env::set_var(KERNEL_DIR_ENV, dir.join("scan_add.wgsl"));
    let err = kernel_source("scan_add").expect_err("a file as the directory");
    assert!(
        err.to_string().contains(KERNEL_DIR_ENV) && err.to_string().contains("not a directory"),
        "{err}"
    );

    let broken = root.join("broken");
    std::fs::create_dir_all(broken.join("common")).expect("temp dir");
    std::fs::write(broken.join("common/dispatch.wgsl"), [0xffu8, 0xfe, 0x00]).expect("write");
    std::env::set_var(KERNEL_DIR_ENV, &broken);
    let err = kernel_source("scan_add").expect_err("a file that is not UTF-8");
    assert!(
        err.to_string().contains("dispatch.wgsl") && err.to_string().contains(KERNEL_DIR_ENV),
        "{err}"
    );

    std::env::remove_var(KERNEL_DIR_ENV);
    assert_eq!(
        kernel_source("scan_add").expect("scan_add"),
        embedded_add_source,
        "without the variable the embedded sources again"
    );
    let _ = std::fs::remove_dir_all(&root);
}
