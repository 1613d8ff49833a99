"""mxnet.executor_manager on libsymrt's executor groups: one executor per
context, each on its slice of the batch, run concurrently (a thread each),
with the parameters' gradients summed over the devices as kvstore 'local'
sums them (shared/mxnet-semantics.md section 3.2).

    mgr = DataParallelExecutorManager(sym, [symc.cpu(0), symc.cpu(1)], train_iter,
                                      arg_names, param_names, aux_names)
    mgr.set_params(arg_params, aux_params)
    mgr.load_data_batch(batch); mgr.forward(is_train=True); mgr.backward()
    mgr.aggregate_gradients()   # each device's gradients: the whole batch's
"""
import ctypes
import logging

import numpy as np

from .artifact import Artifact, compile as compile_symbol
from .base import c_array, c_handles, c_str, check_call, lib
from .executor import Executor
from .ndarray import NDArray, as_ndarray


def _split_input_slice(batch_size, work_load_list):
    """Device i's slice of the batch: round(w_i * batch / sum(w)) rows (half
    to even), the shortfall to the last; ValueError for an empty one."""
    slices = (ctypes.c_int64 * (2 * len(work_load_list)))()
    check_call(lib.SymcSplitInputSlice(ctypes.c_int64(batch_size), len(work_load_list),
                                       c_array(ctypes.c_double, work_load_list), slices))
    return [slice(slices[2 * i], slices[2 * i + 1]) for i in range(len(work_load_list))]


def _descs(descs):
    """(name, shape) pairs of provide_data / provide_label (tuples or DataDescs)."""
    return [(d.name, tuple(d.shape)) if hasattr(d, "name") else (d[0], tuple(d[1])) for d in descs or []]


def _compile_for_slices(symbol, input_shapes, sizes, input_names):
    """`symbol` compiled for training at each slice size: one artifact with a
    shape variant per size. The first input lists the sizes; the others'
    batch dims are inferred from it (0)."""
    shapes = {}
    for i, (name, shape) in enumerate(input_shapes):
        shapes[name] = ((tuple(sizes) if len(sizes) > 1 else sizes[0]) if i == 0 else 0,) + shape[1:]
    return compile_symbol(symbol, shapes, train=True, grad_req={n: "null" for n in input_names}, monitor=False)


class DataParallelExecutorGroup:
    """executor_manager.DataParallelExecutorGroup: `sym` is a symc Artifact
    (compiled for training at the slices' batch sizes, e.g. --shape
    'data=2|3,...') or a Symbol (compiled here, cached)."""

    def __init__(self, sym, arg_names, param_names, ctx, slices, train_data, shared_group=None):
        names = set(arg_names)
        if len(names) != len(arg_names):
            raise ValueError("Duplicate names detected, %s" % str(arg_names))
        self.param_names = list(param_names)
        self.slices = list(slices)
        self.data_shapes = _descs(train_data.provide_data) + _descs(getattr(train_data, "provide_label", None))
        self.data_names = [name for name, _ in _descs(train_data.provide_data)]
        self.label_names = [name for name, _ in _descs(getattr(train_data, "provide_label", None))]
        input_names = [name for name, _ in self.data_shapes]
        if not isinstance(sym, Artifact):
            sizes = sorted({s.stop - s.start for s in self.slices})
            sym = _compile_for_slices(sym, self.data_shapes, sizes, input_names)
        self._artifact = sym
        work_load = [s.stop - s.start for s in self.slices]  # reproduces these slices
        self.handle = ctypes.c_void_p()
        check_call(lib.SymcExecutorGroupCreate(
            sym.handle, len(ctx), c_array(ctypes.c_int, [c.device_typeid for c in ctx]),
            c_array(ctypes.c_int, [c.device_id for c in ctx]), c_array(ctypes.c_double, work_load),
            len(self.data_shapes), c_array(ctypes.c_char_p, [c_str(n) for n in input_names]),
            c_array(ctypes.c_int64, [d for _, shape in self.data_shapes for d in shape]),
            c_array(ctypes.c_int, [len(shape) for _, shape in self.data_shapes]), len(self.param_names),
            c_array(ctypes.c_char_p, [c_str(n) for n in self.param_names]),
            shared_group.handle if shared_group is not None else None, ctypes.byref(self.handle)))
        self.train_execs = []
        for i in range(len(ctx)):
            handle = ctypes.c_void_p()
            check_call(lib.SymcExecutorGroupGetExecutor(self.handle, i, ctypes.byref(handle)))
            self.train_execs.append(Executor(handle, sym))  # shares the group's executor
        arg_index = {name: i for i, name in enumerate(sym.list_arguments())}
        self.param_idx = [arg_index[name] for name in self.param_names]
        self.param_arrays = [[e.arg_arrays[i] for e in self.train_execs] for i in self.param_idx]
        self.grad_arrays = [[e.grad_arrays[i] for e in self.train_execs] for i in self.param_idx]
        self.aux_arrays = [[e.aux_arrays[i] for e in self.train_execs] for i in range(len(sym.aux_states))]

    def __del__(self):
        if getattr(self, "handle", None) and lib is not None:
            lib.SymcExecutorGroupFree(self.handle)
            self.handle = None

    def load_data_batch(self, data_batch):
        """Copies each device's rows of the batch's data and labels into its inputs."""
        arrays = list(data_batch.data) + list(getattr(data_batch, "label", None) or [])
        names = self.data_names + self.label_names
        handles = [as_ndarray(a if isinstance(a, NDArray) else np.asarray(a, dtype=np.float32)) for a in arrays]
        check_call(lib.SymcExecutorGroupLoadDataBatch(self.handle, len(names),
                                                      c_array(ctypes.c_char_p, [c_str(n) for n in names]),
                                                      c_handles(h.handle for h in handles)))

    def forward(self, is_train=False):
        check_call(lib.SymcExecutorGroupForward(self.handle, int(bool(is_train))))

    def backward(self):
        check_call(lib.SymcExecutorGroupBackward(self.handle))

    def aggregate_gradients(self):
        """kvstore 'local' pushpull of every gradient: the sum over the
        devices, in place in each device's gradient array."""
        check_call(lib.SymcExecutorGroupAggregateGradients(self.handle))

    def update(self, optimizer):
        """optimizer's step on every device's parameters (after
        aggregate_gradients), each with its own state, as MXNet's updater
        keys them: parameter index * devices + device."""
        check_call(lib.SymcExecutorGroupUpdate(self.handle, optimizer.handle))

    def update_metric(self, metric, labels, pre_sliced=False):
        """metric.update with each device's labels and outputs."""
        for i, (texec, islice) in enumerate(zip(self.train_execs, self.slices)):
            if pre_sliced:
                labels_slice = labels[i]
            else:
                labels_slice = [np.asarray(label.asnumpy() if hasattr(label, "asnumpy") else label)[islice]
                                for label in labels]
            metric.update(labels_slice, texec.outputs)

    def install_monitor(self, monitor):
        for texec in self.train_execs:
            monitor.install(texec)


