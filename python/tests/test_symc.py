"""What symc's package adds to MXNet's API: compiling and loading artifacts,
zero-copy numpy interop, and its errors."""
import hashlib
import os

import numpy as np
import pytest

import symc
from conftest import REPO

AXPB = os.path.join(REPO, "test", "e2e", "axpb-symbol.json")
LENET = os.path.join(REPO, "examples", "lenet-symbol.json")
CONV_PACKED = os.path.join(REPO, "test", "e2e", "conv-packed-symbol.json")


def test_compile_load_and_lists(tmp_path):
    art = symc.compile(LENET, data=(None, 1, 28, 28), output=str(tmp_path / "lenet.so"))
    assert art.list_arguments()[:3] == ["data", "conv1_weight", "conv1_bias"]
    assert art.list_outputs() == ["softmax_output"]
    assert art.arguments[0].shape == (-1, 1, 28, 28)  # the dynamic batch
    assert not art.has_backward
    again = symc.load(str(tmp_path / "lenet.so"))
    assert again.list_arguments() == art.list_arguments()
    exe = again.simple_bind(symc.cpu(), grad_req="null", data=(3, 1, 28, 28))
    assert exe.outputs[0].shape == (3, 10)


def test_verify_and_load_refuse_modified_artifacts(tmp_path):
    path = str(tmp_path / "axpb.so")
    symc.compile(AXPB, a=(2,), b=(2,), output=path)
    data = open(path, "rb").read()
    digest = symc.verify(path)
    assert digest == hashlib.sha256(data[:-48]).hexdigest()
    assert symc.load(path, sha256=digest.upper()).list_outputs() == ["_plus0_output"]
    with pytest.raises(symc.MXNetError, match="not the expected " + "0" * 64):
        symc.load(path, sha256="0" * 64)
    patched = str(tmp_path / "patched.so")
    open(patched, "wb").write(data[:100] + bytes([data[100] ^ 1]) + data[101:])
    with pytest.raises(symc.MXNetError, match="does not match its seal"):
        symc.verify(patched)
    with pytest.raises(symc.MXNetError, match="cannot load artifact .*patched.so: the file does not match its seal"):
        symc.load(patched)


def test_shape_variants_serve_several_image_sizes(tmp_path):
    """One artifact compiled for 8x8 and 12x12 images runs both, through
    simple_bind and reshape, with MXNet's numbers."""
    import mxnet as mx
    path = os.path.join(REPO, "test", "e2e", "conv-gap-symbol.json")
    art = symc.compile(path, data=(None, 2, (8, 12), (8, 12)), monitor=False, output=str(tmp_path / "sizes.so"))
    assert [v.arguments[0].shape for v in art.shape_variants] == [(-1, 2, 8, 12), (-1, 2, 12, 8), (-1, 2, 12, 12)]
    assert art.runs({"data": (5, 2, 12, 8)}) and not art.runs({"data": (5, 2, 10, 10)})
    ours = art.simple_bind(symc.cpu(), grad_req="null", data=(2, 2, 8, 8))
    theirs = mx.sym.load(path).simple_bind(mx.cpu(), grad_req="null", data=(2, 2, 8, 8))
    rng = np.random.RandomState(3)
    for mine, other in ((ours.arg_dict, theirs.arg_dict), (ours.aux_dict, theirs.aux_dict)):
        for name, array in other.items():
            value = rng.uniform(0.5, 1, array.shape).astype("float32")
            array[:] = value
            mine[name][:] = value
    for shape in ((2, 2, 8, 8), (1, 2, 12, 12), (3, 2, 8, 12)):
        x = rng.uniform(-1, 1, shape).astype("float32")
        ours_r = ours.reshape(allow_up_sizing=True, data=shape, softmax_label=shape[:1])
        theirs_r = theirs.reshape(allow_up_sizing=True, data=shape, softmax_label=shape[:1])
        np.testing.assert_allclose(ours_r.forward(data=x)[0].asnumpy(),
                                   theirs_r.forward(data=mx.nd.array(x))[0].asnumpy(), rtol=1e-5, atol=1e-6)
    with pytest.raises(symc.MXNetError, match=r"compile with symc compile --shape 'data=\?,2,8\|10\|12,8\|10\|12'"):
        ours.reshape(allow_up_sizing=True, data=(2, 2, 10, 10))


def test_compile_is_cached():
    first = symc.compile(AXPB, a=(2,), b=(2,))
    second = symc.compile(AXPB, shapes={"a": (2,), "b": (2,)})
    assert first.path == second.path and os.path.exists(first.path)


def test_outputs_are_numpy_views_without_copies():
    exe = symc.compile(AXPB, a=(2,), b=(2,)).simple_bind(symc.cpu(), grad_req="null")
    view = np.asarray(exe.outputs[0])
    exe.forward(a=np.array([1, 2], "float32"), b=np.array([2, 3], "float32"))
    np.testing.assert_array_equal(view, [4, 7])  # the executor's memory, refreshed in place
    exe.forward(a=np.array([0, 0], "float32"))
    np.testing.assert_array_equal(view, [2, 3])


