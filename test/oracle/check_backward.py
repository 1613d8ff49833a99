#!/usr/bin/env python3
"""Differential check of symc's compiled backward against MXNet 1.9.1.

For every op case whose ops have gradient rules, under each grad_req (write,
add, null): MXNet binds with that grad_req, gradient buffers pre-filled with
random values, runs forward(is_train=True) and backward with random head
gradients. symc compiles the symbol with --train and runs the same through
`symc-run --backward --grads-in ... --grads-out ...`. write: the gradients
equal MXNet's; add: they equal the initial values plus MXNet's written
gradients (the rule of shared/mxnet-semantics.md section 1.5; MXNet 1.9.1's
own kAddTo deviates from it for some ops: elemwise_add adds the initial value
of its second input twice, mean divides it by the count); null: symc writes
none.

Each op case also runs a training step under MXNet's monitor with
monitor_all and under `symc-run --backward --monitor '' --monitor-all
--debug-str`: the same callback names in the same order, forward and
backward nodes (MXNet's backward graph: `<node>_backward`, `sum_grad`,
`_head_grad_<i>_id`, ...), each array's RMS, and debug_str's text with the
backward nodes (all but its "Total N MB allocated" line).

Each op case also runs with every output behind a BlockGrad (`<case>
zero heads`), so that only zeros nodes reach its ops: debug_str's backward
graph equals MXNet's, where an op's FGradient makes zero gradient nodes
(MakeNonlossGradNode's check) and where it builds its backward nodes anyway
(MakeGradNode, legacy ops), and from there upstream.
"""
import ctypes
import os
import subprocess
import sys

from check_forward import POSITIVE, compile_command, embedding_indices, random_arrays, rms, save_arrays

import mxnet as mx
import numpy as np

from cases import COMPARISONS, GPU_ONLY, MATH, ROUNDING, cases, check_parser, needs_onednn, rerun_with_onednn, run_checks
from models import lenet, lstm_lm, mlp, zoo

