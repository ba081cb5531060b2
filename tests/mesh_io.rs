//! Readers and writers: the sample meshes in meshes/ in all four .msh flavours, hand-written
//! 4.1 features, write/read round trips, VTU output, and robustness against truncated and
//! corrupted input (errors, never panics).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use chromaflow::mesh::io::{parse_mesh, parse_msh};
use chromaflow::mesh::{
    builtin, load, load_or_builtin, read_mesh, read_msh, validate, write_msh41, write_vtu,
    ElementKind, Mesh, Topology, NO_ELEMENT,
};
use rand::{Rng, SeedableRng};

fn repo(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

const FLAVOURS: [&str; 4] = ["v22_ascii", "v22_bin", "v41_ascii", "v41_bin"];

/// Elements as (kind, region, vertices) and facets as (tag, vertices), sorted, each vertex
/// named by the index of the nearest of `points` (within 1e-6: ASCII files keep about 14
/// digits): equal for the same mesh whatever the file's block and node order (Gmsh orders
/// element blocks differently in 2.2 and 4.1 files).
type Canon = (Vec<(ElementKind, i32, Vec<usize>)>, Vec<(i32, Vec<usize>)>);

fn canon(m: &Mesh, points: &[[f64; 3]]) -> Canon {
    let nearest = |p: [f64; 3]| {
        let d = |q: &[f64; 3]| (0..3).map(|k| (p[k] - q[k]).powi(2)).sum::<f64>();
        let (i, q) = points
            .iter()
            .enumerate()
            .min_by(|a, b| d(a.1).total_cmp(&d(b.1)))
            .unwrap();
        assert!(d(q) < 1e-12, "no reference point at {p:?}");
        i
    };
    let key = |v: &[u32]| -> Vec<usize> {
        let mut k: Vec<usize> = v.iter().map(|&i| nearest(m.points[i as usize])).collect();
        k.sort_unstable();
        k
    };
    let mut els: Vec<_> = (0..m.num_elements())
        .map(|e| (m.kinds[e], m.region_tags[e], key(m.element(e))))
        .collect();
    els.sort();
    let mut facets: Vec<_> = m
        .boundary_facets
        .iter()
        .map(|f| (f.tag, key(&f.vertices)))
        .collect();
    facets.sort();
    (els, facets)
}

/// Load all four flavours of a sample mesh and check they are identical.
fn load_family(stem: &str) -> Mesh {
    let meshes: Vec<Mesh> = FLAVOURS
        .iter()
        .map(|f| {
            let path = repo(&format!("meshes/{stem}_{f}.msh"));
            load(&path).unwrap_or_else(|e| panic!("{e}"))
        })
        .collect();
    let m0 = &meshes[0];
    let c0 = canon(m0, &m0.points);
    for (m, f) in meshes.iter().zip(FLAVOURS).skip(1) {
        assert_eq!(m.num_elements(), m0.num_elements(), "{stem}_{f}");
        assert_eq!(m.num_points(), m0.num_points(), "{stem}_{f}");
        assert_eq!(m.physical_names, m0.physical_names, "{stem}_{f}");
        let c = canon(m, &m0.points);
        assert!(c.0 == c0.0, "{stem}_{f}: elements differ");
        assert!(c.1 == c0.1, "{stem}_{f}: boundary facets differ");
    }
    meshes.into_iter().next().unwrap_or_default()
}

/// Signed area of a planar polygon (shoelace).
fn area(m: &Mesh, e: usize) -> f64 {
    let v = m.element(e);
    let n = v.len();
    (0..n)
        .map(|i| {
            let (a, b) = (m.points[v[i] as usize], m.points[v[(i + 1) % n] as usize]);
            a[0] * b[1] - b[0] * a[1]
        })
        .sum::<f64>()
        * 0.5
}

fn facet_measure(m: &Mesh, tag: i32) -> f64 {
    m.boundary_facets
        .iter()
        .filter(|f| f.tag == tag)
        .map(|f| {
            let p: Vec<[f64; 3]> = f.vertices.iter().map(|&v| m.points[v as usize]).collect();
            let d = |a: [f64; 3], b: [f64; 3]| [b[0] - a[0], b[1] - a[1], b[2] - a[2]];
            if p.len() == 2 {
                let u = d(p[0], p[1]);
                (u[0] * u[0] + u[1] * u[1] + u[2] * u[2]).sqrt()
            } else {
                let (u, w) = (d(p[0], p[1]), d(p[0], p[2]));
                let c = [
                    u[1] * w[2] - u[2] * w[1],
                    u[2] * w[0] - u[0] * w[2],
                    u[0] * w[1] - u[1] * w[0],
                ];
                0.5 * (c[0] * c[0] + c[1] * c[1] + c[2] * c[2]).sqrt()
            }
        })
        .sum()
}

fn tags(m: &Mesh) -> BTreeSet<i32> {
    m.boundary_facets.iter().map(|f| f.tag).collect()
}

#[test]
fn square_with_hole() {
    let m = load_family("square_hole");
    assert_eq!(m.dim, 2);
    assert_eq!(m.num_elements(), 474);
    assert_eq!(m.num_points(), 276);
    assert!(m.is_triangle_mesh());
    assert_eq!(tags(&m), BTreeSet::from([1, 2]));
    assert_eq!(m.boundary_tag_by_name("walls"), Some(1));
    assert_eq!(m.boundary_tag_by_name("hole"), Some(2));
    assert!(m.region_tags.iter().all(|&t| t == 10));
    let exact = 1.0 - std::f64::consts::PI * 0.04;
    let total: f64 = (0..m.num_elements()).map(|e| area(&m, e)).sum();
    assert!((0..m.num_elements()).all(|e| area(&m, e) > 0.0));
    assert!((total - exact).abs() < 1e-2 * exact, "area {total}");
    assert!((facet_measure(&m, 1) - 4.0).abs() < 1e-12);
    let circ = 2.0 * std::f64::consts::PI * 0.2;
    assert!((facet_measure(&m, 2) - circ).abs() < 1e-2 * circ);
    let mut mm = m.clone();
    let report = validate(&mut mm).unwrap();
    assert_eq!(report.untagged_boundary_faces, 0);
    assert_eq!(report.num_boundary_faces, 78);
}

#[test]
fn mixed_channel() {
    let m = load_family("channel");
    assert_eq!(m.dim, 2);
    let quads = m.kinds.iter().filter(|&&k| k == ElementKind::Quad).count();
    let tris = m
        .kinds
        .iter()
        .filter(|&&k| k == ElementKind::Triangle)
        .count();
    assert_eq!((quads, tris), (128, 308));
    for e in 0..m.num_elements() {
        let expected = if m.kinds[e] == ElementKind::Quad {
            11
        } else {
            12
        };
        assert_eq!(m.region_tags[e], expected, "element {e}");
    }
    let total: f64 = (0..m.num_elements()).map(|e| area(&m, e)).sum();
    assert!((total - 4.0).abs() < 1e-12, "area {total}");
    assert_eq!(tags(&m), BTreeSet::from([1, 2, 3]));
    assert!((facet_measure(&m, 1) - 1.0).abs() < 1e-12);
    assert!((facet_measure(&m, 2) - 1.0).abs() < 1e-12);
    assert!((facet_measure(&m, 3) - 8.0).abs() < 1e-12);
    assert_eq!(
        m.physical_names.get(&(2, 11)).map(String::as_str),
        Some("quad_zone")
    );
}

#[test]
fn tetrahedral_box() {
    let m = load_family("box");
    assert_eq!(m.dim, 3);
    assert_eq!(m.num_elements(), 387);
    assert!(m.kinds.iter().all(|&k| k == ElementKind::Tetrahedron));
    assert!(m.region_tags.iter().all(|&t| t == 20));
    assert_eq!(tags(&m), BTreeSet::from([1, 2, 3]));
    assert!((facet_measure(&m, 1) - 1.0).abs() < 1e-12);
    assert!((facet_measure(&m, 2) - 1.0).abs() < 1e-12);
    assert!((facet_measure(&m, 3) - 4.0).abs() < 1e-12);
    let mut mm = m.clone();
    let report = validate(&mut mm).unwrap();
    assert!((report.total_measure - 1.0).abs() < 1e-12);
    assert_eq!(report.num_boundary_faces, 264);
    assert_eq!(report.untagged_boundary_faces, 0);
}

#[test]
fn hand_written_v41_with_sparse_tags_and_extra_sections() {
    let m = load(&repo("tests/data/sparse_v41.msh")).unwrap();
    assert_eq!(m.num_points(), 4);
    assert_eq!(m.num_elements(), 2);
    assert_eq!(m.element(0), &[0, 1, 2]);
    assert_eq!(m.element(1), &[0, 2, 3]);
    assert_eq!(m.region_tags, vec![3, 3]);
    let facet_tags: Vec<i32> = m.boundary_facets.iter().map(|f| f.tag).collect();
    assert_eq!(facet_tags, vec![7, 8, 8, 8]);
    assert_eq!(m.boundary_name(7), "bottom");
}

#[test]
fn msh41_round_trip_keeps_everything() {
    let dir = tempfile::tempdir().unwrap();
    let originals = [
        builtin("rect:300@4").unwrap(),
        load(&repo("meshes/channel_v22_ascii.msh")).unwrap(),
        load(&repo("meshes/box_v41_bin.msh")).unwrap(),
    ];
    for (i, m) in originals.iter().enumerate() {
        let path = dir.path().join(format!("out{i}.msh"));
        write_msh41(m, &path).unwrap();
        let back = read_msh(&path).unwrap();
        assert_eq!(back.dim, m.dim);
        assert_eq!(back.points, m.points);
        assert_eq!(back.kinds, m.kinds);
        assert_eq!(back.connectivity, m.connectivity);
        assert_eq!(back.region_tags, m.region_tags);
        assert_eq!(back.boundary_facets, m.boundary_facets);
        assert_eq!(back.physical_names, m.physical_names);
        assert!(load(&path).is_ok());
    }
    // Only the target remains: the temporary file was renamed.
    let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert_eq!(names.len(), originals.len());
}

/// Decode the base64 payload of the DataArray named `name` (after its UInt64 byte count).
fn vtu_array(xml: &str, name: &str) -> Vec<u8> {
    let key = format!("Name=\"{name}\"");
    let start = xml.find(&key).unwrap();
    let body_start = start + xml[start..].find('>').unwrap() + 1;
    let body_end = body_start + xml[body_start..].find('<').unwrap();
    let text: Vec<u8> = xml[body_start..body_end]
        .bytes()
        .filter(|c| !c.is_ascii_whitespace())
        .collect();
    let mut out = base64::Engine::decode(&base64::engine::general_purpose::STANDARD, text).unwrap();
    let len = u64::from_le_bytes(out[..8].try_into().unwrap()) as usize;
    assert_eq!(len, out.len() - 8, "header of {name}");
    out.split_off(8)
}

#[test]
fn vtu_output_decodes_back() {
    let m = load(&repo("meshes/channel_v41_ascii.msh")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("channel.vtu");
    let px: Vec<f64> = m.points.iter().map(|p| p[0]).collect();
    let ca: Vec<f64> = (0..m.num_elements()).map(|e| area(&m, e)).collect();
    write_vtu(&m, &path, &[("x", &px)], &[("area", &ca)]).unwrap();
    let xml = std::fs::read_to_string(&path).unwrap();
    assert!(xml.starts_with("<?xml"));
    assert!(xml.contains(&format!(
        "NumberOfPoints=\"{}\" NumberOfCells=\"{}\"",
        m.num_points(),
        m.num_elements()
    )));
    let f64s = |b: Vec<u8>| -> Vec<f64> {
        b.chunks(8)
            .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
            .collect()
    };
    let i64s = |b: Vec<u8>| -> Vec<i64> {
        b.chunks(8)
            .map(|c| i64::from_le_bytes(c.try_into().unwrap()))
            .collect()
    };
    assert_eq!(f64s(vtu_array(&xml, "x")), px);
    assert_eq!(f64s(vtu_array(&xml, "area")), ca);
    let pts = f64s(vtu_array(&xml, "Points"));
    assert_eq!(pts.len(), 3 * m.num_points());
    assert_eq!(pts[3..6], m.points[1]);
    let conn = i64s(vtu_array(&xml, "connectivity"));
    assert!(conn
        .iter()
        .zip(&m.connectivity)
        .all(|(&a, &b)| a == i64::from(b)));
    let offs = i64s(vtu_array(&xml, "offsets"));
    assert_eq!(offs.len(), m.num_elements());
    assert_eq!(*offs.last().unwrap() as usize, m.connectivity.len());
    let types = vtu_array(&xml, "types");
    assert!(types.iter().zip(&m.kinds).all(|(&t, k)| t == k.vtk_type()));
    assert!(types.contains(&5) && types.contains(&9));
    let regions: Vec<i32> = vtu_array(&xml, "region_tag")
        .chunks(4)
        .map(|c| i32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(regions, m.region_tags);
    // The reader reads the writer's file back: same elements, regions and points.
    let back = read_mesh(&path).unwrap();
    assert_eq!(back.points, m.points);
    assert!(canon(&back, &m.points).0 == canon(&m, &m.points).0);

    let short = vec![0.0; 3];
    let err = write_vtu(&m, &path, &[("bad", &short)], &[])
        .unwrap_err()
        .to_string();
    assert!(err.contains("point field 'bad' has 3 values"), "{err}");
    let err = write_vtu(&m, &path, &[], &[("c", &short)])
        .unwrap_err()
        .to_string();
    assert!(err.contains("cell field 'c' has 3 values"), "{err}");
}

#[test]
fn binary_truncation_names_the_offset() {
    for stem in ["square_hole_v22_bin", "square_hole_v41_bin", "box_v41_bin"] {
        let path = repo(&format!("meshes/{stem}.msh"));
        let bytes = std::fs::read(&path).unwrap();
        let cut = &bytes[..bytes.len() / 2];
        let msg = parse_msh(&path, cut).unwrap_err().to_string();
        assert!(msg.contains(stem), "{msg}");
        assert!(msg.contains("unexpected end of file in $"), "{msg}");
        assert!(msg.contains("byte offset"), "{msg}");
    }
}

/// Every prefix of every sample file (meshes/ and every input format in tests/data/inputs/) and
/// many randomly corrupted copies must give an error or a mesh, never a panic; validation of
/// whatever comes out must not panic either.
#[test]
fn fuzzed_input_never_panics() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
    let files = |dir: &str, tries: usize| {
        std::fs::read_dir(repo(dir))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e != "py"))
            .map(move |p| (p, tries))
    };
    for (path, tries) in files("meshes", 150).chain(files("tests/data/inputs", 40)) {
        let bytes = std::fs::read(&path).unwrap();
        let step = (bytes.len() / tries).max(1);
        for len in (0..bytes.len()).step_by(step) {
            if let Ok(mut m) = parse_mesh(&path, &bytes[..len]) {
                let _ = validate(&mut m);
            }
        }
        for _ in 0..tries {
            let mut b = bytes.clone();
            for _ in 0..rng.random_range(1..6) {
                let i = rng.random_range(0..b.len());
                b[i] = match rng.random_range(0..4) {
                    0 => rng.random(),
                    1 => b'9',
                    2 => b' ',
                    _ => 0xff,
                };
            }
            if let Ok(mut m) = parse_mesh(&path, &b) {
                let _ = validate(&mut m);
            }
        }
    }
}

