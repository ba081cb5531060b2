//! PNG output: colors of flat and Gouraud shading, watertightness, colorbar, title, NaN
//! handling, edge colorings, atomic writes and input errors. Meshes are built by hand.

use chromaflow::error::{Error, Result};
use chromaflow::mesh::{ElementKind, Mesh, Topology};
use chromaflow::output::{
    categorical, render, render_edges, render_with_stats, save_field_png, topology_edges, Colormap,
    Field, PlotOptions, RenderStats, NAN_COLOR,
};
use image::RgbaImage;

const WHITE: [u8; 4] = [255, 255, 255, 255];

/// The unit square as two triangles: 0 = lower right (0, 1, 2), 1 = upper left (0, 2, 3).
fn two_triangles() -> Mesh {
    let mut m = Mesh::new(2);
    m.points = vec![
        [0.0, 0.0, 0.0],
        [1.0, 0.0, 0.0],
        [1.0, 1.0, 0.0],
        [0.0, 1.0, 0.0],
    ];
    m.push_element(ElementKind::Triangle, &[0, 1, 2], 0);
    m.push_element(ElementKind::Triangle, &[0, 2, 3], 0);
    m
}

/// An `n x n` grid on [0, w] x [0, h], interior points jittered deterministically so edges run
/// at odd angles, each square split into two triangles (or kept as a quad).
fn grid(n: usize, w: f64, h: f64, quads: bool) -> Mesh {
    let mut m = Mesh::new(2);
    for j in 0..=n {
        for i in 0..=n {
            let interior = i > 0 && i < n && j > 0 && j < n;
            let (jx, jy) = if interior {
                let k = (i * 7 + j * 13) as f64;
                (0.3 * (k * 0.37).sin(), 0.3 * (k * 0.91).cos())
            } else {
                (0.0, 0.0)
            };
            m.points.push([
                (i as f64 + jx) * w / n as f64,
                (j as f64 + jy) * h / n as f64,
                0.0,
            ]);
        }
    }
    let id = |i: usize, j: usize| (j * (n + 1) + i) as u32;
    for j in 0..n {
        for i in 0..n {
            let (a, b, c, d) = (id(i, j), id(i + 1, j), id(i + 1, j + 1), id(i, j + 1));
            if quads {
                m.push_element(ElementKind::Quad, &[a, b, c, d], 0);
            } else if (i + j) % 2 == 0 {
                m.push_element(ElementKind::Triangle, &[a, b, c], 0);
                m.push_element(ElementKind::Triangle, &[a, c, d], 0);
            } else {
                m.push_element(ElementKind::Triangle, &[a, b, d], 0);
                m.push_element(ElementKind::Triangle, &[b, c, d], 0);
            }
        }
    }
    m
}

fn opts(width: u32, height: u32) -> PlotOptions {
    PlotOptions {
        width,
        height,
        ..PlotOptions::default()
    }
}

fn px(img: &RgbaImage, p: [f64; 2]) -> [u8; 4] {
    img.get_pixel(p[0] as u32, p[1] as u32).0
}

fn rgba(c: [u8; 3]) -> [u8; 4] {
    [c[0], c[1], c[2], 255]
}

/// Pixel at the mesh point (x, y).
fn at(img: &RgbaImage, stats: &RenderStats, x: f64, y: f64) -> [u8; 4] {
    px(img, stats.transform.to_pixel(x, y))
}

#[test]
fn flat_cells_take_their_colormap_color() -> Result<()> {
    let mesh = two_triangles();
    let (img, stats) = render_with_stats(&mesh, Field::Cell(&[0.0, 1.0]), &opts(300, 240))?;
    assert_eq!(stats.range, Some((0.0, 1.0)));
    assert_eq!(stats.nan_count, 0);
    // Centroids of the two triangles.
    assert_eq!(
        at(&img, &stats, 2.0 / 3.0, 1.0 / 3.0),
        [0x44, 0x01, 0x54, 255]
    );
    assert_eq!(
        at(&img, &stats, 1.0 / 3.0, 2.0 / 3.0),
        [0xfd, 0xe7, 0x25, 255]
    );
    // Aspect ratio kept: the unit square is drawn square.
    let a = stats.transform.to_pixel(0.0, 0.0);
    let b = stats.transform.to_pixel(1.0, 1.0);
    assert!(((b[0] - a[0]) - (a[1] - b[1])).abs() < 1e-9);
    Ok(())
}

