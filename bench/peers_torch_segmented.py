#!/usr/bin/env python3
"""torch.sort(dim=-1), the PyTorch peer of `gpk bench segmented` on a GPU.

The shapes of docs/perf/segmented.md, n keys in all (default 2^28): rows
of 256, 4096 and 2^20 keys sorted with torch.sort(x.view(rows, length),
dim=-1, stable=True), and ragged segments with power-law lengths (Pareto,
alpha 1.1, at least 16, at most 2^22, the last one cut to fit n; drawn
with gpk's own generator (xoshiro256** seeded as gpk_rng_seed(seed ^
0x5E6)), so for the same --seed the very lengths of gpk bench segmented),
which torch.sort cannot take as rows: sorted the two ways PyTorch code
does it, two stable sorts (by key, then by segment id) and one sort of
(segment id << 32 | order-preserving key bits) as int64; the faster is
reported ("how" names it), both are printed with --all.

With --gpk, and gpk's Python package importable with CUDA, gpk.sort(x,
axis=-1) (and argsort) is timed on the very same tensors, same process,
for the row shapes, beside torch.sort.

Cases: u32 keys (as int32: PyTorch sorts no uint32 on CUDA; the same
bytes and passes), f32 keys, u32/u32 pairs (int32 keys and values: the
sort's indices gather the values), each ascending and descending.
Medians of --reps timed runs after one warm-up, CUDA events around each
call on the current stream. Prints one JSON object per line:
{"peer", "case", "shape", "segments", "n", "ms", "gkeys_per_s"}.

    python bench/peers_torch_segmented.py [--n 2^28] [--reps 5]
        [--shapes 256,4096,2^20,ragged] [--cases goals] [--seed 7]
"""
import argparse
import functools
import json
import statistics
import sys


def parse_size(s: str) -> int:
    s = s.strip()
    if "^" in s:
        b, e = s.split("^")
        return int(b) ** int(e)
    return int(s)


M64 = (1 << 64) - 1


def _splitmix64(x: int) -> int:
    x = (x + 0x9E3779B97F4A7C15) & M64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & M64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & M64
    return x ^ (x >> 31)


def _rotl(x: int, k: int) -> int:
    return ((x << k) | (x >> (64 - k))) & M64


