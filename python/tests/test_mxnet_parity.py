"""MXNet scripts that run unchanged on symc: each script takes the framework
module as `mx` and returns what it computed; MXNet 1.9.1 and symc must agree,
numbers, names and errors alike."""
import json
import os
import re

import numpy as np
import pytest

from conftest import REPO, frameworks, run_both

mxnet = pytest.importorskip("mxnet")


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    """Symbols (saved by MXNet) and initial parameters the scripts share."""
    mx = mxnet
    work = tmp_path_factory.mktemp("models")
    data = mx.sym.Variable("data")
    fc1 = mx.sym.FullyConnected(data, num_hidden=16, name="fc1")
    act = mx.sym.Activation(fc1, act_type="relu", name="relu1")
    fc2 = mx.sym.FullyConnected(act, num_hidden=4, name="fc2")
    mlp = mx.sym.SoftmaxOutput(fc2, name="softmax")
    a, b = mx.sym.Variable("a"), mx.sym.Variable("b")
    axpb = 2 * a + b
    conv = mx.sym.Convolution(data, kernel=(3, 3), num_filter=4, pad=(1, 1), name="conv")
    bn = mx.sym.BatchNorm(conv, fix_gamma=False, name="bn")
    convnet = mx.sym.Pooling(mx.sym.Activation(bn, act_type="relu"), kernel=(2, 2), stride=(2, 2),
                             pool_type="max", name="pool")
    grouped = mx.sym.Group([mx.sym.SoftmaxOutput(fc2, name="loss"), mx.sym.BlockGrad(fc2, name="scores")])
    paths = {}
    docstring = 2 * a + mx.sym.sin(a)  # executor.debug_str's docstring example
    take = mx.sym.take(a, b, mode="raise", name="tk")
    gather = mx.sym.gather_nd(a, b, name="gnd")
    for name, sym in (("mlp", mlp), ("axpb", axpb), ("convnet", convnet), ("grouped", grouped),
                      ("docstring", docstring), ("take", take), ("gather_nd", gather)):
        paths[name] = str(work / (name + "-symbol.json"))
        sym.save(paths[name])
    rng = np.random.RandomState(0)
    params = {"fc1_weight": rng.normal(0, 0.5, (16, 8)), "fc1_bias": rng.normal(0, 0.1, 16),
              "fc2_weight": rng.normal(0, 0.5, (4, 16)), "fc2_bias": rng.normal(0, 0.1, 4)}
    paths["mlp_params"] = str(work / "mlp-0000.params")
    mx.nd.save(paths["mlp_params"], {"arg:" + k: mx.nd.array(v) for k, v in params.items()})
    paths["x"] = rng.uniform(-1, 1, (6, 8)).astype("float32")
    paths["y"] = rng.randint(0, 4, 6).astype("float32")
    paths["images"] = rng.uniform(-1, 1, (2, 3, 6, 6)).astype("float32")
    return paths


def params_of(mx, path):
    """A checkpoint's arg:/aux: arrays, as mx.model.load_checkpoint splits them."""
    saved = mx.nd.load(path)
    args = {k[4:]: v for k, v in saved.items() if k.startswith("arg:")}
    aux = {k[4:]: v for k, v in saved.items() if k.startswith("aux:")}
    return args, aux


def mlp_sgd(mx, models):
    """simple_bind, copy_params_from, forward/backward, arg_dict/grad_dict, SGD."""
    sym = mx.sym.load(models["mlp"])
    exe = sym.simple_bind(mx.cpu(), data=(6, 8), grad_req="write")
    args, aux = params_of(mx, models["mlp_params"])
    exe.copy_params_from(args, aux)
    losses = []
    for _ in range(5):
        exe.forward(is_train=True, data=mx.nd.array(models["x"]), softmax_label=mx.nd.array(models["y"]))
        probs = exe.outputs[0].asnumpy()
        losses.append(float(-np.log(probs[np.arange(6), models["y"].astype(int)]).mean()))
        exe.backward()
        for name in ("fc1_weight", "fc1_bias", "fc2_weight", "fc2_bias"):
            weight, grad = exe.arg_dict[name], exe.grad_dict[name]
            weight[:] -= 0.5 * grad
    return {"losses": losses, "names": sorted(exe.arg_dict), "outputs": list(exe.output_dict),
            "weights": {k: exe.arg_dict[k].asnumpy() for k in args}}


def test_mlp_sgd(models):
    result = run_both(mlp_sgd, models)
    assert result["losses"][-1] < result["losses"][0]