#[test]
fn colormap_endpoints_are_published_viridis() {
    assert_eq!(Colormap::default(), Colormap::Viridis);
    assert_eq!(Colormap::Viridis.sample(0.0), [0x44, 0x01, 0x54]);
    assert_eq!(Colormap::Viridis.sample(1.0), [0xfd, 0xe7, 0x25]);
    let msg = Colormap::from_name("rainbow")
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(
        msg.contains("rainbow") && msg.contains("viridis") && msg.contains("grayscale"),
        "{msg}"
    );
}

#[test]
fn gouraud_gradient_is_smooth_and_monotone() -> Result<()> {
    let mesh = two_triangles();
    let x: Vec<f64> = mesh.points.iter().map(|p| p[0]).collect();
    let (img, stats) = render_with_stats(&mesh, Field::Vertex(&x), &opts(400, 300))?;
    let lut = Colormap::Viridis.lut();
    let index = |c: [u8; 4]| lut.iter().position(|&e| e == c);
    let [x0, y] = stats.transform.to_pixel(0.0, 0.37);
    let [x1, _] = stats.transform.to_pixel(1.0, 0.37);
    let mut last = 0;
    let mut distinct = 0;
    for i in (x0.ceil() as u32)..(x1.floor() as u32) {
        let c = img.get_pixel(i, y as u32).0;
        let k = index(c)
            .ok_or_else(|| Error::Invalid(format!("pixel {i} {c:?} is not a viridis color")))?;
        assert!(
            k >= last,
            "gradient not monotone at x = {i}: {k} after {last}"
        );
        distinct += usize::from(k > last);
        last = k;
    }
    assert!(last >= 250, "right end reaches the top of the map: {last}");
    assert!(distinct > 150, "smooth: {distinct} distinct steps");
    Ok(())
}

/// Every pixel whose centre is inside the square (with a one-pixel margin) is painted.
fn assert_no_cracks(mesh: &Mesh, field: Field, o: &PlotOptions, w: f64, h: f64) -> Result<()> {
    let (img, stats) = render_with_stats(mesh, field, o)?;
    let a = stats.transform.to_pixel(0.0, h);
    let b = stats.transform.to_pixel(w, 0.0);
    let mut checked = 0;
    for j in (a[1].ceil() as u32 + 1)..(b[1].floor() as u32 - 1) {
        for i in (a[0].ceil() as u32 + 1)..(b[0].floor() as u32 - 1) {
            assert_ne!(img.get_pixel(i, j).0, WHITE, "crack at pixel ({i}, {j})");
            checked += 1;
        }
    }
    assert!(checked > 10_000);
    Ok(())
}

#[test]
fn no_cracks_between_triangles() -> Result<()> {
    let mesh = grid(10, 2.0, 1.0, false);
    assert_eq!(mesh.num_elements(), 200);
    let cells: Vec<f64> = (0..200).map(|e| (e as f64 * 0.618).fract()).collect();
    for (w, h) in [(537, 411), (800, 333), (256, 256)] {
        assert_no_cracks(&mesh, Field::Cell(&cells), &opts(w, h), 2.0, 1.0)?;
    }
    let verts: Vec<f64> = mesh.points.iter().map(|p| p[0] * p[1]).collect();
    assert_no_cracks(&mesh, Field::Vertex(&verts), &opts(640, 480), 2.0, 1.0)?;
    let quads = grid(12, 1.0, 1.0, true);
    let qcells: Vec<f64> = (0..144).map(|e| e as f64).collect();
    assert_no_cracks(&quads, Field::Cell(&qcells), &opts(500, 500), 1.0, 1.0)?;
    Ok(())
}

