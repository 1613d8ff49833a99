"""Op-level MXNet symbols shared by the oracle checks: (name, symbol, input shapes),
and the loop that runs a check over them."""
import argparse
import os
import tempfile

import mxnet as mx

S = mx.sym
V = S.Variable
def case(name, sym, **shapes):
    return name, sym, shapes


def check_parser(description, symc_run=True):
    """The options every check takes: the tools, --only NAME and -v."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--symc", required=True)
    if symc_run:
        parser.add_argument("--symc-run", dest="symc_run", required=True)
    parser.add_argument("--cpu", default="native",
                        help="symc compile --cpu: the ISA whose kernels are checked (the host must run it)")
    parser.add_argument("--only", help="run only the checks whose name contains this")
    parser.add_argument("-v", "--verbose", action="store_true")
    return parser


def rerun_with_onednn(script, name, tools, *extra):
    """Runs check `script` on case `name` in a child process whose MXNet uses
    its oneDNN kernels (MXNET_MKLDNN_ENABLED=1); raises on its failure."""
    import subprocess
    import sys
    command = [sys.executable, os.path.abspath(script), "--symc", tools.symc, "--cpu", tools.cpu, "--only", name, *extra]
    if getattr(tools, "symc_run", None):
        command += ["--symc-run", tools.symc_run]
    result = subprocess.run(command, env=dict(os.environ, MXNET_MKLDNN_ENABLED="1"), capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError("with oneDNN: " + (result.stdout + result.stderr).strip())


# MXNet's reference CPU RNN cannot run: with MXNET_MKLDNN_ENABLED=0 its
# forward checks 3 inputs against an LSTM's 4 and fails, or returns garbage.
# Cases and models with the RNN op run against oneDNN's RNN instead.
def needs_onednn(name):
    return name.startswith(("rnn_", "gluon_rnn_")) and os.environ.get("MXNET_MKLDNN_ENABLED") == "0"


def run_checks(label, checks, tools):
    """Runs each (name, check(work_dir)) whose name contains --only, reports
    every failure, prints the summary and returns the exit status."""
    passed, failed = 0, []
    with tempfile.TemporaryDirectory() as work:
        for name, check in checks:
            if tools.only and tools.only not in name:
                continue
            try:
                check(work)
                passed += 1
                if tools.verbose:
                    print("PASS", name, flush=True)
            except Exception as e:  # report every case, then fail
                failed.append(name)
                print("FAIL %s: %s" % (name, e), flush=True)
    print("%s: %d passed, %d failed" % (label, passed, len(failed)))
    return 1 if failed else 0


MATH = ("rsqrt", "reciprocal", "erf", "log1p", "expm1", "log2", "log10", "tan", "arctan", "sinh", "cosh")
ROUNDING = ("floor", "ceil", "round", "rint", "fix", "trunc")
COMPARISONS = ("greater", "greater_equal", "lesser", "lesser_equal", "equal", "not_equal")


def detection_boxes(d, ids):
    """Rows (id, score, x, y, x + w, y + h) from random (..., 6) data, or
    (score, x, y, w, h) from (..., 5): boxes that overlap, class ids 0-2."""
    part = lambda i: S.slice_axis(d, axis=-1, begin=i, end=i + 1)
    if not ids:
        return S.concat(part(0), part(1), part(2), S.abs(part(3)), S.abs(part(4)), dim=-1, name="boxes")
    x, y = part(2), part(3)
    return S.concat(S.floor(S.abs(part(0)) * 3), part(1), x, y, x + S.abs(part(4)), y + S.abs(part(5)), dim=-1,
                    name="boxes")


def detection_rois(r):
    """Rows (image, x1, y1, x2, y2) of two images' rois up to 32 pixels wide,
    from random (n, 5) data."""
    part = lambda i: S.slice_axis(r, axis=-1, begin=i, end=i + 1)
    x, y = (part(1) + 1) * 10, (part(2) + 1) * 10
    return S.concat(S.floor(S.abs(part(0)) * 1.99), x, y, x + S.abs(part(3)) * 12, y + S.abs(part(4)) * 12, dim=-1,
                    name="rois_built")


def corner_boxes(r, scale):
    """Boxes (x1, y1, x2, y2) of positive size from random (..., 4) data."""
    part = lambda i: S.slice_axis(r, axis=-1, begin=i, end=i + 1)
    x, y = S.abs(part(0)) * scale, S.abs(part(1)) * scale
    return S.concat(x, y, x + S.abs(part(2)) * scale + 0.05, y + S.abs(part(3)) * scale + 0.05, dim=-1)


def ssd_labels(r):
    """SSD labels (class, x1, y1, x2, y2) from random (B, M, 5) data: M - 1
    boxes of classes 0-2, then a row of -1 that ends them."""
    part = lambda i: S.slice_axis(r, axis=-1, begin=i, end=i + 1)
    rows = S.concat(S.floor(S.abs(part(0)) * 3), corner_boxes(S.slice_axis(r, axis=-1, begin=1, end=5), 0.5), dim=-1)
    valid = S.slice_axis(rows, axis=1, begin=0, end=-1)
    end = S.slice_axis(rows, axis=1, begin=-1, end=None) * 0 - 1
    return S.concat(valid, end, dim=1, name="labels")


def box_encode(samples, matches, anchors, refs, means, stds):
    """box_encode of random inputs made valid: matches in [0, M), boxes of
    positive size (x2, y2 past 1, x1, y1 in [0, 1]), stds away from 0. (No
    concat: MXNet's backward graph runs Concat's gradient on zeros, which
    symc's debug_str leaves out.)"""
    m = S.floor(S.abs(matches) * 2.99)
    corners = S.floor(S.arange(0, 4) / 2) * 1.05  # (0, 0, 1.05, 1.05)
    boxes = lambda r: S.broadcast_add(S.abs(r), corners)
    return S.contrib.box_encode(samples, m, boxes(anchors), boxes(refs), means, S.abs(stds) + 0.5, name="be")


# Cases MXNet 1.9.1 runs with cuDNN only (its CPU RNN refuses sequence
# lengths and the state clip): their expected values are rnn_reference's,
# their gradients checked by finite differences.
GPU_ONLY = ("rnn_gru_lengths", "rnn_lstm_lengths_proj", "rnn_lstm_clip")


def cases():
    d = V("data")
    lhs, rhs = V("lhs"), V("rhs")
    yield case("fc", S.FullyConnected(d, num_hidden=7, name="fc"), data=(5, 3, 4))
    yield case("fc_nobias", S.FullyConnected(d, num_hidden=7, no_bias=True, name="fc"), data=(5, 12))
    yield case("fc_noflatten", S.FullyConnected(d, num_hidden=7, flatten=False, name="fc"), data=(5, 3, 4))
    yield case("conv2d", S.Convolution(d, kernel=(3, 3), num_filter=8, name="c"), data=(2, 3, 11, 13))
    yield case("conv2d_full", S.Convolution(d, kernel=(3, 5), stride=(2, 3), pad=(1, 2), dilate=(2, 1),
                                            num_filter=6, num_group=3, no_bias=True, name="c"), data=(2, 6, 17, 19))
    # A batch convolved in groups of images (two per GEMM here).
    yield case("conv2d_batched", S.Convolution(d, kernel=(3, 3), pad=(1, 1), num_filter=5, name="c"),
               data=(6, 2, 40, 40))
    yield case("conv1d", S.Convolution(d, kernel=(3,), stride=(2,), pad=(1,), num_filter=4, name="c"), data=(2, 3, 15))
    # Stride-1 convolutions of wide enough images go by taps over the
    # flattened padded image (no im2col): dilated, 1-d, rows not a multiple
    # of the register tile.
    yield case("conv_taps_dilated", S.Convolution(d, kernel=(3, 5), dilate=(2, 1), pad=(2, 1), num_filter=7,
                                                  name="c"), data=(2, 3, 23, 30))
    yield case("conv1d_taps", S.Convolution(d, kernel=(5,), pad=(2,), num_filter=9, no_bias=True, name="c"),
               data=(3, 4, 37))
    # 3x3 stride-1 convolutions with 32 or more channels go by Winograd, in
    # training too, and so do their data gradients (the flipped weight's
    # transform computed at every step): F(2x2, 3x3) at 12x12, F(4x4, 3x3)
    # at 24x24, filters and channels of different counts.
    yield case("conv_winograd_f2", S.Convolution(d, kernel=(3, 3), pad=(1, 1), num_filter=32, no_bias=True,
                                                 name="c"), data=(2, 32, 12, 12))
    yield case("conv_winograd_f4", S.Convolution(d, kernel=(3, 3), pad=(1, 1), num_filter=64, name="c"),
               data=(1, 32, 24, 24))
    # Four 14x14 images have the tiles for F(4x4, 3x3) over 16x16, the last
    # row and column of tiles half past the map.
    yield case("conv_winograd_f4_ragged", S.Convolution(d, kernel=(3, 3), pad=(1, 1), num_filter=32, no_bias=True,
                                                        name="c"), data=(4, 32, 14, 14))
    # A 1x1 convolution over a small map: its data gradient goes by packed
    # filters as such a forward does, its weight gradient by one GEMM over
    # the batch.
    yield case("conv_pointwise_small_map", S.Convolution(d, kernel=(1, 1), num_filter=32, no_bias=True, name="c"),
               data=(3, 64, 5, 5))
    # Strided data gradients go one stride phase at a time: a ResNet stem, a
    # 1x1 stride-2 (phases no tap reaches), stride and dilation with a
    # common factor, padding beyond the kernel, grouped, 3-d.
    yield case("conv_stem", S.Convolution(d, kernel=(7, 7), stride=(2, 2), pad=(3, 3), num_filter=4, name="c"),
               data=(2, 3, 20, 17))
    yield case("conv_pointwise_s2", S.Convolution(d, kernel=(1, 1), stride=(2, 2), num_filter=5, no_bias=True,
                                                  name="c"), data=(2, 4, 9, 8))
    yield case("conv_strided_dilated", S.Convolution(d, kernel=(3, 3), stride=(2, 4), dilate=(2, 2), pad=(2, 1),
                                                     num_filter=3, name="c"), data=(2, 3, 13, 14))
    # An image of more than 4096 output positions runs its im2col GEMM in
    # blocks of output rows (here 2 blocks of 35), a stem on a large image.
    yield case("conv_row_blocks", S.Convolution(d, kernel=(7, 7), stride=(2, 2), pad=(3, 3), num_filter=3, name="c"),
               data=(1, 2, 140, 140))
    # On wide images, each stride phase's taps read the image's g, padded
    # once, from their own start: a stem, odd widths (phases of unequal
    # sizes), stride with dilation, a 1x1 stride-2.
    yield case("conv_stem_taps", S.Convolution(d, kernel=(7, 7), stride=(2, 2), pad=(3, 3), num_filter=5, name="c"),
               data=(2, 3, 13, 89))
    yield case("conv_s2_taps", S.Convolution(d, kernel=(3, 3), stride=(2, 2), pad=(1, 1), num_filter=6,
                                             no_bias=True, name="c"), data=(2, 4, 9, 67))
    yield case("conv_strided_dilated_taps", S.Convolution(d, kernel=(3, 3), stride=(2, 3), dilate=(2, 3),
                                                          pad=(2, 3), num_filter=4, name="c"), data=(1, 3, 8, 95))
    yield case("conv_pointwise_s2_taps", S.Convolution(d, kernel=(1, 1), stride=(2, 2), num_filter=5, no_bias=True,
                                                       name="c"), data=(2, 4, 5, 71))
    yield case("conv_wide_pad", S.Convolution(d, kernel=(3, 3), pad=(3, 4), num_filter=2, name="c"),
               data=(1, 2, 6, 7))
    yield case("conv_grouped_strided", S.Convolution(d, kernel=(3, 3), stride=(2, 2), pad=(1, 1), num_filter=6,
                                                     num_group=2, name="c"), data=(2, 4, 9, 9))
    yield case("conv3d_strided", S.Convolution(d, kernel=(3, 3, 3), stride=(2, 1, 2), pad=(1, 1, 1),
                                               num_filter=3, name="c"), data=(1, 2, 5, 6, 5))
    yield case("conv_depthwise", S.Convolution(d, kernel=(3, 3), pad=(1, 1), num_filter=8, num_group=8,
                                               no_bias=True, name="dw"), data=(1, 8, 7, 7))
    # Depthwise by taps: channels not a multiple of the register tile, a
    # bias, a batch; a 5x5 window, a dilated one, a 1-d one.
    yield case("conv_depthwise_taps", S.Convolution(d, kernel=(3, 3), pad=(1, 1), num_filter=19, num_group=19,
                                                    name="dw"), data=(2, 19, 9, 10))
    yield case("conv_depthwise_5x5", S.Convolution(d, kernel=(5, 5), pad=(2, 2), num_filter=12, num_group=12,
                                                   no_bias=True, name="dw"), data=(1, 12, 14, 14))
    yield case("conv_depthwise_dilated", S.Convolution(d, kernel=(3, 3), pad=(2, 2), dilate=(2, 2), num_filter=6,
                                                       num_group=6, name="dw"), data=(1, 6, 8, 9))
    yield case("conv_depthwise_strided", S.Convolution(d, kernel=(3, 3), stride=(2, 2), pad=(1, 1), num_filter=12,
                                                       num_group=12, name="dw"), data=(2, 12, 9, 11))
    yield case("conv1d_depthwise", S.Convolution(d, kernel=(3,), pad=(1,), num_filter=5, num_group=5, name="dw"),
               data=(2, 5, 17))
    # Padded images computed in their padding (sym-write-into-padding): a
    # batch's pointwise GEMM tiles, each within an image row, then a
    # depthwise convolution; a max pooling between 3x3 convolutions.
    yield case("pad_written_by_gemm", S.Convolution(S.clip(S.BatchNorm(S.Convolution(
        d, kernel=(1, 1), num_filter=64, no_bias=True, name="pw"), name="bn"), 0, 6), kernel=(3, 3), pad=(1, 1),
        num_filter=64, num_group=64, no_bias=True, name="dw"), data=(2, 16, 14, 14))
    yield case("pad_written_by_pool", S.Convolution(S.Pooling(S.Convolution(
        d, kernel=(3, 3), pad=(1, 1), num_filter=16, name="c0"), kernel=(2, 2), stride=(2, 2), pool_type="max"),
        kernel=(3, 3), pad=(1, 1), num_filter=32, name="c1"), data=(1, 16, 16, 16))
    # Max poolings between convolutions, channels-last in training: their
    # gradient gathered by the residues of the input's positions (relu's
    # zeros tie in a window: the first largest takes its gradient).
    yield case("pool_max_channels_last", S.Convolution(S.Pooling(S.relu(S.Convolution(
        d, kernel=(3, 3), pad=(1, 1), num_filter=16, name="c0")), kernel=(3, 3), stride=(2, 2), pad=(1, 1),
        pool_type="max"), kernel=(3, 3), pad=(1, 1), num_filter=16, name="c1"), data=(2, 16, 11, 13))
    yield case("pool_max_channels_last_full", S.Convolution(S.Pooling(S.relu(S.Convolution(
        d, kernel=(1, 1), num_filter=16, name="c0")), kernel=(3, 2), stride=(2, 1), pad=(0, 1), pool_type="max",
        pooling_convention="full"), kernel=(1, 1), num_filter=16, name="c1"), data=(2, 16, 10, 9))
    # 3x3 convolutions channels-last in training, their weight gradients by
    # Winograd's F(2x2, 3x3) over 13x13 and 7x7 maps (ragged last tiles).
    yield case("conv_winograd_channels_last", S.Convolution(S.Pooling(S.relu(S.Convolution(
        d, kernel=(3, 3), pad=(1, 1), num_filter=32, name="c0")), kernel=(3, 3), stride=(2, 2), pad=(1, 1),
        pool_type="max"), kernel=(3, 3), pad=(1, 1), num_filter=32, name="c1"), data=(4, 32, 13, 13))
    # A classifier written as a 1x1 convolution over 1x1 images.
    yield case("conv_fully_connected", S.Convolution(d, kernel=(1, 1), num_filter=10, name="fc"),
               data=(3, 16, 1, 1))
    # Deconvolution: strided with adj and bias, grouped and dilated, a target
    # shape, 1-d.
    yield case("deconv", S.Deconvolution(d, kernel=(3, 3), stride=(2, 2), pad=(1, 1), adj=(1, 0), num_filter=5,
                                         no_bias=False, name="dc"), data=(2, 4, 5, 6))
    yield case("deconv_grouped", S.Deconvolution(d, kernel=(3, 2), dilate=(2, 1), num_filter=6, num_group=2,
                                                 name="dc"), data=(2, 4, 5, 5))
    yield case("deconv_target", S.Deconvolution(d, kernel=(4, 4), stride=(2, 2), target_shape=(12, 11), num_filter=3,
                                                name="dc"), data=(1, 2, 6, 6))
    yield case("deconv1d", S.Deconvolution(d, kernel=(4,), stride=(3,), pad=(1,), num_filter=3, name="dc"),
               data=(2, 3, 7))
    # A transformer encoder's ops (GluonNLP's BERT): LayerNorm, the fused
    # self-attention products, position ids, masks and the pooler's slice.
    yield case("layernorm", S.LayerNorm(d, V("gamma"), V("beta"), name="ln"), data=(2, 3, 8))
    yield case("layernorm_axis1", S.LayerNorm(d, V("gamma"), V("beta"), axis=1, eps=1e-3, name="ln"), data=(2, 5, 3))
    yield case("layernorm_meanvar", S.LayerNorm(d, V("gamma"), V("beta"), output_mean_var=True, name="ln"),
               data=(4, 6))
    yield case("selfatt", S.contrib.interleaved_matmul_selfatt_valatt(
        d, S.softmax(S.contrib.interleaved_matmul_selfatt_qk(d, heads=2, name="qk"), axis=-1, name="sm"),
        heads=2, name="va"), data=(5, 2, 24))
    yield case("slice", S.slice(d, begin=(0, 1), end=(2, 4), name="s"), data=(3, 5, 2))
    yield case("slice_step", S.slice(d, begin=(None, 0, -1), end=(None, 5, 0), step=(-1, 2, -2), name="s"),
               data=(3, 5, 4))
    yield case("slice_none", S.slice(d, begin=(0, 0, 0), end=(None, 1, None), name="s"), data=(3, 4, 5))
    yield case("stack", S.stack(lhs, rhs, axis=1, name="st"), lhs=(2, 3), rhs=(2, 3))
    yield case("stack_last", S.stack(lhs, rhs, lhs, axis=-1, name="st"), lhs=(2, 3), rhs=(2, 3))
    yield case("broadcast_axis", S.broadcast_axis(d, axis=(0, 2), size=(3, 4), name="b"), data=(1, 2, 1))
    yield case("broadcast_to", S.broadcast_to(d, shape=(3, 0, 4), name="b"), data=(1, 2, 1))
    yield case("sequence_mask", S.SequenceMask(d, V("length", dtype="int32"), use_sequence_length=True, value=-2.0,
                                               name="sm"), data=(6, 3, 2))
    yield case("sequence_mask_axis1", S.SequenceMask(d, V("length", dtype="int32"), use_sequence_length=True, axis=1,
                                                     name="sm"), data=(3, 6, 2))
    # Lengths in [1, steps], computed in the graph (MXNet reads outside the
    # data for a length of 0).
    lengths = lambda steps: S.floor(S.abs(V("length")) * (steps - 0.01), name="len") + 1
    yield case("sequence_last", S.SequenceLast(d, name="sl"), data=(4, 3, 2))
    yield case("sequence_last_length", S.SequenceLast(d, lengths(4), use_sequence_length=True, name="sl"),
               data=(4, 3, 2), length=(3,))
    yield case("sequence_last_axis1", S.SequenceLast(d, lengths(5), use_sequence_length=True, axis=1, name="sl"),
               data=(3, 5, 2), length=(3,))
    yield case("sequence_reverse", S.SequenceReverse(d, name="sr"), data=(4, 3, 2))
    yield case("sequence_reverse_length", S.SequenceReverse(d, lengths(4), use_sequence_length=True, name="sr"),
               data=(4, 3, 2), length=(3,))
    yield case("arange_like", S.contrib.arange_like(d, start=1.5, step=0.5, repeat=2, name="ar") + d, data=(2, 3))
    yield case("arange_like_axis", S.broadcast_add(d, S.contrib.arange_like(d, axis=-1, name="ar"), name="add"),
               data=(2, 3))
    yield case("arange", S.broadcast_add(d, S.arange(start=1, stop=9, step=2.5, repeat=2, name="ar"), name="add"),
               data=(2, 8))
    yield case("arange_stop_none", S.broadcast_mul(d, S.arange(start=4, name="ar"), name="mul"), data=(3, 4))
    yield case("slice_like", S.slice_like(d, V("like"), axes=(0, -1), name="sl"), data=(4, 3, 5), like=(2, 7, 3))
    yield case("slice_like_all", S.slice_like(d, V("like"), name="sl"), data=(4, 3, 5), like=(2, 1, 3))
    yield case("instancenorm", S.InstanceNorm(d, V("gamma"), V("beta"), name="in"), data=(2, 3, 4, 5))
    yield case("instancenorm_3d", S.InstanceNorm(d, V("gamma"), V("beta"), eps=1e-5, name="in"), data=(3, 4, 7))
    yield case("crop", S.Crop(d, h_w=(3, 4), offset=(1, 2), num_args=1, name="cr"), data=(2, 3, 6, 7))
    yield case("crop_like_center", S.Crop(d, V("like"), num_args=2, center_crop=True, name="cr"),
               data=(2, 3, 9, 8), like=(1, 1, 4, 5))
    for mode in ("instance", "channel", "spatial"):
        yield case("l2norm_" + mode, S.L2Normalization(d, mode=mode, name="l2"), data=(2, 3, 4, 5))
    # Detection: boxes built from random data so that they overlap.
    yield case("box_nms", S.contrib.box_nms(detection_boxes(d, ids=True), overlap_thresh=0.3, topk=12,
                                            id_index=0, name="nms"), data=(2, 20, 6))
    yield case("box_nms_center", S.contrib.box_nms(detection_boxes(d, ids=False), overlap_thresh=0.5,
                                                   valid_thresh=0.1, coord_start=1, score_index=0,
                                                   in_format="center", out_format="corner", name="nms"),
               data=(2, 3, 16, 5))
    yield case("box_nms_force", S.contrib.box_nms(detection_boxes(d, ids=True), overlap_thresh=0.2,
                                                  force_suppress=True, id_index=0, background_id=1,
                                                  out_format="center", name="nms"), data=(1, 30, 6))
    yield case("box_decode", S.contrib.box_decode(d, V("anchors"), std0=0.1, std1=0.1, std2=0.2, std3=0.2,
                                                  clip=0.5, name="bd"), data=(2, 6, 4), anchors=(1, 6, 4))
    yield case("box_decode_corner", S.contrib.box_decode(d, V("anchors"), format="corner", name="bd"),
               data=(2, 6, 4), anchors=(1, 2, 3, 4))
    yield case("roi_align", S.contrib.ROIAlign(d, detection_rois(V("rois")), pooled_size=(3, 4), spatial_scale=0.5,
                                              sample_ratio=2, name="ra"), data=(2, 4, 12, 14), rois=(5, 5))
    yield case("roi_align_adaptive", S.contrib.ROIAlign(d, detection_rois(V("rois")), pooled_size=(2, 2),
                                                       spatial_scale=0.5, aligned=True, name="ra"),
               data=(2, 3, 12, 14), rois=(4, 5))
    yield case("roi_align_ps", S.contrib.ROIAlign(d, detection_rois(V("rois")), pooled_size=(2, 3), spatial_scale=0.25,
                                                 sample_ratio=1, position_sensitive=True, name="ra"),
               data=(2, 12, 8, 8), rois=(3, 5))
    yield case("roi_pooling", S.ROIPooling(d, detection_rois(V("rois")), pooled_size=(3, 4), spatial_scale=0.5,
                                           name="rp"), data=(2, 4, 12, 14), rois=(5, 5))
    yield case("roi_pooling_coarse", S.ROIPooling(d, detection_rois(V("rois")), pooled_size=(2, 2), spatial_scale=0.25,
                                                  name="rp"), data=(2, 3, 9, 8), rois=(4, 5))
    # SSD: anchors of a feature map, detections from class scores and box
    # offsets against them, and training targets from labels.
    yield case("multibox_prior", S.contrib.MultiBoxPrior(d, sizes=(0.3, 0.5), ratios=(1, 2, 0.5), name="mp"),
               data=(2, 3, 5, 6))
    yield case("multibox_prior_clip", S.contrib.MultiBoxPrior(d, sizes=(0.6,), ratios=(1, 3), clip=True,
                                                              steps=(0.2, 0.25), offsets=(0.4, 0.6), name="mp"),
               data=(1, 2, 4, 3))
    anchors = S.contrib.MultiBoxPrior(d, sizes=(0.3, 0.6), ratios=(1, 2), name="mp")
    scores = S.softmax(V("cls"), axis=1, name="sm")
    yield case("multibox_detection", S.contrib.MultiBoxDetection(scores, V("loc"), anchors, threshold=0.3,
                                                                 name="md"), data=(2, 1, 4, 4), cls=(2, 4, 48),
               loc=(2, 192))
    yield case("multibox_detection_force", S.contrib.MultiBoxDetection(
        scores, V("loc"), anchors, clip=False, force_suppress=True, nms_threshold=0.3, nms_topk=10,
        variances=(0.2, 0.2, 0.1, 0.1), name="md"), data=(1, 1, 4, 4), cls=(1, 3, 48), loc=(1, 192))
    yield case("multibox_target", S.contrib.MultiBoxTarget(anchors, ssd_labels(V("gt")), V("cls_pred"), name="mt"),
               data=(2, 1, 4, 4), gt=(2, 4, 5), cls_pred=(2, 4, 48))
    yield case("multibox_target_mining", S.contrib.MultiBoxTarget(
        anchors, ssd_labels(V("gt")), V("cls_pred"), overlap_threshold=0.3, negative_mining_ratio=2,
        negative_mining_thresh=0.4, ignore_label=-2, name="mt"), data=(2, 1, 4, 4), gt=(2, 3, 5), cls_pred=(2, 3, 48))
    yield case("box_encode", box_encode(V("samples"), V("matches"), V("anchors"), V("refs"), V("means"), V("stds")),
               samples=(2, 6), matches=(2, 6), anchors=(2, 6, 4), refs=(2, 3, 4), means=(4,), stds=(4,))
    yield case("shape_array", S.shape_array(d, name="sa"), data=(2, 3, 4))
    yield case("argsort", S.argsort(d, name="as"), data=(3, 7))
    yield case("argsort_axis0", S.argsort(d, axis=0, is_ascend=False, dtype="int32", name="as"), data=(5, 2, 3))
    yield case("argsort_flat", S.argsort(d, axis=None, name="as"), data=(2, 3, 4))
    yield case("argmax", S.argmax(d, axis=1, name="am"), data=(3, 5))
    yield case("argmax_keep", S.argmax(d, axis=0, keepdims=True, name="am"), data=(4, 3, 2))
    yield case("argmax_flat", S.argmax(d, name="am"), data=(2, 3, 4))
    yield case("argmin", S.argmin(d, axis=-1, name="am"), data=(2, 3, 4))
    yield case("topk", S.topk(d, name="tk"), data=(3, 7))
    yield case("topk_value", S.topk(d, axis=0, k=3, ret_typ="value", is_ascend=True, name="tk"), data=(6, 2, 3))
    yield case("topk_both", S.topk(d, k=2, ret_typ="both", dtype="int32", name="tk")[0], data=(3, 5))
    yield case("topk_both_indices", S.topk(d, axis=1, k=2, ret_typ="both", name="tk")[1], data=(3, 5, 2))
    yield case("topk_mask", S.topk(d, k=2, ret_typ="mask", name="tk"), data=(3, 6))
    yield case("topk_flat", S.topk(d, axis=None, k=4, ret_typ="value", name="tk"), data=(2, 3, 4))
    yield case("topk_all", S.topk(d, k=0, ret_typ="value", name="tk"), data=(2, 5))
    yield case("sort", S.sort(d, name="so"), data=(3, 7))
    # MXNet cannot bind sort's gradient without an explicit axis (its
    # _backward_topk gets axis="").
    yield case("sort_last", S.sort(d, axis=-1, name="so"), data=(3, 7))
    yield case("sort_axis0", S.sort(d, axis=0, is_ascend=False, name="so"), data=(5, 2, 3))
    yield case("sort_flat", S.sort(d, axis=None, name="so"), data=(2, 3, 4))
    # Indices out of range on both sides: pick clips or wraps them.
    yield case("pick", S.pick(d, S.floor(V("index") * 3, name="idx"), axis=1, name="pk"), data=(4, 5), index=(4,))
    yield case("pick_wrap", S.pick(d, S.floor(V("index") * 4, name="idx"), axis=0, mode="wrap", name="pk"),
               data=(3, 4, 2), index=(4, 2))
    yield case("pick_keep", S.pick(d, S.floor(V("index") * 3, name="idx"), keepdims=True, name="pk"),
               data=(2, 3, 4), index=(2, 3, 1))
    yield case("take", S.take(d, S.floor(V("indices") * 3, name="idx"), name="tk"), data=(5, 3), indices=(2, 4))
    yield case("take_wrap", S.take(d, S.floor(V("indices") * 4, name="idx"), axis=1, mode="wrap", name="tk"),
               data=(2, 5, 3), indices=(4,))
    yield case("take_last", S.take(d, S.floor(V("indices") * 3, name="idx"), axis=-1, name="tk"),
               data=(3, 4), indices=(2, 3))
    yield case("one_hot", S.one_hot(S.floor(V("indices") * 3, name="idx"), depth=5, name="oh"), indices=(2, 3))
    yield case("one_hot_values", S.one_hot(S.floor(V("indices") * 3, name="idx"), depth=4, on_value=2.5,
                                           off_value=-1, dtype="int32", name="oh"), indices=(5,))
    yield case("broadcast_like", S.broadcast_like(d, V("like"), name="bl"), data=(1, 3, 1), like=(2, 3, 4))
    yield case("broadcast_like_axes", S.broadcast_like(d, V("like"), lhs_axes=(0,), rhs_axes=(-1,), name="bl"),
               data=(1, 3), like=(2, 7))
    # The fused RNN op, as Gluon's rnn.RNN / LSTM / GRU layers export it.
    rnn = lambda mode, **kw: S.RNN(d, V("params"), V("state"), *([V("cell")] if mode == "lstm" else []), mode=mode,
                                   state_size=4, name="rnn", **kw)
    yield case("rnn_lstm1", rnn("lstm", num_layers=1, state_outputs=True), data=(5, 2, 3))
    yield case("rnn_lstm_bi", rnn("lstm", num_layers=2, bidirectional=True, state_outputs=True), data=(4, 3, 5))
    yield case("rnn_gru_bi", rnn("gru", num_layers=2, bidirectional=True), data=(4, 2, 3))
    yield case("rnn_gru_states", rnn("gru", num_layers=1, state_outputs=True), data=(3, 2, 6))
    yield case("rnn_tanh", rnn("rnn_tanh", num_layers=2, state_outputs=True), data=(5, 2, 3))
    yield case("rnn_relu", rnn("rnn_relu", num_layers=1, bidirectional=True), data=(5, 2, 3))
    # LSTMP: each step's state projected to projection_size (MXNet's CPU
    # runs it in inference only; its gradient is checked by finite differences).
    yield case("rnn_lstm_proj", S.RNN(d, V("params"), V("state"), V("cell"), mode="lstm", state_size=5,
                                      projection_size=3, num_layers=2, bidirectional=True, state_outputs=True,
                                      name="rnn"), data=(4, 2, 3))
    # What MXNet runs with cuDNN only (GPU_ONLY): sequence lengths in
    # [1, T] from a random input, and the LSTM state clip (tight enough to
    # clip).
    seq_lengths = S.floor(S.abs(V("length")) * 3.99, name="len") + 1
    yield case("rnn_gru_lengths", S.RNN(d, V("params"), V("state"), sequence_length=seq_lengths, mode="gru", state_size=4,
                                        num_layers=2, bidirectional=True, state_outputs=True,
                                        use_sequence_length=True, name="rnn"), data=(4, 3, 2), length=(3,))
    yield case("rnn_lstm_lengths_proj", S.RNN(d, V("params"), V("state"), V("cell"), seq_lengths, mode="lstm",
                                              state_size=5, projection_size=3, num_layers=1, bidirectional=True,
                                              state_outputs=True, use_sequence_length=True, name="rnn"),
               data=(4, 3, 2), length=(3,))
    yield case("rnn_lstm_clip", rnn("lstm", num_layers=2, bidirectional=True, state_outputs=True,
                                    lstm_state_clip_min=-0.3, lstm_state_clip_max=0.25), data=(5, 2, 3))
    # Gluon's layers build the flat vector with _rnn_param_concat.
    yield case("rnn_param_concat", S.RNN(d, S._internal._rnn_param_concat(V("w"), V("b"), dim=0, num_args=2),
                                         V("state"), mode="rnn_tanh", state_size=4, num_layers=1, name="rnn"),
               data=(5, 2, 3), w=(28,), b=(8,))
    yield case("gather_nd", S.gather_nd(d, S.floor(S.abs(V("indices")) * 3.99 - 1, name="idx"), name="g"),
               data=(4, 3, 5), indices=(2, 3, 2))
    yield case("gather_nd_rows", S.gather_nd(d, S.floor(S.abs(V("indices")) * 3.99, name="idx"), name="g"),
               data=(4, 3), indices=(1, 6))
    # MXNet's gather_nd gradient writes out of bounds for negative indices.
    yield case("gather_nd_grad", S.gather_nd(d, S.floor(S.abs(V("indices")) * 2.99, name="idx"), name="g"),
               data=(4, 3, 5), indices=(2, 3, 2))
    # Copies and views (YOLO's and the RNN cells' tile, repeat and reverse).
    yield case("tile", S.tile(d, reps=(2, 1, 3), name="t"), data=(2, 3, 2))
    yield case("tile_lead", S.tile(d, reps=(2, 1, 2), name="t"), data=(3, 2))
    yield case("tile_short", S.tile(d, reps=(3,), name="t"), data=(2, 3, 2))
    yield case("repeat", S.repeat(d, repeats=3, axis=1, name="r"), data=(2, 3, 2))
    yield case("repeat_flat", S.repeat(d, repeats=2, name="r"), data=(2, 3))
    yield case("reverse", S.reverse(d, axis=(0, 2), name="rv"), data=(3, 2, 4))
    yield case("squeeze", S.squeeze(d, name="sq"), data=(2, 1, 3, 1))
    yield case("squeeze_axis", S.squeeze(d, axis=(-1,), name="sq"), data=(2, 1, 3, 1))
    for pool_type in ("max", "avg", "sum"):
        for conv in ("valid", "full"):
            yield case("pool_%s_%s" % (pool_type, conv),
                       S.Pooling(d, kernel=(3, 3), stride=(2, 2), pad=(1, 0), pool_type=pool_type,
                                 pooling_convention=conv, name="p"), data=(2, 3, 10, 11))
    yield case("pool_global", S.Pooling(d, kernel=(7, 7), global_pool=True, pool_type="avg", name="gp"),
               data=(2, 5, 9, 9))
    yield case("pool_1d", S.Pooling(d, kernel=(2,), stride=(2,), name="p"), data=(2, 3, 9))
    yield case("pool_1d_avg", S.Pooling(d, kernel=(3,), stride=(2,), pad=(1,), pool_type="avg", name="p"),
               data=(2, 3, 9))
    yield case("pool_3d_max", S.Pooling(d, kernel=(2, 2, 2), stride=(2, 1, 2), pad=(1, 0, 1), name="p"),
               data=(2, 3, 5, 6, 7))
    yield case("pool_3d_avg", S.Pooling(d, kernel=(3, 2, 2), stride=(2, 2, 1), pad=(1, 1, 0), pool_type="avg",
                                        count_include_pad=False, pooling_convention="full", name="p"),
               data=(1, 2, 5, 6, 5))
    yield case("pool_avg_nopad", S.Pooling(d, kernel=(2, 2), pad=(1, 1), pool_type="avg",
                                           count_include_pad=False, name="p"), data=(1, 2, 5, 5))
    for mode in ("constant", "edge", "reflect"):
        yield case("pad_" + mode, S.pad(d, mode=mode, pad_width=(0, 0, 0, 0, 1, 2, 2, 1), constant_value=1.5,
                                        name="pad"), data=(2, 3, 4, 5))
    yield case("pad_reflect_3d", S.Pad(d, mode="reflect", pad_width=(0, 0, 0, 0, 1, 0, 2, 2, 0, 1), name="pad"),
               data=(1, 2, 3, 4, 5))
    yield case("bilinear_resize", S.contrib.BilinearResize2D(d, height=7, width=5, name="rs"), data=(2, 3, 4, 6))
    yield case("bilinear_resize_centers", S.contrib.BilinearResize2D(d, height=9, width=4, align_corners=False,
                                                                      name="rs"), data=(1, 2, 4, 6))
    yield case("bilinear_resize_scale", S.contrib.BilinearResize2D(d, scale_height=1.7, scale_width=0.6, name="rs"),
               data=(1, 2, 5, 7))
    yield case("bilinear_resize_odd", S.contrib.BilinearResize2D(d, scale_height=2.0, scale_width=0.5,
                                                                  mode="odd_scale", name="rs"), data=(1, 2, 5, 8))
    yield case("bilinear_resize_like", S.contrib.BilinearResize2D(d, V("like"), mode="like", name="rs"),
               data=(1, 2, 3, 4), like=(1, 1, 6, 5))
    for mode in ("to_even_down", "to_even_up", "to_odd_down", "to_odd_up"):
        yield case("bilinear_resize_" + mode, S.contrib.BilinearResize2D(d, mode=mode, name="rs"), data=(1, 2, 5, 6))
    # Bins of unequal, overlapping sizes; the default 1x1; a square size.
    yield case("adaptive_avg_pool", S.contrib.AdaptiveAvgPooling2D(d, output_size=(3, 4), name="ap"),
               data=(2, 3, 7, 9))
    yield case("adaptive_avg_pool_global", S.contrib.AdaptiveAvgPooling2D(d, name="ap"), data=(2, 3, 5, 6))
    yield case("adaptive_avg_pool_square", S.contrib.AdaptiveAvgPooling2D(d, output_size=2, name="ap"),
               data=(1, 2, 6, 6))
    for act in ("relu", "sigmoid", "tanh", "softrelu", "softsign"):
        yield case("act_" + act, S.Activation(d, act_type=act, name="a"), data=(4, 5))
    for act in ("leaky", "elu", "selu", "gelu", "prelu", "rrelu"):
        yield case("leaky_" + act, S.LeakyReLU(d, act_type=act, slope=0.1, name="l"), data=(2, 3, 4))
    yield case("batchnorm", S.BatchNorm(d, fix_gamma=False, eps=2e-5, name="bn"), data=(2, 3, 4, 4))
    yield case("batchnorm_meanvar", S.BatchNorm(d, output_mean_var=True, axis=-1, name="bn"), data=(2, 3, 5))
    yield case("dropout", S.Dropout(d, p=0.3, name="drop"), data=(4, 6))
    yield case("dropout_axes", S.Dropout(d, p=0.3, axes=(1,), name="drop"), data=(4, 6, 2))
    yield case("lrn", S.LRN(d, nsize=5, alpha=1e-4, beta=0.75, knorm=2, name="lrn"), data=(2, 8, 5, 5))
    yield case("concat", S.Concat(lhs, rhs, dim=1, name="cat"), lhs=(2, 3, 4), rhs=(2, 5, 4))
    yield case("concat_axis0", S.concat(lhs, rhs, V("third"), dim=0, name="cat"),
               lhs=(2, 3), rhs=(4, 3), third=(1, 3))
    yield case("split", S.SliceChannel(d, num_outputs=3, axis=1, name="sc"), data=(2, 6, 4))
    yield case("split_squeeze", S.split(d, num_outputs=4, axis=0, squeeze_axis=True, name="sc"), data=(4, 3))
    yield case("split_one", S.SliceChannel(d, num_outputs=1, name="sc"), data=(2, 6))
    yield case("flatten", S.Flatten(d, name="f"), data=(2, 3, 4, 5))
    reshapes = [((2, 3, 5, 5), (0, -1), False), ((2, 3, 5, 6), (6, 1, -2), False),
                ((2, 3, 5, 6), (-3, -1), False), ((64,), (-4, 16, -1), False),
                ((64, 1, 2, 3), (-4, 16, -1, -2), False), ((2, 3, 5, 5), (0, -1), True),
                ((1, 2, 3, 64), (-2, -1, 16, -4), True), ((2, 3, 4), (4, 0, -1), False),
                ((2, 3, 4), (-1,), False), ((6, 4), (-4, -1, 2, 0), False)]
    for i, (shape, spec, rev) in enumerate(reshapes):
        yield case("reshape%d" % i, S.Reshape(d, shape=spec, reverse=rev, name="r"), data=shape)
    yield case("reshape_target", S.Reshape(d, target_shape=(2, 0), name="r"), data=(2, 3, 5, 5))
    yield case("transpose", S.transpose(d, axes=(2, 0, 1), name="t"), data=(2, 3, 4))
    yield case("transpose_rev", S.transpose(d, name="t"), data=(2, 3, 4))
    yield case("expand_dims", S.expand_dims(d, axis=1, name="e"), data=(2, 3))
    yield case("expand_dims_neg", S.expand_dims(d, axis=-1, name="e"), data=(2, 3))
    yield case("swapaxes", S.SwapAxis(d, dim1=0, dim2=2, name="s"), data=(2, 3, 4))
    yield case("slice_axis", S.slice_axis(d, axis=1, begin=1, end=3, name="s"), data=(2, 5, 4))
    yield case("slice_axis_none", S.slice_axis(d, axis=-1, begin=-3, end=None, name="s"), data=(2, 5, 4))
    yield case("embedding", S.Embedding(d, input_dim=10, output_dim=6, name="emb"), data=(4, 7))
    for dt in ("float16", "float64", "int32", "int64", "uint8"):
        yield case("cast_" + dt, S.Cast(d, dtype=dt, name="c"), data=(2, 3))
    yield case("cast_roundtrip", S.Cast(S.Cast(d, dtype="float16"), dtype="float32", name="c"), data=(2, 3))
    yield case("identity", S.identity(d, name="id"), data=(2, 3))
    yield case("blockgrad", S.BlockGrad(d, name="bg"), data=(2, 3))
    yield case("MakeLoss", S.MakeLoss(d, grad_scale=0.5, normalization="batch", name="ml"), data=(2, 3))
    yield case("make_loss", S.make_loss(d, name="ml"), data=(2, 3))
    yield case("MakeLoss_valid", S.MakeLoss(d, grad_scale=2.0, normalization="valid", valid_thresh=0.2, name="ml"),
               data=(3, 4))
    yield case("softmaxoutput", S.SoftmaxOutput(d, name="softmax"), data=(4, 10))
    yield case("softmaxoutput_4d", S.SoftmaxOutput(d, name="softmax"), data=(2, 3, 4, 5))
    yield case("softmaxoutput_multi", S.SoftmaxOutput(d, multi_output=True, use_ignore=True,
                                                      ignore_label=0, normalization="valid", name="sm"),
               data=(2, 3, 4, 5))
    yield case("softmaxoutput_prob", S.SoftmaxOutput(d, V("label"), name="sm"), data=(4, 10), label=(4, 10))
    # A distribution label ignores normalization; preserve_shape's 'batch'
    # divides by the label's length; MakeLoss's 'valid' by the nonzero inputs.
    yield case("softmaxoutput_prob_batch", S.SoftmaxOutput(d, V("label"), grad_scale=3.0, normalization="batch",
                                                           name="sm"), data=(4, 10), label=(4, 10))
    yield case("softmaxoutput_preserve", S.SoftmaxOutput(d, preserve_shape=True, normalization="batch",
                                                         use_ignore=True, ignore_label=1, name="sm"),
               data=(2, 3, 5))
    yield case("softmaxoutput_4d_valid", S.SoftmaxOutput(d, normalization="valid", use_ignore=True,
                                                         ignore_label=2, name="sm"), data=(2, 3, 4, 5))
    yield case("softmaxactivation", S.SoftmaxActivation(d, mode="channel", name="sa"), data=(2, 3, 4))
    yield case("softmax", S.softmax(d, axis=1, temperature=2.0, name="sm"), data=(2, 3, 4))
    yield case("log_softmax", S.log_softmax(d, name="lsm"), data=(2, 3))
    yield case("softmax_length", S.softmax(d, V("length", dtype="int32"), axis=-1, use_length=True, name="sm"),
               data=(2, 3, 4))
    for reg in ("LinearRegressionOutput", "LogisticRegressionOutput", "MAERegressionOutput"):
        yield case(reg, getattr(S, reg)(d, name="reg"), data=(4, 3))
        yield case(reg + "_1d", getattr(S, reg)(d, name="reg"), data=(4, 1))
    for op in ("elemwise_add", "elemwise_sub", "elemwise_mul", "elemwise_div"):
        yield case(op, getattr(S, op)(lhs, rhs, name="b"), lhs=(2, 3))
    yield case("python_plus", lhs + rhs, lhs=(2, 3))
    yield case("maximum", S.maximum(lhs, rhs), lhs=(2, 3), rhs=(2, 3))
    yield case("minimum", S.minimum(lhs, rhs), lhs=(2, 3), rhs=(2, 3))
    for op in ("add", "sub", "mul", "div", "maximum", "minimum"):
        yield case("broadcast_" + op, getattr(S, "broadcast_" + op)(lhs, rhs, name="b"),
                   lhs=(2, 1, 4), rhs=(3, 1))
    yield case("scalars", S.rdiv_scalar if False else
               ((((((d + 2) - 1.5) * 3) / 4) ** 2) - 0.5).__rsub__(1) / 1 + (1 / d), data=(2, 3))
    yield case("scalar_ops", S._internal._rminus_scalar(S._internal._rdiv_scalar(
        S._internal._power_scalar(d, scalar=3), scalar=2), scalar=1, name="rm"), data=(2, 3))
    yield case("add_n", S.add_n(lhs, rhs, V("third"), name="sum"), lhs=(2, 3))
    yield case("ElementWiseSum", S.ElementWiseSum(lhs, rhs, name="sum"), lhs=(2, 3))
    for op in ("exp", "log", "sqrt", "square", "abs", "negative", "sin", "cos", "tanh", "sigmoid", "relu"):
        yield case("unary_" + op, getattr(S, op)(d, name="u"), data=(3, 4))
    yield case("clip", S.clip(d, a_min=-1, a_max=2.5, name="c"), data=(3, 4))
    for op in MATH:
        yield case("unary_" + op, getattr(S, op)(d, name="u"), data=(3, 4))
    # Rounding of values a few units wide, halves included.
    halves = S.round(d * 8) / 4
    for op in ROUNDING:
        yield case("unary_" + op, getattr(S, op)(halves, name="u"), data=(3, 4))
    yield case("zeros_like", S.zeros_like(d, name="z") + d, data=(3, 4))
    yield case("ones_like", S.ones_like(d, name="o") + d, data=(3, 4))
    # Comparisons of values on a grid of quarters, so that equality occurs.
    ql, qr = S.round(lhs * 4) / 4, S.round(rhs * 4) / 4
    for op in COMPARISONS:
        yield case(op + "_scalar", getattr(S._internal, "_%s_scalar" % op)(S.round(d * 4) / 4, scalar=0.25, name="c"),
                   data=(3, 4))
        yield case("elemwise_" + op, getattr(S._internal, "_" + op)(ql, qr, name="c"), lhs=(3, 4), rhs=(3, 4))
        yield case("broadcast_" + op, getattr(S, "broadcast_" + op)(ql, qr, name="c"), lhs=(2, 1, 4), rhs=(3, 1))
    yield case("python_compare", (d > 0.5) + (d <= -0.25) * 2 + (d != 0.0) * 4, data=(3, 4))
    yield case("maximum_scalar", S.maximum(d, 0.25), data=(3, 4))
    yield case("minimum_scalar", S.minimum(d, -0.25), data=(3, 4))
    yield case("where", S.where(S._internal._greater_scalar(V("cond"), scalar=0), lhs, rhs, name="w"),
               cond=(3, 4), lhs=(3, 4), rhs=(3, 4))
    yield case("where_rows", S.where(S._internal._greater_scalar(V("cond"), scalar=0), lhs, rhs, name="w"),
               cond=(3,), lhs=(3, 4), rhs=(3, 4))
    yield case("norm", S.norm(d, name="n"), data=(2, 3, 4))
    yield case("norm_l1_axis", S.norm(d, ord=1, axis=1, name="n"), data=(2, 3, 4))
    yield case("norm_axes_keep", S.norm(d, axis=(0, -1), keepdims=True, name="n"), data=(2, 3, 4))
    for op in ("sum", "mean"):
        yield case(op + "_all", getattr(S, op)(d, name="r"), data=(2, 3, 4))
        yield case(op + "_axis", getattr(S, op)(d, axis=1, name="r"), data=(2, 3, 4))
        yield case(op + "_keep", getattr(S, op)(d, axis=(0, 2), keepdims=True, name="r"), data=(2, 3, 4))
        yield case(op + "_exclude", getattr(S, op)(d, axis=1, exclude=True, name="r"), data=(2, 3, 4))
        yield case(op + "_exclude_keep", getattr(S, op)(d, axis=(0,), exclude=True, keepdims=True, name="r"),
                   data=(2, 3, 4))
        yield case(op + "_neg", getattr(S, op)(d, axis=-1, name="r"), data=(2, 3, 4))
    yield case("dot", S.dot(lhs, rhs, name="dot"), lhs=(3, 4), rhs=(4, 5))
    yield case("dot_ta", S.dot(lhs, rhs, transpose_a=True, name="dot"), lhs=(4, 3), rhs=(4, 5))
    yield case("dot_tb", S.dot(lhs, rhs, transpose_b=True, name="dot"), lhs=(3, 4), rhs=(5, 4))
    yield case("dot_nd", S.dot(lhs, rhs, name="dot"), lhs=(2, 3, 4), rhs=(4, 5, 6))
    yield case("dot_vec", S.dot(lhs, rhs, name="dot"), lhs=(4,), rhs=(4,))
    yield case("dot_nd_ta", S.dot(lhs, rhs, transpose_a=True, name="dot"), lhs=(4, 3, 2), rhs=(4, 5))
    yield case("dot_nd_tb", S.dot(lhs, rhs, transpose_b=True, name="dot"), lhs=(2, 3, 4), rhs=(5, 2, 4))
    yield case("dot_vec_mat", S.dot(lhs, rhs, transpose_a=True, name="dot"), lhs=(4,), rhs=(4, 3))
    yield case("batch_dot_4d", S.batch_dot(lhs, rhs, transpose_b=True, name="bd"), lhs=(2, 2, 3, 4),
               rhs=(2, 2, 5, 4))
    yield case("batch_dot", S.batch_dot(lhs, rhs, name="bd"), lhs=(2, 3, 4), rhs=(2, 4, 5))
    yield case("batch_dot_t", S.batch_dot(lhs, rhs, transpose_a=True, transpose_b=True, name="bd"),
               lhs=(2, 4, 3), rhs=(2, 5, 4))
    yield case("zeros_backward", S.elemwise_add(S.zeros(shape=(0, 7)), d, name="add"), data=(3, 7))
    yield case("ones", S.ones(shape=(2, 3), dtype="float64", name="o") + S.Cast(d, dtype="float64"), data=(2, 3))
    yield case("upsampling", S.UpSampling(d, scale=2, sample_type="nearest", name="up"), data=(1, 3, 4, 5))
    yield case("upsampling_multi", S.UpSampling(lhs, rhs, scale=2, sample_type="nearest", num_args=2,
                                                name="up"), lhs=(1, 3, 4, 4), rhs=(1, 2, 2, 2))
    yield case("upsampling_bilinear", S.UpSampling(d, scale=2, sample_type="bilinear", num_filter=3,
                                                   name="up"), data=(1, 3, 4, 4))
    yield case("upsampling_bilinear_s3", S.UpSampling(d, scale=3, sample_type="bilinear", num_filter=2,
                                                      name="up"), data=(2, 2, 3, 5))
    # Backward inference: weights and a state recovered from a later op.
    h = S.FullyConnected(d, num_hidden=8, name="i2h")
    state = S.zeros(shape=(0, 8), name="state")
    yield case("lstm_like_state", S.Activation(h + state, act_type="tanh", name="act"), data=(5, 3))
    yield case("multi_head", S.Group([S.FullyConnected(d, num_hidden=3, name="fc"),
                                      S.BatchNorm(d, name="bn", output_mean_var=True)]), data=(4, 3))
    yield case("shared_input", S.elemwise_mul(d, d, name="sq"), data=(2, 2))
    net = S.Convolution(d, kernel=(5, 5), num_filter=20, name="conv1")
    net = S.Pooling(S.Activation(net, act_type="tanh"), kernel=(2, 2), stride=(2, 2), pool_type="max")
    net = S.FullyConnected(S.Flatten(net), num_hidden=10)
    yield case("lenet", S.SoftmaxOutput(net, name="softmax"), data=(3, 1, 28, 28))
