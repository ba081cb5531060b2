//! Where a mesh comes from, for every solver and command: a mesh file, a built-in spec, or a
//! generated rectangle. [`MeshSource::build`] gives the [`Mesh`], which
//! [`crate::order::prepare`] then colors and orders.

use std::path::{Path, PathBuf};

use super::generate;
use super::model::Mesh;
use crate::error::Result;

/// Where a mesh comes from.
#[derive(Clone, Debug, PartialEq)]
pub enum MeshSource {
    /// A mesh file (format chosen by extension), read and validated by [`super::load`].
    File(PathBuf),
    /// A built-in spec such as `cross:50` or `rect:2000@3` ([`generate::BUILTIN_FORMS`]); a
    /// seeded form names its own seed.
    Builtin(String),
    /// A Delaunay rectangle [x0, x1] x [y0, y1] with about `n` triangles (tags 1 bottom,
    /// 2 right, 3 top, 4 left), generated with the seed given to [`MeshSource::build`].
    Rectangle {
        x0: f64,
        x1: f64,
        y0: f64,
        y1: f64,
        n: usize,
    },
}

impl MeshSource {
    /// A mesh from a command-line (or case-file) argument: a file when `arg` names an existing
    /// file or looks like a path (has an extension or a path separator), otherwise a built-in
    /// spec.
    pub fn from_arg(arg: &str) -> MeshSource {
        let path = Path::new(arg);
        let looks_like_path = path.extension().is_some() || arg.contains(['/', '\\']);
        if path.is_file() || looks_like_path {
            MeshSource::File(path.to_path_buf())
        } else {
            MeshSource::Builtin(arg.to_string())
        }
    }

    /// True for [`MeshSource::File`].
    pub fn is_file(&self) -> bool {
        matches!(self, MeshSource::File(_))
    }

    /// Read or generate the mesh. `seed` seeds the generators of sources that do not carry
    /// their own ([`MeshSource::Rectangle`]); files and built-in specs ignore it.
    pub fn build(&self, seed: u64) -> Result<Mesh> {
        match self {
            MeshSource::File(path) => super::load(path),
            MeshSource::Builtin(spec) => generate::builtin(spec),
            MeshSource::Rectangle { x0, x1, y0, y1, n } => {
                generate::rectangle(*x0, *x1, *y0, *y1, *n, seed)
            }
        }
    }
}

impl std::fmt::Display for MeshSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MeshSource::File(path) => write!(f, "{}", path.display()),
            MeshSource::Builtin(spec) => f.write_str(spec),
            MeshSource::Rectangle { x0, x1, y0, y1, n } => {
                write!(
                    f,
                    "rectangle [{x0}, {x1}] x [{y0}, {y1}], about {n} triangles"
                )
            }
        }
    }
}
