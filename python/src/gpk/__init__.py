"""gpk: the GPU parallel kit from Python.

Sorting (radix sort, quicksort), octrees of particles and local search
(QAP, TSP, PPP) over numpy arrays on the CPU and CuPy / PyTorch arrays on
the GPU, through libgpk. Keys sort in gpk's order: for floats
-inf < ... < -0.0 < +0.0 < ... < +inf < NaN (every NaN last), which is
numpy's order except that numpy ties -0.0 and +0.0.

>>> import numpy as np, gpk
>>> gpk.sort(np.array([3, 1, 2], dtype=np.uint32))
array([1, 2, 3], dtype=uint32)
>>> gpk.sort(np.array([0.0, np.nan, -0.0, -np.inf]))
array([-inf,  -0.,   0.,  nan])
"""
from __future__ import annotations

import os
import threading
from typing import Any, NamedTuple, Optional, Sequence, Union

import numpy as np

from . import _gpk
from ._gpk import Error

__all__ = [
    "Context", "Error", "Octree", "SearchResult", "argsort", "info", "octree", "ppp", "qap", "sort",
    "sort_by_key", "sort_by_key_inplace", "sort_inplace", "sort_records", "sort_records_inplace", "tsp",
]
__version__ = _gpk.version

# ---- contexts ----------------------------------------------------------------


class _Local(threading.local):
    def __init__(self) -> None:
        self.stack: list = []      # contexts entered with `with`, innermost last
        self.defaults: dict = {}   # (backend, device) -> this thread's default Context


_local = _Local()


class Context(_gpk.Context):
    """A libgpk context: one backend, one device, a CPU thread count.

    ``Context(backend="auto", device=-1, threads=0)``: backend is "auto",
    "cpu", "cuda" or "opencl"; device -1 means GPK_DEVICE, else 0; threads 0
    means GPK_THREADS, else every core. Used as a context manager it becomes
    the current context of this thread for every gpk call inside the block
    (blocks nest); leaving the block makes the outer one current again and
    does not close it. Without one, each thread gets default contexts of
    its own: a CPU context for numpy arrays (the GPK_BACKEND environment
    variable, when set, picks it instead), a CUDA context on the array's
    device for device arrays. A context serves one thread at a time: a
    call from a second thread while one runs raises RuntimeError.

    >>> import numpy as np, gpk
    >>> with gpk.Context("cpu", threads=2) as ctx:
    ...     print(ctx.backend, gpk.sort(np.array([2, 1], dtype=np.int32)))
    cpu [1 2]
    """

    def __init__(self, backend: str = "auto", device: int = -1, threads: int = 0) -> None:
        super().__init__(backend, device, threads)
        self._locked: dict = {}

    def lock_host(self, array: Any) -> None:
        """Page-locks a writable C-contiguous host array (gpk_host_lock) so
        that the sorts of a CUDA context move it by DMA, without staging
        copies: worth it for arrays sorted again and again (locking costs
        about 1 s per 50 GB, once). The context keeps the array alive until
        unlock_host(array) or close(). On CPU and OpenCL contexts it does
        nothing.

        >>> import numpy as np, gpk
        >>> a = np.array([3, 1, 2], dtype=np.uint32)
        >>> with gpk.Context("cpu") as ctx:
        ...     ctx.lock_host(a)
        ...     _ = gpk.sort_inplace(a)
        ...     ctx.unlock_host(a)
        >>> a
        array([1, 2, 3], dtype=uint32)
        """
        key = _address(array)
        if key in self._locked:
            raise ValueError("lock_host: this array is locked already")
        self._host_lock(array)
        self._locked[key] = array

    def unlock_host(self, array: Any) -> None:
        """Unlocks an array that lock_host locked (gpk_host_unlock)."""
        key = _address(array)
        if key not in self._locked:
            raise ValueError("unlock_host: this array was not locked by lock_host on this context")
        self._host_unlock(array)
        del self._locked[key]

    def close(self) -> None:
        """Unlocks what lock_host locked and releases the library context now."""
        for a in list(getattr(self, "_locked", {}).values()):
            self._host_unlock(a)
        if hasattr(self, "_locked"):
            self._locked.clear()
        super().close()

    def __enter__(self) -> "Context":
        _local.stack.append(self)
        return self

    def __exit__(self, *exc: Any) -> None:
        stack = _local.stack
        for i in range(len(stack) - 1, -1, -1):
            if stack[i] is self:
                del stack[i]
                break

    def __repr__(self) -> str:
        return f"<gpk.Context backend={self.backend!r}{' closed' if self.closed else ''}>"


def _address(array: Any) -> tuple:
    """(start address, bytes) of a contiguous buffer: what lock_host keys on."""
    m = memoryview(array)
    if not m.c_contiguous:
        raise ValueError("lock_host: the array must be C-contiguous")
    if m.readonly:
        raise ValueError("lock_host: the array must be writable")
    start = np.frombuffer(m.cast("B"), dtype=np.uint8).ctypes.data if m.nbytes else 0
    return (start, m.nbytes)


def _default(backend: str, device: int = -1) -> Context:
    ctx = _local.defaults.get((backend, device))
    if ctx is None or ctx.closed:
        ctx = _local.defaults[(backend, device)] = Context(backend, device)
    return ctx


# numpy arrays default to the CPU; GPK_BACKEND (read at import) lets the
# library's AUTO choose instead.
_HOST_DEFAULT = "auto" if os.environ.get("GPK_BACKEND") else "cpu"


def _host_ctx(backend: Union[None, str, Context]) -> Context:
    if backend is None:
        if _local.stack:
            return _local.stack[-1]
        return _default(_HOST_DEFAULT)
    if isinstance(backend, _gpk.Context):
        return backend
    return _default(backend)


# ---- arrays --------------------------------------------------------------------

_ALGOS = ("auto", "radix", "quick", "quick-recursive")


def _bits(key_bits: Optional[int], radix_bits: Optional[int], algorithm: str) -> tuple:
    if algorithm not in _ALGOS:
        raise ValueError(f"unknown algorithm {algorithm!r} (auto, radix, quick, quick-recursive)")
    return (0 if key_bits is None else key_bits), (0 if radix_bits is None else radix_bits)


