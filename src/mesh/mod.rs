//! Mesh model, topology, geometry, validation, readers, writers and generators.

pub mod generate;
pub mod generate3d;
pub mod geometry;
pub mod io;
pub mod model;
pub mod quality;
pub mod topology;
pub mod validate;

pub use geometry::Geometry2d;
pub use model::{BoundaryFacet, ElementKind, Mesh};
pub use topology::{Csr, Topology, NO_ELEMENT, UNTAGGED};

pub use generate::builtin;
pub use io::{read_mesh, read_msh, write_msh41, write_vtu};
pub use validate::{validate, ValidationReport};

use std::path::Path;

use crate::error::Result;

/// Read a mesh file (format chosen by extension) and validate it; validation errors name the
/// file.
pub fn load(path: &Path) -> Result<Mesh> {
    let mut mesh = io::read_mesh(path)?;
    let report = validate::validate(&mut mesh).map_err(|e| e.with_origin(path))?;
    log::info!(
        "loaded {}: {}D, {} vertices, {} elements, {} boundary faces",
        path.display(),
        report.dim,
        report.num_points,
        report.num_elements,
        report.num_boundary_faces
    );
    Ok(mesh)
}

/// A mesh from a command-line argument: a file when `arg` names an existing file or looks like
/// a path (has an extension or a path separator), otherwise a builtin spec such as `rect:5000`
/// (see [`generate::BUILTIN_FORMS`]).
pub fn load_or_builtin(arg: &str) -> Result<Mesh> {
    let path = Path::new(arg);
    let looks_like_path = path.extension().is_some() || arg.contains(['/', '\\']);
    if path.is_file() || looks_like_path {
        load(path)
    } else {
        generate::builtin(arg)
    }
}