#[test]
fn load_or_builtin_dispatch() {
    let m = load_or_builtin("rect:500@3").unwrap();
    let n = m.num_elements() as f64;
    assert!((n - 500.0).abs() <= 50.0, "{n}");
    let path = repo("meshes/square_hole_v41_ascii.msh");
    let m = load_or_builtin(path.to_str().unwrap()).unwrap();
    assert_eq!(m.num_elements(), 474);
    let err = load_or_builtin("missing_mesh.msh").unwrap_err().to_string();
    assert!(err.contains("missing_mesh.msh"), "{err}");
    let err = load_or_builtin("hexagon:7").unwrap_err().to_string();
    assert!(
        err.contains("hexagon:7") && err.contains("rect:N@SEED"),
        "{err}"
    );
}

#[test]
fn mesh_source_dispatch_and_seed() {
    use chromaflow::mesh::generate::rectangle;
    use chromaflow::mesh::MeshSource;
    let path = repo("meshes/square_hole_v41_ascii.msh");
    let src = MeshSource::from_arg(path.to_str().unwrap());
    assert_eq!(src, MeshSource::File(path.clone()));
    assert_eq!(src.build(9).unwrap().num_elements(), 474);
    assert_eq!(
        MeshSource::from_arg("missing_mesh.msh"),
        MeshSource::File("missing_mesh.msh".into())
    );
    assert_eq!(
        MeshSource::from_arg("rect:500@3"),
        MeshSource::Builtin("rect:500@3".into())
    );
    // A built-in spec carries its own seed; a rectangle takes the one given to build.
    let spec = MeshSource::Builtin("rect:500@3".into());
    assert_eq!(spec.build(1).unwrap().points, spec.build(2).unwrap().points);
    let rect = MeshSource::Rectangle {
        x0: 0.0,
        x1: 3.5,
        y0: 0.0,
        y1: 1.0,
        n: 400,
    };
    let m = rect.build(4).unwrap();
    assert_eq!(
        m.points,
        rectangle(0.0, 3.5, 0.0, 1.0, 400, 4).unwrap().points
    );
    assert_eq!(m.connectivity, rect.build(4).unwrap().connectivity);
}

