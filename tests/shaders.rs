//! Every WGSL kernel validates with naga and translates to SPIR-V, MSL (Metal) and HLSL (DX12),
//! so portability is checked in CI without those GPUs.

use chromaflow::gpu::shaders::{kernel_names, kernel_source, SHADER_FILES};
use naga::back::{hlsl, msl, spv};
use naga::valid::{Capabilities, ValidationFlags, Validator};

fn validate(name: &str) -> (naga::Module, naga::valid::ModuleInfo) {
    let src = kernel_source(name).expect("embedded");
    let module = naga::front::wgsl::parse_str(&src)
        .unwrap_or_else(|e| panic!("{name}.wgsl does not parse:\n{}", e.emit_to_string(&src)));
    let info = Validator::new(ValidationFlags::all(), Capabilities::default())
        .validate(&module)
        .unwrap_or_else(|e| panic!("{name}.wgsl does not validate:\n{}", e.emit_to_string(&src)));
    (module, info)
}

#[test]
fn every_shader_file_is_embedded() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("shaders");
    let mut on_disk = Vec::new();
    for dir in [root.clone(), root.join("common")] {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let p = entry.unwrap().path();
            if p.extension().is_some_and(|e| e == "wgsl") {
                let rel = p
                    .strip_prefix(&root)
                    .unwrap()
                    .to_string_lossy()
                    .replace('\\', "/");
                on_disk.push(rel);
            }
        }
    }
    on_disk.sort();
    let mut embedded: Vec<String> = SHADER_FILES.iter().map(|(n, _)| n.to_string()).collect();
    embedded.sort();
    assert_eq!(on_disk, embedded, "shaders/ and SHADER_FILES differ");
    for (name, src) in SHADER_FILES {
        let disk = std::fs::read_to_string(root.join(name)).unwrap();
        assert_eq!(&disk, src, "{name} embedded copy is stale");
    }
}

#[test]
fn kernels_validate_and_translate_to_spirv_msl_hlsl() {
    let names: Vec<&str> = kernel_names().collect();
    assert!(!names.is_empty());
    for name in names {
        let (module, info) = validate(name);
        let (module, info) = naga::back::pipeline_constants::process_overrides(
            &module,
            &info,
            Some((naga::ShaderStage::Compute, "main")),
            &Default::default(),
        )
        .unwrap_or_else(|e| panic!("{name}: overrides: {e}"));
        spv::write_vec(&module, &info, &spv::Options::default(), None)
            .unwrap_or_else(|e| panic!("{name}: SPIR-V: {e}"));
        let msl_pipeline = msl::PipelineOptions {
            entry_point: Some((naga::ShaderStage::Compute, "main".into())),
            ..Default::default()
        };
        let (msl_src, _) =
            msl::write_string(&module, &info, &msl::Options::default(), &msl_pipeline)
                .unwrap_or_else(|e| panic!("{name}: MSL: {e}"));
        assert!(
            msl_src.contains("kernel"),
            "{name}: MSL has no kernel function"
        );
        let hlsl_opts = hlsl::Options::default();
        let hlsl_pipeline = hlsl::PipelineOptions {
            entry_point: Some((naga::ShaderStage::Compute, "main".into())),
        };
        let mut hlsl_src = String::new();
        hlsl::Writer::new(&mut hlsl_src, &hlsl_opts, &hlsl_pipeline)
            .write(&module, &info, None)
            .unwrap_or_else(|e| panic!("{name}: HLSL: {e}"));
        assert!(
            hlsl_src.contains("numthreads"),
            "{name}: HLSL has no compute entry"
        );
    }
}

#[test]
fn include_directive_expands_shared_code_once() {
    let src = kernel_source("green_gauss_gradient").unwrap();
    assert_eq!(src.matches("fn linear_index").count(), 1);
    assert!(!src.contains("#include"));
}
