#!/usr/bin/env python3
"""Local search with gpk: a QAPLIB instance (file or matrices), a TSP tour
from coordinates, and a permuted perceptron problem.

    python python/examples/local_search.py [path/to/instance.dat]
"""
import os
import sys

import numpy as np

import gpk

here = os.path.dirname(os.path.abspath(__file__))
dat = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "..", "..", "..", "shared", "data", "qaplib",
                                                         "chr12a.dat")
if os.path.exists(dat):
    r = gpk.qap(dat, algo="its", iters=500, global_iters=10, seed=1)
    gap = "no best-known value" if r.gap is None else f"gap {r.gap:.2f}% to {r.best_known}"
    print(f"QAP {r.name}: cost {r.cost} ({gap}) in {r.ms:.0f} ms")

rng = np.random.default_rng(5)
a, b = rng.integers(0, 10, (20, 20)), rng.integers(0, 10, (20, 20))
r = gpk.qap(a=a, b=b, algo="tabu", iters=2000)
print(f"QAP from matrices (n=20): cost {r.cost}, assignment {r.solution[:8]}...")

cities = rng.random((200, 2)) * 1000
r = gpk.tsp(coords=cities, algo="its", iters=300, global_iters=5)
print(f"TSP of 200 random cities: tour length {r.cost}, {r.iterations} iterations")

r = gpk.ppp(101, 117, algo="tabu", iters=5000, seed=2)
print(f"PPP 101-117-1: fitness {r.cost} ({'solved' if r.cost == 0 else 'not solved'})")
