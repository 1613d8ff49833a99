#!/usr/bin/env python3
"""The model zoos users deploy, compiled by symc and compared with MXNet 1.9.1.

Every network of MXNet's Gluon model zoo and GluonCV's classification,
detection, segmentation and pose families is built by the zoo itself with random weights
(pretrained=False), hybridized and exported as `HybridBlock.export` writes it,
then compiled with `symc compile` and run with `symc-run --compare` against
MXNet's forward. Outputs agree within MODEL_TOLERANCE (relative and absolute),
the tolerance MXNet's own two CPU kernel sets agree to: its oneDNN kernels
differ from its reference ones by at most 3.6e-6 on every model here but
YOLOv3 on MobileNet and Mask R-CNN, whose detections differ in which boxes
of equal scores make the top k (measure_kernel_agreement.py; it finds symc
within 2e-6 of the reference kernels on the eleven models it was run with).
Detection heads are compared as a set of rows per image
(compare_detections). Networks that
need ops symc does not have yet must fail with the unknown-op error naming
them (UNSUPPORTED), so this list shrinks as ops land.

The default run checks a representative subset (a few minutes); --all runs
every model (the `check-zoo` build target: 65 minutes on 2 cores with the
training steps, on a loaded machine).
GluonCV 0.10.5 refuses to import beside torch 2.x: torch is hidden from it.

Gluon's recurrent layers (rnn.RNN, LSTM and GRU: the fused RNN op, several
layers, bidirectional, states in and out, an LSTM with a projection) are
exported the same way and checked and trained one step in every run, against
MXNet's oneDNN RNN (its reference CPU RNN cannot run: cases.needs_onednn;
MXNet's CPU does not train the projection, UNTRAINED_RNN).

GluonNLP's BERT encoder (with its pooler) is exported the same way: token
ids, segment ids and valid lengths in, the fused self-attention ops and
LayerNorm inside. The default run checks a two-layer BERT of the same ops;
--all the 12-layer base.

Networks that MXNet can train are also trained one step (TRAINED): symc's
gradients of every parameter, and BatchNorm's updated moving statistics,
against MXNet's in training mode, by relative L2 error (TRAIN_TOLERANCE; deep
BatchNorm stacks amplify float32 rounding, so MXNet computes in float64 where
the net's ops allow it, and symc may differ from that by NOISE_FACTOR times
what MXNet's own float32 step does).
"""
import json
import os
import shutil
import sys
import tempfile
import warnings

os.environ.setdefault("MXNET_MKLDNN_ENABLED", "0")
os.environ.setdefault("MXNET_STORAGE_FALLBACK_LOG_VERBOSE", "0")
warnings.filterwarnings("ignore")

import mxnet as mx
import numpy as np

from cases import check_parser, needs_onednn, rerun_with_onednn, run_checks
from check_backward import mxnet_backward
from check_forward import (compare_outputs, compile_command, compile_symbol, mxnet_forward, random_arrays,
                           require_finite, save_arrays)

MODEL_TOLERANCE = 1e-5
TRAIN_TOLERANCE = 5e-2
TRAIN_RMS_FLOOR = 1e-3
# BatchNorm in training mode through deep stacks is ill-conditioned: one
# float32 step lands far from the float64 one, by a distance that is itself
# a random draw. MXNet's float32 gradients differ from its float64 ones by up
# to 23% at batch 1 (MobileNet 0.25) and 77% at batch 2 (MobileNet v2). Two
# float32 draws differ by more than 2x on some of a net's ~150 arrays:
# MobileNet v2 at batch 1, one BatchNorm gamma at 0.203 for symc against
# MXNet's 0.101 (at batch 2 symc is closer to float64 than MXNet on every
# array: worst 0.061 against MXNet's 0.119-0.771).
NOISE_FACTOR = 3

