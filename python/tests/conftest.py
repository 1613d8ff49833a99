"""The same scripts against MXNet 1.9.1 and symc.

`backend` runs a test once per framework module (`mxnet`, `symc`); the
parity tests run one script with each and compare what they return. symc's
compiled models go to a cache under pytest's temporary directory.
"""
import importlib
import os

import numpy as np
import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# MXNet's oneDNN build fuses nodes into _sg_mkldnn_* ones at bind, which its
# debug_str then shows; the graphs compared here are MXNet's own.
os.environ.setdefault("MXNET_SUBGRAPH_BACKEND", "NONE")


@pytest.fixture(scope="session", autouse=True)
def symc_cache(tmp_path_factory):
    os.environ.setdefault("SYMC_CACHE_DIR", str(tmp_path_factory.mktemp("symc-cache")))


def frameworks():
    """mxnet and symc, the modules the parity scripts take as `mx`."""
    return importlib.import_module("mxnet"), importlib.import_module("symc")


def assert_same(mxnet_result, symc_result, rtol=1e-5, atol=1e-6, path="result"):
    """Results of one script under both frameworks agree (nested dicts, lists, arrays)."""
    if isinstance(mxnet_result, dict):
        assert sorted(mxnet_result) == sorted(symc_result), path
        for key in mxnet_result:
            assert_same(mxnet_result[key], symc_result[key], rtol, atol, "%s[%r]" % (path, key))
    elif isinstance(mxnet_result, (list, tuple)):
        assert len(mxnet_result) == len(symc_result), path
        for i, (a, b) in enumerate(zip(mxnet_result, symc_result)):
            assert_same(a, b, rtol, atol, "%s[%d]" % (path, i))
    elif isinstance(mxnet_result, (np.ndarray, np.generic, float, int)):
        np.testing.assert_allclose(symc_result, mxnet_result, rtol=rtol, atol=atol, err_msg=path)
    else:
        assert mxnet_result == symc_result, "%s: %r != %r" % (path, mxnet_result, symc_result)


def run_both(script, *args, **kwargs):
    """Runs `script(mx, ...)` with MXNet, then with symc, and compares."""
    mxnet, symc = frameworks()
    expected = script(mxnet, *args, **kwargs)
    got = script(symc, *args, **kwargs)
    assert_same(expected, got)
    return got
