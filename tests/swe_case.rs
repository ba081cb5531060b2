//! Case files: the shipped cases load and match the built-ins, and bad case files give clear
//! errors naming the file and the key (unknown keys, negative depths, a missing mesh, r outside
//! (0, 1), bad expressions, unknown boundary names, driven boundaries, gauges, rasters).

use chromaflow::mesh::builtin;
use chromaflow::order::{prepare, Ordering, PrepareOptions};
use chromaflow::solver::swe::case::{Case, DEFAULT_SEED};
use std::path::{Path, PathBuf};

fn cases_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("cases")
}

const GOOD: &str = r#"
name = "t"
[mesh]
builtin = "cross:4"
domain = [-5.0, 5.0, -5.0, 5.0]
[physics]
r = 0.5
[initial]
H = 6.0
h1 = "if(sqrt(x^2 + y^2) > 1.5, 4.0, 0.5)"
h2 = "H - h1"
[run]
final_time = 0.1
"#;

/// Error text of loading `text` as `bad.toml` and preparing it.
fn error_of(text: &str) -> String {
    let path = Path::new("cases/bad.toml");
    match Case::from_toml(text, path).and_then(|c| c.prepare().map(|_| ())) {
        Ok(()) => panic!("case should have been rejected:\n{text}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn shipped_case_files_load_and_match_builtins() {
    for name in [
        "swe_test1",
        "swe_test2",
        "swe_lake",
        "swe_channel_open",
        "swe_estuary",
    ] {
        let case = Case::from_file(&cases_dir().join(format!("{name}.toml"))).unwrap();
        let setup = case.prepare().unwrap();
        assert!(setup.mesh.num_cells() > 1000, "{name}");
    }
    for b in ["test1", "test2", "lake"] {
        let file = Case::from_file(&cases_dir().join(format!("swe_{b}.toml"))).unwrap();
        let builtin = Case::builtin(b).unwrap();
        let (f, g) = (file.prepare().unwrap(), builtin.prepare().unwrap());
        assert_eq!(f.depth, g.depth, "{b}: H");
        assert_eq!(f.state, g.state, "{b}: initial state");
        assert_eq!(file.physics, builtin.physics, "{b}");
        assert_eq!(file.final_time, builtin.final_time, "{b}");
    }
}

#[test]
fn good_minimal_case_parses() {
    let c = Case::from_toml(GOOD, Path::new("x.toml")).unwrap();
    let s = c.prepare().unwrap();
    assert_eq!(s.mesh.num_cells(), 64);
}

#[test]
fn unknown_key_names_file_line_and_key() {
    let e = error_of(&GOOD.replace("r = 0.5", "r = 0.5\ndensity = 3"));
    assert!(e.contains("cases/bad.toml") && e.contains("density"), "{e}");
    assert!(e.contains("cases/bad.toml:8"), "line number: {e}");
    let e = error_of(&format!("{GOOD}\n[extra]\nx = 1\n"));
    assert!(e.contains("extra"), "{e}");
}

#[test]
fn negative_depth_names_key_and_cell() {
    let e = error_of(&GOOD.replace("h2 = \"H - h1\"", "h2 = \"2 - h1\""));
    assert!(
        e.contains("cases/bad.toml") && e.contains("[initial] h2"),
        "{e}"
    );
    assert!(e.contains("negative layer thickness"), "{e}");
}

#[test]
fn missing_mesh_is_reported() {
    let e = error_of(&GOOD.replace("builtin = \"cross:4\"", "file = \"does_not_exist.msh\""));
    assert!(
        e.contains("[mesh] file") && e.contains("does_not_exist.msh"),
        "{e}"
    );
    let no_mesh = GOOD
        .replace("builtin = \"cross:4\"\n", "")
        .replace("domain = [-5.0, 5.0, -5.0, 5.0]\n", "");
    let e = error_of(&no_mesh);
    assert!(e.contains("[mesh]") && e.contains("missing mesh"), "{e}");
}

#[test]
fn density_ratio_outside_unit_interval_is_rejected() {
    for r in ["1.0", "1.2", "0.0", "-0.5"] {
        let e = error_of(&GOOD.replace("r = 0.5", &format!("r = {r}")));
        assert!(
            e.contains("cases/bad.toml") && e.contains("[physics] r"),
            "{e}"
        );
        assert!(e.contains("between 0 and 1"), "{e}");
    }
}

#[test]
fn other_mistakes_are_named() {
    let e = error_of(&GOOD.replace("h2 = \"H - h1\"", "h2 = \"H - h3\""));
    assert!(
        e.contains("[initial] h2") && e.contains("unknown variable 'h3'"),
        "{e}"
    );
    let e = error_of(&format!("{GOOD}\n[boundary]\nnorth = \"wall\"\n"));
    assert!(
        e.contains("[boundary] north") && e.contains("bottom"),
        "{e}"
    );
    let e = error_of(&format!("{GOOD}\n[boundary]\ndefault = \"sticky\"\n"));
    assert!(
        e.contains("[boundary] default") && e.contains("sticky"),
        "{e}"
    );
    let e = error_of(&GOOD.replace("final_time = 0.1", "final_time = 0.1\nscheme = \"godunov\""));
    assert!(e.contains("[run] scheme") && e.contains("godunov"), "{e}");
    let e = error_of(&GOOD.replace("final_time = 0.1", "final_time = -1"));
    assert!(e.contains("[run] final_time"), "{e}");
    let e = error_of(&GOOD.replace("r = 0.5", "r = \"half\""));
    assert!(e.contains("cases/bad.toml") && e.contains("r"), "{e}");
}

#[test]
fn ordering_and_seed_are_read_and_reach_the_mesh() {
    let c = Case::from_toml(GOOD, Path::new("x.toml")).unwrap();
    assert_eq!((c.ordering, c.seed), (Ordering::Original, DEFAULT_SEED));
    let text = GOOD.replace(
        "builtin = \"cross:4\"",
        "builtin = \"cross:4\"\nordering = \"rcm+color\"\nseed = 5",
    );
    let c = Case::from_toml(&text, Path::new("x.toml")).unwrap();
    assert_eq!((c.ordering, c.seed), (Ordering::RcmColorGrouped, 5));
    let s = c.prepare().unwrap();
    let o = prepare(
        &builtin("cross:4").unwrap(),
        &PrepareOptions::new(Ordering::RcmColorGrouped, 5),
    )
    .unwrap();
    assert_eq!(s.mesh.ordering, Ordering::RcmColorGrouped);
    assert_eq!(s.mesh.element_new_to_old, o.element_new_to_old);
    assert_eq!(
        (&s.mesh.topo.left, &s.mesh.topo.right),
        (&o.topo.left, &o.topo.right)
    );
    let offsets: Vec<u32> = o.color_offsets.iter().map(|&x| x as u32).collect();
    assert_eq!(s.mesh.color_offsets, offsets);

    let path = Path::new("cases/bad.toml");
    let e = Case::from_toml(
        &GOOD.replace("[physics]", "ordering = \"zigzag\"\n[physics]"),
        path,
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("cases/bad.toml") && e.contains("[mesh] ordering") && e.contains("zigzag"),
        "{e}"
    );
    let e = error_of(&GOOD.replace("[physics]", "seed = -1\n[physics]"));
    assert!(e.contains("cases/bad.toml:6"), "line of the seed: {e}");
}

/// Driven boundaries, gauges and raster fields: every mistake names the file, the key and
/// what is wrong.
#[test]
fn driven_boundary_gauge_and_raster_mistakes_are_named() {
    let with_boundary = |entry: &str| format!("{GOOD}\n[boundary]\nleft = {entry}\n");
    let e = error_of(&with_boundary("{ discharge = 1.0, elevation = 0.0 }"));
    assert!(
        e.contains("[boundary] left: give exactly one of 'discharge' and 'elevation'"),
        "{e}"
    );
    let e = error_of(&with_boundary("{ inflow = 1.0 }"));
    assert!(
        e.contains("cases/bad.toml:") && e.contains("{ discharge = Q } or { elevation = η }"),
        "{e}"
    );
    let e = error_of(&with_boundary("{ discharge = \"no_such_series.csv\" }"));
    assert!(
        e.contains("[boundary] left") && e.contains("no_such_series.csv"),
        "{e}"
    );
    let e = error_of(&format!(
        "{GOOD}\n[boundary]\ndefault = {{ elevation = 0.0 }}\n"
    ));
    assert!(
        e.contains("[boundary] default: the default boundary is wall or open"),
        "{e}"
    );
    // A series that ends before the final time.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("short.csv"), "0, 1\n0.05, 2\n").unwrap();
    let path = dir.path().join("c.toml");
    let case = Case::from_toml(&with_boundary("{ discharge = \"short.csv\" }"), &path).unwrap();
    let e = case.prepare().unwrap_err().to_string();
    assert!(
        e.contains("c.toml: [boundary]: 'left': the series")
            && e.contains("covers t = 0 .. 0.05, not the run's 0 .. 0.1"),
        "{e}"
    );
    std::fs::write(dir.path().join("bad.csv"), "t,Q\n0, 1\n0.5, one\n").unwrap();
    let e = Case::from_toml(&with_boundary("{ discharge = \"bad.csv\" }"), &path)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("[boundary] left")
            && e.contains("bad.csv:3: value 'one' is not a finite number"),
        "{e}"
    );
    // Gauges.
    let gauge = |g: &str| format!("{GOOD}\n[[gauges]]\n{g}\n");
    let e = error_of(&gauge("name = \"a/b\"\nx = 0.0\ny = 0.0"));
    assert!(e.contains("[[gauges]] 1 ('a/b'): name must be"), "{e}");
    let e = error_of(&format!(
        "{}[[gauges]]\nname = \"a\"\nx = 1.0\ny = 0.0\n",
        gauge("name = \"a\"\nx = 0.0\ny = 0.0")
    ));
    assert!(
        e.contains("[[gauges]] 2 ('a'): two gauges have this name"),
        "{e}"
    );
    let e = error_of(&gauge("name = \"a\"\nx = 0.0"));
    assert!(e.contains("missing field `y`"), "{e}");
    let e = error_of(&gauge("name = \"far\"\nx = 50.0\ny = 0.0"));
    assert!(
        e.contains("gauge 'far' at (50, 0) lies outside the mesh"),
        "{e}"
    );
    let e = error_of(&GOOD.replace("[run]", "[output]\ngauge_every = -1\n[run]"));
    assert!(e.contains("[output] gauge_every: -1 must be ≥ 0"), "{e}");
    // Raster fields.
    let e = error_of(&GOOD.replace("H = 6.0", "H = { raster = \"none.asc\" }"));
    assert!(
        e.contains("[initial] H raster") && e.contains("none.asc"),
        "{e}"
    );
    let e = error_of(&GOOD.replace("H = 6.0", "H = { file = \"b.asc\" }"));
    assert!(
        e.contains("expected a number, an expression string or { raster"),
        "{e}"
    );
}
