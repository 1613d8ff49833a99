#!/usr/bin/env python3
"""symc against MXNet 1.9.1 (and PyTorch when installed) on this machine, in one run.

Forward latency (median of N) for MLP 784-512-512-10 batch 64 and ResNet-18 v1
224x224 batch 1 and 16, training steps (forward + backward, every gradient
written) of the MLP and of ResNet-18 v1, ResNet-50 v1 and MobileNet v2 1.0 at
batch 16 (PyTorch runs the symbol MXNet's ONNX exporter writes, turned into a
module by onnx2torch; the MLP of torch.nn.Linear), same random weights for
every framework, plus single-precision GEMMs against OpenBLAS (numpy's). Each measurement runs in
--rounds rounds that alternate the peers, and the best median counts: on a
shared machine, noise only ever slows a run down. Prints a table with ratios
and writes it to --out.

  bench/run_bench.py --symc build/bin/symc --symc-run build/bin/symc-run
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

THREADS = os.environ.get("SYMC_BENCH_THREADS", "2")
os.environ["OMP_NUM_THREADS"] = THREADS  # MXNet's oneDNN and OpenMP pools
os.environ.setdefault("MXNET_SUBGRAPH_VERBOSE", "0")

import mxnet as mx  # noqa: E402
import numpy as np  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "test", "oracle"))
from models import mlp, zoo  # noqa: E402
from peers_bench import onnx2torch_for_opset19  # noqa: E402
from timing import median_ms  # noqa: E402


def symc_ms(tools, base, shapes, repeat, with_params, train=False):
    cmd = [tools.symc, "compile", base + "-symbol.json", "-q", "-o", base + ".so"]
    cmd += ["--shape=%s=%s" % (k, ",".join(map(str, v))) for k, v in shapes.items()]
    subprocess.run(cmd + (["--train"] if train else []), check=True)
    run = [tools.symc_run, base + ".so", "--bench", str(repeat), "--threads", THREADS, "--allow-missing"]
    run += ["--backward"] if train else []
    if with_params:
        run += ["--params", base + ".params"]
    out = subprocess.run(run, check=True, capture_output=True, text=True).stdout
    return float(re.search(r"median ([0-9.]+) ms", out).group(1))


def with_softmax_loss(model):
    return lambda: mx.sym.SoftmaxOutput(zoo(model)[0], name="softmax")


def workloads():
    resnet = lambda: zoo("resnet18_v1")[0]  # noqa: E731
    return {"mlp": ("MLP 784-512-512-10, batch 64", mlp, {"data": (64, 784)}),
            "mlp_train": ("MLP 784-512-512-10, batch 64, training step", mlp, {"data": (64, 784)}),
            "resnet18_b1": ("ResNet-18 v1 224x224, batch 1", resnet, {"data": (1, 3, 224, 224)}),
            "resnet18_b16": ("ResNet-18 v1 224x224, batch 16", resnet, {"data": (16, 3, 224, 224)}),
            "resnet18_b16_train": ("ResNet-18 v1 224x224, batch 16, training step (SoftmaxOutput loss)",
                                   with_softmax_loss("resnet18_v1"), {"data": (16, 3, 224, 224)}),
            "resnet50_b16_train": ("ResNet-50 v1 224x224, batch 16, training step (SoftmaxOutput loss)",
                                   with_softmax_loss("resnet50_v1"), {"data": (16, 3, 224, 224)}),
            "mobilenetv2_b16_train": ("MobileNet v2 1.0 224x224, batch 16, training step (SoftmaxOutput loss)",
                                      with_softmax_loss("mobilenetv2_1.0"), {"data": (16, 3, 224, 224)})}


def mxnet_worker(name, work, repeat):
    """Saves the workload's symbol and random params, then times MXNet.

    Runs in its own process so that MXNet's OpenMP threads, which spin for a
    while after each forward, never compete with symc's."""
    _, build, shapes = workloads()[name]
    sym = build()
    forward, params = mxnet_model(sym, shapes, np.random.default_rng(0), is_training(name))
    base = os.path.join(work, name)
    sym.save(base + "-symbol.json")
    mx.nd.save(base + ".params", params)
    print("mxnet_ms %f" % median_ms(forward, repeat))
    np.save(base + ".mxnet_out.npy", forward.outputs[0].asnumpy())


def is_training(name):
    return name.endswith("_train")


