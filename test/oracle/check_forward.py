#!/usr/bin/env python3
"""Differential check of symc's compiled forward against MXNet 1.9.1.

Every op case (cases.py) and every whole model (models.py) runs in MXNet with
random inputs and parameters (simple_bind, forward(is_train=False)). The symbol
and its arrays are saved by MXNet, compiled with `symc compile`, run with
`symc-run --params ... --compare`, and each output must agree elementwise
within rtol/atol (1e-5 unless a case states why MXNet's own algorithm differs).
Each op case also runs under MXNet's monitor with monitor_all and under
`symc-run --monitor '' --monitor-all --compare-monitor`: the same names in the
same order, each array's RMS (mx.monitor.Monitor's statistic) and each array
itself (saved from MXNet's monitor) within the case's tolerance.
"""
import ctypes
import functools
import os
import subprocess
import sys

# MXNet's reference CPU kernels, which shared/mxnet-semantics.md documents. The
# pip build's oneDNN kernels deviate in places (SoftmaxOutput on 4-d data
# normalizes over the last axis only instead of all non-batch axes).
os.environ.setdefault("MXNET_MKLDNN_ENABLED", "0")
os.environ.setdefault("MXNET_STORAGE_FALLBACK_LOG_VERBOSE", "0")

import mxnet as mx
import numpy as np

import rnn_reference
from cases import GPU_ONLY, cases, check_parser, needs_onednn, rerun_with_onednn, run_checks
from models import models

# Cases whose inputs must be positive (logarithms, roots, fractional powers).
POSITIVE = {"unary_log", "unary_sqrt", "scalars", "scalar_ops", "unary_rsqrt", "unary_reciprocal", "unary_log2",
            "unary_log10", "unary_log1p"}  # (log1p's derivative grows without bound near -1)

# Looser tolerances where MXNet (oneDNN) sums in a different order or uses a
# different transcendental implementation.
TOLERANCE = {
    "conv2d": 1e-4, "conv2d_batched": 1e-4, "conv2d_full": 1e-4, "conv1d": 1e-4, "conv_depthwise": 1e-4,
    "conv_taps_dilated": 1e-4, "conv1d_taps": 1e-4, "pad_written_by_gemm": 1e-4, "pad_written_by_pool": 1e-4,
    "fc": 1e-4, "fc_noflatten": 1e-4, "fc_nobias": 1e-4, "lrn": 1e-4, "leaky_gelu": 1e-4,
    "lenet": 1e-4, "batchnorm": 1e-4, "act_softrelu": 1e-4,
}
MODEL_TOLERANCE = 1e-3  # deep nets accumulate the per-layer differences

# Cases symc rejects by design, each with its clear compile-time error.
UNSUPPORTED = {
    "cast_uint8": "unsigned",
}

# Models compiled once with a dynamic batch dim and run at several sizes: with
# chunks of 2 rows, batch 3 runs both the chunk loop and the single-row loop.
DYNAMIC_MODELS = ("mlp", "lenet", "resnet18_v1", "mobilenet1.0", "lstm_lm")
DYNAMIC_CHUNK = 2
DYNAMIC_BATCHES = (1, 3)
# The LSTM's Reshape merges the batch and time dims into one.
DYNAMIC_REJECTED = {"dynamic_lstm_lm": "combines elements across the dynamic batch dim"}

# Outputs MXNet leaves uninitialized in inference, so nothing to compare.
UNCOMPARED_OUTPUTS = {"leaky_rrelu": {1}}  # the rrelu mask
# Monitored arrays that are not MXNet's values: topk (value) and sort write
# their hidden indices as int64 into the int32 output the type inference
# gives them (TopKImpl<..., index_t>), so MXNet's bytes are not indices.
UNCOMPARED_MONITOR = {case: ("tk_output1",) for case in ("topk_value", "topk_flat", "topk_all")}
UNCOMPARED_MONITOR.update({case: ("so_output1",) for case in ("sort", "sort_last", "sort_axis0", "sort_flat")})
# topk (both) leaves the output the graph does not use unwritten (its
# request is kNullOp).
UNCOMPARED_MONITOR.update({"topk_both": ("tk_output1",), "topk_both_indices": ("tk_output0",)})


