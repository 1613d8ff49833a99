#!/usr/bin/env python3
"""Finite-difference check of symc's compiled gradients (no MXNet numbers involved).

For every differentiable op case, the artifact compiled with --train is driven
through the symc Python package (SYMC_LIBRARY names libsymrt): the gradient that backward computes for each
float input must match the central difference (f(x+e) - f(x-e)) / 2e of the
objective f = sum(head * output), output from forward(is_train=True), with
e = 1e-3. The dialect's ops run in
float32 here, so the tolerance is rtol = atol = 1e-2 (float32 rounding in f,
divided by 2e). Inputs keep at least 0.1 away from 0, where relu bends and
division blows up; max pooling gets distinct values more than 2e apart, so
that no perturbation changes a window's maximum. Left out: loss heads
(SoftmaxOutput, regression outputs, MakeLoss, make_loss, LeNet's), BlockGrad
and selu, whose gradients MXNet defines otherwise than as the derivative of
the output, float16 casts, whose output is quantized to steps wider than 2e,
float64 outputs (the check reads float32), Embedding, whose indices are not
differentiable, the ops that draw random numbers (check_random.py), and the
convolution cases of 32 and more channels (WIDE_CONVOLUTIONS), whose gradients
check_backward compares with MXNet's.
"""
import json
import os
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import symc  # noqa: E402

from cases import COMPARISONS, ROUNDING, cases, check_parser, run_checks
from check_backward import is_differentiable
from check_forward import POSITIVE, compile_command

NOT_DERIVATIVES = {"softmaxoutput", "softmaxoutput_multi", "softmaxoutput_prob", "softmaxoutput_4d",
                   "softmaxoutput_prob_batch", "softmaxoutput_preserve", "softmaxoutput_4d_valid", "make_loss", "blockgrad",
                   "lenet", "cast_roundtrip", "cast_float16", "MakeLoss", "LinearRegressionOutput",
                   "LinearRegressionOutput_1d", "LogisticRegressionOutput", "LogisticRegressionOutput_1d",
                   "MAERegressionOutput", "MAERegressionOutput_1d", "MakeLoss_valid",
                   # MXNet's selu_grad is lambda * (alpha + out) below 0, not
                   # the derivative lambda * alpha * e^x; symc follows MXNet.
                   "leaky_selu",
                   # box_decode's gradient is zero in MXNet (MakeZeroGradNodes);
                   # NMS jumps where a nudge flips a suppression or the order
                   # (check_backward compares its gradient with MXNet's).
                   "box_decode", "box_decode_corner", "box_nms", "box_nms_center", "box_nms_force",
                   # ROIAlign and ROIPooling give their rois a zero gradient.
                   "roi_align", "roi_align_adaptive", "roi_align_ps", "roi_pooling", "roi_pooling_coarse",
                   # box_encode's and SSD's detection and target ops'
                   # gradients are zero in MXNet (check_backward compares).
                   "box_encode", "multibox_detection", "multibox_detection_force", "multibox_target",
                   "multibox_target_mining",
                   # A nudge of a weight moves every step's pre-activation, and
                   # some cross relu's kink (check_backward compares with MXNet),
                   # or the state clip's (its forward is checked against
                   # rnn_reference; its gradient masks the clipped cells).
                   "rnn_relu", "rnn_lstm_clip",
                   # Max poolings of convolutions' outputs (through relu): a
                   # nudge of the data or a weight moves a whole window, and
                   # changes the maximum of windows whose values are close or
                   # tie at relu's zeros (check_backward compares with MXNet).
                   "pool_max_channels_last", "pool_max_channels_last_full"}
# Piecewise-constant ops (rounding, comparisons, where's condition): their
# gradient is zero by definition, and central differences across a step are not.
PIECEWISE_CONSTANT = {"unary_" + op for op in ROUNDING} | {
    kind + op for op in COMPARISONS for kind in ("elemwise_", "broadcast_")} | {
    op + "_scalar" for op in COMPARISONS} | {"python_compare", "where", "where_rows", "argmax", "argmax_keep",
                                             "argmax_flat", "argmin", "topk", "topk_mask", "one_hot",
                                             "argsort", "argsort_axis0", "argsort_flat"}
