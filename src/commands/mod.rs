//! Implementations of the CLI subcommands.

pub mod devices;
pub mod mesh;
pub mod progress;