#[test]
fn builtin_specs() {
    let q = builtin("quad:40x20").unwrap();
    assert_eq!(q.num_elements(), 800);
    assert!(q.kinds.iter().all(|&k| k == ElementKind::Quad));
    let c = builtin("cross:4").unwrap();
    assert_eq!(c.num_elements(), 64);
    assert_eq!(c.num_points(), 25 + 16);
    let d = builtin("disk:1000@2").unwrap();
    assert!((d.num_elements() as f64 - 1000.0).abs() <= 100.0);
    assert_eq!(d.boundary_tag_by_name("boundary"), Some(1));
    let r = builtin("rect").unwrap();
    assert!((r.num_elements() as f64 - 2000.0).abs() <= 200.0);
    assert_eq!(
        builtin("rect:800").unwrap().points,
        builtin("rect:800@1").unwrap().points
    );
    for bad in [
        "rect:abc",
        "rect:10@x",
        "quad:10",
        "quad:0x5",
        "cross",
        "hex:5",
        "rect:0",
    ] {
        let err = builtin(bad).unwrap_err().to_string();
        assert!(err.contains(bad), "{bad}: {err}");
        assert!(
            err.contains("accepted forms") || err.contains("out of range"),
            "{err}"
        );
    }
}

#[test]
fn boundary_tags_cover_sample_boundaries() {
    for path in ["meshes/square_hole_v41_bin.msh", "meshes/box_v22_bin.msh"] {
        let m = load(&repo(path)).unwrap();
        let topo = Topology::build(&m).unwrap();
        for f in 0..topo.num_faces() {
            if topo.right[f] == NO_ELEMENT {
                assert_ne!(topo.boundary_tag[f], 0, "{path}: face {f} untagged");
            }
        }
    }
}