@functools.lru_cache(maxsize=4)
def ragged_lengths(n: int, seed: int):
    """The lengths of gpk bench segmented's ragged shape (make_shape in
    bench/cmd_bench_segmented.c): gpk_rng_seed(seed ^ 0x5E6), then
    16 / (1 - u)^(1/1.1) per segment, at most 2^22, the last cut to fit."""
    base = (seed ^ 0x5E6) & M64
    s = [_splitmix64((base + i * 0x9E3779B97F4A7C15) & M64) for i in range(4)]
    lens = []
    total = 0
    while total < n:
        result = (_rotl((s[1] * 5) & M64, 7) * 9) & M64
        t = (s[1] << 17) & M64
        s[2] ^= s[0]
        s[3] ^= s[1]
        s[1] ^= s[2]
        s[0] ^= s[3]
        s[2] ^= t
        s[3] = _rotl(s[3], 45)
        u = (result >> 11) * 2.0 ** -53
        x = 16.0 / (1.0 - u) ** (1.0 / 1.1)
        x = min(x, 4194304.0)
        x = min(int(x), n - total)
        lens.append(x)
        total += x
    return lens


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", default="2^28")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--shapes", default="256,4096,2^20,ragged")
    ap.add_argument("--cases", default="goals",
                    help="comma list of u32|f32[-pairs][-desc]; goals = every case of the perf notes")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--all", action="store_true", help="print every way a peer was called, not only its fastest")
    ap.add_argument("--gpk", action="store_true", help="also time gpk.sort(x, axis=-1) on the same tensors")
    a = ap.parse_args()
    try:
        import torch
    except ImportError:
        print("peers_torch_segmented: PyTorch is not installed", file=sys.stderr)
        return 77
    if not torch.cuda.is_available():
        print("peers_torch_segmented: no CUDA device", file=sys.stderr)
        return 77
    gpk = None
    if a.gpk:
        try:
            import gpk
        except ImportError as e:
            print(f"peers_torch_segmented: --gpk: {e}", file=sys.stderr)
    n = parse_size(a.n)
    cases = a.cases
    if cases == "goals":
        cases = "u32,u32-desc,f32,f32-desc,u32-pairs,u32-pairs-desc"
    dev = torch.device("cuda")
    gen = torch.Generator(device=dev)
    gen.manual_seed(a.seed)
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)

    def timed(fn):
        fn()  # warm-up
        ts = []
        for _ in range(a.reps):
            start.record()
            fn()
            stop.record()
            stop.synchronize()
            ts.append(start.elapsed_time(stop))
        return statistics.median(ts)

    for case in cases.split(","):
        parts = case.split("-")
        kt, pairs, desc = parts[0], "pairs" in parts[1:], "desc" in parts[1:]
        if kt == "u32":
            keys = torch.randint(-2**31, 2**31 - 1, (n,), dtype=torch.int32, device=dev, generator=gen)
        elif kt == "f32":
            keys = torch.rand((n,), dtype=torch.float32, device=dev, generator=gen)
        else:
            print(f"peers_torch_segmented: unknown key type {kt!r} (u32, f32)", file=sys.stderr)
            return 2
        vals = torch.arange(n, dtype=torch.int32, device=dev) if pairs else None
        for spec in a.shapes.split(","):
            if spec == "ragged":
                lens = ragged_lengths(n, a.seed)
                seg_ids = torch.repeat_interleave(torch.arange(len(lens), device=dev),
                                                  torch.tensor(lens, device=dev))

                def two_sorts(keys=keys, vals=vals, seg_ids=seg_ids, desc=desc):
                    k1, i1 = torch.sort(keys, descending=desc, stable=True)
                    _, i2 = torch.sort(seg_ids[i1], stable=True)
                    out = k1[i2]
                    if vals is not None:
                        out = (out, vals[i1[i2]])
                    return out

                def packed(keys=keys, vals=vals, seg_ids=seg_ids, desc=desc, kt=kt):
                    b = keys.view(torch.int32).to(torch.int64) & 0xFFFFFFFF
                    if kt == "f32":  # IEEE order as unsigned order (no NaN here)
                        b = torch.where(b >= 0x80000000, b ^ 0xFFFFFFFF, b | 0x80000000)
                    else:  # int32 order as unsigned order
                        b = b ^ 0x80000000
                    if desc:
                        b = 0xFFFFFFFF - b
                    _, idx = torch.sort((seg_ids << 32) | b, stable=True)
                    out = keys[idx]
                    if vals is not None:
                        out = (out, vals[idx])
                    return out
                ways = [("two stable sorts", two_sorts), ("one int64 sort of (segment, key)", packed)]
                segments, used = len(lens), n
            else:
                length = parse_size(spec)
                rows = n // length
                used = rows * length
                kv = keys[:used].view(rows, length)
                vv = vals[:used].view(rows, length) if vals is not None else None

                def rows_sort(kv=kv, vv=vv, desc=desc):
                    k, idx = torch.sort(kv, dim=-1, descending=desc, stable=True)
                    if vv is not None:
                        return k, vv.gather(-1, idx)
                    return k
                ways = [("torch.sort(dim=-1)", rows_sort)]
                segments = rows
                if gpk is not None and vv is None:
                    ms = timed(lambda kv=kv, desc=desc: gpk.sort(kv, axis=-1, descending=desc))
                    print(json.dumps({"peer": "gpk.sort", "how": "gpk.sort(x, axis=-1), same tensor",
                                      "device": torch.cuda.get_device_name(), "case": case, "shape": spec,
                                      "segments": segments, "n": used, "ms": round(ms, 4),
                                      "gkeys_per_s": round(used / ms / 1e6, 3)}), flush=True)
            best = None
            for how, fn in ways:
                ms = timed(fn)
                if a.all:
                    print(json.dumps({"peer": "torch.sort (way)", "how": how, "case": case, "shape": spec,
                                      "ms": round(ms, 4)}), flush=True)
                if best is None or ms < best[0]:
                    best = (ms, how)
            ms, how = best
            print(json.dumps({"peer": "torch.sort", "how": how, "torch": torch.__version__,
                              "device": torch.cuda.get_device_name(), "case": case, "shape": spec,
                              "segments": segments, "n": used, "ms": round(ms, 4),
                              "gkeys_per_s": round(used / ms / 1e6, 3)}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
