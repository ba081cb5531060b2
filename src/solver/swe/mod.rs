//! Two-layer shallow-water finite-volume solver on triangle meshes
//! (spec `shared/specs/two-layer-shallow-water.md`).
//!
//! Unknowns per triangle W = (h1, q1x, q1y, h2, q2x, q2y), depth H per cell, density ratio
//! r = ρ1/ρ2 ∈ (0, 1), gravity g. Each step is the first-order path-conservative update (2)
//!
//! W_i^{n+1} = W_i^n − Δt/|V_i| Σ_j |Γ_ij| F⁻_ij,   Δt = min_i 2γ|V_i| / Σ_j |Γ_ij| ‖D_ij‖∞   (3)
//!
//! with F⁻ the fluctuation of one of three schemes ([`Scheme`]): PVM-IFCP, IR-Roe or classical
//! Roe. One edge computes both of its cells' contributions (F⁺_ij = F⁻_ji, spec §2.2), so the GPU
//! runs one thread per edge, one dispatch per edge color, with no atomics.
//!
//! Modules: [`flux`] (the per-edge kernel, f64 CPU reference of `shaders/common/swe_flux.wgsl`),
//! [`mesh`] (cells and colored edges in GPU layout, the criss-cross test mesh M(n)), [`expr`]
//! and [`case`] (case files and built-in cases), [`cpu`] (f64 reference solver), [`gpu`] (the
//! driver on the runtime, wgpu or CUDA: edge flux per color or cell-centred gather, local Δt,
//! GPU min-reduction, time kernel, update), [`diag`] (mass, fields), [`driver`] (a run with
//! PNG/VTU/CSV outputs), [`bench`](mod@bench) (Test 1 timed per configuration, the bytes
//! model), [`muscl`] (the second-order reconstruction, `order = 2`, with Heun's SSP-RK2 in
//! time), [`friction`] (Manning bottom friction and interface drag, semi-implicit),
//! [`boundary`] (driven open boundaries: prescribed discharge or elevation, constant or a time
//! series; the ghost state is [`flux::driven_ghost`]), [`gauge`] (point time series sampled on
//! the GPU).
//!
//! Decisions on the spec's open points (§14), with the evidence in `tests/swe_*.rs`:
//! 1. Fluctuation form (2) with the mass rows in flux form (§2.2), one thread per edge giving
//!    both cells' contributions (F⁺_ij = F⁻_ji). Evidence: the §12 table is reproduced to all
//!    printed digits (f64) and mass is conserved to ≤ 1e-13 (f64) / ≤ 1e-6 (f32), the lake at
//!    rest to ≤ 1e-13 m s⁻¹ (f64).
//! 2. CFL (3) with Δt from the *current* state (non-lagged), computed on the GPU each step and
//!    clamped so the run hits every output time and the final time exactly. The paper's
//!    lagged Δt (step n uses the speeds of W^{n−1}) is not used: the §12 reference numbers are
//!    non-lagged, and the non-lagged step needs no initial pass and costs no extra kernel. f32
//!    runs may take one step more than f64 (clamp rounding), as the spec says. The fused step
//!    ([`gpu::FluxLayout::Fused`], the default at both orders) does use the lagged Δt: the
//!    speeds of W^{n+1} need the neighbours' new states, which one kernel cannot wait for
//!    (its f64 reference is [`cpu::CpuSolver::lagged_dt`]; on M(50) the §12 extrema move by
//!    at most 8e-4).
//! 3. S_ext = sgn(λ1 + λ4) as in the paper (K-Q's sgn(λ2 + λ3) can under-dissipate internal
//!    waves); χ is clamped into (λ1, λ4) if ever needed and the clamp is counted (0 so far).
//! 4. IFCP uses the at-rest well-balanced variant of §6.3 (the exact PVM form divides by
//!    det A, singular at internally critical edges over variable bathymetry).
//! 5. IFCP uses the approximate eigenvalues of §4.2; IR-Roe and classical Roe the exact ones
//!    (EIG4, §4.4). ‖D‖∞ = max(|λ1|, |λ4|, |un_1|, |un_2|) of the scheme's own eigenvalues.
//! 6. Tangential momenta: Roe shear waves (§5.4) for IR-Roe, so IR-Roe ≡ classical Roe (the
//!    dense 6×6 route agrees to 1e-9 relative on random states and to all digits on Tests 1–2);
//!    mass-flux upwinding (§6.5) for IFCP.
//! 7. No entropy fix (none in the paper; the §12 numbers are without one).
//! 8. g = 9.81 m s⁻² by default (case files may set it).
//! 9. Meshes: the paper's MATLAB meshes are unavailable; tests use M(n) of §12, the benchmark
//!    uses Delaunay meshes of the square (as unstructured as the paper's) or M(n).
//! 10. Loss of hyperbolicity (§4.5): IFCP clamps c_i² at 0; IR-Roe/Roe fall back to the IFCP
//!     fluctuation on that edge (and on edges with a nearly dry layer, §10); both events are
//!     counted per step on the GPU (total and per-step maximum). Tests 1–2 on M(50) report 0.
//!     Dry layers: velocities desingularised (§10 eq. 26, exact for h ≥ κ), momentum zeroed
//!     below κ, negative depths clipped to 0 and counted (order 1; order 2 drains instead,
//!     [`muscl::drain_factor`], and keeps each layer's mass exact); thin films
//!     (κ ≤ h < ε_f = 100 κ) have their momentum desingularised after each update (§10 eq. 23,
//!     [`Physics::film_depth`]); a layer depth below −0.5 H_ref before draining and clipping
//!     stops the run ([`depth_stop_level`]).

