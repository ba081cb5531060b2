//! Coloring for race-free GPU dispatch.
//!
//! * Face (edge) coloring of Giuliani & Krivodonova with the minimal number of colors, plus
//!   the plain greedy baseline ([`faces`]); one GPU pass per color then lets each thread own
//!   a face and write both neighbouring elements without atomics.
//! * GK's 6-color mapping for triangle meshes with one level of isotropic refinement (hanging
//!   nodes), and the coarsening that restores the parent colors ([`nonconforming`]).
//! * Sequential greedy vertex coloring, natural, largest-first and smallest-last orders
//!   ([`vertices`]), for per-vertex-color passes such as vertex smoothing, and the GPU
//!   speculative vertex coloring ([`gpu_vertices`]) with its color reduction ([`reduce`]).
//! * The timing of both vertex colorings for the benchmarks ([`bench`](mod@bench)).

pub mod bench;
pub mod faces;
pub mod gpu_vertices;
pub mod nonconforming;
pub mod reduce;
pub mod vertices;

pub use faces::{
    check_face_coloring, color_faces, face_buffer_bytes, greedy_face_coloring, ColoringStats,
    FaceColoring, FaceColoringOptions, MAX_COLORS, UNCOLORED,
};
pub use nonconforming::{
    check_nonconforming_coloring, coarsen_colors, map_child_color, refine, refine_colors,
    refine_uniformly, NcFaceKind, NonconformingMesh,
};
pub use vertices::{check_vertex_coloring, color_vertices, VertexColoring, VertexOrder};
