//! Mutation fuzzing of every reader on stable Rust: seeds (the sample files, the case files,
//! typical expressions, a metric file, a checkpoint, an adaptive run's checkpoint, ESRI ASCII
//! grids and GeoTIFFs, a boundary time series) mutated by flips, splices of hostile
//! tokens, deletions, duplications and truncations, from a fixed seed. Every mutant must give a
//! value or an error, never a panic; the readers' own bounds keep memory and time small. The
//! adaptive checkpoint's trees are also mutated word by word under a valid checksum, so the
//! checks behind the checksum are fuzzed too.
//! CI runs 10,000 mutants per reader; `cargo test --release --test fuzz_readers -- --ignored`
//! runs 1,000,000 per reader.

use chromaflow::checkpoint::{seal, Checkpoint};
use chromaflow::mesh::generate;
use chromaflow::mesh::io::{parse_graph, parse_mesh, parse_msh};
use chromaflow::mesh::validate;
use chromaflow::order::{prepare, Ordering, PrepareOptions};
use chromaflow::raster::{Outside, Raster};
use chromaflow::solver::dg::amr::tree::FlatTree;
use chromaflow::solver::dg::amr::{AdaptiveMesh, Projection};
use chromaflow::solver::dg::restart::{push_host_trees, read_trees};
use chromaflow::solver::dg::{BoundaryKind, DgMesh};
use chromaflow::solver::smooth::metric::VertexMetric;
use chromaflow::solver::swe::boundary::TimeSeries;
use chromaflow::solver::swe::expr::Expr;
use rand::{Rng, SeedableRng};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

const CI_CASES: usize = 10_000;
const LONG_CASES: usize = 1_000_000;

const TOKENS: &[&str] = &[
    "1e308",
    "-1e308",
    "-1",
    "0",
    "nan",
    "inf",
    "4294967296",
    "99999999999999999999",
    "1e-320",
    "\u{2212}",
    "\u{feff}",
    "((((((((",
    "))))",
    "true",
    "\"",
    "[",
    "]",
    "=",
    "\n",
    "$EndNodes",
    "$Elements",
    "$Nodes",
    "2.2",
    "4.1",
    "\0",
    "\u{ff}",
];

fn mutate(rng: &mut rand_chacha::ChaCha8Rng, seed: &[u8]) -> Vec<u8> {
    let mut b = seed.to_vec();
    for _ in 0..rng.random_range(1..3) {
        let at = rng.random_range(0..=b.len());
        match rng.random_range(0..6) {
            0 if at < b.len() => b[at] = rng.random(),
            1 if at < b.len() => b[at] = b"0123456789-.eE \n\"[]=()"[rng.random_range(0..22)],
            2 => {
                let t = TOKENS[rng.random_range(0..TOKENS.len())];
                b.splice(at..at, t.bytes());
            }
            3 => {
                let end = (at + rng.random_range(0..64)).min(b.len());
                b.drain(at..end);
            }
            4 => {
                let end = (at + rng.random_range(0..64)).min(b.len());
                let chunk = b[at..end].to_vec();
                b.splice(at..at, chunk);
            }
            _ => b.truncate(at),
        }
    }
    b
}

/// Feed `n` mutants of the seeds to `read`; returns (values, errors), panicking (with the
/// input) if any mutant made the reader panic.
fn fuzz(name: &str, seeds: &[Vec<u8>], n: usize, read: impl Fn(&[u8]) -> bool) -> (usize, usize) {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(14);
    let mut ok = 0;
    for i in 0..n {
        let input = mutate(&mut rng, &seeds[i % seeds.len()]);
        match catch_unwind(AssertUnwindSafe(|| read(&input))) {
            Ok(true) => ok += 1,
            Ok(false) => {}
            Err(_) => panic!(
                "{name}: mutant {i} panicked: {:?}",
                String::from_utf8_lossy(&input)
            ),
        }
    }
    eprintln!(
        "{name}: {n} mutants, {ok} read, {} rejected, 0 panics",
        n - ok
    );
    (ok, n - ok)
}

fn repo(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

fn files(dir: &str, ext: &str) -> Vec<Vec<u8>> {
    let mut v: Vec<(PathBuf, Vec<u8>)> = std::fs::read_dir(repo(dir))
        .expect("dir")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == ext))
        .map(|p| (p.clone(), std::fs::read(&p).expect("read")))
        .collect();
    v.sort();
    v.into_iter().map(|(_, b)| b).collect()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn msh(n: usize) {
    let mut seeds = files("tests/data", "msh");
    seeds.extend(
        files("meshes", "msh")
            .into_iter()
            .filter(|b| b.len() < 20_000),
    );
    fuzz("msh", &seeds, n, |b| {
        parse_msh(Path::new("f.msh"), b).is_ok_and(|mut m| validate(&mut m).is_ok())
    });
}

