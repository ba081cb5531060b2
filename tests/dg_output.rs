//! DG outputs: the per-pixel PNG against the earlier sub-sampled Gouraud rendering, and the
//! high-order VTU (VTK Lagrange triangles) read back and checked against the polynomials.

use chromaflow::mesh::generate::split_square_grid;
use chromaflow::mesh::io::{read_vtu_grid, VTK_LAGRANGE_TRIANGLE};
use chromaflow::mesh::{ElementKind, Mesh};
use chromaflow::order::{prepare, Ordering, PrepareOptions};
use chromaflow::output::{render_triangle_field, render_with_stats, Field, PlotOptions};
use chromaflow::runtime::Runtime;
use chromaflow::solver::dg::cpu::Operator;
use chromaflow::solver::dg::plot::ModalField;
use chromaflow::solver::dg::{
    BasisTables, BoundaryKind, Case, DgMesh, NumericalFlux, Quantity, Simulation,
    SimulationOptions, SnapshotOptions, StateFn,
};
use image::RgbaImage;

fn vortex() -> StateFn {
    StateFn::Vortex {
        x0: 0.0,
        y0: 0.0,
        u_inf: 1.0,
        v_inf: 1.0,
        beta: 5.0,
        radius: 1.0,
        p_inf: 1.0,
    }
}

/// The projection of the vortex at time `t` on a criss-cross mesh of [-3, 3]^2, order p.
fn projected(n: usize, p: usize, t: f64) -> (DgMesh, BasisTables, Vec<f64>) {
    let mesh = split_square_grid(-3.0, 3.0, -3.0, 3.0, n, n).expect("mesh");
    let om = prepare(&mesh, &PrepareOptions::new(Ordering::ColorRenumbered, 1)).expect("order");
    let dm = DgMesh::build(&om, &|_| Ok(BoundaryKind::Exact)).expect("dg mesh");
    let tables = BasisTables::new(p);
    let c = {
        let op = Operator {
            mesh: &dm,
            tables: &tables,
            flux: NumericalFlux::Hllc,
            state_fn: vortex(),
            states: vec![],
        };
        let f = vortex();
        op.project(&|x, y| f.eval(x, y, t))
    };
    (dm, tables, c)
}

/// The earlier PNG path: every element split into m^2 sub-triangles on the lattice
/// (i/m, j/m), m = 2p, the polynomial at the lattice points, Gouraud shaded.
fn subsampled(dm: &DgMesh, tables: &BasisTables, c: &[f64], q: Quantity) -> (Mesh, Vec<f64>) {
    let m = 2 * tables.p;
    let mut lattice = Vec::new();
    for j in 0..=m {
        for i in 0..=m - j {
            lattice.push([i as f64 / m as f64, j as f64 / m as f64]);
        }
    }
    let at = |i: usize, j: usize| -> u32 { ((0..j).map(|r| m + 1 - r).sum::<usize>() + i) as u32 };
    let op = Operator {
        mesh: dm,
        tables,
        flux: NumericalFlux::Hllc,
        state_fn: vortex(),
        states: vec![],
    };
    let mut mesh = Mesh::new(2);
    let mut values = Vec::new();
    for e in 0..dm.num_elements {
        let base = mesh.points.len() as u32;
        let coef = op.element(c, e);
        for x in &lattice {
            let [px, py] = dm.map(e, x[0], x[1]);
            mesh.points.push([px, py, 0.0]);
            values.push(q.eval(&Operator::eval(&coef, &tables.eval(x[0], x[1]))));
        }
        for j in 0..m {
            for i in 0..m - j {
                let up = [at(i, j), at(i + 1, j), at(i, j + 1)].map(|v| base + v);
                mesh.push_element(ElementKind::Triangle, &up, 1);
                if i + j + 1 < m {
                    let down = [at(i + 1, j), at(i + 1, j + 1), at(i, j + 1)].map(|v| base + v);
                    mesh.push_element(ElementKind::Triangle, &down, 1);
                }
            }
        }
    }
    (mesh, values)
}

