#!/usr/bin/env python3
"""Data-parallel training across processes: the scaling of a ResNet-18
training step (batch 16 of 224x224, SoftmaxOutput head, SGD with momentum)
from one process to `mpirun -np 2`, and the gradient all-reduce against Open
MPI's own MPI_Allreduce of the same sizes.

  python3 bench/dist_bench.py --symc build/bin/symc [--rounds 3] [--steps 5]

One process runs the whole batch on one context with SYMC_BENCH_THREADS
threads (2); each of the two processes runs half the batch with half the
threads, its gradients summed over the processes (kvstore dist_sync:
libsymrt_mpi's bucketed MPI_Allreduce) before the same SGD step. A round
runs the two configurations one after the other; the table reports the best
over rounds of each one's median step. The all-reduce rows time symc's
SymcMpiAllReduceGradients on the model's gradients (11.7M floats, 4 MB
buckets, with the copies into and out of each bucket) and a bare
MPI_Allreduce of one buffer that size and of one 4 MB bucket, in GB/s of
gradient summed.
"""
import argparse
import ctypes
import os
import re
import shutil
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
THREADS = int(os.environ.get("SYMC_BENCH_THREADS", "2"))
BATCH = 16
BUCKET_FLOATS = (4 << 20) // 4


def export_resnet18(base):
    """Gluon's resnet18_v1 with a SoftmaxOutput head, random weights."""
    import mxnet as mx
    net = mx.gluon.model_zoo.vision.get_model("resnet18_v1", pretrained=False)
    net.initialize(mx.init.Xavier())
    net.hybridize()
    net(mx.nd.zeros((1, 3, 224, 224)))
    net.export(base)
    sym = mx.sym.SoftmaxOutput(mx.sym.load(base + "-symbol.json"), name="softmax")
    sym.save(base + "-symbol.json")


def mpi_env():
    return dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
                OMPI_MCA_rmaps_base_oversubscribe="1", PYTHONPATH=os.path.join(HERE, "..", "python"))