/// Medit, VTU and Gmsh 4.0 / high-order samples through the format-detecting entry point.
fn mesh_inputs(n: usize) {
    let mut seeds = Vec::new();
    for ext in ["mesh", "meshb", "vtu", "msh"] {
        seeds.extend(
            files("tests/data/inputs", ext)
                .into_iter()
                .filter(|b| b.len() < 20_000),
        );
    }
    fuzz("mesh inputs", &seeds, n, |b| {
        parse_mesh(Path::new("f"), b).is_ok_and(|mut m| validate(&mut m).is_ok())
    });
}

fn graphs(n: usize) {
    let mut seeds = files("tests/data/graphs", "mtx");
    seeds.extend(files("tests/data/graphs", "col"));
    fuzz("graph", &seeds, n, |b| {
        parse_graph(Path::new("g"), b).is_ok()
    });
}

fn swe_case(n: usize) {
    let seeds = files("cases", "toml");
    let path = repo("cases/fuzz.toml");
    fuzz("swe case", &seeds, n, |b| {
        chromaflow::solver::swe::case::Case::from_toml(&text(b), &path).is_ok()
    });
}

fn dg_case(n: usize) {
    let seed = b"name = \"c\"\nmesh = \"rect:100\"\nt_end = 0.5\norder = 2\nlimiter = true\n\
        snapshot_every = 0.1\n[initial]\nkind = \"vortex\"\nx0 = 0.0\nbeta = 5.0\n\
        [[boundary]]\ntag = 1\nkind = \"inflow\"\nrho = 1.0\nu = 0.5\nv = 0.0\np = 1.0\n\
        [[boundary]]\nname = \"right\"\nkind = \"periodic\"\npartner = 4\n";
    let path = repo("cases/fuzz.toml");
    fuzz("dg case", &[seed.to_vec()], n, |b| {
        chromaflow::solver::dg::Case::from_toml(&text(b), &path).is_ok()
    });
}

fn expressions(n: usize) {
    let seeds: Vec<Vec<u8>> = [
        "if(sqrt(x^2 + y^2) > 1.5, 4.0, 0.5)",
        "1 - 1.5*exp(-x^2 - y^2)",
        "max(x, y) * 1e-1 + atan2(y, x) / pi",
        "x < 1 && y >= 2 || !(x == y)",
        "-(-(x))^-2^3",
    ]
    .iter()
    .map(|s| s.as_bytes().to_vec())
    .collect();
    fuzz("expression", &seeds, n, |b| {
        Expr::parse(&text(b), &["x", "y"]).is_ok_and(|e| e.eval(&[0.5, -2.0]).is_finite())
    });
}

fn metric_file(n: usize) {
    let seed = b"# m11 m12 m22\n1 0 1\n2 0.5 3\n\n4e2 -1 1e3\n1 0 1\n".to_vec();
    fuzz("metric file", &[seed], n, |b| {
        VertexMetric::parse(Path::new("m.txt"), &text(b), 4).is_ok()
    });
}

/// A small georeferenced float32 GeoTIFF (deflate-compressed when `deflate`).
fn geotiff(deflate: bool) -> Vec<u8> {
    use tiff::encoder::{colortype, compression::DeflateLevel, Compression, TiffEncoder};
    use tiff::tags::Tag;
    let mut buf = std::io::Cursor::new(Vec::new());
    let compression = if deflate {
        Compression::Deflate(DeflateLevel::Balanced)
    } else {
        Compression::Uncompressed
    };
    let mut enc = TiffEncoder::new(&mut buf)
        .expect("encoder")
        .with_compression(compression);
    let data: Vec<f32> = (0..48).map(|i| i as f32 * 0.25 - 3.0).collect();
    let tags = |e: &mut tiff::encoder::DirectoryEncoder<'_, _, _>| {
        e.write_tag(Tag::ModelPixelScaleTag, &[0.5f64, 0.5, 0.0][..])
            .expect("tag");
        e.write_tag(
            Tag::ModelTiepointTag,
            &[0.0f64, 0.0, 0.0, -2.0, 1.5, 0.0][..],
        )
        .expect("tag");
        e.write_tag(Tag::GeoKeyDirectoryTag, &[1u16, 1, 0, 1, 1025, 0, 1, 1][..])
            .expect("tag");
        e.write_tag(Tag::GdalNodata, "-9999").expect("tag");
    };
    let mut img = enc
        .new_image::<colortype::Gray32Float>(8, 6)
        .expect("image");
    tags(img.encoder());
    img.write_data(&data).expect("data");
    buf.into_inner()
}

