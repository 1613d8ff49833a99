"""examples/mxnet_api_training.py runs on symc as written, and on MXNet with
its import changed back: both print the same losses and accuracies."""
import os
import pathlib
import re
import shutil
import subprocess
import sys

import pytest

from conftest import REPO

SCRIPT = os.path.join(REPO, "examples", "mxnet_api_training.py")


def run(script):
    env = dict(os.environ, PYTHONPATH=os.path.join(REPO, "python"))
    result = subprocess.run([sys.executable, script], capture_output=True, text=True, env=env, timeout=600)
    assert result.returncode == 0, result.stderr
    return [[float(x) for x in re.findall(r"[0-9]+\.[0-9]+", line)] for line in result.stdout.splitlines()]


def test_training_script_on_symc_and_mxnet(tmp_path):
    pytest.importorskip("mxnet")
    with open(SCRIPT) as f:
        source = f.read()
    assert "\nimport symc as mx\n" in source
    mxnet_script = tmp_path / "mxnet_api_training.py"
    mxnet_script.write_text(source.replace("\nimport symc as mx\n", "\nimport mxnet as mx\n"))
    shutil.copy(os.path.join(REPO, "examples", "mlp-symbol.json"), tmp_path)
    symc_epochs, mxnet_epochs = run(SCRIPT), run(str(mxnet_script))
    assert len(symc_epochs) == 4
    for got, expected in zip(symc_epochs, mxnet_epochs):
        assert got == pytest.approx(expected, abs=2e-3)
    assert symc_epochs[-1][0] < symc_epochs[0][0] / 2  # the loss fell


DATA_PARALLEL = os.path.join(REPO, "examples", "train_data_parallel.py")


def run_data_parallel(*options):
    """The metric values of each line train_data_parallel.py logs (Speed and
    Time cost lines left out: they differ from run to run)."""
    env = dict(os.environ, PYTHONPATH=os.path.join(REPO, "python"))
    result = subprocess.run([sys.executable, DATA_PARALLEL, "--epochs", "3"] + list(options), capture_output=True,
                            text=True, env=env, timeout=600)
    assert result.returncode == 0, result.stderr
    values = []
    for line in result.stdout.splitlines():
        line = re.sub(r"Speed: [0-9.]+ samples/sec", "", line)
        if "Time cost" not in line:
            values.append([float(x) for x in re.findall(r"=([0-9]+\.[0-9]+)", line)])
    return [v for v in values if v], result.stdout


@pytest.mark.parametrize("model,tolerance", [("mlp", 1e-4), ("lenet", 1e-3)])
def test_data_parallel_fit_on_symc_and_mxnet(tmp_path, model, tolerance):
    """FeedForward.fit over cpu(0) and cpu(1) logs MXNet's numbers, and MXNet
    loads the checkpoint it saves."""
    mx = pytest.importorskip("mxnet")
    prefix = str(tmp_path / model)
    symc_values, symc_log = run_data_parallel("--model", model, "--prefix", prefix)
    mxnet_values, _ = run_data_parallel("--model", model, "--mxnet")
    assert "Start training with [cpu(0), cpu(1)]" in symc_log
    assert len(symc_values) == len(mxnet_values) == 18  # each epoch: 4 Speedometer lines, 2 validation lines
    for got, expected in zip(symc_values, mxnet_values):
        assert got == pytest.approx(expected, abs=tolerance)
    assert symc_values[-2][0] < symc_values[0][0] / 2  # the cross-entropy fell
    sym, args, aux = mx.model.load_checkpoint(prefix, 3)
    assert sorted(args) == sorted(n for n in sym.list_arguments() if n not in ("data", "softmax_label"))
    assert sym.list_outputs() == ["softmax_output"]