GLUON = (
    ("AlexNet", ["alexnet"]),
    ("DenseNet", ["densenet121", "densenet161", "densenet169", "densenet201"]),
    ("Inception", ["inceptionv3"]),
    ("MobileNet", ["mobilenet1.0", "mobilenet0.75", "mobilenet0.5", "mobilenet0.25"]),
    ("MobileNet v2", ["mobilenetv2_1.0", "mobilenetv2_0.75", "mobilenetv2_0.5", "mobilenetv2_0.25"]),
    ("ResNet v1", ["resnet18_v1", "resnet34_v1", "resnet50_v1", "resnet101_v1", "resnet152_v1"]),
    ("ResNet v2", ["resnet18_v2", "resnet34_v2", "resnet50_v2", "resnet101_v2", "resnet152_v2"]),
    ("SqueezeNet", ["squeezenet1.0", "squeezenet1.1"]),
    ("VGG", ["vgg11", "vgg13", "vgg16", "vgg19", "vgg11_bn", "vgg13_bn", "vgg16_bn", "vgg19_bn"]),
)
GLUONCV = (
    ("ResNeXt", ["resnext50_32x4d"]),
    ("SE-ResNet / SE-ResNeXt", ["se_resnet18_v1", "se_resnext50_32x4d"]),
    ("ResNeSt", ["resnest50"]),
    ("CIFAR ResNet / WideResNet", ["cifar_resnet20_v1", "cifar_wideresnet16_10"]),
    ("MobileNet v3", ["mobilenetv3_large", "mobilenetv3_small"]),
    ("DarkNet", ["darknet53"]),
    ("Xception", ["xception"]),
    ("ResNet v1b/v1d", ["resnet50_v1b", "resnet50_v1d"]),
    ("FCN", ["fcn_resnet50_voc"]),
    ("PSPNet", ["psp_resnet50_ade"]),
    ("DeepLab v3", ["deeplab_resnet50_ade"]),
    ("SimplePose", ["simple_pose_resnet18_v1b"]),
    ("SSD", ["ssd_512_mobilenet1.0_voc", "ssd_300_vgg16_atrous_voc", "ssd_512_resnet50_v1_voc"]),
    ("YOLOv3", ["yolo3_mobilenet1.0_voc", "yolo3_darknet53_voc"]),
    ("Faster R-CNN", ["faster_rcnn_resnet50_v1b_voc"]),
    ("Mask R-CNN", ["mask_rcnn_resnet50_v1b_coco"]),
)
GLUONNLP = (
    ("BERT", ["bert_12_768_12"]),
)
# Gluon's recurrent layers (the fused RNN op), hybridized with their states
# in and out: (layer, its keyword arguments).
GLUON_RNN = {
    "gluon_rnn_tanh": ("RNN", {"num_layers": 2, "activation": "tanh"}),
    "gluon_rnn_relu_bi": ("RNN", {"activation": "relu", "bidirectional": True}),
    "gluon_rnn_lstm": ("LSTM", {"num_layers": 2, "bidirectional": True}),
    "gluon_rnn_gru": ("GRU", {"num_layers": 2, "bidirectional": True}),
    "gluon_rnn_lstmp": ("LSTM", {"num_layers": 2, "projection_size": 8}),
}
# MXNet's CPU RNN does not train an LSTM with a projection (its gradient is
# checked by finite differences, check_finite_differences.py).
UNTRAINED_RNN = ("gluon_rnn_lstmp",)
RNN_STEPS, RNN_BATCH, RNN_INPUT, RNN_HIDDEN = 6, 2, 8, 16
# The default run's BERT: the base model's graph with two small layers.
SMALL_BERT = {"num_layers": 2, "units": 64, "hidden_size": 128, "num_heads": 4, "embed_size": 64}
BERT_VOCAB, BERT_BATCH, BERT_LENGTH = 1000, 2, 16
# Input sizes the zoos build their nets for; the segmentation nets resize to
# a size fixed at construction.
SIZES = {"inceptionv3": 299, "xception": 299, "cifar_resnet20_v1": 32, "cifar_wideresnet16_10": 32,
         "fcn_resnet50_voc": 480, "psp_resnet50_ade": 480, "deeplab_resnet50_ade": 480,
         "ssd_512_mobilenet1.0_voc": 512, "ssd_300_vgg16_atrous_voc": 300, "ssd_512_resnet50_v1_voc": 512,
         "yolo3_mobilenet1.0_voc": 416, "yolo3_darknet53_voc": 416, "faster_rcnn_resnet50_v1b_voc": 600,
         "mask_rcnn_resnet50_v1b_coco": 600}
SHAPES = {"simple_pose_resnet18_v1b": (1, 3, 256, 192)}
# Detection heads, whose outputs are compared as a set of rows per image.
DETECTION_MODELS = tuple(name for family, names in GLUONCV if family in ("SSD", "YOLOv3", "Faster R-CNN", "Mask R-CNN")
                         for name in names)
# Networks whose ops symc lacks so far: the ops the unknown-op error must name.
UNSUPPORTED = {}
# The default run: one net per new op family, small inputs where the net
# allows them.
SUBSET = {"squeezenet1.1": 224, "cifar_resnet20_v1": 32, "se_resnet18_v1": 64, "mobilenetv3_small": 64,
          "resnest50": 64, "xception": 71, "simple_pose_resnet18_v1b": None,
          "yolo3_mobilenet1.0_voc": None, "ssd_300_vgg16_atrous_voc": None, "bert_12_768_12": None}
