#!/usr/bin/env python3
"""gpk.sort(a, axis=-1) of host matrices against a loop of numpy.sort over
the rows and numpy.sort(axis=-1), in the shapes of docs/perf/segmented.md
(the goal: at least 3x the loop on 16 threads). CuPy / PyTorch, when
present, are left to the GPU run of gpk bench segmented.

  python python/bench/segmented.py [--n 2^24] [--reps 3] [--dtype uint32] [--backend cpu]

Times are medians of --reps, each from the same unsorted copy; every gpk
result is compared with numpy's."""
import argparse
import time

import numpy as np

import gpk


def size(s: str) -> int:
    return 2 ** int(s[2:]) if s.startswith("2^") else int(s)


def median_time(fn, reps):
    t = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        t.append(time.perf_counter() - t0)
    return sorted(t)[len(t) // 2] * 1e3


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", default="2^24")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--dtype", default="uint32")
    ap.add_argument("--backend", default="cpu", help="gpk's backend (default cpu: the goal is the CPU's)")
    args = ap.parse_args()
    n = size(args.n)
    dt = np.dtype(args.dtype)
    rng = np.random.default_rng(7)
    keys = (rng.integers(0, np.iinfo(dt).max, size=n, dtype=dt, endpoint=True) if dt.kind in "ui"
            else rng.random(n).astype(dt))
    info = gpk.Context(args.backend).info()
    print(f"python segmented: {info.get('device_name', '?')}, {info.get('threads', '?')} threads, "
          f"{dt.name}, n {n}, median of {args.reps}")
    for length in (256, 4096, 2 ** 20):
        if length > n:
            continue
        a = keys[: (n // length) * length].reshape(-1, length)

        def loop():
            b = a.copy()
            for r in b:
                r.sort()
            return b

        want = np.sort(a, axis=-1)
        got = gpk.sort(a, axis=-1, backend=args.backend)
        assert np.array_equal(got, want)
        t_gpk = median_time(lambda: gpk.sort(a, axis=-1, backend=args.backend), args.reps)
        t_loop = median_time(loop, args.reps)
        t_np = median_time(lambda: np.sort(a, axis=-1), args.reps)
        print(f"  {a.shape[0]}x{length}: gpk.sort(axis=-1) {t_gpk:9.1f} ms   numpy loop {t_loop:9.1f} ms "
              f"({t_loop / t_gpk:.2f}x)   numpy.sort(axis=-1) {t_np:9.1f} ms ({t_np / t_gpk:.2f}x)")


if __name__ == "__main__":
    main()
