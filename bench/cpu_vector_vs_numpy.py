#!/usr/bin/env python3
"""gpk_sort_keys on one CPU thread against numpy's a.sort(), one process,
interleaved (docs/perf/radix.md, v18-v23): u32, i32, f32 keys (and
u64, i64, f64 with --types) at 2^10 to 2^24 in four distributions (uniform over the type, floats
normal(0, 1); sorted; all equal; few bits: the low 10 random), for each
path: "auto" (the library's choice), "before" (both of gpk's quicksorts
off, so vqsort or the radix sort), "avx2" (the AVX2 quicksort for every
size, test hook cpu_avx2_sort_bytes), "avx512" (the AVX-512 quicksort
for every size, cpu_avx512_sort_bytes); the last two where they run.
After one untimed sort by each contender, each rep sorts a fresh copy of
the same array with each contender in turn; wall ms, medians; every
result checked equal to numpy's. The presorted check is off (cpu_presorted=0)
so that sorted and equal inputs reach the sorts; --presorted leaves it
on.

    cc -O2 -shared -fPIC -fopenmp -Iinclude bench/cpu_sort_shim.c -o /tmp/cpu_sort_shim.so \\
       -Wl,--whole-archive build/libgpk.a -Wl,--no-whole-archive -lm -lhwy_contrib -lhwy -lstdc++
    OMP_NUM_THREADS=1 python3 bench/cpu_vector_vs_numpy.py [--shim /tmp/cpu_sort_shim.so] [--reps 15]
        [--logs 12,14,16] [--types u32,f32] [--dists uniform] [--presorted]
        [--threads 2 --paths auto]   (gpk on 2 threads, numpy on its one)
        [--variant regs:cpu_compress_store=0]   (one more path: auto with those hooks)
"""
import argparse
import ctypes
import os
import time

