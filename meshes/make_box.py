"""Unit cube [0,1]^3 meshed with tetrahedra (a few hundred).

Physical groups: surfaces "inlet" (tag 1, x = 0), "outlet" (tag 2, x = 1), "walls" (tag 3, the
other four faces); volume "solid" (tag 20). Volume = 1.
Written in all four .msh flavours. Run: python3 make_box.py   (needs `pip install gmsh`)
"""
import gmsh

gmsh.initialize()
gmsh.option.setNumber("General.Terminal", 0)
gmsh.model.add("box")
occ = gmsh.model.occ
vol = occ.addBox(0, 0, 0, 1, 1, 1)
occ.synchronize()

inlet, outlet, walls = [], [], []
for dim, tag in gmsh.model.getEntities(2):
    x0, _, _, x1, _, _ = gmsh.model.getBoundingBox(dim, tag)
    if x1 < 1e-6:
        inlet.append(tag)
    elif x0 > 1 - 1e-6:
        outlet.append(tag)
    else:
        walls.append(tag)
gmsh.model.addPhysicalGroup(2, inlet, 1, "inlet")
gmsh.model.addPhysicalGroup(2, outlet, 2, "outlet")
gmsh.model.addPhysicalGroup(2, walls, 3, "walls")
gmsh.model.addPhysicalGroup(3, [vol], 20, "solid")

gmsh.option.setNumber("Mesh.MeshSizeMin", 0.3)
gmsh.option.setNumber("Mesh.MeshSizeMax", 0.3)
gmsh.option.setNumber("Mesh.RandomSeed", 1)
gmsh.model.mesh.generate(3)

for version, vname in [(2.2, "v22"), (4.1, "v41")]:
    for binary, bname in [(0, "ascii"), (1, "bin")]:
        gmsh.option.setNumber("Mesh.MshFileVersion", version)
        gmsh.option.setNumber("Mesh.Binary", binary)
        gmsh.write(f"box_{vname}_{bname}.msh")
gmsh.finalize()
