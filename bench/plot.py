#!/usr/bin/env python3
"""Draws the charts of docs/perf/radix.md, search.md and scale.md as SVG
files from the benchmark records under bench/results, and the tutorial's
pictures with the CLI.

usage: bench/plot.py radix|search|scale|all [--out DIR]
       bench/plot.py tutorial [--gpk build/gpk] [--out docs/img]

  radix   radix-sizes.svg: u32/i32 keys per second against n on one H200,
          gpk and CUB (bench/results/2026-11-26-h200-fused/g-small.json,
          g1-28.json);
          radix-peers.svg: gpk's speed-up over its peer per type and mode:
          CUB on the H200 at 2^28 (g1-28.json, g-pairs.json, g-10.json),
          __gnu_parallel::sort on the H200 host's 16 cores at 2^28
          (cpu16.json) and on the 2-core development container at 2^24
          (bench/results/2026-11-25-cpu2-radix/v9/types-2p24-hybrid.json)
  search  search-tsp.svg: mean and max gap to the optimum per TSPLIB
          instance, 10 s on 16 threads, 5 seeds (bench/results/
          2026-11-26-h100-run8/i18-tsp.json);
          search-qap.svg: the same for tai*a on the H100 (i18-qap-cuda.json)
  scale   scale-plans.svg: 2 H200s against one, plans merge and part, by
          size (the multi-*.json inside bench/results/2026-11-26-h200x2-
          run14-17/run16-logs.tgz and run17-logs.tgz)

  tutorial  tutorial-ch150.svg and tutorial-tube.svg: the commands of
          docs/tutorial.md sections 4 and 5 (gpk tsp --svg, gpk octree --svg),
          which draw them themselves

Every row drawn is one the benchmark checked ("check": "ok" or "ok": true);
a file that is missing is an error, not an empty chart. Only the Python
standard library: the SVG is written by hand.
"""
import argparse
import json
import math
import os
import sys
import tarfile
from xml.sax.saxutils import escape

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RES = os.path.join(ROOT, "bench", "results")
FUSED = os.path.join(RES, "2026-11-26-h200-fused")
CPU2_TYPES = os.path.join(RES, "2026-11-25-cpu2-radix", "v9", "types-2p24-hybrid.json")
RUN8 = os.path.join(RES, "2026-11-26-h100-run8")
RUNS14_17 = os.path.join(RES, "2026-11-26-h200x2-run14-17")

COLOURS = ["#d62728", "#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#7f7f7f"]
FONT = 'font-family="sans-serif"'


def load_rows(path):
    """Rows of a `gpk bench sort --json` file that passed their check."""
    with open(path) as f:
        doc = json.load(f)
    return [r for r in doc["rows"] if r.get("check") == "ok"]


def fmt(v):
    return ("%.2f" % v).rstrip("0").rstrip(".") if v < 10 else "%.0f" % v


def nice_max(v):
    """The smallest 1, 2 or 5 times a power of ten at or above v."""
    if v <= 0:
        return 1.0
    e = 10 ** math.floor(math.log10(v))
    for m in (1, 2, 5, 10):
        if m * e >= v:
            return m * e
    return 10 * e


def svg_doc(width, height, body):
    return ('<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d">\n'
            '<rect width="%d" height="%d" fill="white"/>\n%s</svg>\n'
            % (width, height, width, height, width, height, "".join(body)))


def text(x, y, s, size=12, anchor="start", extra=""):
    return '<text x="%.1f" y="%.1f" %s font-size="%d" text-anchor="%s"%s>%s</text>\n' % (
        x, y, FONT, size, anchor, extra, escape(s))


