#!/usr/bin/env bash
# Issue 18's quality goals in one call per part, each under 10 minutes on
# the 16-core GPU host. Results in $OUT (default /tmp/out): PART.json, and a
# summary table printed last.
#
#   tsp  (~9 min) the TSP goal: "mean gap at most 1 % over 5 seeds at a 10 s
#        limit on 16 threads, every instance of tsplib/ with 100 to 1000
#        cities" (39 instances). Run serially that is 39 x 5 x 10 s = 33 min,
#        so it runs in two stages, and the output says for every (instance,
#        seed) which stage its figure comes from:
#        1. screen: every instance and seed at a 1 s limit (same command,
#           same 16 threads): 195 runs, about 3.5 min;
#        2. full: the real 10 s runs of the (instance, seed) pairs that were
#           not optimal at 1 s, worst gap first, for as long as the wall
#           budget (I18Q_WALL, default 540 s from the script's start, a
#           build included) allows.
#        A pair's figure is its 10 s gap where it ran; else 0 when the 1 s
#        run was optimal; else the 1 s gap, marked as a bound. Why the 1 s
#        figures stand for 10 s: gpk tsp --nb or2opt --algo multistart runs
#        `starts` = 16 independent iterated local searches, run s seeded
#        from (seed, s) alone; a time limit only decides when each stops, and
#        each keeps the best tour it met. A 10 s run of the same seed thus
#        replays every trajectory of the 1 s run and goes on, so its gap is
#        at most the 1 s gap (0 stays 0). This assumes the 10 s run gets at
#        least the 1 s run's kicks per trajectory (the same idle machine);
#        the pairs run in both stages check it (a 10 s gap above the 1 s gap
#        is counted and printed as "monotone violations").
#        The verdict counts a bound as the value, so it can only be pessimistic.
#   qap  (~2 min) QAP: tai*a up to n = 100, iterated tabu search at the
#        default budget (docs/search.md) on the GPU, 5 seeds, and the
#        same on the CPU for tai10a..tai40a (the same solutions).
#   large [LIMIT_S [N]]  (~3 min) issue 30's goal "gpk tsp on 85 900 cities
#        with no options: under 2 % in 60 s on 16 cores": `gpk tsp` with no
#        search option (the defaults: multistart over all cores, or2opt,
#        10 s) and with --time-limit LIMIT_S alone (default 60), on
#        tsplib/pla33810 (gap against its optimum) and on `--random N`
#        (default 85 900) cities uniform over [0, 10^6)^2, whose length is
#        set against the Beardwood-Halton-Hammersley estimate
#        0.7124 sqrt(N A): an asymptotic ESTIMATE of the optimum, not a
#        bound (a finite instance's optimum lies somewhat above it, by the
#        boundary's effect, so the gap against it is pessimistic). The
#        wall time of each run (reading, neighbour lists, search) is
#        printed beside the search's own time. Check it on a small machine
#        with `search-quality.sh large 5 5000`.
#
#   GPK       the gpk binary (default: build-issue18/gpk, built here with
#             CUDA for sm_90 when missing)
#   GPK_DATA  instance directory with tsplib/ and qaplib/ (default
#             ../shared/data, else $PWD/.carry/data)
#   I18Q_WALL (tsp) wall-clock budget in seconds (default 540)
#   I18Q_LIMIT, I18Q_SCREEN, I18Q_THREADS, I18Q_SEEDS (tsp): 10, 1, 16, 5
#   I18Q_BACKEND (qap): cuda (default) or cpu; I18Q_QMAX: largest n (100)
set -u
I18Q_T0=${I18Q_T0:-$(date +%s)}
export I18Q_T0
part=${1:?usage: search-quality.sh tsp|qap|large [LIMIT_S [N]]}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 1
out=${OUT:-/tmp/out}
mkdir -p "$out"
data=${GPK_DATA:-$root/../shared/data}
[ -d "$data/tsplib" ] || data=$root/.carry/data
export PATH="$PATH:/usr/local/cuda/bin"
gpk=${GPK:-$root/build-issue18/gpk}
if [ ! -x "$gpk" ]; then
    build=$root/build-issue18
    { cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DGPK_WITH_CUDA_OCTREE=OFF \
        -DGPK_WITH_OPENCL=OFF -DGPK_WITH_CDP=OFF >"$out/cmake-$part.log" 2>&1 &&
        cmake --build "$build" -j 16 --target gpk_cli >"$out/build-$part.log" 2>&1; } ||
        { tail -n 30 "$out/build-$part.log" "$out/cmake-$part.log" 2>/dev/null; exit 1; }
    gpk=$build/gpk
