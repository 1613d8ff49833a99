#!/usr/bin/env python3
"""Compiles every oracle op case and model for the CPU and for CUDA, as the
pairs NAME-ref.so / NAME-cuda.so that the GPU test Cuda.OraclePairs compares
on a GPU (test/e2e/CudaTest.cpp: the same random inputs on both, every output,
gradient and aux state), since the CPU path matches MXNet 1.9.1 on them
(check_forward.py, check_backward.py). Differentiable cases without
integer inputs compile with --train. A case the CUDA target refuses (an op lowered to the CPU kernel
library, a run-time check) is listed in refused.txt with symc's reason.

  test/oracle/make_cuda_pairs.py --symc build/bin/symc --out DIR [--only SUBSTR] [--archive FILE.tar.xz]

Needs CUDA's libdevice (/usr/local/cuda), not a GPU. --archive packs the pairs
for the GPU machine (bench/cuda/gpu_bench.sh unpacks and runs them).
"""
import argparse
import concurrent.futures
import os
import subprocess
import sys
import tarfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cases import cases  # noqa: E402
from check_backward import GPU_ONLY_GRADIENTS, INDEX_INPUTS, MODELS, is_differentiable  # noqa: E402
from models import zoo  # noqa: E402

# Zoo models at small shapes, forward only (the training models are MODELS).
ZOO = (("zoo_resnet50_v1", "resnet50_v1", (2, 3, 96, 96)), ("zoo_mobilenetv2_1.0", "mobilenetv2_1.0", (2, 3, 96, 96)),
       ("zoo_inceptionv3", "inceptionv3", (1, 3, 299, 299)), ("zoo_vgg11", "vgg11", (1, 3, 64, 64)),
       ("zoo_squeezenet1.1", "squeezenet1.1", (1, 3, 224, 224)), ("zoo_densenet121", "densenet121", (1, 3, 224, 224)))


def trains(name):
    """Whether a case is checked in a training step: differentiable, and
    with no integer inputs (whose gradient MXNet does not write)."""
    return is_differentiable(name) and name not in GPU_ONLY_GRADIENTS and name not in INDEX_INPUTS


def all_cases():
    """(name, symbol, shapes, train) of every op case, training model and zoo model."""
    for name, sym, shapes in cases():
        yield name, sym, shapes, trains(name)
    for name, sym, shapes in MODELS:
        yield name, sym, shapes, trains(name)
    for name, model, shape in ZOO:
        yield name, zoo(model)[0], {"data": shape}, False


def compile_pair(symc, out, name, symbol_file, shapes, train):
    """Compiles both artifacts; the CUDA target's refusal (first line), or None."""
    common = [symc, "compile", symbol_file, "-q"] + ["--shape=%s=%s" % (k, ",".join(map(str, v)))
                                                    for k, v in shapes.items()] + (["--train"] if train else [])
    cuda = subprocess.run(common + ["--target", "cuda:sm_90", "-o", os.path.join(out, name + "-cuda.so")],
                          capture_output=True, text=True)
    if cuda.returncode != 0:
        return (cuda.stderr.strip().splitlines() or ["exit %d" % cuda.returncode])[0]
    ref = subprocess.run(common + ["--cpu", "x86-64-v3", "--no-monitor", "-o", os.path.join(out, name + "-ref.so")],
                         capture_output=True, text=True)
    if ref.returncode != 0:
        os.remove(os.path.join(out, name + "-cuda.so"))
        return "CPU: " + (ref.stderr.strip().splitlines() or [""])[0]
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--symc", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--only", help="only the cases whose name contains this")
    parser.add_argument("--archive", help="also pack the pairs into this .tar.xz")
    parser.add_argument("--jobs", type=int, default=os.cpu_count())
    args = parser.parse_args()
    symbols = os.path.join(args.out, "symbols")
    os.makedirs(symbols, exist_ok=True)
    work = []
    for name, sym, shapes, train in all_cases():
        if args.only and args.only not in name:
            continue
        symbol_file = os.path.join(symbols, name + "-symbol.json")
        sym.save(symbol_file)
        work.append((name, symbol_file, shapes, train))
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        refusals = list(pool.map(lambda w: compile_pair(args.symc, args.out, *w), work))
    refused = [(w[0], why) for w, why in zip(work, refusals) if why]
    with open(os.path.join(args.out, "refused.txt"), "w") as f:
        f.writelines("%s: %s\n" % r for r in refused)
    print("%d pairs, %d refused by the cuda target (refused.txt)" % (len(work) - len(refused), len(refused)))
    if args.archive:
        with tarfile.open(args.archive, "w:xz") as tar:
            for entry in sorted(os.listdir(args.out)):
                if entry.endswith(".so") or entry == "refused.txt":
                    tar.add(os.path.join(args.out, entry), arcname=entry)
        print("%s: %.1f MB" % (args.archive, os.path.getsize(args.archive) / 1e6))


if __name__ == "__main__":
    main()