# The cases whose ops all have gradient rules so far (dialects/Sym/IR/Gradients.cpp).
DIFFERENTIABLE = (
    "fc", "fc_nobias", "fc_noflatten", "conv2d", "conv2d_batched", "conv1d", "pool_max_valid",
    "pool_max_full", "pool_avg_valid", "pool_avg_full", "pool_sum_valid", "pool_sum_full", "pool_global",
    "pool_avg_nopad", "pool_max_channels_last", "pool_max_channels_last_full", "act_relu", "unary_relu", "softmaxoutput", "softmaxoutput_multi",
    "softmaxoutput_prob", "act_sigmoid", "act_tanh", "act_softrelu", "act_softsign",
    "concat", "flatten", "transpose", "transpose_rev", "expand_dims", "expand_dims_neg", "swapaxes",
    "identity", "blockgrad", "make_loss", "softmax", "log_softmax", "elemwise_add", "elemwise_sub",
    "elemwise_mul", "elemwise_div", "python_plus", "broadcast_add", "broadcast_sub", "broadcast_mul",
    "broadcast_div", "scalars", "scalar_ops", "add_n", "ElementWiseSum", "unary_exp", "unary_log",
    "unary_sqrt", "unary_square", "unary_negative", "unary_sin", "unary_cos", "unary_tanh",
    "unary_sigmoid", "sum_all", "sum_axis", "mean_all", "mean_axis", "dot", "dot_ta", "dot_tb",
    "batch_dot", "batch_dot_t", "shared_input", "cast_roundtrip", "batchnorm", "batchnorm_meanvar",
    "conv2d_full", "conv_depthwise", "conv_depthwise_taps", "conv_depthwise_strided", "conv_stem",
    "conv_pointwise_s2", "conv_strided_dilated", "conv_wide_pad", "conv_grouped_strided", "conv3d_strided",
    "conv_taps_dilated", "conv1d_taps", "conv_winograd_f2", "conv_winograd_f4", "conv_winograd_f4_ragged",
    "conv_winograd_channels_last", "conv_pointwise_small_map", "conv_stem_taps", "conv_s2_taps",
    "conv_strided_dilated_taps", "conv_pointwise_s2_taps", "concat_axis0", "cast_float16", "cast_float64", "cast_int32", "sum_keep",
    "sum_exclude", "sum_exclude_keep", "sum_neg", "mean_keep", "mean_exclude", "mean_exclude_keep", "mean_neg",
    "multi_head", "lenet", "zeros_backward", "ones", "lstm_like_state", "slice_axis", "slice_axis_none",
    "split", "split_squeeze", "split_one", "embedding", "maximum", "minimum", "broadcast_maximum",
    "broadcast_minimum", "unary_abs", "clip", "MakeLoss", "softmaxactivation", "LinearRegressionOutput",
    "LinearRegressionOutput_1d", "LogisticRegressionOutput", "LogisticRegressionOutput_1d",
    "MAERegressionOutput", "MAERegressionOutput_1d", "leaky_leaky", "leaky_elu", "leaky_selu", "leaky_gelu",
    "leaky_prelu", "lrn", "upsampling", "upsampling_multi", "pool_1d", "pool_1d_avg", "pool_3d_max", "pool_3d_avg",
    "dot_nd", "dot_vec", "dot_nd_ta", "dot_nd_tb", "dot_vec_mat", "batch_dot_4d", "softmaxoutput_4d",
    "softmaxoutput_prob_batch", "softmaxoutput_preserve", "softmaxoutput_4d_valid", "cast_int64",
    "softmax_length", "MakeLoss_valid", "upsampling_bilinear",
    "upsampling_bilinear_s3", "zeros_like", "ones_like", "python_compare", "maximum_scalar", "minimum_scalar",
    "where", "where_rows", "adaptive_avg_pool", "adaptive_avg_pool_global", "adaptive_avg_pool_square",
    "pad_constant", "pad_edge", "pad_reflect", "pad_reflect_3d", "bilinear_resize", "bilinear_resize_centers",
    "bilinear_resize_scale", "bilinear_resize_odd", "bilinear_resize_like", "bilinear_resize_to_even_down",
    "bilinear_resize_to_odd_up", "deconv", "deconv_grouped", "deconv_target", "deconv1d", "layernorm",
    "layernorm_axis1", "layernorm_meanvar", "selfatt", "slice", "slice_step", "slice_none", "stack", "stack_last",
    "broadcast_axis", "broadcast_to", "sequence_mask", "sequence_mask_axis1", "arange_like", "arange_like_axis",
    "tile", "tile_lead", "tile_short", "repeat", "repeat_flat", "reverse", "squeeze", "squeeze_axis",
    "arange", "arange_stop_none", "slice_like", "slice_like_all", "l2norm_instance", "l2norm_channel",
    "l2norm_spatial", "box_nms", "box_nms_center", "box_nms_force", "box_decode", "box_decode_corner",
    "roi_align", "roi_align_adaptive", "roi_align_ps", "argsort", "argsort_axis0", "argsort_flat",
    "gather_nd_rows", "gather_nd_grad", "argmax", "argmax_keep", "argmax_flat", "argmin", "topk", "topk_value",
    "topk_both", "topk_both_indices", "topk_mask", "topk_flat", "topk_all", "sort_last", "sort_axis0", "sort_flat", "pick",
    "pick_wrap", "pick_keep", "take", "take_wrap", "take_last", "one_hot", "one_hot_values", "broadcast_like",
    "broadcast_like_axes", "rnn_lstm1", "rnn_lstm_bi", "rnn_gru_bi", "rnn_gru_states", "rnn_tanh", "rnn_relu",
    "rnn_param_concat",
    "sequence_last", "sequence_last_length", "sequence_last_axis1", "sequence_reverse", "sequence_reverse_length",
    "norm", "norm_l1_axis", "norm_axes_keep", "instancenorm", "instancenorm_3d", "crop", "crop_like_center",
    "roi_pooling", "roi_pooling_coarse", "multibox_prior", "multibox_prior_clip", "multibox_detection",
    "multibox_detection_force", "multibox_target", "multibox_target_mining", "box_encode",
) + tuple("unary_" + op for op in MATH + ROUNDING) + tuple(
    kind + op for op in COMPARISONS for kind in ("elemwise_", "broadcast_")) + tuple(op + "_scalar" for op in COMPARISONS)
