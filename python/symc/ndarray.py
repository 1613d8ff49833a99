"""NDArray: an array of libsymrt's, numpy-compatible without copies (mx.nd)."""
import ctypes

import numpy as np

from .base import c_array, c_handles, c_str, check_call, lib
from .context import Context, cpu

__all__ = ["NDArray", "array", "zeros", "ones", "empty", "from_numpy", "load", "load_frombuffer", "save"]

# MXNet's dtype codes (mshadow's TypeFlag) and their numpy types; numpy has no
# bfloat16, whose bits are shown as uint16.
_CODE_TO_DTYPE = {0: np.float32, 1: np.float64, 2: np.float16, 3: np.uint8, 4: np.int32, 5: np.int8,
                  6: np.int64, 7: np.bool_, 8: np.int16, 9: np.uint16, 10: np.uint32, 11: np.uint64,
                  12: np.uint16}
_DTYPE_TO_CODE = {np.dtype(t): code for code, t in _CODE_TO_DTYPE.items() if code != 12}


def dtype_code(dtype):
    """MXNet's code of a numpy dtype (or its name)."""
    try:
        return _DTYPE_TO_CODE[np.dtype(dtype)]
    except (KeyError, TypeError):
        raise TypeError("dtype %s is not one of MXNet's" % (dtype,)) from None


def _shape_arg(shape):
    shape = (shape,) if isinstance(shape, int) else tuple(int(d) for d in shape)
    return c_array(ctypes.c_int64, shape), len(shape)


