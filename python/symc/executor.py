"""mxnet.executor.Executor over a compiled artifact."""
import ctypes
import functools

import numpy as np

from .base import c_array, c_handles, c_str, check_call, lib
from .ndarray import NDArray, as_ndarray

__all__ = ["Executor"]

# SymcTensorList (c_api.h).
ARGUMENTS, AUX_STATES, OUTPUTS, GRADIENTS = 0, 1, 2, 3


def _get_dict(names, ndarrays):
    """Executor._get_dict: names zipped with arrays; duplicates raise."""
    if len(set(names)) != len(names):
        raise ValueError("Duplicate names detected, %s" % str(names))
    return dict(zip(names, ndarrays))


def _param_lists(params):
    names, arrays = [], []
    for name, value in params.items():
        names.append(c_str(name))
        arrays.append(as_ndarray(np.asarray(value) if not isinstance(value, (NDArray, np.ndarray)) else value))
    return len(names), c_array(ctypes.c_char_p, names), c_handles(a.handle for a in arrays), arrays


class Executor:
    """An executor bound by Artifact.bind / simple_bind (or Symbol.bind /
    simple_bind): the same attributes and methods as MXNet 1.9's."""

    def __init__(self, handle, artifact, keep=(), has_grad_arrays=True):
        self.handle = handle
        self._artifact = artifact
        self._keep = list(keep)  # arrays bound without a copy
        self.arg_arrays = self._tensors(ARGUMENTS)
        self.grad_arrays = self._tensors(GRADIENTS) if has_grad_arrays else None
        self.aux_arrays = self._tensors(AUX_STATES)
        # The same buffers after every forward (MXNet's planned outputs).
        self.outputs = self._tensors(OUTPUTS)
        # Set by Symbol.bind / simple_bind: compiles the symbol for other shapes.
        self._recompile, self._bound_shapes = None, {}

    def __del__(self):
        if getattr(self, "handle", None) is not None and lib is not None:
            lib.SymcExecutorFree(self.handle)
            self.handle = None

    def _tensors(self, which):
        count = ctypes.c_int()
        check_call(lib.SymcExecutorNumTensors(self.handle, which, ctypes.byref(count)))
        arrays = []
        for i in range(count.value):
            handle = ctypes.c_void_p()
            check_call(lib.SymcExecutorGetTensor(self.handle, which, i, None, ctypes.byref(handle)))
            arrays.append(NDArray(handle, keep=self._keep) if handle.value else None)
        return arrays

    # -- names ----------------------------------------------------------------
    # Built on first use, as MXNet's are: duplicated names raise then.
    @functools.cached_property
    def arg_dict(self):
        return _get_dict(self._artifact.list_arguments(), self.arg_arrays)

    @functools.cached_property
    def grad_dict(self):
        return _get_dict(self._artifact.list_arguments(), self.grad_arrays)

    @functools.cached_property
    def aux_dict(self):
        return _get_dict(self._artifact.list_auxiliary_states(), self.aux_arrays)

    @functools.cached_property
    def output_dict(self):
        return _get_dict(self._artifact.list_outputs(), self.outputs)

    # -- running --------------------------------------------------------------
    def forward(self, is_train=False, **kwargs):
        """Copies each keyword array into its argument, then runs forward."""
        for name, array in kwargs.items():
            if not isinstance(array, (NDArray, np.ndarray)):
                raise ValueError("only accept keyword argument of NDArrays and numpy.ndarray")
            if name not in self.arg_dict:
                raise TypeError("Unknown argument %s" % name)
            target = self.arg_dict[name]
            if target.shape != array.shape:
                raise ValueError("Shape not match! Argument %s, need: %s, received: %s"
                                 % (name, str(target.shape), str(array.shape)))
            target[:] = array
        check_call(lib.SymcExecutorForward(self.handle, int(bool(is_train))))
        return self.outputs

    def partial_forward(self, is_train=False, step=0):
        """MXNet's Executor::PartialForward (MXPredPartialForward): runs step
        `step` of the graph's nodes and returns the steps left. Step 0 runs
        the whole compiled forward; each step calls the monitor back for its
        node."""
        left = ctypes.c_int()
        check_call(lib.SymcExecutorPartialForward(self.handle, int(bool(is_train)), int(step), ctypes.byref(left)))
        return left.value

    def backward(self, out_grads=None, is_train=True):
        """Gradients of the arguments given the outputs' head gradients (by
        position, or a dict by output name); loss heads need none."""
        if out_grads is None:
            out_grads = []
        elif isinstance(out_grads, (NDArray, np.ndarray)):
            out_grads = [out_grads]
        elif isinstance(out_grads, dict):
            out_grads = [out_grads[k] for k in self._artifact.list_outputs()]
        heads = []
        for grad in out_grads:
            if grad is not None and not isinstance(grad, (NDArray, np.ndarray)):
                raise TypeError("inputs must be NDArray")
            heads.append(None if grad is None else as_ndarray(grad))
        check_call(lib.SymcExecutorBackward(self.handle, len(heads),
                                            c_handles(h.handle if h else None for h in heads), int(bool(is_train))))

    def copy_params_from(self, arg_params, aux_params=None, allow_extra_params=False):
        """Copies parameters in by name, casting to each argument's dtype."""
        num_args, arg_names, arg_handles, _args = _param_lists(arg_params)
        if aux_params is None:
            num_aux, aux_names, aux_handles, _aux = 0, None, None, []
        else:
            num_aux, aux_names, aux_handles, _aux = _param_lists(aux_params)
        check_call(lib.SymcExecutorCopyParamsFrom(self.handle, num_args, arg_names, arg_handles, num_aux,
                                                  aux_names, aux_handles, int(bool(allow_extra_params))))

    def reshape(self, partial_shaping=False, allow_up_sizing=False, **kwargs):
        """A new executor of the same artifact for new input shapes, sharing
        this one's memory (MXNet's rules; only the compiled '?' batch dim may
        change without recompiling)."""
        shapes = {name: shape for name, shape in kwargs.items() if isinstance(shape, tuple)}
        target = self._artifact
        if self._recompile is not None and not target.runs(shapes):
            # Bound from a Symbol: compiled (once, cached) for the new shapes.
            target = self._recompile(dict(self._bound_shapes, **shapes))
        handle = ctypes.c_void_p()
        check_call(lib.SymcExecutorReshapeTo(
            self.handle, target.handle, int(bool(partial_shaping)), int(bool(allow_up_sizing)), len(shapes),
            c_array(ctypes.c_char_p, [c_str(n) for n in shapes]),
            c_array(ctypes.c_int64, [d for shape in shapes.values() for d in shape]),
            c_array(ctypes.c_int, [len(shape) for shape in shapes.values()]), ctypes.byref(handle)))
        # The new executor's views keep this one's memory alive through libsymrt.
        child = Executor(handle, target, self._keep, has_grad_arrays=self.grad_arrays is not None)
        child._recompile, child._bound_shapes = self._recompile, dict(self._bound_shapes, **shapes)
        child._monitor = getattr(self, "_monitor", None)  # libsymrt re-installed it; keep it alive
        return child

    def set_monitor_callback(self, callback, monitor_all=False):
        """callback(name, handle) after every node of each forward, as MXNet
        calls it: name is bytes, handle a new NDArrayHandle the callback owns
        (wrap it: symc.nd.NDArray(handle)). The forward then runs the
        artifact's instrumented variant."""
        cb_type = ctypes.CFUNCTYPE(None, ctypes.c_char_p, ctypes.c_void_p, ctypes.c_void_p)
        self._monitor = cb_type(lambda name, handle, _: callback(name, ctypes.c_void_p(handle)))
        self._monitor_all = monitor_all
        check_call(lib.SymcExecutorSetMonitorCallback(self.handle, self._monitor, None, int(bool(monitor_all))))

    def debug_str(self):
        """The graph in MXNet's format, ending with "Total N MB allocated"."""
        text = ctypes.c_char_p()
        check_call(lib.SymcExecutorPrint(self.handle, ctypes.byref(text)))
        return text.value.decode()

    def get_optimized_symbol(self):
        """The graph as a Symbol (MXNet loads its tojson())."""
        from .symbol import load_json
        text = ctypes.c_char_p()
        check_call(lib.SymcExecutorGetOptimizedSymbol(self.handle, ctypes.byref(text)))
        return load_json(text.value.decode())

    def set_num_threads(self, threads):
        """Threads the compiled code uses (0: OMP_NUM_THREADS where set, else the CPUs this process may run on)."""
        check_call(lib.SymcExecutorSetNumThreads(self.handle, int(threads)))
