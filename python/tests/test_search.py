"""gpk.qap / tsp / ppp: costs recomputed in numpy, optima by brute force on
small instances, the shared QAPLIB / TSPLIB files with their gaps."""
import itertools

import numpy as np
import pytest

import gpk

from conftest import data_dir


@pytest.fixture
def sigint_raises():
    """Python's own SIGINT handler for the test: a process started in the
    background by a non-interactive shell inherits SIGINT ignored, and then
    neither Ctrl-C nor _thread.interrupt_main raises KeyboardInterrupt."""
    import signal
    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, old)


def qap_cost(a, b, p):
    p = np.asarray(p, dtype=np.int64)
    return int((a * b[np.ix_(p, p)]).sum())


def tsp_len(c, tour):
    d = np.sqrt(((c[tour] - c[np.roll(tour, -1)]) ** 2).sum(1))
    return int(np.floor(d + 0.5).sum())  # TSPLIB nint


@pytest.mark.parametrize("algo", ["hc", "hc-first", "tabu", "its", "multistart"])
def test_qap_matrices(rng, algo):
    n = 7
    a = rng.integers(0, 10, (n, n))
    b = rng.integers(0, 10, (n, n))
    best = min(qap_cost(a, b, q) for q in itertools.permutations(range(n)))
    r = gpk.qap(a=a, b=b, algo=algo, iters=50 if algo != "hc" else 0, global_iters=3, starts=2,
                seed=int(rng.integers(1, 1 << 30)), best_known=best)
    assert sorted(r.solution.tolist()) == list(range(n))
    assert r.cost == qap_cost(a, b, r.solution) and r.cost >= best
    assert r.gap == pytest.approx(100.0 * (r.cost - best) / best)


def test_qap_seed_and_start(rng):
    n = 12
    a = rng.integers(0, 20, (n, n))
    b = rng.integers(0, 20, (n, n))
    r1 = gpk.qap(a=a, b=b, seed=5, iters=100)
    r2 = gpk.qap(a=a, b=b, seed=5, iters=100)
    assert r1.cost == r2.cost and np.array_equal(r1.solution, r2.solution)
    start = rng.permutation(n)
    r = gpk.qap(a=a, b=b, algo="hc", start=start)
    assert r.cost <= qap_cost(a, b, start) and r.local_optimum
    with pytest.raises(ValueError):
        gpk.qap(a=a, b=b, start=start[:-1])


def test_qap_file_and_gap():
    f = data_dir() / "qaplib" / "chr12a.dat"
    if not f.exists():
        pytest.skip(f"no {f}")
    bks = None
    for line in open(f.parent / "best-known.csv"):
        parts = line.strip().split(",")
        if parts[0] == "chr12a":
            bks = int(parts[1])
    r = gpk.qap(f, iters=2000, seed=3)
    assert r.name == "chr12a" and r.best_known == bks
    assert r.gap == pytest.approx(100.0 * (r.cost - bks) / bks) and r.gap >= 0
    assert len(r.solution) == 12


def test_tsp_coords(rng):
    n = 8
    c = np.round(rng.random((n, 2)) * 1000, 3)
    best = min(tsp_len(c, np.array((0,) + q)) for q in itertools.permutations(range(1, n)))
    r = gpk.tsp(coords=c, weight="EUC_2D", iters=200, seed=2)
    assert sorted(r.solution.tolist()) == list(range(n))
    assert r.cost == tsp_len(c, r.solution) and r.cost >= best
    r = gpk.tsp(coords=c, weight="EUC_2D", algo="its", iters=100, global_iters=5, best_known=best)
    assert r.cost == tsp_len(c, r.solution) and r.gap == pytest.approx(100.0 * (r.cost - best) / best)


def test_tsp_matrix(rng):
    n = 6
    d = rng.integers(1, 100, (n, n))
    d = d + d.T
    np.fill_diagonal(d, 0)
    r = gpk.tsp(dist=d, algo="hc", nb="swap")
    tour = r.solution
    assert r.cost == int(sum(d[tour[i], tour[(i + 1) % n]] for i in range(n)))


def test_tsp_file():
    f = data_dir() / "tsplib" / "burma14.tsp"
    if not f.exists():
        pytest.skip(f"no {f}")
    r = gpk.tsp(f, iters=500)
    assert r.name == "burma14" and r.best_known == 3323 and r.cost >= 3323
    assert r.gap == pytest.approx(100.0 * (r.cost - 3323) / 3323)


def test_ppp(rng):
    r = gpk.ppp(31, 31, 7, iters=300, seed=int(rng.integers(1, 1000)))
    assert r.solution.dtype == np.int8 and set(r.solution.tolist()) <= {-1, 1}
    assert r.name == "31-31-7" and r.cost >= 0 and r.best_known == 0
    assert (r.gap == 0.0) if r.cost == 0 else (r.gap is None)
    again = gpk.ppp(31, 31, 7, algo="hc", start=r.solution)
    assert again.cost <= r.cost
    with pytest.raises(gpk.Error):
        gpk.ppp(10, 10)  # n must be odd


