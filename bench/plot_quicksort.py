#!/usr/bin/env python3
"""Draws the figures of `gpk bench quicksort --json FILE` as SVG files.

usage: plot_quicksort.py RESULTS.json [OUTDIR] [--prefix NAME]

One SVG per figure, after Manca et al. 2015 (Figures 12-15), per backend
and key type: Gkeys/s (records: Grecords/s) against n (log scale), one line per implementation,
one panel per distribution:
  NAME-BACKEND-TYPE-fig12.svg       uniform: gpk quicksort, iterative vs recursive
  NAME-BACKEND-TYPE-fig13.svg       uniform, gaussian, sorted
  NAME-BACKEND-TYPE-fig14.svg       zero entropy, bucket, staggered
  NAME-BACKEND-TYPE-other.svg       any other distribution (organ-pipe, mo3-killer ...)
  NAME-BACKEND-records-KEY-pP.svg   Figure 15: records with P-byte payloads, per distribution
Only rows whose check is "ok" are drawn. Rows timed host-to-host where the
others are device-resident are drawn dashed.

Only the Python standard library: the SVG is written by hand, so the CI
machine needs no matplotlib. OUTDIR defaults to docs/perf.
"""
import argparse
import json
import math
import os
import sys
from xml.sax.saxutils import escape

FIG12 = ["uniform"]
FIG13 = ["uniform", "gaussian", "sorted"]
FIG14 = ["zero-entropy", "bucket", "staggered"]

# One colour per implementation, the same in every figure; gpk's lines solid
# and thick, the peers' thinner.
STYLE = {
    "quick": ("#d62728", "gpk quicksort"),
    "quick-recursive": ("#ff7f0e", "gpk quicksort (recursive)"),
    "radix": ("#1f77b4", "gpk radix sort"),
    "cub-merge": ("#2ca02c", "cub::DeviceMergeSort"),
    "thrust": ("#9467bd", "thrust::sort"),
    "cub-radix": ("#8c564b", "cub::DeviceRadixSort"),
    "qsort": ("#7f7f7f", "qsort"),
    "std-sort": ("#bcbd22", "std::sort"),
    "gnu-parallel": ("#17becf", "__gnu_parallel::sort"),
    "cub-index": ("#8c564b", "CUB radix (key, index) + gather"),
    "thrust-index": ("#9467bd", "thrust::sort_by_key + gather"),
    "qsort-records": ("#7f7f7f", "qsort (records)"),
}
ORDER = list(STYLE)
GPK_IDS = {"quick", "quick-recursive", "radix"}

PANEL_W, PANEL_H = 340, 260
MARGIN_L, MARGIN_R, MARGIN_T, MARGIN_B = 62, 16, 34, 46


def size_label(n):
    """2^20 -> 1M, as the paper's axes."""
    for shift, suffix in ((30, "G"), (20, "M"), (10, "K")):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return "%d%s" % (n >> shift, suffix)
    return str(n)


def nice_ceiling(v):
    """A round number >= v for the top of the y axis."""
    if v <= 0:
        return 1.0
    e = 10 ** math.floor(math.log10(v))
    for m in (1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10):
        if m * e >= v:
            return m * e
    return 10 * e


def fmt(v):
    return ("%.3g" % v) if v < 10 else ("%d" % round(v))