# Trained one step: the classification families and BERT (the default run:
# those of the subset that are quick to compile for training).
TRAINED_FAMILIES = ("AlexNet", "DenseNet", "Inception", "MobileNet", "MobileNet v2", "ResNet v1", "ResNet v2",
                    "SqueezeNet", "VGG", "ResNeXt", "SE-ResNet / SE-ResNeXt", "ResNeSt", "CIFAR ResNet / WideResNet",
                    "MobileNet v3", "DarkNet", "Xception", "ResNet v1b/v1d", "BERT")
TRAINED_SUBSET = ("cifar_resnet20_v1", "mobilenetv3_small", "bert_12_768_12")


def load_gluoncv():
    sys.modules.setdefault("torch", None)  # gluoncv's version check refuses torch 2.x
    try:
        from gluoncv import model_zoo
    except ImportError as e:
        raise RuntimeError("GluonCV is not installed (pip install gluoncv==0.10.5.post0): %s" % e)
    return model_zoo


def export(name, source, shape, work):
    """The zoo's net with random weights, as HybridBlock.export writes it."""
    if source == "gluon":
        net = mx.gluon.model_zoo.vision.get_model(name, pretrained=False)
    else:
        zoo = load_gluoncv()
        classification = name.split("_")[0] in ("resnext50", "se", "resnest50", "cifar", "mobilenetv3",
                                                 "darknet53", "xception", "resnet50")
        net = zoo.get_model(name, pretrained=False, **({} if classification else {"pretrained_base": False}))
    net.initialize()
    net.hybridize()
    net(mx.nd.zeros(shape))
    prefix = os.path.join(work, name)
    net.export(prefix)
    return mx.sym.load(prefix + "-symbol.json")


def export_rnn(name, work):
    """A Gluon recurrent layer on (steps, batch, input) data and its begin
    states, returning its output and final states."""
    layer, options = GLUON_RNN[name]
    net = getattr(mx.gluon.rnn, layer)(RNN_HIDDEN, input_size=RNN_INPUT, **options)
    net.initialize()
    net.hybridize()
    states = net.begin_state(batch_size=RNN_BATCH)
    net(mx.nd.zeros((RNN_STEPS, RNN_BATCH, RNN_INPUT)), states)
    prefix = os.path.join(work, name)
    net.export(prefix)
    shapes = {"data0": (RNN_STEPS, RNN_BATCH, RNN_INPUT)}
    shapes.update({"data%d" % (i + 1): s.shape for i, s in enumerate(states)})
    return mx.sym.load(prefix + "-symbol.json"), shapes


def compare_model(name, base, outputs, tools):
    require_finite(name, outputs)
    if name in DETECTION_MODELS:
        return compare_detections(name, base, outputs, tools)
    compare_outputs(name, base + ".so", base, outputs, tools, MODEL_TOLERANCE)


