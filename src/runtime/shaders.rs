//! WGSL shaders embedded in the binary, with a tiny `// #include "path"` preprocessor so kernels
//! share code from `shaders/common/` (each file is included once per kernel). A directory named
//! by `CHROMAFLOW_KERNEL_DIR` may replace embedded files, WGSL and CUDA, to measure variants of a
//! kernel without a rebuild ([`KERNEL_DIR_ENV`]).

use crate::error::{Error, Result};
use std::sync::atomic::{AtomicBool, Ordering};

/// When set, kernels are built without wgpu's runtime checks (index clamping on every buffer
/// and array access, and a counter bounding every loop). Off by default: the checks keep a
/// kernel bug from corrupting memory. Turned on by `--trusted-kernels` (or the environment
/// variable CHROMAFLOW_TRUSTED_KERNELS=1) for speed, on kernels the test suite has verified.
static TRUSTED_KERNELS: AtomicBool = AtomicBool::new(false);

/// Build later pipelines without runtime checks (see `TRUSTED_KERNELS`).
pub fn set_trusted_kernels(on: bool) {
    TRUSTED_KERNELS.store(on, Ordering::Relaxed);
}

/// Whether pipelines are built without runtime checks.
pub fn trusted_kernels() -> bool {
    TRUSTED_KERNELS.load(Ordering::Relaxed)
        || std::env::var("CHROMAFLOW_TRUSTED_KERNELS").is_ok_and(|v| v == "1")
}

/// Embeds `shaders/<path>` as a (path, source) pair.
macro_rules! shader {
    ($path:literal) => {
        ($path, include_str!(concat!("../../shaders/", $path)))
    };
}

/// Every shader file under `shaders/` (kernels and shared code), embedded at build time.
/// A test checks this list against the directory so a new file cannot be forgotten.
pub const SHADER_FILES: &[(&str, &str)] = &[
    shader!("common/dispatch.wgsl"),
    shader!("common/vcolor_first_fit.wgsl"),
    shader!("common/vcolor_hash.wgsl"),
    shader!("common/vcolor_eject_propose.wgsl"),
    shader!("common/vcolor_eject_resolve.wgsl"),
    shader!("common/vcolor_eject_apply.wgsl"),
    shader!("common/vcolor_eject_record.wgsl"),
    shader!("green_gauss_gradient.wgsl"),
    shader!("reduce_min.wgsl"),
    shader!("scan_add.wgsl"),
    shader!("scan_blocks.wgsl"),
    shader!("common/scan_blocks.wgsl"),
    shader!("vcolor_assign.wgsl"),
    shader!("vcolor_compact.wgsl"),
    shader!("vcolor_detect.wgsl"),
    shader!("vcolor_class_count.wgsl"),
    shader!("vcolor_class_offsets.wgsl"),
    shader!("vcolor_class_bucket.wgsl"),
    shader!("vcolor_recolor.wgsl"),
    shader!("vcolor_max.wgsl"),
    shader!("vcolor_eject_start.wgsl"),
    shader!("vcolor_eject_propose.wgsl"),
    shader!("vcolor_eject_resolve.wgsl"),
    shader!("vcolor_eject_apply.wgsl"),
    shader!("vcolor_eject_count.wgsl"),
    shader!("vcolor_eject_tail.wgsl"),
    shader!("common/swe_flux.wgsl"),
    shader!("common/swe_control.wgsl"),
    shader!("common/swe_clock.wgsl"),
    shader!("common/swe_cell.wgsl"),
    shader!("common/swe_muscl.wgsl"),
    shader!("common/swe_drain.wgsl"),
    shader!("common/swe_share.wgsl"),
    shader!("swe_edge_flux.wgsl"),
    shader!("swe_cell_gather.wgsl"),
    shader!("swe_local_dt.wgsl"),
    shader!("swe_time.wgsl"),
    shader!("swe_boundary_values.wgsl"),
    shader!("swe_gauges.wgsl"),
    shader!("swe_update.wgsl"),
    shader!("swe_fused_step.wgsl"),
    shader!("swe_fused_clock.wgsl"),
    shader!("swe_reconstruct.wgsl"),
    shader!("swe_edge_flux2.wgsl"),
    shader!("swe_drain.wgsl"),
    shader!("swe_drain_fix.wgsl"),
    shader!("common/smooth_relocate.wgsl"),
    shader!("smooth_hardware.wgsl"),
    shader!("smooth_texel.wgsl"),
    shader!("smooth_buffer.wgsl"),
    shader!("common/dg_euler.wgsl"),
    shader!("common/dg_tables.wgsl"),
    shader!("common/dg_edge.wgsl"),
    shader!("common/f32_pair.wgsl"),
    shader!("common/dg_rk.wgsl"),
    shader!("dg_volume.wgsl"),
    shader!("dg_surface.wgsl"),
    shader!("dg_trace.wgsl"),
    shader!("dg_flux.wgsl"),
    shader!("dg_stage.wgsl"),
    shader!("dg_limit.wgsl"),
    shader!("dg_local_dt.wgsl"),
    shader!("dg_time.wgsl"),
    shader!("stream_copy.wgsl"),
    shader!("common/amr_tree.wgsl"),
    shader!("common/amr_indicator.wgsl"),
    shader!("common/amr_face_owner.wgsl"),
    shader!("common/amr_book.wgsl"),
    shader!("common/group_scan.wgsl"),
    shader!("common/amr_raise.wgsl"),
    shader!("amr_flag.wgsl"),
    shader!("amr_smooth.wgsl"),
    shader!("amr_settle.wgsl"),
    shader!("amr_mark.wgsl"),
    shader!("amr_scan.wgsl"),
    shader!("amr_coarsen.wgsl"),
    shader!("amr_refine.wgsl"),
    shader!("amr_compact.wgsl"),
    shader!("amr_geometry.wgsl"),
    shader!("amr_faces.wgsl"),
    shader!("common/amr_reorder.wgsl"),
    shader!("amr_radix.wgsl"),
    shader!("amr_permute.wgsl"),
];