def _view(a: Any) -> Any:
    """numpy arrays, buffer-protocol objects and __cuda_array_interface__
    objects as they are; an object that only speaks DLPack (a PyTorch CPU
    tensor, for example) as a zero-copy view of the same memory: numpy for
    host memory, CuPy (else PyTorch) for CUDA memory. A read-only export
    gives a read-only view, which the in-place calls refuse. Arrays whose
    meaning a sort would lose are refused here, with what to do instead."""
    if a is None:
        raise TypeError("expected an array, got None")
    if isinstance(a, np.ma.MaskedArray):
        raise TypeError("masked arrays are not supported (the mask would be lost): sort a.compressed(), or "
                        "a.filled(value)")
    dt = getattr(a, "dtype", None)
    if isinstance(dt, np.dtype) and dt.kind in "mM":
        raise TypeError(f"{dt} arrays are not supported: sort a.view(np.int64), which has the same order "
                        "(NaT, the smallest int64, first)")
    if type(a) is np.ndarray or hasattr(a, "__cuda_array_interface__") or not hasattr(a, "__dlpack__"):
        return a
    try:
        memoryview(a)
        return a
    except TypeError:
        pass
    dev = a.__dlpack_device__()[0]
    if dev == 1:  # kDLCPU
        return np.from_dlpack(a)
    if dev in (2, 13):  # kDLCUDA, kDLCUDAManaged
        try:
            import cupy
            return cupy.from_dlpack(a)
        except ImportError:
            import torch
            return torch.from_dlpack(a)
    raise TypeError(f"DLPack device type {dev} is not supported (CPU and CUDA are)")


def _is_device(a: Any) -> bool:
    return type(a) is not np.ndarray and hasattr(a, "__cuda_array_interface__")


def _host_copy(a: Any) -> np.ndarray:
    """A fresh C-contiguous copy; the dtype is kept (checked by the sort)."""
    a = np.asarray(a)
    if a.ndim != 1:
        raise ValueError(f"expected a 1-D array (got {a.ndim} dimensions)")
    return np.array(a, order="C", copy=True)


def sort_inplace(a: Any, *, key_bits: Optional[int] = None, radix_bits: Optional[int] = None,
                 algorithm: str = "auto", backend: Union[None, str, Context] = None,
                 descending: bool = False) -> Any:
    """Sorts ``a`` in place and returns it.

    ``a``: a writable 1-D C-contiguous array of uint32, int32, float32,
    uint64, int64 or float64 in native byte order: a numpy array (or
    anything with the buffer protocol), or a CuPy / PyTorch array (anything
    with ``__cuda_array_interface__``) sorted on its device, on its current
    stream, asynchronously. key_bits / radix_bits: as in gpk/sort.h (None:
    detect the bits that differ on the host; every bit on a device array,
    0 asks the device for the detection, which synchronizes the stream
    once). algorithm: "auto", "radix", "quick" or "quick-recursive".
    backend: None (the current context), "cpu", "cuda", "opencl" or a
    Context. descending: the reverse order, stable, NaNs still last. Bad
    input raises TypeError / ValueError before anything is touched; a
    library failure raises gpk.Error.

    >>> import numpy as np, gpk
    >>> a = np.array([5, -1, 3], dtype=np.int64)
    >>> gpk.sort_inplace(a) is a, a
    (True, array([-1,  3,  5]))
    """
    kb, rb = _bits(key_bits, radix_bits, algorithm)
    v = _view(a)
    if _is_device(v):
        d = _Device(v, "keys", writable=True)
        _cuda_sort(_device_ctx(backend, d), d, d.ptr, None, None, key_bits, rb, algorithm, descending=descending)
        return a
    _gpk.sort(_host_ctx(backend), v, kb, rb, algorithm, bool(descending))
    return a


def _along_axis(a: Any, axis: Optional[int]) -> bool:
    """Whether sort / argsort take the segmented path: an array of more
    than one dimension (or, on the host, axis=None: numpy's flattening)."""
    v = _view(a)
    ndim = len(v.__cuda_array_interface__["shape"]) if _is_device(v) else np.ndim(v)
    return ndim != 1 or axis not in (None, 0, -1)


def _sort_along(a: Any, axis: Optional[int], descending: bool, backend: Union[None, str, Context],
                perm: bool, tuned: bool) -> np.ndarray:
    """Each 1-D slice of the host array ``a`` along ``axis`` sorted on its
    own (gpk_sort_segmented_keys / _perm over the rows of a contiguous
    copy with that axis last); ``a`` is not changed."""
    if tuned:
        raise ValueError("key_bits, radix_bits and algorithm do not apply along an axis "
                         "(the segmented sort chooses its own)")
    v = _view(a)
    if _is_device(v):
        return _device_sort_along(v, axis, descending, backend, perm)
    x = np.asarray(v)
    if axis is None:
        x = x.reshape(-1)
        axis = -1
    if x.ndim == 0:
        raise ValueError("cannot sort a 0-d array")
    if not isinstance(axis, (int, np.integer)) or not -x.ndim <= axis < x.ndim:
        raise ValueError(f"axis {axis!r} is out of range for an array of {x.ndim} dimensions")
    ax = int(axis) % x.ndim
    if not perm and ax == x.ndim - 1 and x.flags.c_contiguous and x.size:
        # the rows sorted straight from x into a fresh array: the library
        # copies on its threads (first-touch faults in parallel)
        rows = np.empty_like(x, order="C")
        length = rows.shape[-1]
        count = rows.size // length if length else 0
        _gpk.sort_segmented(_host_ctx(backend), rows.reshape(-1), None, count, length, bool(descending),
                            x.reshape(-1))
        return rows
    rows = np.array(np.moveaxis(x, ax, -1), order="C", copy=True)
    length = rows.shape[-1]
    count = rows.size // length if length else 0
    flat = rows.reshape(-1)
    sigma = np.empty(flat.size, dtype=np.uint32) if perm else None
    _gpk.sort_segmented(_host_ctx(backend), flat, sigma, count, length, bool(descending))
    out = (sigma if perm else flat).reshape(rows.shape)
    return out if ax == x.ndim - 1 else np.ascontiguousarray(np.moveaxis(out, -1, ax))


