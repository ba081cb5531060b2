//! VTK XML UnstructuredGrid (`.vtu`) writer, readable by ParaView and VisIt.
//!
//! Arrays are written inline in VTK's "binary" encoding: base64 of a little-endian UInt64 byte
//! count followed by the little-endian values (`header_type="UInt64"`), which keeps full f64
//! precision and is about a third of the size of ASCII. Cell types come from
//! [`ElementKind::vtk_type`](crate::mesh::model::ElementKind::vtk_type); Gmsh and VTK share the
//! vertex order of all linear cells, so connectivity is written as is. The element region tags
//! are always written as the Int32 cell array `region_tag`.

use std::io::Write;

use base64::{engine::general_purpose::STANDARD, Engine};
use std::path::Path;

use crate::error::{Error, Result};
use crate::mesh::model::Mesh;

/// Escape a string for an XML attribute value.
fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// One inline binary DataArray: the UInt64 byte-count header and the payload, base64 together.
fn data_array(
    w: &mut dyn Write,
    vtk_type: &str,
    name: Option<&str>,
    components: usize,
    payload: &[u8],
) -> std::io::Result<()> {
    let mut bytes = Vec::with_capacity(8 + payload.len());
    bytes.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    bytes.extend_from_slice(payload);
    write!(w, "        <DataArray type=\"{vtk_type}\"")?;
    if let Some(n) = name {
        write!(w, " Name=\"{}\"", xml_escape(n))?;
    }
    if components > 1 {
        write!(w, " NumberOfComponents=\"{components}\"")?;
    }
    writeln!(w, " format=\"binary\">")?;
    writeln!(w, "          {}", STANDARD.encode(&bytes))?;
    writeln!(w, "        </DataArray>")
}

fn f64_bytes(v: impl Iterator<Item = f64>) -> Vec<u8> {
    v.flat_map(f64::to_le_bytes).collect()
}

/// Write `mesh` with optional per-point and per-cell scalar fields as a `.vtu` file
/// (atomically). Every field must have one value per point (per element).
pub fn write_vtu(
    mesh: &Mesh,
    path: &Path,
    point_fields: &[(&str, &[f64])],
    cell_fields: &[(&str, &[f64])],
) -> Result<()> {
    let (np, ne) = (mesh.num_points(), mesh.num_elements());
    check_lengths(path, np, ne, point_fields, cell_fields)?;
    if mesh.offsets.len() != ne + 1 || mesh.region_tags.len() != ne {
        return Err(Error::Invalid(format!(
            "cannot write {}: inconsistent mesh arrays",
            path.display()
        )));
    }
    if let Some(&v) = mesh.connectivity.iter().find(|&&v| v as usize >= np) {
        return Err(Error::Invalid(format!(
            "cannot write {}: vertex index {v} out of range ({np} points)",
            path.display()
        )));
    }
    let tags: Vec<u8> = mesh
        .region_tags
        .iter()
        .flat_map(|t| t.to_le_bytes())
        .collect();
    let grid = Grid {
        points: &f64_bytes(mesh.points.iter().flat_map(|p| p.iter().copied())),
        connectivity: &mesh.connectivity,
        offsets: &mesh.offsets[1..],
        types: &mesh.kinds.iter().map(|k| k.vtk_type()).collect::<Vec<_>>(),
        region_tags: Some(&tags),
    };
    write_grid(path, np, &grid, point_fields, cell_fields)
}

/// VTK cell type of arbitrary-order Lagrange triangles.
pub const VTK_LAGRANGE_TRIANGLE: u8 = 69;

/// The nodes of a VTK Lagrange triangle of `degree` >= 1 in VTK's order, as lattice indices
/// `(i, j)`: node `v0 + (i (v1 - v0) + j (v2 - v0)) / degree`. The order (vtkLagrangeTriangle)
/// is the three corners, then the `degree - 1` nodes of each edge v0->v1, v1->v2, v2->v0 in
/// its direction, then the interior nodes as a Lagrange triangle of degree `degree - 3` in the
/// same order, recursively (one centre node when that degree is 0).
pub fn lagrange_triangle_nodes(degree: usize) -> Vec<(usize, usize)> {
    fn push(out: &mut Vec<(usize, usize)>, n: usize, o: usize) {
        if n == 0 {
            out.push((o, o));
            return;
        }
        out.extend([(o, o), (o + n, o), (o, o + n)]);
        out.extend((1..n).map(|k| (o + k, o)));
        out.extend((1..n).map(|k| (o + n - k, o + k)));
        out.extend((1..n).map(|k| (o, o + n - k)));
        if n >= 3 {
            push(out, n - 3, o + 1);
        }
    }
    let mut out = Vec::with_capacity((degree + 1) * (degree + 2) / 2);
    push(&mut out, degree.max(1), 0);
    out
}

