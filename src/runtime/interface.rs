//! The interface of a kernel, reflected from its WGSL with naga: the bindings (group, binding,
//! kind, element type), the override constants and their types. The runtime builds wgpu bind
//! group layouts from it, checks the arguments of every launch against it, types the NVRTC
//! `-D` defines of the CUDA twin by it, and the tests compare it with the twin's parameter list
//! and the `#[repr(C)]` Rust structs.

use crate::error::{Error, Result};
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

/// The group every kernel binds its [`super::ItemRange`] at (binding 0, dynamic offset).
pub const RANGE_GROUP: u32 = 1;

/// What a binding is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BindingKind {
    /// `var<storage, read>` or `var<storage, read_write>`.
    Storage { read_only: bool },
    /// `var<uniform>` of a struct of `size` bytes.
    Uniform { size: u32 },
    /// `texture_2d<f32>`.
    Texture,
    /// `sampler` (folded into its texture's argument).
    Sampler,
}

/// One binding of a kernel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Binding {
    pub group: u32,
    pub binding: u32,
    pub name: String,
    pub kind: BindingKind,
    /// The element type of a runtime-sized array (`vec4<f32>`, `u32`, `atomic<u32>`, a struct
    /// name), or the type itself (`Control`, `SmoothParams`, `texture_2d<f32>`).
    pub ty: String,
}

/// Scalar type of an override constant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScalarType {
    F32,
    U32,
    I32,
    Bool,
}

/// An override constant.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Override {
    pub name: String,
    pub ty: ScalarType,
}

/// The reflected interface of `shaders/<stem>.wgsl`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelInterface {
    pub stem: String,
    /// All bindings, sorted by (group, binding).
    pub bindings: Vec<Binding>,
    pub overrides: Vec<Override>,
    /// Threads per workgroup of the entry point `main` (`@workgroup_size(X)`, 1D): the runtime
    /// sizes a launch's grid by it and launches the CUDA twin with blocks of as many threads.
    pub workgroup_size: u32,
    /// (name, size in bytes) of every named struct the module declares, for the checks of
    /// the `#[repr(C)]` Rust mirrors.
    pub structs: Vec<(String, u32)>,
}

impl KernelInterface {
    /// The arguments a launch passes, in order: every binding outside [`RANGE_GROUP`] except
    /// samplers.
    pub fn arguments(&self) -> Vec<Binding> {
        self.bindings
            .iter()
            .filter(|b| b.group != RANGE_GROUP && b.kind != BindingKind::Sampler)
            .cloned()
            .collect()
    }

    /// The type of override constant `name`.
    pub fn override_type(&self, name: &str) -> Option<ScalarType> {
        self.overrides.iter().find(|o| o.name == name).map(|o| o.ty)
    }
}

fn type_name(module: &naga::Module, ty: naga::Handle<naga::Type>) -> String {
    let t = &module.types[ty];
    if let Some(name) = &t.name {
        return name.clone();
    }
    match &t.inner {
        naga::TypeInner::Scalar(s) => scalar_name(*s).to_string(),
        naga::TypeInner::Vector { size, scalar } => {
            format!("vec{}<{}>", *size as u8, scalar_name(*scalar))
        }
        naga::TypeInner::Atomic(s) => format!("atomic<{}>", scalar_name(*s)),
        naga::TypeInner::Array { base, .. } => format!("array<{}>", type_name(module, *base)),
        naga::TypeInner::Image { .. } => "texture_2d<f32>".into(),
        naga::TypeInner::Sampler { .. } => "sampler".into(),
        other => format!("{other:?}"),
    }
}

fn scalar_name(s: naga::Scalar) -> &'static str {
    match (s.kind, s.width) {
        (naga::ScalarKind::Float, 4) => "f32",
        (naga::ScalarKind::Float, 8) => "f64",
        (naga::ScalarKind::Uint, 4) => "u32",
        (naga::ScalarKind::Sint, 4) => "i32",
        (naga::ScalarKind::Bool, _) => "bool",
        _ => "?",
    }
}

