#!/usr/bin/env python3
"""symc against MXNet 1.9.1 (oneDNN), ONNX Runtime, OpenVINO (f32) and PyTorch
on the model zoo: forward latency, every engine in the same run.

Runs under the peers' interpreter (bench/requirements-peers.txt):

  python3 -m venv /opt/symc-peers
  /opt/symc-peers/bin/pip install -r bench/requirements-peers.txt
  /opt/symc-peers/bin/python bench/peers_bench.py --symc build/bin/symc \\
      --symc-run build/bin/symc-run [--models resnet18_v1,vgg16] [--batches 1,16]

Each model comes from Gluon's model zoo with random weights, exported as
HybridBlock.export writes it; MXNet's own ONNX exporter (mx.onnx, opset 19
with onnx 1.14) turns it into the file ONNX Runtime and OpenVINO load, its
weights as initializers only (as a deployed ONNX file has them, so that both
engines fold and fuse them). PyTorch runs that file too, turned into a module
by onnx2torch, traced, frozen and optimized for inference (TorchScript's CPU
path, whose oneDNN fusions beat eager mode and torch.compile here). Every
engine gets SYMC_BENCH_THREADS threads (2), the same weights and input; each engine's output is checked against MXNet's
(1e-3) before it is timed. A round times each engine in a fresh process, the
engines alternating; the table reports the best over --rounds of the median
of --repeat forwards, and symc's ratio to each peer. symc's compile time is
that of `symc compile` for the shape.

--baseline SYMC adds an earlier build of the compiler (a lever's "before"),
its artifact timed in the same rounds as the others, and the ratio of
symc's time to it.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

from timing import median_ms

THREADS = os.environ.get("SYMC_BENCH_THREADS", "2")
os.environ["OMP_NUM_THREADS"] = THREADS
PEERS = ("mxnet", "onnxruntime", "openvino", "pytorch")
TOLERANCE = 1e-3
DEFAULT_MODELS = ("resnet18_v1", "resnet50_v1", "resnet34_v2", "vgg16", "mobilenetv2_1.0", "mobilenet0.25",
                  "squeezenet1.1", "densenet121", "inceptionv3")


def input_size(model):
    return 299 if model.startswith("inception") else 224


def export(model, batch, base):
    """The zoo model's symbol, params, input, MXNet's output and the ONNX file."""
    import mxnet as mx
    import numpy as np
    import onnx
    net = mx.gluon.model_zoo.vision.get_model(model, pretrained=False)
    net.initialize(mx.init.Xavier())
    net.hybridize()
    size = input_size(model)
    data = mx.nd.array(np.random.default_rng(0).uniform(-1, 1, (batch, 3, size, size)))
    net(data)
    net.export(base)
    sym, args, aux = mx.model.load_checkpoint(base, 0)
    # BatchNorm statistics away from 0 and 1, the means about 0: means of
    # 0.5 to 1.5 left every ResNet's and Inception's output all zeros (each
    # relu's input below 0), which any engine's output matched.
    rng = np.random.default_rng(1)
    for name, value in aux.items():
        low, high = (-0.2, 0.2) if name.endswith("running_mean") else (0.5, 1.5)
        value[:] = rng.uniform(low, high, value.shape)
    mx.model.save_checkpoint(base, 0, sym, args, aux)
    arrays = {"arg:" + k: v for k, v in args.items()}
    arrays.update({"aux:" + k: v for k, v in aux.items()})
    arrays["arg:data"] = data
    mx.nd.save(base + ".params", arrays)
    np.save(base + ".input.npy", data.asnumpy())
    exe = sym.simple_bind(mx.cpu(), grad_req="null", data=data.shape)
    exe.copy_params_from(dict(args, data=data), aux)
    np.save(base + ".mxnet_out.npy", exe.forward(is_train=False)[0].asnumpy())
    params = dict(args)
    params.update(aux)
    mx.onnx.export_model(sym, params, in_shapes=[data.shape], in_types=[np.float32],
                         onnx_file_path=base + ".onnx")
    graph = onnx.load(base + ".onnx")
    initializers = {i.name for i in graph.graph.initializer}
    for graph_input in [i for i in graph.graph.input if i.name in initializers]:
        graph.graph.input.remove(graph_input)
    onnx.save(graph, base + ".onnx")


def engine_forward(engine, base):
    """A function running one forward of `engine`, and its output."""
    import numpy as np
    data = np.load(base + ".input.npy")
    threads = int(THREADS)
    if engine == "mxnet":
        import mxnet as mx
        sym, args, aux = mx.model.load_checkpoint(base, 0)
        exe = sym.simple_bind(mx.cpu(), grad_req="null", data=data.shape)
        exe.copy_params_from(dict(args, data=mx.nd.array(data)), aux)

        def forward():
            exe.forward(is_train=False)
            exe.outputs[0].wait_to_read()
        return forward, lambda: exe.outputs[0].asnumpy()
    if engine == "onnxruntime":
        import onnxruntime as ort
        options = ort.SessionOptions()
        options.intra_op_num_threads, options.inter_op_num_threads = threads, 1
        session = ort.InferenceSession(base + ".onnx", options, providers=["CPUExecutionProvider"])
        feed = {session.get_inputs()[0].name: data}
        result = {}

        def forward():
            result["out"] = session.run(None, feed)[0]
        return forward, lambda: result["out"]
    if engine == "pytorch":
        return pytorch_forward(base, data, threads)
    import openvino as ov
    compiled = ov.Core().compile_model(base + ".onnx", "CPU", {"INFERENCE_NUM_THREADS": threads,
                                                                "INFERENCE_PRECISION_HINT": "f32",
                                                                "PERFORMANCE_HINT": "LATENCY"})
    request = compiled.create_infer_request()

    def forward():
        request.infer({0: data})
    return forward, lambda: request.get_output_tensor(0).data.copy()


def onnx2torch_for_opset19():
    """onnx2torch 1.5.15 converts opsets up to 18; MXNet's exporter (onnx 1.14)
    writes opset 19, whose AveragePool only adds dilations (which it never
    sets) and whose Identity only adds types: both converted as before."""
    from onnx2torch.node_converters import registry
    for op in ("AveragePool", "Identity"):
        known = [d for d in registry._CONVERTER_REGISTRY if d.operation_type == op and d.domain == ""]
        newest = max(known, key=lambda d: d.version)
        registry._CONVERTER_REGISTRY.setdefault(newest._replace(version=19), registry._CONVERTER_REGISTRY[newest])


def pytorch_forward(base, data, threads):
    import onnx2torch
    import torch
    onnx2torch_for_opset19()
    torch.set_num_threads(threads)
    data = torch.from_numpy(data)
    with torch.no_grad():
        module = onnx2torch.convert(base + ".onnx").eval()
        traced = torch.jit.optimize_for_inference(torch.jit.freeze(torch.jit.trace(module, data).eval()))
    result = {}

    def forward():
        with torch.no_grad():
            result["out"] = traced(data)
    return forward, lambda: result["out"].numpy()


def worker(engine, base, repeat):
    import numpy as np
    forward, output = engine_forward(engine, base)
    forward()
    error = float(np.abs(output() - np.load(base + ".mxnet_out.npy")).max())
    if error > TOLERANCE:
        raise SystemExit("%s differs from MXNet by %g" % (engine, error))
    print("ms %f" % median_ms(forward, repeat))


def peer_ms(engine, base, repeat):
    out = subprocess.run([sys.executable, os.path.abspath(__file__), "--worker", engine, "--base", base,
                          "--repeat", str(repeat)], capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError("%s: %s" % (engine, (out.stdout + out.stderr).strip()[-500:]))
    return float(re.search(r"^ms ([0-9.]+)", out.stdout, re.M).group(1))


def symc_compile(compiler, base, artifact, shape):
    start = time.perf_counter()
    subprocess.run([compiler, "compile", base + "-symbol.json", "-q", "-o", artifact,
                    "--shape=data=" + ",".join(map(str, shape))], check=True)
    return time.perf_counter() - start


def symc_ms(tools, base, artifact, repeat):
    out = subprocess.run([tools.symc_run, artifact, "--params", base + ".params", "--threads", THREADS,
                          "--compare", base + ".mxnet_out.npy", "--rtol", str(TOLERANCE), "--atol", str(TOLERANCE),
                          "--bench", str(repeat)], capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError("symc: " + (out.stdout + out.stderr).strip()[-500:])
    return float(re.search(r"median ([0-9.]+) ms", out.stdout).group(1))


def load_average():
    return open("/proc/loadavg").read().split()[0]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--symc")
    parser.add_argument("--symc-run", dest="symc_run")
    parser.add_argument("--baseline", help="an earlier symc compiler, timed beside --symc")
    parser.add_argument("--models", default=",".join(DEFAULT_MODELS))
    parser.add_argument("--batches", default="1,16")
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--worker", choices=PEERS, help=argparse.SUPPRESS)
    parser.add_argument("--base", help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.worker:
        return worker(options.worker, options.base, options.repeat)
    if not (options.symc and options.symc_run):
        parser.error("--symc and --symc-run are required")
    cpu = re.search(r"model name\s*: (.*)", open("/proc/cpuinfo").read()).group(1)
    avx512 = "avx512f" in open("/proc/cpuinfo").read()
    print("%s, AVX-512 %s, %s threads each, load %s at start" % (cpu, "yes" if avx512 else "no", THREADS,
                                                                 load_average()), flush=True)
    before = ["symc before ms", "symc/before"] if options.baseline else []
    columns = ["model", "batch", "symc compile s", "symc ms"] + before[:1] + [
        "MXNet ms", "ORT ms", "OpenVINO ms", "PyTorch ms", "symc/MXNet", "symc/ORT", "symc/OpenVINO",
        "symc/PyTorch"] + before[1:] + ["load"]
    print("| " + " | ".join(columns) + " |", flush=True)
    print("|---|" + "---:|" * (len(columns) - 1), flush=True)
    engines = ("symc",) + (("before",) if options.baseline else ()) + PEERS
    with tempfile.TemporaryDirectory() as work:
        for model in options.models.split(","):
            for batch in map(int, options.batches.split(",")):
                base = os.path.join(work, "%s_b%d" % (model, batch))
                export(model, batch, base)
                shape = (batch, 3, input_size(model), input_size(model))
                compile_s = symc_compile(options.symc, base, base + ".so", shape)
                if options.baseline:
                    symc_compile(options.baseline, base, base + "-before.so", shape)
                best = {}
                for _ in range(options.rounds):
                    for engine in engines:
                        if engine in ("symc", "before"):
                            artifact = base + (".so" if engine == "symc" else "-before.so")
                            ms = symc_ms(options, base, artifact, options.repeat)
                        else:
                            ms = peer_ms(engine, base, options.repeat)
                        best[engine] = min(best.get(engine, ms), ms)
                row = [model, str(batch), "%.1f" % compile_s, "%.2f" % best["symc"]]
                row += ["%.2f" % best["before"]] if options.baseline else []
                row += ["%.2f" % best[peer] for peer in PEERS]
                row += ["%.2f" % (best["symc"] / best[peer]) for peer in PEERS]
                row += ["%.2f" % (best["symc"] / best["before"])] if options.baseline else []
                print("| " + " | ".join(row + [load_average()]) + " |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
