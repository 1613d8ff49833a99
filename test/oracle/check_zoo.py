#!/usr/bin/env python3
"""The model zoos users deploy, compiled by symc and compared with MXNet 1.9.1.

Every network of MXNet's Gluon model zoo and GluonCV's classification,
segmentation and pose families is built by the zoo itself with random weights
(pretrained=False), hybridized and exported as `HybridBlock.export` writes it,
then compiled with `symc compile` and run with `symc-run --compare` against
MXNet's forward. Outputs agree within MODEL_TOLERANCE (relative and absolute):
MXNet's reference kernels and symc sum in different orders through 50-200
layers. Networks that need ops symc does not have yet must fail with the
unknown-op error naming them (UNSUPPORTED), so this list shrinks as ops land.

The default run checks a representative subset (a few minutes); --all runs
every model (the `check-zoo` build target, about 25 minutes on 2 cores).
GluonCV 0.10.5 refuses to import beside torch 2.x: torch is hidden from it.
"""
import os
import sys
import tempfile
import warnings

os.environ.setdefault("MXNET_MKLDNN_ENABLED", "0")
os.environ.setdefault("MXNET_STORAGE_FALLBACK_LOG_VERBOSE", "0")
warnings.filterwarnings("ignore")

import mxnet as mx
import numpy as np

from cases import check_parser, run_checks
from check_forward import compare_outputs, compile_command, compile_symbol, mxnet_forward, save_arrays

MODEL_TOLERANCE = 1e-3

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
    ("SSD", ["ssd_512_mobilenet1.0_voc"]),
    ("YOLOv3", ["yolo3_mobilenet1.0_voc"]),
    ("Faster R-CNN", ["faster_rcnn_resnet50_v1b_voc"]),
)
# Input sizes the zoos build their nets for; the segmentation nets resize to
# a size fixed at construction.
SIZES = {"inceptionv3": 299, "xception": 299, "cifar_resnet20_v1": 32, "cifar_wideresnet16_10": 32,
         "fcn_resnet50_voc": 480, "psp_resnet50_ade": 480, "deeplab_resnet50_ade": 480,
         "ssd_512_mobilenet1.0_voc": 512, "yolo3_mobilenet1.0_voc": 416, "faster_rcnn_resnet50_v1b_voc": 600}
SHAPES = {"simple_pose_resnet18_v1b": (1, 3, 256, 192)}
# Networks whose ops symc lacks so far: the ops the unknown-op error must name.
UNSUPPORTED = {
    "ssd_512_mobilenet1.0_voc": ["_arange", "slice_like", "_contrib_box_decode", "_contrib_box_nms"],
    "yolo3_mobilenet1.0_voc": ["_arange", "slice_like", "tile", "repeat", "_contrib_box_nms"],
    "faster_rcnn_resnet50_v1b_voc": ["_arange", "repeat", "slice_like", "_contrib_box_decode", "shape_array",
                                     "reverse", "_contrib_box_nms", "_contrib_ROIAlign"],
}
# The default run: one net per new op family, small inputs where the net
# allows them.
SUBSET = {"squeezenet1.1": 224, "cifar_resnet20_v1": 32, "se_resnet18_v1": 64, "mobilenetv3_small": 64,
          "resnest50": 64, "xception": 71, "simple_pose_resnet18_v1b": None,
          "yolo3_mobilenet1.0_voc": None}


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


def check_model(name, source, shape, work, tools, rng):
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
    compare_outputs(name, base + ".so", base, outputs, tools, MODEL_TOLERANCE)


def models(everything):
    for source, families in (("gluon", GLUON), ("gluoncv", GLUONCV)):
        for _, names in families:
            for name in names:
                if everything or name in SUBSET:
                    size = (SUBSET.get(name) if not everything else None) or SIZES.get(name, 224)
                    yield name, source, SHAPES.get(name, (1, 3, size, size))


def main():
    parser = check_parser(__doc__)
    parser.add_argument("--all", action="store_true", help="every model of the zoos, not the subset")
    tools = parser.parse_args()
    rng = np.random.default_rng(0)
    return run_checks("oracle zoo", [
        (name, lambda work, n=name, s=source, shp=shape: check_model(n, s, shp, work, tools, rng))
        for name, source, shape in models(tools.all)], tools)


if __name__ == "__main__":
    sys.exit(main())