#[test]
fn colorbar_runs_from_max_at_top_to_min_at_bottom() -> Result<()> {
    let mesh = grid(4, 1.0, 1.0, false);
    let cells: Vec<f64> = (0..mesh.num_elements()).map(|e| e as f64 - 7.5).collect();
    let mut o = opts(640, 480);
    o.label = "pressure".into();
    let (img, stats) = render_with_stats(&mesh, Field::Cell(&cells), &o)?;
    let [x0, y0, x1, y1] = stats
        .colorbar
        .ok_or_else(|| Error::Invalid("no colorbar".into()))?;
    assert!(x0 >= stats.plot_area[2], "colorbar right of the plot");
    let x = (x0 + x1) / 2;
    let top = img.get_pixel(x, y0 + 3).0;
    let bottom = img.get_pixel(x, y1 - 4).0;
    let lut = Colormap::Viridis.lut();
    assert!(lut[250..].contains(&top), "top {top:?}");
    assert!(lut[..6].contains(&bottom), "bottom {bottom:?}");
    let distinct: std::collections::HashSet<[u8; 4]> =
        (y0 + 2..y1 - 2).map(|y| img.get_pixel(x, y).0).collect();
    assert!(
        distinct.len() > 100,
        "gradient has {} colors",
        distinct.len()
    );
    // Tick labels: dark text pixels right of the bar.
    let text = (y0..y1)
        .flat_map(|y| (x1 + 8..o.width).map(move |x| (x, y)))
        .filter(|&(x, y)| img.get_pixel(x, y).0[0] < 60)
        .count();
    assert!(text > 100, "tick labels drawn ({text} dark pixels)");
    // Without a colorbar the plot takes the width.
    o.colorbar = false;
    let (_, s2) = render_with_stats(&mesh, Field::Cell(&cells), &o)?;
    assert!(s2.colorbar.is_none() && s2.plot_area[2] > stats.plot_area[2]);
    Ok(())
}

#[test]
fn title_is_drawn_above_the_plot() -> Result<()> {
    let mesh = two_triangles();
    let dark_above = |o: &PlotOptions| -> Result<usize> {
        let (img, stats) = render_with_stats(&mesh, Field::Cell(&[1.0, 2.0]), o)?;
        let top = stats.plot_area[1];
        Ok((0..top)
            .flat_map(|y| (0..o.width).map(move |x| (x, y)))
            .filter(|&(x, y)| img.get_pixel(x, y).0[..3].iter().all(|&c| c < 60))
            .count())
    };
    let mut o = opts(600, 500);
    assert_eq!(dark_above(&o)?, 0);
    o.title = "Density t=0.25".into();
    assert!(dark_above(&o)? > 200);
    Ok(())
}

#[test]
fn nan_cells_are_magenta_and_counted() -> Result<()> {
    let mesh = two_triangles();
    let (img, stats) = render_with_stats(&mesh, Field::Cell(&[f64::NAN, 3.0]), &opts(400, 300))?;
    assert_eq!(stats.nan_count, 1);
    assert_eq!(at(&img, &stats, 2.0 / 3.0, 1.0 / 3.0), NAN_COLOR);
    assert_ne!(at(&img, &stats, 1.0 / 3.0, 2.0 / 3.0), NAN_COLOR);
    // A legend swatch for NaN outside the plot.
    let right = stats.plot_area[2];
    let swatch = img
        .enumerate_pixels()
        .any(|(x, _, p)| x > right && p.0 == NAN_COLOR);
    assert!(swatch, "NaN legend swatch");
    // Per-vertex NaN taints its triangles; the range ignores it.
    let v = [0.0, 1.0, f64::NAN, 2.0];
    let (img, stats) = render_with_stats(&mesh, Field::Vertex(&v), &opts(400, 300))?;
    assert_eq!((stats.nan_count, stats.range), (1, Some((0.0, 2.0))));
    assert_eq!(at(&img, &stats, 1.0 / 3.0, 2.0 / 3.0), NAN_COLOR);
    Ok(())
}

#[test]
fn fixed_range_clamps_and_constant_field_is_mid_map() -> Result<()> {
    let mesh = two_triangles();
    let mut o = opts(300, 300);
    o.range = Some((0.0, 1.0));
    let (img, stats) = render_with_stats(&mesh, Field::Cell(&[-5.0, 5.0]), &o)?;
    assert_eq!(
        at(&img, &stats, 2.0 / 3.0, 1.0 / 3.0),
        rgba(Colormap::Viridis.sample(0.0))
    );
    assert_eq!(
        at(&img, &stats, 1.0 / 3.0, 2.0 / 3.0),
        rgba(Colormap::Viridis.sample(1.0))
    );
    let (img, stats) = render_with_stats(&mesh, Field::Cell(&[4.0, 4.0]), &opts(300, 300))?;
    let (lo, hi) = stats.range.unwrap_or_default();
    assert!(lo < 4.0 && hi > 4.0);
    assert_eq!(
        at(&img, &stats, 0.5, 0.2),
        rgba(Colormap::Viridis.sample(0.5))
    );
    o.range = Some((2.0, 1.0));
    assert!(render(&mesh, Field::Cell(&[1.0, 2.0]), &o).is_err());
    Ok(())
}