def bind_lists_and_dicts(mx, models):
    """bind with a list and with a dict, no copies, args_grad as a dict subset,
    grad_req 'add' accumulating across backwards, head gradients."""
    sym = mx.sym.load(models["axpb"])
    a, b = mx.nd.array([1, 2]), mx.nd.array([2, 3])
    by_list = sym.bind(mx.cpu(), [a, b])
    a[:] = mx.nd.array([10, 20])  # bound, not copied: the next forward sees it
    first = by_list.forward()[0].asnumpy()
    grad_b = mx.nd.ones((2,))
    exe = sym.bind(mx.cpu(), {"a": a, "b": b}, args_grad={"b": grad_b}, grad_req="add")
    out = exe.forward(is_train=True)[0]
    exe.backward(out)
    exe.backward([mx.nd.array([1, 1])])
    return {"first": first, "second": out.asnumpy(), "grad_b": grad_b.asnumpy(),
            "grad_a": exe.grad_arrays[0] is None}


def test_bind_lists_and_dicts(models):
    run_both(bind_lists_and_dicts, models)


def conv_bn_training(mx, models):
    """BatchNorm's moving statistics and aux_dict after a training step."""
    sym = mx.sym.load(models["convnet"])
    exe = sym.simple_bind(mx.cpu(), data=(2, 3, 6, 6))
    rng = np.random.RandomState(1)
    exe.arg_dict["conv_weight"][:] = rng.normal(0, 0.3, (4, 3, 3, 3))
    exe.arg_dict["bn_gamma"][:] = 1.5
    exe.aux_dict["bn_moving_var"][:] = 1
    exe.forward(is_train=True, data=models["images"])
    out = exe.outputs[0].asnumpy()
    exe.backward(mx.nd.ones(out.shape))
    inference = exe.forward(is_train=False)[0].asnumpy()
    return {"train_out": out, "inference_out": inference, "aux": sorted(exe.aux_dict),
            "moving_mean": exe.aux_dict["bn_moving_mean"].asnumpy(),
            "moving_var": exe.aux_dict["bn_moving_var"].asnumpy(),
            "grad_weight": exe.grad_dict["conv_weight"].asnumpy()}


def test_conv_bn_training(models):
    mxnet_result = conv_bn_training(mxnet, models)
    symc_result = conv_bn_training(frameworks()[1], models)
    from conftest import assert_same
    assert_same(mxnet_result, symc_result, rtol=1e-4, atol=1e-5)


def loss_with_blockgrad_head(mx, models):
    """A loss grouped with a BlockGrad'ed output: backward() needs no head gradient."""
    sym = mx.sym.load(models["grouped"])
    exe = sym.simple_bind(mx.cpu(), data=(6, 8), grad_req={"fc1_weight": "write", "fc2_weight": "write"})
    args, _ = params_of(mx, models["mlp_params"])
    exe.copy_params_from(args)
    exe.forward(is_train=True, data=models["x"], loss_label=models["y"])
    exe.backward()
    return {"outputs": [o.asnumpy() for o in exe.outputs], "reqs_null": [g is None for g in exe.grad_arrays],
            "grad_fc1": exe.grad_dict["fc1_weight"].asnumpy()}


def test_grad_req_dict_and_groups(models):
    run_both(loss_with_blockgrad_head, models)


def error_of(call):
    """(exception type, message); MXNet's C++ errors lose their traceback
    lines and CHECK prefix, which symc does not print."""
    import re
    try:
        call()
    except Exception as e:  # noqa: BLE001 - the kind is what is compared
        lines = [line for line in str(e).split("\n") if line.strip()]
        if lines and lines[0].startswith("Traceback"):
            message = re.sub(r"^MXNetError: (Check failed: [^:]*: )?", "", lines[-1])
        else:
            message = lines[0] if lines else ""
        return type(e).__name__, message
    return None


def executor_errors(mx, models):
    """MXNet's exception types and messages for misuse."""
    sym = mx.sym.load(models["axpb"])
    a, b = mx.nd.array([1, 2]), mx.nd.array([2, 3])
    exe = sym.bind(mx.cpu(), {"a": a, "b": b}, args_grad={"a": mx.nd.zeros(2), "b": mx.nd.zeros(2)})
    return [
        error_of(lambda: exe.forward(c=a)),
        error_of(lambda: exe.forward(a=mx.nd.zeros((3,)))),
        error_of(lambda: exe.forward(a=[1, 2])),
        error_of(lambda: sym.bind(mx.cpu(), {"a": a})),
        error_of(lambda: sym.bind(mx.cpu(), [a])),
        error_of(lambda: sym.bind(mx.cpu(), [a, b], grad_req="sideways")),
        error_of(lambda: sym.bind("cpu", [a, b])),
        error_of(lambda: exe.backward([1])),
        error_of(lambda: exe.copy_params_from({"c": a})),
        error_of(lambda: exe.copy_params_from({}, {"c": a})),
    ]


