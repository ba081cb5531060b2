//! Solvers, one folder per workload.

pub mod swe;
