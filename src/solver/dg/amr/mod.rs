//! h-adaptive refinement for the DG solver (Giuliani & Krivodonova 2019, "GK19"): isotropic
//! refinement of triangles into four, coarsening of sibling clusters, the 2:1 rule between
//! face neighbours, L2 projection of the solution, and the nonconforming 6-coloring of the
//! faces so the surface integral stays a race-free colored scatter.
//!
//! [`tree`] holds the element and edge trees (the f64 reference of every mesh operation),
//! [`projection`] the parent/child L2 projection weights, [`mod@indicator`] the refinement indicator
//! (GK19 eq. 10) and the flags it gives, [`driver`] one adaptation of a running solution,
//! [`reorder`] the Morton reorder of the slots that restores memory locality.

pub mod driver;
pub mod gpu;
pub mod indicator;
pub mod locality;
pub mod projection;
pub mod reorder;
pub mod tree;

pub use driver::{Adaptivity, AmrOptions, AmrStats};
pub use indicator::{flags, gather, indicator, scatter, IndicatorField};
pub use projection::Projection;
pub use reorder::ReorderPolicy;
pub use tree::{AdaptCounts, AdaptiveMesh, Compaction, Face, NONE};

#[cfg(test)]
mod tests;