class NDArray:
    """An array in libsymrt's memory (or wrapped numpy memory).

    `numpy.asarray(x)` reads and writes the same memory; `x.asnumpy()` copies,
    as MXNet's does. Copies of the handle share storage.
    """

    __slots__ = ("handle", "_keep", "__weakref__")
    # numpy defers to NDArray's operators (x * nd gives an NDArray).
    __array_priority__ = 1000.0

    def __init__(self, handle, writable=True, keep=None):
        # writable: MXNet's flag for monitor arrays, accepted for its scripts.
        self.handle = handle if isinstance(handle, ctypes.c_void_p) else ctypes.c_void_p(handle)
        self._keep = keep  # what owns wrapped memory (a numpy array)

    def __del__(self):
        if getattr(self, "handle", None) is not None and lib is not None:
            lib.SymcNDArrayFree(self.handle)
            self.handle = None

    # -- properties -----------------------------------------------------------
    @property
    def shape(self):
        ndim, dims = ctypes.c_int(), ctypes.POINTER(ctypes.c_int64)()
        check_call(lib.SymcNDArrayGetShape(self.handle, ctypes.byref(ndim), ctypes.byref(dims)))
        return tuple(dims[i] for i in range(ndim.value))

    @property
    def dtype(self):
        code = ctypes.c_int()
        check_call(lib.SymcNDArrayGetDType(self.handle, ctypes.byref(code)))
        return np.dtype(_CODE_TO_DTYPE[code.value])

    @property
    def context(self):
        dev_type, dev_id = ctypes.c_int(), ctypes.c_int()
        check_call(lib.SymcNDArrayGetContext(self.handle, ctypes.byref(dev_type), ctypes.byref(dev_id)))
        return Context(Context.devtype2str[dev_type.value], dev_id.value)

    ctx = context

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def _data(self):
        data = ctypes.c_void_p()
        check_call(lib.SymcNDArrayGetData(self.handle, ctypes.byref(data)))
        # Fetching memory counts as writing it (an executor repacks a weight
        # written since its last forward), a view's as writing its owner's.
        owner = self._keep[1] if isinstance(self._keep, tuple) else None
        if isinstance(owner, NDArray):
            owner._data  # pylint: disable=pointless-statement
        return data.value or 0

    @property
    def __array_interface__(self):
        if self._on_gpu():  # device memory: numpy reads a copy through __array__
            raise AttributeError("a gpu array has no host memory to share")
        return {"shape": self.shape, "typestr": self.dtype.str, "data": (self._data, False), "version": 3}

    def _on_gpu(self):
        return self.context.device_type == "gpu"

    def _view(self):
        """A numpy array over this array's memory (keeps it alive); for a gpu
        array, a copy in host memory."""
        if not self._on_gpu():
            return np.asarray(self)
        host = np.empty(self.shape, self.dtype)
        check_call(lib.SymcNDArraySyncCopyToCPU(self.handle, ctypes.c_void_p(host.ctypes.data),
                                                ctypes.c_size_t(host.size)))
        return host

    def _assign(self, key, value):
        """self[key] = value, through a host copy for a gpu array."""
        view = self._view()
        view[key] = np.asarray(value)
        if self._on_gpu():
            view = np.ascontiguousarray(view)
            check_call(lib.SymcNDArraySyncCopyFromCPU(self.handle, ctypes.c_void_p(view.ctypes.data),
                                                      ctypes.c_size_t(view.size)))

    # -- MXNet's NDArray methods ---------------------------------------------
    def asnumpy(self):
        return np.array(self._view(), copy=True)

    def asscalar(self):
        if self.size != 1:
            raise ValueError("The current array is not a scalar")
        return self.asnumpy().reshape(())[()]

    def copy(self):
        return array(self._view(), ctx=self.context, dtype=self.dtype)

    def as_in_context(self, context):
        return self if context == self.context else self.copyto(context)

    def copyto(self, other):
        if isinstance(other, Context):
            return array(self._view(), ctx=other, dtype=self.dtype)
        if not isinstance(other, NDArray):
            raise TypeError("copyto does not support type " + str(type(other)))
        check_call(lib.SymcNDArrayCopyFrom(other.handle, self.handle))
        return other

    def astype(self, dtype, copy=True):
        if not copy and np.dtype(dtype) == self.dtype:
            return self
        return array(self._view(), dtype=dtype)

    def reshape(self, *shape):
        """A view of the same memory with another shape."""
        shape = shape[0] if len(shape) == 1 and not isinstance(shape[0], int) else shape
        view = self._view().reshape(shape)
        return from_numpy(view, keep=self)

    def wait_to_read(self):
        """Computation is synchronous: nothing to wait for."""

    @property
    def stype(self):
        return "default"  # symc arrays are dense

    # -- indexing and arithmetic, through numpy views ---------------------------
    def __getitem__(self, key):
        view = self._view()
        value = view[key]
        if not self._on_gpu() and isinstance(value, np.ndarray) and np.shares_memory(value, view):
            return from_numpy(value, keep=self)
        # A gpu array's items are copies (on its device), not views.
        return array(value, ctx=self.context if self._on_gpu() else None, dtype=self.dtype)

    def __setitem__(self, key, value):
        self._assign(key, value)

    def __len__(self):
        return self.shape[0]

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    def __array__(self, dtype=None, copy=None):
        view = self._view()
        return view if dtype is None else view.astype(dtype)

    def __repr__(self):
        shape = "x".join(str(d) for d in self.shape)
        return "\n%s\n<NDArray %s @%s>" % (str(self.asnumpy()), shape, self.context)

    def _binary(self, other, op):
        # Comparisons give 0/1 in the array's dtype, as MXNet's do.
        return array(np.asarray(op(self._view(), np.asarray(other))).astype(self.dtype, copy=False))

    def _inplace(self, other, op):
        self._assign(Ellipsis, op(self._view(), np.asarray(other)))
        return self


def _add_operators():
    import operator
    for name in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "eq", "ne", "lt", "le", "gt", "ge"):
        op = getattr(operator, name)
        setattr(NDArray, "__%s__" % name, lambda self, other, op=op: self._binary(other, op))
        if name in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow"):
            setattr(NDArray, "__r%s__" % name, lambda self, other, op=op: array(op(np.asarray(other), self._view())))
            setattr(NDArray, "__i%s__" % name, lambda self, other, op=op: self._inplace(other, op))
    NDArray.__neg__ = lambda self: array(-self._view())
    NDArray.__abs__ = lambda self: array(np.abs(self._view()))
    NDArray.__hash__ = object.__hash__


_add_operators()


def _new(shape, dtype, ctx=None):
    if ctx is not None and not isinstance(ctx, Context):
        raise TypeError("ctx must be a Context, not %r" % (ctx,))
    ctx = ctx or Context("cpu", 0)
    dims, ndim = _shape_arg(shape)
    handle = ctypes.c_void_p()
    check_call(lib.SymcNDArrayCreate(dims, ndim, dtype_code(dtype), ctx.device_typeid, ctx.device_id,
                                     ctypes.byref(handle)))
    return NDArray(handle)


