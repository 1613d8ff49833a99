#!/usr/bin/env python3
"""libsymrt's C API from Python ctypes: load, simple_bind, forward, outputs, errors."""
import ctypes
import sys

lib_path, artifact = sys.argv[1], sys.argv[2]
lib = ctypes.CDLL(lib_path)
lib.symcGetLastError.restype = ctypes.c_char_p
lib.symcGetLastErrorKind.restype = ctypes.c_char_p
handle = ctypes.c_void_p


def check(rc):
    if rc != 0:
        raise RuntimeError("%s: %s" % (lib.symcGetLastErrorKind().decode(), lib.symcGetLastError().decode()))


art, exe = handle(), handle()
check(lib.SymcArtifactLoad(artifact.encode(), None, ctypes.byref(art)))
check(lib.SymcExecutorSimpleBind(art, 1, 0, 0, None, None, None, b"null", ctypes.byref(exe)))
for name, values in ((b"a", (1.0, 2.0)), (b"b", (2.0, 3.0))):
    arr, data = handle(), ctypes.c_void_p()
    check(lib.SymcExecutorGetArray(exe, name, ctypes.byref(arr)))
    check(lib.SymcNDArrayGetData(arr, ctypes.byref(data)))
    ctypes.memmove(data, (ctypes.c_float * 2)(*values), 8)
    check(lib.SymcNDArrayFree(arr))
check(lib.SymcExecutorForward(exe, 0))
out, data = handle(), ctypes.c_void_p()
ndim, shape = ctypes.c_int(), ctypes.POINTER(ctypes.c_int64)()
check(lib.SymcExecutorGetOutput(exe, 0, ctypes.byref(out)))
check(lib.SymcNDArrayGetShape(out, ctypes.byref(ndim), ctypes.byref(shape)))
check(lib.SymcNDArrayGetData(out, ctypes.byref(data)))
got = list(ctypes.cast(data, ctypes.POINTER(ctypes.c_float))[:2])
assert (ndim.value, shape[0]) == (1, 2), (ndim.value, shape[0])
assert got == [4.0, 7.0], got
check(lib.SymcNDArrayFree(out))

assert lib.SymcExecutorGetArray(exe, b"nope", ctypes.byref(out)) == -1
assert lib.symcGetLastErrorKind() == b"KeyError", lib.symcGetLastErrorKind()
assert lib.symcGetLastError() == b"'nope'", lib.symcGetLastError()
check(lib.SymcExecutorFree(exe))
check(lib.SymcArtifactFree(art))
print("ctypes: 2*a+b = %s" % got)
