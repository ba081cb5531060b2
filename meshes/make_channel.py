"""Channel [0,4] x [0,1] meshed with quadrilaterals on the left half (x < 2) and triangles on
the right half: a mixed quadrilateral/triangle mesh.

Physical groups: curves "inlet" (tag 1, x = 0), "outlet" (tag 2, x = 4), "walls" (tag 3,
y = 0 and y = 1); surfaces "quad_zone" (tag 11) and "tri_zone" (tag 12). The interface x = 2
is shared (conforming) and carries no physical group. Area = 4.
Left half: 16 x 8 transfinite quadrilaterals (128 quads). Right half: unstructured triangles.
Written in all four .msh flavours. Run: python3 make_channel.py   (needs `pip install gmsh`)
"""
import gmsh

gmsh.initialize()
gmsh.option.setNumber("General.Terminal", 0)
gmsh.model.add("channel")
geo = gmsh.model.geo
h = 0.125
p = [geo.addPoint(x, y, 0, h) for x, y in [(0, 0), (2, 0), (4, 0), (4, 1), (2, 1), (0, 1)]]
bottom_l = geo.addLine(p[0], p[1])
bottom_r = geo.addLine(p[1], p[2])
outlet = geo.addLine(p[2], p[3])
top_r = geo.addLine(p[3], p[4])
top_l = geo.addLine(p[4], p[5])
inlet = geo.addLine(p[5], p[0])
middle = geo.addLine(p[1], p[4])
left = geo.addPlaneSurface([geo.addCurveLoop([bottom_l, middle, top_l, inlet])])
right = geo.addPlaneSurface([geo.addCurveLoop([bottom_r, outlet, top_r, -middle])])
geo.synchronize()

mesh = gmsh.model.mesh
for c in (bottom_l, top_l):
    mesh.setTransfiniteCurve(c, 17)
for c in (inlet, middle):
    mesh.setTransfiniteCurve(c, 9)
mesh.setTransfiniteSurface(left)
mesh.setRecombine(2, left)

gmsh.model.addPhysicalGroup(1, [inlet], 1, "inlet")
gmsh.model.addPhysicalGroup(1, [outlet], 2, "outlet")
gmsh.model.addPhysicalGroup(1, [bottom_l, bottom_r, top_r, top_l], 3, "walls")
gmsh.model.addPhysicalGroup(2, [left], 11, "quad_zone")
gmsh.model.addPhysicalGroup(2, [right], 12, "tri_zone")

gmsh.option.setNumber("Mesh.Algorithm", 6)
gmsh.option.setNumber("Mesh.RandomSeed", 1)
mesh.generate(2)

for version, vname in [(2.2, "v22"), (4.1, "v41")]:
    for binary, bname in [(0, "ascii"), (1, "bin")]:
        gmsh.option.setNumber("Mesh.MshFileVersion", version)
        gmsh.option.setNumber("Mesh.Binary", binary)
        gmsh.write(f"channel_{vname}_{bname}.msh")
gmsh.finalize()
