#!/usr/bin/env python3
"""gpk from Python against numpy, CuPy and PyTorch; JSON into bench/results/.

  python python/bench/bench.py [--cpu-n 2^26] [--gpu-n 2^28] [--reps 5] [--out FILE.json]
                               [--only overhead,cpu,gpu]
  (default FILE: bench/results/DATE-python-HOST/python-bench.json)

overhead: sorting 16 uint32 keys in place through gpk.sort_inplace, through
the extension alone (gpk._gpk.sort) and through the C call timed in C
(gpk._gpk.c_sort_seconds), best of 7 batches; the goal is at most 20 us
between Python and C.
cpu: float64 keys, gpk.sort (a copy, as numpy.sort) and gpk.sort_inplace
against numpy.sort, on the default CPU context (every core; GPK_THREADS).
gpu (CuPy and / or PyTorch when present): keys on the device, CUDA events
on the current stream. CuPy, uint32: gpk.sort against cupy.sort,
gpk.sort_inplace against ndarray.sort, gpk.argsort against cupy.argsort.
PyTorch, int32 in [0, 2^31) (its uint32 support is partial): gpk.argsort
against torch.sort (values and indices, as the issue's 13.7 ms),
torch.sort(stable=True) and torch.argsort(stable=True). Every timed call starts from the same unsorted
keys (restored outside the timing). Times are medians of --reps.
"""
import argparse
import datetime
import json
import os
import platform
import socket
import statistics
import sys
import time

import numpy as np

import gpk


def parse_n(s):
    s = s.strip()
    if "^" in s:
        b, e = s.split("^")
        return int(b) ** int(e)
    return int(s)


def bench_overhead(results):
    rng = np.random.default_rng(1)
    a = rng.integers(0, 2**32, 16, dtype=np.uint32)
    calls = 20000

    def batch(fn):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        return (time.perf_counter() - t0) / calls

    # On the default context (every core) and on one thread, where no
    # OpenMP team wakes up and the C call is at its cheapest. The three
    # ways alternate batch by batch so that load on the machine hits them
    # alike; the best batch of each counts.
    for threads in (0, 1):
        ctx = gpk.Context("cpu", threads=threads)
        py = ext = c = float("inf")
        with ctx:
            for _ in range(9):
                py = min(py, batch(lambda: gpk.sort_inplace(a)))
                ext = min(ext, batch(lambda: gpk._gpk.sort(ctx, a, 0, 0, "auto")))
                c = min(c, gpk._gpk.c_sort_seconds(ctx, a, calls))
        r = {"bench": "overhead", "n": 16, "dtype": "uint32", "threads": ctx.info()["threads"],
             "python_us": py * 1e6, "extension_us": ext * 1e6, "c_us": c * 1e6, "extra_us": (py - c) * 1e6,
             "goal_extra_us": 20.0}
        print(f"overhead, 16 u32 keys, {r['threads']} threads: gpk.sort_inplace {py * 1e6:.2f} us, "
              f"gpk._gpk.sort {ext * 1e6:.2f} us, C {c * 1e6:.2f} us: {r['extra_us']:.2f} us extra (goal <= 20)")
        results.append(r)
        # the binding alone: an empty array, where the library returns at once
        e = np.empty(0, dtype=np.uint32)
        py0 = ext0 = c0 = float("inf")
        with ctx:
            for _ in range(9):
                py0 = min(py0, batch(lambda: gpk.sort_inplace(e)))
                ext0 = min(ext0, batch(lambda: gpk._gpk.sort(ctx, e, 0, 0, "auto")))
                c0 = min(c0, gpk._gpk.c_sort_seconds(ctx, e, calls))
        r0 = {"bench": "overhead", "n": 0, "dtype": "uint32", "threads": r["threads"], "python_us": py0 * 1e6,
              "extension_us": ext0 * 1e6, "c_us": c0 * 1e6, "extra_us": (py0 - c0) * 1e6}
        print(f"binding alone (0 keys), {r['threads']} threads: gpk.sort_inplace {py0 * 1e6:.2f} us, "
              f"gpk._gpk.sort {ext0 * 1e6:.2f} us, C {c0 * 1e6:.3f} us")
        results.append(r0)
        ctx.close()


def timed(fn, reps, setup=None):
    ts = []
    for _ in range(reps):
        if setup:
            setup()
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts) * 1e3, min(ts) * 1e3


def bench_cpu(results, n, reps):
    rng = np.random.default_rng(2)
    a = rng.standard_normal(n)
    work = a.copy()
    ctx = gpk._host_ctx(None)
    threads = ctx.info()["threads"]
    assert np.array_equal(gpk.sort(a), np.sort(a))
    rows = [("numpy.sort", lambda: np.sort(a), None),
            ("gpk.sort", lambda: gpk.sort(a), None),
            ("ndarray.sort", lambda: work.sort(), lambda: np.copyto(work, a)),
            ("gpk.sort_inplace", lambda: gpk.sort_inplace(work), lambda: np.copyto(work, a))]
    base = None
    for name, fn, setup in rows:
        med, best = timed(fn, reps, setup)
        if name == "numpy.sort":
            base = med
        r = {"bench": "cpu", "impl": name, "n": n, "dtype": "float64", "ms": med, "best_ms": best,
             "threads": threads, "speedup_vs_numpy_sort": base / med}
        print(f"cpu float64 n={n}: {name:18s} {med:9.2f} ms (best {best:.2f}), {base / med:5.2f}x numpy.sort, "
              f"{threads} threads")
        results.append(r)


