"""symc: MXNet's executor API over models compiled ahead of time.

    import symc as mx
    exe = mx.sym.load("model-symbol.json").simple_bind(mx.cpu(), data=(1, 3, 224, 224))

or, with a compiled artifact:

    art = symc.compile("model-symbol.json", data=(1, 3, 224, 224))   # or symc.load("model.so")
    exe = art.simple_bind(symc.cpu())
"""
import ctypes as _ctypes

from . import callback, executor_manager, initializer, io, kvstore, metric, model, monitor, optimizer
from . import ndarray as nd
from . import symbol as sym
from .artifact import Artifact, compile, load, verify
from .base import MXNetError, check_call as _check_call, lib as _lib
from .context import Context, cpu, cpu_pinned, current_context, gpu
from .executor import Executor
from .ndarray import NDArray

symbol = sym
ndarray = nd
init = initializer
kv = kvstore


def _versions():
    version, abi = _ctypes.c_char_p(), _ctypes.c_int()
    _check_call(_lib.SymcGetVersion(_ctypes.byref(version), _ctypes.byref(abi)))
    return version.value.decode(), abi.value


__version__, ARTIFACT_ABI_VERSION = _versions()


class random:  # noqa: N801 - mx.random's name
    """mx.random: the seed Dropout and rrelu draw from."""

    @staticmethod
    def seed(seed_state, ctx="all"):
        _check_call(_lib.SymcRandomSeed(_ctypes.c_uint64(int(seed_state))))


__all__ = ["Artifact", "Context", "callback", "init", "initializer", "io", "kv", "kvstore", "metric", "model", "Executor", "MXNetError", "NDArray", "compile", "cpu", "cpu_pinned",
           "current_context", "executor_manager", "gpu", "load", "monitor", "nd", "ndarray", "optimizer", "random", "sym", "symbol", "verify"]
