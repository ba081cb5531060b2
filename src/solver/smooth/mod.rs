//! Anisotropic metric-field vertex smoothing (Pain et al., as run on GPUs by Rokos, Gorman and
//! Kelly, "Accelerating anisotropic mesh adaptivity on nVIDIA's CUDA using texture
//! interpolation").
//!
//! Every free vertex `p` of a triangle mesh moves so that the metric lengths
//! `r_l = u_l^T M_l u_l` of the edges `u_l = p - y_l` of its cavity become equal, `M_l` being the
//! metric at the edge midpoint. Minimising `sum_l r_l` with the `M_l` frozen gives `A p = q` with
//! `A = sum_l M_l` and `q = sum_l M_l y_l`; the paper damps that Newton step with the diagonal
//! dominance matrix `D` and a relaxation `w`:
//!
//! ```text
//! (D + A)(x - p) = w (q - A p),   D_jj = max(A_jj, (1 + sigma) sum_{m != j} |A_jm|)
//! ```
//!
//! (sigma = 0.01, w = 0.5 by default). A vertex on a straight boundary line slides along its unit
//! tangent `t` with the 1D variant `(D + t^T A t) a = w t^T (q - A p)`, `x = p + a t`, where the
//! 1x1 `D` is `t^T A t` itself. Corners, vertices where the boundary tag changes and vertices of
//! curved boundaries stay fixed, so the domain never changes. A move that would invert or flatten
//! a cavity triangle is halved up to [`SmoothParams::max_halvings`] times and dropped if still
//! bad, so the mesh is valid after every sweep (see [`cpu::relocate`]).
//!
//! Parallel schedule (Freitag et al.): vertices are colored so that no two neighbours share a
//! color, boundary vertices in color classes of their own; one dispatch per color per
//! iteration. The metric is super-sampled onto a texture covering the mesh bounding box
//! ([`texture::MetricTexture`]) and sampled in the kernel three ways ([`Sampling`]).
//!
//! Modules: [`metric`] (analytic and per-vertex metric fields), [`texture`] (resampling and the
//! CPU bilinear sampler), [`cpu`] (cavities, schedule, the f64 reference sweep), [`layout`]
//! (the device numbering and cavity walks, for memory locality), [`gpu`] (the GPU driver, on
//! [`crate::runtime`]), [`quality`] (Vasilevskii–Lipnikov element quality in metric space),
//! [`run`] (a whole run with its checks and outputs, [`Smoothing`]), [`bench`](mod@bench) (the
//! benchmark's input and timing of one sampling path).

pub mod bench;
pub mod cpu;
pub mod gpu;
pub mod layout;
pub mod metric;
pub mod quality;
pub mod run;
pub mod texture;

pub use cpu::{relocate, sweep_cpu, Schedule, SmoothTopology, VertexKind};
pub use gpu::GpuSmoother;
pub use metric::{AnalyticMetric, MetricSpec, Sym2, VertexMetric};
pub use quality::{metric_normalization, metric_quality, QualitySummary};
pub use run::{schedule_gpu, QualityRecord, QuantizationPrediction, Smoothing, SmoothingOptions};
pub use texture::{MetricTexture, TexelPrecision, TextureSampler, WeightMode};

/// Parameters of the relocation (see the module doc for the equations).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct SmoothParams {
    /// Diagonal-dominance margin sigma of `D`.
    pub sigma: f64,
    /// Relaxation w in (0, 1].
    pub relax: f64,
    /// A cavity triangle is acceptable when `2 area >= min_shape * sum of squared edges` with
    /// the orientation it had before the move (an equilateral triangle has `2 area / sum l^2 =
    /// sqrt(3) / 6 = 0.29`); this rejects inversions and near-flat triangles alike.
    pub min_shape: f64,
    /// How many times a rejected move is halved before the vertex stays put.
    pub max_halvings: u32,
    /// A move may not push the worst metric shape of its cavity (1 = equilateral in the
    /// metric) below `min(its value before the move, shape_floor)`.
    pub shape_floor: f64,
}

impl Default for SmoothParams {
    fn default() -> Self {
        SmoothParams {
            sigma: 0.01,
            relax: 0.5,
            min_shape: 1e-4,
            max_halvings: 4,
            shape_floor: 0.6,
        }
    }
}

impl SmoothParams {
    /// Error unless sigma >= 0, 0 < w <= 1, 0 <= min_shape < 0.29 and max_halvings <= 30.
    pub fn check(&self) -> crate::error::Result<()> {
        let bad = |m: String| Err(crate::error::Error::Invalid(m));
        if !(self.sigma.is_finite() && self.sigma >= 0.0) {
            return bad(format!("sigma must be finite and >= 0, got {}", self.sigma));
        }
        if !(self.relax > 0.0 && self.relax <= 1.0) {
            return bad(format!(
                "relaxation w must be in (0, 1], got {}",
                self.relax
            ));
        }
        if !(self.min_shape >= 0.0 && self.min_shape < 0.25) {
            return bad(format!(
                "min_shape must be in [0, 0.25), got {}",
                self.min_shape
            ));
        }
        if !(0.0..=1.0).contains(&self.shape_floor) {
            return bad(format!(
                "shape_floor must be in [0, 1], got {}",
                self.shape_floor
            ));
        }
        if self.max_halvings > 30 {
            return bad(format!(
                "max_halvings must be at most 30, got {}",
                self.max_halvings
            ));
        }
        Ok(())
    }
}

/// How the kernel reads the metric.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Sampling {
    /// The texture through the sampler's hardware linear filter (rgba32float when the adapter
    /// has FLOAT32_FILTERABLE, else rgba16float).
    Hardware,
    /// The same texture, bilinear interpolation written in the shader over four textureLoads.
    Shader,
    /// A plain storage buffer of texels, bilinear interpolation in the shader.
    Buffer,
}

impl Sampling {
    pub const ALL: [Sampling; 3] = [Sampling::Hardware, Sampling::Shader, Sampling::Buffer];

    pub fn name(self) -> &'static str {
        match self {
            Sampling::Hardware => "hardware",
            Sampling::Shader => "shader",
            Sampling::Buffer => "buffer",
        }
    }

    /// The kernel (`shaders/<name>.wgsl`) implementing this sampling path.
    pub fn kernel(self) -> &'static str {
        match self {
            Sampling::Hardware => "smooth_hardware",
            Sampling::Shader => "smooth_texel",
            Sampling::Buffer => "smooth_buffer",
        }
    }
}

impl std::fmt::Display for Sampling {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}