/// Names of the kernel shaders (the files outside `common/`), one entry point `main` each.
pub fn kernel_names() -> impl Iterator<Item = &'static str> {
    SHADER_FILES
        .iter()
        .map(|(n, _)| *n)
        .filter(|n| !n.starts_with("common/"))
        .map(|n| n.trim_end_matches(".wgsl"))
}

fn raw_source(file: &str) -> Result<&'static str> {
    source_file(SHADER_FILES, "", file)
}

/// Environment variable naming a directory whose files replace the embedded kernel sources of
/// the same path below `shaders/` (e.g. `common/scan_blocks.wgsl`, `cuda/amr_scan.cu`): variants
/// of a kernel run and measured on the GPU machine with one binary, without rebuilding it. Only
/// files the binary embeds can be replaced; each one replaced is named in a warning, so a
/// variant's figures are not taken for the embedded kernel's.
pub const KERNEL_DIR_ENV: &str = "CHROMAFLOW_KERNEL_DIR";

/// Largest kernel source read from the kernel directory (the largest embedded one is 22 KB).
const MAX_KERNEL_FILE_BYTES: u64 = 1 << 22;

/// The kernel directory's files read so far, by path, each read (and leaked) once a process.
static KERNEL_DIR_FILES: std::sync::Mutex<Vec<(std::path::PathBuf, &'static str)>> =
    std::sync::Mutex::new(Vec::new());

/// The source of `file` from an embedded list whose paths lie under `shaders/<prefix>`: the file
/// of that path in the [`KERNEL_DIR_ENV`] directory when the variable is set and the file is
/// there, else the embedded one. Errors name the file: not embedded, unreadable, too large, or
/// a variable that names no directory.
pub fn source_file(
    files: &'static [(&str, &str)],
    prefix: &str,
    file: &str,
) -> Result<&'static str> {
    let builtin = embedded(files, file)?;
    let Some(dir) = std::env::var_os(KERNEL_DIR_ENV).filter(|d| !d.is_empty()) else {
        return Ok(builtin);
    };
    let dir = std::path::PathBuf::from(dir);
    if !dir.is_dir() {
        return Err(Error::Gpu(format!(
            "{KERNEL_DIR_ENV}={} is not a directory",
            dir.display()
        )));
    }
    let path = dir.join(format!("{prefix}{file}"));
    let mut read = KERNEL_DIR_FILES
        .lock()
        .map_err(|_| Error::Gpu("the kernel directory's file list is poisoned".into()))?;
    if let Some((_, text)) = read.iter().find(|(p, _)| *p == path) {
        return Ok(text);
    }
    if !path.is_file() {
        return Ok(builtin);
    }
    let unreadable = |e: &dyn std::fmt::Display| {
        Error::Gpu(format!(
            "kernel source {} ({KERNEL_DIR_ENV}): {e}",
            path.display()
        ))
    };
    let bytes = std::fs::metadata(&path).map_err(|e| unreadable(&e))?.len();
    if bytes > MAX_KERNEL_FILE_BYTES {
        return Err(unreadable(&format!(
            "{bytes} bytes, more than the {MAX_KERNEL_FILE_BYTES} a kernel source may have"
        )));
    }
    let text = std::fs::read_to_string(&path).map_err(|e| unreadable(&e))?;
    log::warn!(
        "kernel source shaders/{prefix}{file} read from {} ({KERNEL_DIR_ENV}), not the embedded one",
        path.display()
    );
    let text: &'static str = Box::leak(text.into_boxed_str());
    read.push((path, text));
    Ok(text)
}