def _device_sort_along(a: Any, axis: Optional[int], descending: bool, backend: Union[None, str, Context],
                       perm: bool) -> Any:
    """_sort_along for a CuPy array or a PyTorch CUDA tensor: a contiguous
    copy with ``axis`` last, whose rows gpk_cuda_sort_segmented_* sorts on
    the array's stream into a fresh array of the same library (argsort:
    the pairs sort of the keys with each row's indices 0..length-1,
    uint32, int32 for PyTorch)."""
    fw = _framework(a)
    if not fw:
        raise TypeError(f"sorting {type(a).__name__} device arrays along an axis needs CuPy or PyTorch")
    ndim = len(a.__cuda_array_interface__["shape"])
    if axis is None:
        a, axis, ndim = a.reshape(-1), -1, 1
    if ndim == 0:
        raise ValueError("cannot sort a 0-d array")
    if not isinstance(axis, (int, np.integer)) or not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis!r} is out of range for an array of {ndim} dimensions")
    ax = int(axis) % ndim
    if fw == "cupy":
        import cupy
        rows = cupy.ascontiguousarray(cupy.moveaxis(a, ax, -1))
    else:
        rows = a.movedim(ax, -1).contiguous()
    shape = tuple(rows.shape)
    length = shape[-1]
    count = (int(np.prod(shape)) // length) if length else 0
    flat = rows.reshape(-1)
    d = _Device(flat, "keys", writable=False)
    ctx = _device_ctx(backend, d)
    keys_out = _device_empty(flat, d.n, d.dtype)
    vin = vout = None
    if perm:
        vin = _device_arange(flat, d.n) % max(length, 1)
        vout = _device_empty(flat, d.n, "uint32")
    args = (ctx, d.type, d.ptr, _ptr(keys_out), 4 if perm else 0, _ptr(vin) if perm else 0,
            _ptr(vout) if perm else 0, count, length, bool(descending), d.stream)
    nbytes = _gpk.cuda_sort_segmented(*args, 0, 0, True)
    temp = _device_empty(flat, max(nbytes, 1), "uint8")
    _gpk.cuda_sort_segmented(*args, _ptr(temp), nbytes, False)
    del temp
    out = (vout if perm else keys_out).reshape(shape)
    if ax == ndim - 1:
        return out
    if fw == "cupy":
        import cupy
        return cupy.ascontiguousarray(cupy.moveaxis(out, -1, ax))
    return out.movedim(-1, ax).contiguous()


def sort(a: Any, *, key_bits: Optional[int] = None, radix_bits: Optional[int] = None,
         algorithm: str = "auto", backend: Union[None, str, Context] = None,
         axis: Optional[int] = -1, descending: bool = False) -> Any:
    """A sorted copy of the 1-D array ``a`` (numpy.sort's order, but -0.0
    before +0.0); ``a`` is not changed, and may be read-only or strided.
    Options as for sort_inplace. A device array gives a device array of
    the same library (CuPy or PyTorch), sorted on the current stream.

    >>> import numpy as np, gpk
    >>> gpk.sort(np.array([3.5, -2.0, 1.0], dtype=np.float32))
    array([-2. ,  1. ,  3.5], dtype=float32)
    >>> gpk.sort(np.arange(6, dtype=np.uint64)[::-2])
    array([1, 3, 5], dtype=uint64)

    ``axis`` and ``descending`` as numpy.sort and torch.sort have them: a
    host array of any number of dimensions is sorted along ``axis`` (-1:
    each row; None: flattened), every slice on its own in one call
    (gpk_sort_segmented_keys); descending=True sorts in reverse, stably,
    with NaNs last as in ascending order.

    >>> gpk.sort(np.array([[3, 1, 2], [9, 7, 8]], dtype=np.int32), descending=True)
    array([[3, 2, 1],
           [9, 8, 7]], dtype=int32)
    """
    if _along_axis(a, axis):
        return _sort_along(a, axis, descending, backend, False,
                           key_bits is not None or radix_bits is not None or algorithm != "auto")
    kb, rb = _bits(key_bits, radix_bits, algorithm)
    a = _view(a)
    if _is_device(a):
        d = _Device(a, "keys", writable=False)
        ctx = _device_ctx(backend, d)
        out = _device_empty(a, d.n, d.dtype)
        _cuda_sort(ctx, d, _ptr(out), None, None, key_bits, rb, algorithm, descending=descending)
        return out
    a = np.asarray(a)
    if a.ndim != 1:
        raise ValueError(f"expected a 1-D array (got {a.ndim} dimensions)")
    if not a.flags.c_contiguous:  # strided: the contiguous copy is sorted in place
        out = np.array(a, order="C", copy=True)
        _gpk.sort(_host_ctx(backend), out, kb, rb, algorithm, bool(descending))
        return out
    # gpk_sort_keys_to: on the CPU the sort's first pass reads a itself and
    # the sorting threads are the first to touch out's pages, so the copy
    # costs next to nothing over the in-place sort.
    out = np.empty(a.shape[0], dtype=a.dtype)
    _gpk.sort_to(_host_ctx(backend), a, out, kb, rb, algorithm, bool(descending))
    return out


def argsort(a: Any, *, key_bits: Optional[int] = None, radix_bits: Optional[int] = None,
            backend: Union[None, str, Context] = None, axis: Optional[int] = -1,
            descending: bool = False) -> Any:
    """The stable sorting permutation of ``a`` as uint32 indices, uint64 from
    2^32 keys on (the radix sort, always stable): ``a[argsort(a)]`` is
    ``sort(a)``, and equal keys keep their order, as
    numpy.argsort(kind="stable") (but -0.0 before +0.0). ``a`` is not
    changed. For a PyTorch tensor the indices are int32, or int64 from 2^32
    keys on (PyTorch has few unsigned operations).

    >>> import numpy as np, gpk
    >>> gpk.argsort(np.array([2.0, 1.0, 2.0, 0.5]))
    array([3, 1, 0, 2], dtype=uint32)

    ``axis`` and ``descending`` as for sort: along an axis of a host array
    the indices count within each slice (numpy.argsort(axis=...)), uint32.

    >>> gpk.argsort(np.array([[2.0, 1.0, 2.0], [0.5, 0.5, 1.0]]), descending=True)
    array([[0, 2, 1],
           [2, 0, 1]], dtype=uint32)
    """
    if _along_axis(a, axis):
        return _sort_along(a, axis, descending, backend, True, key_bits is not None or radix_bits is not None)
    kb, rb = _bits(key_bits, radix_bits, "radix")
    a = _view(a)
    if _is_device(a):
        d = _Device(a, "keys", writable=False)
        ctx = _device_ctx(backend, d)
        keys_out = _device_empty(a, d.n, d.dtype)
        wide = d.n > 0xFFFFFFFF
        idx = _device_arange(a, d.n, wide)
        perm = _device_empty(a, d.n, "uint64" if wide else "uint32")
        _cuda_sort(ctx, d, _ptr(keys_out), _ptr(idx), _ptr(perm), key_bits, rb, "radix", width=8 if wide else 4,
                   descending=descending)
        return perm
    keys = _host_copy(a)
    perm = np.empty(keys.size, dtype=np.uint64 if keys.size > 0xFFFFFFFF else np.uint32)
    _gpk.sort_perm(_host_ctx(backend), keys, perm, kb, rb, "radix", bool(descending))
    return perm


def sort_by_key_inplace(keys: Any, values: Any, *, key_bits: Optional[int] = None,
                        radix_bits: Optional[int] = None, algorithm: str = "auto",
                        backend: Union[None, str, Context] = None, descending: bool = False) -> tuple:
    """Sorts ``keys`` in place and moves ``values`` (any 4- or 8-byte items,
    the same length) with them; stable with the radix sort (auto picks it
    for pairs). Returns (keys, values).

    >>> import numpy as np, gpk
    >>> k = np.array([3, 1, 2], dtype=np.uint32); v = np.array([30., 10., 20.])
    >>> gpk.sort_by_key_inplace(k, v)
    (array([1, 2, 3], dtype=uint32), array([10., 20., 30.]))
    """
    kb, rb = _bits(key_bits, radix_bits, algorithm)
    ko, vo = keys, values
    keys, values = _view(keys), _view(values)
    if _is_device(keys) or _is_device(values):
        dk = _Device(keys, "keys", writable=True)
        dv = _Device(values, "values", writable=True, typed=False)
        if dv.n != dk.n:
            raise ValueError(f"keys and values differ in length ({dk.n}, {dv.n})")
        if dk.ptr < dv.ptr + dv.n * dv.itemsize and dv.ptr < dk.ptr + dk.n * dk.itemsize and dk.n:
            raise ValueError("keys and values overlap in memory: the sort would corrupt both (copy one)")
        _cuda_sort(_device_ctx(backend, dk), dk, dk.ptr, dv.ptr, dv.ptr, key_bits, rb, algorithm,
                   width=dv.itemsize, descending=descending)
        return ko, vo
    try:
        overlap = np.shares_memory(np.asarray(keys), np.asarray(values))
    except (TypeError, ValueError):  # not arrays: the extension refuses them below
        overlap = False
    if overlap:
        raise ValueError("keys and values overlap in memory: the sort would corrupt both (copy one)")
    _gpk.sort_pairs(_host_ctx(backend), keys, values, kb, rb, algorithm, bool(descending))
    return ko, vo


def sort_by_key(keys: Any, values: Any, *, key_bits: Optional[int] = None, radix_bits: Optional[int] = None,
                algorithm: str = "auto", backend: Union[None, str, Context] = None,
                descending: bool = False) -> tuple:
    """Sorted copies (keys, values) of two 1-D arrays of one length; the
    inputs are not changed. Options as for sort_by_key_inplace.

    >>> import numpy as np, gpk
    >>> gpk.sort_by_key(np.array([2, 1, 2], dtype=np.int32), np.array([0, 1, 2], dtype=np.uint32))
    (array([1, 2, 2], dtype=int32), array([1, 0, 2], dtype=uint32))
    """
    keys, values = _view(keys), _view(values)
    if _is_device(keys) or _is_device(values):
        kb, rb = _bits(key_bits, radix_bits, algorithm)
        dk = _Device(keys, "keys", writable=False)
        dv = _Device(values, "values", writable=False, typed=False)
        if dv.n != dk.n:
            raise ValueError(f"keys and values differ in length ({dk.n}, {dv.n})")
        ctx = _device_ctx(backend, dk)
        ko = _device_empty(keys, dk.n, dk.dtype)
        vo = _device_empty(values, dv.n, dv.dtype)
        _cuda_sort(ctx, dk, _ptr(ko), dv.ptr, _ptr(vo), key_bits, rb, algorithm, width=dv.itemsize,
                   descending=descending)
        return ko, vo
    k, v = _host_copy(keys), _host_copy(values)
    return sort_by_key_inplace(k, v, key_bits=key_bits, radix_bits=radix_bits, algorithm=algorithm,
                               backend=backend, descending=descending)


def _record_key(dtype: np.dtype, field: str) -> tuple:
    if dtype.fields is None:
        raise TypeError("expected a structured array (a dtype with fields)")
    if field not in dtype.fields:
        raise ValueError(f"no field {field!r} (fields: {', '.join(dtype.names)})")
    fdt, off = dtype.fields[field][:2]
    names = {"u4": "u32", "i4": "i32", "f4": "f32", "u8": "u64", "i8": "i64", "f8": "f64"}
    code = f"{fdt.kind}{fdt.itemsize}"
    if code not in names or fdt.shape or not fdt.isnative:
        raise TypeError(f"field {field!r} has dtype {fdt}; the key must be uint32, int32, float32, "
                        "uint64, int64 or float64 in native byte order")
    return off, names[code]


def sort_records_inplace(records: np.ndarray, field: str, *, algorithm: str = "auto",
                         backend: Union[None, str, Context] = None, descending: bool = False) -> np.ndarray:
    """Sorts a 1-D structured array in place by one numeric field; records
    of 1..256 bytes. "radix" is stable; "auto" may pick the quicksort
    (not stable) where it was measured faster. descending: the reverse
    order (NaNs still last). Returns ``records``.

    >>> import numpy as np, gpk
    >>> r = np.array([(3, 1.5), (1, 2.5)], dtype=[("id", "u4"), ("x", "f8")])
    >>> gpk.sort_records_inplace(r, "id")["x"]
    array([2.5, 1.5])
    """
    _bits(None, None, algorithm)
    if not isinstance(records, np.ndarray):
        raise TypeError("expected a numpy structured array")
    off, kt = _record_key(records.dtype, field)
    _gpk.sort_records(_host_ctx(backend), records, off, kt, 0, 0, algorithm, bool(descending))
    return records


def sort_records(records: np.ndarray, field: str, *, algorithm: str = "auto",
                 backend: Union[None, str, Context] = None, descending: bool = False) -> np.ndarray:
    """A copy of a 1-D structured array sorted by one field; see
    sort_records_inplace.

    >>> import numpy as np, gpk
    >>> r = np.array([(2.0, b"b"), (-1.0, b"a")], dtype=[("t", "f4"), ("s", "S1")])
    >>> gpk.sort_records(r, "t", algorithm="radix")["s"]
    array([b'a', b'b'], dtype='|S1')
    """
    if not isinstance(records, np.ndarray):
        raise TypeError("expected a numpy structured array")
    _record_key(records.dtype, field)
    if records.ndim != 1:
        raise ValueError(f"expected a 1-D array (got {records.ndim} dimensions)")
    return sort_records_inplace(np.array(records, order="C", copy=True), field, algorithm=algorithm,
                                backend=backend, descending=descending)


# ---- device arrays (__cuda_array_interface__) ------------------------------------

_CAI_TYPES = {"u4": "u32", "i4": "i32", "f4": "f32", "u8": "u64", "i8": "i64", "f8": "f64"}


class _Device:
    """A 1-D device array seen through __cuda_array_interface__, checked."""

    def __init__(self, a: Any, what: str, writable: bool, typed: bool = True) -> None:
        if not hasattr(a, "__cuda_array_interface__"):
            raise TypeError(f"{what} must be a device array too (got {type(a).__name__})")
        cai = a.__cuda_array_interface__
        typestr, shape = cai["typestr"], tuple(cai["shape"])
        if typestr[0] == ">" or (typestr[0] not in "<|="):
            raise TypeError(f"{what}: unsupported byte order in typestr {typestr!r}")
        code = typestr[1:]
        self.itemsize = int(code[1:])
        if typed and code not in _CAI_TYPES:
            raise TypeError(f"{what}: unsupported dtype {typestr!r} (uint32, int32, float32, uint64, "
                            "int64, float64)")
        if not typed and self.itemsize not in (4, 8):
            raise TypeError(f"{what} must have 4- or 8-byte items (got {typestr!r})")
        if len(shape) != 1:
            raise ValueError(f"{what} must be 1-D (got shape {shape})")
        self.n = shape[0]
        strides = cai.get("strides")
        if strides is not None and self.n > 1 and tuple(strides) != (self.itemsize,):
            raise ValueError(f"{what} must be contiguous (strides {tuple(strides)})")
        self.ptr, readonly = cai["data"]
        if writable and readonly:
            raise ValueError(f"{what} is read-only")
        self.type = _CAI_TYPES.get(code, "u32" if self.itemsize == 4 else "u64")
        self.dtype = getattr(a, "dtype", None)  # copies keep the array's own dtype
        self.obj = a
        self.stream = _stream_of(a, cai)


def _framework(a: Any) -> str:
    mod = type(a).__module__.split(".")[0]
    return mod if mod in ("cupy", "torch") else ""


def _stream_of(a: Any, cai: dict) -> int:
    if _framework(a) == "torch":
        # PyTorch exports no stream; its work runs on the current stream.
        import torch
        return torch.cuda.current_stream(a.device).cuda_stream
    s = cai.get("stream")
    return 0 if s is None else int(s)


def _device_index(d: _Device) -> int:
    fw = _framework(d.obj)
    if fw == "cupy":
        return d.obj.device.id
    if fw == "torch":
        return d.obj.device.index
    return _gpk.cuda_pointer_device(d.ptr)


def _device_ctx(backend: Union[None, str, Context], d: _Device) -> Context:
    if backend is None and _local.stack:
        ctx = _local.stack[-1]
    elif isinstance(backend, _gpk.Context):
        ctx = backend
    elif backend is None or backend == "cuda":
        if not _gpk.HAVE_CUDA:
            raise ValueError("a CUDA array needs gpk built with CUDA (this build has no CUDA backend)")
        ctx = _default("cuda", _device_index(d))
    else:
        ctx = _default(backend)
    if ctx.backend != "cuda":
        raise ValueError(f"a CUDA array needs a CUDA context (this one is {ctx.backend})")
    if not _gpk.HAVE_CUDA:
        raise ValueError("a CUDA array needs gpk built with CUDA (this build has no CUDA backend)")
    return ctx


def _device_empty(like: Any, n: int, dtype: Any) -> Any:
    fw = _framework(like)
    if fw == "cupy":
        import cupy
        with like.device:
            return cupy.empty(n, dtype=dtype)
    if fw == "torch":
        import torch
        if not isinstance(dtype, torch.dtype):  # "uint32" / "uint64" indices are int32 / int64 for PyTorch
            dtype = {"uint32": torch.int32, "uint64": torch.int64, "uint8": torch.uint8}[dtype]
        return torch.empty(n, dtype=dtype, device=like.device)
    raise TypeError(f"copies of {type(like).__name__} device arrays need CuPy or PyTorch; "
                    "sort it in place with sort_inplace")


def _device_arange(like: Any, n: int, wide: bool = False) -> Any:
    if _framework(like) == "torch":
        import torch
        return torch.arange(n, dtype=torch.int64 if wide else torch.int32, device=like.device)
    import cupy
    with like.device:
        return cupy.arange(n, dtype=cupy.uint64 if wide else cupy.uint32)


def _ptr(a: Any) -> int:
    return a.__cuda_array_interface__["data"][0]


def _cuda_sort(ctx: Context, d: _Device, keys_out: int, values_in: Optional[int], values_out: Optional[int],
               key_bits: Optional[int], radix_bits: int, algorithm: str, width: int = 0,
               descending: bool = False) -> None:
    kb = -1 if key_bits is None else key_bits
    args = (ctx, d.type, d.ptr, keys_out, width, values_in or 0, values_out or 0, d.n, kb, radix_bits,
            algorithm, d.stream)
    temp = None
    ptr = nbytes = 0
    if _framework(d.obj):
        # Temporary storage from the array's own stream-ordered pool
        # (CuPy's memory pool, PyTorch's caching allocator): reused only by
        # later work on the stream, so dropping it after the launch is safe.
        nbytes = _gpk.cuda_sort(*args, 0, 0, True, bool(descending))
        temp = _device_empty(d.obj, max(nbytes, 1), "uint8")
        ptr = _ptr(temp)
    _gpk.cuda_sort(*args, ptr, nbytes, False, bool(descending))
    del temp


# ---- octree -----------------------------------------------------------------------

#: The nodes of an octree (gpk_octree_node, gpk/octree.h).
NODE_DTYPE = np.dtype([("lo", "<f4", (3,)), ("hi", "<f4", (3,)), ("child", "<i4", (8,)), ("first", "<u4"),
                       ("count", "<u4"), ("depth", "<u4"), ("leaf", "<u4")])


class Octree(NamedTuple):
    """An octree of particles. nodes: NODE_DTYPE records, nodes[0] the root
    (child -1 for an empty octant); order: uint32, order[i] is the input
    index of the i-th particle in tree order; points: the particles in tree
    order, (n, 3) float32, each node's particles at [first, first+count)."""
    nodes: np.ndarray
    order: np.ndarray
    points: np.ndarray
    depth: int
    leaves: int
    tasks: int
    ms: float


def octree(points: Any, leaf_size: int = 20, scheme: str = "steal", *,
           backend: Union[None, str, Context] = None) -> Octree:
    """Builds the octree of n particles (an (n, 3) array; float32, other
    float dtypes are converted) splitting every node of more than leaf_size
    particles. scheme: "static", "blocking", "lockfree", "steal" (task
    pools, Cederman & Tsigas) or "morton" (sorted Morton codes); every
    scheme gives the same leaves.

    >>> import numpy as np, gpk
    >>> p = np.random.default_rng(1).random((1000, 3), dtype=np.float32)
    >>> t = gpk.octree(p, leaf_size=16)
    >>> int(t.nodes[0]["count"]), bool(np.array_equal(p[t.order], t.points))
    (1000, True)
    >>> bool((t.nodes["count"][t.nodes["leaf"] == 1] <= 16).all())
    True
    """
    p = np.asarray(points)
    if p.dtype.kind != "f":
        raise TypeError(f"points must be a float array (got {p.dtype})")
    p = np.ascontiguousarray(p, dtype=np.float32)
    nodes, xyz, perm, tasks, depth, leaves, ms, _ = _gpk.octree(_host_ctx(backend), p, leaf_size, scheme)
    return Octree(np.frombuffer(nodes, dtype=NODE_DTYPE), np.frombuffer(perm, dtype=np.uint32),
                  np.frombuffer(xyz, dtype=np.float32).reshape(-1, 3), depth, leaves, tasks, ms)


# ---- local search -------------------------------------------------------------------


class SearchResult(NamedTuple):
    """solution: QAP p[facility] = location, TSP the tour (uint32), PPP the
    vector as int8 +-1; cost: its cost / tour length / fitness (a float for
    TSP coordinates with weight "EUC"); gap: percent above best_known when
    that is known (None otherwise); stopped: "done", or "time_limit" when
    the time limit ended the search."""
    solution: np.ndarray
    cost: Union[int, float]
    gap: Optional[float]
    best_known: Optional[int]
    name: str
    iterations: int
    evaluated: int
    ms: float
    local_optimum: bool
    stopped: str


def _best_known_in(path: str, table: str, sep: str, name: str) -> Optional[int]:
    """The value for `name` in the table next to the instance file, as the
    CLI reads it (an exact name wins over one differing in case only)."""
    fn = os.path.join(os.path.dirname(path), table)
    folded = None
    try:
        with open(fn) as f:
            for line in f:
                parts = [s.strip() for s in line.split(sep)]
                if len(parts) < 2 or not parts[0]:
                    continue
                try:
                    v = int(parts[1].split()[0])
                except (ValueError, IndexError):
                    continue
                if parts[0] == name:
                    return v
                if folded is None and parts[0].lower() == name.lower():
                    folded = v
    except OSError:
        return None
    return folded


def _gap(cost: int, best_known: Optional[int]) -> Optional[float]:
    if best_known is None:
        return None
    if best_known > 0:
        return 100.0 * (cost - best_known) / best_known
    return 0.0 if cost == best_known else None


def _search_ctx(backend: Union[None, str, Context], contexts: Optional[Sequence[Context]],
                gpus: Optional[int]) -> Any:
    if sum(x is not None for x in (backend, contexts, gpus)) > 1:
        raise ValueError("give one of backend, contexts and gpus")
    if contexts is not None:
        return list(contexts)
    if gpus is not None:
        if gpus < 1:
            raise ValueError("gpus must be >= 1")
        return [_default("cuda", d) for d in range(gpus)]
    return _host_ctx(backend)


def _search(kind: str, src: dict, table: Optional[tuple], best_known: Optional[int], options: dict,
            ctx: Any) -> SearchResult:
    r = _gpk.search(ctx, kind, **src, **options)
    sol, name, cost, iters, evaluated, _gpu, ms, local, stopped = r
    sol = np.frombuffer(sol, dtype=np.uint32)
    if kind == "ppp":
        sol = (sol.astype(np.int8) * 2 - 1).astype(np.int8)
    if best_known is None and table is not None and "path" in src:
        best_known = _best_known_in(src["path"], table[0], table[1], name)
    if best_known is None and kind == "ppp":
        best_known = 0  # a PPP instance is solved at fitness 0
    return SearchResult(sol, cost, _gap(cost, best_known), best_known, name, iters, evaluated, ms, local, stopped)


def _options(algo: str, nb: str, iters: int, global_iters: int, tenure: int, starts: int, seed: int,
             start: Any, eval: str, time_limit: Optional[float], paper: bool = False,
             paper_nb: str = "default") -> dict:
    # counts are checked by the extension (0 .. 2^32 - 1 or 2^64 - 1; a
    # negative one is a ValueError, never a huge unsigned value)
    if paper:  # the paper's reproduction, as gpk qap|tsp|ppp --paper
        if algo != "auto" or nb != "default":
            raise ValueError("paper=True sets algo its and the paper's neighbourhood: drop algo / nb")
        algo, nb = "its", paper_nb
        global_iters = global_iters or 10
        iters = iters or 1000
    return dict(algo=algo, nb=nb, iters=iters, global_iters=global_iters, tenure=tenure, starts=starts,
                seed=seed, start=None if start is None else _start(start), eval=eval, time_limit=time_limit)


def _start(start: Any) -> np.ndarray:
    s = np.asarray(start)
    if isinstance(start, np.ma.MaskedArray):
        raise TypeError("start: masked arrays are not supported")
    if s.dtype.kind not in "iub" or (s.size and s.min() < 0):
        raise ValueError("start must hold non-negative integers")
    return np.ascontiguousarray(s, dtype=np.uint32)


def _matrix_text(*mats: np.ndarray) -> list:
    out = []
    for m in mats:
        out.append("\n".join(" ".join(map(str, row)) for row in m.tolist()))
    return out


def _int_matrix(m: Any, n: Optional[int], what: str) -> np.ndarray:
    a = np.asarray(m)
    if a.ndim != 2 or a.shape[0] != a.shape[1] or (n is not None and a.shape[0] != n):
        raise ValueError(f"{what} must be a square matrix" + (f" of order {n}" if n is not None else ""))
    if a.dtype.kind not in "iu" and not (a.dtype.kind == "f" and np.all(a == np.round(a))):
        raise TypeError(f"{what} must hold integers")
    return a.astype(np.int64)


def qap(instance: Union[str, os.PathLike, None] = None, a: Any = None, b: Any = None, *, algo: str = "auto",
        nb: str = "default", iters: int = 0, global_iters: int = 0, tenure: int = 0, starts: int = 0,
        seed: int = 1, start: Any = None, eval: str = "ours", qap_delta: str = "table",
        time_limit: Optional[float] = None, best_known: Optional[int] = None,
        backend: Union[None, str, Context] = None, contexts: Optional[Sequence[Context]] = None,
        gpus: Optional[int] = None, paper: bool = False) -> SearchResult:
    """Quadratic assignment: a QAPLIB .dat file, or the flow and distance
    matrices a and b (integers, n x n). The options and their defaults are
    the CLI's (gpk qap --help): algo auto (the default: the iterated tabu
    search, 100 x 1000 tabu iterations), its, hc, hc-first, tabu,
    multistart; iters, global_iters, tenure, starts, seed (counts from 0,
    0 meaning the default), start (a permutation), eval (ours, paper: CUDA),
    qap_delta (table, formula). time_limit in seconds is a budget: with no
    count given the search uses all of it. paper=True is the paper's
    reproduction (the CLI's --paper: its, 10 x 1000). Ctrl-C stops the search and raises
    KeyboardInterrupt. The gap is against
    best_known, else best-known.csv next to the file. contexts (distinct
    Contexts) or gpus=N (this thread's CUDA contexts on devices 0..N-1, the
    CLI's --gpus) run `starts` searches over them, one host thread per
    context (gpk_search_run_multi): the result depends on seed and starts,
    not on how many contexts share them.

    >>> import gpk
    >>> r = gpk.qap(a=[[0, 1], [1, 0]], b=[[0, 5], [7, 0]], algo="hc")
    >>> r.cost, sorted(r.solution.tolist())
    (12, [0, 1])
    """
    opts = _options(algo, nb, iters, global_iters, tenure, starts, seed, start, eval, time_limit, paper)
    opts["qap_delta"] = qap_delta
    ctx = _search_ctx(backend, contexts, gpus)
    if instance is not None:
        if a is not None or b is not None:
            raise ValueError("give an instance file or the matrices a and b, not both")
        return _search("qap", {"path": os.fspath(instance)}, ("best-known.csv", ","), best_known, opts, ctx)
    if a is None or b is None:
        raise ValueError("give an instance file or both matrices a and b")
    am = _int_matrix(a, None, "a")
    bm = _int_matrix(b, am.shape[0], "b")
    text = "\n\n".join([str(am.shape[0])] + _matrix_text(am, bm)) + "\n"
    return _search("qap", {"text": text.encode(), "name": "matrices"}, None, best_known, opts, ctx)


# Real Euclidean coordinates are searched on an integer grid this wide (the
# span of the points): TSPLIB's EUC_2D rounding on it errs by at most
# span / 2e7 per edge, where on points in [0, 1) it made every distance 0 or 1.
_EUC_GRID = 1e7


def tsp(instance: Union[str, os.PathLike, None] = None, coords: Any = None, dist: Any = None, *,
        weight: str = "EUC", algo: str = "auto", nb: str = "default", iters: int = 0, global_iters: int = 0,
        tenure: int = 0, starts: int = 0, seed: int = 1, start: Any = None, eval: str = "ours",
        time_limit: Optional[float] = None, best_known: Optional[int] = None,
        backend: Union[None, str, Context] = None, contexts: Optional[Sequence[Context]] = None,
        gpus: Optional[int] = None, paper: bool = False) -> SearchResult:
    """Symmetric TSP: a TSPLIB file, coordinates (n x 2), or a full integer
    distance matrix. Coordinates: weight "EUC" (the default) is the true
    Euclidean distance: the cost is the tour's real length (a float), the
    search running on the points scaled to an integer grid 10^7 wide;
    "EUC_2D", "CEIL_2D", "ATT", "GEO" are TSPLIB's integer rules (EUC_2D
    rounds each distance: on points in [0, 1) every distance is 0 or 1).
    nb: or2opt (the default: 2-opt and Or-opt over neighbour lists), 2opt
    (the paper's, the whole neighbourhood), swap. algo auto (the default)
    runs a multistart over the threads for 10 s unless time_limit, iters or
    global_iters is given; paper=True is the paper's reproduction (its, nb
    2opt, 10 x 1000). Other options as for qap. The gap is against
    best_known, else bestSolutions.txt next to the file.

    >>> import gpk
    >>> r = gpk.tsp(coords=[[0, 0], [0, 3], [4, 3], [4, 0]], algo="hc")
    >>> r.cost
    14.0
    """
    opts = _options(algo, nb, iters, global_iters, tenure, starts, seed, start, eval, time_limit, paper, "2opt")
    ctx = _search_ctx(backend, contexts, gpus)
    given = sum(x is not None for x in (instance, coords, dist))
    if given != 1:
        raise ValueError("give exactly one of: an instance file, coords, dist")
    if instance is not None:
        return _search("tsp", {"path": os.fspath(instance)}, ("bestSolutions.txt", ":"), best_known, opts,
                       ctx)
    if coords is not None:
        if isinstance(coords, np.ma.MaskedArray):
            raise TypeError("coords: masked arrays are not supported (the mask would be lost)")
        c = np.asarray(coords, dtype=np.float64)
        if c.ndim != 2 or c.shape[1] != 2:
            raise ValueError("coords must have shape (n, 2)")
        if not np.all(np.isfinite(c)):
            raise ValueError("coords must be finite")
        if weight not in ("EUC", "EUC_2D", "CEIL_2D", "ATT", "GEO"):
            raise ValueError(f"unknown weight {weight!r} (EUC, EUC_2D, CEIL_2D, ATT, GEO)")
        real = weight == "EUC"
        g = c
        if real:
            lo = c.min(axis=0) if c.size else np.zeros(2)
            span = float(np.max(c.max(axis=0) - lo)) if c.size else 0.0
            g = (c - lo) * (_EUC_GRID / span if span > 0 else 1.0)
        body = "\n".join(f"{i + 1} {x!r} {y!r}" for i, (x, y) in enumerate(g.tolist()))
        text = (f"NAME: coords\nTYPE: TSP\nDIMENSION: {c.shape[0]}\n"
                f"EDGE_WEIGHT_TYPE: {'EUC_2D' if real else weight}\nNODE_COORD_SECTION\n{body}\nEOF\n")
        r = _search("tsp", {"text": text.encode(), "name": "coords"}, None, best_known, opts, ctx)
        if real:  # the tour's true length, and the gap of that
            p = c[r.solution.astype(np.int64)]
            length = float(np.sqrt(((p - np.roll(p, -1, axis=0)) ** 2).sum(axis=1)).sum())
            r = r._replace(cost=length, gap=_gap(length, best_known))
        return r
    d = _int_matrix(dist, None, "dist")
    text = (f"NAME: matrix\nTYPE: TSP\nDIMENSION: {d.shape[0]}\nEDGE_WEIGHT_TYPE: EXPLICIT\n"
            f"EDGE_WEIGHT_FORMAT: FULL_MATRIX\nEDGE_WEIGHT_SECTION\n{_matrix_text(d)[0]}\nEOF\n")
    return _search("tsp", {"text": text.encode(), "name": "matrix"}, None, best_known, opts, ctx)


def ppp(m: int, n: int, instance_seed: int = 1, *, algo: str = "auto", nb: str = "default", iters: int = 0,
        global_iters: int = 0, tenure: int = 0, starts: int = 0, seed: int = 1, start: Any = None,
        eval: str = "ours", time_limit: Optional[float] = None, backend: Union[None, str, Context] = None,
        contexts: Optional[Sequence[Context]] = None, gpus: Optional[int] = None,
        paper: bool = False) -> SearchResult:
    """The permuted perceptron problem "m-n-instance_seed" (n odd), the
    same instance on every machine (m >= 1, n odd). algo auto (the
    default) is the iterated tabu search (paper=True: the paper's 10 x
    1000); nb: flip1 (default) or flip2;
    start: a +-1 vector; other options as for qap. The solution is a +-1
    int8 vector; fitness 0 solves it (gap is then 0.0; None while unsolved).

    >>> import gpk
    >>> r = gpk.ppp(21, 21, algo="tabu", iters=200)
    >>> r.solution.shape, set(r.solution.tolist()) <= {-1, 1}, r.cost >= 0
    ((21,), True, True)
    """
    if start is not None:
        s = np.asarray(start)
        if not np.isin(s, (-1, 1)).all():
            raise ValueError("start must hold -1 and +1")
        start = (s > 0).astype(np.uint32)
    opts = _options(algo, nb, iters, global_iters, tenure, starts, seed, start, eval, time_limit, paper)
    return _search("ppp", {"m": m, "n": n, "instance_seed": instance_seed}, None, None, opts,
                   _search_ctx(backend, contexts, gpus))


# ---- information ----------------------------------------------------------------------


def info() -> dict:
    """The version, the build's engines and, per backend usable here, its
    device: {"version": ..., "cuda_built": bool, "time_limit": bool,
    "backends": {"cpu": {...}, ...}}.

    >>> import gpk
    >>> i = gpk.info()
    >>> i["version"] == gpk.__version__, "cpu" in i["backends"]
    (True, True)
    """
    backends = {}
    for b in _gpk.backends():
        if _gpk.backend_available(b):
            try:
                backends[b] = Context(b).info()
            except Error as e:
                backends[b] = {"error": str(e)}
    return {"version": _gpk.version, "cuda_built": bool(_gpk.HAVE_CUDA),
            "time_limit": bool(_gpk.HAVE_TIME_LIMIT), "backends": backends}
