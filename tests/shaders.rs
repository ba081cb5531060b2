//! Every WGSL kernel validates with naga and translates to SPIR-V, MSL (Metal) and HLSL (DX12),
//! so portability is checked in CI without those GPUs.

use chromaflow::runtime::shaders::{kernel_names, kernel_source, unroll_loops, SHADER_FILES};
use chromaflow::solver::dg::basis::BasisTables;
use naga::back::{hlsl, msl, spv};
use naga::valid::{Capabilities, ValidationFlags, Validator};

fn validate(name: &str) -> (naga::Module, naga::valid::ModuleInfo) {
    let raw = kernel_source(name).expect("embedded");
    validate_source(name, &raw);
    let src = unroll_loops(&raw, &[]).unwrap_or_else(|e| panic!("{name}: {e}"));
    validate_source(name, &src)
}

fn validate_source(name: &str, src: &str) -> (naga::Module, naga::valid::ModuleInfo) {
    let module = naga::front::wgsl::parse_str(src)
        .unwrap_or_else(|e| panic!("{name}.wgsl does not parse:\n{}", e.emit_to_string(src)));
    let info = Validator::new(ValidationFlags::all(), Capabilities::default())
        .validate(&module)
        .unwrap_or_else(|e| panic!("{name}.wgsl does not validate:\n{}", e.emit_to_string(src)));
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

/// Accesses with a run-time index into a private (function-space) array or vector: wgpu's
/// default runtime checks clamp each one, which is what made the DG kernels 2-3x slower.
fn dynamic_private_indexing(module: &naga::Module, info: &naga::valid::ModuleInfo) -> usize {
    let mut count = 0;
    let mut scan = |f: &naga::Function, fi: &naga::valid::FunctionInfo| {
        for (h, e) in f.expressions.iter() {
            if let naga::Expression::Access { base, .. } = e {
                let _ = h;
                let space = match fi[*base].ty.inner_with(&module.types) {
                    naga::TypeInner::Pointer { space, .. } => Some(*space),
                    naga::TypeInner::ValuePointer { space, .. } => Some(*space),
                    _ => None,
                };
                if space == Some(naga::AddressSpace::Function) {
                    count += 1;
                }
            }
        }
    };
    for (h, f) in module.functions.iter() {
        scan(f, &info[h]);
    }
    for (i, ep) in module.entry_points.iter().enumerate() {
        scan(&ep.function, info.get_entry_point(i));
    }
    count
}

#[test]
fn unrolled_dg_and_flux_kernels_index_private_arrays_with_constants_only() {
    for p in 0..=4 {
        let t = BasisTables::new(p);
        let constants = [
            ("NP", t.np as f64),
            ("NQ", t.nq() as f64),
            ("NQE", t.nqe() as f64),
        ];
        for name in [
            "dg_surface",
            "dg_volume",
            "dg_limit",
            "dg_stage",
            "dg_trace",
            "dg_flux",
        ] {
            let raw = kernel_source(name).unwrap();
            let src = unroll_loops(&raw, &constants).unwrap();
            // Loops left on purpose (dg_volume's node loop: the instruction cache) must not
            // index private arrays; that is what the check below holds.
            assert!(
                !src.contains("#unroll"),
                "{name} p={p}: a marked loop was left"
            );
            let (module, info) = validate_source(name, &src);
            assert_eq!(
                dynamic_private_indexing(&module, &info),
                0,
                "{name} p={p}: run-time index into a private array"
            );
            if name == "dg_surface" && p == 2 {
                let (m, i) = validate_source(name, &raw);
                assert!(dynamic_private_indexing(&m, &i) > 0, "the check sees loops");
            }
        }
    }
    let src = unroll_loops(&kernel_source("swe_edge_flux").unwrap(), &[]).unwrap();
    let (module, info) = validate_source("swe_edge_flux", &src);
    assert_eq!(dynamic_private_indexing(&module, &info), 0, "swe_edge_flux");
}

#[test]
fn unroll_expands_nested_loops_with_literal_indices() {
    let src = "override N: u32 = 2u;\nfn f() {\n    // #unroll\n    for (var i = 0u; i < N + 1u; i = i + 1u) {\n        // #unroll\n        for (var j = 1; j < 3; j = j + 1) {\n            g(i, j);\n        }\n    }\n}\n";
    let out = unroll_loops(src, &[("N", 1.0)]).unwrap();
    let calls = out.matches("g(i, j)").count();
    assert_eq!(
        calls, 4,
        "(N + 1) x 2 copies with N = 1 from the pipeline constants:\n{out}"
    );
    assert!(out.contains("{ const i = 1u;") && out.contains("{ const j = 2;"));
    assert!(!out.contains("const i = 2u"));
    assert!(!out.contains("for ("));
}

#[test]
fn unroll_rejects_what_it_cannot_expand() {
    let with_break =
        "// #unroll\nfor (var i = 0u; i < 4u; i = i + 1u) {\n    if (x) { break; }\n}\n";
    let e = unroll_loops(with_break, &[]).unwrap_err().to_string();
    assert!(e.contains("line 1") && e.contains("break"), "{e}");
    let unknown = "// #unroll\nfor (var i = 0u; i < M; i = i + 1u) {\n}\n";
    let e = unroll_loops(unknown, &[]).unwrap_err().to_string();
    assert!(e.contains("unknown constant 'M'"), "{e}");
    let not_a_loop = "// #unroll\nlet x = 1;\n";
    let e = unroll_loops(not_a_loop, &[]).unwrap_err().to_string();
    assert!(e.contains("expected 'for"), "{e}");
    let stride = "// #unroll\nfor (var i = 0u; i < 4u; i = i + 2u) {\n}\n";
    assert!(unroll_loops(stride, &[]).is_err());
}