def mxnet_model(sym, shapes, rng, train=False):
    exe = sym.simple_bind(mx.cpu(), grad_req="write" if train else "null", **shapes)
    for name, arr in exe.arg_dict.items():
        fan_in = int(np.prod(arr.shape[1:])) if len(arr.shape) > 1 else 1
        arr[:] = rng.integers(0, 10, arr.shape) if name.endswith("label") else \
            rng.uniform(-1, 1, arr.shape) * np.sqrt(3.0 / fan_in)
    for name, arr in exe.aux_dict.items():  # means about 0 (see peers_bench.export)
        low, high = (-0.2, 0.2) if name.endswith(("running_mean", "moving_mean")) else (0.5, 1.5)
        arr[:] = rng.uniform(low, high, arr.shape)
    params = {"arg:" + k: v for k, v in exe.arg_dict.items()}
    params.update({"aux:" + k: v for k, v in exe.aux_dict.items()})

    def forward():
        exe.forward(is_train=train)
        if train:
            exe.backward()
            for grad in exe.grad_arrays:
                grad.wait_to_read()
        exe.outputs[0].wait_to_read()
    forward.outputs = exe.outputs
    return forward, params


def torch_model(name, base, params):
    """The workload's logits in PyTorch with the MXNet params, and whether the
    symbol ends in a SoftmaxOutput. A zoo model is the symbol exported by
    MXNet's own ONNX exporter, turned into a module by onnx2torch; the MLP is
    built of torch.nn.Linear (the exporter writes each of its FullyConnected
    layers as a Gemm between shape computations onnx2torch cannot convert)."""
    import onnx2torch
    import torch
    sym = mx.sym.load(base + "-symbol.json")
    with_softmax = json.loads(sym.tojson())["nodes"][-1]["op"] == "SoftmaxOutput"
    weights = {k.split(":", 1)[1]: v for k, v in params.items() if k not in ("arg:data", "arg:softmax_label")}
    if name.startswith("mlp"):
        layers = []
        for layer in ("fc0", "fc1", "fc_out"):
            linear = torch.nn.Linear(*weights[layer + "_weight"].shape[::-1])
            linear.weight.data = torch.from_numpy(weights[layer + "_weight"].asnumpy())
            linear.bias.data = torch.from_numpy(weights[layer + "_bias"].asnumpy())
            layers += [linear, torch.nn.ReLU()]
        return torch.nn.Sequential(*layers[:-1]), with_softmax
    logits = sym.get_children()[0] if with_softmax else sym
    mx.onnx.export_model(logits, weights, in_shapes=[params["arg:data"].shape], in_types=[np.float32],
                         onnx_file_path=base + ".onnx")
    onnx2torch_for_opset19()
    return onnx2torch.convert(base + ".onnx"), with_softmax


def torch_worker(name, work, repeat):
    """Times the workload in PyTorch with the params and input MXNet saved, and
    checks that it computes MXNet's output."""
    import torch
    torch.set_num_threads(int(THREADS))
    base = os.path.join(work, name)
    params = mx.nd.load(base + ".params")
    model, with_softmax = torch_model(name, base, params)
    data = torch.from_numpy(params["arg:data"].asnumpy())
    if is_training(name):
        return print("torch_ms %f" % median_ms(torch_training_step(model, data, params), repeat))
    model = torch.nn.Sequential(model, torch.nn.Softmax(dim=1)) if with_softmax else model
    with torch.inference_mode():
        out = model.eval()(data)
        error = float(np.abs(out.numpy() - np.load(base + ".mxnet_out.npy")).max())
        if error > 1e-3:
            raise RuntimeError("PyTorch %s differs from MXNet by %g" % (name, error))
        print("torch_ms %f" % median_ms(lambda: model(data), repeat))


def torch_training_step(model, data, params):
    """forward + backward of the cross-entropy (SoftmaxOutput's gradient), in
    training mode (BatchNorm with batch statistics)."""
    import torch
    logits = model.train()
    label = torch.from_numpy(params["arg:softmax_label"].asnumpy().astype("int64").clip(0, 9))
    data.requires_grad_(True)
    loss_fn = torch.nn.CrossEntropyLoss(reduction="sum")

    def step():
        for p in list(logits.parameters()) + [data]:
            p.grad = None
        loss_fn(logits(data), label).backward()
    return step


def torch_available():
    try:
        import onnx2torch  # noqa: F401
        import torch  # noqa: F401
        return True
    except ImportError:
        return False


def gemm_symc_gflops(tools, work, m, k, n, repeat):
    a, b = mx.sym.Variable("a"), mx.sym.Variable("b")
    base = os.path.join(work, "gemm_%d_%d_%d" % (m, k, n))
    mx.sym.dot(a, b).save(base + "-symbol.json")
    ms = symc_ms(tools, base, {"a": (m, k), "b": (k, n)}, repeat, with_params=False)
    return 2.0 * m * k * n / ms / 1e6


