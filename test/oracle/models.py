"""Whole models defined by MXNet itself, for the forward oracle: (name, symbol, shapes).

MLP and LeNet are written with mx.sym; the vision nets come from MXNet's gluon
model zoo, hybridized and exported (their symbol is what users deploy); the
language model is mx.rnn.LSTMCell unrolled over 8 steps.
"""
import os
import tempfile

import mxnet as mx

S = mx.sym


def mlp():
    net = S.Variable("data")
    for i, hidden in enumerate((512, 512)):
        net = S.Activation(S.FullyConnected(net, num_hidden=hidden, name="fc%d" % i), act_type="relu")
    return S.SoftmaxOutput(S.FullyConnected(net, num_hidden=10, name="fc_out"), name="softmax")


def lenet():
    net = S.Variable("data")
    for i, filters in enumerate((20, 50)):
        net = S.Convolution(net, kernel=(5, 5), num_filter=filters, name="conv%d" % i)
        net = S.Activation(net, act_type="tanh")
        net = S.Pooling(net, pool_type="max", kernel=(2, 2), stride=(2, 2))
    net = S.Activation(S.FullyConnected(S.Flatten(net), num_hidden=500, name="fc1"), act_type="tanh")
    return S.SoftmaxOutput(S.FullyConnected(net, num_hidden=10, name="fc2"), name="softmax")


def zoo(name, **kwargs):
    """A gluon model-zoo net as the symbol `HybridBlock.export` writes."""
    net = mx.gluon.model_zoo.vision.get_model(name, pretrained=False, **kwargs)
    net.initialize()
    net.hybridize()
    size = 299 if name.startswith("inception") else 224
    net(mx.nd.zeros((1, 3, size, size)))
    with tempfile.TemporaryDirectory() as tmp:
        prefix = os.path.join(tmp, name)
        net.export(prefix)
        return S.load(prefix + "-symbol.json"), {"data": (1, 3, size, size)}


def lstm_lm(steps=8, vocab=50, embed=16, hidden=32, batch=4):
    data = S.Variable("data")
    embedded = S.Embedding(data, input_dim=vocab, output_dim=embed, name="embed")
    cell = mx.rnn.LSTMCell(num_hidden=hidden, prefix="lstm_")
    outputs, _ = cell.unroll(steps, inputs=embedded, layout="NTC", merge_outputs=True)
    pred = S.FullyConnected(S.Reshape(outputs, shape=(-1, hidden)), num_hidden=vocab, name="pred")
    return S.SoftmaxOutput(pred, name="softmax"), {"data": (batch, steps)}


def models():
    yield "mlp", mlp(), {"data": (64, 784)}
    yield "lenet", lenet(), {"data": (2, 1, 28, 28)}
    for name in ("resnet18_v1", "vgg11", "mobilenet1.0", "inceptionv3"):
        sym, shapes = zoo(name)
        yield name, sym, shapes
    sym, shapes = lstm_lm()
    yield "lstm_lm", sym, shapes