fn input(name: &str) -> PathBuf {
    repo(&format!("tests/data/inputs/{name}"))
}

/// The region and facet tags zeroed (for files that cannot carry them).
fn untagged(mut c: Canon) -> Canon {
    c.0.iter_mut().for_each(|e| e.1 = 0);
    c.1.iter_mut().for_each(|f| f.0 = 0);
    c.0.sort();
    c.1.sort();
    c
}

/// Every format the tools write (tests/data/inputs/make_inputs.py) loads as the same mesh as
/// Gmsh's 4.1 file: same elements, region tags, boundary facets and facet tags.
#[test]
fn every_input_format_reads_the_reference_mesh() {
    for (stem, elements, points, facets) in [("rect", 68, 46, 22), ("box", 100, 45, 84)] {
        let reference = load(&input(&format!("{stem}_v41.msh"))).unwrap();
        assert_eq!(reference.num_elements(), elements, "{stem}");
        assert_eq!(reference.num_points(), points, "{stem}");
        assert_eq!(reference.boundary_facets.len(), facets, "{stem}");
        let want = canon(&reference, &reference.points);
        let mut names = vec![format!("{stem}_v40_ascii.msh"), format!("{stem}.mesh")];
        for v in [
            "ascii",
            "binary",
            "zlib",
            "appended",
            "appended_zlib",
            "appended_b64",
            "appended_b64_zlib",
        ] {
            names.push(format!("{stem}_{v}.vtu"));
        }
        names.extend(match stem {
            "rect" => ["rect_v1.meshb", "rect_v2_be.meshb", "rect_meshio.meshb"]
                .map(String::from)
                .to_vec(),
            _ => vec![
                "box_v3.meshb".into(),
                "box_v4.meshb".into(),
                "box_meshio.meshb".into(),
            ],
        });
        for name in names {
            let m = load(&input(&name)).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(m.num_points(), points, "{name}");
            if name.starts_with("rect_v1") {
                // float32 coordinates: compare the counts and tags only.
                assert_eq!(m.region_tags, vec![10; elements], "{name}");
                assert_eq!(m.boundary_facets.len(), facets, "{name}");
                continue;
            }
            let got = canon(&m, &reference.points);
            assert!(got.0 == want.0, "{name}: elements differ");
            assert!(got.1 == want.1, "{name}: boundary facets differ");
        }
        // meshio's binary 4.0 writer has no $Entities: same mesh, no tags.
        let m = load(&input(&format!("{stem}_v40_bin.msh"))).unwrap();
        let got = canon(&m, &reference.points);
        assert!(untagged(got) == untagged(want.clone()), "{stem}_v40_bin");
    }
}