def test_executor_errors(models):
    run_both(executor_errors, models)


def missing_head_gradient(mx, models):
    exe = mx.sym.load(models["axpb"]).simple_bind(mx.cpu(), a=(2,), b=(2,))
    exe.forward(is_train=True)
    try:
        exe.backward()
    except Exception as e:  # noqa: BLE001
        return type(e).__name__, "head_gradient is required" in str(e)
    return None


def test_missing_head_gradient(models):
    mxnet_result = missing_head_gradient(mxnet, models)
    symc_result = missing_head_gradient(frameworks()[1], models)
    assert mxnet_result == symc_result == ("MXNetError", True)


def index_errors(mx, models):
    """Indices out of bounds where MXNet checks them as it runs: take with
    mode 'raise', gather_nd. Each forward: its output, or its error."""
    take = mx.sym.load(models["take"]).simple_bind(mx.cpu(), a=(4, 2), b=(3,))
    gather = mx.sym.load(models["gather_nd"]).simple_bind(mx.cpu(), a=(3, 4), b=(2, 3))
    table = mx.nd.array(np.arange(12).reshape(3, 4))
    run = lambda exe, a, b: exe.forward(a=a, b=mx.nd.array(b))[0].asnumpy()
    return [run(take, table.reshape((4, 3))[:, :2], [0, 3, 1]),
            error_of(lambda: run(take, table.reshape((4, 3))[:, :2], [0, 4, 1])),
            error_of(lambda: run(take, table.reshape((4, 3))[:, :2], [-1, 0, 0])),
            run(gather, table, [[0, -3, 2], [1, 3, -4]]),
            error_of(lambda: run(gather, table, [[0, 1, 2], [5, 3, -7]])),
            error_of(lambda: run(gather, table, [[7, -5, 2], [5, 3, -7]]))]


def test_index_errors(models):
    """The same outputs and exception types; symc's message is MXNet's, after
    the node it names."""
    mxnet_result = index_errors(mxnet, models)
    symc_result = index_errors(frameworks()[1], models)
    for expected, got in zip(mxnet_result, symc_result):
        if isinstance(expected, np.ndarray):
            np.testing.assert_array_equal(got, expected)
            continue
        assert got[0] == expected[0]
        text = expected[1].replace("IndexError: ", "")
        assert got[1].endswith(text) and got[1].startswith("Error in operator "), (got, expected)


def lenet_inference(mx):
    """The bundled LeNet with its MXNet-saved parameters on the bundled digit."""
    sym = mx.sym.load(os.path.join(REPO, "examples", "lenet-symbol.json"))
    exe = sym.simple_bind(mx.cpu(), grad_req="null", data=(1, 1, 28, 28))
    saved = mx.nd.load(os.path.join(REPO, "examples", "lenet-0000.params"))
    exe.copy_params_from({k[4:]: v for k, v in saved.items() if k.startswith("arg:")}, allow_extra_params=True)
    exe.forward(data=np.load(os.path.join(REPO, "examples", "digit.npy")))
    return exe.outputs[0].asnumpy()


def test_lenet_inference():
    run_both(lenet_inference)


def test_params_files_are_byte_compatible(tmp_path):
    symc = frameworks()[1]
    arrays = {"arg:w": np.arange(6, dtype="float32").reshape(2, 3), "aux:m": np.array([1.5], "float64"),
              "arg:i": np.array([[1, 2]], "int32"), "arg:h": np.array([0.5, -2], "float16")}
    mxnet.nd.save(str(tmp_path / "mx.params"), {k: mxnet.nd.array(v, dtype=v.dtype) for k, v in arrays.items()})
    symc.nd.save(str(tmp_path / "symc.params"), {k: symc.nd.array(v) for k, v in arrays.items()})
    assert (tmp_path / "mx.params").read_bytes() == (tmp_path / "symc.params").read_bytes()
    loaded = symc.nd.load(str(tmp_path / "mx.params"))
    for k, v in arrays.items():
        assert loaded[k].dtype == v.dtype
        np.testing.assert_array_equal(loaded[k].asnumpy(), v)
    unnamed = [np.ones((2, 2), "float32"), np.zeros(3, "float32")]
    symc.nd.save(str(tmp_path / "list.params"), [symc.nd.array(v) for v in unnamed])
    back = mxnet.nd.load(str(tmp_path / "list.params"))
    assert isinstance(back, list) and [b.shape for b in back] == [(2, 2), (3,)]


