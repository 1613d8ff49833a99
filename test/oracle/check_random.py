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
* RNN's dropout between layers (p > 0, several layers, in training): each
  element of a layer's output that the next layer reads is 0 or x / (1 - p),
  about p of them 0, the last layer's output and the states untouched (seen
  through a second layer made the identity); the same seed draws the same
  masks, in the forward and in the backward that recomputes it, whose
  gradient matches central differences under that seed. It runs through the
  symc Python package (SYMC_LIBRARY names libsymrt).
"""
import os
import subprocess
import sys

import mxnet as mx
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import symc  # noqa: E402

from cases import check_parser, run_checks
from check_finite_differences import central_difference
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


def rnn_step(name, work, tools, **rnn):
    """An RNN over data (T, N, I) compiled --train, bound by the symc package."""
    sym = S.RNN(V("data"), V("params"), V("state"), name="y", **rnn)
    base = os.path.join(work, name)
    sym.save(base + "-symbol.json")
    result = subprocess.run(compile_command(tools, base, {"data": (6, 4, 5)}) + ["--train"], capture_output=True,
                            text=True)
    if result.returncode != 0:
        raise RuntimeError("symc compile failed: " + result.stderr.strip())
    return symc.load(base + ".so").simple_bind(symc.cpu(), grad_req="write")


def check_rnn_dropout_masks(work, tools):
    """Layer 1 made the identity of tanh: its output is tanh(mask * y0), so
    the mask of each element is atanh(y1) / y0, with y0 layer 0's output."""
    p, hidden = 0.5, 5
    exe = rnn_step("rnn_dropout_masks", work, tools, mode="rnn_tanh", state_size=hidden, num_layers=2, p=p,
                   state_outputs=True)
    rng = np.random.default_rng(3)
    args = {a: np.asarray(exe.arg_dict[a]) for a in ("data", "params", "state")}
    for a in args.values():
        a[...] = rng.uniform(-1, 1, a.shape)
    args["state"][1] = 0
    layer0 = (5 + hidden) * hidden  # i2h and h2h weights of layer 0
    weights1 = args["params"][layer0:layer0 + 2 * hidden * hidden]
    weights1[...] = np.concatenate([np.eye(hidden).ravel(), np.zeros(hidden * hidden)])  # i2h = I, h2h = 0
    args["params"][-2 * hidden:] = 0  # layer 1's biases
    inference = [o.asnumpy() for o in exe.forward(is_train=False)]
    symc.random.seed(11)
    trained = [o.asnumpy() for o in exe.forward(is_train=True)]
    y0 = np.arctanh(inference[0])
    readable = np.abs(y0) > 0.05  # where the ratio is well conditioned
    masks = (np.arctanh(trained[0]) / y0)[readable]
    dropped = np.isclose(masks, 0, atol=1e-3)
    expect(np.all(dropped | np.isclose(masks, 1 / (1 - p), rtol=1e-3)), "a mask element is neither 0 nor 1/(1-p)")
    expect(abs(dropped.mean() - p) < 0.1, "dropped %.3f of layer 0's output, p = %g" % (dropped.mean(), p))
    expect(np.allclose(trained[1][0], inference[1][0], rtol=1e-6), "dropout changed layer 0's final state")
    symc.random.seed(11)
    expect(np.array_equal(exe.forward(is_train=True)[0].asnumpy(), trained[0]), "the same seed drew other masks")
    symc.random.seed(12)
    expect(not np.array_equal(exe.forward(is_train=True)[0].asnumpy(), trained[0]), "another seed drew the same masks")


def check_rnn_dropout_gradient(work, tools):
    """The backward recomputes the forward's masks: its gradient is the
    derivative of the training forward under the same seed."""
    exe = rnn_step("rnn_dropout_gradient", work, tools, mode="gru", state_size=3, num_layers=3, p=0.4,
                   bidirectional=True)
    rng = np.random.default_rng(4)
    args = {a: np.asarray(exe.arg_dict[a]) for a in ("data", "params", "state")}
    for a in args.values():
        a[...] = rng.uniform(-1, 1, a.shape)
    head = rng.uniform(-1, 1, exe.outputs[0].shape).astype("float32")

    def objective():
        symc.random.seed(5)
        return float(np.sum(head.astype(np.float64) * exe.forward(is_train=True)[0].asnumpy()))

    objective()
    exe.backward([symc.nd.array(head)])
    for name in ("data", "params"):
        x, analytic = args[name], exe.grad_dict[name].asnumpy()
        for i in zip(*[rng.integers(0, n, 40) for n in x.shape]):
            numeric = central_difference(objective, lambda: np.asarray(exe.arg_dict[name]), i)
            expect(abs(analytic[i] - numeric) <= 1e-2 * (1 + abs(numeric)),
                   "gradient of %s%s: %g, central differences %g" % (name, i, analytic[i], numeric))


CHECKS = (("dropout", check_dropout), ("dropout_axes", check_dropout_axes), ("dropout_float16", check_dropout_float16),
          ("dropout_identity", check_dropout_identity), ("rrelu", check_rrelu), ("seeds", check_seeds),
          ("rnn_dropout_masks", check_rnn_dropout_masks), ("rnn_dropout_gradient", check_rnn_dropout_gradient))


def main():
    tools = check_parser(__doc__).parse_args()
    return run_checks("random ops", [(name, lambda work, c=c: c(work, tools)) for name, c in CHECKS], tools)


if __name__ == "__main__":
    sys.exit(main())
