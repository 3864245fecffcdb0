"""Device arrays (CuPy, PyTorch, any __cuda_array_interface__ object)
sorted in place on their device and stream. Skipped without a CUDA build,
a device, or CuPy / PyTorch; GPK_REQUIRE_CUDA=1 turns the skips into
failures (scripts/gpu-check.sh sets it)."""
import os

import numpy as np
import pytest

import gpk
from conftest import random_keys, reference_order, same_bits

REQUIRE = os.environ.get("GPK_REQUIRE_CUDA") == "1"


def _frameworks():
    fws = []
    try:
        import cupy
        if cupy.cuda.runtime.getDeviceCount() > 0:
            fws.append("cupy")
    except Exception:
        pass
    try:
        import torch
        if torch.cuda.is_available():
            fws.append("torch")
    except Exception:
        pass
    return fws


FWS = _frameworks()
USABLE = bool(gpk._gpk.HAVE_CUDA) and gpk._gpk.backend_available("cuda") and bool(FWS)


def test_gpu_present():
    if not USABLE:
        why = f"HAVE_CUDA={gpk._gpk.HAVE_CUDA}, frameworks={FWS}"
        if REQUIRE:
            pytest.fail(f"GPK_REQUIRE_CUDA=1 but no usable CUDA for the Python tests ({why})")
        pytest.skip(why)


pytestmark = pytest.mark.skipif(not USABLE and not REQUIRE, reason="no CUDA build, device or CuPy/PyTorch")
FW_PARAMS = FWS  # empty: the parametrized tests are skipped (test_gpu_present reports why)
# PyTorch has few unsigned operations: its tensors here are signed and float.
TYPES = {"cupy": [np.uint32, np.int32, np.float32, np.uint64, np.int64, np.float64],
         "torch": [np.int32, np.float32, np.int64, np.float64]}


def to_dev(fw, a):
    if fw == "cupy":
        import cupy
        return cupy.asarray(a)
    import torch
    return torch.from_numpy(a.copy()).cuda()


def to_host(fw, d):
    if fw == "cupy":
        import cupy
        return cupy.asnumpy(d)
    return d.cpu().numpy()


def sync(fw):
    if fw == "cupy":
        import cupy
        cupy.cuda.Device().synchronize()
    else:
        import torch
        torch.cuda.synchronize()


def cases():
    for fw in FW_PARAMS:
        for t in TYPES[fw]:
            for n in [0, 1, 31, 4097, 65521, 1 << 20]:
                yield fw, t, n


@pytest.mark.parametrize("fw,dtype,n", list(cases()))
def test_sort_device(rng, fw, dtype, n):
    a = random_keys(rng, dtype, n)
    ref = a[reference_order(a)]
    d = to_dev(fw, a)
    out = gpk.sort(d)
    assert type(out) is type(d)
    r = gpk.sort_inplace(d)
    assert r is d
    sync(fw)
    assert same_bits(to_host(fw, out), ref)
    assert same_bits(to_host(fw, d), ref)