def graph_printing(mx, models):
    """debug_str of inference executors, and get_optimized_symbol run by MXNet."""
    docstring = mx.sym.load(models["docstring"])
    texts = [docstring.bind(mx.cpu(), {"a": mx.nd.ones(2)}).debug_str()]
    for name, shapes in (("mlp", {"data": (6, 8)}), ("convnet", {"data": (2, 3, 6, 6)})):
        for grad_req in ("null", "write"):  # with gradients, the backward nodes too
            exe = mx.sym.load(models[name]).simple_bind(mx.cpu(), grad_req=grad_req, **shapes)
            texts.append(exe.debug_str().split("Total")[0])  # the plan's size is symc's own
    exe = mx.sym.load(models["mlp"]).simple_bind(mx.cpu(), grad_req="null", data=(6, 8))
    args, _ = params_of(mx, models["mlp_params"])
    exe.copy_params_from(args)
    optimized = mxnet.sym.load_json(exe.get_optimized_symbol().tojson())
    rerun = optimized.simple_bind(mxnet.cpu(), grad_req="null", data=(6, 8))
    rerun.copy_params_from({k: mxnet.nd.array(v.asnumpy()) for k, v in args.items()})
    return {"texts": texts, "rerun": rerun.forward(data=mxnet.nd.array(models["x"]))[0].asnumpy(),
            "outputs": exe.forward(data=mx.nd.array(models["x"]))[0].asnumpy()}


def test_debug_str_and_optimized_symbol(models):
    run_both(graph_printing, models)


def zero_prop(mx, tmp):
    """MXNet's test_zero_prop: grad_req null plans what a stop_gradient graph plans."""
    import re
    data = mxnet.sym.Variable("data")
    for _ in range(10):
        data = data * data
    data.save(str(tmp / "sq-symbol.json"))
    mxnet.sym.stop_gradient(data).save(str(tmp / "sqstop-symbol.json"))
    total = lambda exe: int(re.search(r"Total (\d+) MB allocated", exe.debug_str()).group(1))  # noqa: E731
    shape = (10, 3, 256, 256)
    big = total(mx.sym.load(str(tmp / "sq-symbol.json")).simple_bind(mx.cpu(), data=shape))
    small1 = total(mx.sym.load(str(tmp / "sq-symbol.json")).simple_bind(mx.cpu(), data=shape, grad_req="null"))
    small2 = total(mx.sym.load(str(tmp / "sqstop-symbol.json")).simple_bind(mx.cpu(), data=shape))
    return big > small2, small1 == small2


def test_zero_prop(tmp_path):
    assert zero_prop(mxnet, tmp_path) == zero_prop(frameworks()[1], tmp_path) == (True, True)


def reshape_script(mx, models):
    """MXNet's test_executor.py::test_reshape, and reshape's errors."""
    x = mxnet.sym.Variable("x")
    path = os.path.join(os.path.dirname(models["mlp"]), "fc4-symbol.json")
    mxnet.sym.FullyConnected(x, num_hidden=4, name="fc").save(path)
    exe = mx.sym.load(path).simple_bind(mx.cpu(), x=(5, 4), grad_req="null")
    exe.arg_arrays[0][:] = 1
    exe.arg_arrays[1][:] = mx.nd.ones((4, 4))
    exe.arg_arrays[2][:] = 0
    new_exe = exe.reshape(x=(3, 4))
    new_exe.forward(is_train=False)
    result = {"new": new_exe.outputs[0].asnumpy(), "shared_output_rows": exe.outputs[0].asnumpy()[:3]}
    exe.forward(is_train=False)
    result["old"] = exe.outputs[0].asnumpy()
    exe.arg_arrays[0][:] = 0
    result["shared_data"] = new_exe.arg_arrays[0].asnumpy()
    result["shared_weight"] = new_exe.arg_arrays[1].asnumpy()
    result["up_sized"] = exe.reshape(x=(6, 4), allow_up_sizing=True).forward()[0].shape
    result["errors"] = [error_of(lambda: exe.reshape(x=(6, 4))),
                        error_of(lambda: exe.reshape(x=(5, 3)))]
    return result


def test_reshape(models):
    result = run_both(reshape_script, models)
    assert result["errors"][0][1].startswith("New shape of arg: x is larger than original.")


