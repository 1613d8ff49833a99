#!/usr/bin/env python3
"""libsymrt's C API from Python ctypes: load, simple_bind, forward, outputs, errors,
and backward with gradients (the artifact compiled with --train)."""
import ctypes
import sys

lib_path, artifact, train_artifact = sys.argv[1], sys.argv[2], sys.argv[3]
lib = ctypes.CDLL(lib_path)
lib.symcGetLastError.restype = ctypes.c_char_p
lib.symcGetLastErrorKind.restype = ctypes.c_char_p
handle = ctypes.c_void_p


def check(rc):
    if rc != 0:
        raise RuntimeError("%s: %s" % (lib.symcGetLastErrorKind().decode(), lib.symcGetLastError().decode()))


def bind_a_b(path, grad_req):
    """simple_bind of 2*a+b with a = [1, 2] and b = [2, 3]."""
    art, exe = handle(), handle()
    check(lib.SymcArtifactLoad(path.encode(), None, ctypes.byref(art)))
    check(lib.SymcExecutorSimpleBind(art, 1, 0, 0, None, None, None, grad_req, ctypes.byref(exe)))
    for name, values in ((b"a", (1.0, 2.0)), (b"b", (2.0, 3.0))):
        arr, data = handle(), ctypes.c_void_p()
        check(lib.SymcExecutorGetArray(exe, name, ctypes.byref(arr)))
        check(lib.SymcNDArrayGetData(arr, ctypes.byref(data)))
        ctypes.memmove(data, (ctypes.c_float * 2)(*values), 8)
        check(lib.SymcNDArrayFree(arr))
    return art, exe


art, exe = bind_a_b(artifact, b"null")
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
# mx.random.seed's counterpart is exported (check_random.py checks its effect).
check(lib.SymcRandomSeed(ctypes.c_uint64(42)))


def floats(array, n):
    data = ctypes.c_void_p()
    check(lib.SymcNDArrayGetData(array, ctypes.byref(data)))
    return list(ctypes.cast(data, ctypes.POINTER(ctypes.c_float))[:n])


# backward(out) with head [4, 7] gives grad a = [8, 14] and grad b = [4, 7].
art, exe = bind_a_b(train_artifact, b"write")
check(lib.SymcExecutorForward(exe, 1))
check(lib.SymcExecutorGetOutput(exe, 0, ctypes.byref(out)))
assert lib.SymcExecutorBackward(exe, 0, None) == -1
assert lib.symcGetLastError().startswith(b"Because the last operator is not Loss function")
check(lib.SymcExecutorBackward(exe, 1, (handle * 1)(out)))
grads = []
for name in (b"a", b"b"):
    grad = handle()
    check(lib.SymcExecutorGetGrad(exe, name, ctypes.byref(grad)))
    grads.append(floats(grad, 2))
    check(lib.SymcNDArrayFree(grad))
assert grads == [[8.0, 14.0], [4.0, 7.0]], grads
check(lib.SymcNDArrayFree(out))
check(lib.SymcExecutorFree(exe))
check(lib.SymcArtifactFree(art))
print("ctypes: gradients of 2*a+b = %s" % grads)
