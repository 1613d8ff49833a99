#!/usr/bin/env python3
"""An MXNet 1.x training script, run on symc by changing one line: the import.

    import symc as mx        # was: import mxnet as mx

It fine-tunes the MLP of mlp-symbol.json (16 inputs, 64-64-4, SoftmaxOutput)
on a synthetic task (the class is the largest of four fixed projections of
the input) with plain SGD through the Executor API: simple_bind,
copy_params_from, forward / backward, arg_dict / grad_dict, and prints the
loss and accuracy of each epoch. test/python runs it as it is and with
`import mxnet as mx`, and checks that both print the same numbers.
"""
import os
import sys

import numpy as np

import symc as mx

HERE = os.path.dirname(os.path.abspath(__file__))
BATCH, FEATURES, CLASSES, EPOCHS, STEPS, LR = 32, 16, 4, 4, 16, 0.5

rng = np.random.RandomState(7)
projections = rng.uniform(-1, 1, (CLASSES, FEATURES)).astype("float32")
inputs = rng.uniform(-1, 1, (STEPS * BATCH, FEATURES)).astype("float32")
labels = (inputs @ projections.T).argmax(axis=1).astype("float32")

sym = mx.sym.load(os.path.join(HERE, "mlp-symbol.json"))
exe = sym.simple_bind(mx.cpu(), data=(BATCH, FEATURES), grad_req="write")
init = {name: mx.nd.array(rng.normal(0, 0.3, arr.shape)) for name, arr in exe.arg_dict.items()
        if name.endswith("_weight") or name.endswith("_bias")}
exe.copy_params_from(init)

for epoch in range(EPOCHS):
    loss = correct = 0.0
    for step in range(STEPS):
        rows = slice(step * BATCH, (step + 1) * BATCH)
        exe.forward(is_train=True, data=mx.nd.array(inputs[rows]), softmax_label=mx.nd.array(labels[rows]))
        probs = exe.outputs[0].asnumpy()
        truth = labels[rows].astype(int)
        loss += -np.log(probs[np.arange(BATCH), truth] + 1e-12).mean() / STEPS
        correct += (probs.argmax(axis=1) == truth).mean() / STEPS
        exe.backward()
        for name in init:
            exe.arg_dict[name][:] -= LR / BATCH * exe.grad_dict[name]
    print("epoch %d: loss %.4f, accuracy %.3f" % (epoch, loss, correct))
    sys.stdout.flush()
