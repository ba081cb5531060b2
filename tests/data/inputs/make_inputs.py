"""Small meshes in every input format chromaflow reads, made by the tools users have.

rect: [0,2]x[0,1] triangles, boundary groups "left" (1), "right" (2), "walls" (3), surface
"fluid" (10). box: unit cube tetrahedra, faces "inlet" (1), "outlet" (2), "walls" (3), volume
"solid" (20). Written as Gmsh 4.1 (the reference), Gmsh 4.0 ASCII (Gmsh) and binary (meshio), second- and
third-order Gmsh, Medit .mesh (by Gmsh) and .meshb versions 1-4 (meshio writes version 4 with
int64 data, this script all four versions, byte by byte after libMeshb), VTU inline ASCII/binary/zlib (meshio) and
appended raw / appended zlib / appended base64 (VTK's own writer: ParaView's and VTK's defaults).

Run from this directory: python3 make_inputs.py   (needs `pip install gmsh meshio vtk`)
"""
import struct

import gmsh
import meshio
import numpy as np


def build(name):
    gmsh.model.add(name)
    occ = gmsh.model.occ
    if name == "rect":
        occ.addRectangle(0, 0, 0, 2, 1)
        occ.synchronize()
        left, right, walls = [], [], []
        for _, tag in gmsh.model.getEntities(1):
            x0, _, _, x1, _, _ = gmsh.model.getBoundingBox(1, tag)
            (left if x1 < 1e-6 else right if x0 > 2 - 1e-6 else walls).append(tag)
        gmsh.model.addPhysicalGroup(1, left, 1, "left")
        gmsh.model.addPhysicalGroup(1, right, 2, "right")
        gmsh.model.addPhysicalGroup(1, walls, 3, "walls")
        gmsh.model.addPhysicalGroup(2, [1], 10, "fluid")
        size, dim = 0.3, 2
    else:
        occ.addBox(0, 0, 0, 1, 1, 1)
        occ.synchronize()
        inlet, outlet, walls = [], [], []
        for _, tag in gmsh.model.getEntities(2):
            x0, _, _, x1, _, _ = gmsh.model.getBoundingBox(2, tag)
            (inlet if x1 < 1e-6 else outlet if x0 > 1 - 1e-6 else walls).append(tag)
        gmsh.model.addPhysicalGroup(2, inlet, 1, "inlet")
        gmsh.model.addPhysicalGroup(2, outlet, 2, "outlet")
        gmsh.model.addPhysicalGroup(2, walls, 3, "walls")
        gmsh.model.addPhysicalGroup(3, [1], 20, "solid")
        size, dim = 0.5, 3
    gmsh.option.setNumber("Mesh.MeshSizeMin", size)
    gmsh.option.setNumber("Mesh.MeshSizeMax", size)
    gmsh.option.setNumber("Mesh.RandomSeed", 1)
    gmsh.model.mesh.generate(dim)


def write_msh(path, version, binary):
    gmsh.option.setNumber("Mesh.MshFileVersion", version)
    gmsh.option.setNumber("Mesh.Binary", binary)
    gmsh.write(path)


MEDIT_KW = {"line": 5, "triangle": 6, "quad": 7, "tetra": 8, "wedge": 9, "hexahedron": 10}


def write_meshb(path, mesh, version, big_endian=False):
    """libMeshb layout: int32 1 and the version, then keywords (int32 code, next-keyword
    position, count, records); v1 float32 reals, v2+ float64; v3+ 64-bit positions; v4 64-bit
    integers. References are the Gmsh physical tags."""
    e = ">" if big_endian else "<"
    real = "f" if version == 1 else "d"
    pos_f = "q" if version >= 3 else "i"
    int_f = "q" if version == 4 else "i"
    out = bytearray(struct.pack(e + "ii", 1, version))

    def keyword(code, count, body):
        head = struct.calcsize(e + "i" + pos_f) + (struct.calcsize(e + int_f) if count is not None else 0)
        nxt = len(out) + head + len(body)
        out.extend(struct.pack(e + "i" + pos_f, code, nxt))
        if count is not None:
            out.extend(struct.pack(e + int_f, count))
        out.extend(body)

    dim = 3 if any(c.type == "tetra" for c in mesh.cells) else 2
    keyword(3, None, struct.pack(e + "i", dim))
    body = bytearray()
    for p in mesh.points:
        body += struct.pack(e + real * dim + int_f, *p[:dim], 0)
    keyword(4, len(mesh.points), body)
    for block, phys in zip(mesh.cells, mesh.cell_data["gmsh:physical"]):
        if block.type not in MEDIT_KW:
            continue
        body = bytearray()
        for row, ref in zip(block.data + 1, phys):
            body += struct.pack(e + int_f * (len(row) + 1), *row, ref)
        keyword(MEDIT_KW[block.type], len(block.data), body)
    out.extend(struct.pack(e + "i" + pos_f, 54, 0))
    with open(path, "wb") as f:
        f.write(out)