def zeros(shape, ctx=None, dtype="float32", **kwargs):
    return _new(shape, dtype, ctx)


def empty(shape, ctx=None, dtype="float32"):
    return zeros(shape, ctx, dtype)


def ones(shape, ctx=None, dtype="float32", **kwargs):
    out = zeros(shape, ctx, dtype)
    out[:] = 1
    return out


def array(source_array, ctx=None, dtype=None):
    """A new array holding a copy of `source_array` (mx.nd.array: float32
    unless the source is a numpy array or NDArray, whose dtype is kept)."""
    if dtype is None:
        dtype = source_array.dtype if isinstance(source_array, (np.ndarray, NDArray)) else np.float32
    source = np.asarray(source_array)
    out = _new(source.shape, dtype, ctx)
    out._assign(Ellipsis, source)
    return out


def from_numpy(ndarray, zero_copy=True, keep=None):
    """An NDArray over a C-contiguous numpy array's memory (mx.nd.from_numpy):
    writes through either are seen by both."""
    if not zero_copy or not ndarray.flags["C_CONTIGUOUS"] or np.dtype(ndarray.dtype) not in _DTYPE_TO_CODE:
        return array(ndarray)
    dims, ndim = _shape_arg(ndarray.shape)
    handle = ctypes.c_void_p()
    check_call(lib.SymcNDArrayCreateFromData(ctypes.c_void_p(ndarray.ctypes.data), dims, ndim,
                                             dtype_code(ndarray.dtype), None, None, ctypes.byref(handle)))
    return NDArray(handle, keep=ndarray if keep is None else (ndarray, keep))


def as_ndarray(value):
    """NDArrays pass; numpy arrays are wrapped without a copy where they can be."""
    if isinstance(value, NDArray):
        return value
    if isinstance(value, np.ndarray):
        return from_numpy(value)
    raise TypeError("Only accept list of NDArrays or dict of str to NDArray")


def _list_from(handle):
    size = ctypes.c_int()
    check_call(lib.SymcNDListSize(handle, ctypes.byref(size)))
    names, arrays = [], []
    for i in range(size.value):
        name, array_handle = ctypes.c_char_p(), ctypes.c_void_p()
        check_call(lib.SymcNDListGet(handle, i, ctypes.byref(name), ctypes.byref(array_handle)))
        names.append(name.value.decode())
        arrays.append(NDArray(array_handle) if array_handle.value else None)
    check_call(lib.SymcNDListFree(handle))
    # mx.nd.load: a dict when the file has names, else a list.
    return dict(zip(names, arrays)) if any(names) else arrays


def load(fname):
    """mx.nd.load: a dict (named file) or a list of NDArrays."""
    handle = ctypes.c_void_p()
    check_call(lib.SymcNDListLoad(c_str(fname), ctypes.byref(handle)))
    return _list_from(handle)


def load_frombuffer(buf):
    """mx.nd.load_frombuffer."""
    handle = ctypes.c_void_p()
    check_call(lib.SymcNDListLoadFromBuffer(buf, ctypes.c_size_t(len(buf)), ctypes.byref(handle)))
    return _list_from(handle)


def save(fname, data):
    """mx.nd.save: an NDArray, a list of them, or a dict of str to NDArray,
    byte-compatible with MXNet's files."""
    if isinstance(data, (NDArray, np.ndarray)):
        data = [data]
    if isinstance(data, dict):
        if not all(isinstance(k, str) for k in data):
            raise TypeError("save only accept dict str->NDArray or list of NDArray")
        names, arrays = [c_str(k) for k in data], list(data.values())
    elif isinstance(data, (list, tuple)):
        names, arrays = None, list(data)
    else:
        raise ValueError("data needs to either be a NDArray, dict of str, NDArray pairs or a list of NDarrays.")
    arrays = [as_ndarray(a) for a in arrays]
    check_call(lib.SymcNDListSave(c_str(fname), len(arrays), c_array(ctypes.c_char_p, names) if names else None,
                                  c_handles(a.handle for a in arrays)))