# Dropout and rrelu draw from another generator than MXNet's: check_random.py
# checks what MXNet defines of them instead.
# Whole models whose training step is checked: every parameter's gradient.
MODELS = (("model_mlp", mlp(), {"data": (64, 784)}), ("model_lenet", lenet(), {"data": (2, 1, 28, 28)}),
          ("model_resnet18_v1", zoo("resnet18_v1")[0], {"data": (2, 3, 64, 64)}),
          ("model_mobilenet1.0", zoo("mobilenet1.0")[0], {"data": (4, 3, 128, 128)}),
          ("model_lstm_lm",) + lstm_lm())
# Integer inputs: Embedding indices have no gradient (MXNet refuses to write one),
# softmax lengths a zero one: grad_req null.
# MXNet's MultiBoxTarget leaves its label's gradient unwritten (whatever the
# buffer held), symc writes zeros: the labels' source gets grad_req null.
INDEX_INPUTS = {"embedding": ("data",), "model_lstm_lm": ("data",), "softmax_length": ("length",),
                "sequence_mask": ("length",), "sequence_mask_axis1": ("length",), "multibox_target": ("gt",),
                "multibox_target_mining": ("gt",)}
REQS = ("write", "add", "null")
TOLERANCE = 1e-4
# Whole models sum over many more terms, in an order that depends on threads.
MODEL_TOLERANCE = 1e-3


# Gradients MXNet 1.9.1 computes with cuDNN only (its CPU RNN does not
# train an LSTM with a projection): check_finite_differences checks them.
GPU_ONLY_GRADIENTS = ("rnn_lstm_proj",) + GPU_ONLY


def is_differentiable(name):
    return name in DIFFERENTIABLE or name in GPU_ONLY_GRADIENTS or name.startswith("reshape")


def mxnet_backward(sym, shapes, inputs, aux, heads, indices, float64=False):
    """MXNet's written gradients, and its aux states after backward; with
    `float64`, of every input cast to float64 (returned as float32)."""
    reqs = {a: "null" if a in indices else "write" for a in sym.list_arguments()}
    types = {i: "float64" for i in sym.list_inputs()} if float64 else None
    exe = sym.simple_bind(mx.cpu(), grad_req=reqs, type_dict=types, **shapes)
    exe.copy_params_from(inputs, aux)  # cast to the bound arrays' types
    exe.forward(is_train=True)
    exe.backward([mx.nd.array(h, dtype="float64" if float64 else None) for h in heads])
    return ({k: v.asnumpy().astype("float32") for k, v in exe.grad_dict.items() if v is not None},
            {k: v.asnumpy().astype("float32") for k, v in exe.aux_dict.items()})


# Deep BatchNorm+relu stacks amplify float32 rounding through relu masks that
# flip near 0. MobileNet's 27 such layers make MXNet's own float32 gradients
# differ from its float64 ones by 3e-2 to 1e-1 (relative L2) with random
# weights, mostly from its float32 BatchNorm statistics; symc sums those in
# float64 and lands within 2e-3 to 2e-2 of float64 MXNet. (Its blocks match
# float32 MXNet to 1e-6 on their own.) So these whole models are compared
# with MXNet computing in float64, by relative L2 error.
RELATIVE_L2 = {"model_mobilenet1.0": 5e-2, "model_resnet18_v1": 5e-2}


