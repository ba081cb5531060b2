//! A smoothing run in a few lines, for the `smooth` command and library users alike:
//!
//! ```no_run
//! # fn main() -> chromaflow::error::Result<()> {
//! use chromaflow::mesh::builtin;
//! use chromaflow::runtime::Runtime;
//! use chromaflow::solver::smooth::{MetricSpec, Smoothing, SmoothingOptions};
//! let mesh = builtin("rect:4000")?;
//! let metric = MetricSpec::resolve(Some("shock"), None, &mesh)?;
//! let rt = Runtime::wgpu()?;
//! let mut sm = Smoothing::new(mesh, &metric, &SmoothingOptions::default(), &rt)?;
//! sm.run(100)?;
//! println!("min quality {} -> {}", sm.quality_before().min, sm.quality().min);
//! sm.write_outputs("out/smooth".as_ref())?;
//! # Ok(())
//! # }
//! ```
//!
//! [`Smoothing::new`] builds the cavities, resamples the metric onto a texture, colors the
//! vertices on the device ([`schedule_gpu`]) and uploads everything; [`Smoothing::run`] sweeps
//! on the device, reads the positions back, refuses a mesh with an inverted or collapsed
//! triangle and records the metric quality ([`QualityRecord`]). The quality is judged on the
//! CPU with the exact bilinear metric at the texel precision the kernel reads.
//! [`Smoothing::run_with_outputs`] is the `smooth` command's run: before/after PNGs, the
//! quality CSV row by row, the smoothed mesh as .msh and .vtu; [`Smoothing::run_controlled`]
//! adds checkpoints (`checkpoint.ckpt`: the device positions word for word and the quality
//! history) and restarts from them, to the same bits as a run never stopped.

use super::cpu::{min_shape, not_above, positions, set_positions};
use super::gpu::GpuSmoother;
use super::texture::check_size;
use super::{
    metric_normalization, metric_quality, sweep_cpu, MetricSpec, MetricTexture, QualitySummary,
    Sampling, Schedule, SmoothParams, SmoothTopology, TexelPrecision, TextureSampler, WeightMode,
};
use crate::checkpoint::{self, fingerprint, Checkpoint};
use crate::color::gpu_vertices::{color_vertices_gpu, GpuColoringVariant};
use crate::error::{Error, Result};
use crate::mesh::{write_msh41, write_vtu, Mesh};
use crate::output::{save_field_png, write_json_atomic, CsvWriter, Field, PlotOptions};
use crate::runtime::{BackendKind, Runtime};
use crate::solver::RunControl;
use std::path::{Path, PathBuf};

/// Columns of [`QUALITY_CSV`], one row per [`QualityRecord`].
pub const QUALITY_COLUMNS: [&str; 5] = [
    "iteration",
    "min_quality",
    "mean_quality",
    "min_shape",
    "seconds",
];
/// The quality history [`Smoothing::write_outputs`] writes.
pub const QUALITY_CSV: &str = "quality.csv";
/// The metric quality of the starting mesh, as a PNG.
pub const BEFORE_PNG: &str = "before.png";
/// The metric quality of the smoothed mesh, as a PNG.
pub const AFTER_PNG: &str = "after.png";
/// The smoothed mesh (Gmsh 4.1).
pub const SMOOTHED_MSH: &str = "smoothed.msh";
/// The smoothed mesh with the quality before and after per triangle.
pub const SMOOTHED_VTU: &str = "smoothed.vtu";
/// [`Smoothing::summary`] as [`Smoothing::write_summary`] writes it.
pub const SUMMARY_JSON: &str = "summary.json";

/// Color the vertices of `topo` with the GPU speculative coloring on `rt` (boundary vertices
/// in classes of their own) and group them into a sweep schedule.
pub fn schedule_gpu(rt: &Runtime, topo: &SmoothTopology) -> Result<Schedule> {
    let classes = topo.classes();
    let col = color_vertices_gpu(
        rt,
        &topo.neighbors,
        Some(&classes),
        GpuColoringVariant::Data,
    )?;
    Schedule::from_colors(topo, &col.colors)
}

