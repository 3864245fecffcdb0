#!/usr/bin/env python3
"""torch.sort(dim=-1), the PyTorch peer of `gpk bench segmented` on a GPU.

The shapes of docs/perf/segmented.md, n keys in all (default 2^28): rows
of 256, 4096 and 2^20 keys sorted with torch.sort(x.view(rows, length),
dim=-1, stable=True), and ragged segments with power-law lengths (Pareto,
alpha 1.1, at least 16, at most 2^22, the last one cut to fit n; the same
law as gpk bench segmented, drawn by numpy, so the same shape but not the
same lengths), which torch.sort cannot take as rows: sorted the way
PyTorch code does it, two stable sorts (by key, then by segment id).

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
import json
import statistics
import sys


def parse_size(s: str) -> int:
    s = s.strip()
    if "^" in s:
        b, e = s.split("^")
        return int(b) ** int(e)
    return int(s)


def ragged_lengths(n: int, seed: int):
    import numpy as np
    rng = np.random.default_rng(seed)
    lens = []
    total = 0
    while total < n:
        # Pareto (alpha 1.1) with minimum 16, at most 2^22
        x = int(16 * (1.0 - rng.random()) ** (-1.0 / 1.1))
        x = max(16, min(x, 1 << 22))
        x = min(x, n - total)
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
    a = ap.parse_args()
    try:
        import torch
    except ImportError:
        print("peers_torch_segmented: PyTorch is not installed", file=sys.stderr)
        return 77
    if not torch.cuda.is_available():
        print("peers_torch_segmented: no CUDA device", file=sys.stderr)
        return 77
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
                                                  torch.tensor(lens, device=dev)).to(torch.int32)

                def run(keys=keys, vals=vals, seg_ids=seg_ids, desc=desc):
                    k1, i1 = torch.sort(keys, descending=desc, stable=True)
                    _, i2 = torch.sort(seg_ids[i1], stable=True)
                    out = k1[i2]
                    if vals is not None:
                        out = (out, vals[i1[i2]])
                    return out
                segments, used = len(lens), n
            else:
                length = parse_size(spec)
                rows = n // length
                used = rows * length
                kv = keys[:used].view(rows, length)
                vv = vals[:used].view(rows, length) if vals is not None else None

                def run(kv=kv, vv=vv, desc=desc):
                    k, idx = torch.sort(kv, dim=-1, descending=desc, stable=True)
                    if vv is not None:
                        return k, vv.gather(-1, idx)
                    return k
                segments = rows
            ms = timed(run)
            print(json.dumps({"peer": "torch.sort", "torch": torch.__version__, "device": torch.cuda.get_device_name(),
                              "case": case, "shape": spec, "segments": segments, "n": used, "ms": round(ms, 4),
                              "gkeys_per_s": round(used / ms / 1e6, 3)}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
