#!/usr/bin/env python3
"""Compiles the CUDA artifacts bench/cuda/gpu_bench.sh runs, on a machine with
symc and MXNet (no GPU needed), into one folder that travels to the GPU machine
with libsymrt, libsymrt_cuda, symc-run and the e2e tests:

  bench/cuda/make_artifacts.py --symc build/bin/symc --out .devcarry [--arch sm_90]

Writes lenet1 (LeNet at batch 1, checked against MXNet's output), r50-b1 and
r50-b32 (Gluon's resnet50_v1, inference), r50-train-b32 (a SoftmaxOutput head
added, --train), mlp-train (examples/mlp-symbol.json at batch 64, --train),
gemm (a 4096x4096x4096 FullyConnected without bias) and ew (relu(2x + 1)
over 8192x8192), each as NAME-cuda.so; then bin/, lib/ and e2e/ with the
built runtime, symc-run, the e2e test binary and its artifacts.
"""
import argparse
import os
import shutil
import subprocess
import sys

import mxnet as mx

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "test", "oracle"))
from models import zoo  # noqa: E402


def symbols(work):
    """name -> (symbol file, shapes, extra symc flags)."""
    resnet = zoo("resnet50_v1")[0]
    resnet.save(os.path.join(work, "r50-symbol.json"))
    mx.sym.SoftmaxOutput(resnet, name="softmax").save(os.path.join(work, "r50-train-symbol.json"))
    data = mx.sym.Variable("data")
    mx.sym.FullyConnected(data, num_hidden=4096, no_bias=True, name="fc").save(os.path.join(work, "gemm-symbol.json"))
    mx.sym.relu(data * 2 + 1, name="relu").save(os.path.join(work, "ew-symbol.json"))
    lenet = os.path.join(ROOT, "examples", "lenet-symbol.json")
    mlp = os.path.join(ROOT, "examples", "mlp-symbol.json")
    at = lambda name: os.path.join(work, name + "-symbol.json")  # noqa: E731
    return {
        "lenet1": (lenet, "data=1,1,28,28", []),
        "r50-b1": (at("r50"), "data=1,3,224,224", []),
        "r50-b32": (at("r50"), "data=32,3,224,224", []),
        "r50-train-b32": (at("r50-train"), "data=32,3,224,224", ["--train"]),
        "mlp-train": (mlp, "data=64,784", ["--train"]),
        "gemm": (at("gemm"), "data=4096,4096", []),
        "ew": (at("ew"), "data=8192,8192", []),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--symc", required=True)
    parser.add_argument("--out", default=".devcarry")
    parser.add_argument("--arch", default="sm_90")
    parser.add_argument("--build", default=os.path.join(ROOT, "build"), help="the build whose runtime travels")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    work = os.path.join(args.out, "symbols")
    os.makedirs(work, exist_ok=True)
    for name, (symbol, shape, flags) in symbols(work).items():
        out = os.path.join(args.out, name + "-cuda.so")
        subprocess.run([args.symc, "compile", symbol, "--shape", shape, "--target", "cuda:" + args.arch, "-q", "-o",
                        out] + flags, check=True)
        print("%-16s %6.1f MB" % (name, os.path.getsize(out) / 1e6))
    shutil.rmtree(work)
    for folder, names in (("bin", ["symc-run", "symc-e2e-tests"]), ("lib", None), ("e2e", None)):
        source = os.path.join(args.build, {"e2e": "test/e2e"}.get(folder, folder))
        target = os.path.join(args.out, folder)
        os.makedirs(target, exist_ok=True)
        for entry in names or sorted(os.listdir(source)):
            path = os.path.join(source, entry)
            wanted = folder != "e2e" or entry.endswith("-cuda.so") or entry.endswith("-ref.so")
            if wanted and os.path.isfile(path) and not os.path.islink(path):
                shutil.copy2(path, target)
        if folder == "lib":  # the soname links the binaries load
            for entry in os.listdir(source):
                if os.path.islink(os.path.join(source, entry)):
                    link = os.path.join(target, entry)
                    if not os.path.lexists(link):
                        os.symlink(os.readlink(os.path.join(source, entry)), link)


if __name__ == "__main__":
    main()