def test_reshape_partial_shaping(models):
    """A weight whose shape follows the data needs partial_shaping."""
    def script(mx):
        exe = mx.sym.load(models["mlp"]).simple_bind(mx.cpu(), data=(6, 8), grad_req="null")
        return [error_of(lambda: exe.reshape(data=(6, 4))),
                exe.reshape(partial_shaping=True, data=(6, 4)).arg_dict["fc1_weight"].shape]
    mxnet_result, symc_result = script(mxnet), script(frameworks()[1])
    assert mxnet_result[1] == symc_result[1] == (16, 4)
    assert symc_result[0][1].startswith("Shape of unspecifie arg: fc1_weight changed.")
    assert mxnet_result[0][0] == symc_result[0][0] == "MXNetError"


def bucketing(mx, models):
    """Executors of two shapes sharing parameters, gradients and data buffers
    (BucketingModule's simple_bind with shared_exec and shared_buffer)."""
    sym = mx.sym.load(models["mlp"])
    params = ["fc1_weight", "fc1_bias", "fc2_weight", "fc2_bias"]
    buffer = {}
    big = sym.simple_bind(mx.cpu(), data=(6, 8), shared_buffer=buffer)
    args, _ = params_of(mx, models["mlp_params"])
    big.copy_params_from(args)
    small = sym.simple_bind(mx.cpu(), data=(3, 8), shared_arg_names=params, shared_exec=big,
                            shared_buffer=buffer)
    big.arg_dict["fc2_bias"][:] = 0.25  # shared: the small executor sees it
    small.forward(is_train=True, data=models["x"][:3], softmax_label=models["y"][:3])
    small.backward()
    buffer["data"][:] = 7  # the small executor's data is a view of the buffer's
    return {"buffer": sorted((k, v.shape) for k, v in buffer.items()),
            "small_out": small.outputs[0].asnumpy(),
            "shared_grad": big.grad_dict["fc1_weight"].asnumpy(),
            "small_data": small.arg_dict["data"].asnumpy()}


def test_bucketing_shares_memory(models):
    run_both(bucketing, models)


MONITORED_OPS = {
    "conv": lambda d: mxnet.sym.Convolution(d, kernel=(2, 2), num_filter=1, name="conv"),
    "fc": lambda d: mxnet.sym.FullyConnected(d, num_hidden=10, name="fc"),
    "lrn": lambda d: mxnet.sym.LRN(d, nsize=1, name="lrn"),
    "act": lambda d: mxnet.sym.Activation(d, act_type="relu", name="act"),
    "concat": lambda d: mxnet.sym.concat(d, d, dim=0, name="concat"),
    "softmax": lambda d: mxnet.sym.softmax(d, name="softmax"),
    "pooling": lambda d: mxnet.sym.Pooling(d, kernel=(2, 2), pool_type="avg", name="pooling"),
    "bn": lambda d: mxnet.sym.BatchNorm(d, name="bn"),
    "split": lambda d: mxnet.sym.SliceChannel(d, num_outputs=3, name="split")[1],
}


def monitor_names(mx, path, monitor_all, training):
    """The callbacks of a forward, or of a training step (the backward
    nodes of MXNet's backward graph too)."""
    names = []
    exe = mx.sym.load(path).simple_bind(mx.cpu(), grad_req="write" if training else "null", data=(10, 3, 10, 10))
    exe.set_monitor_callback(lambda name, array: names.append(name.decode()), monitor_all)
    exe.forward(is_train=training)
    if training:
        exe.backward([mx.nd.ones(o.shape) for o in exe.outputs])
    return names


@pytest.mark.parametrize("op", sorted(MONITORED_OPS))
@pytest.mark.parametrize("training", [False, True])
def test_monitor_names(op, training, tmp_path):
    """MXNet's test_op_output_names_monitor / test_op_all_names_monitor, and
    the same through a backward."""
    if training and op == "split":
        pytest.skip("MXNet 1.9.1's backward of one output of a split allocates without bound (bad_alloc)")
    path = str(tmp_path / (op + "-symbol.json"))
    MONITORED_OPS[op](mxnet.sym.Variable("data")).save(path)
    for monitor_all in (False, True):
        run_both(monitor_names, path, monitor_all, training)