def random_arrays(names, arrays, positive, rng):
    values = {}
    for name in names:
        arr = arrays[name]
        if name.endswith(("moving_var", "running_var")):  # the symbol API's and Gluon's
            data = rng.uniform(0.5, 1.5, arr.shape)
        elif name.endswith("weight") and len(arr.shape) >= 2:
            # Variance-preserving scale, so deep nets stay in float32's range.
            fan_in = int(np.prod(arr.shape[1:]))
            data = rng.uniform(-1.0, 1.0, arr.shape) * np.sqrt(3.0 / fan_in)
        elif name.endswith("label"):
            data = rng.integers(0, 5, arr.shape)  # class indices (regression takes them as values)
        elif positive:
            data = rng.uniform(0.5, 2.0, arr.shape)
        elif np.issubdtype(arr.dtype, np.integer):
            data = rng.integers(0, 5, arr.shape)
        else:
            data = rng.uniform(-1.0, 1.0, arr.shape)
        values[name] = mx.nd.array(data, dtype=arr.dtype)
    return values


def embedding_indices(sym, values):
    """Embedding inputs are row indices: integers in range."""
    for node in sym.get_internals():
        if node.attr("input_dim") and node.name + "_weight" in values:
            data = node.get_children()[0].name
            if data in values:
                rows = int(node.attr("input_dim"))
                shape = values[data].shape
                values[data] = mx.nd.array(np.random.default_rng(1).integers(0, rows, shape))


def mxnet_forward(sym, shapes, positive, rng):
    exe = sym.simple_bind(mx.cpu(), grad_req="null", **shapes)
    args = random_arrays(sym.list_arguments(), exe.arg_dict, positive, rng)
    aux = random_arrays(sym.list_auxiliary_states(), exe.aux_dict, False, rng)
    embedding_indices(sym, args)
    exe.copy_params_from(args, aux)
    outputs = [o.asnumpy() for o in exe.forward(is_train=False)]
    return args, aux, outputs


def rnn_inputs(sym, shapes, rng):
    """The RNN head's random arguments, and the arrays its inputs get (MXNet
    computes them: the cases derive sequence lengths from a random input)."""
    arg_shapes, _, _ = sym.infer_shape(**shapes)
    known = dict(zip(sym.list_arguments(), arg_shapes))
    inputs = sym.get_children()
    exe = inputs.simple_bind(mx.cpu(), grad_req="null", **{a: known[a] for a in inputs.list_arguments()})
    args = random_arrays(inputs.list_arguments(), exe.arg_dict, False, rng)
    exe.copy_params_from(args)
    return args, [o.asnumpy() for o in exe.forward(is_train=False)]


def reference_rnn(sym, arrays):
    """rnn_reference on the RNN head's inputs: data, parameters, state, then
    state_cell (lstm) and sequence_length (use_sequence_length)."""
    attrs = rnn_reference.parse_attrs(sym.attr_dict()[sym.name])
    data, params, state, *extra = arrays
    cell = extra.pop(0) if attrs["mode"] == "lstm" else None
    lengths = extra.pop(0) if attrs.get("use_sequence_length") else None
    return [o.astype(np.float32) for o in rnn_reference.rnn(data, params, state, cell, lengths, **attrs)]


def check_rnn_reference(sym, shapes, args, outputs):
    """rnn_reference against MXNet's CPU RNN on the same arguments."""
    inputs = sym.get_children()
    exe = inputs.simple_bind(mx.cpu(), grad_req="null", **{a: args[a].shape for a in inputs.list_arguments()})
    exe.copy_params_from({a: args[a] for a in inputs.list_arguments()})
    expected = reference_rnn(sym, [o.asnumpy() for o in exe.forward(is_train=False)])
    for i, (got, want) in enumerate(zip(outputs, expected)):
        if not np.allclose(got, want, rtol=1e-4, atol=1e-5):
            raise RuntimeError("rnn_reference's output %d differs from MXNet's by %g" % (i, np.abs(got - want).max()))