class DataParallelExecutorManager:
    """executor_manager.DataParallelExecutorManager, the helper MXNet's
    FeedForward trains with."""

    def __init__(self, symbol, ctx, train_data, arg_names, param_names, aux_names, work_load_list=None,
                 logger=None, sym_gen=None):
        if logger is None:
            logger = logging
        num_device = len(ctx)
        logger.info("Start training with %s", str(ctx))
        if work_load_list is None:
            work_load_list = [1] * num_device
        assert isinstance(work_load_list, list) and len(work_load_list) == num_device, \
            "Invalid settings for work load. "
        self.slices = _split_input_slice(train_data.batch_size, work_load_list)
        self.arg_names, self.param_names, self.aux_names = arg_names, param_names, aux_names
        self.ctx = ctx
        self.execgrp = DataParallelExecutorGroup(symbol, self.arg_names, self.param_names, self.ctx, self.slices,
                                                 train_data)
        self.symbol = symbol
        self.sym_gen = sym_gen
        self.curr_execgrp = self.execgrp
        if self.sym_gen is not None:
            self.execgrp_bucket = {train_data.default_bucket_key: self.execgrp}

    def install_monitor(self, monitor):
        if self.sym_gen is not None:
            raise NotImplementedError("Monitoring is not implemented for bucketing")
        self.execgrp.install_monitor(monitor)

    def set_params(self, arg_params, aux_params):
        """copy_params_from on every device's executor."""
        for texec in self.execgrp.train_execs:
            texec.copy_params_from(arg_params, aux_params)

    def copy_to(self, arg_params, aux_params):
        """Each parameter and aux state averaged over the devices, into the
        dicts' arrays (cast to their dtypes)."""
        for names, blocks, target in ((self.param_names, self.param_arrays, arg_params),
                                      (self.aux_names, self.aux_arrays, aux_params)):
            for name, block in zip(names, blocks):
                weight = sum(w.asnumpy().astype(np.float64) for w in block) / len(block)
                np.copyto(np.asarray(target[name]), weight.astype(np.asarray(target[name]).dtype))

    @property
    def param_arrays(self):
        return self.execgrp.param_arrays

    @property
    def grad_arrays(self):
        return self.execgrp.grad_arrays

    @property
    def aux_arrays(self):
        return self.execgrp.aux_arrays

    def load_data_batch(self, data_batch):
        """Loads the batch, switching to its bucket's group with sym_gen."""
        if self.sym_gen is not None:
            key = data_batch.bucket_key
            if key not in self.execgrp_bucket:
                symbol = self.sym_gen(key)
                self.execgrp_bucket[key] = DataParallelExecutorGroup(
                    symbol, self.arg_names, self.param_names, self.ctx, self.slices, data_batch,
                    shared_group=self.execgrp)
            self.curr_execgrp = self.execgrp_bucket[key]
        else:
            self.curr_execgrp = self.execgrp
        self.curr_execgrp.load_data_batch(data_batch)

    def forward(self, is_train=False):
        self.curr_execgrp.forward(is_train=is_train)

    def backward(self):
        self.curr_execgrp.backward()

    def aggregate_gradients(self):
        self.curr_execgrp.aggregate_gradients()

    def update(self, optimizer):
        self.curr_execgrp.update(optimizer)

    def update_metric(self, metric, labels, pre_sliced=False):
        self.curr_execgrp.update_metric(metric, labels, pre_sliced)


__all__ = ["DataParallelExecutorGroup", "DataParallelExecutorManager"]
