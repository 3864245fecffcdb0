"""gpk's sorts on numpy arrays against numpy (kind="stable") and against
gpk's documented order computed in numpy (conftest.mapped)."""
import threading

import numpy as np
import pytest

import gpk
from conftest import DTYPES, SIZES, random_keys, reference_order, same_bits


def check_sorted(a, out, seed_note=""):
    ref = a[reference_order(a)]
    assert same_bits(out, ref), f"not gpk's order {seed_note}"
    # numpy's own sort agrees, up to the order of -0.0 / +0.0 and of NaNs
    # (numpy ties the zeros and puts every NaN last as gpk does)
    assert np.array_equal(out, np.sort(a, kind="stable"), equal_nan=True)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", SIZES)
def test_sort_copy(rng, dtype, n):
    a = random_keys(rng, dtype, n)
    before = a.copy()
    out = gpk.sort(a)
    assert out is not a and out.dtype == a.dtype
    assert same_bits(a, before), "the input changed"
    check_sorted(a, out)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("algorithm", ["auto", "radix", "quick"])
@pytest.mark.parametrize("n", [1, 4099, (1 << 20) + 1])
def test_sort_copy_of_readonly_and_strided(rng, dtype, algorithm, n):
    # the copying sort reads the input where it lies (gpk_sort_keys_to):
    # a read-only array stays as it was; a strided one goes through a copy
    a = random_keys(rng, dtype, 2 * n)
    before = a.copy()
    a.flags.writeable = False
    for src in (a[:n], a[::2]):
        out = gpk.sort(src, algorithm=algorithm)
        assert out.flags.c_contiguous and out.flags.writeable and out.dtype == a.dtype
        check_sorted(src, out)
    assert same_bits(a, before), "the input changed"
    if n > 1:
        assert gpk.sort(a[1:n]).size == n - 1


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [0, 1, 31, 4097, 1 << 20])
def test_sort_inplace(rng, dtype, n):
    a = random_keys(rng, dtype, n)
    before = a.copy()
    r = gpk.sort_inplace(a)
    assert r is a
    check_sorted(before, a)


def test_signed_zero_and_nan_order():
    a = np.array([np.nan, 0.0, -0.0, np.inf, -np.nan, -np.inf, 1.0, -1.0], dtype=np.float64)
    out = gpk.sort(a)
    assert np.signbit(out[2]) and not np.signbit(out[3]), "-0.0 comes before +0.0"
    assert np.isnan(out[-2:]).all() and not np.signbit(out[-2]) and np.signbit(out[-1]), "+NaN < -NaN, last"
    assert list(out[:6]) == [-np.inf, -1.0, -0.0, 0.0, 1.0, np.inf]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [0, 1, 2, 257, 65521, 1 << 20])
def test_argsort_stable(rng, dtype, n):
    a = random_keys(rng, dtype, n)
    if n > 2:
        a[: n // 2] = a[n // 2: 2 * (n // 2)]  # many equal keys: stability shows
    before = a.copy()
    p = gpk.argsort(a)
    assert p.dtype == np.uint32 and same_bits(a, before)
    assert np.array_equal(p, reference_order(a))
    if np.dtype(dtype).kind in "iu":
        assert np.array_equal(p, np.argsort(a, kind="stable"))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("vtype", [np.uint32, np.float64, np.complex64])
@pytest.mark.parametrize("n", [0, 1, 127, 4096, 1 << 20])
def test_sort_by_key(rng, dtype, vtype, n):
    k = random_keys(rng, dtype, n)
    v = (np.arange(n) * 3 + 1).astype(vtype)
    kb, vb = k.copy(), v.copy()
    ks, vs = gpk.sort_by_key(k, v)
    assert same_bits(k, kb) and same_bits(v, vb)
    order = reference_order(k)
    assert same_bits(ks, k[order]) and same_bits(vs, v[order])
    k2, v2 = gpk.sort_by_key_inplace(k, v)
    assert k2 is k and v2 is v and same_bits(k, ks) and same_bits(v, vs)


@pytest.mark.parametrize("bits", [1, 5, 10, 17, 31, 32])
def test_key_bits(rng, bits):
    a = rng.integers(0, 1 << bits, 100003, dtype=np.uint32)
    assert np.array_equal(gpk.sort(a, key_bits=bits), np.sort(a))
    assert np.array_equal(gpk.sort(a, key_bits=bits, radix_bits=3), np.sort(a))


@pytest.mark.parametrize("algorithm", ["radix", "quick", "quick-recursive", "auto"])
@pytest.mark.parametrize("dtype", [np.uint32, np.float64])
def test_algorithms(rng, algorithm, dtype):
    a = random_keys(rng, dtype, 30011)
    check_sorted(a, gpk.sort(a, algorithm=algorithm))


def record_array(rng, dtype, n):
    # an unaligned key between a byte and a string: any offset works
    rec = np.dtype([("tag", "u1"), ("key", dtype), ("name", "S3"), ("w", "f8")], align=False)
    r = np.zeros(n, dtype=rec)
    r["key"] = random_keys(rng, dtype, n)
    r["tag"] = rng.integers(0, 255, n)
    r["name"] = [b"%03d" % (i % 1000) for i in range(n)]
    r["w"] = np.arange(n)
    return r


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [0, 1, 13, 1024, 1025, 65537])
def test_sort_records(rng, dtype, n):
    r = record_array(rng, dtype, n)
    before = r.copy()
    out = gpk.sort_records(r, "key", algorithm="radix")
    assert same_bits(r, before)
    assert same_bits(out, r[reference_order(r["key"])]), "records in stable key order"
    auto = gpk.sort_records(r, "key")  # may be the quicksort: not stable
    assert same_bits(auto["key"], out["key"])
    assert np.array_equal(np.sort(auto["w"]), np.arange(n)), "every record once"
    assert gpk.sort_records_inplace(r, "key", algorithm="radix") is r and same_bits(r, out)