def rms(array):
    return float(np.sqrt(np.mean(np.square(array.astype(np.float64))))) if array.size else 0.0


def mxnet_monitor(sym, shapes, args, aux):
    """(name, RMS) of every array MXNet's monitor_all callback reports, and
    the arrays by name."""
    exe = sym.simple_bind(mx.cpu(), grad_req="null", **shapes)
    exe.copy_params_from(args, aux)
    seen, arrays = [], {}

    def callback(name, handle):
        array = mx.nd.NDArray(ctypes.cast(handle, mx.base.NDArrayHandle), writable=False)
        seen.append((name.decode(), rms(array.asnumpy())))
        arrays[name.decode()] = array.copy()

    exe.set_monitor_callback(callback, monitor_all=True)
    exe.forward(is_train=False)
    mx.nd.waitall()
    return seen, arrays


def uncompared(case, name):
    """MXNet's oneDNN max pooling workspace (symc has no such output), masks
    (inference leaves MXNet's uninitialized) and UNCOMPARED_MONITOR."""
    return name.endswith("_workspace") or name.endswith("_mask") or name in UNCOMPARED_MONITOR.get(case, ())


def check_divergence_is_named(artifact, base, arrays, tools):
    """--compare-monitor names the first node whose output differs."""
    first = next(n for n in arrays if n.endswith("_output"))
    wrong = dict(arrays, **{first: arrays[first] + 1})
    mx.nd.save(base + ".wrong.params", wrong)
    result = subprocess.run([tools.symc_run, artifact, "--params", base + ".params", "--compare-monitor",
                             base + ".wrong.params"], capture_output=True, text=True)
    if result.returncode != 2 or "first divergence: " + first not in result.stdout:
        raise RuntimeError("--compare-monitor did not name %s: %s" % (first, result.stdout + result.stderr))


def check_monitor(case, stdout, expected, tolerance):
    """symc-run's "monitor NAME RMS" lines against MXNet's (name, RMS)."""
    got = [(line.split()[1], float(line.split()[2])) for line in stdout.splitlines() if line.startswith("monitor ")]
    expected = [(n, v) for n, v in expected if not n.endswith("_workspace")]
    names, expected_names = [n for n, _ in got], [n for n, _ in expected]
    if names != expected_names:
        raise RuntimeError("monitor names %s, MXNet's %s" % (names, expected_names))
    for (name, value), (_, reference) in zip(got, expected):
        if not uncompared(case, name) and abs(value - reference) > 10 * tolerance * (1 + abs(reference)):
            raise RuntimeError("monitor %s: RMS %g, MXNet's %g" % (name, value, reference))


def compile_command(tools, base, shapes):
    cmd = [tools.symc, "compile", base + "-symbol.json", "-q", "-o", base + ".so", "--cpu=" + tools.cpu]
    return cmd + ["--shape=%s=%s" % (k, ",".join(map(str, v))) for k, v in shapes.items()]


def check_rejected(name, sym, shapes, work, tools):
    base = os.path.join(work, name)
    sym.save(base + "-symbol.json")
    result = subprocess.run(compile_command(tools, base, shapes), capture_output=True, text=True)
    if result.returncode == 0 or UNSUPPORTED[name] not in result.stderr:
        raise RuntimeError("expected a clear '%s' error, got: %s" % (UNSUPPORTED[name], result.stderr))


def require_finite(name, outputs):
    """A model's reference must be finite: the comparison takes NaN as equal
    to NaN, so a draw that made MXNet's outputs NaN would check nothing."""
    for i, out in enumerate(outputs):
        bad = int(np.size(out) - np.isfinite(out).sum())
        if bad:
            raise RuntimeError("%s: %d of MXNet's output %d elements are not finite: the check would compare "
                               "nothing there" % (name, bad, i))