def test_bind_numpy_arrays_without_copies():
    a, b = np.array([1, 2], "float32"), np.array([2, 3], "float32")
    exe = symc.compile(AXPB, a=(2,), b=(2,)).bind(symc.cpu(), {"a": a, "b": b})
    a[0] = 5
    np.testing.assert_array_equal(exe.forward()[0].asnumpy(), [12, 7])
    exe.arg_dict["b"][:] = 0
    np.testing.assert_array_equal(b, [0, 0])


def _conv3x3_relu(x, w, b):
    """relu(conv(x, w) + b) with zero padding 1, in numpy."""
    padded = np.pad(x[0], ((0, 0), (1, 1), (1, 1)))
    out = np.zeros((w.shape[0],) + x.shape[2:], "float64")
    for i in range(3):
        for j in range(3):
            out += np.einsum("fc,chw->fhw", w[:, :, i, j], padded[:, i:i + x.shape[2], j:j + x.shape[3]])
    return np.maximum(out + b[:, None, None], 0)[None]


def test_packed_weights_see_every_write():
    """The convolution reads its weight packed once per change of the
    weight: every way of writing it is seen by the next forward."""
    art = symc.compile(CONV_PACKED, data=(1, 3, 5, 5))
    exe = art.simple_bind(symc.cpu(), grad_req="null")
    rng = np.random.default_rng(0)
    x, b = rng.uniform(-1, 1, (1, 3, 5, 5)).astype("f4"), rng.uniform(-1, 1, 32).astype("f4")
    w = rng.uniform(-1, 1, (32, 3, 3, 3)).astype("f4")
    exe.arg_dict["data"][:] = x
    exe.arg_dict["conv_weight"][:] = w
    exe.arg_dict["conv_bias"][:] = b

    def check(executor, weight):
        np.testing.assert_allclose(executor.forward()[0].asnumpy(), _conv3x3_relu(x, weight, b), rtol=1e-4, atol=1e-4)

    check(exe, w)
    first = exe.arg_dict["conv_weight"][0:4]  # a view, taken before the forward
    exe.forward()
    first[:] = 0.5
    w[0:4] = 0.5
    check(exe, w)
    exe.arg_dict["conv_weight"][:] *= 2  # as the README's training loop writes
    check(exe, 2 * w)
    # Numpy memory bound as the weight: writes there are seen too.
    mine = w.copy()
    bound = art.bind(symc.cpu(), {"data": x, "conv_weight": mine, "conv_bias": b})
    check(bound, mine)
    mine *= -1
    check(bound, mine)


def test_ndarray_basics(tmp_path):
    x = symc.nd.array([[1, 2], [3, 4]])
    assert x.dtype == np.float32 and x.shape == (2, 2) and x.size == 4
    y = x * 2 + 1
    np.testing.assert_array_equal(y.asnumpy(), [[3, 5], [7, 9]])
    x[:] -= symc.nd.ones((2, 2))
    np.testing.assert_array_equal(x.asnumpy(), [[0, 1], [2, 3]])
    view = x.reshape((4,))
    view[0] = 9
    assert x.asnumpy()[0, 0] == 9
    assert str(x.context) == "cpu(0)"
    symc.nd.save(str(tmp_path / "x.params"), {"x": x})
    np.testing.assert_array_equal(symc.nd.load(str(tmp_path / "x.params"))["x"].asnumpy(), x.asnumpy())
    buf = (tmp_path / "x.params").read_bytes()
    assert sorted(symc.nd.load_frombuffer(buf)) == ["x"]


def test_compile_errors_name_the_node(tmp_path):
    bad = tmp_path / "bad-symbol.json"
    bad.write_text('{"nodes": [{"op": "null", "name": "data", "inputs": []}, '
                   '{"op": "NoSuchOp", "name": "mystery", "inputs": [[0, 0, 0]]}], '
                   '"arg_nodes": [0], "heads": [[1, 0, 0]]}')
    with pytest.raises(symc.MXNetError, match="unknown op: 'NoSuchOp' \\(node 'mystery'\\)"):
        symc.compile(str(bad), data=(1,))


def test_runtime_errors_keep_mxnet_kinds():
    art = symc.compile(AXPB, a=(2,), b=(2,))
    with pytest.raises(RuntimeError, match="simple_bind error"):
        art.simple_bind(symc.cpu(), a=(3,))
    with pytest.raises(symc.MXNetError, match="compiled for the CPU"):
        art.simple_bind(symc.gpu(0))
    with pytest.raises(ValueError, match="Duplicate names detected"):
        from symc.executor import _get_dict
        _get_dict(["a", "a"], [None, None])


def test_random_seed_repeats_dropout(tmp_path):
    import json
    sym = {"nodes": [{"op": "null", "name": "data", "inputs": []},
                     {"op": "Dropout", "name": "drop", "attrs": {"p": "0.5"}, "inputs": [[0, 0, 0]]}],
           "arg_nodes": [0], "heads": [[1, 0, 0]]}
    art = symc.compile(json.dumps(sym), data=(64,), train=True)
    exe = art.simple_bind(symc.cpu(), grad_req="null")
    ones = np.ones(64, "float32")
    symc.random.seed(7)
    first = exe.forward(is_train=True, data=ones)[0].asnumpy()
    symc.random.seed(7)
    np.testing.assert_array_equal(exe.forward(is_train=True, data=ones)[0].asnumpy(), first)
    assert 0 < (first == 0).sum() < 64


