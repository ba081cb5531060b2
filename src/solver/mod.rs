//! Solvers, one folder per workload.

pub mod dg;
pub mod gradient;
pub mod smooth;
pub mod swe;
