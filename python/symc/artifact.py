"""Compiled models: symc.compile, symc.load, and binding them (Symbol.bind /
simple_bind's work, with the artifact playing the symbol)."""
import ctypes
import hashlib
import json
import os
import subprocess
import tempfile

import numpy as np

from .base import MXNetError, c_array, c_handles, c_str, check_call, find_compiler, lib
from .context import Context
from .executor import ARGUMENTS, AUX_STATES, GRADIENTS, OUTPUTS, Executor
from .ndarray import _CODE_TO_DTYPE, as_ndarray, dtype_code

__all__ = ["Artifact", "compile", "load"]

_GRAD_REQ_MAP = {"null": 0, "write": 1, "add": 3}


class TensorInfo:
    """A compiled argument, aux state or output: name, shape (-1 for the
    dynamic batch dim) and numpy dtype."""

    def __init__(self, name, shape, dtype):
        self.name, self.shape, self.dtype = name, shape, dtype

    def __repr__(self):
        return "TensorInfo(%r, %s, %s)" % (self.name, self.shape, self.dtype)


class _GroupContext(ctypes.Structure):
    _fields_ = [("group", ctypes.c_char_p), ("dev_type", ctypes.c_int), ("dev_id", ctypes.c_int)]


def _group_contexts(group2ctx):
    """group2ctx as the C API's (count, SymcGroupContext array)."""
    group2ctx = group2ctx or {}
    for ctx in group2ctx.values():
        if not isinstance(ctx, Context):
            raise TypeError("Context type error")
    entries = [_GroupContext(c_str(g), c.device_typeid, c.device_id) for g, c in group2ctx.items()]
    return len(entries), (_GroupContext * max(len(entries), 1))(*entries)


class _NDList:
    """A libsymrt list of named arrays (simple_bind's shared_buffer)."""

    def __init__(self, arrays):
        self.handle = ctypes.c_void_p()
        check_call(lib.SymcNDListCreate(ctypes.byref(self.handle)))
        for name, array in arrays.items():
            check_call(lib.SymcNDListSet(self.handle, c_str(name), as_ndarray(array).handle))

    def items(self):
        from .ndarray import NDArray
        size = ctypes.c_int()
        check_call(lib.SymcNDListSize(self.handle, ctypes.byref(size)))
        for i in range(size.value):
            name, handle = ctypes.c_char_p(), ctypes.c_void_p()
            check_call(lib.SymcNDListGet(self.handle, i, ctypes.byref(name), ctypes.byref(handle)))
            yield name.value.decode(), NDArray(handle)

    def __del__(self):
        if getattr(self, "handle", None) and lib is not None:
            lib.SymcNDListFree(self.handle)


