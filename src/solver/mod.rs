//! Solvers, one folder per workload.