pub mod bench;
pub mod boundary;
pub mod case;
pub mod cpu;
pub mod diag;
pub mod driver;
pub mod expr;
pub mod flux;
pub mod friction;
pub mod gauge;
pub mod gpu;
pub mod mesh;
pub mod muscl;

use crate::error::{Error, Result};

/// Numerical scheme of the edge fluctuations.
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    Hash,
    serde::Serialize,
    serde::Deserialize,
    clap::ValueEnum,
)]
#[serde(rename_all = "kebab-case")]
pub enum Scheme {
    /// PVM-IFCP (spec §6): polynomial viscosity matrix, eigenvalue approximations only.
    #[default]
    PvmIfcp,
    /// IR-Roe (spec §5): Roe scheme in the edge-rotated frame, closed-form eigenvectors.
    IrRoe,
    /// Classical Roe (spec §7): dense 6×6 matrices in the x-y frame.
    Roe,
}

impl Scheme {
    /// All schemes, default first.
    pub const ALL: [Scheme; 3] = [Scheme::PvmIfcp, Scheme::IrRoe, Scheme::Roe];

    /// The name used on the command line and in case files.
    pub fn name(self) -> &'static str {
        match self {
            Scheme::PvmIfcp => "pvm-ifcp",
            Scheme::IrRoe => "ir-roe",
            Scheme::Roe => "roe",
        }
    }

    /// Parse a scheme name (as [`Scheme::name`] prints it; `ifcp` is accepted too).
    pub fn from_name(s: &str) -> Result<Scheme> {
        match s.to_ascii_lowercase().as_str() {
            "pvm-ifcp" | "ifcp" | "pvm" => Ok(Scheme::PvmIfcp),
            "ir-roe" | "irroe" => Ok(Scheme::IrRoe),
            "roe" | "classical-roe" => Ok(Scheme::Roe),
            other => Err(Error::Invalid(format!(
                "unknown scheme '{other}' (expected pvm-ifcp, ir-roe or roe)"
            ))),
        }
    }

    /// The value of the WGSL override constant SCHEME.
    pub fn shader_id(self) -> u32 {
        match self {
            Scheme::PvmIfcp => 0,
            Scheme::IrRoe => 1,
            Scheme::Roe => 2,
        }
    }
}

impl std::fmt::Display for Scheme {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// ε_f / κ: with spec §10's f32 threshold κ = 10⁻⁴ H_ref, films below 10⁻² H_ref. On the
/// wet/dry front of issue 15 (tests/swe_robust.rs) 10 κ still clipped 3540 depths (mass off by
/// 6e-4), 100 κ 80 (mass to round-off) and ran to t = 1.
pub const FILM_FACTOR: f64 = 100.0;

/// Physical and numerical constants of a run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Physics {
    /// Gravity g (m s⁻²).
    pub g: f64,
    /// Density ratio r = ρ1/ρ2 ∈ (0, 1).
    pub r: f64,
    /// Dry threshold ε_h = κ (m): below it a layer is dry (velocity desingularised, momentum
    /// zeroed after the update, Roe schemes fall back to IFCP on the edge).
    pub dry_tol: f64,
    /// Bottom and interface friction (none by default).
    pub friction: friction::Friction,
}