@pytest.mark.parametrize("fw,dtype,n", list(cases()))
def test_argsort_and_pairs_device(rng, fw, dtype, n):
    a = random_keys(rng, dtype, n)
    if n > 2:
        a[: n // 2] = a[n // 2: 2 * (n // 2)]
    d = to_dev(fw, a)
    p = gpk.argsort(d)
    sync(fw)
    assert same_bits(to_host(fw, d), a), "argsort changed its input"
    assert np.array_equal(to_host(fw, p).astype(np.int64), reference_order(a))
    v = to_dev(fw, np.arange(n, dtype=np.int32) * 7)
    ks, vs = gpk.sort_by_key(d, v)
    gpk.sort_by_key_inplace(d, v)
    sync(fw)
    order = reference_order(a)
    assert same_bits(to_host(fw, ks), a[order]) and same_bits(to_host(fw, d), a[order])
    assert np.array_equal(to_host(fw, vs), (np.arange(n, dtype=np.int32) * 7)[order])
    assert np.array_equal(to_host(fw, v), (np.arange(n, dtype=np.int32) * 7)[order])


@pytest.mark.parametrize("fw", FW_PARAMS)
def test_key_bits_device(rng, fw):
    a = rng.integers(0, 1 << 10, 1 << 20).astype(np.int32)
    for kb in (0, 10):  # 0: detect on the device
        d = to_dev(fw, a)
        gpk.sort_inplace(d, key_bits=kb)
        sync(fw)
        assert np.array_equal(to_host(fw, d), np.sort(a))


@pytest.mark.parametrize("fw", FW_PARAMS)
def test_stream(rng, fw):
    a = random_keys(rng, np.float32, 1 << 22)
    if fw == "cupy":
        import cupy
        s = cupy.cuda.Stream(non_blocking=True)
        with s:
            d = cupy.asarray(a)
            gpk.sort_inplace(d)
            out = gpk.sort(d[::-1].copy())
        s.synchronize()
        got, got2 = cupy.asnumpy(d), cupy.asnumpy(out)
    else:
        import torch
        s = torch.cuda.Stream()
        with torch.cuda.stream(s):
            d = torch.from_numpy(a).cuda()
            gpk.sort_inplace(d)
            out = gpk.sort(torch.flip(d, [0]))
        s.synchronize()
        got, got2 = d.cpu().numpy(), out.cpu().numpy()
    ref = a[reference_order(a)]
    assert same_bits(got, ref) and same_bits(got2, ref)


@pytest.mark.parametrize("fw", FW_PARAMS)
def test_device_errors(rng, fw):
    a = rng.integers(0, 100, 1000).astype(np.int32)
    d = to_dev(fw, a)
    with gpk.Context("cpu"):
        with pytest.raises(ValueError, match="CUDA context"):
            gpk.sort_inplace(d)
    with pytest.raises(ValueError):
        gpk.sort_inplace(d, backend="cpu")
    with pytest.raises(TypeError):
        gpk.sort_inplace(to_dev(fw, a.astype(np.int16)))
    with pytest.raises(ValueError):
        gpk.sort_inplace(d[::2])
    sync(fw)
    assert np.array_equal(to_host(fw, d), a), "unchanged after the errors"


class Wrapped:
    """A bare __cuda_array_interface__ object: gpk allocates its temporary
    storage with cudaMallocAsync on the stream."""

    def __init__(self, inner):
        self.inner = inner
        self.__cuda_array_interface__ = inner.__cuda_array_interface__


@pytest.mark.skipif("cupy" not in FWS, reason="needs CuPy")
def test_generic_cai(rng):
    import cupy
    a = random_keys(rng, np.uint64, 100003)
    d = cupy.asarray(a)
    gpk.sort_inplace(Wrapped(d))
    cupy.cuda.Device().synchronize()
    assert same_bits(cupy.asnumpy(d), a[reference_order(a)])
    with pytest.raises(TypeError):
        gpk.sort(Wrapped(d))  # a copy needs CuPy or PyTorch to allocate it


@pytest.mark.parametrize("fw", FW_PARAMS)
def test_cuda_context_for_numpy(rng, fw):
    a = random_keys(rng, np.float64, 1 << 20)
    with gpk.Context("cuda") as c:
        assert c.backend == "cuda"
        out = gpk.sort(a)  # the host API on the GPU
    assert same_bits(out, a[reference_order(a)])


@pytest.mark.parametrize("fw", FW_PARAMS)
def test_dlpack_device(rng, fw):
    """A CUDA object that speaks only DLPack is sorted in its own memory
    (through a zero-copy CuPy or PyTorch view)."""
    from test_sort import DLPackOnly
    a = random_keys(rng, np.float32, 100003)
    d = to_dev(fw, a)
    obj = DLPackOnly(d)
    assert gpk.sort_inplace(obj) is obj
    sync(fw)
    assert same_bits(to_host(fw, d), a[reference_order(a)])