def monitor_training_step(mx, models):
    """mx.monitor.Monitor on an MLP's training forward: every node's RMS."""
    exe = mx.sym.load(models["mlp"]).simple_bind(mx.cpu(), data=(6, 8))
    args, _ = params_of(mx, models["mlp_params"])
    exe.copy_params_from(args)
    mon = mx.monitor.Monitor(1, pattern=".*_output")
    mon.install(exe)
    mon.tic()
    exe.forward(is_train=True, data=models["x"], softmax_label=models["y"])
    exe.backward()  # monitored too; the gradients are the usual ones
    stats = mon.toc()
    return {"names": [name for _, name, _ in stats],
            "rms": [float(text.split()[0]) for _, _, text in stats],
            "grad": exe.grad_dict["fc1_weight"].asnumpy()}


def test_monitor_training_step(models):
    result = run_both(monitor_training_step, models)
    assert result["names"] == ["fc1_output", "relu1_output", "fc2_output", "softmax_output",
                               "softmax_backward_output0", "softmax_backward_output1", "fc2_backward_output0",
                               "fc2_backward_output1", "fc2_backward_output2", "relu1_backward_output",
                               "fc1_backward_output0", "fc1_backward_output1", "fc1_backward_output2"]


@pytest.fixture(scope="module")
def grouped_models(tmp_path_factory):
    """Symbols whose nodes carry ctx_group (mx.AttrScope), saved by MXNet."""
    mx = mxnet
    work = tmp_path_factory.mktemp("groups")
    with mx.AttrScope(ctx_group="dev1"):
        data = mx.sym.Variable("data")
        act = mx.sym.Activation(mx.sym.FullyConnected(data, num_hidden=8, name="fc1"), act_type="relu",
                                name="relu1")
    with mx.AttrScope(ctx_group="dev2"):
        mlp = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(act, num_hidden=4, name="fc2"), name="softmax")
    # An aux state created in one group and updated by a BatchNorm in another.
    with mx.AttrScope(ctx_group="dev1"):
        mean = mx.sym.Variable("bn_moving_mean")
    with mx.AttrScope(ctx_group="dev2"):
        crossing = mx.sym.BatchNorm(data, moving_mean=mean, name="bn")
    paths = {}
    for name, sym in (("mlp", mlp), ("crossing", crossing)):
        paths[name] = str(work / (name + "-symbol.json"))
        sym.save(paths[name])
    return paths


def placed_mlp(mx, paths, bind):
    """group2ctx: where the arrays are, the copy node in debug_str, the
    optimized symbol and the monitor, and the numbers."""
    sym = mx.sym.load(paths["mlp"])
    group2ctx = {"dev1": mx.cpu(1), "dev2": mx.cpu(2)}
    shapes = {"data": (2, 5), "fc1_weight": (8, 5), "fc1_bias": (8,), "fc2_weight": (4, 8), "fc2_bias": (4,),
              "softmax_label": (2,)}
    rng = np.random.RandomState(1)
    values = {n: rng.uniform(-1, 1, s).astype("float32") for n, s in shapes.items()}
    if bind:
        where = {"data": 1, "fc1_weight": 1, "fc1_bias": 1}
        args = {n: mx.nd.array(v, ctx=mx.cpu(where.get(n, 2))) for n, v in values.items()}
        exe = sym.bind(mx.cpu(), args, grad_req="null", group2ctx=group2ctx)
    else:
        exe = sym.simple_bind(mx.cpu(), grad_req="null", group2ctx=group2ctx, data=(2, 5))
        for n, v in values.items():
            exe.arg_dict[n][:] = v
    names = []
    exe.set_monitor_callback(lambda name, array: names.append(name.decode()), True)
    exe.forward(is_train=False)
    return {"args": {n: str(a.context) for n, a in exe.arg_dict.items()},
            "outputs": [str(o.context) for o in exe.outputs], "debug_str": exe.debug_str(),
            "optimized": [(n["op"], n["name"]) for n in json.loads(exe.get_optimized_symbol().tojson())["nodes"]],
            "monitor": names, "probs": exe.outputs[0].asnumpy(),
            "reshaped": [str(o.context) for o in exe.reshape(data=(1, 5), softmax_label=(1,)).outputs]}


@pytest.mark.parametrize("bind", [False, True])
def test_group2ctx_places_and_copies(grouped_models, bind):
    result = run_both(placed_mlp, grouped_models, bind)
    assert "Op:_CrossDeviceCopy, Name=relu1_0_copy" in result["debug_str"]


