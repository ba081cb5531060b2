//! Gmsh 4.1 ASCII writer. Physical groups survive a write/read round trip: every distinct
//! region tag becomes one entity of the mesh's dimension and every distinct boundary tag one
//! entity of dimension - 1, each carrying that tag as its physical tag (tag 0 = no physical
//! group), and `$PhysicalNames` is written from [`Mesh::physical_names`]. Elements and boundary
//! facets keep their order. Coordinates are written
//! with Rust's shortest round-trip formatting, so reading the file back gives identical numbers.

use std::collections::BTreeMap;
use std::path::Path;

use crate::error::{Error, Result};
use crate::mesh::model::Mesh;

/// Element blocks in file order: ((entity dimension, entity tag, Gmsh type), vertex lists).
/// Consecutive elements with the same entity and type share a block, so element and facet
/// order survive the round trip (4.1 allows several blocks per entity).
type Blocks<'a> = Vec<((usize, i32, u32), Vec<&'a [u32]>)>;

/// Append an element to the last block if it has the same key, else start a block.
fn push_block<'a>(blocks: &mut Blocks<'a>, key: (usize, i32, u32), verts: &'a [u32]) {
    match blocks.last_mut() {
        Some((k, v)) if *k == key => v.push(verts),
        _ => blocks.push((key, vec![verts])),
    }
}

/// Write `mesh` as a Gmsh 4.1 ASCII file (atomically).
pub fn write_msh41(mesh: &Mesh, path: &Path) -> Result<()> {
    if mesh.dim != 2 && mesh.dim != 3 {
        return Err(Error::Invalid(format!(
            "cannot write {}: mesh dimension {} (need 2 or 3)",
            path.display(),
            mesh.dim
        )));
    }
    let dim = mesh.dim;
    // Entities: one per distinct tag, numbered from 1 within each dimension.
    let mut region_entity: BTreeMap<i32, i32> = BTreeMap::new();
    for &t in &mesh.region_tags {
        let next = region_entity.len() as i32 + 1;
        region_entity.entry(t).or_insert(next);
    }
    let mut facet_entity: BTreeMap<i32, i32> = BTreeMap::new();
    for f in &mesh.boundary_facets {
        let next = facet_entity.len() as i32 + 1;
        facet_entity.entry(f.tag).or_insert(next);
    }
    let mut blocks: Blocks = Vec::new();
    for e in 0..mesh.num_elements() {
        let ent = region_entity
            .get(&mesh.region_tags[e])
            .copied()
            .unwrap_or(1);
        push_block(
            &mut blocks,
            (dim, ent, mesh.kinds[e].gmsh_type()),
            mesh.element(e),
        );
    }
    for f in &mesh.boundary_facets {
        let ent = facet_entity.get(&f.tag).copied().unwrap_or(1);
        let t = match f.vertices.len() {
            2 => 1,
            3 => 2,
            4 => 3,
            n => {
                return Err(Error::Invalid(format!(
                    "cannot write {}: boundary facet with {n} vertices",
                    path.display()
                )))
            }
        };
        push_block(&mut blocks, (dim - 1, ent, t), &f.vertices);
    }
    let np = mesh.num_points();
    if let Some(&v) = blocks
        .iter()
        .flat_map(|(_, els)| els.iter().flat_map(|e| e.iter()))
        .find(|&&v| v as usize >= np)
    {
        return Err(Error::Invalid(format!(
            "cannot write {}: vertex index {v} out of range ({np} vertices)",
            path.display()
        )));
    }
    let bbox = |blocks: &Blocks, d: usize, ent: i32| {
        let mut lo = [f64::INFINITY; 3];
        let mut hi = [f64::NEG_INFINITY; 3];
        for ((bd, be, _), els) in blocks.iter() {
            if *bd != d || *be != ent {
                continue;
            }
            for &v in els.iter().flat_map(|e| e.iter()) {
                let p = mesh.points[v as usize];
                for k in 0..3 {
                    lo[k] = lo[k].min(p[k]);
                    hi[k] = hi[k].max(p[k]);
                }
            }
        }
        (lo, hi)
    };

    crate::files::atomic_write(path, |w| {
        writeln!(w, "$MeshFormat\n4.1 0 8\n$EndMeshFormat")?;
        if !mesh.physical_names.is_empty() {
            writeln!(w, "$PhysicalNames\n{}", mesh.physical_names.len())?;
            for ((d, t), name) in &mesh.physical_names {
                writeln!(w, "{d} {t} \"{}\"", name.replace('"', "'"))?;
            }
            writeln!(w, "$EndPhysicalNames")?;
        }
        writeln!(w, "$Entities")?;
        let mut counts = [0usize; 4];
        counts[dim] = region_entity.len();
        counts[dim - 1] = facet_entity.len();
        writeln!(w, "{} {} {} {}", counts[0], counts[1], counts[2], counts[3])?;
        for d in 1..=dim {
            let ents = if d == dim {
                &region_entity
            } else if d + 1 == dim {
                &facet_entity
            } else {
                continue;
            };
            for (&tag, &ent) in ents {
                let (lo, hi) = bbox(&blocks, d, ent);
                write!(
                    w,
                    "{ent} {:?} {:?} {:?} {:?} {:?} {:?} ",
                    lo[0], lo[1], lo[2], hi[0], hi[1], hi[2]
                )?;
                if tag == 0 {
                    writeln!(w, "0 0")?;
                } else {
                    writeln!(w, "1 {tag} 0")?;
                }
            }
        }
        writeln!(w, "$EndEntities")?;

        // All nodes in one block, classified on the first entity of the top dimension.
        writeln!(w, "$Nodes\n1 {np} 1 {np}")?;
        writeln!(w, "{dim} 1 0 {np}")?;
        for v in 1..=np {
            writeln!(w, "{v}")?;
        }
        for p in &mesh.points {
            writeln!(w, "{:?} {:?} {:?}", p[0], p[1], p[2])?;
        }
        writeln!(w, "$EndNodes")?;

        let ne: usize = blocks.iter().map(|(_, els)| els.len()).sum();
        writeln!(w, "$Elements\n{} {ne} 1 {ne}", blocks.len())?;
        let mut tag = 1usize;
        for ((d, ent, t), els) in &blocks {
            writeln!(w, "{d} {ent} {t} {}", els.len())?;
            for e in els {
                write!(w, "{tag}")?;
                for &v in e.iter() {
                    write!(w, " {}", v + 1)?;
                }
                writeln!(w)?;
                tag += 1;
            }
        }
        writeln!(w, "$EndElements")?;
        Ok(())
    })
}