/// Reflect a parsed module (`stem` names it in errors).
pub fn reflect_module(stem: &str, module: &naga::Module) -> Result<KernelInterface> {
    let mut layouter = naga::proc::Layouter::default();
    layouter
        .update(module.to_ctx())
        .map_err(|e| Error::Gpu(format!("kernel shaders/{stem}.wgsl: layout: {e}")))?;
    let mut bindings = Vec::new();
    for (_, var) in module.global_variables.iter() {
        let Some(rb) = &var.binding else { continue };
        let name = var.name.clone().unwrap_or_default();
        let inner = &module.types[var.ty].inner;
        let (kind, ty) = match var.space {
            naga::AddressSpace::Storage { access } => {
                let elem = match inner {
                    naga::TypeInner::Array { base, .. } => type_name(module, *base),
                    _ => type_name(module, var.ty),
                };
                (
                    BindingKind::Storage {
                        read_only: !access.contains(naga::StorageAccess::STORE),
                    },
                    elem,
                )
            }
            naga::AddressSpace::Uniform => (
                BindingKind::Uniform {
                    size: layouter[var.ty].size,
                },
                type_name(module, var.ty),
            ),
            naga::AddressSpace::Handle => match inner {
                naga::TypeInner::Sampler { .. } => (BindingKind::Sampler, "sampler".into()),
                naga::TypeInner::Image { .. } => (BindingKind::Texture, "texture_2d<f32>".into()),
                other => {
                    return Err(Error::Gpu(format!(
                        "kernel shaders/{stem}.wgsl: binding '{name}' of unsupported type {other:?}"
                    )))
                }
            },
            other => {
                return Err(Error::Gpu(format!(
                    "kernel shaders/{stem}.wgsl: binding '{name}' in unsupported address space \
                     {other:?}"
                )))
            }
        };
        bindings.push(Binding {
            group: rb.group,
            binding: rb.binding,
            name,
            kind,
            ty,
        });
    }
    bindings.sort_by_key(|b| (b.group, b.binding));
    let overrides = module
        .overrides
        .iter()
        .map(|(_, o)| {
            let ty = match &module.types[o.ty].inner {
                naga::TypeInner::Scalar(s) => match s.kind {
                    naga::ScalarKind::Float => ScalarType::F32,
                    naga::ScalarKind::Uint => ScalarType::U32,
                    naga::ScalarKind::Sint => ScalarType::I32,
                    _ => ScalarType::Bool,
                },
                _ => ScalarType::F32,
            };
            Override {
                name: o.name.clone().unwrap_or_default(),
                ty,
            }
        })
        .collect();
    let structs = module
        .types
        .iter()
        .filter(|(_, t)| matches!(t.inner, naga::TypeInner::Struct { .. }))
        .filter_map(|(h, t)| t.name.clone().map(|n| (n, layouter[h].size)))
        .collect();
    let workgroup_size = match module.entry_points.iter().find(|e| e.name == "main") {
        Some(e) if e.workgroup_size_overrides.is_none() && e.workgroup_size[1..] == [1, 1] => {
            e.workgroup_size[0]
        }
        Some(e) => {
            return Err(Error::Gpu(format!(
                "kernel shaders/{stem}.wgsl: entry point 'main' has workgroup size {:?}; kernels \
                 are 1D with a size fixed in the source",
                e.workgroup_size
            )))
        }
        None => {
            return Err(Error::Gpu(format!(
                "kernel shaders/{stem}.wgsl has no entry point 'main'"
            )))
        }
    };
    Ok(KernelInterface {
        stem: stem.to_string(),
        bindings,
        overrides,
        workgroup_size,
        structs,
    })
}

/// The interface of kernel `stem` (parsed once per process and cached).
pub fn reflect_kernel(stem: &str) -> Result<KernelInterface> {
    static CACHE: OnceLock<Mutex<HashMap<String, KernelInterface>>> = OnceLock::new();
    let cache = CACHE.get_or_init(|| Mutex::new(HashMap::new()));
    if let Some(i) = cache
        .lock()
        .map_err(|_| Error::Gpu("interface cache poisoned".into()))?
        .get(stem)
    {
        return Ok(i.clone());
    }
    let source = super::shaders::kernel_source(stem)?;
    let module = naga::front::wgsl::parse_str(&source).map_err(|e| {
        Error::Gpu(format!(
            "kernel shaders/{stem}.wgsl: {}",
            e.emit_to_string(&source)
        ))
    })?;
    let iface = reflect_module(stem, &module)?;
    cache
        .lock()
        .map_err(|_| Error::Gpu("interface cache poisoned".into()))?
        .insert(stem.to_string(), iface.clone());
    Ok(iface)
}

