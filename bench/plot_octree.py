#!/usr/bin/env python3
"""Draws the figures of `gpk bench octree --json FILE` as SVG files.

usage: plot_octree.py RESULTS.json [MORE.json ...] [--out OUTDIR] [--prefix NAME]
                      [--workers W] [--time ms|device_ms] [--grid]

After Cederman & Tsigas 2008:
  NAME-fig4.svg   build time (ms) against N, log-log, one line per scheme,
                  one panel per distribution (Figure 4), at W workers
                  (default: the most workers in the file)
  NAME-fig5.svg   tasks created against N, one line per distribution
                  (Figure 5; the pool schemes all create the same tasks)
  --grid: NAME-grid.svg instead, the threads-per-block x blocks heat map of
                  each pool scheme (Figures 2-3; `gpk bench octree --backend
                  cuda --block-threads LIST --blocks LIST`)
Several files are merged (steal rows of a --victim random run are drawn as
"steal-random"; of rows of one configuration in several files, the first). --time device_ms draws the CUDA builds' device time
(gpk_cuda_octree_build on device-resident particles) instead of the host
API's wall time. Only rows whose check is "ok" are drawn. Only the Python
standard library: the SVG is written by hand. OUTDIR defaults to docs/perf.
"""
import argparse
import json
import math
import os
import sys
from xml.sax.saxutils import escape

COLOURS = {"static": "#1f77b4", "blocking": "#ff7f0e", "lockfree": "#2ca02c", "steal": "#d62728",
           "steal-random": "#9467bd",
           "morton": "#7f7f7f", "uniform": "#1f77b4", "tube": "#d62728", "plummer": "#2ca02c"}
W, H = 360, 280          # one panel
ML, MR, MT, MB = 62, 14, 30, 44


def log_ticks(lo, hi):
    a, b = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
    return [10 ** e for e in range(a, b + 1)]


def fmt(v):
    if v >= 1e6:
        return "%gM" % (v / 1e6)
    if v >= 1e3:
        return "%gk" % (v / 1e3)
    return "%g" % v


def panel(x0, title, series, xlabel, ylabel):
    """series: {name: [(x, y), ...]} on log-log axes; returns SVG text."""
    pts = [p for s in series.values() for p in s if p[0] > 0 and p[1] > 0]
    if not pts:
        return ""
    xs, ys = [p[0] for p in pts], [p[1] for p in pts]
    xt, yt = log_ticks(min(xs), max(xs)), log_ticks(min(ys), max(ys))
    lx0, lx1 = math.log10(xt[0]), math.log10(xt[-1])
    ly0, ly1 = math.log10(yt[0]), math.log10(yt[-1])
    if lx1 == lx0:
        lx1 += 1
    if ly1 == ly0:
        ly1 += 1

    def px(x):
        return x0 + ML + (math.log10(x) - lx0) / (lx1 - lx0) * (W - ML - MR)

    def py(y):
        return MT + (1 - (math.log10(y) - ly0) / (ly1 - ly0)) * (H - MT - MB)

    out = ['<text x="%g" y="18" font-size="13" font-weight="bold">%s</text>' % (x0 + ML, escape(title))]
    out.append('<rect x="%g" y="%g" width="%g" height="%g" fill="none" stroke="#888"/>'
               % (x0 + ML, MT, W - ML - MR, H - MT - MB))
    for t in xt:
        out.append('<line x1="%.1f" y1="%g" x2="%.1f" y2="%g" stroke="#ddd"/>' % (px(t), MT, px(t), H - MB))
        out.append('<text x="%.1f" y="%g" font-size="10" text-anchor="middle">%s</text>' % (px(t), H - MB + 13, fmt(t)))
    for t in yt:
        out.append('<line x1="%g" y1="%.1f" x2="%g" y2="%.1f" stroke="#ddd"/>' % (x0 + ML, py(t), x0 + W - MR, py(t)))
        out.append('<text x="%g" y="%.1f" font-size="10" text-anchor="end">%s</text>' % (x0 + ML - 4, py(t) + 3, fmt(t)))
    out.append('<text x="%g" y="%g" font-size="11" text-anchor="middle">%s</text>'
               % (x0 + (ML + W - MR) / 2, H - 8, escape(xlabel)))
    out.append('<text x="%g" y="%g" font-size="11" text-anchor="middle" transform="rotate(-90 %g %g)">%s</text>'
               % (x0 + 14, (MT + H - MB) / 2, x0 + 14, (MT + H - MB) / 2, escape(ylabel)))
    ly = MT + 12
    for name, s in series.items():
        s = sorted(p for p in s if p[0] > 0 and p[1] > 0)
        if not s:
            continue
        c = COLOURS.get(name, "#000")
        out.append('<polyline fill="none" stroke="%s" stroke-width="1.6" points="%s"/>'
                   % (c, " ".join("%.1f,%.1f" % (px(x), py(y)) for x, y in s)))
        for x, y in s:
            out.append('<circle cx="%.1f" cy="%.1f" r="2.2" fill="%s"/>' % (px(x), py(y), c))
        out.append('<text x="%g" y="%g" font-size="10" fill="%s">%s</text>' % (x0 + ML + 6, ly, c, escape(name)))
        ly += 12
    return "\n".join(out)


