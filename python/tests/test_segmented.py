"""gpk.sort / gpk.argsort along an axis and in descending order (the
segmented sort) against numpy, on the CPU backend."""
import numpy as np
import pytest

import gpk

DTYPES = [np.uint32, np.int32, np.float32, np.uint64, np.int64, np.float64]


def _keys(rng, shape, dtype, dups):
    if np.dtype(dtype).kind == "f":
        x = rng.standard_normal(shape).astype(dtype)
        if dups:
            x = np.round(x * 2).astype(dtype) + np.asarray(0.25, dtype)  # few values, never 0
        return x
    info = np.iinfo(dtype)
    hi = 5 if dups else info.max
    lo = -5 if dups and info.min < 0 else (0 if dups else info.min + (info.min < 0))
    return rng.integers(lo, hi, size=shape, dtype=dtype, endpoint=True)


def _desc_argsort(x, axis):
    """numpy's stable descending argsort: the stable ascending one of the
    keys' reverse order (keys here hold no NaN, no zero, no minimum)."""
    if np.dtype(x.dtype).kind == "u":
        return np.argsort(np.iinfo(x.dtype).max - x, axis=axis, kind="stable")
    return np.argsort(-x, axis=axis, kind="stable")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,axis", [((64, 37), -1), ((7, 300), 1), ((50, 9), 0), ((3, 4, 33), 1),
                                        ((1000, 1), -1), ((0, 5), -1), ((5, 0), -1), ((2, 3, 4), None)])
@pytest.mark.parametrize("dups", [False, True])
def test_sort_axis(dtype, shape, axis, dups):
    rng = np.random.default_rng(abs(hash((str(dtype), shape, axis, dups))) % 2**32)
    x = _keys(rng, shape, dtype, dups)
    x0 = x.copy()
    got = gpk.sort(x, axis=axis)
    assert np.array_equal(got, np.sort(x, axis=axis, kind="stable"))
    assert np.array_equal(x, x0)  # the input is not changed
    assert got.flags.c_contiguous
    got = gpk.argsort(x, axis=axis)
    assert got.dtype == np.uint32
    assert np.array_equal(got, np.argsort(x, axis=axis, kind="stable"))
    # descending: the reverse order of the keys, stable
    ax = -1 if axis is None else axis
    xx = x.reshape(-1) if axis is None else x
    want = _desc_argsort(xx, ax)
    assert np.array_equal(gpk.argsort(x, axis=axis, descending=True), want)
    assert np.array_equal(gpk.sort(x, axis=axis, descending=True), np.take_along_axis(xx, want, axis=ax))


def test_descending_1d_nan_last():
    x = np.array([1.0, np.nan, -np.inf, 0.0, -0.0, np.inf, 3.0], dtype=np.float32)
    got = gpk.sort(x, descending=True)
    assert np.array_equal(got[:6], np.array([np.inf, 3.0, 1.0, 0.0, -0.0, -np.inf], dtype=np.float32))
    assert np.signbit(got[4]) and not np.signbit(got[3])  # +0.0 before -0.0, the reverse of ascending
    assert np.isnan(got[6])
    assert np.array_equal(gpk.argsort(x, descending=True), np.array([5, 6, 0, 3, 4, 2, 1], dtype=np.uint32))
    # ascending along rows: NaN last, as numpy
    m = np.array([[np.nan, 2.0, 1.0], [5.0, np.nan, -1.0]])
    assert np.array_equal(gpk.sort(m), np.sort(m, axis=-1), equal_nan=True)


def test_errors():
    x = np.arange(12, dtype=np.int32).reshape(3, 4)
    with pytest.raises(ValueError):
        gpk.sort(x, axis=2)
    with pytest.raises(ValueError):
        gpk.sort(np.arange(5, dtype=np.int32), axis=3)
    with pytest.raises(ValueError):
        gpk.sort(x, key_bits=8)
    with pytest.raises(ValueError):
        gpk.argsort(x, descending=True, radix_bits=4)
    with pytest.raises(TypeError):
        gpk.sort(np.zeros((2, 2), dtype=np.int16))
    # the 1-D ascending calls are the plain sort, as before
    assert np.array_equal(gpk.sort(np.array([3, 1, 2], dtype=np.uint32)), [1, 2, 3])