fi

case $part in
tsp)
    python3 - "$gpk" "$data/tsplib" "$out/tsp.json" <<'PY'
import json, os, re, subprocess, sys, time
gpk, tsplib, out = sys.argv[1:4]
env = os.environ.get
limit = float(env("I18Q_LIMIT", "10")); screen = float(env("I18Q_SCREEN", "1"))
threads = int(env("I18Q_THREADS", "16")); seeds = int(env("I18Q_SEEDS", "5"))
wall = float(env("I18Q_WALL", "540"))
t0 = float(env("I18Q_T0", str(time.time())))  # the script's start: a build counts too
insts = []
for f in sorted(os.listdir(tsplib)):
    if not f.endswith(".tsp"):
        continue
    m = re.search(r"^DIMENSION\s*:\s*(\d+)", open(os.path.join(tsplib, f), errors="replace").read(4096), re.M)
    if m and 100 <= int(m.group(1)) <= 1000:
        insts.append((int(m.group(1)), f[:-4]))
insts.sort()

def run(name, seed, lim):
    cmd = [gpk, "tsp", os.path.join(tsplib, name + ".tsp"), "--nb", "or2opt", "--algo", "multistart",
           "--threads", str(threads), "--time-limit", str(lim), "--seed", str(seed), "-q", "--json"]
    p = subprocess.run(cmd, capture_output=True, text=True)
    try:
        r = json.loads(p.stdout)
    except ValueError:
        r = {"instance": name, "error": (p.stderr or "no output")[-400:]}
    r["limit_s"] = lim
    r["wall_s"] = time.time() - t0
    if p.returncode != 0 or r.get("check") != "ok":
        print("FAILED: %s seed %d limit %g: rc %d %s" % (name, seed, lim, p.returncode, p.stderr[-300:]), file=sys.stderr)
        r["failed"] = True
    return r

screen_runs = {}
for n, name in insts:
    for s in range(1, seeds + 1):
        screen_runs[(name, s)] = run(name, s, screen)
t_screen = time.time() - t0  # (from the script's start)
todo = [(k, r["gap_percent"]) for k, r in screen_runs.items() if r.get("gap_percent") not in (None, 0) or r.get("failed")]
todo.sort(key=lambda kr: -(kr[1] if kr[1] is not None else 1e9))
full_runs = {}
for (name, s), g in todo:
    if time.time() - t0 + limit + 3 > wall:
        break
    full_runs[(name, s)] = run(name, s, limit)
t_all = time.time() - t0