/// ESRI ASCII grids and GeoTIFFs through the content-detecting raster reader, then sampled.
fn rasters(n: usize) {
    let asc = b"ncols 4\nnrows 3\nxllcorner -1.0\nyllcenter 0.5\ncellsize 0.5\n\
        NODATA_value -9999\n1 2 3 4\n5 -9999 7 8\n9.5 1e3 -2 0\n"
        .to_vec();
    let seeds = vec![asc, geotiff(false), geotiff(true)];
    for seed in &seeds {
        let r = Raster::parse(Path::new("seed"), seed).expect("every seed reads");
        assert_eq!(r.values.len(), r.ncols * r.nrows);
    }
    fuzz("raster", &seeds, n, |b| {
        Raster::parse(Path::new("r.asc"), b).is_ok_and(|r| {
            let [x0, x1, y0, y1] = r.extent();
            let (x, y) = (0.5 * (x0 + x1), 0.5 * (y0 + y1));
            r.sample(x, y, Outside::Clamp).is_ok() || r.sample(x, y, Outside::Value(0.0)).is_ok()
        })
    });
}

fn time_series(n: usize) {
    let seed = b"t, Q\n# ramp\n0, 0\n1.5; 2\n\n3\t2.5e1\n".to_vec();
    fuzz("time series", &[seed], n, |b| {
        TimeSeries::parse(Path::new("s.csv"), &text(b)).is_ok_and(|s| s.value_at(1.0).is_finite())
    });
}

fn checkpoint(n: usize) {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("c.ckpt");
    let ck = Checkpoint::new("dg", "dev".into(), 1, 2, (0.5, 9), (3, 4), vec![7; 24]);
    ck.write(&path).expect("write");
    let seed = std::fs::read(&path).expect("read");
    let read =
        |b: &[u8]| Checkpoint::parse(&path, b).is_ok_and(|c| c.check(&path, "dg", 1, 2).is_ok());
    fuzz("checkpoint", &[seed], n, read);
    header_mutants("checkpoint", &ck, n, read);
}

/// Mutants of `ck`'s JSON header sealed under a valid checksum ([`seal`]), so that they reach
/// the header's parser and checks instead of stopping at the checksum.
fn header_mutants(name: &str, ck: &Checkpoint, n: usize, read: impl Fn(&[u8]) -> bool) {
    let header = serde_json::to_vec(&ck.header).expect("header");
    let payload: Vec<u8> = ck.payload.iter().flat_map(|w| w.to_le_bytes()).collect();
    assert!(
        read(&seal(&header, &payload)),
        "{name}: the sealed seed reads"
    );
    fuzz(
        &format!("{name} (header, valid checksum)"),
        &[header],
        n,
        |h| read(&seal(h, &payload)),
    );
}

/// Trees refined and partly coarsened again (free blocks in every list), up to 3 levels.
fn adapted_trees() -> (FlatTree, u8) {
    let mesh = generate::rectangle(0.0, 2.0, 0.0, 1.0, 24, 5).expect("mesh");
    let om = prepare(&mesh, &PrepareOptions::new(Ordering::ColorRenumbered, 3)).expect("prepare");
    let dm = DgMesh::build(&om, &|_| Ok(BoundaryKind::Wall)).expect("dg mesh");
    let mut am = AdaptiveMesh::new(&dm, 3).expect("trees");
    let proj = Projection::new(1);
    for round in 0..4 {
        let n = am.num_active();
        let mut flags: Vec<i8> = (0..n)
            .map(|i| match round {
                3 => -1,
                _ if i % 3 == round % 3 => 1,
                _ => 0,
            })
            .collect();
        am.smooth_flags(&am.faces().expect("faces"), &mut flags);
        let mut coef = vec![vec![[1.0, 0.0, 0.0, 2.5]; proj.np]; n];
        am.adapt(&flags, &mut coef, &proj).expect("adapt");
    }
    (am.to_flat(), am.base_colors)
}