/// Second- and third-order Gmsh elements load as their linear corners: the same mesh as the
/// linear file, the edge and face nodes dropped by validation.
#[test]
fn high_order_gmsh_reads_as_linear_corners() {
    for (stem, files) in [
        (
            "rect",
            &["rect_p2_v41_bin.msh", "rect_p2_v22.msh", "rect_p3_v41.msh"][..],
        ),
        ("box", &["box_p2_v41_bin.msh", "box_p2_v22.msh"][..]),
    ] {
        let reference = load(&input(&format!("{stem}_v41.msh"))).unwrap();
        for name in files {
            let m = load(&input(name)).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(m.num_points(), reference.num_points(), "{name}");
            let pts = &reference.points;
            assert!(canon(&m, pts) == canon(&reference, pts), "{name}");
        }
    }
}

/// The format comes from the content: a misnamed or extensionless file reads the same.
#[test]
fn format_recognised_by_content() {
    for name in [
        "rect.mesh",
        "rect_meshio.meshb",
        "rect_zlib.vtu",
        "rect_v40_ascii.msh",
    ] {
        let bytes = std::fs::read(input(name)).unwrap();
        let first = read_mesh(&input(name)).unwrap();
        let want = canon(&first, &first.points);
        for wrong in ["mesh.msh", "mesh.vtu", "mesh", "mesh.meshb"] {
            let m = parse_mesh(Path::new(wrong), &bytes)
                .unwrap_or_else(|e| panic!("{name} as {wrong}: {e}"));
            assert!(canon(&m, &first.points) == want, "{name} as {wrong}");
        }
    }
    let err = parse_mesh(Path::new("notes.txt"), b"hello")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("notes.txt") && err.contains(".msh, .mesh, .meshb, .vtu"),
        "{err}"
    );
}