/// How to set up a [`Smoothing`]; the defaults are the `smooth` command's.
#[derive(Clone, Debug, PartialEq)]
pub struct SmoothingOptions {
    /// Relocation parameters.
    pub params: SmoothParams,
    /// How the kernel reads the metric.
    pub sampling: Sampling,
    /// Texels per side of the metric texture (2..=8192).
    pub texture_size: u32,
    /// Sub-samples per texel and axis when resampling the metric (1..=16).
    pub supersample: u32,
}

impl Default for SmoothingOptions {
    fn default() -> Self {
        SmoothingOptions {
            params: SmoothParams::default(),
            sampling: Sampling::Hardware,
            texture_size: 512,
            supersample: 2,
        }
    }
}

impl SmoothingOptions {
    /// Error unless the parameters and the texture size are valid.
    pub fn check(&self) -> Result<()> {
        self.params.check()?;
        check_size(self.texture_size, self.supersample)
    }
}

/// The quality after some iterations: a row of [`QUALITY_CSV`].
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct QualityRecord {
    /// Iterations done.
    pub iteration: usize,
    /// Smallest and mean metric quality (1 = ideal).
    pub min_quality: f64,
    pub mean_quality: f64,
    /// Smallest `2 area / sum l^2` (positive: no triangle inverted or collapsed).
    pub min_shape: f64,
    /// Device wall seconds of the smoothing so far.
    pub seconds: f64,
}

impl QualityRecord {
    fn row(&self) -> [f64; 5] {
        [
            self.iteration as f64,
            self.min_quality,
            self.mean_quality,
            self.min_shape,
            self.seconds,
        ]
    }

    /// The record from its [`QualityRecord::row`] (a checkpoint's copy).
    fn from_row(r: [f64; 5]) -> QualityRecord {
        QualityRecord {
            iteration: r[0] as usize,
            min_quality: r[1],
            mean_quality: r[2],
            min_shape: r[3],
            seconds: r[4],
        }
    }
}

/// u32 words per [`QualityRecord`] in a checkpoint: five f64 as (low, high) word pairs.
const RECORD_WORDS: usize = 10;

/// The final quality of the f64 CPU reference with exact and with 1/256-quantised bilinear
/// weights (as NVIDIA's texture units filter), from the same start and schedule.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct QuantizationPrediction {
    #[serde(rename = "cpu_exact_weights")]
    pub exact: QualitySummary,
    #[serde(rename = "cpu_quantized_1_256_weights")]
    pub quantized: QualitySummary,
    /// Quantised minus exact.
    pub mean_quality_change: f64,
    pub min_quality_change: f64,
}

/// A mesh being smoothed on a device, with its quality history.
pub struct Smoothing {
    name: String,
    mesh: Mesh,
    topo: SmoothTopology,
    schedule: Schedule,
    tex: MetricTexture,
    metric_name: String,
    options: SmoothingOptions,
    backend: BackendKind,
    gpu: GpuSmoother,
    sampler: TextureSampler,
    norm: f64,
    start: Vec<[f64; 2]>,
    pos: Vec<[f64; 2]>,
    q_before: Vec<f64>,
    before: QualitySummary,
    history: Vec<QualityRecord>,
    gpu_seconds: f64,
    kernel_seconds: Option<f64>,
    /// Fingerprint of the starting mesh, for checkpoints.
    mesh_fingerprint: u64,
}

impl Smoothing {
    /// Prepare the smoothing of `mesh` (2D triangles) to `metric` on `rt`: cavities, the metric
    /// texture, the vertex coloring (on the device) and the device state.
    pub fn new(
        mesh: Mesh,
        metric: &MetricSpec,
        options: &SmoothingOptions,
        rt: &Runtime,
    ) -> Result<Smoothing> {
        Smoothing::with_colors(mesh, metric, options, rt, None)
    }

