#!/usr/bin/env python3
"""symc compile times on the model zoo: inference at batch 1 and 16, and the
training step (--train) at batch 16, each model as MXNet's gluon model zoo
exports it. Prints a table with symc's own phase times (the MLIR lowering,
with its slowest passes, and LLVM's optimization and code generation) and
writes it to --out.

  bench/compile_time.py --symc build/bin/symc [--only resnet50]

Compile time is CPU-bound: run it on a quiet machine (check `uptime`); the
table records the load average before and after.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "test", "oracle"))
from models import mlp, zoo  # noqa: E402
from run_bench import cpu_name  # noqa: E402

MODELS = ["resnet18_v1", "resnet50_v1", "mobilenet1.0", "mobilenetv2_1.0", "inceptionv3", "vgg11", "mlp"]
# (title, batch, --train)
CASES = [("inference, batch 1", 1, False), ("inference, batch 16", 16, False), ("training step, batch 16", 16, True)]


def export(name, work):
    path = os.path.join(work, name + "-symbol.json")
    sym, shapes = (mlp(), {"data": (1, 784)}) if name == "mlp" else zoo(name)
    sym.save(path)
    return path, shapes["data"]


def compile_once(symc, path, dims, train, work):
    shape = "--shape=data=" + ",".join(map(str, dims))
    cmd = [symc, "compile", path, shape, "-o", os.path.join(work, "model.so")] + (["--train"] if train else [])
    start = time.perf_counter()
    run = subprocess.run(cmd, check=True, capture_output=True, text=True)
    wall = time.perf_counter() - start
    phases = dict(re.findall(r"\[symc\] (lower to LLVM dialect|optimize and emit object code): (\d+) ms", run.stderr))
    slowest = re.search(r"slowest passes: ([^)]*)\)", run.stderr)
    return wall, int(phases.get("lower to LLVM dialect", 0)) / 1e3, \
        int(phases.get("optimize and emit object code", 0)) / 1e3, slowest.group(1) if slowest else ""


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--symc", required=True)
    parser.add_argument("--only", help="only the models whose name contains this")
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "compile_time.md"))
    args = parser.parse_args()
    load_before = os.getloadavg()[0]
    lines = ["# symc compile time", "",
             "Machine: %s, %d cores. `bench/compile_time.py --symc %s`; load average %.2f before the run, "
             "%%s after." % (cpu_name(), os.cpu_count(), args.symc, load_before), "",
             "| model | compile | total s | MLIR lowering s | LLVM s | slowest MLIR passes |",
             "|---|---|---:|---:|---:|---|"]
    with tempfile.TemporaryDirectory() as work:
        for name in MODELS:
            if args.only and args.only not in name:
                continue
            path, dims = export(name, work)
            for title, batch, train in CASES:
                wall, mlir_s, llvm_s, slowest = compile_once(args.symc, path, (batch,) + tuple(dims[1:]), train,
                                                             work)
                lines.append("| %s | %s | %.1f | %.1f | %.1f | %s |" % (name, title, wall, mlir_s, llvm_s, slowest))
                print(lines[-1], flush=True)
    lines[2] = lines[2] % ("%.2f" % os.getloadavg()[0])
    with open(args.out, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