class Artifact:
    """A model compiled by symc (a shared library), loaded."""

    def __init__(self, path, prefix="symc", sha256=None, handle=None):
        self.path = path
        if handle is None:
            handle = ctypes.c_void_p()
            check_call(lib.SymcArtifactLoadPinned(c_str(path), c_str(prefix), c_str(sha256) if sha256 else None,
                                                  ctypes.byref(handle)))
        self.handle = handle
        self.arguments, self.aux_states, self.outputs, self.gradients = (
            self._tensors(which) for which in (ARGUMENTS, AUX_STATES, OUTPUTS, GRADIENTS))
        has_backward = ctypes.c_int()
        check_call(lib.SymcArtifactHasBackward(self.handle, ctypes.byref(has_backward)))
        self.has_backward = bool(has_backward.value)

    def __del__(self):
        if getattr(self, "handle", None) and lib is not None:
            lib.SymcArtifactFree(self.handle)
            self.handle = None

    def _tensors(self, which):
        count = ctypes.c_int()
        check_call(lib.SymcArtifactNumTensors(self.handle, which, ctypes.byref(count)))
        tensors = []
        for i in range(count.value):
            name, ndim, dims, dtype = ctypes.c_char_p(), ctypes.c_int(), ctypes.POINTER(ctypes.c_int64)(), ctypes.c_int()
            check_call(lib.SymcArtifactGetTensor(self.handle, which, i, ctypes.byref(name), ctypes.byref(ndim),
                                                 ctypes.byref(dims), ctypes.byref(dtype)))
            tensors.append(TensorInfo(name.value.decode(), tuple(dims[d] for d in range(ndim.value)),
                                      np.dtype(_CODE_TO_DTYPE[dtype.value])))
        return tensors

    @property
    def shape_variants(self):
        """The symbol compiled for other shapes into the same file (symc
        compile --shape data=?,3,224|320,224|320), each an Artifact; binding
        and reshaping choose the one that fits."""
        count = ctypes.c_int()
        check_call(lib.SymcArtifactNumShapeVariants(self.handle, ctypes.byref(count)))
        variants = []
        for i in range(count.value):
            handle = ctypes.c_void_p()
            check_call(lib.SymcArtifactGetShapeVariant(self.handle, i, ctypes.byref(handle)))
            variants.append(Artifact(self.path, handle=handle))
        return variants

    def runs(self, shapes):
        """Whether these argument / aux shapes fit the compiled ones or those
        of a shape variant (a -1 dim, the dynamic batch, takes one size for all)."""
        fits = ctypes.c_int()
        check_call(lib.SymcArtifactFits(self.handle, len(shapes), c_array(ctypes.c_char_p, [c_str(n) for n in shapes]),
                                        c_array(ctypes.c_int64, [d for s in shapes.values() for d in s]),
                                        c_array(ctypes.c_int, [len(s) for s in shapes.values()]), ctypes.byref(fits)))
        return bool(fits.value)

    def list_arguments(self):
        return [t.name for t in self.arguments]

    def list_outputs(self):
        return [t.name for t in self.outputs]

    def list_auxiliary_states(self):
        return [t.name for t in self.aux_states]

    def __repr__(self):
        return "<symc.Artifact %s: %d arguments, %d aux states, outputs %s>" % (
            self.path, len(self.arguments), len(self.aux_states), self.list_outputs())

    # -- Symbol.simple_bind ------------------------------------------------------
    def simple_bind(self, ctx, grad_req="write", type_dict=None, stype_dict=None, group2ctx=None,
                    shared_arg_names=None, shared_exec=None, shared_buffer=None, **kwargs):
        """Zero-filled arrays of the given (or compiled) shapes; a gradient
        array for every argument whose grad_req is not 'null'."""
        if not isinstance(ctx, Context):
            raise TypeError("Context type error")
        if stype_dict and any(s != "default" for s in stype_dict.values()):
            raise MXNetError("symc arrays are dense: stype_dict may only name 'default'")
        # As MXNet: only tuple-valued keywords are shapes.
        shapes = {name: shape for name, shape in kwargs.items() if isinstance(shape, tuple)}
        shape_names = c_array(ctypes.c_char_p, [c_str(n) for n in shapes])
        shape_data = c_array(ctypes.c_int64, [d for s in shapes.values() for d in s])
        shape_ndim = c_array(ctypes.c_int, [len(s) for s in shapes.values()])
        req_names, req_types = self._simple_bind_grad_req(grad_req)
        types = type_dict or {}
        shared_names = list(shared_arg_names or [])
        buffer = _NDList(shared_buffer) if shared_buffer is not None else None
        handle = ctypes.c_void_p()
        check_call(lib.SymcExecutorSimpleBindShared(
            self.handle, ctx.device_typeid, ctx.device_id, len(shapes), shape_names, shape_data, shape_ndim,
            len(req_types), req_names, c_array(ctypes.c_char_p, req_types), len(types),
            c_array(ctypes.c_char_p, [c_str(n) for n in types]),
            c_array(ctypes.c_int, [dtype_code(t) for t in types.values()]),
            shared_exec.handle if shared_exec is not None else None, len(shared_names),
            c_array(ctypes.c_char_p, [c_str(n) for n in shared_names]), buffer.handle if buffer else None,
            *_group_contexts(group2ctx), ctypes.byref(handle)))
        if buffer is not None:
            shared_buffer.update(buffer.items())  # MXNet writes the updated buffer back
        return Executor(handle, self)

    @staticmethod
    def _simple_bind_grad_req(grad_req):
        """(names or None, types) in the C API's forms."""
        if grad_req is None:
            return None, [b"null"]
        if isinstance(grad_req, str):
            return None, [c_str(grad_req)]
        if isinstance(grad_req, (list, tuple)):
            if not grad_req:
                raise RuntimeError("grad_req in simple_bind cannot be an empty list")
            return None, [c_str(r) for r in grad_req]
        if isinstance(grad_req, dict):
            if not grad_req:
                raise RuntimeError("grad_req in simple_bind cannot be an empty dict")
            return c_array(ctypes.c_char_p, [c_str(n) for n in grad_req]), [c_str(r) for r in grad_req.values()]
        raise TypeError("grad_req must be a str, a list or a dict, not %s" % type(grad_req).__name__)

    # -- Symbol.bind ---------------------------------------------------------------
    def bind(self, ctx, args, args_grad=None, grad_req="write", aux_states=None, group2ctx=None,
             shared_exec=None):
        """Binds the caller's arrays (NDArrays, or numpy arrays wrapped without
        a copy): writing into them changes what the next forward sees."""
        if not isinstance(ctx, Context):
            raise TypeError("Context type error")
        names = self.list_arguments()
        arg_list = self._required(args, names, "args", "Length of args does not match the number of arguments")
        grad_list = self._optional(args_grad, names)
        aux_list = self._required([] if aux_states is None else aux_states, self.list_auxiliary_states(),
                                  "aux_states", "Length of aux_states does not match the number of arguments")
        reqs = self._bind_grad_req(grad_req, names)
        handle = ctypes.c_void_p()
        check_call(lib.SymcExecutorBind(
            self.handle, ctx.device_typeid, ctx.device_id, len(arg_list), c_handles(a.handle for a in arg_list),
            c_handles(g.handle if g is not None else None for g in grad_list) if args_grad is not None else None,
            c_array(ctypes.c_int, reqs), len(aux_list), c_handles(a.handle for a in aux_list),
            shared_exec.handle if shared_exec is not None else None, *_group_contexts(group2ctx),
            ctypes.byref(handle)))
        keep = arg_list + [g for g in grad_list if g is not None] + aux_list
        return Executor(handle, self, keep, has_grad_arrays=args_grad is not None)

    @staticmethod
    def _required(given, names, what, length_message):
        if isinstance(given, dict):
            missing = [n for n in names if n not in given]
            if missing:
                raise ValueError("key `%s` is missing in `%s`" % (missing[0], what))
            given = [given[n] for n in names]
        elif isinstance(given, (list, tuple)):
            if len(given) != len(names):
                raise ValueError(length_message)
        else:
            raise TypeError("Only accept list of NDArrays or dict of str to NDArray")
        return [as_ndarray(a) for a in given]

    @staticmethod
    def _optional(given, names):
        if given is None:
            return [None] * len(names)
        if isinstance(given, dict):
            given = [given.get(n) for n in names]
        elif len(given) != len(names):
            raise ValueError("Length of args_grad does not match the number of arguments")
        return [None if g is None else as_ndarray(g) for g in given]

    @staticmethod
    def _bind_grad_req(grad_req, names):
        if isinstance(grad_req, str):
            if grad_req not in _GRAD_REQ_MAP:
                raise ValueError("grad_req must be in %s" % str(_GRAD_REQ_MAP))
            return [_GRAD_REQ_MAP[grad_req]] * len(names)
        if isinstance(grad_req, (list, tuple)):
            return [_GRAD_REQ_MAP[r] for r in grad_req] + [0] * (len(names) - len(grad_req))
        if isinstance(grad_req, dict):
            return [_GRAD_REQ_MAP[grad_req[n]] if n in grad_req else 0 for n in names]
        raise TypeError("grad_req must be a str, a list or a dict")