#[test]
fn classes_and_edge_colorings_use_the_palette() -> Result<()> {
    let mesh = two_triangles();
    let (img, stats) = render_with_stats(&mesh, Field::CellClass(&[2, 5]), &opts(400, 300))?;
    assert_eq!(at(&img, &stats, 2.0 / 3.0, 1.0 / 3.0), rgba(categorical(2)));
    assert_eq!(at(&img, &stats, 1.0 / 3.0, 2.0 / 3.0), rgba(categorical(5)));

    let topo = Topology::build(&mesh)?;
    let edges = topology_edges(&topo);
    assert_eq!(edges.len(), 5);
    let colors: Vec<u32> = (0..5).collect();
    let o = opts(500, 400);
    let img = render_edges(&mesh, &edges, &colors, &o)?;
    // Same layout as a field render without range: probe through a field render's transform.
    let (_, stats) = render_with_stats(&mesh, Field::CellClass(&[0, 1]), &o)?;
    for (e, &c) in edges.iter().zip(&colors) {
        let (a, b) = (mesh.points[e[0] as usize], mesh.points[e[1] as usize]);
        let mid = at(&img, &stats, 0.5 * (a[0] + b[0]), 0.5 * (a[1] + b[1]));
        assert_eq!(mid, rgba(categorical(c)), "edge {e:?}");
    }
    assert!(render_edges(&mesh, &edges, &colors[..4], &o).is_err());
    assert!(render_edges(&mesh, &[[0, 9]], &[0], &o).is_err());
    Ok(())
}

#[test]
fn wireframe_and_no_field_draw_dark_lines() -> Result<()> {
    let mesh = grid(3, 1.0, 1.0, true);
    let mut o = opts(300, 300);
    o.wireframe = true;
    let (img, stats) = render_with_stats(&mesh, Field::None, &o)?;
    assert_eq!(stats.range, None);
    let [x, y] = stats.transform.to_pixel(0.5, 0.0);
    let line = (y as u32 - 2..=y as u32 + 1).any(|j| img.get_pixel(x as u32, j).0[0] < 200);
    assert!(line, "boundary edge drawn");
    assert_eq!(at(&img, &stats, 0.5, 0.5), WHITE);
    Ok(())
}

#[test]
fn png_write_is_atomic_and_decodes() -> Result<()> {
    let dir = tempfile::tempdir().map_err(|e| Error::io("tempdir", e))?;
    let path = dir.path().join("snapshots/step_0001.png");
    let mesh = grid(5, 1.0, 1.0, false);
    let v: Vec<f64> = mesh.points.iter().map(|p| p[0] - p[1]).collect();
    let mut o = opts(320, 200);
    o.colormap = Colormap::CoolWarm;
    let stats = save_field_png(&mesh, Field::Vertex(&v), &o, &path)?;
    assert_eq!(stats.nan_count, 0);
    let listing: Vec<String> = std::fs::read_dir(path.parent().unwrap_or(dir.path()))
        .map_err(|e| Error::io(dir.path(), e))?
        .filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
        .collect();
    assert_eq!(listing, ["step_0001.png"]);
    let back = image::open(&path).map_err(|e| Error::Invalid(e.to_string()))?;
    assert_eq!((back.width(), back.height()), (320, 200));
    // An unwritable destination names the path.
    let bad = dir.path().join("snapshots/step_0001.png/inner.png");
    let msg = save_field_png(&mesh, Field::Vertex(&v), &o, &bad)
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(
        msg.contains("inner.png") || msg.contains("step_0001.png"),
        "{msg}"
    );
    Ok(())
}

