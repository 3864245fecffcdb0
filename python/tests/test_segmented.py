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


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [0, 1, 5, 1000, 70001])
def test_descending_1d_plain(dtype, n):
    """1-D descending: the plain sort (gpk_radix_opts.descending), with its
    options, the copying and in-place sorts, argsort and sort_by_key."""
    rng = np.random.default_rng(n * 7 + np.dtype(dtype).itemsize)
    x = _keys(rng, n, dtype, n % 2 == 1)
    want = _desc_argsort(x, -1)
    assert np.array_equal(gpk.sort(x, descending=True), x[want])
    assert np.array_equal(gpk.sort(x[::-1], descending=True), x[::-1][_desc_argsort(x[::-1], -1)])  # strided
    assert np.array_equal(gpk.sort(x, descending=True, algorithm="radix", radix_bits=4), x[want])
    assert np.array_equal(gpk.sort(x, descending=True, algorithm="quick"), x[want])
    got = gpk.argsort(x, descending=True)
    assert np.array_equal(got, want)
    y = x.copy()
    assert gpk.sort_inplace(y, descending=True) is y and np.array_equal(y, x[want])
    v = np.arange(n, dtype=np.uint64)
    k2, v2 = gpk.sort_by_key(x, v, descending=True)
    assert np.array_equal(k2, x[want]) and np.array_equal(v2, want)
    k3, v3 = x.copy(), v.copy()
    gpk.sort_by_key_inplace(k3, v3, descending=True)
    assert np.array_equal(k3, x[want]) and np.array_equal(v3, want)


def test_descending_records():
    r = np.array([(3, 1.5), (1, 2.5), (3, 0.5), (7, 9.0)], dtype=[("id", "u4"), ("x", "f8")])
    gpk.sort_records_inplace(r, "id", algorithm="radix", descending=True)
    assert list(r["id"]) == [7, 3, 3, 1] and list(r["x"]) == [9.0, 1.5, 0.5, 2.5]


def _device_frameworks():
    fws = []
    try:
        import cupy
        if cupy.cuda.runtime.getDeviceCount() > 0:
            fws.append("cupy")
    except Exception:  # noqa: BLE001 - absent or no device
        pass
    try:
        import torch
        if torch.cuda.is_available():
            fws.append("torch")
    except Exception:  # noqa: BLE001
        pass
    return fws


@pytest.mark.parametrize("fw", ["cupy", "torch"])
@pytest.mark.parametrize("dtype", [np.int32, np.float32, np.int64, np.float64, np.uint32])
@pytest.mark.parametrize("shape,axis", [((64, 37), -1), ((7, 3000), 1), ((50, 9), 0), ((3, 4, 33), 1),
                                        ((1, 5), -1), ((0, 5), -1), ((2, 3, 4), None), ((1000,), -1)])
def test_device_axis(fw, dtype, shape, axis):
    """2-D (and n-D) CuPy arrays and PyTorch CUDA tensors along an axis,
    both orders, against numpy; skipped without the framework and a GPU."""
    if fw not in _device_frameworks():
        pytest.skip(f"{fw} with a CUDA device is not available")
    if fw == "torch" and dtype == np.uint32:
        pytest.skip("PyTorch has few uint32 operations")
    rng = np.random.default_rng(abs(hash((str(dtype), shape, axis))) % 2**32)
    x = _keys(rng, shape, dtype, True)
    if fw == "cupy":
        import cupy
        d, back = cupy.asarray(x), cupy.asnumpy
    else:
        import torch
        d, back = torch.from_numpy(x.copy()).cuda(), (lambda t: t.cpu().numpy())
    ax = -1 if axis is None else axis
    xx = x.reshape(-1) if axis is None else x
    assert np.array_equal(back(gpk.sort(d, axis=axis)), np.sort(x, axis=axis, kind="stable"))
    assert np.array_equal(back(gpk.argsort(d, axis=axis)).astype(np.int64),
                          np.argsort(x, axis=axis, kind="stable"))
    want = _desc_argsort(xx, ax)
    assert np.array_equal(back(gpk.argsort(d, axis=axis, descending=True)).astype(np.int64), want)
    assert np.array_equal(back(gpk.sort(d, axis=axis, descending=True)), np.take_along_axis(xx, want, axis=ax))
