//! Modal discontinuous Galerkin solver for the 2D Euler equations on triangles
//! (Giuliani–Krivodonova DG-GPU layout, issue 5).
//!
//! U_t + div F(U) = 0 is multiplied by the orthonormal Dubiner basis phi_k ([`basis`]) and
//! integrated by parts on each element:
//!
//!   d c_{i,k} / dt = (1/det J_i) ( int F(U_i) . grad phi_k dx - sum_edges int phi_k F*(U_i, U_j) . n dl ),
//!
//! with quadrature exact to degree 2p on elements and 2p + 1 on edges ([`quadrature`]), a
//! Rusanov or HLLC numerical flux ([`euler`]), ghost states for boundaries ([`mesh`]), SSP
//! Runge–Kutta in time ([`rk`]) and a vertex-based slope limiter with Zhang–Shu positivity
//! ([`cpu::Operator::limit`]). [`cpu`] is the f64 reference; [`gpu`] runs the same scheme in
//! wgpu kernels (`shaders/dg_*.wgsl`): DOFs `c[eq][k][element]` (coalesced per element), one
//! thread per element for the volume term, one thread per edge and one dispatch per edge color
//! for the surface term, all steps recorded many per submit with the CFL dt reduced on the GPU.
//! [`simulation`] runs a [`Case`] on it with outputs ([`Simulation`]); [`bench`](mod@bench)
//! times it.

pub mod amr;
pub mod basis;
pub mod bench;
pub mod case;
pub mod cpu;
pub mod euler;
pub mod gpu;
pub mod mesh;
pub mod plot;
pub mod quadrature;
pub mod restart;
pub mod rk;
pub mod simulation;

pub use basis::BasisTables;
pub use case::{Case, StateFn};
pub use cpu::Operator;
pub use euler::NumericalFlux;
pub use mesh::{BoundaryKind, DgMesh};
pub use simulation::{
    AdaptationWall, OutputTimes, Quantity, RunSummary, SetupTimes, Simulation, SimulationOptions,
    SnapshotOptions,
};
