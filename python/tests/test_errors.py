"""Bad input: an exception, and the caller's array unchanged."""
import numpy as np
import pytest

import gpk
from conftest import same_bits


def unchanged_after(exc, fn, *arrays):
    before = [a.copy() for a in arrays]
    with pytest.raises(exc) as e:
        fn()
    for a, b in zip(arrays, before):
        assert same_bits(a, b), "the caller's array changed"
    return e


@pytest.mark.parametrize("dtype", [np.int16, np.uint8, np.float16, np.bool_, np.complex128, ">u4", ">f8"])
def test_bad_dtype(dtype):
    a = np.array([3, 1, 2]).astype(dtype)
    unchanged_after(TypeError, lambda: gpk.sort_inplace(a), a)
    unchanged_after(TypeError, lambda: gpk.sort(a), a)
    unchanged_after(TypeError, lambda: gpk.argsort(a), a)


def test_object_and_non_arrays():
    with pytest.raises(TypeError):
        gpk.sort_inplace(np.array([1, "x"], dtype=object))
    with pytest.raises(TypeError):
        gpk.sort_inplace([3, 1])  # a list has no buffer to sort in place
    with pytest.raises(TypeError):
        gpk.sort_inplace(b"\x03\x01")  # bytes: unsigned chars


def test_two_dimensional():
    a = np.arange(12, dtype=np.uint32)[::-1].reshape(3, 4).copy()
    e = unchanged_after(ValueError, lambda: gpk.sort_inplace(a), a)
    assert "1-D" in str(e.value)
    # the copying calls sort a matrix along its last axis (numpy's default),
    # leaving it unchanged
    a0 = a.copy()
    assert np.array_equal(gpk.sort(a), np.sort(a, axis=-1))
    assert np.array_equal(gpk.argsort(a), np.argsort(a, axis=-1, kind="stable"))
    assert np.array_equal(a, a0)


def test_non_contiguous_inplace():
    base = np.arange(20, dtype=np.float64)[::-1].copy()
    a = base[::2]
    e = unchanged_after(ValueError, lambda: gpk.sort_inplace(a), base)
    assert "contiguous" in str(e.value)
    k = np.arange(10, dtype=np.uint32)[::-1].copy()
    unchanged_after(ValueError, lambda: gpk.sort_by_key_inplace(k, base[::2]), k, base)


def test_read_only_inplace():
    a = np.arange(10, dtype=np.int32)[::-1].copy()
    a.flags.writeable = False
    e = unchanged_after(ValueError, lambda: gpk.sort_inplace(a), a)
    assert "read-only" in str(e.value)
    assert gpk.sort(a).tolist() == list(range(10))


def test_bad_options():
    a = np.arange(100, dtype=np.uint32)[::-1].copy()
    unchanged_after(ValueError, lambda: gpk.sort_inplace(a, radix_bits=17), a)
    unchanged_after(ValueError, lambda: gpk.sort_inplace(a, key_bits=65), a)
    unchanged_after(ValueError, lambda: gpk.sort_inplace(a, key_bits=-1), a)
    unchanged_after(ValueError, lambda: gpk.sort_inplace(a, algorithm="bogo"), a)
    unchanged_after(ValueError, lambda: gpk.sort_inplace(a, backend="quantum"), a)


def test_library_refusal_leaves_array():
    a = np.arange(100, dtype=np.uint32)[::-1].copy()
    e = unchanged_after(gpk.Error, lambda: gpk.sort_inplace(a, key_bits=40), a)
    assert "key_bits" in str(e.value) and e.value.status_name == "invalid argument"
    k, v = a.copy(), np.arange(100, dtype=np.float32)
    unchanged_after(gpk.Error, lambda: gpk.sort_by_key_inplace(k, v, key_bits=33), k, v)


def test_by_key_mismatch():
    k = np.arange(10, dtype=np.uint32)[::-1].copy()
    v = np.arange(9, dtype=np.uint32)
    unchanged_after(ValueError, lambda: gpk.sort_by_key_inplace(k, v), k, v)
    w = np.arange(10, dtype=np.int16)
    unchanged_after(TypeError, lambda: gpk.sort_by_key_inplace(k, w), k, w)