def line_chart(title, subtitle, series, xlabel, ylabel, xticks, ymax=None, hline=None,
               width=760, height=420, points_only=False):
    """series: [(name, [(x, y), ...], dashed)], linear axes; xticks: [(x, label)];
    points_only: markers without lines (points that are not a sequence)."""
    ml, mr, mt, mb = 64, 150, 58, 48
    pw, ph = width - ml - mr, height - mt - mb
    xs = [x for _, pts, _ in series for x, _ in pts] + [t for t, _ in xticks]
    x0, x1 = min(xs), max(xs)
    ys = [y for _, pts, _ in series for _, y in pts]
    y1 = ymax if ymax is not None else nice_max(max(ys) * 1.05)
    sx = lambda x: ml + (x - x0) / (x1 - x0) * pw
    sy = lambda y: mt + ph - y / y1 * ph
    b = [text(ml, 22, title, 15), text(ml, 40, subtitle, 10, extra=' fill="#444"')]
    b.append('<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="black"/>\n' % (ml, mt, pw, ph))
    for i in range(6):
        y = y1 * i / 5
        b.append('<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#ddd"/>\n' % (ml, ml + pw, sy(y), sy(y)))
        b.append(text(ml - 6, sy(y) + 4, fmt(y), 11, "end"))
    for x, lab in xticks:
        b.append('<line x1="%.1f" x2="%.1f" y1="%d" y2="%d" stroke="#ddd"/>\n' % (sx(x), sx(x), mt, mt + ph))
        b.append(text(sx(x), mt + ph + 16, lab, 11, "middle"))
    if hline is not None:
        b.append('<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="black" stroke-dasharray="3 3"/>\n'
                 % (ml, ml + pw, sy(hline), sy(hline)))
    b.append(text(ml + pw / 2, height - 8, xlabel, 12, "middle"))
    b.append(text(16, mt + ph / 2, ylabel, 12, "middle",
                  ' transform="rotate(-90 16 %.1f)"' % (mt + ph / 2)))
    for i, (name, pts, dashed) in enumerate(series):
        c = COLOURS[i % len(COLOURS)]
        pts = sorted(pts)
        dash = ' stroke-dasharray="6 4"' if dashed else ""
        if not points_only:
            b.append('<polyline fill="none" stroke="%s" stroke-width="2"%s points="%s"/>\n'
                     % (c, dash, " ".join("%.1f,%.1f" % (sx(x), sy(y)) for x, y in pts)))
        fill = "white" if points_only and dashed else c
        for x, y in pts:
            b.append('<circle cx="%.1f" cy="%.1f" r="%d" fill="%s" stroke="%s"/>\n'
                     % (sx(x), sy(y), 4 if points_only else 3, fill, c))
        ly = mt + 10 + 20 * i
        if points_only:
            b.append('<circle cx="%d" cy="%d" r="4" fill="%s" stroke="%s"/>\n' % (ml + pw + 24, ly, fill, c))
        else:
            b.append('<line x1="%d" x2="%d" y1="%d" y2="%d" stroke="%s" stroke-width="2"%s/>\n'
                     % (ml + pw + 12, ml + pw + 36, ly, ly, c, dash))
        b.append(text(ml + pw + 42, ly + 4, name, 11))
    return svg_doc(width, height, b)


def bar_chart(title, subtitle, groups, xlabel, ref=1.0, width=640):
    """groups: [(heading, [(label, value), ...])], horizontal bars from 0;
    a dashed line at ref (the peer's speed)."""
    ml, mr, mt, bar = 150, 60, 58, 18
    rows = sum(len(g) + 1 for _, g in groups)
    ph = rows * (bar + 4)
    height = mt + ph + 44
    pw = width - ml - mr
    vmax = nice_max(max(v for _, g in groups for _, v in g))
    sx = lambda v: ml + v / vmax * pw
    b = [text(ml, 22, title, 15), text(ml, 40, subtitle, 11, extra=' fill="#444"')]
    for i in range(6):
        v = vmax * i / 5
        b.append('<line x1="%.1f" x2="%.1f" y1="%d" y2="%d" stroke="#ddd"/>\n' % (sx(v), sx(v), mt, mt + ph))
        b.append(text(sx(v), mt + ph + 16, fmt(v) + "x", 11, "middle"))
    y = mt
    for gi, (heading, items) in enumerate(groups):
        b.append(text(8, y + bar - 4, heading, 12, extra=' font-weight="bold"'))
        y += bar + 4
        c = COLOURS[gi % len(COLOURS)]
        for label, v in items:
            b.append(text(ml - 6, y + bar - 5, label, 11, "end"))
            b.append('<rect x="%d" y="%d" width="%.1f" height="%d" fill="%s"/>\n' % (ml, y, sx(v) - ml, bar, c))
            b.append(text(sx(v) + 4, y + bar - 5, "%.2fx" % v, 11))
            y += bar + 4
    b.append('<line x1="%.1f" x2="%.1f" y1="%d" y2="%d" stroke="black" stroke-dasharray="3 3"/>\n'
             % (sx(ref), sx(ref), mt, mt + ph))
    b.append(text(ml + pw / 2, height - 8, xlabel, 12, "middle"))
    return svg_doc(width, height, b)