/// The adaptive mesh in a checkpoint: byte mutants of the file, and mutants of the trees' words
/// written as a valid checkpoint (so they pass the checksum and meet the tree checks). Read
/// back, a tree must give its DG mesh or an error.
fn adaptive_checkpoint(n: usize) {
    let path = Path::new("a.ckpt");
    let (flat, colors) = adapted_trees();
    let write = |flat: &FlatTree| -> Vec<u8> {
        let mut ck = Checkpoint::new("dg", "dev".into(), 1, 2, (0.5, 9), (3, 4), vec![]);
        push_host_trees(&mut ck, flat);
        ck.to_bytes().expect("bytes")
    };
    let read = |b: &[u8]| {
        Checkpoint::parse(path, b)
            .and_then(|ck| read_trees(&ck, path, 3, colors, None))
            .and_then(|am| am.dg_mesh())
            .is_ok()
    };
    assert!(read(&write(&flat)), "the seed itself reads");
    fuzz("adaptive checkpoint", &[write(&flat)], n, read);
    let seed = Checkpoint::parse(path, &write(&flat)).expect("the seed parses");
    header_mutants("adaptive checkpoint", &seed, n, read);
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(12);
    let (mut ok, mut rejected) = (0, 0);
    for i in 0..n {
        let mut m = flat.clone();
        for _ in 0..rng.random_range(1..4) {
            let word = match rng.random_range(0..4) {
                0 => NONE_OR_SMALL[rng.random_range(0..NONE_OR_SMALL.len())],
                1 => rng.random_range(0..64),
                _ => rng.random(),
            };
            let pick =
                |len: usize, rng: &mut rand_chacha::ChaCha8Rng| rng.random_range(0..len.max(1));
            match rng.random_range(0..6) {
                0 if !m.element_tree.is_empty() => {
                    let k = pick(m.element_tree.len(), &mut rng);
                    m.element_tree[k][rng.random_range(0..4)] = word;
                }
                1 if !m.element_edges.is_empty() => {
                    let k = pick(m.element_edges.len(), &mut rng);
                    m.element_edges[k][rng.random_range(0..3)] = word;
                }
                2 if !m.edge_tree.is_empty() => {
                    let k = pick(m.edge_tree.len(), &mut rng);
                    m.edge_tree[k][rng.random_range(0..4)] = word;
                }
                3 if !m.edge_sides.is_empty() => {
                    let k = pick(m.edge_sides.len(), &mut rng);
                    m.edge_sides[k][rng.random_range(0..2)][rng.random_range(0..2)] = word;
                }
                4 if !m.slots.is_empty() => {
                    let k = pick(m.slots.len(), &mut rng);
                    m.slots[k] = word;
                }
                _ => {
                    let r = rng.random_range(0..3);
                    m.free[r].push(word);
                }
            }
        }
        let bytes = write(&m);
        match catch_unwind(AssertUnwindSafe(|| read(&bytes))) {
            Ok(true) => ok += 1,
            Ok(false) => rejected += 1,
            Err(_) => panic!("adaptive trees: mutant {i} panicked: {m:?}"),
        }
    }
    eprintln!("adaptive trees: {n} mutants, {ok} read, {rejected} rejected, 0 panics");
}

/// Words a tree mutant tries besides random ones: "none", zero, and the ends of the ranges.
const NONE_OR_SMALL: [u32; 5] = [u32::MAX, 0, 1, 2, u32::MAX - 1];

#[test]
fn msh_mutants() {
    msh(CI_CASES);
}
#[test]
fn mesh_input_mutants() {
    mesh_inputs(CI_CASES);
}
#[test]
fn graph_mutants() {
    graphs(CI_CASES);
}
#[test]
fn swe_case_mutants() {
    swe_case(CI_CASES);
}
#[test]
fn dg_case_mutants() {
    dg_case(CI_CASES);
}
#[test]
fn expression_mutants() {
    expressions(CI_CASES);
}
#[test]
fn metric_file_mutants() {
    metric_file(CI_CASES);
}
#[test]
fn checkpoint_mutants() {
    checkpoint(CI_CASES);
}
#[test]
fn adaptive_checkpoint_mutants() {
    adaptive_checkpoint(CI_CASES);
}
#[test]
fn raster_mutants() {
    rasters(CI_CASES);
}
#[test]
fn time_series_mutants() {
    time_series(CI_CASES);
}

#[test]
#[ignore = "long: 1,000,000 mutants of each kind"]
fn long_run_adaptive_checkpoint() {
    adaptive_checkpoint(LONG_CASES);
}

#[test]
#[ignore = "long: 1,000,000 mutants per reader"]
fn long_run_every_reader() {
    msh(LONG_CASES);
    mesh_inputs(LONG_CASES);
    graphs(LONG_CASES);
    swe_case(LONG_CASES);
    dg_case(LONG_CASES);
    expressions(LONG_CASES);
    metric_file(LONG_CASES);
    checkpoint(LONG_CASES);
    adaptive_checkpoint(LONG_CASES);
    rasters(LONG_CASES);
    time_series(LONG_CASES);
}
