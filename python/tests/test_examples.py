"""examples/mxnet_api_training.py runs on symc as written, and on MXNet with
its import changed back: both print the same losses and accuracies."""
import os
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