def panel(out, x0, y0, title, series, xs, unit):
    """One panel at (x0, y0): series = {impl_id: [(n, gkeys, dashed)]}."""
    w = PANEL_W - MARGIN_L - MARGIN_R
    h = PANEL_H - MARGIN_T - MARGIN_B
    left, top = x0 + MARGIN_L, y0 + MARGIN_T
    ymax = nice_ceiling(1.05 * max([p[1] for s in series.values() for p in s] or [1.0]))
    lx = [math.log2(n) for n in xs]
    xmin, xmax = min(lx), max(lx)
    if xmax == xmin:
        xmin, xmax = xmin - 1, xmax + 1

    def px(n):
        return left + (math.log2(n) - xmin) / (xmax - xmin) * w

    def py(v):
        return top + h - v / ymax * h

    out.append('<text x="%.1f" y="%.1f" text-anchor="middle" font-weight="bold">%s</text>'
               % (left + w / 2, y0 + 20, escape(title)))
    # Grid and axes.
    for k in range(6):
        v = ymax * k / 5
        y = py(v)
        out.append('<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#ddd"/>' % (left, y, left + w, y))
        out.append('<text x="%.1f" y="%.1f" text-anchor="end" font-size="10">%s</text>'
                   % (left - 4, y + 3, fmt(v)))
    for n in xs:
        x = px(n)
        out.append('<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#eee"/>' % (x, top, x, top + h))
        out.append('<text x="%.1f" y="%.1f" text-anchor="middle" font-size="10">%s</text>'
                   % (x, top + h + 14, size_label(n)))
    out.append('<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="none" stroke="#333"/>'
               % (left, top, w, h))
    out.append('<text x="%.1f" y="%.1f" text-anchor="middle" font-size="11">n (%s)</text>'
               % (left + w / 2, top + h + 32, unit))
    out.append('<text transform="translate(%.1f,%.1f) rotate(-90)" text-anchor="middle" '
               'font-size="11">G%s/s</text>' % (x0 + 16, top + h / 2, unit))
    for impl in sorted(series, key=lambda i: ORDER.index(i) if i in ORDER else len(ORDER)):
        pts = sorted(series[impl])
        colour = STYLE.get(impl, ("#000", impl))[0]
        width = 2.4 if impl in GPK_IDS else 1.4
        dash = ' stroke-dasharray="5,3"' if any(p[2] for p in pts) else ""
        path = " ".join("%.1f,%.1f" % (px(n), py(v)) for n, v, _ in pts)
        out.append('<polyline points="%s" fill="none" stroke="%s" stroke-width="%.1f"%s/>'
                   % (path, colour, width, dash))
        for n, v, _ in pts:
            out.append('<circle cx="%.1f" cy="%.1f" r="2.6" fill="%s"><title>%s %s: %.3f Gkeys/s'
                       '</title></circle>' % (px(n), py(v), colour, escape(impl), size_label(n), v))