/// The parameter list of `__global__ void <entry>(...)` in a CUDA source, one string per
/// parameter with whitespace collapsed (e.g. `const float4* __restrict__ cells`); `None` when
/// the source has no such kernel.
pub fn cuda_parameters(source: &str, entry: &str) -> Option<Vec<String>> {
    let sig = format!("void {entry}(");
    let at = source.find(&sig)? + sig.len();
    let end = at + source[at..].find(')')?;
    Some(
        source[at..end]
            .split(',')
            .map(|p| p.split_whitespace().collect::<Vec<_>>().join(" "))
            .filter(|p| !p.is_empty())
            .collect(),
    )
}

/// The entry points (`extern "C" __global__ void NAME(`) of a CUDA source, in order.
pub fn cuda_entries(source: &str) -> Vec<String> {
    source
        .split("__global__ void ")
        .skip(1)
        .filter_map(|rest| rest.split('(').next())
        .map(|n| n.trim().to_string())
        .collect()
}

/// The CUDA spelling of a WGSL element type (`vec4<f32>` -> `float4`, `atomic<u32>` -> `u32`,
/// struct names unchanged).
pub fn cuda_type(wgsl: &str) -> String {
    match wgsl {
        "f32" => "float".into(),
        "u32" | "atomic<u32>" => "u32".into(),
        "i32" => "int".into(),
        "vec2<f32>" => "float2".into(),
        "vec4<f32>" => "float4".into(),
        "vec4<u32>" => "uint4".into(),
        "vec2<u32>" => "uint2".into(),
        other => other.to_string(),
    }
}

/// Why CUDA parameter `param` does not take WGSL argument `arg`, or `None` when it does:
/// storage buffers are `[const] T*` with `const` exactly when read-only, uniform structs are
/// passed by value, textures are a `cudaTextureObject_t` or their texels as `const float4*`;
/// names agree except for textures passed as texels.
pub fn twin_mismatch(arg: &Binding, param: &str) -> Option<String> {
    let words: Vec<&str> = param
        .split(|c: char| c.is_whitespace() || c == '*')
        .filter(|w| !w.is_empty() && *w != "__restrict__")
        .collect();
    let name = *words.last()?;
    let is_const = words.first() == Some(&"const");
    let ty = if is_const {
        words.get(1)?
    } else {
        words.first()?
    };
    let pointer = param.contains('*');
    let expected_ty = cuda_type(&arg.ty);
    let fail = |why: String| Some(format!("'{param}' for WGSL '{}': {why}", arg.name));
    match &arg.kind {
        BindingKind::Storage { read_only } => {
            if !pointer {
                return fail("a storage buffer must be a pointer".into());
            }
            if *ty != expected_ty {
                return fail(format!("element type {ty}, expected {expected_ty}"));
            }
            if is_const != *read_only {
                return fail(format!(
                    "const is {is_const} but the WGSL binding is {}",
                    if *read_only {
                        "read-only"
                    } else {
                        "read_write"
                    }
                ));
            }
        }
        BindingKind::Uniform { .. } => {
            if pointer || *ty != expected_ty {
                return fail(format!("a uniform {expected_ty} is passed by value"));
            }
        }
        BindingKind::Texture => {
            let texels = pointer && is_const && *ty == "float4";
            if !(texels || *ty == "cudaTextureObject_t") {
                return fail("a texture is a cudaTextureObject_t or const float4* texels".into());
            }
            return None;
        }
        BindingKind::Sampler => return fail("samplers are not parameters".into()),
    }
    (name != arg.name).then(|| format!("'{param}': name differs from WGSL '{}'", arg.name))
}