    /// [`Smoothing::new`] with the vertex colors given (checked) instead of colored on the
    /// device: the speculative GPU coloring may differ from run to run, and a restart must
    /// sweep in its checkpoint's order ([`Smoothing::checkpoint_colors`]).
    pub fn with_colors(
        mesh: Mesh,
        metric: &MetricSpec,
        options: &SmoothingOptions,
        rt: &Runtime,
        colors: Option<&[u32]>,
    ) -> Result<Smoothing> {
        options.check()?;
        let topo = SmoothTopology::build(&mesh)?;
        let tex =
            MetricTexture::from_spec(metric, &mesh, options.texture_size, options.supersample)?;
        let schedule = match colors {
            Some(colors) => Schedule::from_colors(&topo, colors)?,
            None => schedule_gpu(rt, &topo)?,
        };
        let start = positions(&mesh);
        let mesh_fp = mesh_fingerprint(&mesh);
        let gpu = GpuSmoother::new(
            rt,
            &topo,
            &schedule,
            &tex,
            options.sampling,
            &options.params,
            &start,
        )?;
        let sampler = TextureSampler::new(&tex, WeightMode::Exact, gpu.precision());
        let f = |x: [f64; 2]| sampler.sample(x);
        let norm = metric_normalization(&start, &topo.triangles, &f);
        let q_before = metric_quality(&start, &topo.triangles, &f, norm);
        let before = QualitySummary::of(&q_before);
        let history = vec![QualityRecord {
            iteration: 0,
            min_quality: before.min,
            mean_quality: before.mean,
            min_shape: min_shape(&start, &topo.triangles),
            seconds: 0.0,
        }];
        Ok(Smoothing {
            name: "mesh".to_string(),
            mesh,
            topo,
            schedule,
            tex,
            metric_name: metric.name(),
            options: options.clone(),
            backend: rt.kind(),
            gpu,
            sampler,
            norm,
            pos: start.clone(),
            start,
            q_before,
            before,
            history,
            gpu_seconds: 0.0,
            kernel_seconds: None,
            mesh_fingerprint: mesh_fp,
        })
    }

