//! Output: PNG snapshots of fields on 2D meshes (colormaps, colorbar, title; per mesh cell or
//! vertex, or per pixel of a function on each triangle), CSV time series, JSON statistics and
//! ParaView collections (`.pvd`) of VTU snapshots.
//!
//! Every file is written atomically ([`crate::files::atomic_write`]): the bytes go to a temporary file in the
//! destination directory, which is flushed, fsynced and then renamed over the destination. A
//! viewer polling a snapshot, or a crash mid-write, therefore never sees a truncated file; the
//! only exception is [`csv::CsvWriter`], which appends row by row on purpose so that a crashed
//! run keeps the rows it produced.

pub mod colormap;
pub mod csv;
pub mod font;
pub mod pixels;
pub mod png;
pub mod pvd;
pub mod raster;
mod tables;

pub use colormap::{categorical, Colormap, CATEGORICAL};
pub use csv::{format_number, write_json_atomic, CsvWriter};
pub use pixels::{render_triangle_field, save_triangle_field_png, TriangleField};
pub use png::{
    render, render_edges, render_with_stats, resolve_range, save_edges_png, save_field_png,
    save_field_png_with_mesh, topology_edges, write_png_atomic, Field, PixelTransform, PlotOptions,
    RenderStats, NAN_COLOR,
};
pub use pvd::{add_to_collection, read_collection, CollectionEntry};