def save_arrays(base, args, aux):
    saved = {"arg:" + k: v for k, v in args.items()}
    saved.update({"aux:" + k: v for k, v in aux.items()})
    mx.nd.save(base + ".params", saved)


def compile_symbol(tools, base, shapes, extra=()):
    result = subprocess.run(compile_command(tools, base, shapes) + list(extra),
                            capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError("symc compile failed: " + result.stderr.strip())


def compare_outputs(name, artifact, base, outputs, tools, tolerance, monitored=None):
    """symc-run on `artifact` with `base`.params against MXNet's `outputs`
    (and its monitor's arrays, when given)."""
    run_cmd = [tools.symc_run, artifact, "--params", base + ".params",
               "--rtol", str(tolerance), "--atol", str(tolerance)]
    if monitored is not None:
        names, arrays = monitored
        mx.nd.save(base + ".monitor.params", {n: a for n, a in arrays.items() if not uncompared(name, n)})
        run_cmd += ["--monitor", "", "--monitor-all", "--compare-monitor", base + ".monitor.params"]
    for i, out in enumerate(outputs):
        if i in UNCOMPARED_OUTPUTS.get(name, ()):
            run_cmd += ["--compare", "-"]
            continue
        ref = "%s.out%d.npy" % (base, i)
        np.save(ref, out)
        run_cmd += ["--compare", ref]
    result = subprocess.run(run_cmd, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError((result.stdout + result.stderr).strip())
    if monitored is not None:
        check_monitor(name, result.stdout, names, tolerance)


def run_case(name, sym, shapes, work, tools, rng, tolerance):
    if name in UNSUPPORTED:
        return check_rejected(name, sym, shapes, work, tools)
    if name in GPU_ONLY:  # MXNet's CPU refuses these options: the reference
        args, arrays = rnn_inputs(sym, shapes, rng)
        aux, outputs = {}, reference_rnn(sym, arrays)
    else:
        args, aux, outputs = mxnet_forward(sym, shapes, name in POSITIVE, rng)
    if name.startswith("model_"):
        require_finite(name, outputs)
    if name.startswith("rnn_") and name not in GPU_ONLY:
        check_rnn_reference(sym, shapes, args, outputs)
    base = os.path.join(work, name)
    sym.save(base + "-symbol.json")
    save_arrays(base, args, aux)
    compile_symbol(tools, base, shapes)
    monitored = None if name.startswith("model_") or name in GPU_ONLY else mxnet_monitor(sym, shapes, args, aux)
    compare_outputs(name, base + ".so", base, outputs, tools, tolerance, monitored)
    if name == "fc":
        check_divergence_is_named(base + ".so", base, monitored[1], tools)


def channels_last_cases():
    """NHWC convolutions and poolings (MXNet's GPU layout: data (N, H, W,
    C), a convolution's weight (F, kh, kw, C / G)), each with the reference
    MXNet's CPU computes for it: the same op channels-first between
    transposes."""
    S, d, w = mx.sym, mx.sym.var("data"), mx.sym.var("c_weight")
    for name, attrs, (n, h, wd, c) in (
            ("nhwc_pointwise", dict(kernel=(1, 1), num_filter=64), (2, 5, 7, 16)),
            ("nhwc_depthwise", dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1), num_filter=32, num_group=32),
             (1, 9, 8, 32)),
            ("nhwc_winograd", dict(kernel=(3, 3), pad=(1, 1), num_filter=64, no_bias=True), (1, 16, 16, 32)),
            ("nhwc_narrow", dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1), num_filter=24), (1, 10, 10, 8)),
            ("nhwc_strips_completed", dict(kernel=(1, 1), num_filter=40), (2, 5, 3, 16)),
            ("nhwc_grouped", dict(kernel=(3, 3), pad=(1, 1), num_filter=6, num_group=3), (2, 6, 5, 9))):
        channels_first = S.Convolution(S.transpose(d, axes=(0, 3, 1, 2)), S.transpose(w, axes=(0, 3, 1, 2)),
                                       name="c", **attrs)
        k = attrs["kernel"]
        shapes = {"data": (n, h, wd, c), "c_weight": (attrs["num_filter"], k[0], k[1], c // attrs.get("num_group", 1))}
        yield (name, S.Convolution(d, w, layout="NHWC", name="c", **attrs),
               S.transpose(channels_first, axes=(0, 2, 3, 1)), shapes)
    for name, attrs in (
            ("nhwc_maxpool", dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1))),
            ("nhwc_avgpool_full", dict(kernel=(3, 3), stride=(2, 2), pool_type="avg", pooling_convention="full",
                                       count_include_pad=False)),
            ("nhwc_sumpool", dict(kernel=(2, 2), stride=(1, 1), pad=(1, 0), pool_type="sum")),
            ("nhwc_global_avgpool", dict(kernel=(1, 1), global_pool=True, pool_type="avg"))):
        channels_first = S.Pooling(S.transpose(d, axes=(0, 3, 1, 2)), name="p", **attrs)
        yield (name, S.Pooling(d, layout="NHWC", name="p", **attrs), S.transpose(channels_first, axes=(0, 2, 3, 1)),
               {"data": (2, 8, 9, 16)})