/// Largest channel difference of each pixel whose centre lies inside an element at least
/// `margin` pixels from its edges (pixels near edges differ by where each renderer puts the
/// jump between elements), given the mesh-to-pixel transform of both renders.
fn interior_differences(
    a: &RgbaImage,
    b: &RgbaImage,
    dm: &DgMesh,
    t: &chromaflow::output::PixelTransform,
    margin: f64,
) -> Vec<u8> {
    let mut out = Vec::new();
    for (x, y, pa) in a.enumerate_pixels() {
        let mx = t.xmin + (x as f64 + 0.5 - t.ox) / t.scale;
        let my = t.ymax - (y as f64 + 0.5 - t.oy) / t.scale;
        let inside = dm.vertices.iter().any(|v| {
            let d = |p: [f64; 2], q: [f64; 2], r: [f64; 2]| {
                (q[0] - p[0]) * (r[1] - p[1]) - (q[1] - p[1]) * (r[0] - p[0])
            };
            let area = d(v[0], v[1], v[2]);
            // Distance of the point to each edge, in pixels: |E_i| / |edge| * scale.
            (0..3).all(|i| {
                let (p, q) = (v[(i + 1) % 3], v[(i + 2) % 3]);
                let len = (q[0] - p[0]).hypot(q[1] - p[1]);
                d(p, q, [mx, my]) * area.signum() / len * t.scale >= margin
            })
        });
        if inside {
            let pb = b.get_pixel(x, y);
            let diff = pa.0.iter().zip(pb.0.iter()).map(|(u, v)| u.abs_diff(*v));
            out.push(diff.max().unwrap_or(0));
        }
    }
    out
}

#[test]
fn per_pixel_png_matches_the_subsampled_rendering_inside_elements() {
    let (dm, tables, c) = projected(6, 3, 0.0);
    let q = Quantity::Density;
    let (sub_mesh, sub_values) = subsampled(&dm, &tables, &c, q);
    let opts = PlotOptions {
        width: 420,
        height: 360,
        range: Some((0.3, 1.05)),
        ..PlotOptions::default()
    };
    let (old, old_stats) =
        render_with_stats(&sub_mesh, Field::Vertex(&sub_values), &opts).expect("old render");
    let field = ModalField::new(&dm.vertices, tables.p, &c, q);
    let (new, new_stats) = render_triangle_field(&field, &opts, None).expect("new render");
    assert_eq!(old_stats.plot_area, new_stats.plot_area);
    assert_eq!(old_stats.transform, new_stats.transform);
    // Both cover the same pixels up to the snapping of the lattice points on element edges.
    let (a, b) = (
        old_stats.pixels_filled as f64,
        new_stats.pixels_filled as f64,
    );
    assert!((a - b).abs() <= 1e-3 * a, "{a} vs {b} pixels");
    let diffs = interior_differences(&old, &new, &dm, &new_stats.transform, 2.0);
    let worst = diffs.iter().copied().max().unwrap_or(255);
    let mean = diffs.iter().map(|&d| f64::from(d)).sum::<f64>() / diffs.len() as f64;
    println!(
        "{} interior pixels: largest channel difference {worst}, mean {mean:.2}",
        diffs.len()
    );
    assert!(diffs.len() > 10_000, "{} interior pixels", diffs.len());
    // The sub-sampled path interpolates the cubic linearly on a lattice of h / 6: a few
    // colormap steps where the vortex curves most (measured: at most 3, mean 0.12).
    assert!(worst <= 8 && mean <= 0.5, "worst {worst}, mean {mean}");
    // The same comparison tells a different solution apart (the vortex moved by 0.5).
    let (_, _, moved) = projected(6, 3, 0.5);
    let other = ModalField::new(&dm.vertices, tables.p, &moved, q);
    let (shifted, _) = render_triangle_field(&other, &opts, None).expect("render");
    let diffs = interior_differences(&old, &shifted, &dm, &new_stats.transform, 2.0);
    let worst = diffs.iter().copied().max().unwrap_or(0);
    assert!(worst > 64, "a moved vortex differs by only {worst}");
}

