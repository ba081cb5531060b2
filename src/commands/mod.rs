//! Implementations of the CLI subcommands.

pub mod bench_backends;
pub mod bench_swe;
pub mod color;
pub mod devices;
pub mod dg;
pub mod mesh;
pub mod parity;
pub mod progress;
pub mod smooth;
pub mod swe;