def radix(out):
    rows = load_rows(os.path.join(FUSED, "g-small.json")) + load_rows(os.path.join(FUSED, "g1-28.json"))
    series = []
    for t in ("u32", "i32"):
        for impl, name in (("gpk", "gpk"), ("cub::DeviceRadixSort", "CUB")):
            pts = [(math.log2(r["n"]), r["gkeys_per_s"]) for r in rows
                   if r["type"] == t and r["mode"] == "keys" and r["impl"] == impl]
            if pts:
                series.append(("%s %s keys" % (name, t), pts, name == "CUB"))
    write(out, "radix-sizes.svg", line_chart(
        "Radix sort on one NVIDIA H200: gpk and CUB by size",
        "gpk bench sort --backends cuda: device-resident uniform keys, median of 20 "
        "(bench/results/2026-11-26-h200-fused)",
        series, "keys (n)", "Gkeys/s", [(e, "2^%d" % e) for e in range(16, 29, 2)]))

    def speedups(rows, label_of):
        return [(label_of(r), r["speedup"]) for r in rows if r["is_gpk"]]

    def mode_label(r):
        lab = "%s %s" % (r["type"], r["mode"])
        if r.get("end_bit", 0) - r.get("begin_bit", 0) < {"u32": 32, "i32": 32, "f32": 32}.get(r["type"], 64):
            lab += " (%d bits)" % (r["end_bit"] - r["begin_bit"])
        return lab
    gpu = sum((load_rows(os.path.join(FUSED, f)) for f in ("g1-28.json", "g-pairs.json", "g-10.json")), [])
    groups = [("H200 vs CUB, 2^28", speedups(gpu, mode_label)),
              ("16 Xeon cores vs __gnu_parallel::sort, 2^28",
               speedups(load_rows(os.path.join(FUSED, "cpu16.json")), mode_label)),
              ("2 EPYC cores vs __gnu_parallel::sort, 2^24", speedups(load_rows(CPU2_TYPES), mode_label))]
    write(out, "radix-peers.svg", bar_chart(
        "gpk's radix sort against its peer, by type and mode",
        "time of the peer / time of gpk in the same run (above 1: gpk faster); pairs: u32 values",
        groups, "speed-up over the peer (dashed: as fast as the peer)"))