# Inputs the cases floor into positions (pick's and take's indices, sequence
# lengths): their gradient is zero by definition, and a nudge across an
# integer is a step.
POSITION_INPUTS = ("index", "indices", "length")
# Outputs of other dtypes than the float32 this check reads.
OTHER_DTYPES = {"cast_float64", "cast_int64", "ones", "one_hot_values"}
# Integer inputs: their gradient is refused (Embedding's indices) or zero;
# the MXNet oracle checks these ops' other gradients.
INTEGER_INPUTS = {"embedding", "softmax_length", "sequence_mask", "sequence_mask_axis1"}
# Cases sized for the convolution kernels of 32 and more channels (Winograd,
# packed filters): a central difference per element would take tens of
# thousands of forwards, and F(4x4, 3x3)'s float32 rounding over that many
# outputs exceeds the tolerance times 2e. check_backward compares their
# gradients with MXNet's.
WIDE_CONVOLUTIONS = {"conv_winograd_f2", "conv_winograd_f4", "conv_winograd_f4_ragged", "conv_winograd_channels_last",
                     "conv_pointwise_small_map"}
# Outputs whose head gradient the op's backward ignores, as MXNet's does:
# their heads are zero here, so that they do not enter the objective.
# BatchNorm's mean and var, LayerNorm's mean and std.
IGNORED_HEADS = {"batchnorm_meanvar": (1, 2), "layernorm_meanvar": (1, 2), "multi_head": (2, 3)}
EPSILON = 1e-3
TOLERANCE = 1e-2


def central_difference(objective, view, i, epsilon=EPSILON):
    """(f(x + e) - f(x - e)) / 2e for element i of the array x that
    `objective` reads, written through `view()`: a numpy view fetched again
    for each write, as the runtime's contract asks (fetching the memory
    counts as writing it, so that weights it prepared are prepared again)."""
    saved = view()[i]
    view()[i] = saved + epsilon
    up = objective()
    view()[i] = saved - epsilon
    down = objective()
    view()[i] = saved
    return (up - down) / (2 * epsilon)


def check_case(name, sym, shapes, work, tools, rng):
    base = os.path.join(work, name)
    sym.save(base + "-symbol.json")
    result = subprocess.run(compile_command(tools, base, shapes) + ["--train"], capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError("symc compile --train failed: " + result.stderr.strip())
    exe = symc.load(base + ".so").simple_bind(symc.cpu(), grad_req="write")
    # numpy views of the executor's arrays: writes go straight to what forward reads.
    inputs = {a: np.asarray(exe.arg_dict[a]) for a in sym.list_arguments()}
    # Ops that choose by comparing values (max pooling, sort, topk) get
    # values further apart than the step: no nudge reorders them.
    compares = any(n["op"] in ("sort", "topk") or
                   (n["op"] == "Pooling" and n.get("attrs", {}).get("pool_type", "max") == "max")
                   for n in json.loads(sym.tojson())["nodes"])
    for a, x in inputs.items():
        if compares:
            x[...] = rng.permutation(np.linspace(-1, 1, x.size)).reshape(x.shape)
            continue
        magnitude = rng.uniform(0.5, 2.0, x.shape) if name in POSITIVE else rng.uniform(0.1, 1.0, x.shape)
        x[...] = magnitude if name in POSITIVE else magnitude * rng.choice([-1.0, 1.0], x.shape)
    outputs = [np.asarray(o) for o in exe.outputs]
    heads = [rng.uniform(-1, 1, o.shape).astype("float32") for o in outputs]
    for i in IGNORED_HEADS.get(name, ()):
        heads[i][...] = 0

    def objective():
        exe.forward(is_train=True)  # the forward that backward differentiates
        return sum(float(np.sum(h.astype(np.float64) * o)) for h, o in zip(heads, outputs))

    objective()
    exe.backward(heads)
    for a, x in inputs.items():
        if a in POSITION_INPUTS:
            continue
        analytic = exe.grad_dict[a].asnumpy()
        numeric = np.zeros_like(analytic)
        for i in np.ndindex(x.shape):
            numeric[i] = central_difference(objective, lambda: np.asarray(exe.arg_dict[a]), i)
        if not np.allclose(analytic, numeric, rtol=TOLERANCE, atol=TOLERANCE):
            worst = np.abs(analytic - numeric).max()
            raise RuntimeError("gradient of %s differs from central differences by %g" % (a, worst))


def main():
    parser = check_parser(__doc__, symc_run=False)
    tools = parser.parse_args()
    rng = np.random.default_rng(0)
    return run_checks("finite differences", [
        (name, lambda work, n=name, s=sym, shp=shapes: check_case(n, s, shp, work, tools, rng))
        for name, sym, shapes in cases()
        if is_differentiable(name) and
        name not in NOT_DERIVATIVES | OTHER_DTYPES | INTEGER_INPUTS | PIECEWISE_CONSTANT | WIDE_CONVOLUTIONS],
        tools)


if __name__ == "__main__":
    sys.exit(main())
