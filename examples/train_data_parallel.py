#!/usr/bin/env python3
"""Data-parallel training with MXNet's FeedForward API, run on symc by its
import (`--mxnet` runs the same code on MXNet 1.9.1):

    import symc as mx        # was: import mxnet as mx

Trains the MLP of mlp-symbol.json (a synthetic 4-class task on 16 inputs)
or LeNet (lenet-symbol.json, on synthetic 28x28 "digits": one noisy
template per class) with each batch split over N CPU contexts
(_split_input_slice), the gradients summed over them (kvstore 'local') and
SGD with momentum. It logs the training loss (cross-entropy) and accuracy
every 5 batches (Speedometer), each epoch's validation loss and accuracy,
and saves a checkpoint MXNet loads:

    python3 examples/train_data_parallel.py --model mlp --contexts 2 --epochs 5 --prefix /tmp/mlp-dp

With `--kvstore dist_sync` under `mpirun -np N`, each process trains on its
rows of every batch of the job (N times --batch-size rows), the gradients
summed over the processes: N processes of one context each compute what one
process with N contexts and N times the batch computes.

    mpirun -np 2 python3 examples/train_data_parallel.py --kvstore dist_sync --contexts 1
"""
import argparse
import logging
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


TRAIN_SAMPLES, VALIDATION_SAMPLES = 1000, 200


def synthetic(model, rng, count):
    """(inputs, labels) of a task the model can learn."""
    if model == "mlp":
        projections = np.random.RandomState(7).uniform(-1, 1, (4, 16))
        inputs = rng.uniform(-1, 1, (count, 16))
        return inputs.astype("float32"), (inputs @ projections.T).argmax(axis=1).astype("float32")
    templates = np.random.RandomState(7).uniform(0, 1, (10, 1, 28, 28)) > 0.7
    labels = rng.randint(0, 10, count)
    inputs = templates[labels] + rng.normal(0, 0.5, (count, 1, 28, 28))
    return inputs.astype("float32"), labels.astype("float32")


def initial_params(mx, sym, input_shape, rng):
    """He-scaled normal weights from numpy, so that every framework starts alike."""
    arg_shapes, _, _ = sym.infer_shape(data=input_shape)
    params = {}
    for name, shape in zip(sym.list_arguments(), arg_shapes):
        if name.endswith("_weight"):
            fan = float(np.prod(shape[1:]))
            params[name] = mx.nd.array(rng.normal(0, np.sqrt(2.0 / fan), shape).astype("float32"))
        elif name.endswith("_bias"):
            params[name] = mx.nd.zeros(shape)
    return params


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", choices=["mlp", "lenet"], default="mlp")
    parser.add_argument("--contexts", type=int, default=2)
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--batch-size", type=int, default=50)
    parser.add_argument("--prefix", default=None, help="checkpoint prefix (default: none saved)")
    parser.add_argument("--kvstore", default="local", help="local, device, or dist_sync under mpirun")
    parser.add_argument("--mxnet", action="store_true", help="run on MXNet 1.9.1 instead")
    args = parser.parse_args()
    if args.mxnet:
        import mxnet as mx
    else:
        import symc as mx
    logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stdout)

    kv = mx.kv.create(args.kvstore)
    rng = np.random.RandomState(1)
    train_x, train_y = synthetic(args.model, rng, TRAIN_SAMPLES)
    val_x, val_y = synthetic(args.model, rng, VALIDATION_SAMPLES)
    # This worker's rows of each batch of the whole job.
    rows = np.arange(TRAIN_SAMPLES).reshape(-1, kv.num_workers, args.batch_size)[:, kv.rank].ravel()
    train_x, train_y = train_x[rows], train_y[rows]
    sym = mx.sym.load(os.path.join(HERE, args.model + "-symbol.json"))
    train = mx.io.NDArrayIter(train_x, train_y, args.batch_size, shuffle=False)
    val = mx.io.NDArrayIter(val_x, val_y, args.batch_size)
    model = mx.model.FeedForward(
        sym, ctx=[mx.cpu(i) for i in range(args.contexts)], num_epoch=args.epochs, optimizer="sgd",
        learning_rate=0.1 if args.model == "mlp" else 0.01, momentum=0.9, wd=1e-4,
        arg_params=initial_params(mx, sym, (args.batch_size,) + train_x.shape[1:], rng), aux_params={})
    saves = args.prefix and kv.rank == 0
    model.fit(train, eval_data=val, eval_metric=["ce", "acc"], kvstore=kv,
              batch_end_callback=mx.callback.Speedometer(args.batch_size, 5),
              epoch_end_callback=mx.callback.do_checkpoint(args.prefix, args.epochs) if saves else None)
    print("final validation accuracy: %.4f" % model.score(val, "acc"))


if __name__ == "__main__":
    main()