def test_sort_records_other_field(rng):
    r = record_array(rng, np.int64, 5000)
    out = gpk.sort_records(r, "w", algorithm="radix")  # float64 key at offset 12
    assert np.array_equal(out, r[np.argsort(r["w"], kind="stable")])


def test_input_kinds():
    # buffer-protocol objects other than numpy, lists through the copying sort
    import array
    b = array.array("I", [3, 1, 2])
    gpk.sort_inplace(b)
    assert list(b) == [1, 2, 3]
    assert gpk.sort([3.0, 1.0]).tolist() == [1.0, 3.0]
    assert gpk.sort(np.arange(10, dtype=np.int32)[::-3]).tolist() == [0, 3, 6, 9]
    ro = np.arange(5, dtype=np.uint64)[::-1]
    ro.flags.writeable = False
    assert gpk.sort(ro).tolist() == [0, 1, 2, 3, 4]


def test_context_manager_and_threads(rng):
    a = random_keys(rng, np.float32, 10007)
    with gpk.Context("cpu", threads=1) as c1:
        assert c1.info()["threads"] == 1
        with gpk.Context("cpu", threads=2) as c2:
            assert gpk._local.stack[-1] is c2
            check_sorted(a, gpk.sort(a))
        assert gpk._local.stack[-1] is c1
        check_sorted(a, gpk.sort(a, backend=c2))
    assert not gpk._local.stack
    c2.close()
    assert c2.closed
    with pytest.raises(ValueError):
        gpk.sort(a, backend=c2)
    # default contexts: one per thread
    seen, errors = [], []

    def work():
        try:
            seen.append(gpk._host_ctx(None))
            check_sorted(a, gpk.sort(a))
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)
    ts = [threading.Thread(target=work) for _ in range(3)]
    [t.start() for t in ts]
    [t.join() for t in ts]
    assert not errors and len({id(c) for c in seen}) == 3


def test_info():
    i = gpk.info()
    assert i["version"] == gpk.__version__ and "cpu" in i["backends"]
    assert i["backends"]["cpu"]["threads"] >= 1
    # the library's list: every usable backend is in it and in info()
    names = gpk._gpk.backends()
    assert names[0] == "cpu" and len(set(names)) == len(names) and "auto" not in names
    assert all((b in i["backends"]) == gpk._gpk.backend_available(b) for b in names)
    with pytest.raises(ValueError, match=r"unknown backend 'quantum' \(auto, " + ", ".join(names) + r"\)"):
        gpk.Context("quantum")


def test_context_busy_in_another_thread():
    """A context serves one thread at a time: a call while another thread
    works on it raises RuntimeError instead of racing inside the library."""
    ctx = gpk.Context("cpu", threads=1)
    keys = np.arange(16, dtype=np.uint32)[::-1].copy()
    started = threading.Event()

    def hold():
        started.set()
        gpk._gpk.c_sort_seconds(ctx, keys, 200000)  # seconds of sorting with the GIL released
    t = threading.Thread(target=hold)
    t.start()
    started.wait()
    refused = False
    other = np.arange(8, dtype=np.uint32)
    while t.is_alive() and not refused:
        try:
            gpk.sort_inplace(other, backend=ctx)
        except RuntimeError as e:
            refused = "another thread" in str(e)
    t.join()
    assert refused, "the busy context was not refused"
    assert np.array_equal(gpk.sort(keys, backend=ctx), np.arange(16))  # free again
    ctx.close()