/// The WGSL sources the kernels are built from: the embedded ones, each replaced by the
/// [`KERNEL_DIR_ENV`] directory's file where there is one (what wgpu's pipeline cache is keyed
/// by; a file that cannot be read counts as the embedded one, its kernel's build says why).
pub fn wgsl_sources() -> Vec<(&'static str, &'static str)> {
    SHADER_FILES
        .iter()
        .map(|&(path, builtin)| (path, source_file(SHADER_FILES, "", path).unwrap_or(builtin)))
        .collect()
}

/// The source of `file` in an embedded (path, source) list.
pub fn embedded(files: &'static [(&str, &str)], file: &str) -> Result<&'static str> {
    files
        .iter()
        .find(|(n, _)| *n == file)
        .map(|(_, s)| *s)
        .ok_or_else(|| Error::Gpu(format!("shader file '{file}' is not embedded")))
}

/// The full WGSL source of kernel `name` (file stem), with includes expanded.
pub fn kernel_source(name: &str) -> Result<String> {
    expand_includes(&format!("{name}.wgsl"), &raw_source)
}

/// Expand `// #include "path"` lines recursively (each file once), reading files with `read`.
/// Shared by the WGSL kernels and their CUDA twins.
pub fn expand_includes(file: &str, read: &dyn Fn(&str) -> Result<&'static str>) -> Result<String> {
    fn go(
        file: &str,
        read: &dyn Fn(&str) -> Result<&'static str>,
        out: &mut String,
        seen: &mut Vec<String>,
    ) -> Result<()> {
        if seen.iter().any(|s| s == file) {
            return Ok(());
        }
        seen.push(file.to_string());
        for line in read(file)?.lines() {
            if let Some(rest) = line.trim().strip_prefix("// #include") {
                go(rest.trim().trim_matches('"'), read, out, seen)?;
            } else {
                out.push_str(line);
                out.push('\n');
            }
        }
        Ok(())
    }
    let mut out = String::new();
    go(file, read, &mut out, &mut Vec::new())?;
    Ok(out)
}

/// Expand every loop marked `// #unroll` (the comment on the line before a
/// `for (var k = A; k < B; k = k + 1u) {` header) into B - A blocks `{ const k = <i>u; body }`.
/// Why: wgpu's runtime checks clamp dynamic indices into private arrays and add a counter to
/// every loop; both keep drivers from promoting the DG and Roe tables to registers (2-4x). With
/// a literal index naga needs no clamp and there is no loop to bound, so the checked kernels
/// run as fast as unchecked ones. A and B are sums of products of u32/i32 literals and names
/// given in `constants` (pipeline constants) or declared `override`/`const` in the source.
pub fn unroll_loops(source: &str, constants: &[(&str, f64)]) -> Result<String> {
    let mut values: Vec<(String, i64)> = constants
        .iter()
        .map(|(n, v)| (n.to_string(), *v as i64))
        .collect();
    for line in source.lines() {
        if let Some((name, value)) = declared_integer(line) {
            if !values.iter().any(|(n, _)| *n == name) {
                values.push((name, value));
            }
        }
    }
    let lines: Vec<&str> = source.lines().collect();
    let mut out = String::new();
    unroll_block(&lines, 0, &values, &mut out)?;
    Ok(out)
}

/// `override NAME: u32 = 3u;` or `const NAME: i32 = 4;` -> (NAME, value).
fn declared_integer(line: &str) -> Option<(String, i64)> {
    let rest = line
        .trim()
        .strip_prefix("override ")
        .or_else(|| line.trim().strip_prefix("const "))?;
    let (lhs, rhs) = rest.split_once('=')?;
    let name = lhs.split(':').next()?.trim().to_string();
    let value = parse_literal(rhs.trim().trim_end_matches(';').trim())?;
    Some((name, value.0))
}

/// An integer literal with its WGSL suffix ("u", "i" or "").
fn parse_literal(s: &str) -> Option<(i64, &'static str)> {
    let (digits, suffix) = if let Some(d) = s.strip_suffix('u') {
        (d, "u")
    } else if let Some(d) = s.strip_suffix('i') {
        (d, "i")
    } else {
        (s, "")
    };
    digits.parse::<i64>().ok().map(|v| (v, suffix))
}

fn eval_bound(expr: &str, values: &[(String, i64)]) -> std::result::Result<i64, String> {
    let mut sum = 0;
    for term in expr.split('+') {
        let mut product = 1;
        for atom in term.split('*') {
            let atom = atom.trim();
            let v = match parse_literal(atom) {
                Some((v, _)) => v,
                None => values
                    .iter()
                    .find(|(n, _)| n == atom)
                    .map(|(_, v)| *v)
                    .ok_or_else(|| format!("unknown constant '{atom}' in loop bound '{expr}'"))?,
            };
            product *= v;
        }
        sum += product;
    }
    Ok(sum)
}

/// Net `{` minus `}` on a line, ignoring a trailing `//` comment.
fn brace_balance(line: &str) -> i64 {
    let code = line.split("//").next().unwrap_or("");
    code.matches('{').count() as i64 - code.matches('}').count() as i64
}

fn has_word(text: &str, word: &str) -> bool {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .any(|w| w == word)
}

/// Parse `for (var k = A; k < B; k = k + 1u) {` -> (k, A, B).
fn parse_for_header(line: &str) -> Option<(&str, &str, &str)> {
    let inner = line.trim().strip_prefix("for (")?.strip_suffix(") {")?;
    let mut parts = inner.split(';');
    let (var, init) = parts.next()?.trim().strip_prefix("var ")?.split_once('=')?;
    let var = var.trim();
    let (lhs, bound) = parts.next()?.split_once('<')?;
    let step: String = parts
        .next()?
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect();
    let unit_step = [
        format!("{var}={var}+1u"),
        format!("{var}={var}+1"),
        format!("{var}+=1u"),
        format!("{var}++"),
    ];
    (lhs.trim() == var && unit_step.contains(&step) && parts.next().is_none()).then_some((
        var,
        init.trim(),
        bound.trim(),
    ))
}

/// Copy `lines` to `out`, expanding marked loops; `first` is the 1-based number of lines[0].
fn unroll_block(
    lines: &[&str],
    first: usize,
    values: &[(String, i64)],
    out: &mut String,
) -> Result<()> {
    let fail =
        |line: usize, msg: String| Error::Gpu(format!("#unroll at line {}: {msg}", line + 1));
    let mut i = 0;
    while i < lines.len() {
        if lines[i].trim() != "// #unroll" {
            out.push_str(lines[i]);
            out.push('\n');
            i += 1;
            continue;
        }
        let at = first + i;
        let header = lines.get(i + 1).copied().unwrap_or("");
        let (var, init, bound) = parse_for_header(header).ok_or_else(|| {
            fail(
                at,
                format!(
                    "expected 'for (var k = A; k < B; k = k + 1u) {{', found '{}'",
                    header.trim()
                ),
            )
        })?;
        let (start, suffix) = parse_literal(init)
            .ok_or_else(|| fail(at, format!("loop start '{init}' is not a literal")))?;
        let end = eval_bound(bound, values).map_err(|m| fail(at, m))?;
        let mut depth = 1;
        let mut close = i + 2;
        while close < lines.len() {
            depth += brace_balance(lines[close]);
            if depth == 0 {
                break;
            }
            close += 1;
        }
        if close == lines.len() || lines[close].trim() != "}" {
            return Err(fail(
                at,
                "the loop body's closing '}' must stand on its own line".into(),
            ));
        }
        let body_lines = &lines[i + 2..close];
        if body_lines.iter().any(|l| {
            has_word(l.split("//").next().unwrap_or(""), "break") || has_word(l, "continue")
        }) {
            return Err(fail(
                at,
                "a loop with break or continue cannot be unrolled".into(),
            ));
        }
        let mut body = String::new();
        unroll_block(body_lines, first + i + 2, values, &mut body)?;
        let indent = &header[..header.len() - header.trim_start().len()];
        for value in start..end {
            out.push_str(&format!("{indent}{{ const {var} = {value}{suffix};\n"));
            out.push_str(&body);
            out.push_str(&format!("{indent}}}\n"));
        }
        i = close + 1;
    }
    Ok(())
}