def write_svg(path, panels, title):
    width = W * len(panels)
    body = "\n".join(p for p in panels if p)
    with open(path, "w") as f:
        f.write('<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif">\n'
                % (width, H + 22))
        f.write('<text x="8" y="%d" font-size="11" fill="#444">%s</text>\n' % (H + 16, escape(title)))
        f.write(body + "\n</svg>\n")


def heat_panel(x0, title, cells, threads, blocks, lo, hi):
    """cells: {(threads, blocks): ms}; colour from lo (green) to hi (red), log scale."""
    cw, ch = (W - ML - MR) / max(1, len(blocks)), (H - MT - MB) / max(1, len(threads))
    out = ['<text x="%g" y="18" font-size="13" font-weight="bold">%s</text>' % (x0 + ML, escape(title))]
    for i, t in enumerate(threads):
        y = MT + i * ch
        out.append('<text x="%g" y="%.1f" font-size="10" text-anchor="end">%d</text>' % (x0 + ML - 4, y + ch / 2 + 3, t))
        for j, b in enumerate(blocks):
            x = x0 + ML + j * cw
            v = cells.get((t, b))
            if v is None:
                fill, label = "#eee", "-"
            else:
                f = 0.0 if hi <= lo else (math.log(v) - math.log(lo)) / (math.log(hi) - math.log(lo))
                f = min(1.0, max(0.0, f))
                fill = "#%02x%02x40" % (int(60 + 195 * f), int(200 - 150 * f))
                label = "%.3g" % v
            out.append('<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s" stroke="#fff"/>'
                       % (x, y, cw, ch, fill))
            out.append('<text x="%.1f" y="%.1f" font-size="9" text-anchor="middle">%s</text>'
                       % (x + cw / 2, y + ch / 2 + 3, label))
    for j, b in enumerate(blocks):
        out.append('<text x="%.1f" y="%g" font-size="10" text-anchor="middle">%d</text>'
                   % (x0 + ML + (j + 0.5) * cw, H - MB + 13, b))
    out.append('<text x="%g" y="%g" font-size="11" text-anchor="middle">blocks</text>' % (x0 + (ML + W - MR) / 2, H - 8))
    out.append('<text x="%g" y="%g" font-size="11" text-anchor="middle" transform="rotate(-90 %g %g)">threads per block'
               '</text>' % (x0 + 14, (MT + H - MB) / 2, x0 + 14, (MT + H - MB) / 2))
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("json", nargs="+")
    ap.add_argument("--out", default="docs/perf")
    ap.add_argument("--prefix", default="octree")
    ap.add_argument("--workers", type=int, default=0)
    ap.add_argument("--time", choices=["ms", "device_ms"], default="ms")
    ap.add_argument("--grid", action="store_true")
    a = ap.parse_args()
    rows, doc, seen = [], None, set()
    for path in a.json:
        with open(path) as f:
            d = json.load(f)
        doc = doc or d
        for r in d.get("rows", []):
            if r.get("check") != "ok":
                continue
            if r["scheme"] == "steal" and d.get("victim") == "random":
                r = dict(r, scheme="steal-random")
            same = (r["dist"], r["n"], r["scheme"], r["workers"], r.get("blocks"), r.get("block_threads"),
                    r.get("grid_split"))
            if same in seen:  # the first file's row of a configuration
                continue
            seen.add(same)
            rows.append(r)
    if not rows:
        sys.exit("plot_octree: no ok rows in %s" % " ".join(a.json))
    key = a.time
    what = "device time (ms)" if key == "device_ms" else "build time (ms)"
    be = doc.get("backend", {})
    os.makedirs(a.out, exist_ok=True)
    if a.grid:
        schemes = [s for s in ("static", "blocking", "lockfree", "steal", "steal-random")
                   if any(r["scheme"] == s for r in rows)]
        threads = sorted({r["block_threads"] for r in rows if r["scheme"] != "morton"})
        blocks = sorted({r["blocks"] for r in rows if r["scheme"] != "morton"})
        vals = [r[key] for r in rows if r["scheme"] != "morton" and r[key] > 0]
        lo, hi = min(vals), max(vals)
        panels = []
        for sc in schemes:
            cells = {(r["block_threads"], r["blocks"]): r[key] for r in rows if r["scheme"] == sc}
            panels.append(heat_panel(W * len(panels), sc, cells, threads, blocks, lo, hi))
        ns = sorted({r["n"] for r in rows})
        write_svg(os.path.join(a.out, a.prefix + "-grid.svg"), panels,
                  "Figures 2-3 after Cederman & Tsigas 2008: %s, %s, n = %s, %s per cell, green fast, red slow" % (
                      be.get("backend", "?"), be.get("device", "?"), ",".join(fmt(n) for n in ns), what))
        print("plot_octree: wrote %s-grid.svg in %s" % (a.prefix, a.out))
        return
    workers = a.workers or max(r["workers"] for r in rows)
    machine = "%s (%s), %d workers, threshold %s, median of %s, %s" % (
        be.get("backend", "?"), be.get("device", "?"), workers, doc.get("threshold"), doc.get("reps"), what)
    dists = []
    for r in rows:
        if r["dist"] not in dists:
            dists.append(r["dist"])
    panels = []
    for d in dists:
        series = {}
        for r in rows:
            if r["dist"] == d and r["workers"] == workers:
                series.setdefault(r["scheme"], []).append((r["n"], r[key]))
        panels.append(panel(W * len(panels), d, series, "particles", what))
    write_svg(os.path.join(a.out, a.prefix + "-fig4.svg"), panels, "Figure 4 after Cederman & Tsigas 2008: " + machine)
    series = {}
    for r in rows:
        if r["scheme"] != "morton" and r["workers"] == workers:
            series.setdefault(r["dist"], {})[r["n"]] = r["tasks"]
    series = {d: sorted(v.items()) for d, v in series.items()}
    write_svg(os.path.join(a.out, a.prefix + "-fig5.svg"),
              [panel(0, "tasks created", series, "particles", "tasks")],
              "Figure 5 after Cederman & Tsigas 2008: tasks of the pool builders, threshold %s" % doc.get("threshold"))
    print("plot_octree: wrote %s-fig4.svg and %s-fig5.svg in %s" % (a.prefix, a.prefix, a.out))


if __name__ == "__main__":
    main()
