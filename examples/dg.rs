//! The isentropic vortex with the DG solver in a few lines: advect it a short while on a small
//! mesh (p = 1), print the L2 density error and the conserved totals, write one snapshot, and
//! fail unless mass is conserved and the error stays small (the vortex is an exact solution).
//!
//! `cargo run --example dg`; `cargo test --example dg` runs it as a test.

use chromaflow::error::{Error, Result};
use chromaflow::runtime::Runtime;
use chromaflow::solver::dg::{Case, Quantity, Simulation, SimulationOptions, SnapshotOptions};

/// Simulated time: about 35 steps at p = 1, a few seconds on a software Vulkan device.
const T_END: f64 = 0.5;
/// Largest relative mass change; the exact boundary states carry a flux of f32 round-off.
const MASS_TOL: f64 = 1e-5;
/// Largest L2 density error over the 10 x 10 domain at this resolution (it is 0.07).
const ERROR_TOL: f64 = 0.15;

fn main() -> Result<()> {
    let mut case = Case::vortex(300);
    case.order = 1;
    let rt = Runtime::wgpu()?;
    let mut sim = Simulation::new(&case, &rt, &SimulationOptions::default())?;
    let mass0 = sim.totals()?[0];
    sim.advance_to(T_END)?;
    let [mass, mx, my, energy] = sim.totals()?;
    let error = sim.l2_density_error()?.unwrap_or(f64::NAN);
    println!(
        "{} on {}: {} triangles, p = {}, t = {} after {} steps",
        case.name,
        sim.device_name(),
        sim.mesh().num_elements,
        case.order,
        sim.time(),
        sim.steps()
    );
    println!("L2 density error {error:.3e}");
    let drift = (mass - mass0).abs() / mass0;
    println!(
        "totals: mass {mass} (relative drift {drift:.1e}), momentum ({mx}, {my}), energy {energy}"
    );
    let dir = tempfile::tempdir().map_err(|e| Error::io(std::env::temp_dir(), e))?;
    let snapshot = SnapshotOptions {
        fields: vec![Quantity::Density, Quantity::Mach],
        vtu: true,
        contours: 10,
    };
    let files = sim.write_snapshot(dir.path(), 0, &snapshot)?;
    println!("wrote {} files to {}", files.len(), dir.path().display());
    if drift >= MASS_TOL {
        return Err(Error::Invalid(format!(
            "mass drifted by {drift:e} (relative), more than {MASS_TOL:e}"
        )));
    }
    if error.is_nan() || error >= ERROR_TOL {
        return Err(Error::Invalid(format!(
            "L2 density error {error:e} is not below {ERROR_TOL}"
        )));
    }
    Ok(())
}

#[test]
fn example_runs() {
    main().unwrap();
}