    /// Name the mesh in plot titles and the summary (a file name or built-in spec).
    pub fn with_name(mut self, name: impl Into<String>) -> Smoothing {
        self.name = name.into();
        self
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// The mesh at the positions of the last [`Smoothing::run`].
    pub fn mesh(&self) -> &Mesh {
        &self.mesh
    }

    pub fn topology(&self) -> &SmoothTopology {
        &self.topo
    }

    pub fn schedule(&self) -> &Schedule {
        &self.schedule
    }

    pub fn texture(&self) -> &MetricTexture {
        &self.tex
    }

    pub fn options(&self) -> &SmoothingOptions {
        &self.options
    }

    /// The metric's name (as `--metric` takes it).
    pub fn metric_name(&self) -> &str {
        &self.metric_name
    }

    /// Precision of the texels the kernel reads.
    pub fn precision(&self) -> TexelPrecision {
        self.gpu.precision()
    }

    /// The device the kernels run on.
    pub fn device_name(&self) -> String {
        self.gpu.device_name()
    }

    pub fn backend(&self) -> BackendKind {
        self.backend
    }

    /// Vertex positions after the last run.
    pub fn positions(&self) -> &[[f64; 2]] {
        &self.pos
    }

    /// Iterations done.
    pub fn iterations(&self) -> usize {
        self.history.last().map_or(0, |r| r.iteration)
    }

    /// Device wall seconds of all runs.
    pub fn gpu_seconds(&self) -> f64 {
        self.gpu_seconds
    }

    /// Device kernel seconds of all runs (None without device timers).
    pub fn kernel_seconds(&self) -> Option<f64> {
        self.kernel_seconds
    }

    /// The factor that makes the metric area of the starting mesh ideal (see [`super::quality`]).
    pub fn metric_normalization(&self) -> f64 {
        self.norm
    }

    /// The metric at `x` as the quality is judged (exact bilinear weights).
    pub fn metric(&self, x: [f64; 2]) -> super::Sym2 {
        self.sampler.sample(x)
    }

    /// Metric quality of every triangle at `pos`.
    pub fn quality_of(&self, pos: &[[f64; 2]]) -> Vec<f64> {
        metric_quality(
            pos,
            &self.topo.triangles,
            &|x| self.sampler.sample(x),
            self.norm,
        )
    }

    /// Metric quality of every triangle now.
    pub fn quality_field(&self) -> Vec<f64> {
        self.quality_of(&self.pos)
    }

    pub fn quality_before(&self) -> &QualitySummary {
        &self.before
    }

    /// The quality now.
    pub fn quality(&self) -> QualitySummary {
        QualitySummary::of(&self.quality_field())
    }

    /// The quality at the start and after every run.
    pub fn history(&self) -> &[QualityRecord] {
        &self.history
    }

    /// Run `iterations` sweeps on the device, read the positions back and record the quality;
    /// an error if a triangle inverted or collapsed (the kernel's move test forbids it, so
    /// that is a bug).
    pub fn run(&mut self, iterations: usize) -> Result<QualityRecord> {
        let t = self.gpu.run(iterations)?;
        self.gpu_seconds += t.wall_seconds;
        if let Some(ks) = t.kernel_seconds {
            *self.kernel_seconds.get_or_insert(0.0) += ks;
        }
        let done = self.iterations() + iterations;
        self.pos = self.gpu.positions_f64()?;
        set_positions(&mut self.mesh, &self.pos);
        let shape = min_shape(&self.pos, &self.topo.triangles);
        if not_above(shape, 0.0) {
            return Err(Error::Gpu(format!(
                "iteration {done}: a triangle inverted or collapsed (min 2 area / sum l^2 = \
                 {shape:e}); this is a bug"
            )));
        }
        let q = self.quality();
        let rec = QualityRecord {
            iteration: done,
            min_quality: q.min,
            mean_quality: q.mean,
            min_shape: shape,
            seconds: self.gpu_seconds,
        };
        self.history.push(rec);
        Ok(rec)
    }

    /// Run `iterations` sweeps in runs of `every` (the quality is recorded after each; 0 counts
    /// as 1), calling `on_record` after each run; stops early on [`crate::interrupt`].
    pub fn run_recorded(
        &mut self,
        iterations: usize,
        every: usize,
        mut on_record: impl FnMut(&QualityRecord) -> Result<()>,
    ) -> Result<()> {
        let every = every.max(1);
        let mut done = 0;
        while done < iterations && !crate::interrupt::requested() {
            let k = every.min(iterations - done);
            let rec = self.run(k)?;
            done += k;
            on_record(&rec)?;
        }
        Ok(())
    }

    /// Fingerprint of what the sweeps compute with: the options, the metric texture and the
    /// sweep schedule (the vertex order of the kernels).
    fn case_fingerprint(&self) -> u64 {
        let options = format!("{:?} {}", self.options, self.metric_name);
        let s = &self.schedule;
        fingerprint(options.as_bytes())
            ^ fingerprint(bytemuck::cast_slice(&self.tex.texels)).rotate_left(1)
            ^ fingerprint(bytemuck::cast_slice(&s.order)).rotate_left(2)
            ^ fingerprint(bytemuck::cast_slice(&s.offsets)).rotate_left(3)
    }

    /// The vertex colors of the sweep schedule a `smooth` checkpoint at `path` was written
    /// with, for [`Smoothing::with_colors`] on a `mesh` of the same vertex count.
    pub fn checkpoint_colors(path: &Path, mesh: &Mesh) -> Result<Vec<u32>> {
        let ck = Checkpoint::read(path)?;
        ck.check(path, "smooth", ck.header.case, mesh_fingerprint(mesh))?;
        let n = mesh.num_points();
        ck.payload
            .get(2 * n..3 * n)
            .map(<[u32]>::to_vec)
            .ok_or_else(|| {
                Error::Invalid(format!(
                    "{}: cannot restart from this checkpoint: it was written for another mesh \
                 ({} words of state for {n} vertices)",
                    path.display(),
                    ck.payload.len()
                ))
            })
    }

    /// The state of the run as a checkpoint: device positions, the vertex colors of the
    /// schedule, then the quality history.
    fn checkpoint(&self, csv_rows: usize) -> Result<Checkpoint> {
        let mut words = self.gpu.save_words()?;
        words.extend(self.schedule.colors(self.mesh.num_points()));
        for rec in &self.history {
            words.extend(rec.row().iter().flat_map(|x| {
                let b = x.to_bits();
                [b as u32, (b >> 32) as u32]
            }));
        }
        let done = self.iterations();
        Ok(Checkpoint::new(
            "smooth",
            self.device_name(),
            self.case_fingerprint(),
            self.mesh_fingerprint,
            (done as f64, done as u64),
            (self.history.len() as u64, csv_rows as u64),
            words,
        ))
    }

    /// Continue from `ck` (checked against this smoothing's fingerprints by the caller): the
    /// device positions bit for bit, the quality history and the device seconds.
    fn restore(&mut self, ck: &Checkpoint) -> Result<()> {
        let n = 2 * self.mesh.num_points();
        let colors = n + n / 2;
        let history = ck.payload.get(colors..).unwrap_or_default();
        if ck.payload.len() < colors || history.is_empty() || history.len() % RECORD_WORDS != 0 {
            return Err(Error::Invalid(format!(
                "checkpoint of {} words does not fit {} vertices, their colors and whole \
                 quality records",
                ck.payload.len(),
                n / 2
            )));
        }
        self.gpu.restore_words(&ck.payload[..n])?;
        self.history = history
            .chunks_exact(RECORD_WORDS)
            .map(|w| {
                let f =
                    |k: usize| f64::from_bits(u64::from(w[2 * k]) | u64::from(w[2 * k + 1]) << 32);
                QualityRecord::from_row([f(0), f(1), f(2), f(3), f(4)])
            })
            .collect();
        self.gpu_seconds = self.history.last().map_or(0.0, |r| r.seconds);
        self.pos = self.gpu.positions_f64()?;
        set_positions(&mut self.mesh, &self.pos);
        Ok(())
    }

    /// The `smooth` command's run: create `dir`, write [`BEFORE_PNG`], run `iterations` sweeps
    /// recording the quality every `every` iterations into [`QUALITY_CSV`] (row by row, so a
    /// failed run leaves its history), then write [`AFTER_PNG`], [`SMOOTHED_MSH`] and
    /// [`SMOOTHED_VTU`]. `progress` gets the iterations done after each run. Returns the files;
    /// interrupted ([`crate::interrupt`]), it writes them for the iterations done and returns
    /// [`Error::Interrupted`].
    pub fn run_with_outputs(
        &mut self,
        dir: &Path,
        iterations: usize,
        every: usize,
        progress: impl FnMut(usize),
    ) -> Result<Vec<PathBuf>> {
        self.run_controlled(dir, iterations, every, &RunControl::default(), progress)
    }

    /// [`Smoothing::run_with_outputs`] with checkpoints and restarts as `rc` says, counting
    /// time in iterations: [`checkpoint::FILE_NAME`] in `dir` at the first quality record at or
    /// past every multiple of `rc.checkpoint_every` iterations and on an interrupt; with
    /// `rc.restart`, continue that checkpoint's run (same mesh, metric and options: checked)
    /// up to `iterations` in all, keeping its CSV rows.
    pub fn run_controlled(
        &mut self,
        dir: &Path,
        iterations: usize,
        every: usize,
        rc: &RunControl,
        mut progress: impl FnMut(usize),
    ) -> Result<Vec<PathBuf>> {
        let ck_path = dir.join(checkpoint::FILE_NAME);
        let restart = rc.restart_from("smooth", self.case_fingerprint(), self.mesh_fingerprint)?;
        let mut files = vec![self.write_before_png(dir)?];
        let csv_path = dir.join(QUALITY_CSV);
        let mut csv = match &restart {
            Some(ck) => {
                self.restore(ck)?;
                CsvWriter::resume(&csv_path, &QUALITY_COLUMNS, ck.header.csv_rows as usize)?
            }
            None => {
                let mut csv = CsvWriter::create(&csv_path, &QUALITY_COLUMNS)?;
                for rec in &self.history {
                    csv.row(&rec.row())?;
                }
                csv
            }
        };
        files.push(csv_path);
        let every = every.max(1);
        let mut next_ck = rc.next_checkpoint(self.iterations() as f64);
        while self.iterations() < iterations && !crate::interrupt::requested() {
            let rec = self.run(every.min(iterations - self.iterations()))?;
            csv.row(&rec.row())?;
            progress(rec.iteration);
            if rec.iteration as f64 >= next_ck {
                self.checkpoint(csv.rows_written())?.write(&ck_path)?;
                next_ck = rc.next_checkpoint(rec.iteration as f64);
            }
        }
        files.extend(self.write_after(dir)?);
        if crate::interrupt::requested() {
            self.checkpoint(csv.rows_written())?.write(&ck_path)?;
            return Err(Error::Interrupted(format!(
                "interrupted after {} of {iterations} iterations; wrote the outputs for them \
                 to {} and {} (continue with --restart {})",
                self.iterations(),
                dir.display(),
                ck_path.display(),
                ck_path.display()
            )));
        }
        Ok(files)
    }

    /// Write [`BEFORE_PNG`], [`QUALITY_CSV`] (the history so far), [`AFTER_PNG`],
    /// [`SMOOTHED_MSH`] and [`SMOOTHED_VTU`] into `dir` (created if missing); returns the files.
    pub fn write_outputs(&self, dir: &Path) -> Result<Vec<PathBuf>> {
        let (mut files, _) = self.write_before(dir)?;
        files.extend(self.write_after(dir)?);
        Ok(files)
    }

    fn title(&self, what: &str, s: &QualitySummary) -> String {
        format!(
            "{}, metric {}: {what} (min {:.3}, mean {:.3})",
            self.name, self.metric_name, s.min, s.mean
        )
    }

    /// Create `dir`, write the before PNG and the CSV of the history so far; returns the files
    /// and the CSV, open for more rows.
    fn write_before(&self, dir: &Path) -> Result<(Vec<PathBuf>, CsvWriter)> {
        let png = self.write_before_png(dir)?;
        let path = dir.join(QUALITY_CSV);
        let mut csv = CsvWriter::create(&path, &QUALITY_COLUMNS)?;
        for rec in &self.history {
            csv.row(&rec.row())?;
        }
        Ok((vec![png, path], csv))
    }

    /// Create `dir` and write the quality of the starting mesh as [`BEFORE_PNG`].
    fn write_before_png(&self, dir: &Path) -> Result<PathBuf> {
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        let png = dir.join(BEFORE_PNG);
        let title = self.title("before", &self.before);
        let moved;
        let mesh = if self.pos == self.start {
            &self.mesh
        } else {
            let mut m = self.mesh.clone();
            set_positions(&mut m, &self.start);
            moved = m;
            &moved
        };
        quality_png(mesh, &self.q_before, title, &png)?;
        Ok(png)
    }

    /// After PNG, .msh and .vtu of the current positions.
    fn write_after(&self, dir: &Path) -> Result<Vec<PathBuf>> {
        let q_after = self.quality_field();
        let after = QualitySummary::of(&q_after);
        let png = dir.join(AFTER_PNG);
        let what = format!("after {} iterations", self.iterations());
        quality_png(&self.mesh, &q_after, self.title(&what, &after), &png)?;
        let msh = dir.join(SMOOTHED_MSH);
        write_msh41(&self.mesh, &msh)?;
        let vtu = dir.join(SMOOTHED_VTU);
        write_vtu(
            &self.mesh,
            &vtu,
            &[],
            &[("quality", &q_after), ("quality_before", &self.q_before)],
        )?;
        Ok(vec![png, msh, vtu])
    }

    /// Run the f64 CPU reference from the start for `iterations` sweeps with the bilinear
    /// weights `weights`, and judge the result with the exact metric.
    pub fn cpu_reference(&self, weights: WeightMode, iterations: usize) -> QualitySummary {
        let smp = TextureSampler::new(&self.tex, weights, self.gpu.precision());
        let mut p = self.start.clone();
        for _ in 0..iterations {
            sweep_cpu(
                &mut p,
                &self.topo,
                &self.schedule,
                &|x| smp.sample(x),
                &self.options.params,
            );
        }
        QualitySummary::of(&self.quality_of(&p))
    }

    /// [`Smoothing::cpu_reference`] with exact and with 1/256 weights, over as many iterations
    /// as were run.
    pub fn predict_quantized(&self) -> QuantizationPrediction {
        let n = self.iterations();
        let exact = self.cpu_reference(WeightMode::Exact, n);
        let quantized = self.cpu_reference(WeightMode::Quantized8, n);
        QuantizationPrediction {
            mean_quality_change: quantized.mean - exact.mean,
            min_quality_change: quantized.min - exact.min,
            exact,
            quantized,
        }
    }

    /// The run's summary (mesh, coloring, metric, texture, device, quality before and after,
    /// times), with the quantisation prediction when there is one.
    pub fn summary(&self, prediction: Option<&QuantizationPrediction>) -> serde_json::Value {
        let s = &self.schedule;
        serde_json::json!({
            "mesh": self.name,
            "vertices": self.mesh.num_points(),
            "triangles": self.topo.triangles.len(),
            "free_vertices": s.order.len(),
            "colors": s.num_colors(),
            "boundary_colors": s.num_colors() - s.first_boundary_color,
            "metric": self.metric_name,
            "texture_size": self.options.texture_size,
            "supersample": self.options.supersample,
            "texel_precision": format!("{:?}", self.gpu.precision()),
            "sampling": self.options.sampling,
            "iterations": self.iterations(),
            "params": self.options.params,
            "adapter": self.gpu.device_name(),
            "backend": self.backend,
            "metric_normalization": self.norm,
            "quality_before": self.before,
            "quality_after": self.quality(),
            "gpu_seconds": self.gpu_seconds,
            "kernel_seconds": self.kernel_seconds,
            "quantization_prediction": prediction,
        })
    }

    /// Write [`Smoothing::summary`] to `dir`/[`SUMMARY_JSON`]; returns it.
    pub fn write_summary(
        &self,
        dir: &Path,
        prediction: Option<&QuantizationPrediction>,
    ) -> Result<serde_json::Value> {
        let summary = self.summary(prediction);
        write_json_atomic(dir.join(SUMMARY_JSON), &summary)?;
        Ok(summary)
    }
}

/// Fingerprint of a mesh as a smoothing starts from it: vertex positions and triangles.
fn mesh_fingerprint(mesh: &Mesh) -> u64 {
    fingerprint(bytemuck::cast_slice(&mesh.points))
        ^ fingerprint(bytemuck::cast_slice(&mesh.connectivity)).rotate_left(1)
}

fn quality_png(mesh: &Mesh, q: &[f64], title: String, path: &Path) -> Result<()> {
    let opts = PlotOptions {
        title,
        label: "metric quality (VL)".into(),
        range: Some((0.0, 1.0)),
        wireframe: true,
        ..PlotOptions::default()
    };
    save_field_png(mesh, Field::Cell(q), &opts, path).map(|_| ())
}