def figure(path, title, subtitle, panels, unit="keys"):
    """panels: [(panel title, {impl: [(n, gkeys, dashed)]})]; writes one SVG."""
    cols = min(3, len(panels))
    rows = (len(panels) + cols - 1) // cols
    impls = sorted({i for _, s in panels for i in s},
                   key=lambda i: ORDER.index(i) if i in ORDER else len(ORDER))
    legend_cols = 3 if cols >= 3 else 2
    legend_rows = (len(impls) + legend_cols - 1) // legend_cols
    head = 48
    # At least two panels wide, so the title and the legend fit over one.
    width = max(cols * PANEL_W, 2 * PANEL_W)
    x_off = (width - cols * PANEL_W) / 2
    height = head + rows * PANEL_H + 18 * legend_rows + 16
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" '
           'font-family="sans-serif" font-size="12">' % (width, height, width, height),
           '<rect width="100%" height="100%" fill="white"/>',
           '<text x="%d" y="20" text-anchor="middle" font-size="15" font-weight="bold">%s</text>'
           % (width // 2, escape(title)),
           '<text x="%d" y="38" text-anchor="middle" font-size="11" fill="#555">%s</text>'
           % (width // 2, escape(subtitle))]
    for k, (ptitle, series) in enumerate(panels):
        xs = sorted({p[0] for s in series.values() for p in s})
        if not xs:
            continue
        panel(out, x_off + (k % cols) * PANEL_W, head + (k // cols) * PANEL_H, ptitle, series, xs, unit)
    ly = head + rows * PANEL_H + 8
    host = {i for _, s in panels for i, pts in s.items() if any(p[2] for p in pts)}
    for k, impl in enumerate(impls):
        colour, label = STYLE.get(impl, ("#000", impl))
        if impl in host:
            label += " (host-to-host)"
        x = 20 + (k % legend_cols) * (width - 40) / legend_cols
        y = ly + 18 * (k // legend_cols)
        out.append('<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="%.1f"%s/>'
                   % (x, y, x + 24, y, colour, 2.4 if impl in GPK_IDS else 1.4,
                      ' stroke-dasharray="5,3"' if impl in host else ""))
        out.append('<text x="%.1f" y="%.1f">%s</text>' % (x + 30, y + 4, escape(label)))
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def main(argv):
    ap = argparse.ArgumentParser(description="Draws `gpk bench quicksort --json` results as SVG.")
    ap.add_argument("json", help="a `gpk bench quicksort --json` file")
    ap.add_argument("outdir", nargs="?", default=os.path.join("docs", "perf"),
                    help="where the SVG files go (default docs/perf)")
    ap.add_argument("--prefix", default="quicksort", help="file name prefix (default quicksort)")
    a = ap.parse_args(argv[1:])
    src, outdir, prefix = a.json, a.outdir, a.prefix
    try:
        with open(src) as f:
            data = json.load(f)
    except (OSError, ValueError) as e:
        sys.exit("plot_quicksort.py: cannot read %s: %s" % (src, e))
    if data.get("tool") != "gpk bench quicksort":
        sys.exit("plot_quicksort.py: %s is not a `gpk bench quicksort --json` file" % src)
    os.makedirs(outdir, exist_ok=True)

    # (backend, kind, type, payload) -> dist -> impl -> [(n, gkeys, dashed)]
    groups = {}
    for r in data.get("rows", []):
        if r.get("check") != "ok" or "gkeys_per_s" not in r:
            continue
        key = (r["backend"], r["kind"], r["type"], r.get("payload_bytes", 0))
        groups.setdefault(key, {}).setdefault(r["dist"], {}).setdefault(r["impl_id"], []).append(
            (r["n"], r["gkeys_per_s"], bool(r.get("host_to_host"))))

    machine = data.get("machine", {})
    devices = [d.get("device", "") for d in data.get("devices", [])]
    when = "%s, %s" % (data.get("date", ""), data.get("gpk_version", ""))
    written = []
    for (backend, kind, typ, payload), dists in sorted(groups.items()):
        device = devices[0] if devices else machine.get("cpu_model", "")
        sub = "%s on %s; %s; median of reps" % (backend, device, when)
        if kind == "records":
            panels = [(d, dists[d]) for d in data["config"]["dists"] if d in dists]
            name = "%s-%s-records-%s-p%d.svg" % (prefix, backend, typ, payload)
            figure(os.path.join(outdir, name),
                   "Records: %s key + %d-byte payload (%d-byte records; Figure 15)"
                   % (typ, payload, payload + 8), sub, panels, "records")
            written.append(name)
            continue
        figs = [("fig12", "uniform, gpk quicksort iterative vs recursive (Figure 12)", FIG12,
                 {"quick", "quick-recursive"}),
                ("fig13", "uniform, gaussian, sorted (Figure 13)", FIG13, None),
                ("fig14", "zero entropy, bucket, staggered (Figure 14)", FIG14, None)]
        other = [d for d in dists if d not in FIG13 + FIG14]
        if other:
            figs.append(("other", "other distributions", other, None))
        for tag, what, ds, only in figs:
            panels = []
            for d in ds:
                if d not in dists:
                    continue
                s = {i: p for i, p in dists[d].items() if only is None or i in only}
                if s:
                    panels.append((d, s))
            if not panels:
                continue
            name = "%s-%s-%s-%s.svg" % (prefix, backend, typ, tag)
            figure(os.path.join(outdir, name), "%s keys: %s" % (typ, what), sub, panels)
            written.append(name)
    for name in written:
        print(os.path.join(outdir, name))
    if not written:
        print("plot_quicksort.py: no rows with check ok in %s" % src, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