def gpu_timer(fw):
    if fw == "cupy":
        import cupy

        def run(fn, reps, setup):
            ts = []
            for _ in range(reps):
                setup()
                s, e = cupy.cuda.Event(), cupy.cuda.Event()
                s.record()
                fn()
                e.record()
                e.synchronize()
                ts.append(cupy.cuda.get_elapsed_time(s, e))
            return statistics.median(ts), min(ts)
        return run
    import torch

    def run(fn, reps, setup):
        ts = []
        for _ in range(reps):
            setup()
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record()
            fn()
            e.record()
            e.synchronize()
            ts.append(s.elapsed_time(e))
        return statistics.median(ts), min(ts)
    return run


def bench_gpu(results, n, reps):
    host = np.random.default_rng(3).integers(0, 2**32, n, dtype=np.uint32)
    did = False
    try:
        import cupy
        have_cupy = cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:
        have_cupy = False
    if have_cupy:
        did = True
        run = gpu_timer("cupy")
        src = cupy.asarray(host)
        work = cupy.empty_like(src)
        restore = lambda: cupy.copyto(work, src)  # noqa: E731
        for _ in range(2):  # warm-up: contexts, pools, kernels
            gpk.sort(src), cupy.sort(src), gpk.argsort(src), cupy.argsort(src)
        ref = cupy.sort(src)
        assert bool((gpk.sort(src) == ref).all())
        rows = [("cupy.sort", lambda: cupy.sort(src)), ("gpk.sort", lambda: gpk.sort(src)),
                ("cupy ndarray.sort", lambda: work.sort()), ("gpk.sort_inplace", lambda: gpk.sort_inplace(work)),
                ("cupy.argsort", lambda: cupy.argsort(src)), ("gpk.argsort", lambda: gpk.argsort(src))]
        for name, fn in rows:
            med, best = run(fn, reps, restore)
            results.append({"bench": "gpu", "framework": "cupy", "impl": name, "n": n, "dtype": "uint32",
                            "ms": med, "best_ms": best, "device": cupy.cuda.runtime.getDeviceProperties(0)["name"]
                            .decode()})
            print(f"gpu cupy u32 n={n}: {name:18s} {med:8.3f} ms (best {best:.3f})")
        del src, work, ref
        cupy.get_default_memory_pool().free_all_blocks()
    try:
        import torch
        have_torch = torch.cuda.is_available()
    except Exception:
        have_torch = False
    if have_torch:
        did = True
        run = gpu_timer("torch")
        # int32 keys in [0, 2^31): PyTorch's uint32 support is partial
        src = torch.from_numpy((host >> 1).astype(np.int32)).cuda()
        work = torch.empty_like(src)
        restore = lambda: work.copy_(src)  # noqa: E731
        for _ in range(2):
            gpk.sort(src), torch.sort(src), gpk.argsort(src), torch.argsort(src, stable=True)
        assert bool((gpk.sort(src) == torch.sort(src).values).all())
        rows = [("torch.sort (values+indices)", lambda: torch.sort(src)),
                ("torch.sort stable", lambda: torch.sort(src, stable=True)),
                ("torch.argsort stable", lambda: torch.argsort(src, stable=True)),
                ("gpk.sort", lambda: gpk.sort(src)), ("gpk.sort_inplace", lambda: gpk.sort_inplace(work)),
                ("gpk.argsort", lambda: gpk.argsort(src))]
        for name, fn in rows:
            med, best = run(fn, reps, restore)
            results.append({"bench": "gpu", "framework": "torch", "impl": name, "n": n, "dtype": "int32",
                            "ms": med, "best_ms": best, "device": torch.cuda.get_device_name(0)})
            print(f"gpu torch i32 n={n}: {name:28s} {med:8.3f} ms (best {best:.3f})")
    if not did:
        print("gpu: no CuPy or PyTorch with a CUDA device here; skipped")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cpu-n", default="2^26")
    ap.add_argument("--gpu-n", default="2^28")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--only", default="overhead,cpu,gpu")
    ap.add_argument("--out", default=None, help="JSON file (default bench/results/DATE-python-HOST.json)")
    args = ap.parse_args()
    only = set(args.only.split(","))
    results = []
    if "overhead" in only:
        bench_overhead(results)
    if "cpu" in only:
        bench_cpu(results, parse_n(args.cpu_n), args.reps)
    if "gpu" in only:
        bench_gpu(results, parse_n(args.gpu_n), args.reps)
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    out = args.out or os.path.join(root, "bench", "results",
                                   f"{datetime.date.today()}-python-{socket.gethostname()}", "python-bench.json")
    cpu = platform.processor()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(l.split(":", 1)[1].strip() for l in f if l.startswith("model name"))
    except (OSError, StopIteration):
        pass
    doc = {"tool": "python/bench/bench.py", "date": datetime.datetime.now(datetime.timezone.utc).isoformat(),
           "gpk": gpk.__version__, "numpy": np.__version__, "python": sys.version.split()[0], "cpu": cpu,
           "cores": os.cpu_count(), "info": gpk.info(), "results": results}
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    tmp = out + ".tmp"
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=1)
    os.replace(tmp, out)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