#[test]
fn input_errors_are_reported() {
    let mesh = two_triangles();
    let msg = |r: Result<RgbaImage>| r.err().map(|e| e.to_string()).unwrap_or_default();
    let m = msg(render(
        &mesh,
        Field::Cell(&[1.0, 2.0, 3.0]),
        &opts(200, 200),
    ));
    assert!(m.contains("3 values") && m.contains("expected 2"), "{m}");
    let m = msg(render(&mesh, Field::Vertex(&[1.0]), &opts(200, 200)));
    assert!(m.contains("1 values") && m.contains("expected 4"), "{m}");
    let m = msg(render(&mesh, Field::CellClass(&[]), &opts(200, 200)));
    assert!(m.contains("expected 2"), "{m}");
    let mut m3 = Mesh::new(3);
    m3.points = vec![[0.0; 3], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];
    m3.push_element(ElementKind::Tetrahedron, &[0, 1, 2, 3], 0);
    assert!(msg(render(&m3, Field::None, &opts(200, 200))).contains("2D"));
    let mut bad = two_triangles();
    bad.connectivity[5] = 17;
    assert!(msg(render(&bad, Field::None, &opts(200, 200))).contains("point 17"));
    assert!(msg(render(&mesh, Field::None, &opts(20, 20))).contains("too small"));
    assert!(msg(render(&mesh, Field::None, &opts(100_000, 100_000))).contains("larger"));
}

/// Writes sample pictures to the temp directory for a visual check:
/// `cargo test --release --test output_png -- --ignored example_pictures --nocapture`.
#[test]
#[ignore]
fn example_pictures() -> Result<()> {
    let dir = std::env::temp_dir();
    // An annulus-like sector mesh (tall, to exercise aspect ratio) with a smooth signed field.
    let mesh = grid(40, 2.0, 1.0, false);
    let v: Vec<f64> = mesh
        .points
        .iter()
        .map(|p| (3.0 * p[0]).sin() * (4.0 * p[1]).cos() * 1.7e-3)
        .collect();
    let cells: Vec<f64> = (0..mesh.num_elements())
        .map(|e| {
            if e == 77 {
                f64::NAN
            } else {
                (e % 97) as f64 / 97.0
            }
        })
        .collect();
    let mut o = PlotOptions {
        width: 1200,
        height: 800,
        title: "Vertex field sin(3x) cos(4y) - Gouraud".into(),
        label: "p [Pa]".into(),
        ..PlotOptions::default()
    };
    save_field_png(
        &mesh,
        Field::Vertex(&v),
        &o,
        &dir.join("chromaflow_vertex.png"),
    )?;
    o.title = "Cell field with one NaN, wireframe, magma".into();
    o.colormap = Colormap::Magma;
    o.wireframe = true;
    o.label = "quality".into();
    let s = save_field_png(
        &mesh,
        Field::Cell(&cells),
        &o,
        &dir.join("chromaflow_cells.png"),
    )?;
    println!("cells: {s:?}");
    let small = grid(6, 1.0, 1.5, false);
    let topo = Topology::build(&small)?;
    let edges = topology_edges(&topo);
    let colors: Vec<u32> = (0..edges.len() as u32).map(|i| i % 5).collect();
    let eo = PlotOptions {
        width: 700,
        height: 800,
        title: "Edge coloring (5 colors)".into(),
        label: "color".into(),
        ..PlotOptions::default()
    };
    chromaflow::output::save_edges_png(
        &small,
        &edges,
        &colors,
        &eo,
        &dir.join("chromaflow_edges.png"),
    )?;
    Ok(())
}

/// Timing of a 2048x2048 render of a ~1M-triangle mesh (run in release with `--ignored`).
#[test]
#[ignore]
fn perf_million_triangles() -> Result<()> {
    let mesh = grid(708, 1.0, 1.0, false);
    let v: Vec<f64> = mesh
        .points
        .iter()
        .map(|p| (7.0 * p[0]).sin() + p[1])
        .collect();
    let cells: Vec<f64> = (0..mesh.num_elements()).map(|e| e as f64).collect();
    let o = opts(2048, 2048);
    for (name, field) in [("vertex", Field::Vertex(&v)), ("cell", Field::Cell(&cells))] {
        let t = std::time::Instant::now();
        let img = render(&mesh, field, &o)?;
        let r = t.elapsed();
        let t = std::time::Instant::now();
        let path = std::env::temp_dir().join(format!("chromaflow_perf_{name}.png"));
        chromaflow::output::write_png_atomic(&img, &path)?;
        println!(
            "{} triangles, {name}: render {:.3} s, png write {:.3} s",
            mesh.num_elements(),
            r.as_secs_f64(),
            t.elapsed().as_secs_f64()
        );
    }
    Ok(())
}
