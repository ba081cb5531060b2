//! Two-layer shallow water from Rust: the built-in internal dam break (Test 1) on a coarse
//! criss-cross mesh, advanced on the default adapter, with a snapshot written to a temporary
//! directory. The checks are the physics a user would look at first: each layer's mass is
//! conserved and the run reaches the requested time.

use chromaflow::error::{Error, Result};
use chromaflow::mesh::MeshSource;
use chromaflow::runtime::Runtime;
use chromaflow::solver::swe::case::Case;
use chromaflow::solver::swe::driver::Simulation;
use chromaflow::solver::swe::gpu::FluxLayout;

fn main() -> Result<()> {
    let dir = tempfile::tempdir().map_err(|e| Error::io("temporary directory", e))?;
    let mut case = Case::builtin("test1")?;
    case.mesh = MeshSource::Builtin("cross:12".into());
    case.output.dir = dir.path().to_path_buf();
    let rt = Runtime::wgpu()?;
    let mut sim = Simulation::new(&case, &rt, FluxLayout::default())?;
    let m0 = sim.masses()?;
    let control = sim.advance_to(0.05)?;
    let m = sim.masses()?;
    let files = sim.write_snapshot(1)?;
    println!(
        "{} on {}: t = {} after {} steps; mass drift {:.1e} / {:.1e}; wrote {} files",
        case.name,
        rt.name(),
        control.t,
        control.steps,
        (m[0] - m0[0]).abs() / m0[0],
        (m[1] - m0[1]).abs() / m0[1],
        files.len()
    );
    for k in 0..2 {
        if (m[k] - m0[k]).abs() > 1e-5 * m0[k] {
            return Err(Error::Invalid(format!(
                "layer {k} lost mass: {} -> {}",
                m0[k], m[k]
            )));
        }
    }
    if (control.t as f64 - 0.05).abs() > 1e-6 || files.iter().any(|f| !f.exists()) {
        return Err(Error::Invalid(
            "the run did not reach t = 0.05 with its snapshot".into(),
        ));
    }
    Ok(())
}

#[test]
fn example_runs() {
    main().unwrap();
}