def test_partial_forward_steps_through_the_nodes():
    """Executor::PartialForward, which MXNet 1.9 keeps out of Python: a step
    per node of the graph (variables included), the monitor called back for
    each op's step, the outputs those of forward."""
    exe = symc.compile(AXPB, a=(2,), b=(2,)).simple_bind(symc.cpu(), grad_req="null")
    exe.arg_dict["a"][:] = np.array([1, 2], "float32")
    exe.arg_dict["b"][:] = np.array([2, 3], "float32")
    seen = []
    exe.set_monitor_callback(lambda name, array: seen.append((step, name.decode())))
    nodes = len(exe._artifact.list_arguments()) + 2  # a, b, _mulscalar0, _plus0
    left = []
    for step in range(nodes):
        left.append(exe.partial_forward(step=step))
    assert left == list(range(nodes - 1, -1, -1))
    assert [name for _, name in seen] == ["_mulscalar0_output", "_plus0_output"]
    np.testing.assert_array_equal(exe.outputs[0].asnumpy(), [4, 7])
    assert exe.partial_forward(step=nodes) == 0


class _Batch:
    def __init__(self, data, label, bucket_key):
        self.data, self.label, self.bucket_key = data, label, bucket_key
        self.provide_data = [("data", data[0].shape)]
        self.provide_label = [("softmax_label", label[0].shape)]


class _BucketIter:
    batch_size, default_bucket_key = 4, "a"
    provide_data = [("data", (4, 16))]
    provide_label = [("softmax_label", (4,))]


def test_executor_manager_buckets_share_parameters():
    """sym_gen: a bucket's executor group shares the default one's
    parameters, gradients and memory (shared_group)."""
    from symc.executor_manager import DataParallelExecutorManager
    sym = symc.sym.load(os.path.join(REPO, "examples", "mlp-symbol.json"))
    params = [n for n in sym.list_arguments() if n not in ("data", "softmax_label")]
    mgr = DataParallelExecutorManager(sym, [symc.cpu(0), symc.cpu(1)], _BucketIter(), sym.list_arguments(), params,
                                      [], sym_gen=lambda key: sym)
    default = mgr.execgrp
    rng = np.random.RandomState(0)
    batch = _Batch([rng.uniform(-1, 1, (4, 16)).astype("float32")], [np.array([0, 1, 2, 3], "float32")], "b")
    mgr.load_data_batch(batch)
    assert mgr.curr_execgrp is not default and set(mgr.execgrp_bucket) == {"a", "b"}
    for mine, shared in zip(mgr.param_arrays, default.param_arrays):
        for device in range(2):
            np.asarray(shared[device])[...] = rng.normal(0, 0.5, shared[device].shape)
            assert (np.asarray(mine[device]) == np.asarray(shared[device])).all()
    mgr.forward(is_train=True)
    mgr.backward()
    mgr.aggregate_gradients()
    assert np.abs(np.asarray(mgr.curr_execgrp.grad_arrays[0][0])).sum() > 0


def test_kvstore_types_sum_gradients():
    """'device' on CPU contexts sums as 'local'; 'nccl' needs GPUs."""
    from symc.executor_manager import DataParallelExecutorManager
    sym = symc.sym.load(os.path.join(REPO, "examples", "mlp-symbol.json"))
    params = [n for n in sym.list_arguments() if n not in ("data", "softmax_label")]
    rng = np.random.RandomState(1)
    batch = _Batch([rng.uniform(-1, 1, (4, 16)).astype("float32")], [np.array([0, 1, 2, 3], "float32")], "a")
    sums = []
    for name in ("local", "device"):
        kv = symc.kv.create(name)
        mgr = DataParallelExecutorManager(sym, [symc.cpu(0), symc.cpu(1)], _BucketIter(), sym.list_arguments(),
                                          params, [])
        for block in mgr.param_arrays:
            for array in block:
                np.asarray(array)[...] = np.linspace(-0.5, 0.5, array.size).reshape(array.shape)
        mgr.curr_execgrp.set_num_threads(1)  # each executor one thread
        mgr.load_data_batch(batch)
        mgr.forward(is_train=True)
        mgr.backward()
        kv.sum_gradients(mgr.curr_execgrp)
        sums.append([np.asarray(block[1]).copy() for block in mgr.curr_execgrp.grad_arrays])
    for local, device in zip(*sums):
        assert (local == device).all()
    assert symc.kv.create("nccl").type == "nccl"
    with pytest.raises(symc.MXNetError, match=r"NCCL sums arrays on GPUs, not on cpu\(0\)"):
        mgr.curr_execgrp.aggregate_gradients("nccl")
    with pytest.raises(ValueError, match="Unknown KVStore type dist_async"):
        symc.kv.create("dist_async")