def run_channels_last(name, sym, shapes, work, tools, rng, tolerance, reference):
    """`sym` compiled and run against MXNet's forward of `reference`."""
    args, aux, outputs = mxnet_forward(reference, shapes, False, rng)
    base = os.path.join(work, name)
    sym.save(base + "-symbol.json")
    save_arrays(base, args, aux)
    compile_symbol(tools, base, {"data": shapes["data"]})
    compare_outputs(name, base + ".so", base, outputs, tools, tolerance)


def run_dynamic_batch(name, sym, shapes, work, tools, rng, tolerance):
    """Compiled once with the batch dim as '?', checked at several batch sizes."""
    base = os.path.join(work, name)
    sym.save(base + "-symbol.json")
    dynamic = {k: ("?",) + tuple(v[1:]) for k, v in shapes.items()}
    if name in DYNAMIC_REJECTED:
        result = subprocess.run(compile_command(tools, base, dynamic), capture_output=True, text=True)
        if result.returncode == 0 or DYNAMIC_REJECTED[name] not in result.stderr:
            raise RuntimeError("expected a clear '%s' error, got: %s" % (DYNAMIC_REJECTED[name], result.stderr))
        return
    compile_symbol(tools, base, dynamic, ["--batch-chunk=%d" % DYNAMIC_CHUNK])
    for batch in DYNAMIC_BATCHES:
        sized = {k: (batch,) + tuple(v[1:]) for k, v in shapes.items()}
        args, aux, outputs = mxnet_forward(sym, sized, False, rng)
        require_finite(name, outputs)
        run_base = "%s.b%d" % (base, batch)
        save_arrays(run_base, args, aux)
        compare_outputs(name, base + ".so", run_base, outputs, tools, tolerance)


def main():
    parser = check_parser(__doc__)
    parser.add_argument("--no-models", action="store_true")
    tools = parser.parse_args()

    rng = np.random.default_rng(0)
    work_items = [(n, s, shp, TOLERANCE.get(n, 1e-5), run_case) for n, s, shp in cases()]
    for n, s, ref, shp in channels_last_cases():
        work_items.append((n, s, shp, 1e-4, functools.partial(run_channels_last, reference=ref)))
    if not tools.no_models:
        for n, s, shp in models():
            work_items.append(("model_" + n, s, shp, MODEL_TOLERANCE, run_case))
            if n in DYNAMIC_MODELS:
                work_items.append(("dynamic_" + n, s, shp, MODEL_TOLERANCE, run_dynamic_batch))
    return run_checks("oracle forward", [
        (name, lambda work, n=name: rerun_with_onednn(__file__, n, tools, "--no-models")) if needs_onednn(name) else
        (name, lambda work, n=name, s=sym, shp=shapes, t=tolerance, c=check: c(n, s, shp, work, tools, rng, t))
        for name, sym, shapes, tolerance, check in work_items], tools)


if __name__ == "__main__":
    sys.exit(main())