def search(out):
    with open(os.path.join(RUN8, "i18-tsp.json")) as f:
        tsp = json.load(f)
    inst = tsp["instances"]
    assert tsp["failed_runs"] == 0, "i18-tsp.json has failed runs"
    mean = [(r["n"], r["mean_gap"]) for r in inst]
    mx = [(r["n"], r["max_gap"]) for r in inst]
    write(out, "search-tsp.svg", line_chart(
        "TSP: gap to the optimum, %d TSPLIB instances of 100 to 1000 cities" % len(inst),
        "gpk tsp --nb or2opt --algo multistart --threads 16 --time-limit 10, seeds 1-5, H100 host "
        "(goal: mean gap at most 1 %)",
        [("mean gap", mean, False), ("max gap", mx, True)], "cities", "gap (%)",
        [(n, str(n)) for n in (100, 200, 400, 600, 800, 1000)], points_only=True))
    with open(os.path.join(RUN8, "i18-qap-cuda.json")) as f:
        runs = json.load(f)
    by = {}
    for r in runs:
        assert r["check"] == "ok", "%s seed %s: check %s" % (r["instance"], r["seed"], r["check"])
        by.setdefault(r["n"], []).append(r["gap_percent"])
    mean = [(n, sum(g) / len(g)) for n, g in by.items()]
    mx = [(n, max(g)) for n, g in by.items()]
    avg = sum(v for _, v in mean) / len(mean)
    write(out, "search-qap.svg", line_chart(
        "QAP: gap to the best known, tai*a, n = 10 to 100 (average of means %.3f %%)" % avg,
        "gpk qap --algo its (default budget) --backend cuda on an H100, seeds 1-5 "
        "(goal: average of the means at most 0.5 %, dashed)",
        [("mean gap", mean, False), ("max gap", mx, True)], "n (facilities)", "gap (%)",
        [(n, str(n)) for n in (10, 20, 30, 40, 50, 60, 80, 100)], hline=0.5, points_only=True))


def multi_rows(tgz):
    rows = []
    with tarfile.open(tgz) as t:
        for m in t.getmembers():
            if os.path.basename(m.name).startswith("multi-") and m.name.endswith(".json"):
                for line in t.extractfile(m).read().decode().splitlines():
                    r = json.loads(line)
                    if r.get("mode") == "device" and r.get("ok"):
                        rows.append(r)
    return rows


def scale(out):
    series = []
    for run, tgz in (("run 17", "run17-logs.tgz"), ("run 16", "run16-logs.tgz")):
        rows = multi_rows(os.path.join(RUNS14_17, tgz))
        for plan in ("merge", "part"):
            pts = [(math.log2(r["n"]), r["speedup_vs_1"]) for r in rows
                   if r["gpus"] == 2 and r["plan"] == plan and r["type"] == "u32" and r["values"] == 0]
            series.append(("%s, %s" % (plan, run), pts, run == "run 16"))
    write(out, "scale-plans.svg", line_chart(
        "Two NVIDIA H200s against one: u32 keys by size and plan",
        "gpk-bench bench multi --gpus 1,2 --plans merge,part, median of 5; dotted: one GPU "
        "(bench/results/2026-11-26-h200x2-run14-17)",
        series, "u32 keys in all", "speed-up over one GPU",
        [(e, "2^%d" % e) for e in range(24, 32)], ymax=2.0, hline=1.0))


def tutorial(out, gpk):
    import subprocess
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        for name, args in (("tutorial-ch150.svg", ["tsp", os.path.join(ROOT, "data", "tsplib", "ch150.tsp"),
                                                    "--time-limit", "2"]),
                           ("tutorial-tube.svg", ["octree", "--dist", "tube", "--n", "20000"])):
            svg = os.path.join(tmp, name)
            subprocess.run([gpk] + args + ["--svg", svg], check=True)
            with open(svg) as f:
                write(out, name, f.read())


def write(out, name, svg):
    path = os.path.join(out, name)
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(svg)
    os.replace(tmp, path)
    print("wrote", os.path.relpath(path))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("chart", choices=["radix", "search", "scale", "all", "tutorial"])
    ap.add_argument("--out", default=None, help="default docs/perf, for tutorial docs/img")
    ap.add_argument("--gpk", default=os.path.join(ROOT, "build", "gpk"), help="the CLI (tutorial)")
    a = ap.parse_args()
    if a.chart == "tutorial":
        tutorial(a.out or os.path.join(ROOT, "docs", "img"), a.gpk)
        return 0
    a.out = a.out or os.path.join(ROOT, "docs", "perf")
    for name, fn in (("radix", radix), ("search", search), ("scale", scale)):
        if a.chart in (name, "all"):
            fn(a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
