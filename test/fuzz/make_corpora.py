#!/usr/bin/env python3
"""Writes the fuzzers' seed corpora into corpus/<harness>/.

Seeds are files MXNet 1.9.1 and numpy write, the repo's symbols, the
manifests and artifacts of the e2e tests, and one input per crash class of
the hostile-input issue. Run from the repository root after a build:

    python3 test/fuzz/make_corpora.py --build build

Crashes the fuzzers find later are added by hand (or by scripts/fuzz.sh)
under their libFuzzer names and never removed.
"""
import argparse
import ctypes
import glob
import hashlib
import io
import os
import shutil
import struct

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def write(harness, name, data):
    os.makedirs(os.path.join(HERE, "corpus", harness), exist_ok=True)
    with open(os.path.join(HERE, "corpus", harness, name), "wb") as f:
        f.write(data.encode() if isinstance(data, str) else data)


def params_seeds():
    import mxnet as mx
    tmp = "/tmp/symc-corpus.params"
    cases = {
        "named-f32": {"arg:w": mx.nd.array([[1, 2], [3, 4]]), "aux:m": mx.nd.array([0.5])},
        "dtypes": {n: mx.nd.array([1, 2, 3], dtype=n) for n in ("float16", "float64", "uint8", "int8", "int32", "int64")},
    }
    for name, arrays in cases.items():
        mx.nd.save(tmp, arrays)
        write("params", name, open(tmp, "rb").read())
    mx.nd.save(tmp, [mx.nd.array([1, 2]), mx.nd.array([[3]])])
    write("params", "unnamed-list", open(tmp, "rb").read())
    with mx.util.np_shape(True):
        mx.nd.save(tmp, {"scalar": mx.nd.array(np.float32(3.5)), "empty": mx.nd.zeros((0, 3))})
    write("params", "np-shape", open(tmp, "rb").read())
    for path in glob.glob(os.path.join(ROOT, "test/lit/Driver/Inputs/*.params")):
        write("params", os.path.basename(path), open(path, "rb").read())
    good = open(os.path.join(HERE, "corpus/params/named-f32"), "rb").read()
    write("params", "truncated", good[:len(good) // 2])
    # A dim of 2^62 and four of them: byte counts that wrap.
    huge = bytearray(good)
    struct.pack_into("<q", huge, 36, 1 << 62)
    write("params", "wrapping-dims", bytes(huge))


def npy_seeds():
    for dtype in ("float32", "float64", "float16", "uint8", "int8", "int32", "int64", "bool"):
        buf = io.BytesIO()
        np.save(buf, np.arange(6).reshape(2, 3).astype(dtype))
        write("npy", dtype, buf.getvalue())
    for name, array in (("scalar", np.float32(2)), ("empty", np.zeros((0, 4), "float32")),
                        ("fortran", np.asfortranarray(np.ones((2, 3), "float32")))):
        buf = io.BytesIO()
        np.save(buf, array)
        write("npy", name, buf.getvalue())
    buf = io.BytesIO()
    np.lib.format.write_array(buf, np.ones(3, "float32"), version=(2, 0))
    write("npy", "version2", buf.getvalue())

    def header(text, data=b""):
        text += " " * ((64 - (10 + len(text) + 1) % 64) % 64) + "\n"
        return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(text)) + text.encode() + data
    write("npy", "long-descr", header("{'descr': '" + "<" * 60000 + "', 'fortran_order': False, 'shape': (1,), }"))
    write("npy", "twenty-digit-dim", header("{'descr': '<f4', 'fortran_order': False, 'shape': (12345678901234567890,), }"))
    write("npy", "wrapping-dims", header("{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904, 4), }", b"\0" * 64))
    write("npy", "declared-larger-than-file", header("{'descr': '<f4', 'fortran_order': False, 'shape': (500000000,), }"))
    write("npy", "negative-dim", header("{'descr': '<f4', 'fortran_order': False, 'shape': (-1, 4), }", b"\0" * 16))


def artifact_seeds(build):
    if os.path.exists(os.path.join(HERE, "artifact-pins.txt")):
        os.remove(os.path.join(HERE, "artifact-pins.txt"))
    for path in sorted(glob.glob(os.path.join(build, "test/e2e/*.so"))):
        name = os.path.basename(path)[:-3]
        data = open(path, "rb").read()
        # Bound lazily: what the code calls (libsymrt's symcParallelFor, a CUDA
        # artifact's launches) is never called here.
        lib = ctypes.CDLL(os.path.abspath(path), mode=os.RTLD_LAZY)
        lib.symc_manifest.restype = ctypes.c_char_p
        write("manifest", name, lib.symc_manifest())
        if name in ("axpb", "duplicate-names"):
            write("artifactload", name, data)
            with open(os.path.join(HERE, "artifact-pins.txt"), "a") as pins:
                pins.write(hashlib.sha256(data[:-48]).hexdigest() + "  " + name + "\n")
            write("artifactload", name + "-truncated", data[:len(data) // 2])
            patched = bytearray(data)
            patched[len(data) // 3] ^= 0x40
            write("artifactload", name + "-patched", bytes(patched))
    manifest = open(os.path.join(HERE, "corpus/manifest/axpb"), "rb").read().decode()
    write("manifest", "bad-u-escape", manifest.replace('"prefix"', '"pre\\uZZZZfix"'))
    write("manifest", "deep-nesting", "[" * 100000 + "]" * 100000)
    write("manifest", "out-of-range-workspace", manifest.replace('"workspace_bytes":', '"workspace_bytes":1e300, "x":'))
    write("manifest", "negative-dim", manifest.replace('"shape":[2]', '"shape":[-7]', 1))


def symbol_seeds():
    for pattern in ("test/e2e/*-symbol.json", "examples/*-symbol.json", "test/models/*.json"):
        for path in glob.glob(os.path.join(ROOT, pattern)):
            write("symbolimport", os.path.basename(path), open(path, "rb").read())
    x = '{"op": "null", "name": "x", "attrs": {"__shape__": "(2, 3)"}, "inputs": []}'
    write("symbolimport", "cast-without-dtype",
          '{"nodes": [%s, {"op": "Cast", "name": "c", "inputs": [[0, 0, 0]]}], "arg_nodes": [0], "heads": [[1, 0, 0]]}' % x)
    write("symbolimport", "huge-output-index",
          '{"nodes": [%s, {"op": "relu", "name": "r", "inputs": [[0, 0, 0]]}], "arg_nodes": [0], "heads": [[1, 4294967296, 0]]}' % x)
    write("symbolimport", "deep-nesting", "[" * 5000 + "]" * 5000)
    heads = ", ".join("[%d, 0, 0]" % (i + 1) for i in range(3000))
    relus = ", ".join('{"op": "relu", "name": "r%d", "inputs": [[0, 0, 0]]}' % i for i in range(3000))
    write("symbolimport", "many-heads", '{"nodes": [%s, %s], "arg_nodes": [0], "heads": [%s]}' % (x, relus, heads))


def capi_seeds():
    # takeShapes: count, then (name, ndim, dims...) per shape; then flags.
    write("capi", "data-2x4", bytes([0, 0, 2, 2, 4, 0, 0, 2, 5, 4, 0x0A]))
    write("capi", "negative-dim", bytes([0, 0, 2, 255]) + struct.pack("<q", -3) + bytes([4, 0, 0, 2, 1, 4, 0]))
    write("capi", "overflowing-dims", bytes([1, 0, 3, 255]) + struct.pack("<q", 1 << 62) + bytes([255])
          + struct.pack("<q", 1 << 62) + bytes([4, 4, 1, 3, 0, 0, 0, 0x08]))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    args = parser.parse_args()
    params_seeds()
    npy_seeds()
    artifact_seeds(args.build)
    symbol_seeds()
    capi_seeds()


if __name__ == "__main__":
    main()
