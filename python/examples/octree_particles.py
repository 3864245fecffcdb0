#!/usr/bin/env python3
"""An octree of a clustered particle cloud with gpk, then a neighbour query
that looks only at the leaves near a point.

    python python/examples/octree_particles.py
"""
import numpy as np

import gpk

rng = np.random.default_rng(3)
n = 200000
# a Plummer-like clump in a uniform background: a deep, unbalanced tree
r = 0.02 * rng.standard_normal((n // 2, 3))
pts = np.concatenate([0.5 + r, rng.random((n - n // 2, 3))]).astype(np.float32)
pts = np.clip(pts, 0, 1)

for scheme in ("steal", "morton"):
    t = gpk.octree(pts, leaf_size=32, scheme=scheme)
    print(f"{scheme:7s}: {len(t.nodes)} nodes, {t.leaves} leaves, depth {t.depth}, {t.ms:.1f} ms")

# particles within 0.01 of q: descend only into boxes that touch the ball
q, rad = np.array([0.5, 0.5, 0.5], dtype=np.float32), 0.01
hits, stack = [], [0]
while stack:
    nd = t.nodes[stack.pop()]
    if (np.maximum(nd["lo"] - q, 0) ** 2 + np.maximum(q - nd["hi"], 0) ** 2).sum() > rad * rad:
        continue
    if nd["leaf"]:
        p = t.points[nd["first"]: nd["first"] + nd["count"]]
        inside = ((p - q) ** 2).sum(1) <= rad * rad
        hits.extend(t.order[nd["first"]: nd["first"] + nd["count"]][inside].tolist())
    else:
        stack.extend(int(c) for c in nd["child"] if c >= 0)
brute = np.flatnonzero(((pts - q) ** 2).sum(1) <= rad * rad)
print(f"{len(hits)} particles within {rad} of the centre (brute force: {brute.size})")
assert sorted(hits) == brute.tolist()
