#!/usr/bin/env python3
"""Sorting with gpk: numpy keys, key/value pairs, records, and (when CuPy or
PyTorch and a CUDA build of gpk are there) device arrays sorted in place.

    python python/examples/sort_arrays.py
"""
import time

import numpy as np

import gpk

rng = np.random.default_rng(7)

# 10-bit cell indices of a particle-in-cell code: tell gpk the key width
# and it sorts 10 bits instead of 32.
cells = rng.integers(0, 1 << 10, 1 << 22, dtype=np.uint32)
t0 = time.perf_counter()
order = gpk.argsort(cells, key_bits=10)           # stable, uint32 indices
print(f"argsort of {cells.size} cell keys: {1e3 * (time.perf_counter() - t0):.1f} ms")
assert np.array_equal(order, np.argsort(cells, kind="stable"))

# keys and values together; the inputs stay as they were
x = rng.standard_normal(1 << 20)
ids = np.arange(x.size, dtype=np.uint32)
xs, ids_s = gpk.sort_by_key(x, ids)
assert np.array_equal(x[ids_s], xs)

# records sorted by one field, in place
particles = np.zeros(100000, dtype=[("cell", "u4"), ("pos", "f4", (3,)), ("mass", "f8")])
particles["cell"] = rng.integers(0, 4096, particles.size)
gpk.sort_records_inplace(particles, "cell", algorithm="radix")
assert (np.diff(particles["cell"].astype(np.int64)) >= 0).all()

# a context of two threads for a block of calls
with gpk.Context("cpu", threads=2) as ctx:
    big = rng.standard_normal(1 << 22)
    t0 = time.perf_counter()
    gpk.sort_inplace(big)
    print(f"sort_inplace of 2^22 float64 on {ctx.info()['threads']} threads: "
          f"{1e3 * (time.perf_counter() - t0):.1f} ms")

# device arrays: sorted on their device, on the current stream
try:
    import cupy
    d = cupy.random.randint(0, 2**31, 1 << 24, dtype=cupy.int32)
    gpk.sort_inplace(d)
    print("cupy array sorted in place:", bool((d[1:] >= d[:-1]).all()))
except Exception as e:  # no CuPy, no device, or gpk without CUDA
    print(f"(no CuPy on a GPU here: {type(e).__name__})")