def test_bad_instances(tmp_path):
    bad = tmp_path / "broken.dat"
    bad.write_text("3\n1 2 3\n4 x 6\n")
    with pytest.raises(gpk.Error, match="broken"):
        gpk.qap(bad)
    badt = tmp_path / "broken.tsp"
    badt.write_text("NAME: x\nTYPE: TSP\nDIMENSION: 3\nEDGE_WEIGHT_TYPE: EUC_2D\nNODE_COORD_SECTION\n1 0 0\nEOF\n")
    with pytest.raises(gpk.Error):
        gpk.tsp(badt)
    with pytest.raises(gpk.Error) as e:
        gpk.qap(tmp_path / "missing.dat")
    assert e.value.status_name
    with pytest.raises(ValueError):
        gpk.qap(a=[[0, 1, 2], [1, 0, 1]], b=[[0]])
    with pytest.raises(ValueError):
        gpk.qap(a=[[0]], b=[[0]], algo="annealing")
    with pytest.raises(ValueError):
        gpk.tsp(coords=[[0, 0], [1, 1]], dist=[[0, 1], [1, 0]])


def test_time_limit():
    a = np.ones((5, 5), dtype=np.int64)
    if gpk._gpk.HAVE_TIME_LIMIT:
        r = gpk.qap(a=a, b=a, iters=10**9, time_limit=0.2)
        assert r.stopped == "time_limit" and r.ms < 5000
    else:
        with pytest.raises(NotImplementedError):
            gpk.qap(a=a, b=a, time_limit=1.0)
    with pytest.raises(ValueError):
        gpk.qap(a=a, b=a, time_limit=-1.0)


def test_multi_contexts(rng):
    n = 15
    a = rng.integers(0, 30, (n, n))
    b = rng.integers(0, 30, (n, n))
    cs = [gpk.Context("cpu", threads=1) for _ in range(3)]
    seed = int(rng.integers(1, 1 << 30))
    two = gpk.qap(a=a, b=b, iters=200, starts=4, seed=seed, contexts=cs[:2])
    one = gpk.qap(a=a, b=b, iters=200, starts=4, seed=seed, contexts=cs[2:])
    assert two.cost == one.cost and np.array_equal(two.solution, one.solution), "independent of the context count"
    assert two.cost == qap_cost(a, b, two.solution)
    r = gpk.tsp(coords=rng.random((30, 2)) * 100, iters=50, starts=3, contexts=cs[:2])
    assert sorted(r.solution.tolist()) == list(range(30))
    with pytest.raises(ValueError):
        gpk.qap(a=a, b=b, contexts=[cs[0], cs[0]])
    with pytest.raises(ValueError):
        gpk.qap(a=a, b=b, contexts=cs[:1], backend="cpu")
    for c in cs:
        c.close()


# ---- what a user meets first: the defaults, bad counts, Ctrl-C, real coordinates ----


def euclid_len(c, tour):
    p = c[np.asarray(tour, dtype=np.int64)]
    return float(np.sqrt(((p - np.roll(p, -1, axis=0)) ** 2).sum(1)).sum())


def test_defaults_are_the_cli_s(rng):
    """The CLI's defaults (it was tabu here): QAP its, 100 x 1000 from n =
    25; TSP multistart over or2opt; PPP its."""
    n = 25
    a = rng.integers(0, 20, (n, n))
    b = rng.integers(0, 20, (n, n))
    r = gpk.qap(a=a, b=b, seed=3)
    assert r.iterations == 100 * 1000, "the default QAP search is its, 100 x 1000"
    c = np.round(rng.random((40, 2)) * 1000)
    d = gpk.tsp(coords=c, iters=20, seed=4)
    m = gpk.tsp(coords=c, iters=20, seed=4, algo="multistart", nb="or2opt")
    assert d.cost == m.cost and np.array_equal(d.solution, m.solution) and d.iterations == m.iterations
    p = gpk.ppp(21, 21, 3, seed=5, iters=50)
    q = gpk.ppp(21, 21, 3, seed=5, iters=50, algo="its")
    assert p.cost == q.cost and p.iterations == q.iterations
    assert "or2opt" in gpk.tsp.__doc__
    # the paper's reproduction, one flag away
    pp = gpk.tsp(coords=c, seed=4, paper=True)
    ex = gpk.tsp(coords=c, seed=4, algo="its", nb="2opt", iters=1000, global_iters=10)
    assert pp.cost == ex.cost and np.array_equal(pp.solution, ex.solution) and pp.iterations == 10000
    with pytest.raises(ValueError, match="paper"):
        gpk.tsp(coords=c, paper=True, nb="swap")
    assert gpk.qap(a=a, b=b, seed=3, paper=True).iterations == 10 * 1000