class DLPackOnly:
    """An object that speaks only DLPack (as a PyTorch CPU tensor or a JAX
    array does): gpk sorts it through a zero-copy numpy view."""

    def __init__(self, arr):
        self.arr = arr

    def __dlpack__(self, **kw):
        return self.arr.__dlpack__(**kw)

    def __dlpack_device__(self):
        return self.arr.__dlpack_device__()


def test_dlpack_host(rng):
    a = random_keys(rng, np.float64, 10007)
    ref = a[reference_order(a)]
    buf = a.copy()
    obj = DLPackOnly(buf)
    with pytest.raises(TypeError):
        memoryview(obj)
    assert same_bits(gpk.sort(obj), ref) and same_bits(buf, a), "the copy leaves the input"
    assert np.array_equal(gpk.argsort(obj), reference_order(a))
    assert gpk.sort_inplace(obj) is obj and same_bits(buf, ref), "sorted in the caller's memory"
    k, v = a.copy(), np.arange(a.size, dtype=np.uint32)
    ko, vo = gpk.sort_by_key_inplace(DLPackOnly(k), DLPackOnly(v))
    assert isinstance(ko, DLPackOnly) and same_bits(k, ref) and np.array_equal(v, reference_order(a))


@pytest.mark.parametrize("n", [1, 2, 257, 65521])
def test_sort_perm_u64_sigma(rng, n):
    """The uint64 sigma (gpk_sort_perm64) that argsort returns from 2^32 keys on, on small inputs."""
    a = random_keys(rng, np.float32, n)
    if n > 2:
        a[: n // 2] = a[n // 2: 2 * (n // 2)]
    keys = a.copy()
    sigma = np.full(n, 0xDEADBEEF, dtype=np.uint64)
    kb, rb = gpk._bits(None, None, "radix")
    gpk._gpk.sort_perm(gpk._host_ctx(None), keys, sigma, kb, rb, "radix")
    assert np.array_equal(sigma, reference_order(a).astype(np.uint64))
    assert same_bits(keys, a[sigma.astype(np.int64)])


# ---- lock_host: page-locked host arrays (gpk_host_lock) -----------------------------

def test_lock_host_cpu_is_a_noop_and_checks(rng):
    a = rng.integers(0, 2**32, 1000, dtype=np.uint64).astype(np.uint32)
    ref = np.sort(a)
    with gpk.Context("cpu", threads=2) as ctx:
        ctx.lock_host(a)
        with pytest.raises(ValueError, match="locked already"):
            ctx.lock_host(a)
        gpk.sort_inplace(a)
        ctx.unlock_host(a)
        with pytest.raises(ValueError, match="not locked"):
            ctx.unlock_host(a)
        with pytest.raises(ValueError, match="C-contiguous"):
            ctx.lock_host(np.zeros(10, dtype=np.uint32)[::2])
        ro = np.zeros(4, dtype=np.uint32)
        ro.flags.writeable = False
        with pytest.raises(ValueError, match="writable"):
            ctx.lock_host(ro)
        ctx.lock_host(np.zeros(0, dtype=np.uint32))
    assert np.array_equal(a, ref)


def test_lock_host_close_unlocks():
    ctx = gpk.Context("cpu")
    a = np.arange(10, dtype=np.uint32)
    ctx.lock_host(a)
    ctx.close()
    assert ctx.closed and not ctx._locked


@pytest.mark.skipif(not gpk._gpk.backend_available("cuda"), reason="no CUDA device")
def test_lock_host_cuda_sorts(rng):
    # 2^25 keys: the host API's staged path (from 64 MiB) when unlocked, DMA when locked
    a = rng.integers(0, 2**32, 1 << 25, dtype=np.uint64).astype(np.uint32)
    ref = np.sort(a)
    b = a.copy()
    with gpk.Context("cuda") as ctx:
        ctx.lock_host(a)
        gpk.sort_inplace(a)
        ctx.unlock_host(a)
        gpk.sort_inplace(b)
    assert np.array_equal(a, ref) and np.array_equal(b, ref)