/// Replace the first `from` in `bytes` by `to`.
fn patch(bytes: &[u8], from: &str, to: &str) -> Vec<u8> {
    let at = bytes
        .windows(from.len())
        .position(|w| w == from.as_bytes())
        .unwrap();
    [&bytes[..at], to.as_bytes(), &bytes[at + from.len()..]].concat()
}

fn parse_err(name: &str, bytes: &[u8]) -> String {
    let err = parse_mesh(&input(name), bytes).unwrap_err().to_string();
    assert!(err.contains(name), "{err}");
    err
}

/// Hand-mutated files: bad numbers, counts that lie (1e12 records must not be allocated),
/// truncation, bad compression; each error names the file and the line or byte offset.
#[test]
fn malformed_inputs_name_the_place() {
    let read = |n: &str| std::fs::read(input(n)).unwrap();
    let mesh = read("rect.mesh");
    let err = parse_err(
        "rect.mesh",
        &patch(&mesh, "Vertices\n 46", "Vertices\n 1000000000000"),
    );
    assert!(
        err.contains("rect.mesh:52: unexpected 'Edges' in Vertices, expected 999999999954 more"),
        "{err}"
    );
    let err = parse_err(
        "rect.mesh",
        &patch(&mesh, "Triangles\n 68", "Triangles\n 68\n 1 2 3x 4"),
    );
    assert!(
        err.contains("rect.mesh:78: bad number '3x' in Triangles"),
        "{err}"
    );
    let err = parse_err(
        "rect.mesh",
        &patch(&mesh, "Triangles\n 68\n 9 32 8", "Triangles\n 68\n 9 99 8"),
    );
    assert!(
        err.contains("element 1 (line 78) references node 99 which is not defined"),
        "{err}"
    );
    let err = parse_err("rect.mesh", &patch(&mesh, "End", "12 End"));
    assert!(err.contains("expected a keyword, found '12'"), "{err}");

    let meshb = read("box_v3.meshb");
    let err = parse_err("box_v3.meshb", &meshb[..meshb.len() / 2]);
    assert!(
        err.contains("unexpected end of file") && err.contains("byte offset"),
        "{err}"
    );
    // The Vertices count (after the Dimension keyword's 16 bytes and the keyword and position).
    let mut lying = meshb.clone();
    lying[36..40].copy_from_slice(&i32::MAX.to_le_bytes());
    let err = parse_err("box_v3.meshb", &lying);
    assert!(
        err.contains("more vertices") && err.contains("byte offset 40 in Vertices"),
        "{err}"
    );
    let mut bad = meshb.clone();
    bad[4] = 7;
    assert!(parse_err("box_v3.meshb", &bad).contains("version 7 is not supported"));

    let vtu = read("box_ascii.vtu");
    let err = parse_err(
        "box_ascii.vtu",
        &patch(
            &vtu,
            "NumberOfPoints=\"45\"",
            "NumberOfPoints=\"1000000000000\"",
        ),
    );
    assert!(
        err.contains("'Points' has 135 values, expected 3000000000000"),
        "{err}"
    );
    let err = parse_err("box_ascii.vtu", &patch(&vtu, "0.00000000000e+00", "0.0x"));
    assert!(
        err.contains("box_ascii.vtu:8:") && err.contains("bad number '0.0x'"),
        "{err}"
    );
    let zlib = read("box_appended_zlib.vtu");
    let mut bad = zlib.clone();
    let n = bad.len();
    bad[n - 40..n - 20].fill(b'A');
    let err = parse_err("box_appended_zlib.vtu", &bad);
    assert!(err.contains("zlib") || err.contains("end early"), "{err}");

    let b64 = read("box_appended_b64.vtu");
    let err = parse_err("box_appended_b64.vtu", &b64[..b64.len() - 200]);
    assert!(
        err.contains("DataArray 'types': base64 data end early"),
        "{err}"
    );
    let v40 = read("box_v40_bin.msh");
    let err = parse_err("box_v40_bin.msh", &v40[..v40.len() * 2 / 3]);
    assert!(
        err.contains("byte offset") && err.contains("$Elements"),
        "{err}"
    );
}