def write_vtk_appended(src, path, compress, encode=False):
    import vtk

    reader = vtk.vtkXMLUnstructuredGridReader()
    reader.SetFileName(src)
    reader.Update()
    w = vtk.vtkXMLUnstructuredGridWriter()
    w.SetInputData(reader.GetOutput())
    w.SetFileName(path)
    w.SetDataModeToAppended()
    w.SetEncodeAppendedData(encode)  # VTK's default is on: base64 appended data
    if compress:
        w.SetCompressorTypeToZLib()
    else:
        w.SetCompressorTypeToNone()
    w.Write()


gmsh.initialize()
gmsh.option.setNumber("General.Terminal", 0)
for name in ["rect", "box"]:
    build(name)
    write_msh(f"{name}_v41.msh", 4.1, 0)
    write_msh(f"{name}_v40_ascii.msh", 4.0, 0)
    gmsh.option.setNumber("Mesh.SaveElementTagType", 2)  # Medit references = physical tags
    gmsh.write(f"{name}.mesh")
    gmsh.model.mesh.setOrder(2)
    write_msh(f"{name}_p2_v41_bin.msh", 4.1, 1)
    write_msh(f"{name}_p2_v22.msh", 2.2, 0)
    if name == "rect":
        gmsh.model.mesh.setOrder(3)
        write_msh("rect_p3_v41.msh", 4.1, 0)
    gmsh.model.remove()
gmsh.finalize()

for name in ["rect", "box"]:
    m = meshio.read(f"{name}_v41.msh")
    pts = m.points[:, :2] if name == "rect" else m.points
    ref = {"medit:ref": m.cell_data["gmsh:physical"]}
    meshio.write(f"{name}_meshio.meshb", meshio.Mesh(pts, m.cells, cell_data=ref))  # version 4
    # Gmsh writes 4.0 only in ASCII; meshio writes it in binary too (no $Entities, so no tags).
    meshio.gmsh.write(
        f"{name}_v40_bin.msh", meshio.Mesh(m.points, m.cells), fmt_version="4.0", binary=True
    )
    tagged = meshio.Mesh(m.points, m.cells, cell_data={"gmsh:physical": m.cell_data["gmsh:physical"]})
    meshio.vtu.write(f"{name}_ascii.vtu", tagged, binary=False)
    meshio.vtu.write(f"{name}_binary.vtu", tagged, binary=True, compression=None)
    meshio.vtu.write(f"{name}_zlib.vtu", tagged, binary=True, compression="zlib")
    write_vtk_appended(f"{name}_binary.vtu", f"{name}_appended.vtu", False)
    write_vtk_appended(f"{name}_binary.vtu", f"{name}_appended_zlib.vtu", True)
    write_vtk_appended(f"{name}_binary.vtu", f"{name}_appended_b64.vtu", False, True)
    write_vtk_appended(f"{name}_binary.vtu", f"{name}_appended_b64_zlib.vtu", True, True)
m = meshio.read("rect_v41.msh")
write_meshb("rect_v1.meshb", m, 1)
write_meshb("rect_v2_be.meshb", m, 2, big_endian=True)
box = meshio.read("box_v41.msh")
write_meshb("box_v3.meshb", box, 3)
write_meshb("box_v4.meshb", box, 4)