rows, worst, violations, failed = [], 0.0, [], 0
for n, name in insts:
    vals, src = [], {"full": 0, "opt_at_screen": 0, "bound": 0, "none": 0}
    opt = None
    for s in range(1, seeds + 1):
        a, b = screen_runs[(name, s)], full_runs.get((name, s))
        failed += bool(a.get("failed")) + bool(b and b.get("failed"))
        opt = opt or a.get("best_known")
        if b is not None and b.get("gap_percent") is not None:
            vals.append(b["gap_percent"]); src["full"] += 1
            if a.get("gap_percent") is not None and b["gap_percent"] > a["gap_percent"] + 1e-9:
                violations.append("%s seed %d: %g s %.3f%% > %g s %.3f%%" % (name, s, limit, b["gap_percent"], screen,
                                                                          a["gap_percent"]))
        elif a.get("gap_percent") == 0:
            vals.append(0.0); src["opt_at_screen"] += 1
        elif a.get("gap_percent") is not None:
            vals.append(a["gap_percent"]); src["bound"] += 1
        else:
            src["none"] += 1
    mean = sum(vals) / len(vals) if vals else None
    if mean is not None:
        worst = max(worst, mean)
    rows.append({"instance": name, "n": n, "optimum": opt, "mean_gap": mean, "max_gap": max(vals) if vals else None,
                 "seeds": src})
verdict = ("met" if worst <= 1.0 and not failed and all(r["mean_gap"] is not None for r in rows) else "NOT shown")
json.dump({"goal": "TSP mean gap <= 1%% over %d seeds at a %g s limit on %d threads, tsplib 100..1000 cities" %
                   (seeds, limit, threads),
           "method": "screen every (instance, seed) at %g s; rerun at %g s those not optimal, worst first, within %g s "
                     "of wall time; a pair optimal at %g s counts 0, one not rerun counts its %g s gap (an upper bound "
                     "of its %g s gap)" % (screen, limit, wall, screen, screen, limit),
           "limit_s": limit, "screen_s": screen, "threads": threads, "seeds": seeds, "wall_budget_s": wall,
           "wall_screen_s": t_screen, "wall_total_s": t_all, "monotone_violations": violations, "failed_runs": failed,
           "instances": rows, "worst_mean_gap": worst, "verdict": verdict,
           "screen_runs": list(screen_runs.values()), "full_runs": list(full_runs.values())}, open(out, "w"), indent=1)
print("TSP quality: %d instances x %d seeds; screen %g s (%d runs, %.0f s), full %g s (%d runs), %.0f s in all" %
      (len(insts), seeds, screen, len(screen_runs), t_screen, limit, len(full_runs), t_all))
print("seeds column: F = measured at %g s, O = optimal at %g s (so at %g s), B = %g s gap kept as a bound" %
      (limit, screen, limit, screen))
print("%-12s %5s %9s %9s %9s  %s" % ("instance", "n", "optimum", "mean gap", "max gap", "seeds F/O/B"))
for r in rows:
    s = r["seeds"]
    print("%-12s %5d %9s %8s%% %8s%%  %d/%d/%d%s" % (r["instance"], r["n"], r["optimum"],
          "%.3f" % r["mean_gap"] if r["mean_gap"] is not None else "-",
          "%.3f" % r["max_gap"] if r["max_gap"] is not None else "-", s["full"], s["opt_at_screen"], s["bound"],
          " (no result for %d)" % s["none"] if s["none"] else ""))
for v in violations:
    print("monotone violation:", v)
print("worst mean gap %.3f%%, failed runs %d, monotone violations %d: goal (<= 1%%) %s" %
      (worst, failed, len(violations), verdict))
PY
    ;;
qap)
    be=${I18Q_BACKEND:-cuda}
    q="$root/bench/qap_quality.sh"
    qmax=${I18Q_QMAX:-100}
    t0=$(date +%s)
    GPK_QAPLIB=$data/qaplib sh "$q" "$gpk" "$out/qap-$be.json" 5 "$qmax" --backend "$be" >"$out/qap-$be.txt" 2>&1
    t1=$(date +%s)
    GPK_QAPLIB=$data/qaplib sh "$q" "$gpk" "$out/qap-cpu-small.json" 5 $((qmax < 40 ? qmax : 40)) --backend cpu \
        >"$out/qap-cpu-small.txt" 2>&1
    echo "QAP on $be: $((t1 - t0)) s for 5 seeds of tai*a up to n = $qmax; the CPU check $(($(date +%s) - t1)) s"
    python3 - "$out/qap-$be.json" "$out/qap-cpu-small.json" <<'PY'
