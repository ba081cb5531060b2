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

    /// Groups used (sorted, deduplicated), the range group included.
    pub fn groups(&self) -> Vec<u32> {
        let mut g: Vec<u32> = self.bindings.iter().map(|b| b.group).collect();
        g.dedup();
        g
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
    Ok(KernelInterface {
        stem: stem.to_string(),
        bindings,
        overrides,
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
