#!/usr/bin/env python3
"""Differential check of symc's import and shape inference against MXNet 1.9.1.

Each case builds a symbol with MXNet itself, saves it as JSON, and compares
MXNet's list_arguments / list_auxiliary_states / list_outputs and inferred
shapes and dtypes with what `symc compile --emit=interface` reports.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import mxnet as mx
import numpy as np

from cases import cases


def shared_models(models_dir):
    specs = {"save_000800.json": {"data": (8, 100)},
             "clojure_imclassification_test-symbol.json": {"data": (8, 784)},
             "test_mkldnn_test_mkldnn_model_model1.json": {"data": (1, 3, 224, 224)}}
    for fname, shapes in specs.items():
        path = os.path.join(models_dir, fname)
        if os.path.exists(path):
            yield "model:" + fname, mx.sym.load(path), shapes, path


def mxnet_interface(sym, shapes):
    arg_shapes, out_shapes, aux_shapes = sym.infer_shape(**shapes)
    # simple_bind without a type_dict: every argument without a __dtype__
    # attribute is float32.
    attrs = sym.attr_dict()
    arg_types, out_types, aux_types = sym.infer_type(
        **{k: "float32" for k in sym.list_arguments() if "__dtype__" not in attrs.get(k, {})})
    def entries(names, shps, types):
        return [{"name": n, "shape": list(s), "dtype": np.dtype(t).name}
                for n, s, t in zip(names, shps, types)]
    return {"arguments": entries(sym.list_arguments(), arg_shapes, arg_types),
            "aux_states": entries(sym.list_auxiliary_states(), aux_shapes, aux_types),
            "outputs": entries(sym.list_outputs(), out_shapes, out_types)}


def symc_interface(symc, path, shapes):
    cmd = [symc, "compile", path, "--emit=interface"]
    for name, shape in shapes.items():
        cmd.append("--shape=%s=%s" % (name, ",".join(str(x) for x in shape)))
    result = subprocess.run(cmd, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError("symc failed: " + result.stderr.strip())
    return json.loads(result.stdout)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--symc", required=True)
    parser.add_argument("--models", default=os.path.join(os.path.dirname(__file__), "..", "models"))
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args()

    passed, failed = 0, []
    with tempfile.TemporaryDirectory() as tmp:
        work = [(n, s, shp, None) for n, s, shp in cases()] + list(shared_models(args.models))
        for name, sym, shapes, path in work:
            if path is None:
                path = os.path.join(tmp, name + "-symbol.json")
                sym.save(path)
            try:
                expected = mxnet_interface(sym, shapes)
                got = symc_interface(args.symc, path, shapes)
                if got != expected:
                    raise RuntimeError("mismatch\n  mxnet: %s\n  symc:  %s" % (expected, got))
                passed += 1
                if args.verbose:
                    print("PASS", name)
            except Exception as e:  # report every case, then fail
                failed.append(name)
                print("FAIL %s: %s" % (name, e))
    print("oracle: %d passed, %d failed" % (passed, len(failed)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