def placed_training_step(mx, paths):
    """group2ctx with gradients: where simple_bind puts them, the backward's
    copy nodes in debug_str, and the gradients."""
    sym = mx.sym.load(paths["mlp"])
    exe = sym.simple_bind(mx.cpu(), group2ctx={"dev1": mx.cpu(1), "dev2": mx.cpu(2)}, data=(2, 5))
    rng = np.random.RandomState(2)
    for name, array in exe.arg_dict.items():
        array[:] = rng.uniform(-1, 1, array.shape).astype("float32")
    exe.arg_dict["softmax_label"][:] = np.array([1, 3], dtype="float32")
    exe.forward(is_train=True)
    exe.backward()
    return {"grad_contexts": {n: str(g.context) for n, g in exe.grad_dict.items()}, "debug_str": exe.debug_str(),
            "grads": {n: g.asnumpy() for n, g in exe.grad_dict.items()}}


def test_group2ctx_training_step(grouped_models):
    result = run_both(placed_training_step, grouped_models)
    assert "Op:_CrossDeviceCopy, Name=fc2_backward_0_copy" in result["debug_str"]


def misplaced_gradient_error(mx, paths, gradient_devices):
    """bind with gradient arrays where the backward does not compute them."""
    sym = mx.sym.load(paths["mlp"])
    shapes = {"data": (2, 5), "fc1_weight": (8, 5), "fc1_bias": (8,), "fc2_weight": (4, 8), "fc2_bias": (4,),
              "softmax_label": (2,)}
    args = {n: mx.nd.zeros(s, ctx=mx.cpu(1)) for n, s in shapes.items()}
    grads = {n: mx.nd.zeros(shapes[n], ctx=mx.cpu(d)) for n, d in gradient_devices.items()}
    try:
        sym.bind(mx.cpu(), args, args_grad=grads, group2ctx={"dev1": mx.cpu(1), "dev2": mx.cpu(2)})
    except Exception as e:
        return re.search(r"(Check failed: .*)", str(e)).group(1)
    return None


@pytest.mark.parametrize("gradient_devices", [
    {"fc1_weight": 0, "fc1_bias": 1, "fc2_weight": 2, "fc2_bias": 2},  # two devices for one node's outputs
    {"fc1_weight": 1, "fc1_bias": 1, "fc2_weight": 1, "fc2_bias": 1},  # fc2's gradients not on dev2
])
def test_group2ctx_gradient_placement_errors(grouped_models, gradient_devices):
    assert run_both(misplaced_gradient_error, grouped_models, gradient_devices)


def placement_error(mx, paths, name, group2ctx):
    sym = mx.sym.load(paths[name])
    try:
        sym.simple_bind(mx.cpu(), grad_req="null", group2ctx={g: mx.cpu(i) for g, i in group2ctx.items()},
                        data=(2, 3, 4, 4))
    except Exception as e:  # MXNet wraps it in simple_bind's RuntimeError, after its CHECK's text
        return re.search(r"(The device assignment not found.*|mutable state cannot go across.*)", str(e)).group(1)
    return None


@pytest.mark.parametrize("name,group2ctx", [("mlp", {"dev1": 1}), ("crossing", {"dev1": 1, "dev2": 2})])
def test_group2ctx_errors(grouped_models, name, group2ctx):
    assert run_both(placement_error, grouped_models, name, group2ctx)


class _Batch:
    """One batch of an iterator, as mx.io.DataBatch holds it."""

    def __init__(self, data, label):
        self.data, self.label = data, label


class _Iter:
    """What the executor manager reads of a data iterator."""

    def __init__(self, batch_size, data_shape):
        self.batch_size = batch_size
        self.provide_data = [("data", (batch_size,) + data_shape)]
        self.provide_label = [("softmax_label", (batch_size,))]


def data_parallel_step(mx, models):
    """executor_manager.DataParallelExecutorManager over cpu(0) and cpu(1):
    the split, each device's outputs and gradients, the gradients summed
    over the devices (MXNet's kvstore pushpull; symc's aggregate_gradients)
    and copy_to's average."""
    sym = mx.sym.load(models["mlp"])
    args, _ = params_of(mx, models["mlp_params"])
    mgr = mx.executor_manager.DataParallelExecutorManager(
        sym, [mx.cpu(0), mx.cpu(1)], _Iter(5, (8,)), sym.list_arguments(),
        [n for n in sym.list_arguments() if n not in ("data", "softmax_label")], sym.list_auxiliary_states())
    mgr.set_params(args, {})
    mgr.load_data_batch(_Batch([mx.nd.array(models["x"][:5])], [mx.nd.array(models["y"][:5])]))
    mgr.forward(is_train=True)
    mgr.backward()
    per_device = [[g.asnumpy() for g in block] for block in mgr.grad_arrays]
    if hasattr(mgr, "aggregate_gradients"):
        mgr.aggregate_gradients()
        summed = [block[1].asnumpy() for block in mgr.grad_arrays]
    else:
        summed = [sum(per_device[i]) for i in range(len(per_device))]
    averaged = {n: mx.nd.zeros(a.shape) for n, a in args.items()}
    mgr.copy_to(averaged, {})
    return {"slices": [(s.start, s.stop) for s in mgr.slices],
            "outputs": [e.outputs[0].asnumpy() for e in mgr.execgrp.train_execs],
            "contexts": [str(e.arg_dict["data"].context) for e in mgr.execgrp.train_execs],
            "per_device": per_device, "summed": summed,
            "averaged": {n: a.asnumpy() for n, a in averaged.items()}}


