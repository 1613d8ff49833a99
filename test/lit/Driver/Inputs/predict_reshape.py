"""MXPredCreate at the first size of a shape-variant artifact, then
MXPredReshape to another compiled size, through libsymc_predict; saves the
output of a forward at the new size.

  predict_reshape.py LIBSYMC_PREDICT SYMBOL PARAMS ARTIFACT_DIR INPUT.npy OUT.npy
"""
import ctypes
import os
import sys

import numpy as np

lib_path, symbol, params, artifacts, input_path, out_path = sys.argv[1:]
os.environ["SYMC_ARTIFACT_PATH"] = artifacts
lib = ctypes.CDLL(lib_path)
lib.MXGetLastError.restype = ctypes.c_char_p


def check(rc):
    if rc != 0:
        sys.exit("predict error: " + lib.MXGetLastError().decode())


def shape_args(shape):
    keys = (ctypes.c_char_p * 1)(b"data")
    indptr = (ctypes.c_uint32 * 2)(0, len(shape))
    dims = (ctypes.c_uint32 * len(shape))(*shape)
    return keys, indptr, dims


x = np.load(input_path).astype("float32")
json_text = open(symbol).read().encode()
param_bytes = open(params, "rb").read()
predictor, reshaped = ctypes.c_void_p(), ctypes.c_void_p()
check(lib.MXPredCreate(json_text, param_bytes, len(param_bytes), 1, 0, 1, *shape_args((1, 2, 8, 8)),
                       ctypes.byref(predictor)))
check(lib.MXPredReshape(1, *shape_args(x.shape), predictor, ctypes.byref(reshaped)))
check(lib.MXPredSetInput(reshaped, b"data", x.ctypes.data_as(ctypes.POINTER(ctypes.c_float)), x.size))
check(lib.MXPredForward(reshaped))
shape, ndim = ctypes.POINTER(ctypes.c_uint32)(), ctypes.c_uint32()
check(lib.MXPredGetOutputShape(reshaped, 0, ctypes.byref(shape), ctypes.byref(ndim)))
out = np.zeros([shape[i] for i in range(ndim.value)], "float32")
check(lib.MXPredGetOutput(reshaped, 0, out.ctypes.data_as(ctypes.POINTER(ctypes.c_float)), out.size))
np.save(out_path, out)
