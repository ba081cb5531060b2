"""Inputs of cases/swe_estuary.toml: the bathymetry raster estuary_bathymetry.asc (ESRI ASCII
grid) and the tide estuary_tide.csv (t, eta).

Bathymetry: depth H (m below the reference level) of a 2000 m x 400 m estuary: a thalweg 8 m
deep along y = 200 m (Gaussian cross-section, 3 m over the banks) with a sill at x = 1000 m
that lifts the thalweg to 5 m. Grid: 50 m pixels, corner-registered, covering
[-25, 2075] x [-25, 475] so that every cell barycentre of the domain lies inside; values to
0.01 m. Tide: eta = 0.5 sin(2 pi t / 600) m every 30 s to t = 1500 s (a short period so the
case runs in seconds). Run: python3 make_estuary.py (plain Python, no packages).
"""
import math

NCOLS, NROWS, CELL, X0, Y0 = 42, 10, 50.0, -25.0, -25.0


def depth(x, y):
    across = math.exp(-(((y - 200.0) / 90.0) ** 2))
    sill = 3.0 * math.exp(-(((x - 1000.0) / 150.0) ** 2))
    return 3.0 + (5.0 - sill) * across


with open("estuary_bathymetry.asc", "w") as f:
    f.write(f"ncols {NCOLS}\nnrows {NROWS}\nxllcorner {X0}\nyllcorner {Y0}\n")
    f.write(f"cellsize {CELL}\nNODATA_value -9999\n")
    for r in range(NROWS):
        y = Y0 + (NROWS - r - 0.5) * CELL
        xs = (X0 + (c + 0.5) * CELL for c in range(NCOLS))
        f.write(" ".join(f"{depth(x, y):.2f}" for x in xs) + "\n")

with open("estuary_tide.csv", "w") as f:
    f.write("t,eta\n")
    for k in range(51):
        t = 30.0 * k
        f.write(f"{t:g},{0.5 * math.sin(2.0 * math.pi * t / 600.0):.4f}\n")
