//! Mesh file input and output: Gmsh `.msh` readers (2.2 and 4.1, ASCII and binary), a Gmsh 4.1
//! ASCII writer and a VTK `.vtu` writer. Readers return the mesh as the file gives it;
//! [`crate::mesh::load`] adds validation.
//!
//! Every write is atomic: the data go to a temporary file in the target's directory, which is
//! then renamed over the target, so a crash never leaves a half-written file behind.

mod msh;
mod msh_write;
mod vtu;

use std::path::Path;

use crate::error::{Error, Result};
use crate::mesh::model::Mesh;

pub use msh::{parse_msh, read_msh};
pub use msh_write::write_msh41;
pub use vtu::write_vtu;

/// File extensions [`read_mesh`] understands.
pub const SUPPORTED_EXTENSIONS: &[&str] = &["msh"];

/// Read a mesh file, choosing the reader by extension (only `.msh` for now). Unvalidated.
pub fn read_mesh(path: &Path) -> Result<Mesh> {
    let ext = path
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    match ext.as_str() {
        "msh" => read_msh(path),
        _ => Err(Error::parse(
            path,
            0,
            format!(
                "unsupported mesh format '{}' (supported: {})",
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