def gemm_openblas_gflops(m, k, n, repeat):
    code = ("import numpy as np,time\n"
            "a=np.random.rand(%d,%d).astype('float32');b=np.random.rand(%d,%d).astype('float32')\n"
            "[a@b for _ in range(3)]\nt=[]\n"
            "for _ in range(%d):\n s=time.perf_counter();a@b;t.append(time.perf_counter()-s)\n"
            "t.sort();print(t[len(t)//2])\n") % (m, k, k, n, repeat)
    env = dict(os.environ, OPENBLAS_NUM_THREADS=THREADS)
    out = subprocess.run([sys.executable, "-c", code], env=env, check=True, capture_output=True, text=True)
    return 2.0 * m * k * n / float(out.stdout) / 1e9


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--symc", required=True)
    parser.add_argument("--symc-run", dest="symc_run", required=True)
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--only", help="run only the workloads whose key contains this (no GEMMs)")
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results.md"))
    parser.add_argument("--mxnet-worker", dest="worker", help=argparse.SUPPRESS)
    parser.add_argument("--torch-worker", dest="torch_worker", help=argparse.SUPPRESS)
    parser.add_argument("--work", help=argparse.SUPPRESS)
    tools = parser.parse_args()
    if tools.worker:
        return mxnet_worker(tools.worker, tools.work, tools.repeat)
    if tools.torch_worker:
        return torch_worker(tools.torch_worker, tools.work, tools.repeat)

    lines = ["# symc forward benchmark", "",
             "Machine: %s, %s threads; MXNet %s (pip, oneDNN); best of %d rounds of the median of %d "
             "forwards." % (cpu_name(), THREADS, mx.__version__, tools.rounds, tools.repeat), "",
             "| workload | symc ms | MXNet ms | symc/MXNet | PyTorch ms | symc/PyTorch |",
             "|---|---:|---:|---:|---:|---:|"]
    have_torch = torch_available()
    with tempfile.TemporaryDirectory() as work:
        def worker(flag, name, key):
            run = subprocess.run([sys.executable, __file__, "--symc", tools.symc, "--symc-run",
                                  tools.symc_run, flag, name, "--work", work, "--repeat", str(tools.repeat)],
                                 capture_output=True, text=True)
            if run.returncode != 0:
                raise RuntimeError("%s %s: %s" % (flag, name, (run.stdout + run.stderr).strip()[-800:]))
            return float(re.search(key + r" ([0-9.]+)", run.stdout).group(1))
        for name, (title, _, shapes) in workloads().items():
            if tools.only and tools.only not in name:
                continue
            mx_ms = sy_ms = pt_ms = float("inf")
            with_torch = have_torch
            for _ in range(tools.rounds):
                mx_ms = min(mx_ms, worker("--mxnet-worker", name, "mxnet_ms"))
                sy_ms = min(sy_ms, symc_ms(tools, os.path.join(work, name), shapes, tools.repeat,
                                           with_params=True, train=is_training(name)))
                if with_torch:
                    pt_ms = min(pt_ms, worker("--torch-worker", name, "torch_ms"))
            lines.append("| %s | %.2f | %.2f | %.2f | %s | %s |" % (
                title, sy_ms, mx_ms, sy_ms / mx_ms, "%.2f" % pt_ms if with_torch else "n/a",
                "%.2f" % (sy_ms / pt_ms) if with_torch else "n/a"))
            print(lines[-1], flush=True)
        if not tools.only:
            lines += ["", "| GEMM f32 (M x K x N) | symc GFLOP/s | OpenBLAS GFLOP/s | symc/OpenBLAS |",
                      "|---|---:|---:|---:|"]
            for m, k, n in [(1024, 1024, 1024), (64, 784, 512), (64, 576, 3136), (256, 2304, 196),
                            (512, 4608, 49)]:
                sy = max(gemm_symc_gflops(tools, work, m, k, n, tools.repeat) for _ in range(tools.rounds))
                ob = max(gemm_openblas_gflops(m, k, n, tools.repeat) for _ in range(tools.rounds))
                lines.append("| %d x %d x %d | %.1f | %.1f | %.2f |" % (m, k, n, sy, ob, sy / ob))
                print(lines[-1], flush=True)
    with open(tools.out, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


def cpu_name():
    for line in open("/proc/cpuinfo"):
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return "unknown CPU"


if __name__ == "__main__":
    main()
