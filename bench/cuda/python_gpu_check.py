#!/usr/bin/env python3
"""The Python package's gpu path on a GPU machine: LeNet's CUDA artifact bound
with `symc.gpu(0)` and its CPU twin with `symc.cpu()` (the e2e pairs
lenet-train-cuda.so / lenet-train-ref.so), the same inputs set through
`arg_dict[...][:] = numpy`, a training step on both, and every output,
gradient and weight read back with `asnumpy()` and compared. Run by
bench/cuda/gpu_bench.sh; exits non-zero on a mismatch.

  PYTHONPATH=python SYMC_LIBRARY=build/lib/libsymrt.so bench/cuda/python_gpu_check.py build/test/e2e
"""
import sys

import numpy as np

import symc


def main():
    folder = sys.argv[1]
    cpu = symc.load(folder + "/lenet-train-ref.so").simple_bind(symc.cpu())
    gpu = symc.load(folder + "/lenet-train-cuda.so").simple_bind(symc.gpu(0))
    rng = np.random.default_rng(0)
    for name, array in cpu.arg_dict.items():
        values = rng.uniform(-1, 1, array.shape).astype(np.float32)
        if name == "softmax_label":
            values = rng.integers(0, 10, array.shape).astype(np.float32)
        array[:] = values
        gpu.arg_dict[name][:] = values
    worst = 0.0
    for exe in (cpu, gpu):
        exe.forward(is_train=True)
        exe.backward()
    pairs = [("output", cpu.outputs[0], gpu.outputs[0])]
    pairs += [("gradient of " + n, cpu.grad_dict[n], gpu.grad_dict[n]) for n in cpu.grad_dict if n != "softmax_label"]
    for what, want, got in pairs:
        want, got = want.asnumpy(), got.asnumpy()
        error = float(np.linalg.norm(got - want) / max(np.linalg.norm(want), 1e-30))
        worst = max(worst, error)
        if not error <= 1e-4:
            print("python gpu check: %s differs (relative L2 %.3g)" % (what, error))
            return 1
    print("python gpu check: LeNet training step on symc.gpu(0) matches symc.cpu() "
          "(%d arrays, worst relative L2 %.2g)" % (len(pairs), worst))
    return 0


if __name__ == "__main__":
    sys.exit(main())
