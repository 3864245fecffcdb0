"""gpk.octree: the tree's invariants, checked in numpy, and every scheme
giving the same leaves."""
import numpy as np
import pytest

import gpk

SCHEMES = ["static", "blocking", "lockfree", "steal", "morton"]


def check_tree(p, t, leaf_size):
    n = len(p)
    nodes = t.nodes
    assert t.order.dtype == np.uint32 and np.array_equal(np.sort(t.order), np.arange(n)), "order is a permutation"
    assert np.array_equal(t.points, p[t.order]), "points are the input in tree order"
    if n == 0:
        assert len(nodes) == 0
        return
    root = nodes[0]
    assert root["first"] == 0 and root["count"] == n and root["depth"] == 0
    leaves = nodes[nodes["leaf"] == 1]
    assert len(leaves) == t.leaves
    # leaves tile [0, n) in order
    lf = leaves[np.argsort(leaves["first"])]
    assert lf["first"][0] == 0 and np.array_equal(lf["first"][1:], (lf["first"] + lf["count"])[:-1])
    assert int(lf["first"][-1] + lf["count"][-1]) == n
    assert ((leaves["count"] <= leaf_size) | (leaves["depth"] == 21)).all()
    assert leaves["depth"].max() == t.depth
    # each node: children partition its range, each particle inside its box
    for i, nd in enumerate(nodes):
        pts = t.points[nd["first"]: nd["first"] + nd["count"]]
        assert (pts >= nd["lo"]).all() and (pts <= nd["hi"]).all(), f"node {i}: a particle outside its box"
        kids = nd["child"][nd["child"] >= 0]
        if nd["leaf"]:
            assert len(kids) == 0
        else:
            assert nd["count"] > leaf_size and len(kids) > 0
            assert sum(int(nodes[k]["count"]) for k in kids) == nd["count"]
            assert all(nodes[k]["depth"] == nd["depth"] + 1 for k in kids)


def leaf_set(t):
    leaves = t.nodes[t.nodes["leaf"] == 1]
    return sorted((tuple(l["lo"]), tuple(l["hi"]), int(l["count"]),
                   tuple(sorted(t.order[l["first"]: l["first"] + l["count"]].tolist()))) for l in leaves)


@pytest.mark.parametrize("n", [0, 1, 2, 21, 1000, 4099])
@pytest.mark.parametrize("leaf_size", [1, 20])
def test_octree_schemes_agree(rng, n, leaf_size):
    p = rng.random((n, 3), dtype=np.float32)
    if n > 10:
        p[: n // 3] = p[0] + rng.random((n // 3, 3), dtype=np.float32) * 1e-3  # a dense clump: a deep tree
    ref = None
    for s in SCHEMES:
        t = gpk.octree(p, leaf_size=leaf_size, scheme=s)
        check_tree(p, t, leaf_size)
        ls = leaf_set(t)
        if ref is None:
            ref = ls
        assert ls == ref, f"scheme {s} gives other leaves"


def test_octree_float64_and_errors(rng):
    p = rng.random((500, 3))
    t = gpk.octree(p, leaf_size=8)
    check_tree(p.astype(np.float32), t, 8)
    with pytest.raises(ValueError):
        gpk.octree(rng.random((10, 2), dtype=np.float32))
    with pytest.raises(TypeError):
        gpk.octree(np.zeros((10, 3), dtype=np.int32))
    with pytest.raises(ValueError):
        gpk.octree(p, leaf_size=0)
    with pytest.raises(ValueError):
        gpk.octree(p, scheme="oak")
    bad = p.astype(np.float32)
    bad[7, 1] = np.nan
    with pytest.raises(gpk.Error, match="7"):
        gpk.octree(bad)
