#!/usr/bin/env python3
"""Draws the figures of `gpk bench octree --json FILE` as SVG files.

usage: plot_octree.py RESULTS.json [OUTDIR] [--prefix NAME] [--workers W]

After Cederman & Tsigas 2008:
  NAME-fig4.svg   build time (ms) against N, log-log, one line per scheme,
                  one panel per distribution (Figure 4), at W workers
                  (default: the most workers in the file)
  NAME-fig5.svg   tasks created against N, one line per distribution
                  (Figure 5; the pool schemes all create the same tasks)
Only rows whose check is "ok" are drawn. Only the Python standard library:
the SVG is written by hand. OUTDIR defaults to docs/perf.
"""
import argparse
import json
import math
import os
import sys
from xml.sax.saxutils import escape

COLOURS = {"static": "#1f77b4", "blocking": "#ff7f0e", "lockfree": "#2ca02c", "steal": "#d62728",
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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("json")
    ap.add_argument("outdir", nargs="?", default="docs/perf")
    ap.add_argument("--prefix", default="octree")
    ap.add_argument("--workers", type=int, default=0)
    a = ap.parse_args()
    with open(a.json) as f:
        doc = json.load(f)
    rows = [r for r in doc.get("rows", []) if r.get("check") == "ok"]
    if not rows:
        sys.exit("plot_octree: no ok rows in %s" % a.json)
    workers = a.workers or max(r["workers"] for r in rows)
    be = doc.get("backend", {})
    machine = "%s (%s), %d workers, threshold %s, median of %s" % (
        be.get("backend", "?"), be.get("device", "?"), workers, doc.get("threshold"), doc.get("reps"))
    dists = []
    for r in rows:
        if r["dist"] not in dists:
            dists.append(r["dist"])
    os.makedirs(a.outdir, exist_ok=True)
    panels = []
    for d in dists:
        series = {}
        for r in rows:
            if r["dist"] == d and r["workers"] == workers:
                series.setdefault(r["scheme"], []).append((r["n"], r["ms"]))
        panels.append(panel(W * len(panels), d, series, "particles", "build time (ms)"))
    write_svg(os.path.join(a.outdir, a.prefix + "-fig4.svg"), panels, "Figure 4 after Cederman & Tsigas 2008: " + machine)
    series = {}
    for r in rows:
        if r["scheme"] != "morton" and r["workers"] == workers:
            series.setdefault(r["dist"], {})[r["n"]] = r["tasks"]
    series = {d: sorted(v.items()) for d, v in series.items()}
    write_svg(os.path.join(a.outdir, a.prefix + "-fig5.svg"),
              [panel(0, "tasks created", series, "particles", "tasks")],
              "Figure 5 after Cederman & Tsigas 2008: tasks of the pool builders, threshold %s" % doc.get("threshold"))
    print("plot_octree: wrote %s-fig4.svg and %s-fig5.svg in %s" % (a.prefix, a.prefix, a.outdir))


if __name__ == "__main__":
    main()
