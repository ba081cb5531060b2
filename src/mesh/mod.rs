//! Mesh model, topology, geometry, validation, readers, writers and generators.

pub mod generate;
pub mod generate3d;
pub mod geometry;
pub mod io;
pub mod model;
pub mod topology;
pub mod validate;

pub use geometry::Geometry2d;
pub use model::{BoundaryFacet, ElementKind, Mesh};
pub use topology::{Csr, Topology, NO_ELEMENT, UNTAGGED};