impl Default for Physics {
    fn default() -> Self {
        Physics {
            g: 9.81,
            r: 0.5,
            dry_tol: 1e-4,
            friction: friction::Friction::default(),
        }
    }
}

impl Physics {
    /// The thin-film depth ε_f = [`FILM_FACTOR`] κ: below it a layer's momentum is
    /// desingularised after each update, q ← h u with u = √2 h q / √(h⁴ + max(h⁴, ε_f⁴))
    /// (spec §10 eq. (23), the Kurganov–Petrova form), i.e. q is scaled by
    /// √2 h² / √(h⁴ + ε_f⁴) < 1. A thin film next to a deep layer gets momentum fluctuations
    /// sized for the edge's averaged depth; without this its velocity runs away (|u2| ≈ 8e3 m/s
    /// and NaN on the wet/dry front of issue 15).
    pub fn film_depth(&self) -> f64 {
        FILM_FACTOR * self.dry_tol
    }

    /// Check the ranges: g > 0, 0 < r < 1, ε_h > 0.
    pub fn validate(&self) -> Result<()> {
        if !(self.r > 0.0 && self.r < 1.0) {
            return Err(Error::Invalid(format!(
                "density ratio r = {} must lie in (0, 1)",
                self.r
            )));
        }
        if !(self.g > 0.0 && self.g.is_finite()) {
            return Err(Error::Invalid(format!(
                "gravity g = {} must be > 0",
                self.g
            )));
        }
        if !(self.dry_tol > 0.0 && self.dry_tol.is_finite()) {
            return Err(Error::Invalid(format!(
                "dry tolerance {} must be > 0",
                self.dry_tol
            )));
        }
        self.friction.validate()
    }
}

/// The depth stop as a fraction of the reference depth: a layer depth below −0.5 H_ref
/// before draining (order 2) and clipping stops the run. Not the dry tolerance's negative (−κ,
/// the letter of issue 14): legitimate runs undershoot far below it before clipping. Measured
/// with the f64 reference ([`cpu::CpuSolver::lowest_depth`], the ignored test
/// `legitimate_undershoot_stays_far_above_the_depth_stop` of tests/swe_robust.rs) over the
/// repository's closed cases at orders 1 and 2, with and without the fused step's lagged Δt:
/// the built-in test1, test2 and lake never go below 0.35 m; the dam breaks over dry land and
/// the wet/dry shelf front of issue 15 undershoot to −0.0013 H_ref (order 2); two streams
/// colliding at ±8 m/s in 6 m of water to −0.062 H_ref at order 1 and −0.117 H_ref at order
/// 2 (−0.70 m before draining), the largest (before the draining step, the clipping of Heun's
/// first stage let the second reach −0.42 H_ref). Blow-ups cross it before they reach NaN:
/// an upper layer at 20 or 100 m/s into the walls tens of steps before at order 1, and at
/// 100 m/s at order 2 at t = 0.047 (−3.5 m before draining; without the check it went NaN at
/// t = 0.073). Order 2 drains, so its depths never go below 0 and its mass stays exact; the
/// mass guard ([`MassGuard`], closed domains) catches the clipping of order 1 that makes mass
/// slower than this stop sees.
pub const DEPTH_STOP_FRACTION: f64 = 0.5;

/// The reference depth H_ref of a case: the deepest initial water column max_i (h1 + h2), or
/// the deepest bed max_i H if deeper, and at least 10⁴ κ (spec §10 relates the f32 dry
/// threshold to it, ε_h = 10⁻⁴ H_ref, so a dry start still has a scale).
pub fn reference_depth(depth: &[f64], state: &[[f64; 6]], phys: &Physics) -> f64 {
    let column = state.iter().map(|w| w[0] + w[3]).fold(0.0, f64::max);
    let bed = depth.iter().copied().fold(0.0, f64::max);
    column.max(bed).max(1e4 * phys.dry_tol)
}

/// The depth stop level −[`DEPTH_STOP_FRACTION`] H_ref ([`reference_depth`]).
pub fn depth_stop_level(depth: &[f64], state: &[[f64; 6]], phys: &Physics) -> f64 {
    -DEPTH_STOP_FRACTION * reference_depth(depth, state, phys)
}

/// Where the depth stop fired: a layer depth below [`depth_stop_level`] before draining and
/// clipping.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct DepthStop {
    /// The lowest-numbered cell (solver order) that fell below the level.
    pub cell: usize,
    /// The step that did it (counted from the start of the run).
    pub step: u64,
    /// The time that step reached.
    pub t: f64,
    /// The lowest layer depth before draining and clipping among the cells below the level.
    pub depth: f64,
}