/// Write Lagrange triangles of `degree` (>= 1) as a `.vtu` file (atomically): `nodes` holds
/// each cell's `(degree + 1)(degree + 2) / 2` points in [`lagrange_triangle_nodes`] order, cell
/// after cell (points are not shared, so fields may jump between cells, as a DG solution
/// does); every point field has one value per node, every cell field one per cell.
pub fn write_vtu_lagrange_triangles(
    path: &Path,
    degree: usize,
    nodes: &[[f64; 2]],
    point_fields: &[(&str, &[f64])],
    cell_fields: &[(&str, &[f64])],
) -> Result<()> {
    let per = (degree + 1) * (degree + 2) / 2;
    if degree == 0 || nodes.len() % per != 0 {
        return Err(Error::Invalid(format!(
            "cannot write {}: {} nodes are not whole Lagrange triangles of degree {degree} \
             ({per} nodes each, degree >= 1)",
            path.display(),
            nodes.len()
        )));
    }
    let cells = nodes.len() / per;
    check_lengths(path, nodes.len(), cells, point_fields, cell_fields)?;
    let count = u32::try_from(nodes.len()).map_err(|_| {
        Error::Invalid(format!(
            "cannot write {}: {} nodes exceed the 2^32 point indices of the writer",
            path.display(),
            nodes.len()
        ))
    })?;
    let connectivity: Vec<u32> = (0..count).collect();
    let offsets: Vec<u32> = (1..=cells).map(|c| (c * per) as u32).collect();
    let grid = Grid {
        points: &f64_bytes(nodes.iter().flat_map(|p| [p[0], p[1], 0.0])),
        connectivity: &connectivity,
        offsets: &offsets,
        types: &vec![VTK_LAGRANGE_TRIANGLE; cells],
        region_tags: None,
    };
    write_grid(path, nodes.len(), &grid, point_fields, cell_fields)
}

/// Error unless every field has one value per point (per cell).
fn check_lengths(
    path: &Path,
    np: usize,
    ne: usize,
    point_fields: &[(&str, &[f64])],
    cell_fields: &[(&str, &[f64])],
) -> Result<()> {
    for (name, f) in point_fields {
        if f.len() != np {
            return Err(Error::Invalid(format!(
                "cannot write {}: point field '{name}' has {} values but the mesh has {np} points",
                path.display(),
                f.len()
            )));
        }
    }
    for (name, f) in cell_fields {
        if f.len() != ne {
            return Err(Error::Invalid(format!(
                "cannot write {}: cell field '{name}' has {} values but the mesh has {ne} cells",
                path.display(),
                f.len()
            )));
        }
    }
    Ok(())
}

/// The arrays of an unstructured grid: point coordinates (3 x f64 little-endian bytes per
/// point), connectivity, end offsets and VTK types per cell, and optional Int32 region tags
/// (little-endian bytes).
struct Grid<'a> {
    points: &'a [u8],
    connectivity: &'a [u32],
    offsets: &'a [u32],
    types: &'a [u8],
    region_tags: Option<&'a [u8]>,
}

fn write_grid(
    path: &Path,
    np: usize,
    grid: &Grid,
    point_fields: &[(&str, &[f64])],
    cell_fields: &[(&str, &[f64])],
) -> Result<()> {
    let ne = grid.types.len();
    crate::files::atomic_write(path, |w| {
        writeln!(w, "<?xml version=\"1.0\"?>")?;
        writeln!(
            w,
            "<VTKFile type=\"UnstructuredGrid\" version=\"1.0\" byte_order=\"LittleEndian\" header_type=\"UInt64\">"
        )?;
        writeln!(w, "  <UnstructuredGrid>")?;
        writeln!(
            w,
            "    <Piece NumberOfPoints=\"{np}\" NumberOfCells=\"{ne}\">"
        )?;
        writeln!(w, "      <PointData>")?;
        for (name, f) in point_fields {
            data_array(w, "Float64", Some(name), 1, &f64_bytes(f.iter().copied()))?;
        }
        writeln!(w, "      </PointData>")?;
        writeln!(w, "      <CellData>")?;
        if let Some(tags) = grid.region_tags {
            data_array(w, "Int32", Some("region_tag"), 1, tags)?;
        }
        for (name, f) in cell_fields {
            data_array(w, "Float64", Some(name), 1, &f64_bytes(f.iter().copied()))?;
        }
        writeln!(w, "      </CellData>")?;
        writeln!(w, "      <Points>")?;
        data_array(w, "Float64", Some("Points"), 3, grid.points)?;
        writeln!(w, "      </Points>")?;
        writeln!(w, "      <Cells>")?;
        let int64 =
            |v: &[u32]| -> Vec<u8> { v.iter().flat_map(|&x| i64::from(x).to_le_bytes()).collect() };
        data_array(
            w,
            "Int64",
            Some("connectivity"),
            1,
            &int64(grid.connectivity),
        )?;
        data_array(w, "Int64", Some("offsets"), 1, &int64(grid.offsets))?;
        data_array(w, "UInt8", Some("types"), 1, grid.types)?;
        writeln!(w, "      </Cells>")?;
        writeln!(w, "    </Piece>")?;
        writeln!(w, "  </UnstructuredGrid>")?;
        writeln!(w, "</VTKFile>")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lagrange_nodes_follow_vtk_order() {
        // VTK's cubic Lagrange triangle (as vtkLagrangeTriangle and PyVista list its points):
        // corners, edge 0-1, edge 1-2, edge 2-0, then the centre.
        let cubic = [
            (0, 0),
            (3, 0),
            (0, 3),
            (1, 0),
            (2, 0),
            (2, 1),
            (1, 2),
            (0, 2),
            (0, 1),
            (1, 1),
        ];
        assert_eq!(lagrange_triangle_nodes(3), cubic);
        // Quartic: the three interior nodes form a linear triangle in the same order.
        let quartic = lagrange_triangle_nodes(4);
        assert_eq!(&quartic[12..], &[(1, 1), (2, 1), (1, 2)]);
        assert_eq!(lagrange_triangle_nodes(1), [(0, 0), (1, 0), (0, 1)]);
        for p in 1..=6 {
            let mut n = lagrange_triangle_nodes(p);
            assert_eq!(n.len(), (p + 1) * (p + 2) / 2);
            n.sort_unstable();
            n.dedup();
            assert_eq!(n.len(), (p + 1) * (p + 2) / 2, "degree {p}: repeated nodes");
            assert!(n.iter().all(|&(i, j)| i + j <= p));
        }
    }
}