def load(path, prefix="symc", sha256=None):
    """Loads an artifact written by `symc compile` (or symc.compile). Its seal
    is checked first; with `sha256` (hex, as symc.verify returns it) the file
    must also be the one with that digest."""
    return Artifact(path, prefix, sha256)


def verify(path):
    """Checks the seal `symc compile` put on the artifact at `path` (a
    truncated or modified file raises MXNetError) and returns the SHA-256 it
    holds, in hex: what a deployer compares with the digest they were given."""
    digest = ctypes.c_char_p()
    check_call(lib.SymcArtifactVerify(c_str(path), ctypes.byref(digest)))
    return digest.value.decode()


def _symbol_json(symbol):
    """The JSON text of a path, a JSON string, or an object with tojson()
    (an mxnet or symc Symbol)."""
    if hasattr(symbol, "tojson"):
        return symbol.tojson()
    if isinstance(symbol, str) and symbol.lstrip().startswith("{"):
        return symbol
    with open(symbol) as f:
        return f.read()


def _dims(shape):
    """--shape's dims: None or '?' keeps a dim dynamic, a list or tuple of
    sizes compiles each of them (shape variants of one artifact)."""
    def dim(d):
        if d is None or d == "?":
            return "?"
        if isinstance(d, (list, tuple)):
            return "|".join(str(int(size)) for size in d)
        return str(int(d))
    return ",".join(dim(d) for d in shape)