import numpy as np


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shim", default="/tmp/cpu_sort_shim.so")
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--logs", default="10,12,14,16,18,20,22,24")
    ap.add_argument("--types", default="u32,i32,f32")
    ap.add_argument("--dists", default="uniform,sorted,equal,few_bits")
    ap.add_argument("--presorted", action="store_true")
    ap.add_argument("--threads", type=int, default=1, help="gpk's threads (numpy sorts on one)")
    ap.add_argument("--paths", default="auto,before,avx2,avx512", help="those of gpk's paths to time")
    ap.add_argument("--hook", action="append", default=[], metavar="NAME=VALUE",
                    help="a CPU sort test hook set for every path (e.g. cpu_vector_pair_bytes=1099511627776)")
    ap.add_argument("--variant", action="append", default=[], metavar="NAME:HOOK=VALUE[,HOOK=VALUE]",
                    help="one more path: auto with those test hooks set (A/B in one process)")
    a = ap.parse_args()
    lib = ctypes.CDLL(a.shim)
    lib.shim_last_path.restype = ctypes.c_char_p
    lib.shim_avx512_bytes.restype = ctypes.c_longlong
    lib.shim_avx2_bytes.restype = ctypes.c_longlong
    lib.shim_sort.argtypes = [ctypes.c_char_p, ctypes.c_void_p, ctypes.c_size_t]
    if lib.shim_init(a.threads) != 0:
        raise SystemExit("no CPU context")
    if not a.presorted:
        lib.shim_hook(b"cpu_presorted", b"0")
    # hooks the user set; a path that leaves a quicksort's hook alone (None)
    # leaves it at the user's value
    user = {}
    for h in a.hook:
        name, _, value = h.partition("=")
        user[name.encode()] = value.encode()
        if lib.shim_hook(name.encode(), value.encode()) != 0:
            raise SystemExit(f"unknown hook or value: {h}")

    def set_quick_hooks(h512, h2):
        lib.shim_hook(b"cpu_avx512_sort_bytes", h512 if h512 is not None else user.get(b"cpu_avx512_sort_bytes"))
        lib.shim_hook(b"cpu_avx2_sort_bytes", h2 if h2 is not None else user.get(b"cpu_avx2_sort_bytes"))
    big = b"1099511627776"
    set_quick_hooks(big, big)
    has_avx512 = lib.shim_avx512_bytes() > 0
    has_avx2 = lib.shim_avx2_bytes() > 0
    set_quick_hooks(None, None)
    print("load", open("/proc/loadavg").read().strip(), "| vqsort level", lib.shim_simd_level(),
          "| AVX-512 quicksort", "runs" if has_avx512 else "does not run here",
          "| AVX2 quicksort", "runs" if has_avx2 else "does not run here", "| gpk threads", a.threads, "|", " ".join(a.hook))
    # each path: (name, cpu_avx512_sort_bytes, cpu_avx2_sort_bytes)
    paths = ([("auto", None, None), ("before", b"0", b"0")] + ([("avx2", b"0", big)] if has_avx2 else []) +
             ([("avx512", big, None)] if has_avx512 else []))
    paths = [p for p in paths if p[0] in a.paths.split(",")]
    # variants: auto with extra hooks, set for its sorts and reset after
    extra = {}
    for v in a.variant:
        name, _, hooks = v.partition(":")
        extra[name] = [h.partition("=")[::2] for h in hooks.split(",") if h]
        for hn, hv in extra[name]:
            if lib.shim_hook(hn.encode(), hv.encode()) != 0:
                raise SystemExit(f"unknown hook or value: {hn}={hv}")
            lib.shim_hook(hn.encode(), user.get(hn.encode()))
        paths.append((name, None, None))

    def enter(p, h512, h2):
        set_quick_hooks(h512, h2)
        for hn, hv in extra.get(p, []):
            lib.shim_hook(hn.encode(), hv.encode())

    def leave(p):
        for hn, _ in extra.get(p, []):
            lib.shim_hook(hn.encode(), user.get(hn.encode()))
    rng = np.random.default_rng(7)
    npt = {"u32": np.uint32, "i32": np.int32, "f32": np.float32,
           "u64": np.uint64, "i64": np.int64, "f64": np.float64}
    print("| keys | dist | numpy | " + " | ".join(p for p, *_ in paths) + " | " +
          " | ".join("numpy/" + p for p, *_ in paths) + " | paths |")
    print("|" + "---|" * (3 + 2 * len(paths) + 1))
    for t in a.types.split(","):
        for lg in map(int, a.logs.split(",")):
            n = 1 << lg
            reps = a.reps if lg <= 20 else max(5, a.reps // 3)
            for dist in a.dists.split(","):
                dt = npt[t]
                if dist == "uniform":
                    x = (rng.normal(0, 1, n).astype(dt) if t[0] == "f" else
                         rng.integers(np.iinfo(dt).min, np.iinfo(dt).max, n, dtype=dt, endpoint=True))
                elif dist == "sorted":
                    x = np.sort(rng.normal(0, 1, n).astype(dt) if t[0] == "f" else
                                rng.integers(np.iinfo(dt).min, np.iinfo(dt).max, n, dtype=dt, endpoint=True))
                elif dist == "equal":
                    x = np.full(n, 3, dtype=dt)
                else:
                    x = (rng.integers(0, 1024, n).astype(dt))
                want = np.sort(x)
                times = {"numpy": []}
                ran = {}
                for p, *_ in paths:
                    times[p] = []
                # one untimed sort each first: a team's threads started,
                # pages touched, clocks up before the first timed case
                x.copy().sort()
                for p, h512, h2 in paths:
                    enter(p, h512, h2)
                    y = x.copy()
                    lib.shim_sort(t.encode(), y.ctypes.data, n)
                    leave(p)
                for r in range(reps):
                    y = x.copy()
                    t0 = time.perf_counter()
                    y.sort()
                    times["numpy"].append(time.perf_counter() - t0)
                    for p, h512, h2 in paths:
                        enter(p, h512, h2)
                        y = x.copy()
                        ptr, tn = y.ctypes.data, t.encode()  # ~3.6 us for y.ctypes: outside the time
                        t0 = time.perf_counter()
                        rc = lib.shim_sort(tn, ptr, n)
                        times[p].append(time.perf_counter() - t0)
                        if rc != 0 or not np.array_equal(y.view(np.uint32), want.view(np.uint32)):
                            raise SystemExit(f"{t} 2^{lg} {dist} {p}: wrong result")
                        ran[p] = lib.shim_last_path().decode()
                        leave(p)
                set_quick_hooks(None, None)
                med = {k: sorted(v)[len(v) // 2] * 1e3 for k, v in times.items()}
                print(f"| {t} 2^{lg} | {dist} | {med['numpy']:.4g} | " +
                      " | ".join(f"{med[p]:.4g}" for p, *_ in paths) + " | " +
                      " | ".join(f"{med['numpy'] / med[p]:.2f}x" for p, *_ in paths) + " | " +
                      ", ".join(f"{p}: {ran[p]}" for p, *_ in paths) + " |", flush=True)
    print("load", open("/proc/loadavg").read().strip())


if __name__ == "__main__":
    main()
