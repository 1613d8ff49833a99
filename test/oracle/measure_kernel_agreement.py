#!/usr/bin/env python3
"""How closely MXNet 1.9.1's own two CPU kernel sets agree on the zoo's models.

check_zoo.py compares symc's forward with MXNet's reference kernels
(MXNET_MKLDNN_ENABLED=0) within MODEL_TOLERANCE. This script runs each zoo
model (the same export, weights and inputs as check_zoo) with the reference
kernels here and with oneDNN's (MXNET_MKLDNN_ENABLED=1, which MXNet reads once
at start) in a child process, and prints per model the smallest t for which
|onednn - reference| <= t + t |reference| holds everywhere (the test
`symc-run --rtol t --atol t` applies), and the relative L2 distance.

With --symc and --symc-run, symc's forward is measured against the reference
kernels the same way (the distance check_zoo's MODEL_TOLERANCE bounds).

Gluon's RNN layers are left out: MXNet's reference RNN cannot run them
(cases.needs_onednn). Not a test: a measurement, run by hand
(`python3 measure_kernel_agreement.py [--all] [--only NAME,...] [--symc ... --symc-run ...]`); check_zoo's
docstring cites its figures.
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

os.environ["MXNET_MKLDNN_ENABLED"] = os.environ.get("MXNET_MKLDNN_ENABLED", "0")

import mxnet as mx
import numpy as np

from check_forward import compile_symbol, mxnet_forward, save_arrays
from check_zoo import DETECTION_MODELS, bert_inputs, export, export_bert, models


def onednn_forward(base, shapes):
    """In a child whose MXNet runs oneDNN's kernels: the forward of
    `base`-symbol.json on `base`.params, saved as `base`.onednn.npz."""
    child = ("import sys, numpy as np, mxnet as mx\n"
             "sym = mx.sym.load(sys.argv[1] + '-symbol.json')\n"
             "saved = mx.nd.load(sys.argv[1] + '.params')\n"
             "shapes = {k: tuple(int(d) for d in v.split(',')) for k, v in (a.split('=') for a in sys.argv[2:])}\n"
             "exe = sym.simple_bind(mx.cpu(), grad_req='null', **shapes)\n"
             "exe.copy_params_from({k[4:]: v for k, v in saved.items() if k.startswith('arg:')},\n"
             "                     {k[4:]: v for k, v in saved.items() if k.startswith('aux:')})\n"
             "np.savez(sys.argv[1] + '.onednn.npz', *[o.asnumpy() for o in exe.forward(is_train=False)])\n")
    result = subprocess.run([sys.executable, "-c", child, base] +
                            ["%s=%s" % (k, ",".join(map(str, v))) for k, v in shapes.items()],
                            env=dict(os.environ, MXNET_MKLDNN_ENABLED="1"), capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError("oneDNN forward failed: " + result.stderr.strip()[-2000:])
    with np.load(base + ".onednn.npz") as saved:
        return [saved["arr_%d" % i] for i in range(len(saved.files))]


def detection_rows(got, reference):
    """Each image's detections (row n of every output), `got`'s matched to
    `reference`'s nearest first: near-equal scores sort in either order,
    which only the set of detections, as check_zoo compares it, does not see."""
    pairs = []
    for image in range(reference[0].shape[0]):
        def rows(arrays):
            return np.concatenate([a[image].reshape(a.shape[1], -1) for a in arrays], axis=1)
        candidates, expected = rows(got), rows(reference)
        unmatched = list(range(len(candidates)))
        order = []
        for row in expected:
            nearest = min(unmatched, key=lambda j: float(np.max(np.abs(candidates[j] - row) / (1 + np.abs(row)))))
            unmatched.remove(nearest)
            order.append(nearest)
        pairs.append((candidates[order], expected))
    return [g for g, _ in pairs], [r for _, r in pairs]


def agreement(got, reference, detections=False):
    """(the smallest rtol = atol that passes, relative L2) over all outputs."""
    if detections:
        got, reference = detection_rows(got, reference)
    tolerance = max(float(np.max(np.abs(g - r) / (1 + np.abs(r)), initial=0)) for g, r in zip(got, reference))
    squared = sum(float(np.sum((g.astype(np.float64) - r) ** 2)) for g, r in zip(got, reference))
    norm = sum(float(np.sum(r.astype(np.float64) ** 2)) for r in reference)
    return tolerance, float(np.sqrt(squared / max(norm, 1e-30)))


def symc_forward(base, shapes, count, tools):
    compile_symbol(tools, base, shapes, ["--no-monitor"])
    outputs = ["%s.symc%d.npy" % (base, i) for i in range(count)]
    subprocess.run([tools.symc_run, base + ".so", "--params", base + ".params"] +
                   sum((["--output", o] for o in outputs), []), check=True, capture_output=True)
    return [np.load(o) for o in outputs]


def measure(name, source, shape, work, rng, tools):
    if source == "gluonnlp":
        sym, shapes, vocab_size = export_bert(name, work, small=shape is None)
        args, aux, reference = bert_inputs(sym, shapes, vocab_size, rng)
    else:
        sym, shapes = export(name, source, shape, work), {"data": shape}
        args, aux, reference = mxnet_forward(sym, shapes, False, rng)
    base = os.path.join(work, name)
    save_arrays(base, args, aux)
    detections = name in DETECTION_MODELS
    onednn = agreement(onednn_forward(base, shapes), reference, detections)
    if not tools.symc:
        return onednn
    sym.save(base + "-symbol.json")
    return onednn + agreement(symc_forward(base, shapes, len(reference), tools), reference, detections)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--all", action="store_true", help="every model of the zoos, not check_zoo's subset")
    parser.add_argument("--only", help="only the models whose name contains one of these (comma-separated)")
    parser.add_argument("--symc", help="measure symc's forward too")
    parser.add_argument("--symc-run", dest="symc_run")
    options = parser.parse_args()
    options.cpu = "native"
    rng = np.random.default_rng(0)
    header = ("model", "oneDNN rtol=atol", "rel. L2") + (("symc rtol=atol", "rel. L2") if options.symc else ())
    print(("%-32s" + " %16s" * (len(header) - 1)) % header, flush=True)
    with tempfile.TemporaryDirectory() as work:
        for name, source, shape, _ in models(options.all):
            if source == "gluon_rnn" or (options.only and not any(o in name for o in options.only.split(","))):
                continue
            folder = os.path.join(work, name)  # one model's files at a time: the zoo's take tens of GB
            os.makedirs(folder)
            try:
                figures = measure(name, source, shape, folder, rng, options)
                print(("%-32s" + " %16.3g" * len(figures)) % ((name,) + figures), flush=True)
            except Exception as e:  # report and go on: a measurement, not a test
                print("%-32s failed: %s" % (name, str(e).splitlines()[-1][:200]), flush=True)
            finally:
                shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
