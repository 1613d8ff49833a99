"""mx.model's training loop on symc: FeedForward.fit trains a symbol
data-parallel over its contexts (executor_manager), summing each batch's
gradients over the devices and stepping SGD once per batch, with MXNet's
log lines, callbacks and checkpoints (files MXNet itself loads)."""
import logging
import time
from collections import namedtuple

import numpy as np

from . import io, kvstore as kvs, metric as metric_module, ndarray as nd, optimizer as opt
from .context import cpu
from .executor_manager import DataParallelExecutorManager
from .initializer import Uniform

BatchEndParam = namedtuple("BatchEndParams", ["epoch", "nbatch", "eval_metric", "locals"])


def save_checkpoint(prefix, epoch, symbol, arg_params, aux_params, remove_amp_cast=True):
    """prefix-symbol.json and prefix-%04d.params (arg:/aux: names), as
    mx.model.save_checkpoint writes them."""
    if symbol is not None:
        symbol.save("%s-symbol.json" % prefix)
    save_dict = {("arg:%s" % k): v for k, v in arg_params.items()}
    save_dict.update({("aux:%s" % k): v for k, v in aux_params.items()})
    param_name = "%s-%04d.params" % (prefix, epoch)
    nd.save(param_name, save_dict)
    logging.info('Saved checkpoint to "%s"', param_name)


def load_params(prefix, epoch):
    """The arg: and aux: arrays of prefix-%04d.params."""
    arg_params, aux_params = {}, {}
    for key, value in nd.load("%s-%04d.params" % (prefix, epoch)).items():
        kind, name = key.split(":", 1)
        (arg_params if kind == "arg" else aux_params)[name] = value
    return arg_params, aux_params


def load_checkpoint(prefix, epoch):
    """(symbol, arg_params, aux_params) of a checkpoint."""
    from . import symbol as sym
    arg_params, aux_params = load_params(prefix, epoch)
    return sym.load("%s-symbol.json" % prefix), arg_params, aux_params


def _as_iterator(X, y, batch_size):
    if hasattr(X, "provide_data"):
        return X
    return io.NDArrayIter(X, y, min(batch_size, np.asarray(X).shape[0]), shuffle=True, last_batch_handle="pad")


def _callbacks(callbacks, *args):
    for callback in callbacks if isinstance(callbacks, (list, tuple)) else [callbacks] if callbacks else []:
        callback(*args)