def test_data_parallel_executor_manager(models):
    result = run_both(data_parallel_step, models)
    assert result["slices"] == [(0, 2), (2, 5)]


def split_input_slice(mx, batch, work_load):
    try:
        return [(s.start, s.stop) for s in mx.executor_manager._split_input_slice(batch, work_load)]
    except ValueError as e:
        return str(e)


@pytest.mark.parametrize("batch,work_load", [(7, [1, 1]), (5, [1, 1]), (10, [3, 1]), (9, [1, 2]), (6, [1] * 4),
                                             (1, [1, 1])])
def test_split_input_slice(batch, work_load):
    run_both(split_input_slice, batch, work_load)


@pytest.fixture(scope="module")
def multiplied_model(tmp_path_factory):
    """A FullyConnected whose weight carries lr_mult and whose bias wd_mult."""
    mx = mxnet
    weight = mx.sym.Variable("fc_weight", lr_mult=0.5)
    bias = mx.sym.Variable("fc_bias", wd_mult=2.0)
    path = str(tmp_path_factory.mktemp("mult") / "fc-symbol.json")
    mx.sym.FullyConnected(mx.sym.Variable("data"), weight=weight, bias=bias, num_hidden=3, name="fc").save(path)
    return path


def sgd_steps(mx, path, momentum, clip):
    """Three updater steps of mx.optimizer.SGD with the symbol's multipliers."""
    sym = mx.sym.load(path)
    opt = mx.optimizer.SGD(learning_rate=0.1, momentum=momentum, wd=0.01, rescale_grad=0.5, clip_gradient=clip,
                           param_idx2name={0: "fc_weight", 1: "fc_bias"}, sym=sym)
    updater = mx.optimizer.get_updater(opt)
    rng = np.random.RandomState(0)
    weights = [mx.nd.array(rng.uniform(-1, 1, (3, 4)).astype("float32")),
               mx.nd.array(rng.uniform(-1, 1, (3,)).astype("float32"))]
    for _ in range(3):
        for i, w in enumerate(weights):
            updater(i, mx.nd.array(rng.uniform(-2, 2, w.shape).astype("float32")), w)
    return [w.asnumpy() for w in weights]


@pytest.mark.parametrize("momentum,clip", [(0.0, None), (0.9, None), (0.9, 0.6), (0.0, 0.6)])
def test_sgd_matches_mxnet(multiplied_model, momentum, clip):
    run_both(sgd_steps, multiplied_model, momentum, clip)


def iterate_and_measure(mx):
    """NDArrayIter's batches (last_batch_handle 'pad') and the metrics over them."""
    data = np.arange(7 * 3, dtype="float32").reshape(7, 3)
    label = np.array([0, 2, 1, 2, 0, 1, 1], dtype="float32")
    it = mx.io.NDArrayIter(data, label, batch_size=3)
    batches = [(b.data[0].asnumpy() if hasattr(b.data[0], "asnumpy") else b.data[0], b.pad) for b in it]
    preds = np.linspace(0, 1, 7 * 3, dtype="float32").reshape(7, 3)[::-1].copy()
    values = {}
    for name, metric in (("acc", mx.metric.Accuracy()), ("top2", mx.metric.TopKAccuracy(top_k=2)),
                         ("ce", mx.metric.CrossEntropy()), ("mse", mx.metric.MSE())):
        metric.update([mx.nd.array(label)], [mx.nd.array(preds)])
        values[name] = metric.get()
    return {"batches": batches, "provide_data": [tuple(d.shape) for d in it.provide_data], "metrics": values}


def test_ndarray_iter_and_metrics():
    result = run_both(iterate_and_measure)
    assert [pad for _, pad in result["batches"]] == [0, 0, 2]
