//! Implementations of the CLI subcommands.

pub mod color;
pub mod devices;
pub mod mesh;
pub mod progress;