impl DepthStop {
    /// The error that stops the run, naming the cell as `label` (the file's numbering,
    /// [`crate::mesh::Mesh::element_label`]) at centroid `at`.
    pub fn error(&self, level: f64, label: &str, at: [f64; 2]) -> Error {
        Error::Run(format!(
            "the run stopped at t = {} in step {}: a layer depth fell to {} m before draining and \
             clipping, below the depth stop {} m (-{DEPTH_STOP_FRACTION} H_ref), first in {label} \
             at ({:.4}, {:.4}); the solution is blowing up: try a smaller CFL number or check \
             the initial state",
            self.t as f32, self.step, self.depth as f32, level as f32, at[0], at[1]
        ))
    }
}

/// Default bound of the mass guard ([`MassGuard`]): a layer's mass may drift by at most this
/// fraction of its initial mass in a closed domain. Measured on lavapipe (f32, largest drift
/// over the output times, fused and scatter updates): the built-in cases and `cases/` (test1,
/// test2, the lake to t = 5) stay at or below 1.1e-7 at orders 1 and 2; at order 2 the
/// draining step keeps every layer's mass to f32 round-off (at most 8e-8 on the dam break over
/// dry land, the wet/dry shelf front of issue 15 and two streams colliding at ±8 m/s, which
/// made 3.0e-3 and 1.07e-2 by clipping before); at order 1 clipping makes mass where streams
/// collide: 5.3e-3 of the lower layer on the colliding streams (fused, to t = 0.3), the most,
/// a factor of 9 below the bound (1.1e-7 on the shelf front at order 1).
pub const DEFAULT_MAX_MASS_DRIFT: f64 = 5e-2;

/// Stops a run in a closed domain (walls only) whose layer mass drifts: there the scheme
/// conserves each layer's mass to round-off, so a drift |M_k(t) − M_k(0)| / M_k(0) above the
/// bound is mass made by clipping negative depths (order 1; order 2 drains and does not
/// clip), i.e. a solution going wrong slower than the depth stop ([`DEPTH_STOP_FRACTION`])
/// sees. A layer that starts without mass is measured
/// against the mass of both layers. Checked where the state is on the host (output times,
/// checkpoints, interrupts, the end), with no read-back of its own: the device counts clips
/// ([`gpu::GpuControl::clipped`]) but not their mass, and a count does not bound it (100
/// clips of films make 1e-11 of the mass in a dam break over dry land at order 1, 40 deep
/// ones make 5e-3 in colliding streams); summing the clipped mass on the device would take a
/// per-cell record and a sum reduction per batch (WGSL has no float atomics), new kernels and
/// CUDA twins that the output-time check does without.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MassGuard {
    /// Initial mass of each layer, Σ_i |V_i| h_k,i.
    pub initial: [f64; 2],
    /// Largest relative drift allowed.
    pub bound: f64,
}

impl MassGuard {
    /// Relative drift of each layer's mass ([`mass_drift`]).
    pub fn drift(&self, mass: [f64; 2]) -> [f64; 2] {
        mass_drift(self.initial, mass)
    }

    /// An error naming the time, step, layer, drift and bound when a layer of mass `mass` at
    /// time `t` after `steps` steps has drifted beyond the bound (or to NaN).
    pub fn check(&self, mass: [f64; 2], t: f64, steps: u64) -> Result<()> {
        let drift = self.drift(mass);
        let Some(k) = (0..2).find(|&k| drift[k].is_nan() || drift[k] > self.bound) else {
            return Ok(());
        };
        Err(Error::Run(format!(
            "the run stopped at t = {} after step {steps}: the {} layer's mass drifted by {:.3e} \
             of its initial mass {}, above the mass guard's bound {:e} (max_mass_drift); in a \
             closed domain only clipping negative depths changes a layer's mass, so the \
             solution is going wrong: try a smaller CFL number or check the initial state \
             (this state was not written; the snapshots and checkpoint before it stay)",
            t as f32,
            ["upper", "lower"][k],
            drift[k],
            crate::output::format_number(self.initial[k]),
            self.bound
        )))
    }
}

