#!/usr/bin/env python3
"""Checks of the ops that draw random numbers: Dropout and rrelu.

MXNet's generator is not reproduced, so the MXNet oracle cannot compare their
training outputs; what MXNet defines is checked instead, on a training step
run by `symc-run --backward`:
* Dropout (float32 and float16): every output element is 0 or x / (1 - p); about p of them are
  dropped; with `axes` the mask is shared along those axes; the gradient is
  the head gradient times the mask of that same forward; outside training
  (and with p = 0) it is the identity.
* rrelu: x where x > 0, else x times a slope in [lower_bound, upper_bound)
  whose mean is near the middle; the gradient uses the forward's slopes.
* The same --seed gives the same draws, another seed other draws.
"""
import os
import subprocess
import sys

import mxnet as mx
import numpy as np

from cases import check_parser, run_checks
from check_forward import compile_command

S, V = mx.sym, mx.sym.Variable


class Step:
    """One compiled symbol, run by symc-run on random inputs."""

    def __init__(self, name, sym, shape, work, tools, train=True, dtype="float32"):
        self.base, self.tools, self.shape = os.path.join(work, name), tools, shape
        sym.save(self.base + "-symbol.json")
        command = compile_command(tools, self.base, {"data": shape}) + (["--train"] if train else [])
        result = subprocess.run(command, capture_output=True, text=True)
        if result.returncode != 0:
            raise RuntimeError("symc compile failed: " + result.stderr.strip())
        rng = np.random.default_rng(1)
        # Away from 0, so that out / x recovers the mask.
        self.x = (rng.uniform(0.5, 1.5, shape) * rng.choice([-1, 1], shape)).astype(dtype)
        self.head = rng.uniform(-1, 1, shape).astype(dtype)
        np.save(self.base + ".x.npy", self.x)
        np.save(self.base + ".head.npy", self.head)

    def run(self, seed=None, backward=True):
        """The output of a forward (training when `backward`) and the data
        gradient of the backward after it."""
        out = self.base + ".out.npy"
        command = [self.tools.symc_run, self.base + ".so", "--input", "data=%s.x.npy" % self.base, "--output", out]
        if seed is not None:
            command += ["--seed", str(seed)]
        grads = self.base + ".grads.params"
        if backward:
            command += ["--backward", "--head-grad", "y_output=%s.head.npy" % self.base, "--grads-out", grads]
        result = subprocess.run(command, capture_output=True, text=True)
        if result.returncode != 0:
            raise RuntimeError("symc-run failed: " + result.stderr.strip())
        return np.load(out), mx.nd.load(grads)["data"].asnumpy() if backward else None


def expect(condition, message):
    if not condition:
        raise RuntimeError(message)


def check_dropout(work, tools):
    p = 0.3
    step = Step("dropout", S.Dropout(V("data"), p=p, name="y"), (64, 300), work, tools)
    out, grad = step.run()
    mask = out / step.x
    kept = np.isclose(mask, 1 / (1 - p), rtol=1e-6)
    expect(np.all(kept | (mask == 0)), "outputs other than 0 and x / (1 - p)")
    dropped = 1 - kept.mean()
    expect(abs(dropped - p) < 0.02, "dropped %.4f of the elements, expected about %g" % (dropped, p))
    expect(np.allclose(grad, step.head * mask, rtol=1e-6, atol=0), "the gradient is not head * mask")


def check_dropout_axes(work, tools):
    step = Step("dropout_axes", S.Dropout(V("data"), p=0.5, axes=(1,), name="y"), (16, 50, 40), work, tools)
    out, grad = step.run()
    mask = out / step.x
    expect(np.all(mask == mask[:, :1, :]), "the mask differs along a shared axis")
    dropped = (mask[:, 0, :] == 0).mean()
    expect(abs(dropped - 0.5) < 0.06, "dropped %.4f of the masks, expected about 0.5" % dropped)
    expect(np.allclose(grad, step.head * mask, rtol=1e-6, atol=0), "the gradient is not head * mask")


def check_dropout_float16(work, tools):
    """The draws are made in float32 whatever the data type."""
    step = Step("dropout_float16", S.Dropout(V("data", dtype="float16"), p=0.3, name="y"), (64, 300), work, tools,
                dtype="float16")
    out, grad = step.run()
    mask = out.astype("float32") / step.x.astype("float32")
    kept = np.isclose(mask, 1 / 0.7, rtol=2e-3)
    expect(np.all(kept | (mask == 0)), "outputs other than 0 and x / (1 - p)")
    expect(abs((1 - kept.mean()) - 0.3) < 0.02, "dropped %.4f of the elements" % (1 - kept.mean()))
    expect(np.allclose(grad.astype("float32"), step.head.astype("float32") * (mask != 0) / 0.7, rtol=3e-3, atol=1e-3),
           "the gradient is not head * mask")


def check_dropout_identity(work, tools):
    inference = Step("dropout_inference", S.Dropout(V("data"), p=0.3, name="y"), (8, 20), work, tools, train=False)
    out, _ = inference.run(backward=False)
    expect(np.array_equal(out, inference.x), "inference Dropout is not the identity")
    zero = Step("dropout_p0", S.Dropout(V("data"), p=0.0, name="y"), (8, 20), work, tools)
    out, grad = zero.run()
    expect(np.array_equal(out, zero.x) and np.array_equal(grad, zero.head), "Dropout with p = 0 is not the identity")


def check_rrelu(work, tools):
    lower, upper = 0.1, 0.4
    step = Step("rrelu", S.LeakyReLU(V("data"), act_type="rrelu", lower_bound=lower, upper_bound=upper, name="y"),
                (32, 500), work, tools)
    out, grad = step.run()
    negative = step.x < 0
    expect(np.array_equal(out[~negative], step.x[~negative]), "positive inputs are not passed through")
    slopes = out[negative] / step.x[negative]
    expect(slopes.min() >= lower - 1e-6 and slopes.max() < upper + 1e-6,
           "slopes outside [%g, %g): %g..%g" % (lower, upper, slopes.min(), slopes.max()))
    expect(abs(slopes.mean() - (lower + upper) / 2) < 0.01, "mean slope %.4f" % slopes.mean())
    expected = np.where(negative, step.head * out / step.x, step.head)
    expect(np.allclose(grad, expected, rtol=1e-5, atol=1e-6), "the gradient does not use the forward's slopes")


def check_seeds(work, tools):
    step = Step("dropout_seeds", S.Dropout(V("data"), p=0.5, name="y"), (16, 64), work, tools)
    first, _ = step.run(seed=7)
    again, _ = step.run(seed=7)
    other, _ = step.run(seed=8)
    expect(np.array_equal(first, again), "the same seed drew other numbers")
    expect(not np.array_equal(first, other), "another seed drew the same numbers")


CHECKS = (("dropout", check_dropout), ("dropout_axes", check_dropout_axes), ("dropout_float16", check_dropout_float16),
          ("dropout_identity", check_dropout_identity), ("rrelu", check_rrelu), ("seeds", check_seeds))


def main():
    tools = check_parser(__doc__).parse_args()
    return run_checks("random ops", [(name, lambda work, c=c: c(work, tools)) for name, c in CHECKS], tools)


if __name__ == "__main__":
    sys.exit(main())
