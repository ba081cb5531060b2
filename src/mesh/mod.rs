//! Mesh model, topology, geometry, validation, readers, writers, generators and the one
//! [`MeshSource`] (file, built-in spec or generated rectangle) that every solver loads from.

pub mod generate;
pub mod generate3d;
pub mod geometry;
pub mod io;
pub mod model;
mod overlap;
pub mod quality;
pub mod source;
pub mod topology;
pub mod validate;

pub use geometry::Geometry2d;
pub use model::{BoundaryFacet, ElementKind, FileNumbering, Mesh, NumberingScheme};
pub use source::MeshSource;
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

/// A mesh from a command-line argument ([`MeshSource::from_arg`]): a file when `arg` names an
/// existing file or looks like a path (has an extension or a path separator), otherwise a
/// builtin spec such as `rect:5000` (see [`generate::BUILTIN_FORMS`]).
pub fn load_or_builtin(arg: &str) -> Result<Mesh> {
    MeshSource::from_arg(arg).build(generate::DEFAULT_SEED)
}
