"""Unit square [0,1]^2 with a circular hole (centre (0.5, 0.5), radius 0.2), triangles.

Physical groups: curves "walls" (tag 1, the outer square) and "hole" (tag 2, the circle);
surface "fluid" (tag 10). Area = 1 - pi * 0.2^2 (the mesh is slightly larger: the circle is
approximated by a polygon). Written in all four .msh flavours (2.2 / 4.1, ASCII / binary).
Run: python3 make_square_hole.py   (needs `pip install gmsh`)
"""
import gmsh

gmsh.initialize()
gmsh.option.setNumber("General.Terminal", 0)
gmsh.model.add("square_hole")
occ = gmsh.model.occ
square = occ.addRectangle(0, 0, 0, 1, 1)
hole = occ.addDisk(0.5, 0.5, 0, 0.2, 0.2)
occ.cut([(2, square)], [(2, hole)])
occ.synchronize()

outer, circle = [], []
for dim, tag in gmsh.model.getEntities(1):
    x0, y0, _, x1, y1, _ = gmsh.model.getBoundingBox(dim, tag)
    if x1 - x0 > 0.39 and y1 - y0 > 0.39 and x0 > 0.05:
        circle.append(tag)
    else:
        outer.append(tag)
gmsh.model.addPhysicalGroup(1, outer, 1, "walls")
gmsh.model.addPhysicalGroup(1, circle, 2, "hole")
surfaces = [t for _, t in gmsh.model.getEntities(2)]
gmsh.model.addPhysicalGroup(2, surfaces, 10, "fluid")

gmsh.option.setNumber("Mesh.MeshSizeMin", 0.07)
gmsh.option.setNumber("Mesh.MeshSizeMax", 0.07)
gmsh.option.setNumber("Mesh.Algorithm", 6)
gmsh.option.setNumber("Mesh.RandomSeed", 1)
gmsh.model.mesh.generate(2)

for version, vname in [(2.2, "v22"), (4.1, "v41")]:
    for binary, bname in [(0, "ascii"), (1, "bin")]:
        gmsh.option.setNumber("Mesh.MshFileVersion", version)
        gmsh.option.setNumber("Mesh.Binary", binary)
        gmsh.write(f"square_hole_{vname}_{bname}.msh")
gmsh.finalize()
