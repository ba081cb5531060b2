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
        let tags: Vec<u8> = mesh
            .region_tags
            .iter()
            .flat_map(|t| t.to_le_bytes())
            .collect();
        data_array(w, "Int32", Some("region_tag"), 1, &tags)?;
        for (name, f) in cell_fields {
            data_array(w, "Float64", Some(name), 1, &f64_bytes(f.iter().copied()))?;
        }
        writeln!(w, "      </CellData>")?;
        writeln!(w, "      <Points>")?;
        let pts = f64_bytes(mesh.points.iter().flat_map(|p| p.iter().copied()));
        data_array(w, "Float64", Some("Points"), 3, &pts)?;
        writeln!(w, "      </Points>")?;
        writeln!(w, "      <Cells>")?;
        let conn: Vec<u8> = mesh
            .connectivity
            .iter()
            .flat_map(|&v| i64::from(v).to_le_bytes())
            .collect();
        data_array(w, "Int64", Some("connectivity"), 1, &conn)?;
        let offs: Vec<u8> = mesh.offsets[1..]
            .iter()
            .flat_map(|&o| i64::from(o).to_le_bytes())
            .collect();
        data_array(w, "Int64", Some("offsets"), 1, &offs)?;
        let types: Vec<u8> = mesh.kinds.iter().map(|k| k.vtk_type()).collect();
        data_array(w, "UInt8", Some("types"), 1, &types)?;
        writeln!(w, "      </Cells>")?;
        writeln!(w, "    </Piece>")?;
        writeln!(w, "  </UnstructuredGrid>")?;
        writeln!(w, "</VTKFile>")
    })
}