import json, sys
a = {(r["instance"], r["seed"]): r["best"] for r in json.load(open(sys.argv[1]))}
b = {(r["instance"], r["seed"]): r["best"] for r in json.load(open(sys.argv[2]))}
same = sum(a.get(k) == v for k, v in b.items())
print("CPU and the run above agree on %d of %d runs (the CPU check: tai*a to n = 40 at most, 5 seeds)%s" %
      (same, len(b), "" if same == len(b) else ": DIFFERENT SOLUTIONS"))
PY
    cat "$out/qap-$be.txt"
    ;;
large)
    python3 - "$gpk" "$data/tsplib" "$out/large.json" "${2:-60}" "${3:-85900}" <<'PY'
import json, math, os, subprocess, sys, time
gpk, tsplib, out, limit, n_random = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4]), int(sys.argv[5])
area = 1e12  # gpk tsp --random: uniform over [0, 10^6)^2
bhh = 0.7124 * math.sqrt(n_random * area)
cases = []
pla = os.path.join(tsplib, "pla33810.tsp")
if os.path.exists(pla):
    cases.append(("pla33810", [pla]))
else:
    print("note: %s not found: pla33810 skipped" % pla, file=sys.stderr)
cases.append(("random-%d" % n_random, ["--random", str(n_random)]))
rows = []
for name, inst in cases:
    for opts in ([], ["--time-limit", "%g" % limit]):
        cmd = [gpk, "tsp"] + inst + opts + ["--json", "-q"]
        t = time.time()
        p = subprocess.run(cmd, capture_output=True, text=True)
        wall = time.time() - t
        try:
            r = json.loads(p.stdout)
        except ValueError:
            r = {"error": (p.stderr or "no output")[-400:]}
        r["instance_name"], r["options"], r["wall_s"], r["rc"] = name, " ".join(opts) or "(none)", wall, p.returncode
        if name.startswith("random") and r.get("best"):
            r["bhh_estimate"] = bhh
            r["gap_vs_estimate_percent"] = 100.0 * (r["best"] / bhh - 1.0)
        rows.append(r)
        print("ran: %s %s: rc %d, %.1f s" % (name, r["options"], p.returncode, wall), file=sys.stderr, flush=True)
json.dump({"goal": "gpk tsp on 85 900 cities with no options: under 2% in 60 s on 16 cores",
           "bhh": "0.7124 sqrt(N A), A = 1e12: an asymptotic estimate of the optimum, not a bound",
           "threads": os.cpu_count(), "runs": rows}, open(out, "w"), indent=1)
print("gpk tsp, large instances, %d cores (%s)" % (os.cpu_count(), gpk))
print("%-14s %-18s %12s %12s %9s %8s %8s %9s  %s" % ("instance", "options", "length", "reference", "gap",
      "search s", "wall s", "iters", "stopped"))
for r in rows:
    ref, gap = r.get("best_known"), r.get("gap_percent")
    if "bhh_estimate" in r:
        ref, gap = r["bhh_estimate"], r["gap_vs_estimate_percent"]
    print("%-14s %-18s %12s %12s %9s %8.1f %8.1f %9s  %s" % (
        r["instance_name"], r["options"], r.get("best", "-"), "%.0f%s" % (ref, " (BHH)" if "bhh_estimate" in r else "")
        if ref else "-", "%.3f%%" % gap if gap is not None else "-", r.get("ms", 0) / 1e3, r["wall_s"],
        r.get("iterations", "-"), r.get("stopped", r.get("error", "?"))))
print("random: the gap is against the BHH estimate 0.7124 sqrt(N A) = %.0f (an estimate, not the optimum)" % bhh)
PY
    ;;
*)
    echo "unknown part $part (tsp, qap or large)" >&2
    exit 2
    ;;
esac