def compare_detections(name, base, outputs, tools):
    """Each image's detections (row n of every output: id, score, box, ...)
    as a set: random weights give many boxes scores equal to within float32
    rounding, and their order after the sort depends on the order of sums
    (MXNet's own oneDNN and reference kernels keep different boxes of YOLOv3
    on MobileNet and of Mask R-CNN at their top-k cut)."""
    import subprocess
    run = [tools.symc_run, base + ".so", "--params", base + ".params"]
    for i in range(len(outputs)):
        run += ["--output", "%s.symc%d.npy" % (base, i)]
    result = subprocess.run(run, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError("symc-run failed: " + result.stderr.strip())
    got = [np.load("%s.symc%d.npy" % (base, i)) for i in range(len(outputs))]
    for image in range(outputs[0].shape[0]):
        def rows(arrays):
            return np.concatenate([a[image].reshape(a.shape[1], -1) for a in arrays], axis=1)
        expected, candidates = rows(outputs), rows(got)
        unmatched, misses = list(range(len(candidates))), []
        for n, row in enumerate(expected):
            close = [j for j in unmatched if np.all(np.abs(candidates[j] - row) <= MODEL_TOLERANCE * (1 + np.abs(row)))]
            if close:
                unmatched.remove(close[0])
            else:
                misses.append(n)
        # Which of several boxes of the last kept score (column 1) make the
        # top k is a tie either way: they may differ there, and only there.
        valid = [row[1] for row in expected if row[0] >= 0]
        cut = min(valid) if valid else 0.0
        def at_cut(row):
            return abs(row[1] - cut) <= MODEL_TOLERANCE * (1 + abs(cut))
        if not all(at_cut(expected[n]) for n in misses) or not all(at_cut(candidates[j]) for j in unmatched):
            n = misses[0]
            raise RuntimeError("image %d: MXNet's detection %d (%s) is not among symc's" % (image, n, expected[n][:6]))


def check_rnn(name, work, tools, rng):
    sym, shapes = export_rnn(name, work)
    args, aux, outputs = mxnet_forward(sym, shapes, False, rng)
    base = os.path.join(work, name)
    save_arrays(base, args, aux)
    compile_symbol(tools, base, shapes, ["--no-monitor"])
    compare_model(name, base, outputs, tools)
    # oneDNN's RNN computes in float32 only.
    if name not in UNTRAINED_RNN:
        check_training(name, sym, shapes, args, aux, (), work, tools, rng, float64=False)


def export_bert(name, work, small):
    """GluonNLP's BERT with its pooler, random weights and no dropout (so
    that a training step is deterministic), and inputs for it."""
    import gluonnlp as nlp
    vocab = nlp.vocab.BERTVocab(nlp.data.count_tokens(["w%d" % i for i in range(BERT_VOCAB)]))
    options = dict(SMALL_BERT, hparam_allow_override=True) if small else {}
    net, _ = nlp.model.get_model(name, dataset_name=None, vocab=vocab, pretrained=False, use_pooler=True,
                                 use_decoder=False, use_classifier=False, dropout=0.0, **options)
    net.initialize()
    net.hybridize()
    shape = (BERT_BATCH, BERT_LENGTH)
    net(mx.nd.zeros(shape), mx.nd.zeros(shape), mx.nd.array([BERT_LENGTH, BERT_LENGTH // 2]))
    prefix = os.path.join(work, name)
    net.export(prefix)
    return mx.sym.load(prefix + "-symbol.json"), {"data0": shape, "data1": shape, "data2": (BERT_BATCH,)}, len(vocab)


def bert_inputs(sym, shapes, vocab_size, rng):
    """Random parameters; token ids, segment ids and valid lengths."""
    exe = sym.simple_bind(mx.cpu(), grad_req="null", **shapes)
    args = random_arrays(sym.list_arguments(), exe.arg_dict, False, rng)
    args["data0"] = mx.nd.array(rng.integers(0, vocab_size, shapes["data0"]))
    args["data1"] = mx.nd.array(rng.integers(0, 2, shapes["data1"]))
    args["data2"] = mx.nd.array(rng.integers(1, BERT_LENGTH + 1, shapes["data2"]))
    exe.copy_params_from(args, {})
    return args, {}, [o.asnumpy() for o in exe.forward(is_train=False)]


def without_dropout(sym):
    """`sym` with its Dropout layers' p set to 0: symc draws from another
    generator than MXNet's (check_random.py checks what MXNet defines of
    Dropout), so a step through a random mask is not comparable."""
    graph = json.loads(sym.tojson())
    for node in graph["nodes"]:
        if node["op"] == "Dropout":
            node.setdefault("attrs", {})["p"] = "0.0"
    return mx.sym.load_json(json.dumps(graph))


def check_training(name, sym, shapes, args, aux, indices, work, tools, rng, float64=True):
    """One training step: symc's gradients (and updated aux states) against
    MXNet's, float64 ones unless the net has float32-only ops."""
    import subprocess
    base = os.path.join(work, name + "_train")
    sym = without_dropout(sym)
    sym.save(base + "-symbol.json")
    save_arrays(base, args, aux)
    no_index_grads = sum((["--grad-req", a + "=null"] for a in indices), [])
    compile_symbol(tools, base, shapes, ["--train", "--no-monitor"] + no_index_grads)
    heads = [rng.uniform(-1, 1, o.shape).astype("float32") for o in
             sym.simple_bind(mx.cpu(), grad_req="null", **shapes).outputs]
    run = [tools.symc_run, base + ".so", "--params", base + ".params", "--backward", "--grads-out",
           base + ".grads.params"] + no_index_grads
    for output, head in zip(sym.list_outputs(), heads):
        np.save("%s.head_%s.npy" % (base, output), head)
        run += ["--head-grad", "%s=%s.head_%s.npy" % (output, base, output)]
    result = subprocess.run(run, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError("symc-run --backward failed: " + result.stderr.strip())
    got = {k: v.asnumpy() for k, v in mx.nd.load(base + ".grads.params").items()}
    def step(in_float64):
        written, updated_aux = mxnet_backward(sym, shapes, args, aux, heads, indices, in_float64)
        return dict(written, **{"aux:" + k: v for k, v in updated_aux.items()})

    def distance(a, b):
        # Gradients zero by symmetry (attention's key bias: softmax ignores a
        # constant per row) are rounding noise in both: an RMS floor.
        return np.linalg.norm(a - b) / max(np.linalg.norm(b), TRAIN_RMS_FLOOR * np.sqrt(b.size))

    expected = step(float64)
    # Where the float64 step exists, symc (float32) may stray from it as far
    # as MXNet's own float32 step does, NOISE_FACTOR times over.
    noise = {k: distance(v, expected[k]) for k, v in step(False).items()} if float64 else {}
    for key, value in expected.items():
        error, allowed = distance(got[key], value), max(TRAIN_TOLERANCE, NOISE_FACTOR * noise.get(key, 0))
        if error > allowed:
            raise RuntimeError("training step: %s differs by %g (relative L2; allowed %g)" % (key, error, allowed))


def check_bert(name, work, tools, rng, small, train):
    sym, shapes, vocab_size = export_bert(name, work, small)
    args, aux, outputs = bert_inputs(sym, shapes, vocab_size, rng)
    base = os.path.join(work, name)
    save_arrays(base, args, aux)
    compile_symbol(tools, base, shapes, ["--no-monitor"])
    compare_model(name, base, outputs, tools)
    if train:
        # MXNet's interleaved attention products take float32 only.
        check_training(name, sym, shapes, args, aux, ("data0", "data1", "data2"), work, tools, rng, float64=False)


def check_model(name, source, shape, work, tools, rng, train):
    """Checks `name` in a folder of its own, removed after: a deep net's
    artifacts, parameters and gradients take gigabytes, the whole zoo's
    more than a disk may have."""
    work = os.path.join(work, name)
    os.makedirs(work)
    try:
        check_model_in(name, source, shape, work, tools, rng, train)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def check_model_in(name, source, shape, work, tools, rng, train):
    if needs_onednn(name):
        return rerun_with_onednn(__file__, name, tools, *(["--all"] if tools.all else []))
    if source == "gluon_rnn":
        return check_rnn(name, work, tools, rng)
    if source == "gluonnlp":
        return check_bert(name, work, tools, rng, small=shape is None, train=train)
    sym = export(name, source, shape, work)
    shapes = {"data": shape}
    base = os.path.join(work, name)
    if name in UNSUPPORTED:
        import subprocess
        result = subprocess.run(compile_command(tools, base, shapes), capture_output=True, text=True)
        missing = [op for op in UNSUPPORTED[name] if "'%s'" % op not in result.stderr]
        if result.returncode == 0 or "unknown op" not in result.stderr or missing:
            raise RuntimeError("expected an unknown-op error naming %s, got: %s" % (UNSUPPORTED[name],
                                                                                   result.stderr.strip()[:500]))
        return
    args, aux, outputs = mxnet_forward(sym, shapes, False, rng)
    save_arrays(base, args, aux)
    compile_symbol(tools, base, shapes, ["--no-monitor"])
    compare_model(name, base, outputs, tools)
    if train:
        check_training(name, sym, shapes, args, aux, (), work, tools, rng)


def models(everything):
    """(name, source, input shape or None for BERT's small default, whether
    to train it)."""
    for name in GLUON_RNN:
        yield name, "gluon_rnn", None, False
    for source, families in (("gluon", GLUON), ("gluoncv", GLUONCV), ("gluonnlp", GLUONNLP)):
        for family, names in families:
            for name in names:
                if not everything and name not in SUBSET:
                    continue
                train = family in TRAINED_FAMILIES and (everything or name in TRAINED_SUBSET)
                if source == "gluonnlp":
                    yield name, source, (BERT_BATCH, BERT_LENGTH) if everything else None, train
                    continue
                size = (SUBSET.get(name) if not everything else None) or SIZES.get(name, 224)
                yield name, source, SHAPES.get(name, (1, 3, size, size)), train


def main():
    parser = check_parser(__doc__)
    parser.add_argument("--all", action="store_true", help="every model of the zoos, not the subset")
    tools = parser.parse_args()
    rng = np.random.default_rng(0)
    return run_checks("oracle zoo", [
        (name, lambda work, n=name, s=source, shp=shape, t=train: check_model(n, s, shp, work, tools, rng, t))
        for name, source, shape, train in models(tools.all)], tools)


if __name__ == "__main__":
    sys.exit(main())
