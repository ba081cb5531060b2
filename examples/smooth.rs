//! Anisotropic vertex smoothing from Rust: a small Delaunay mesh of the unit square smoothed to
//! the built-in shock metric for a few dozen iterations on the default adapter, with the
//! outputs written to a temporary directory. The checks are what the smoothing promises: the
//! mesh stays valid (no triangle inverted or collapsed, which `Smoothing::run` also refuses)
//! and the metric quality does not drop.
//!
//! `cargo run --example smooth`; `cargo test --example smooth` runs it as a test.

use chromaflow::error::{Error, Result};
use chromaflow::mesh::builtin;
use chromaflow::runtime::Runtime;
use chromaflow::solver::smooth::cpu::{min_shape, not_above};
use chromaflow::solver::smooth::{MetricSpec, Smoothing, SmoothingOptions};

/// Iterations, recorded in runs of [`EVERY`].
const ITERATIONS: usize = 40;
const EVERY: usize = 10;

fn main() -> Result<()> {
    let mesh = builtin("rect:1500")?;
    let metric = MetricSpec::resolve(Some("shock"), None, &mesh)?;
    let options = SmoothingOptions {
        texture_size: 128,
        ..SmoothingOptions::default()
    };
    let rt = Runtime::wgpu()?;
    let mut sm = Smoothing::new(mesh, &metric, &options, &rt)?.with_name("rect:1500");
    sm.run_recorded(ITERATIONS, EVERY, |r| {
        println!(
            "iteration {:3}: min quality {:.4}, mean {:.4}, min shape {:.3e}",
            r.iteration, r.min_quality, r.mean_quality, r.min_shape
        );
        Ok(())
    })?;
    let (before, after) = (sm.quality_before().clone(), sm.quality());
    println!(
        "{}: {} vertices, {} triangles, {} colors on {}; metric {}: mean quality {:.4} -> {:.4}, \
         min {:.4} -> {:.4}",
        sm.name(),
        sm.mesh().num_points(),
        sm.topology().triangles.len(),
        sm.schedule().num_colors(),
        sm.device_name(),
        sm.metric_name(),
        before.mean,
        after.mean,
        before.min,
        after.min
    );
    let dir = tempfile::tempdir().map_err(|e| Error::io(std::env::temp_dir(), e))?;
    let files = sm.write_outputs(dir.path())?;
    println!("wrote {} files to {}", files.len(), dir.path().display());

    let shape = min_shape(sm.positions(), &sm.topology().triangles);
    if not_above(shape, 0.0) {
        return Err(Error::Invalid(format!(
            "the smoothed mesh is invalid (min 2 area / sum l^2 = {shape:e})"
        )));
    }
    if sm.iterations() != ITERATIONS {
        return Err(Error::Invalid(format!(
            "{} iterations run, expected {ITERATIONS}",
            sm.iterations()
        )));
    }
    let held = after.mean >= before.mean && after.min >= before.min;
    if !held {
        return Err(Error::Invalid(format!(
            "the quality dropped: mean {} -> {}, min {} -> {}",
            before.mean, after.mean, before.min, after.min
        )));
    }
    Ok(())
}

#[test]
fn example_runs() {
    main().unwrap();
}