def compile(symbol, shapes=None, train=False, grad_req=None, output=None, params=None, embed_params=False,
            name=None, cpu="native", mirror=False, outputs=None, batch_chunk=None, monitor=True, **shape_kwargs):
    """Compiles an MXNet symbol ahead of time and loads it.

    symbol: a -symbol.json path, its JSON text, or an mxnet/symc Symbol.
    shapes (or keywords): input name -> shape; None or '?' keeps a dim dynamic,
    a tuple of sizes compiles each (data=(None, 3, (224, 320), (224, 320)):
    one artifact serving both image sizes).
    train / grad_req: compile the backward too; grad_req maps names to
    'write' / 'add' / 'null' ('null' ones get no gradient at all).
    output: where to write the .so; by default a cache keyed by the symbol and
    the options ($SYMC_CACHE_DIR, else ~/.cache/symc), reused when it exists.
    monitor=False leaves out the instrumented forward (set_monitor_callback).
    """
    text = _symbol_json(symbol)
    shapes = dict(shapes or {}, **shape_kwargs)
    options = ["--shape=%s=%s" % (k, _dims(v)) for k, v in sorted(shapes.items())]
    if grad_req:
        train = True
        options += ["--grad-req=%s=%s" % (k, v) for k, v in sorted(grad_req.items())]
    options += ["--train"] if train else []
    options += ["--mirror"] if mirror else []
    options += ["--params=%s" % os.path.abspath(params)] if params else []
    options += ["--embed-params"] if embed_params else []
    options += ["--name=%s" % name] if name else []
    options += ["--outputs=%s" % ",".join(outputs)] if outputs else []
    options += ["--batch-chunk=%d" % batch_chunk] if batch_chunk else []
    options += [] if monitor else ["--no-monitor"]
    options.append("--cpu=%s" % cpu)
    compiler = find_compiler()
    if output is None:
        output = _cached_path(compiler, text, options, params)
        if os.path.exists(output):
            try:
                return load(output, name or "symc")
            except MXNetError:  # cut short or modified since: its seal says so; compile anew
                pass
    _run_compiler(compiler, text, options, output)
    return load(output, name or "symc")


def _cached_path(compiler, text, options, params):
    cache = os.environ.get("SYMC_CACHE_DIR") or os.path.join(os.path.expanduser("~"), ".cache", "symc")
    os.makedirs(cache, exist_ok=True)
    key = hashlib.sha256()
    stat = os.stat(compiler)  # a rebuilt compiler compiles anew
    for part in (text, json.dumps(options), compiler, str(stat.st_mtime_ns), str(stat.st_size)):
        key.update(part.encode())
        key.update(b"\0")
    if params:
        with open(params, "rb") as f:
            key.update(hashlib.sha256(f.read()).digest())
    return os.path.join(cache, key.hexdigest()[:32] + ".so")


def _run_compiler(compiler, text, options, output):
    out_dir = os.path.dirname(os.path.abspath(output))
    os.makedirs(out_dir, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=out_dir) as work:
        symbol_path = os.path.join(work, "model-symbol.json")
        with open(symbol_path, "w") as f:
            f.write(text)
        partial = os.path.join(work, "model.so")
        result = subprocess.run([compiler, "compile", symbol_path, "-q", "-o", partial] + options,
                                capture_output=True, text=True)
        if result.returncode != 0:
            raise MXNetError("symc compile failed:\n" + result.stderr.strip())
        os.replace(partial, output)  # atomic: concurrent compiles of one key are safe
