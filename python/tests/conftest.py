"""Shared test helpers: fresh random seeds (printed, and repeatable with
GPK_TEST_SEED), gpk's documented key order computed independently in numpy,
and the data directory of the shared QAPLIB / TSPLIB instances."""
import os
import pathlib
import secrets

import numpy as np
import pytest

DTYPES = [np.uint32, np.int32, np.float32, np.uint64, np.int64, np.float64]
# 0, 1, small primes, powers of two and their neighbours, a large size
SIZES = [0, 1, 2, 3, 7, 13, 31, 127, 255, 256, 257, 1021, 4095, 4096, 4097, 65521, 65536, 1 << 20]


@pytest.fixture
def rng(request):
    seed = int(os.environ.get("GPK_TEST_SEED", secrets.randbits(63)))
    print(f"{request.node.name}: seed {seed} (GPK_TEST_SEED={seed} repeats it)")
    return np.random.default_rng(seed)


def random_keys(rng, dtype, n):
    """Keys that exercise every part of the order: full-range integers with
    duplicates; floats with infinities, NaNs of both signs and several
    payloads, signed zeros and denormals."""
    dt = np.dtype(dtype)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        a = rng.integers(info.min, info.max, size=n, dtype=dt, endpoint=True)
        if n > 4:
            a[rng.integers(0, n, n // 4)] = rng.integers(0, 50, n // 4).astype(dt)  # duplicates
        return a
    a = rng.standard_normal(n).astype(dt) * dt.type(1e3)
    if n > 8:
        ui = np.dtype(f"u{dt.itemsize}")
        bits = 8 * dt.itemsize
        mant = 23 if bits == 32 else 52
        specials = [np.inf, -np.inf, 0.0, -0.0, np.nan, -np.nan, np.finfo(dt).tiny / 4, -np.finfo(dt).tiny / 4,
                    np.finfo(dt).max, -np.finfo(dt).max]
        sp = np.array(specials, dtype=dt)
        # NaNs with other payloads, both signs
        exp_all = ((1 << (bits - 1 - mant)) - 1) << mant
        payload = np.array([exp_all | 1, exp_all | (1 << (mant - 1)) | 5, (1 << (bits - 1)) | exp_all | 3],
                           dtype=ui).view(dt)
        sp = np.concatenate([sp, payload])
        idx = rng.integers(0, n, max(n // 8, len(sp)))
        a[idx] = sp[rng.integers(0, len(sp), len(idx))]
    return a


def mapped(a):
    """gpk's order-preserving unsigned key (gpk/sort.h), computed here in
    numpy so the tests do not trust the library for the expected order."""
    a = np.ascontiguousarray(a)
    dt = a.dtype
    bits = 8 * dt.itemsize
    u = a.view(np.dtype(f"u{dt.itemsize}"))
    utype = u.dtype.type
    sign = utype(1) << utype(bits - 1)
    if dt.kind == "u":
        return u.copy()
    if dt.kind == "i":
        return u ^ sign
    m = np.where(u & sign, ~u, u | sign)
    mant = 23 if bits == 32 else 52
    with np.errstate(over="ignore"):
        return (m - utype((1 << mant) - 1)).astype(u.dtype)


def reference_order(a):
    """The stable permutation of a in gpk's order."""
    return np.argsort(mapped(a), kind="stable")


def same_bits(x, y):
    x, y = np.ascontiguousarray(x), np.ascontiguousarray(y)
    return x.dtype == y.dtype and x.shape == y.shape and np.array_equal(x.view(np.uint8), y.view(np.uint8))


def data_dir():
    d = os.environ.get("GPK_DATA_DIR") or str(pathlib.Path(__file__).resolve().parents[2] / ".." / "shared" / "data")
    return pathlib.Path(d)