#[test]
fn lagrange_vtu_holds_the_polynomial_at_its_nodes() {
    let rt = Runtime::wgpu().expect("GPU adapter (lavapipe in CI)");
    let dir = tempfile::tempdir().expect("temp dir");
    for p in [1usize, 4] {
        let mut case = Case::vortex(60);
        case.order = p;
        let sim = Simulation::new(&case, &rt, &SimulationOptions::default()).expect("sim");
        let snapshot = SnapshotOptions {
            fields: vec![Quantity::Density, Quantity::Pressure],
            vtu: true,
            contours: 0,
        };
        let files = sim.write_snapshot(dir.path(), p, &snapshot).expect("write");
        let vtu = files.last().expect("vtu");
        let grid = read_vtu_grid(vtu).expect("read back");
        let (dm, tables, c) = (sim.mesh(), sim.tables(), sim.solution().expect("solution"));
        let ne = dm.num_elements;
        let per = (p + 1) * (p + 2) / 2;
        assert_eq!(grid.types, vec![VTK_LAGRANGE_TRIANGLE; ne]);
        assert_eq!(grid.points.len(), ne * per);
        let density = grid.point_array("density").expect("density");
        let pressure = grid.point_array("pressure").expect("pressure");
        let op = sim.operator();
        let mut worst: f64 = 0.0;
        for e in 0..ne {
            let cell = grid.cell(e);
            assert_eq!(cell.len(), per);
            let v = dm.vertices[e];
            // Corners first, in the element's vertex order (VTK's order).
            for (k, corner) in v.iter().enumerate() {
                let pt = grid.points[cell[k]];
                assert!((pt[0] - corner[0]).hypot(pt[1] - corner[1]) < 1e-12);
            }
            let coef = op.element(c, e);
            for &n in cell {
                // Reference coordinates of the node from its position.
                let pt = grid.points[n];
                let (a, b) = (
                    [v[1][0] - v[0][0], v[1][1] - v[0][1]],
                    [v[2][0] - v[0][0], v[2][1] - v[0][1]],
                );
                let (dx, dy) = (pt[0] - v[0][0], pt[1] - v[0][1]);
                let det = a[0] * b[1] - a[1] * b[0];
                let xi = (dx * b[1] - dy * b[0]) / det;
                let eta = (a[0] * dy - a[1] * dx) / det;
                // Every node is a lattice point (i/p, j/p).
                let q = p as f64;
                assert!(
                    (xi * q - (xi * q).round()).abs() < 1e-9,
                    "node off the lattice"
                );
                assert!(
                    (eta * q - (eta * q).round()).abs() < 1e-9,
                    "node off the lattice"
                );
                let u = Operator::eval(&coef, &tables.eval(xi, eta));
                let rel = |got: f64, want: f64| (got - want).abs() / want.abs().max(1e-12);
                worst = worst
                    .max(rel(density[n], Quantity::Density.eval(&u)))
                    .max(rel(pressure[n], Quantity::Pressure.eval(&u)));
            }
        }
        assert!(
            worst < 1e-10,
            "p = {p}: relative error {worst:e} at the nodes"
        );
        // The mesh reader takes the cells as their corner triangles.
        let linear = chromaflow::mesh::read_mesh(vtu).expect("linear read");
        assert_eq!(linear.num_elements(), ne);
        let means = grid
            .cell_data
            .iter()
            .find(|(n, _)| n == "density_mean")
            .expect("density_mean");
        assert_eq!(means.1.len(), ne);
    }
    let listed = chromaflow::output::read_collection(&dir.path().join("dg.pvd")).expect("pvd");
    let files: Vec<&str> = listed.iter().map(|e| e.file.as_str()).collect();
    assert_eq!(files, ["dg_0001.vtu", "dg_0004.vtu"]);
}
