//! Mesh file input and output: readers for Gmsh `.msh` (2.2, 4.0 and 4.1, ASCII and binary),
//! Medit `.mesh`/`.meshb` and VTK `.vtu`, a Gmsh 4.1 ASCII writer and a VTK `.vtu` writer; and
//! graphs for vertex coloring (Matrix Market, DIMACS) through the same reader machinery.
//! Readers return the mesh as the file gives it; [`crate::mesh::load`] adds validation.
//!
//! Every write is atomic: the data go to a temporary file in the target's directory, which is
//! then renamed over the target, so a crash never leaves a half-written file behind.

mod graph;
mod medit;
mod msh;
mod msh_write;
mod vtu;
mod vtu_read;

use std::path::Path;

use crate::error::{Error, Result};
use crate::mesh::model::Mesh;

pub use graph::{adjacency_from_edges, parse_graph, read_graph, write_graph};
pub use medit::parse_medit;
pub use msh::{parse_msh, read_msh};
pub use msh_write::write_msh41;
pub use vtu::{
    lagrange_triangle_nodes, write_vtu, write_vtu_lagrange_triangles, VTK_LAGRANGE_TRIANGLE,
};
pub use vtu_read::{parse_vtu, parse_vtu_grid, VtuGrid};

/// Read a `.vtu` file whole, high-order nodes and data arrays included (see [`VtuGrid`]).
pub fn read_vtu_grid(path: &Path) -> Result<VtuGrid> {
    let data = crate::files::read_limited(path, crate::files::MAX_INPUT_BYTES)?;
    parse_vtu_grid(path, &data)
}

/// File extensions [`read_mesh`] understands.
pub const SUPPORTED_EXTENSIONS: &[&str] = &["msh", "mesh", "meshb", "vtu"];

/// Error when reading the mesh file at `path` is estimated to need more host memory than
/// there is ([`crate::memory::FILE_BYTES_FACTOR`] times its size).
pub(crate) fn check_memory(path: &Path) -> Result<()> {
    let Ok(meta) = std::fs::metadata(path) else {
        return Ok(()); // the read names the file and the error
    };
    let what = format!(
        "mesh file {} ({})",
        path.display(),
        crate::memory::gib(meta.len())
    );
    crate::memory::check(
        &what,
        meta.len().saturating_mul(crate::memory::FILE_BYTES_FACTOR),
    )
}

/// Read a mesh file in any supported format (see [`parse_mesh`]). Unvalidated.
pub fn read_mesh(path: &Path) -> Result<Mesh> {
    check_memory(path)?;
    let data = crate::files::read_limited(path, crate::files::MAX_INPUT_BYTES)?;
    parse_mesh(path, &data)
}

/// Parse mesh bytes, recognising the format by content (files are often misnamed) and by the
/// extension of `path` when the content says nothing, so a broken file still gets its own
/// reader's error. Unvalidated.
pub fn parse_mesh(path: &Path, data: &[u8]) -> Result<Mesh> {
    let data = data.strip_prefix(b"\xef\xbb\xbf").unwrap_or(data);
    let start = data
        .iter()
        .position(|c| !c.is_ascii_whitespace())
        .unwrap_or(0);
    let head = &data[start..];
    let ext = path
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    if head.starts_with(b"$MeshFormat") {
        parse_msh(path, data)
    } else if head.starts_with(b"<?xml") || head.starts_with(b"<VTKFile") {
        parse_vtu(path, data)
    } else if medit::looks_like_medit(data) {
        parse_medit(path, data)
    } else {
        match ext.as_str() {
            "msh" => parse_msh(path, data),
            "mesh" | "meshb" => parse_medit(path, data),
            "vtu" => parse_vtu(path, data),
            _ => Err(Error::parse(
                path,
                0,
                format!(
                    "unsupported mesh format '{}': the content is none of {}",
                    if ext.is_empty() {
                        String::from("(no extension)")
                    } else {
                        format!(".{ext}")
                    },
                    SUPPORTED_EXTENSIONS
                        .iter()
                        .map(|e| format!(".{e}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            )),
        }
    }
}
