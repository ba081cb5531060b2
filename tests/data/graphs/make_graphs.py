"""Small graphs for the vertex-coloring tests, in the files graph collections hand out.

grid_pattern.mtx: 5-point Laplacian of a 12 x 10 grid, pattern symmetric (SuiteSparse style).
general_real.mtx: a random 60 x 60 real general matrix with a full diagonal (self-loops, which
  the reader drops) and entries in both triangles, some mirrored (repeated edges).
integer_sym.mtx: a random symmetric integer matrix with its diagonal.
myciel4.col: the Mycielski graph M4 of the DIMACS coloring set (23 vertices, 71 edges,
  chromatic number 5), built here by Mycielski's construction from K2.

Run from this directory: python3 make_graphs.py   (needs `pip install scipy`)
"""
import numpy as np
import scipy.io
import scipy.sparse as sp


def count_edges(a):
    a = sp.coo_matrix(a)
    return len({(min(i, j), max(i, j)) for i, j in zip(a.row, a.col) if i != j})


nx, ny = 12, 10
lap = sp.kronsum(sp.diags([1, -2, 1], [-1, 0, 1], shape=(nx, nx)), sp.diags([1, -2, 1], [-1, 0, 1], shape=(ny, ny)))
scipy.io.mmwrite("grid_pattern.mtx", sp.coo_matrix(lap != 0).astype(int), field="pattern", symmetry="symmetric")

rng = np.random.default_rng(3)
g = sp.random(60, 60, density=0.06, random_state=rng, format="lil")
g.setdiag(rng.random(60) + 1)
for i in range(0, 60, 7):
    g[(i * 13) % 60, i] = g[i, (i * 13) % 60] = 2.0
scipy.io.mmwrite("general_real.mtx", g.tocoo(), symmetry="general")

s = sp.random(40, 40, density=0.08, random_state=rng)
s = sp.coo_matrix(((s + s.T) * 10).astype(int) + 3 * sp.eye(40, dtype=int))
scipy.io.mmwrite("integer_sym.mtx", s, field="integer", symmetry="symmetric")


def mycielski(n, edges):
    # Vertices v, their shadows n + v and the apex 2n: u-v gives u-(n+v) and v-(n+u).
    out = list(edges)
    for u, v in edges:
        out += [(u, n + v), (v, n + u)]
    out += [(n + v, 2 * n) for v in range(n)]
    return 2 * n + 1, out


n, edges = 2, [(0, 1)]
for _ in range(3):
    n, edges = mycielski(n, edges)
with open("myciel4.col", "w") as f:
    f.write("c FILE: myciel4.col\nc Mycielski graph M4, chromatic number 5\n")
    f.write(f"p edge {n} {len(edges)}\n")
    f.writelines(f"e {u + 1} {v + 1}\n" for u, v in edges)

for name in ["grid_pattern.mtx", "general_real.mtx", "integer_sym.mtx"]:
    a = scipy.io.mmread(name)
    print(name, a.shape[0], "vertices", count_edges(a), "edges")
print("myciel4.col", n, "vertices", len(edges), "edges")