class FeedForward:
    """mx.model.FeedForward: fit on in-memory arrays or a data iterator,
    over one or several contexts (kvstore 'local': the gradients summed
    over the devices, rescale_grad 1/batch_size)."""

    def __init__(self, symbol, ctx=None, num_epoch=None, epoch_size=None, optimizer="sgd", initializer=Uniform(0.01),
                 numpy_batch_size=128, arg_params=None, aux_params=None, begin_epoch=0, **kwargs):
        self.symbol = symbol
        self.ctx = ctx if isinstance(ctx, list) else [ctx or cpu()]
        self.num_epoch, self.epoch_size, self.optimizer = num_epoch, epoch_size, optimizer
        self.initializer, self.numpy_batch_size = initializer, numpy_batch_size
        self.arg_params, self.aux_params = arg_params, aux_params
        self.begin_epoch, self.kwargs = begin_epoch, dict(kwargs)

    def _init_params(self, manager, input_names):
        """Missing parameters from the initializer, then every device set."""
        arg_params, aux_params = dict(self.arg_params or {}), dict(self.aux_params or {})
        for names, blocks, params in ((manager.param_names, manager.param_arrays, arg_params),
                                      (manager.aux_names, manager.aux_arrays, aux_params)):
            for name, block in zip(names, blocks):
                if name not in params:
                    params[name] = nd.zeros(block[0].shape)
                    self.initializer(name, params[name])
        manager.set_params(arg_params, aux_params)
        self.arg_params, self.aux_params = arg_params, aux_params

    def fit(self, X, y=None, eval_data=None, eval_metric="acc", epoch_end_callback=None, batch_end_callback=None,
            kvstore="local", logger=None, work_load_list=None, monitor=None, eval_end_callback=None,
            eval_batch_end_callback=None):
        logger = logger or logging
        train_data = _as_iterator(X, y, self.numpy_batch_size)
        input_names = [d.name if hasattr(d, "name") else d[0] for d in train_data.provide_data + train_data.provide_label]
        arg_names = self.symbol.list_arguments()
        param_names = [n for n in arg_names if n not in input_names]
        manager = DataParallelExecutorManager(self.symbol, self.ctx, train_data, arg_names, param_names,
                                              self.symbol.list_auxiliary_states(), work_load_list, logger)
        if monitor is not None:
            manager.install_monitor(monitor)
        self._init_params(manager, input_names)
        kv = kvs.create(kvstore) if isinstance(kvstore, str) else kvstore
        kv.init(manager.execgrp)
        optimizer = self.optimizer
        if isinstance(optimizer, str):
            params = dict(self.kwargs)
            params.setdefault("rescale_grad", 1.0 / (train_data.batch_size * kv.num_workers))
            optimizer = opt.create(optimizer, sym=self.symbol, param_idx2name=dict(enumerate(param_names)), **params)
        eval_metric = metric_module.create(eval_metric)
        train_data.reset()
        for epoch in range(self.begin_epoch, self.num_epoch):
            tic = time.time()
            eval_metric.reset()
            nbatch = 0
            while True:  # MXNet's loop: an epoch_size may span passes over the data
                do_reset = True
                for data_batch in train_data:
                    self._train_batch(manager, kv, optimizer, data_batch, eval_metric)
                    nbatch += 1
                    _callbacks(batch_end_callback, BatchEndParam(epoch, nbatch, eval_metric, locals()))
                    if self.epoch_size is not None and nbatch >= self.epoch_size:
                        do_reset = False
                        break
                if do_reset:
                    logger.info("Epoch[%d] Resetting Data Iterator", epoch)
                    train_data.reset()
                if self.epoch_size is None or nbatch >= self.epoch_size:
                    break
            logger.info("Epoch[%d] Time cost=%.3f", epoch, time.time() - tic)
            if epoch_end_callback or epoch + 1 == self.num_epoch:
                manager.copy_to(self.arg_params, self.aux_params)
            _callbacks(epoch_end_callback, epoch, self.symbol, self.arg_params, self.aux_params)
            if eval_data is not None:  # on the devices, with the parameters they have now
                eval_metric.reset()
                eval_data.reset()
                for eval_batch in eval_data:
                    manager.load_data_batch(eval_batch)
                    manager.forward(is_train=False)
                    manager.update_metric(eval_metric, eval_batch.label)
                for name, value in eval_metric.get_name_value():
                    logger.info("Epoch[%d] Validation-%s=%f", epoch, name, value)
        return self

    @staticmethod
    def _train_batch(manager, kv, optimizer, data_batch, eval_metric):
        """One step: forward and backward on every device, the gradients
        summed over them (and the workers), the optimizer's update, the metric."""
        manager.load_data_batch(data_batch)
        manager.forward(is_train=True)
        manager.backward()
        kv.sum_gradients(manager.curr_execgrp)
        manager.update(optimizer)
        manager.update_metric(eval_metric, data_batch.label)

    def score(self, X, eval_metric="acc"):
        """eval_metric's value over X with the trained parameters."""
        return self._evaluate(X, eval_metric).get()[1]

    def _evaluate(self, X, eval_metric):
        """eval_metric updated over X by one executor with the trained parameters."""
        eval_metric = metric_module.create(eval_metric)
        eval_metric.reset()
        X.reset()
        descs = X.provide_data + X.provide_label
        exe = self.symbol.simple_bind(self.ctx[0], grad_req="null",
                                      **{d.name if hasattr(d, "name") else d[0]:
                                         tuple(d.shape if hasattr(d, "shape") else d[1]) for d in descs})
        exe.copy_params_from(self.arg_params, self.aux_params)
        for batch in X:
            exe.forward(is_train=False, **{d.name if hasattr(d, "name") else d[0]: a
                                           for d, a in zip(X.provide_data, batch.data)})
            real = batch.data[0].shape[0] - (batch.pad or 0)
            eval_metric.update([label[:real] for label in batch.label], [out.asnumpy()[:real] for out in exe.outputs])
        return eval_metric

    def save(self, prefix, epoch=None):
        save_checkpoint(prefix, self.num_epoch if epoch is None else epoch, self.symbol, self.arg_params,
                        self.aux_params)


__all__ = ["BatchEndParam", "FeedForward", "load_checkpoint", "load_params", "save_checkpoint"]