def test_records_errors():
    r = np.zeros(4, dtype=[("a", "u4"), ("b", "f2"), ("c", "u4", (2,))])
    r["a"] = [4, 3, 2, 1]
    unchanged_after(ValueError, lambda: gpk.sort_records_inplace(r, "nope"), r)
    unchanged_after(TypeError, lambda: gpk.sort_records_inplace(r, "b"), r)
    unchanged_after(TypeError, lambda: gpk.sort_records_inplace(r, "c"), r)
    unchanged_after(TypeError, lambda: gpk.sort_records_inplace(np.arange(4, dtype=np.uint32), "a"))
    big = np.zeros(3, dtype=[("k", "u4"), ("pad", "S300")])
    unchanged_after(ValueError, lambda: gpk.sort_records_inplace(big, "k"), big)
    r.flags.writeable = False
    unchanged_after(ValueError, lambda: gpk.sort_records_inplace(r, "a"), r)


class FakeCudaArray:
    """Anything with __cuda_array_interface__: gpk must refuse it before
    touching the (here bogus) pointer."""

    def __init__(self, typestr="<u4", shape=(8,), strides=None, readonly=False):
        self.__cuda_array_interface__ = {"version": 3, "typestr": typestr, "shape": shape, "strides": strides,
                                         "data": (0xdead0000, readonly), "stream": None}


def test_cuda_array_with_cpu_context():
    with gpk.Context("cpu"):
        e = unchanged_after(ValueError, lambda: gpk.sort_inplace(FakeCudaArray()))
        assert "CUDA context" in str(e.value)
    with pytest.raises(ValueError):
        gpk.sort_inplace(FakeCudaArray(), backend="cpu")
    if not gpk._gpk.HAVE_CUDA:
        with pytest.raises(ValueError, match="CUDA"):
            gpk.sort_inplace(FakeCudaArray())


def test_cuda_array_shape_dtype_checks():
    with pytest.raises(TypeError):
        gpk.sort_inplace(FakeCudaArray(typestr="<i2"))
    with pytest.raises(ValueError):
        gpk.sort_inplace(FakeCudaArray(shape=(2, 4)))
    with pytest.raises(ValueError):
        gpk.sort_inplace(FakeCudaArray(strides=(8,)))
    with pytest.raises(ValueError):
        gpk.sort_inplace(FakeCudaArray(readonly=True))


def test_device_keys_host_values():
    v = np.arange(8, dtype=np.uint32)
    unchanged_after(TypeError, lambda: gpk.sort_by_key_inplace(FakeCudaArray(), v), v)
    unchanged_after(TypeError, lambda: gpk.sort_by_key_inplace(v, FakeCudaArray()), v)


def test_library_error_carries_message():
    if gpk._gpk.backend_available("cuda"):
        pytest.skip("CUDA is usable here")
    with pytest.raises(gpk.Error) as e:
        gpk.Context("cuda")
    assert e.value.status_name and str(e.value)
    assert isinstance(e.value.status, int) and e.value.status != 0


def test_context_closed_and_threads():
    c = gpk.Context("cpu")
    with pytest.raises(ValueError):
        c.set_threads(-1)
    c.close()
    a = np.arange(5, dtype=np.uint32)
    with pytest.raises(ValueError, match="closed"):
        gpk.sort_inplace(a, backend=c)
    with pytest.raises(ValueError):
        gpk.Context("cpu", threads=-2)


def test_refused_with_the_cause():
    """Masked arrays lost their mask, None and datetimes gave misleading
    messages."""
    m = np.ma.array(np.array([3, 1, 2], dtype=np.int64), mask=[0, 1, 0])
    for f in (gpk.sort, gpk.sort_inplace, gpk.argsort):
        with pytest.raises(TypeError, match="masked"):
            f(m)
    assert m.data.tolist() == [3, 1, 2]
    with pytest.raises(TypeError, match="None"):
        gpk.sort(None)
    d = np.array(["2020-01-02", "2019-01-01"], dtype="datetime64[D]")
    with pytest.raises(TypeError, match="int64"):
        gpk.sort(d)
    with pytest.raises(TypeError, match="int64"):
        gpk.argsort(np.array([2, 1], dtype="timedelta64[s]"))


def test_overlapping_keys_and_values():
    """sort_by_key_inplace(z[:-1], z[1:]) returned success and corrupted z."""
    z = np.arange(10, dtype=np.uint32)[::-1].copy()
    before = z.copy()
    with pytest.raises(ValueError, match="overlap"):
        gpk.sort_by_key_inplace(z[:-1], z[1:])
    with pytest.raises(ValueError, match="overlap"):
        gpk.sort_by_key_inplace(z, z)
    assert np.array_equal(z, before)
    k, v = z[:5].copy(), z[5:]  # disjoint parts of one buffer are fine
    gpk.sort_by_key_inplace(z[:5], v)
    assert z[:5].tolist() == sorted(k.tolist())