def run_worker(artifact, processes, steps):
    """The workers' printed lines (rank 0's)."""
    threads = max(1, THREADS // processes)
    command = [sys.executable, os.path.abspath(__file__), "--worker", artifact, "--steps", str(steps),
               "--threads", str(threads), "--processes", str(processes)]
    if processes > 1:
        command = ["mpirun", "-np", str(processes), "--bind-to", "none", "-x", "PYTHONPATH"] + command
    out = subprocess.run(command, capture_output=True, text=True, env=mpi_env(), timeout=1200)
    if out.returncode != 0:
        raise RuntimeError("worker failed: " + (out.stdout + out.stderr)[-2000:])
    return dict(re.findall(r"^(\w+) ([0-9.]+)$", out.stdout, re.M))


def open_mpi():
    """Open MPI's libmpi and the handles a bare MPI_Allreduce takes."""
    mpi = ctypes.CDLL("libmpi.so.40", mode=ctypes.RTLD_GLOBAL)
    handle = lambda name: ctypes.c_void_p(ctypes.addressof(ctypes.c_char.in_dll(mpi, name)))
    return mpi, handle("ompi_mpi_float"), handle("ompi_mpi_op_sum"), handle("ompi_mpi_comm_world")


def bare_allreduce_ms(floats, repeat):
    """Median ms of MPI_Allreduce(MPI_IN_PLACE) of `floats` float32s."""
    from timing import median_ms
    mpi, dtype, op, comm = open_mpi()
    buffer = np.ones(floats, np.float32)
    pointer = buffer.ctypes.data_as(ctypes.c_void_p)
    in_place = ctypes.c_void_p(1)
    return median_ms(lambda: mpi.MPI_Allreduce(in_place, pointer, ctypes.c_int(floats), dtype, op, comm), repeat)


def worker(options):
    """One process: a training step on its rows of the batch, timed."""
    sys.path.insert(0, os.path.join(HERE, "..", "python"))
    sys.path.insert(0, HERE)
    import symc
    from symc.base import c_str, check_call
    from symc.executor_manager import DataParallelExecutorGroup
    from timing import median_ms

    kv = symc.kv.create("dist_sync" if options.processes > 1 else "local")
    rows = BATCH // kv.num_workers
    artifact = symc.Artifact(options.worker)
    params = [n for n in artifact.list_arguments() if n not in ("data", "softmax_label")]

    class Batch:
        provide_data = [("data", (rows, 3, 224, 224))]
        provide_label = [("softmax_label", (rows,))]
        rng = np.random.RandomState(kv.rank)
        data = [rng.uniform(-1, 1, (rows, 3, 224, 224)).astype(np.float32)]
        label = [rng.randint(0, 1000, rows).astype(np.float32)]

    group = DataParallelExecutorGroup(artifact, artifact.list_arguments(), params, [symc.cpu(0)],
                                      [slice(0, rows)], Batch)
    group.set_num_threads(options.threads)
    rng = np.random.RandomState(0)
    for block in group.param_arrays:
        np.asarray(block[0])[...] = rng.normal(0, 0.05, block[0].shape)
    kv.init(group)
    sgd = symc.optimizer.SGD(learning_rate=0.01, momentum=0.9, wd=1e-4, rescale_grad=1.0 / BATCH)

    def step():
        group.load_data_batch(Batch)
        group.forward(is_train=True)
        group.backward()
        kv.sum_gradients(group)
        group.update(sgd)

    step_ms = median_ms(step, options.steps, warmup=1)
    if kv.rank == 0:
        print("step_ms %f" % step_ms)
    if options.processes > 1:
        floats = sum(int(np.prod(block[0].shape)) for block in group.grad_arrays)
        symc_ms = median_ms(lambda: check_call(kv._mpi.SymcMpiAllReduceGradientsEx(group.handle, c_str("dist_sync"))),
                            options.steps * 2)
        whole_ms = bare_allreduce_ms(floats, options.steps * 2)
        bucket_ms = bare_allreduce_ms(BUCKET_FLOATS, options.steps * 4)
        if kv.rank == 0:
            print("floats %d" % floats)
            print("symc_allreduce_ms %f" % symc_ms)
            print("mpi_allreduce_ms %f" % whole_ms)
            print("mpi_bucket_ms %f" % bucket_ms)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--symc", help="the symc compiler")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--threads", type=int, default=THREADS, help=argparse.SUPPRESS)
    parser.add_argument("--processes", type=int, default=1, help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.worker:
        return worker(options)
    if not options.symc or not shutil.which("mpirun"):
        parser.error("--symc is required, and mpirun (openmpi-bin)")
    cpu = re.search(r"model name\s*: (.*)", open("/proc/cpuinfo").read()).group(1)
    print("%s, %d threads in all, load %s at start" % (cpu, THREADS, open("/proc/loadavg").read().split()[0]))
    with tempfile.TemporaryDirectory() as work:
        base = os.path.join(work, "resnet18")
        export_resnet18(base)
        artifact = base + ".so"
        subprocess.run([options.symc, "compile", base + "-symbol.json", "-q", "-o", artifact, "--train",
                        "--no-monitor", "--grad-req=data=null", "--grad-req=softmax_label=null",
                        "--shape=data=%d|%d,3,224,224" % (BATCH, BATCH // 2)],
                       check=True)
        best = {}
        for _ in range(options.rounds):
            for processes in (1, 2):
                for key, value in run_worker(artifact, processes, options.steps).items():
                    name = "%s_%d" % (key, processes)
                    best[name] = min(best.get(name, float(value)), float(value))
    one, two = best["step_ms_1"], best["step_ms_2"]
    print("\n| processes x threads | step ms (batch %d) | images/s | speedup |" % BATCH)
    print("|---|---:|---:|---:|")
    print("| 1 x %d | %.1f | %.1f | 1.00 |" % (THREADS, one, BATCH * 1e3 / one))
    print("| 2 x %d | %.1f | %.1f | %.2f |" % (max(1, THREADS // 2), two, BATCH * 1e3 / two, one / two))
    gigabytes = best["floats_2"] * 4 / 1e9
    print("\n| all-reduce over 2 processes | floats | ms | GB/s summed |")
    print("|---|---:|---:|---:|")
    print("| symc (SymcMpiAllReduceGradients, 4 MB buckets) | %d | %.2f | %.2f |" % (
        best["floats_2"], best["symc_allreduce_ms_2"], gigabytes / best["symc_allreduce_ms_2"] * 1e3))
    print("| MPI_Allreduce, one buffer of the same size | %d | %.2f | %.2f |" % (
        best["floats_2"], best["mpi_allreduce_ms_2"], gigabytes / best["mpi_allreduce_ms_2"] * 1e3))
    print("| MPI_Allreduce, one 4 MB bucket | %d | %.3f | %.2f |" % (
        BUCKET_FLOATS, best["mpi_bucket_ms_2"], BUCKET_FLOATS * 4 / 1e9 / best["mpi_bucket_ms_2"] * 1e3))
    print("\nload %s at end" % open("/proc/loadavg").read().split()[0])
    return 0


if __name__ == "__main__":
    sys.exit(main())