/// Relative drift |M_k − M_k(0)| / M_k(0) of each layer's mass from its initial mass; a layer
/// that starts without water is measured against both layers' initial mass (0 where there is
/// no water at all), so an empty layer gives a number, not NaN.
pub fn mass_drift(initial: [f64; 2], mass: [f64; 2]) -> [f64; 2] {
    let total = initial[0] + initial[1];
    std::array::from_fn(|k| {
        let scale = if initial[k] > 0.0 { initial[k] } else { total };
        if scale > 0.0 {
            (mass[k] - initial[k]).abs() / scale
        } else {
            0.0
        }
    })
}

/// Check a mass-guard bound (`max_mass_drift`): positive and finite.
pub fn check_max_mass_drift(bound: f64) -> Result<()> {
    if bound > 0.0 && bound.is_finite() {
        Ok(())
    } else {
        Err(Error::Invalid(format!(
            "max mass drift {bound} must be a positive finite fraction (default \
             {DEFAULT_MAX_MASS_DRIFT:e})"
        )))
    }
}

/// Spatial order of accuracy: 1 (the paper's schemes) or 2 (limited MUSCL reconstruction,
/// [`muscl`], with Heun's SSP-RK2 in time).
pub fn check_order(order: u32) -> Result<()> {
    if order == 1 || order == 2 {
        Ok(())
    } else {
        Err(Error::Invalid(format!("order {order} must be 1 or 2")))
    }
}

/// Event counters of a run (spec §4.5, §6.1, §10): how often edges lost hyperbolicity, a Roe
/// scheme fell back to IFCP, IFCP clamped χ_int, or a negative depth was clipped to zero.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Counters {
    /// Edge evaluations with complex internal eigenvalues (summed over steps).
    pub nonhyperbolic: u64,
    /// Edge evaluations where IR-Roe / Roe used the IFCP fluctuation (non-hyperbolic or dry).
    pub fallback: u64,
    /// IFCP edge evaluations that clamped χ_int into (λ1, λ4).
    pub chi_clamped: u64,
    /// Cell updates that clipped a negative layer depth to 0 (breaks exact conservation; order
    /// 1, order 2 drains instead).
    pub clipped: u64,
    /// The largest number of non-hyperbolic edges in one step.
    pub max_step_nonhyperbolic: u64,
    /// The largest number of fallback edges in one step.
    pub max_step_fallback: u64,
    /// Steps whose lagged Δt exceeded the Courant limit of the state they updated, rejected
    /// and taken again with that state's CFL step (the fused step, or the reference with
    /// [`cpu::CpuSolver::lagged_dt`]; 0 otherwise).
    pub rejected: u64,
}

impl Counters {
    /// Add one step's edge counters (its `nonhyperbolic`, `fallback`, `chi_clamped`).
    pub fn add_step(&mut self, step: &Counters) {
        self.nonhyperbolic += step.nonhyperbolic;
        self.fallback += step.fallback;
        self.chi_clamped += step.chi_clamped;
        self.max_step_nonhyperbolic = self.max_step_nonhyperbolic.max(step.nonhyperbolic);
        self.max_step_fallback = self.max_step_fallback.max(step.fallback);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The guard's drift is relative to each layer's initial mass (to both layers' when a
    /// layer starts empty), it fires above the bound and on NaN, naming what the doc says, and
    /// a bound must be positive and finite.
    #[test]
    fn mass_guard_drift_and_bounds() {
        let g = MassGuard {
            initial: [100.0, 0.0],
            bound: 5e-2,
        };
        assert_eq!(g.drift([104.0, 1.0]), [0.04, 0.01]);
        assert!(g.check([104.0, 1.0], 0.5, 10).is_ok());
        let msg = g.check([100.0, 6.0], 0.25, 42).unwrap_err().to_string();
        for want in [
            "the run stopped at t = 0.25 after step 42",
            "the lower layer's mass drifted by 6.000e-2 of its initial mass 0",
            "above the mass guard's bound 5e-2 (max_mass_drift)",
        ] {
            assert!(msg.contains(want), "'{want}' not in: {msg}");
        }
        assert!(g.check([f64::NAN, 0.0], 0.25, 42).is_err());
        let dry = MassGuard {
            initial: [0.0, 0.0],
            bound: 5e-2,
        };
        assert!(dry.check([0.0, 0.0], 1.0, 1).is_ok());
        assert!(check_max_mass_drift(DEFAULT_MAX_MASS_DRIFT).is_ok());
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            assert!(check_max_mass_drift(bad).is_err(), "{bad}");
        }
    }
}
