//! chromaflow: a portable GPU solver suite for unstructured meshes.
//!
//! The host builds colored, reordered edge (face) lists; the GPU runs one compute dispatch per
//! color, so each thread owns one edge and updates both neighbouring cells with plain loads and
//! stores (no atomics, no per-edge scatter buffers).

pub mod checkpoint;
pub mod color;
pub mod conformance;
pub mod error;
pub mod files;
pub mod interrupt;
pub mod memory;
pub mod mesh;
pub mod order;
pub mod output;
pub mod parallel;
pub mod raster;
pub mod runtime;
pub mod solver;