def mpirun(*command, timeout=300, collective_timeout=240, output_dir=None):
    """`mpirun -np 2 COMMAND` (as root too, more ranks than cores allowed);
    a collective waits at most `collective_timeout` seconds (the first one
    waits for the other rank's compile). With `output_dir`, each rank's
    stdout goes to its own file there (rank_output), not interleaved."""
    if not shutil.which("mpirun"):
        pytest.skip("no mpirun (openmpi-bin)")
    import symc
    if not os.path.exists(os.path.join(os.path.dirname(symc.base.lib._name), "libsymrt_mpi.so.0.2")):
        pytest.skip("symc was built without Open MPI (libsymrt_mpi)")
    env = dict(os.environ, PYTHONPATH=os.path.join(REPO, "python"), OMPI_ALLOW_RUN_AS_ROOT="1",
               OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMPI_MCA_rmaps_base_oversubscribe="1", SYMC_MPI_TIMEOUT=str(collective_timeout))
    options = ["--output-filename", str(output_dir)] if output_dir else []
    return subprocess.run(["mpirun", "-np", "2", "-x", "PYTHONPATH", "-x", "SYMC_MPI_TIMEOUT"] + options + list(command),
                          capture_output=True, text=True, env=env, timeout=timeout)


def rank_output(output_dir, rank):
    """What rank `rank` of an mpirun with `output_dir` wrote to stdout."""
    (path,) = pathlib.Path(output_dir).glob("*/rank.%d/stdout" % rank)
    return path.read_text()


def validation_lines(log):
    return [line for line in log.splitlines() if "Validation" in line or "final" in line]


def test_data_parallel_fit_over_mpi_processes(tmp_path):
    """Two processes of one context each (kvstore dist_sync, each on its rows
    of the job's batches of 100) compute what one process with two contexts
    and batches of 100 computes."""
    result = mpirun(sys.executable, DATA_PARALLEL, "--epochs", "2", "--contexts", "1", "--kvstore", "dist_sync",
                    output_dir=tmp_path)
    assert result.returncode == 0, result.stderr
    single = subprocess.run([sys.executable, DATA_PARALLEL, "--epochs", "2", "--contexts", "2", "--batch-size", "100"],
                            capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=os.path.join(REPO, "python")),
                            timeout=300)
    expected = validation_lines(single.stdout)
    got = validation_lines(rank_output(tmp_path, 0) + rank_output(tmp_path, 1))
    assert len(expected) == 5 and len(got) == 10  # each rank logs its own
    assert sorted(got) == sorted(expected * 2)


MPI_CHECKS = """
import sys, symc
from symc.base import check_call
kv = symc.kv.create("dist_sync")
if sys.argv[1] == "differ":
    try:
        check_call(kv._mpi.SymcMpiCheckSame(b"the compiled artifact", b"digest of rank %d" % kv.rank))
    except symc.MXNetError as e:
        print("rank %d: %s" % (kv.rank, e))
elif kv.rank == 1:
    if sys.argv[1] == "dies":
        sys.exit(3)  # before the collective rank 0 waits in
    import time
    time.sleep(600)  # stalls: never reaches the collective
else:
    check_call(kv._mpi.SymcMpiCheckSame(b"x", b"y"))
"""


def test_mpi_errors_reach_every_rank(tmp_path):
    script = tmp_path / "checks.py"
    script.write_text(MPI_CHECKS)
    result = mpirun(sys.executable, str(script), "differ")
    assert result.returncode == 0, result.stderr
    for rank in (0, 1):
        assert ("rank %d: the workers differ in the compiled artifact: rank(s) 1 differ from rank 0" % rank
                in result.stdout)
    # A rank that stalls ends the job on every rank after the collective's
    # timeout, not a hang.
    result = mpirun(sys.executable, str(script), "stalls", timeout=120, collective_timeout=10)
    assert result.returncode != 0
    assert "symc: rank 0: the check of the workers' models did not complete within 10 s" in result.stderr
    # A rank that dies ends it too: mpirun sees the exit, or rank 0's wait
    # times out, whichever comes first.
    result = mpirun(sys.executable, str(script), "dies", timeout=120, collective_timeout=10)
    assert result.returncode != 0