# Where symc's monitor callbacks are not MXNet's (debug_str is): oneDNN's max
# pooling has a workspace output (opaque indices symc has no counterpart
# for) whose zero gradient its backward node reads.
MONITOR_DEVIATIONS = ("pool_max_valid", "pool_max_full", "pool_1d", "pool_3d_max", "pool_max_channels_last",
                      "pool_max_channels_last_full", "conv_winograd_channels_last", "lenet", "model_lenet")
# MXNet 1.9.1 allocates without bound (bad_alloc, or the OOM killer) in a
# monitored backward of its legacy (OperatorProperty) ops SliceChannel,
# SwapAxis, MakeLoss, Pad, SequenceMask, SequenceLast, SequenceReverse,
# L2Normalization, InstanceNorm, Crop, ROIPooling and the MultiBox ops: no
# oracle there.
MXNET_MONITOR_FAILS = ("split", "split_squeeze", "split_one", "swapaxes", "MakeLoss", "MakeLoss_valid",
                       "pad_constant", "pad_edge", "pad_reflect", "pad_reflect_3d", "sequence_mask",
                       "sequence_mask_axis1", "l2norm_instance", "l2norm_channel", "l2norm_spatial",
                       "sequence_last", "sequence_last_length", "sequence_last_axis1", "sequence_reverse",
                       "sequence_reverse_length", "instancenorm", "instancenorm_3d", "crop", "crop_like_center", "roi_pooling",
                       "roi_pooling_coarse", "multibox_prior", "multibox_prior_clip", "multibox_detection",
                       "multibox_detection_force", "multibox_target", "multibox_target_mining")
# Arrays MXNet's monitor reports without having written them (the gradients
# of softmax's length and of Embedding's indices): their RMS is left uncompared.
UNWRITTEN = {"softmax_length": ("sm_backward_output1",), "embedding": ("emb_backward_output0",),
             "arange_like_axis": ("add_backward_output1",), "arange": ("add_backward_output1",),
             "arange_stop_none": ("mul_backward_output1",),
             # The class ids' and image indices' gradients, which floor's zero
             # gradient leaves unread.
             "box_nms": ("boxes_backward_output0",), "box_nms_force": ("boxes_backward_output0",),
             "roi_align": ("rois_built_backward_output0",), "roi_align_adaptive": ("rois_built_backward_output0",),
             "roi_align_ps": ("rois_built_backward_output0",),
             # _backward_take's second output, the indices' gradient, which
             # MXNet leaves unwritten.
             "take": ("tk_backward_output1",), "take_wrap": ("tk_backward_output1",),
             "take_last": ("tk_backward_output1",)}
# The whole models whose training step is monitored too.
MONITORED_MODELS = ("model_mlp", "model_lenet")


def mxnet_training_monitor(sym, shapes, reqs, inputs, aux, heads):
    """(name, RMS) of every array MXNet's monitor_all callback reports in a
    training step (forward and backward), and its debug_str."""
    exe = sym.simple_bind(mx.cpu(), grad_req=reqs, **shapes)
    exe.copy_params_from(inputs, aux)
    seen = []

    def callback(name, handle):
        array = mx.nd.NDArray(ctypes.cast(handle, mx.base.NDArrayHandle), writable=False)
        seen.append((name.decode(), rms(array.asnumpy())))

    exe.set_monitor_callback(callback, monitor_all=True)
    exe.forward(is_train=True)
    exe.backward([mx.nd.array(h) for h in heads])
    mx.nd.waitall()
    return seen, exe.debug_str()


def without_total(debug_str):
    return [line for line in debug_str.splitlines() if not line.endswith(" MB allocated")]


