"""libsymrt through ctypes: finding the library, calling it, raising its errors.

ctypes rather than a compiled extension: the package is pure Python, installs
without a compiler on any CPython >= 3.8, and stays a thin layer over the one C
API that C callers use too. A call costs microseconds; a forward costs
milliseconds, and arrays cross the boundary without copies.
"""
import ctypes
import ctypes.util
import os
import shutil

__all__ = ["MXNetError", "lib", "check_call", "c_str", "c_array", "c_handles", "find_compiler"]

_SONAME = "libsymrt.so.0.2"


class MXNetError(RuntimeError):
    """An error of the runtime that MXNet reports as mxnet.base.MXNetError."""


# The Python exception MXNet raises for each kind the C API reports.
_KINDS = {"ValueError": ValueError, "TypeError": TypeError, "KeyError": KeyError,
          "IndexError": IndexError, "RuntimeError": RuntimeError, "MemoryError": MemoryError,
          "AssertionError": AssertionError, "ZeroDivisionError": ZeroDivisionError}


def _candidates():
    env = os.environ.get("SYMC_LIBRARY")
    if env:
        yield env
        return
    here = os.path.dirname(os.path.abspath(__file__))
    yield os.path.join(here, "lib", _SONAME)  # a wheel that bundles the runtime
    compiler = shutil.which("symc")
    if compiler:  # an installed prefix: PREFIX/bin/symc beside PREFIX/lib*/libsymrt
        prefix = os.path.dirname(os.path.dirname(os.path.realpath(compiler)))
        for libdir in ("lib", "lib64", "lib/x86_64-linux-gnu"):
            yield os.path.join(prefix, libdir, _SONAME)
    # The source tree's build (python/symc -> build/lib).
    yield os.path.join(os.path.dirname(os.path.dirname(here)), "build", "lib", _SONAME)
    yield _SONAME  # the system's library path
    found = ctypes.util.find_library("symrt")
    if found:
        yield found


def _load():
    tried = []
    for path in _candidates():
        if os.sep in path and not os.path.exists(path):
            tried.append(path)
            continue
        try:
            return ctypes.CDLL(path)
        except OSError as error:
            tried.append("%s (%s)" % (path, error))
    raise ImportError("symc: cannot find libsymrt; set SYMC_LIBRARY to its path. Tried: " + "; ".join(tried))


lib = _load()
lib.SymcGetLastError.restype = ctypes.c_char_p
lib.SymcGetLastErrorKind.restype = ctypes.c_char_p


def check_call(rc):
    """Raises the error of a failed C API call as MXNet would raise it."""
    if rc == 0:
        return
    message = lib.SymcGetLastError().decode()
    kind = _KINDS.get(lib.SymcGetLastErrorKind().decode(), MXNetError)
    raise kind(message)


def c_str(text):
    return text.encode() if isinstance(text, str) else text


def c_array(ctype, values):
    values = list(values)
    return (ctype * len(values))(*values)


def c_handles(handles):
    """An array of (possibly NULL) handles."""
    return c_array(ctypes.c_void_p, [h.value if isinstance(h, ctypes.c_void_p) else h for h in handles])


def find_compiler():
    """The symc compiler: SYMC_COMPILER, else symc on PATH, else the source tree's build."""
    env = os.environ.get("SYMC_COMPILER")
    if env:
        return env
    found = shutil.which("symc")
    if found:
        return found
    built = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                         "build", "bin", "symc")
    if os.path.exists(built):
        return built
    raise MXNetError("symc: the compiler is not found; put symc on PATH or set SYMC_COMPILER")