@pytest.mark.parametrize("kw", ["iters", "global_iters", "tenure", "starts", "seed"])
def test_negative_counts_refused(kw):
    """A negative count wrapped to a huge unsigned one (iters=-1 ran for
    ever); the time limit bounds a search that would start anyway."""
    a = np.ones((6, 6), dtype=np.int64)
    with pytest.raises(ValueError, match=kw):
        gpk.qap(a=a, b=a, time_limit=2, **{kw: -1})
    with pytest.raises(ValueError, match=kw):
        gpk.qap(a=a, b=a, time_limit=2, **{kw: 2**64})
    if kw in ("global_iters", "tenure", "starts"):
        with pytest.raises(ValueError, match=kw):
            gpk.qap(a=a, b=a, time_limit=2, **{kw: 2**32})
    with pytest.raises(TypeError, match=kw):
        gpk.qap(a=a, b=a, time_limit=2, **{kw: 1.5})


def test_ppp_bad_sizes():
    for m, n in ((-1, 5), (5, -1), (0, 5), (2**32, 5)):
        with pytest.raises(ValueError):
            gpk.ppp(m, n, time_limit=2)
    with pytest.raises(ValueError, match="instance_seed"):
        gpk.ppp(5, 5, -3, time_limit=2)


def test_ctrl_c_stops_a_search(rng, sigint_raises):
    """Ctrl-C (SIGINT, here _thread.interrupt_main) stops a running search
    and raises KeyboardInterrupt at once (it ran to its end before)."""
    import _thread
    import threading
    import time
    n = 30
    a = rng.integers(0, 20, (n, n))
    b = rng.integers(0, 20, (n, n))
    for call in (lambda: gpk.qap(a=a, b=b, iters=10**12, time_limit=60),
                 lambda: gpk.tsp(coords=rng.random((300, 2)), time_limit=60)):
        timer = threading.Timer(0.5, _thread.interrupt_main)
        t0 = time.monotonic()
        timer.start()
        with pytest.raises(KeyboardInterrupt):
            call()
        timer.join()
        assert time.monotonic() - t0 < 20, "the search went on after Ctrl-C"


def test_ctrl_c_during_the_neighbour_lists(rng, sigint_raises):
    """A SIGINT while a large GEO instance's neighbour lists are built (all
    pairs: about 3 minutes on 2 cores) raises KeyboardInterrupt within
    seconds: the search is interruptible before its first move too (the
    signals were looked at from its progress reports only)."""
    import os
    import signal
    import threading
    import time
    n = 40000

    def ddmm(top):  # TSPLIB's GEO: DDD.MM, minutes below 60
        return rng.choice([-1, 1], n) * (rng.integers(0, top, n) + rng.integers(0, 60, n) / 100)

    c = np.column_stack([ddmm(80), ddmm(170)])
    timer = threading.Timer(2.0, os.kill, (os.getpid(), signal.SIGINT))
    t0 = time.monotonic()
    timer.start()
    with pytest.raises(KeyboardInterrupt) as err:
        gpk.tsp(coords=c, weight="GEO", time_limit=600)
    elapsed = time.monotonic() - t0
    timer.join()
    assert err.traceback[-1].name == "_search", "the signal came before the search began"
    assert elapsed < 12, f"KeyboardInterrupt {elapsed:.1f} s after the start (the signal at 2 s)"


def test_tsp_float_coords(rng):
    """Points in [0, 1): TSPLIB's rounding made every distance 0 or 1 (cost
    0, a near-random tour); the default weight is the true distance."""
    c = rng.random((200, 2))
    r = gpk.tsp(coords=c, time_limit=1)
    assert sorted(r.solution.tolist()) == list(range(200))
    assert isinstance(r.cost, float) and r.cost == pytest.approx(euclid_len(c, r.solution))
    # the optimum is about 0.7124 sqrt(n A) = 10.1 (a random tour: about 104)
    assert 9.0 < r.cost < 12.5, r.cost
    shifted = gpk.tsp(coords=c * 1e-6 + 5e3, time_limit=0.5)  # tiny and far from 0: the grid follows the points
    assert shifted.cost == pytest.approx(euclid_len(c * 1e-6 + 5e3, shifted.solution)) and shifted.cost < 12.5e-6
    with pytest.raises(ValueError):
        gpk.tsp(coords=[[0, 0], [np.nan, 1], [1, 1]], algo="hc")
    with pytest.raises(TypeError, match="masked"):
        gpk.tsp(coords=np.ma.array(c, mask=np.zeros_like(c)), algo="hc")