def check_training_monitor(name, sym, shapes, reqs, inputs, aux, heads, run, tolerance):
    expected, expected_debug = mxnet_training_monitor(sym, shapes, reqs, inputs, aux, heads)
    result = subprocess.run(run + ["--monitor", "", "--monitor-all", "--debug-str"], capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError("symc-run --backward --monitor failed: " + result.stderr.strip())
    lines = result.stdout.splitlines()
    debug = [line for line in lines if not line.startswith("monitor ")]
    start = debug.index("Symbol Outputs:")
    if without_total("\n".join(debug[start:])) != without_total(expected_debug):
        raise RuntimeError("debug_str:\n%s\nMXNet's:\n%s" % ("\n".join(debug[start:]), expected_debug))
    if name in MONITOR_DEVIATIONS:
        return
    got = [(line.split()[1], float(line.split()[2])) for line in lines if line.startswith("monitor ")]
    if [n for n, _ in got] != [n for n, _ in expected]:
        raise RuntimeError("training monitor names %s, MXNet's %s" % ([n for n, _ in got], [n for n, _ in expected]))
    for (label, value), (_, reference) in zip(got, expected):
        if label not in UNWRITTEN.get(name, ()) and not np.isclose(value, reference, rtol=tolerance, atol=tolerance):
            raise RuntimeError("training monitor %s: RMS %g, MXNet's %g" % (label, value, reference))


def behind_block_grad(sym):
    return mx.sym.Group([mx.sym.BlockGrad(sym[i], name="zero%d" % i) for i in range(len(sym.list_outputs()))])


def check_zero_heads(name, sym, shapes, work, tools):
    """debug_str of the training step of `sym` with its outputs' gradients
    blocked, against MXNet's."""
    sym = behind_block_grad(sym)
    base = os.path.join(work, name + ".zero_heads")
    sym.save(base + "-symbol.json")
    indices = INDEX_INPUTS.get(name, ())
    reqs = sum((["--grad-req", "%s=%s" % (a, "null" if a in indices else "write")] for a in sym.list_arguments()), [])
    result = subprocess.run(compile_command(tools, base, shapes) + ["--train"] + reqs, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError("symc compile --train failed: " + result.stderr.strip())
    result = subprocess.run([tools.symc_run, base + ".so", "--allow-missing", "--backward", "--debug-str"] + reqs,
                            capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError("symc-run --backward --debug-str failed: " + result.stderr.strip())
    debug = result.stdout.splitlines()
    debug = without_total("\n".join(debug[debug.index("Symbol Outputs:"):]))
    exe = sym.simple_bind(mx.cpu(), grad_req={a: "null" if a in indices else "write" for a in sym.list_arguments()},
                         **shapes)
    if debug != without_total(exe.debug_str()):
        raise RuntimeError("debug_str:\n%s\nMXNet's:\n%s" % ("\n".join(debug), exe.debug_str()))


def check_close(what, got, expected, relative_l2=None, tolerance=TOLERANCE):
    if relative_l2 is not None:
        error = np.linalg.norm(got - expected) / max(np.linalg.norm(expected), 1e-12)
        if error > relative_l2:
            raise RuntimeError("%s differs by %g (relative L2)" % (what, error))
    elif not np.allclose(got, expected, rtol=tolerance, atol=tolerance):
        raise RuntimeError("%s differs by %g" % (what, np.abs(got - expected).max()))


def run_case(name, sym, shapes, work, tools, rng):
    base = os.path.join(work, name)
    sym.save(base + "-symbol.json")
    indices = INDEX_INPUTS.get(name, ())
    no_index_grads = sum((["--grad-req", a + "=null"] for a in indices), [])
    result = subprocess.run(compile_command(tools, base, shapes) + ["--train"] + no_index_grads,
                            capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError("symc compile --train failed: " + result.stderr.strip())
    probe = sym.simple_bind(mx.cpu(), grad_req="null", **shapes)
    inputs = random_arrays(sym.list_arguments(), probe.arg_dict, name in POSITIVE, rng)
    aux = random_arrays(sym.list_auxiliary_states(), probe.aux_dict, True, rng)
    embedding_indices(sym, inputs)
    initial = {k: rng.normal(size=v.shape).astype("float32") for k, v in probe.arg_dict.items()}
    heads = [rng.uniform(-1, 1, o.shape).astype("float32") for o in probe.outputs]
    save_arrays(base, inputs, aux)
    mx.nd.save(base + ".init.params", {k: mx.nd.array(v) for k, v in initial.items()})
    run = [tools.symc_run, base + ".so", "--params", base + ".params", "--backward",
           "--grads-in", base + ".init.params"]
    for output, head in zip(sym.list_outputs(), heads):
        np.save("%s.head_%s.npy" % (base, output), head)
        run += ["--head-grad", "%s=%s.head_%s.npy" % (output, base, output)]
    written, updated_aux = mxnet_backward(sym, shapes, inputs, aux, heads, indices, float64=name in RELATIVE_L2)
    if (name in MONITORED_MODELS or not name.startswith("model_")) and name not in MXNET_MONITOR_FAILS:
        write = {a: "null" if a in indices else "write" for a in sym.list_arguments()}
        check_training_monitor(name, sym, shapes, write, inputs, aux, heads,
                               run + sum((["--grad-req", "%s=%s" % kv] for kv in write.items()), []),
                               MODEL_TOLERANCE if name.startswith("model_") else TOLERANCE)
    for req in REQS:
        out = "%s.%s.grads.params" % (base, req)
        reqs = sum((["--grad-req", "%s=%s" % (a, "null" if a in indices else req)]
                    for a in sym.list_arguments()), [])
        result = subprocess.run(run + reqs + ["--grads-out", out], capture_output=True, text=True)
        if result.returncode != 0:
            raise RuntimeError("symc-run --backward (%s) failed: %s" % (req, result.stderr.strip()))
        loaded = mx.nd.load(out)  # a list when nothing was written
        got = {k: v.asnumpy() for k, v in (loaded.items() if isinstance(loaded, dict) else [])}
        for aux_name, value in updated_aux.items():
            check_close("grad_req %s: aux state %s after backward" % (req, aux_name), got.pop("aux:" + aux_name), value,
                        RELATIVE_L2.get(name))
        if req == "null":
            if got:
                raise RuntimeError("grad_req null: symc wrote %s" % sorted(got))
            continue
        for arg in (a for a in sym.list_arguments() if a not in indices):
            expected = written[arg] + (initial[arg] if req == "add" else 0)
            check_close("grad_req %s: gradient of %s" % (req, arg), got[arg], expected, RELATIVE_L2.get(name),
                        MODEL_TOLERANCE if name.startswith("model_") else TOLERANCE)


def main():
    tools = check_parser(__doc__).parse_args()
    rng = np.random.default_rng(0)
    checks = [(name, lambda work, n=name: rerun_with_onednn(__file__, n, tools)) if needs_onednn(name) else
              (name, lambda work, n=name, s=sym, shp=shapes: run_case(n, s, shp, work, tools, rng))
              for name, sym, shapes in cases() if is_differentiable(name) and name not in GPU_ONLY_GRADIENTS]
    checks += [(name + " zero heads", lambda work, n=name, s=sym, shp=shapes: check_zero_heads(n, s, shp, work, tools))
               for name, sym, shapes in cases()
               if is_differentiable(name) and name not in GPU_ONLY_GRADIENTS and not needs_onednn(name)]
    # Each model draws its own inputs, the same whatever op cases precede
    # it: the deep models' float32-vs-float64 distance depends on the draw.
    checks += [(name, lambda work, n=name, s=sym, shp=shapes: run_case(n, s, shp, work, tools,
                                                                      np.random.default_rng(0)))
               for name, sym, shapes in MODELS]
    return run_checks("oracle backward", checks, tools)


if __name__ == "__main__":
    sys.exit(main())
