#!/usr/bin/env python3
"""gpk.sort on the CPU backend (1 and 2 threads) against numpy.sort, same
arrays, same process (docs/perf/radix.md, "v14 plus the descending fold,
on a quiet machine"): u32, u64, f32, f64 at 2^16, 2^20, 2^24, integers
uniform over the type, floats normal(0, 1), seed 7; wall ms, medians of 9
(5 at 2^24); every gpk result checked equal to numpy's.

    PYTHONPATH=<gpk package> python3 bench/cpu_vs_numpy.py

A package without pip (docs/perf/radix.md, v15): the extension from the
root CMake project, next to a copy of python/src/gpk, for the Python that
has numpy:

    cmake -S . -B build-py -DGPK_WITH_CUDA=OFF -DGPK_BUILD_PYTHON=ON \
        -DCMAKE_BUILD_TYPE=Release -DPython_EXECUTABLE=$(which python3)
    cmake --build build-py -j2 --target _gpk
    mkdir -p /tmp/gpk-py && cp -r python/src/gpk /tmp/gpk-py/ && cp build-py/python/_gpk*.so /tmp/gpk-py/gpk/
    PYTHONPATH=/tmp/gpk-py python3 bench/cpu_vs_numpy.py

With --items: gpk.argsort (u32, f32, f64) and gpk.sort_by_key (u32 keys
with u32 values, u64 with u64) against numpy.argsort(kind="stable") (and
the values taken by it), the same way (docs/perf/radix.md, v16).

With --dists: keys alone at 2^20 and 2^24 in the bench's other
distributions (gpk_dist in gpk/gen.h: sorted, reverse, few_bits (the low
10 bits random), equal, gaussian (the mean of 4 uniform values), organ
pipe), built here with numpy, for each type.

The load average is printed first: with the other core busy, the
two-thread context runs one thread (radix_cpu.c, cap_by_free_cores).
"""
import os
import sys
import time

import numpy as np

import gpk


def median_ms(fn, reps):
    ts = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t)
    ts.sort()
    return ts[len(ts) // 2] * 1e3


def data(rng, dt, n):
    return (rng.integers(0, np.iinfo(dt).max, n, dtype=dt, endpoint=True) if dt.startswith("u")
            else rng.normal(0, 1, n).astype(dt))


def items(rng, ctx1, ctx2):
    print("| call | numpy | gpk 1T | gpk 2T | 1T/numpy | 2T/numpy |")
    cases = [("argsort", "uint32"), ("argsort", "float32"), ("argsort", "float64"),
             ("sort_by_key", "uint32"), ("sort_by_key", "uint64")]
    for call, dt in cases:
        for lg in (16, 20, 24):
            n = 1 << lg
            a = data(rng, dt, n)
            v = np.arange(n, dtype=dt)
            reps = 5 if lg == 24 else 9
            if call == "argsort":
                want = np.argsort(a, kind="stable")
                assert (gpk.argsort(a, backend=ctx1) == want).all()
                fn = lambda: np.argsort(a, kind="stable")
                g1 = lambda: gpk.argsort(a, backend=ctx1)
                g2 = lambda: gpk.argsort(a, backend=ctx2)
            else:
                want = np.argsort(a, kind="stable")
                got = gpk.sort_by_key(a, v, backend=ctx1)
                assert (got[0] == a[want]).all() and (got[1] == v[want]).all()
                fn = lambda: (lambda p: (a[p], v[p]))(np.argsort(a, kind="stable"))
                g1 = lambda: gpk.sort_by_key(a, v, backend=ctx1)
                g2 = lambda: gpk.sort_by_key(a, v, backend=ctx2)
            tn, t1, t2 = median_ms(fn, reps), median_ms(g1, reps), median_ms(g2, reps)
            print(f"| {call} {dt} 2^{lg} | {tn:.3f} | {t1:.3f} | {t2:.3f} | {tn / t1:.2f}x | {tn / t2:.2f}x |",
                  flush=True)


def shaped(rng, dt, n, dist):
    """The bench's distributions beside uniform (gpk/gen.h), as numpy arrays."""
    if dist == "few_bits":
        return rng.integers(0, 1 << 10, n).astype(dt)
    if dist == "equal":
        return np.full(n, data(rng, dt, 1)[0], dtype=dt)
    if dist == "gaussian":
        return (sum(data(rng, "uint32", n).astype(np.uint64) for _ in range(4)) // 4).astype(dt)
    if dist == "organ_pipe":
        half = np.arange((n + 1) // 2)
        return np.concatenate([half, half[::-1][: n - half.size]]).astype(dt)
    a = np.sort(data(rng, dt, n))
    return a if dist == "sorted" else a[::-1].copy()


def dists(rng, ctx1, ctx2):
    print("| keys | dist | numpy | gpk 1T | gpk 2T | 1T/numpy | 2T/numpy |")
    for dt in ("uint32", "uint64", "float32", "float64"):
        for lg in (20, 24):
            n = 1 << lg
            for dist in ("sorted", "reverse", "few_bits", "equal", "gaussian", "organ_pipe"):
                a = shaped(rng, dt, n, dist)
                reps = 5 if lg == 24 else 9
                assert (gpk.sort(a, backend=ctx1) == np.sort(a)).all()
                tn = median_ms(lambda: np.sort(a), reps)
                t1 = median_ms(lambda: gpk.sort(a, backend=ctx1), reps)
                t2 = median_ms(lambda: gpk.sort(a, backend=ctx2), reps)
                print(f"| {dt} 2^{lg} | {dist} | {tn:.3f} | {t1:.3f} | {t2:.3f} | {tn / t1:.2f}x | {tn / t2:.2f}x |",
                      flush=True)


def main():
    rng = np.random.default_rng(7)
    ctx1, ctx2 = gpk.Context("cpu", threads=1), gpk.Context("cpu", threads=2)
    print(f"load {os.getloadavg()[0]:.2f}, numpy {np.__version__}")
    if "--items" in sys.argv:
        items(rng, ctx1, ctx2)
        return
    if "--dists" in sys.argv:
        dists(rng, ctx1, ctx2)
        return
    print("| keys | numpy | gpk 1T | gpk 2T | 1T/numpy | 2T/numpy |")
    for dt in ("uint32", "uint64", "float32", "float64"):
        for lg in (16, 20, 24):
            n = 1 << lg
            a = data(rng, dt, n)
            reps = 5 if lg == 24 else 9
            assert (gpk.sort(a, backend=ctx1) == np.sort(a)).all()
            tn = median_ms(lambda: np.sort(a), reps)
            t1 = median_ms(lambda: gpk.sort(a, backend=ctx1), reps)
            t2 = median_ms(lambda: gpk.sort(a, backend=ctx2), reps)
            print(f"| {dt} 2^{lg} | {tn:.3f} | {t1:.3f} | {t2:.3f} | {tn / t1:.2f}x | {tn / t2:.2f}x |", flush=True)


if __name__ == "__main__":
    main()
