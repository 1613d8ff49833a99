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

from .artifact import Artifact, _NDList, compile as compile_symbol
from .base import c_array, c_handles, c_str, check_call, lib
from .executor import Executor
from .ndarray import NDArray, as_ndarray


_BUCKET_ARTIFACT = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p)


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


def _contexts(ctx):
    """num_contexts, dev_types, dev_ids."""
    return (len(ctx), c_array(ctypes.c_int, [c.device_typeid for c in ctx]),
            c_array(ctypes.c_int, [c.device_id for c in ctx]))


def _shape_args(shapes):
    """num, names, shape_data, shape_ndim of (name, shape) pairs."""
    return (len(shapes), c_array(ctypes.c_char_p, [c_str(n) for n, _ in shapes]),
            c_array(ctypes.c_int64, [d for _, shape in shapes for d in shape]),
            c_array(ctypes.c_int, [len(shape) for _, shape in shapes]))


def _name_args(names):
    return len(names), c_array(ctypes.c_char_p, [c_str(n) for n in names])


def _batch_arrays(data_batch):
    """The batch's data then label arrays, as libsymrt handles."""
    arrays = list(data_batch.data) + list(getattr(data_batch, "label", None) or [])
    handles = [as_ndarray(a if isinstance(a, NDArray) else np.asarray(a, dtype=np.float32)) for a in arrays]
    return handles, c_handles(h.handle for h in handles)


def _training_artifact(sym, slices, input_shapes):
    """`sym` itself if an Artifact, else the Symbol compiled for training at
    each slice's size: one artifact with a shape variant per size. The first
    input lists the sizes; the others' batch dims are inferred from it (0)."""
    if isinstance(sym, Artifact):
        return sym
    sizes = sorted({s.stop - s.start for s in slices})
    shapes = {}
    for i, (name, shape) in enumerate(input_shapes):
        shapes[name] = ((tuple(sizes) if len(sizes) > 1 else sizes[0]) if i == 0 else 0,) + shape[1:]
    return compile_symbol(sym, shapes, train=True, grad_req={name: "null" for name, _ in input_shapes},
                          monitor=False)


def _input_shapes(batch):
    """(name, shape) of a data iterator's or batch's data and labels."""
    return _descs(getattr(batch, "provide_data", None)) + _descs(getattr(batch, "provide_label", None))


class DataParallelExecutorGroup:
    """executor_manager.DataParallelExecutorGroup: `sym` is a symc Artifact
    (compiled for training at the slices' batch sizes, e.g. --shape
    'data=2|3,...') or a Symbol (compiled here, cached)."""

    def __init__(self, sym, arg_names, param_names, ctx, slices, train_data, shared_group=None, handle=None):
        if len(set(arg_names)) != len(arg_names):
            raise ValueError("Duplicate names detected, %s" % str(arg_names))
        self.param_names = list(param_names)
        self.slices = list(slices)
        self.data_shapes = _input_shapes(train_data)
        self.data_names = [name for name, _ in _descs(train_data.provide_data)]
        self.label_names = [name for name, _ in _descs(getattr(train_data, "provide_label", None))]
        sym = _training_artifact(sym, self.slices, self.data_shapes)
        self._artifact = sym
        if handle is None:
            handle = ctypes.c_void_p()
            work_load = [s.stop - s.start for s in self.slices]  # reproduces these slices
            check_call(lib.SymcExecutorGroupCreate(
                sym.handle, *_contexts(ctx), c_array(ctypes.c_double, work_load), *_shape_args(self.data_shapes),
                *_name_args(self.param_names), shared_group.handle if shared_group is not None else None,
                ctypes.byref(handle)))
        self.handle = handle
        self.train_execs = []
        for i in range(len(ctx)):
            executor = ctypes.c_void_p()
            check_call(lib.SymcExecutorGroupGetExecutor(self.handle, i, ctypes.byref(executor)))
            self.train_execs.append(Executor(executor, sym))  # shares the group's executor
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
        _, handles = _batch_arrays(data_batch)
        check_call(lib.SymcExecutorGroupLoadDataBatch(self.handle, *_name_args(self.data_names + self.label_names),
                                                      handles))

    def set_num_threads(self, threads):
        """The threads the executors share (each runs on its own thread with
        its part of them); 0: the hardware's."""
        check_call(lib.SymcExecutorGroupSetNumThreads(self.handle, int(threads)))

    def forward(self, is_train=False):
        check_call(lib.SymcExecutorGroupForward(self.handle, int(bool(is_train))))

    def backward(self):
        check_call(lib.SymcExecutorGroupBackward(self.handle))

    def aggregate_gradients(self, kvstore="local"):
        """kvstore pushpull of every gradient: the sum over the devices, in
        place in each device's gradient array. 'local' sums in host memory,
        'device' on the GPUs (NCCL where each executor has a GPU of its own),
        'nccl' with NCCL only."""
        check_call(lib.SymcExecutorGroupAggregateGradientsEx(self.handle, c_str(kvstore)))

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
    FeedForward trains with, over libsymrt's manager (SymcExecutorManager):
    with sym_gen, a bucket's group is bound on its first batch, sharing the
    default group's parameters and memory."""

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
        self.ctx, self.symbol, self.sym_gen = ctx, symbol, sym_gen
        self.default_bucket_key = getattr(train_data, "default_bucket_key", None)
        artifact = _training_artifact(symbol, self.slices, _input_shapes(train_data))
        self._bucket_artifacts, self._bucket_batch, self._bucket_error = {}, None, None
        self._sym_gen_callback = _BUCKET_ARTIFACT(self._artifact_of_bucket) if sym_gen is not None else None
        self.handle = ctypes.c_void_p()
        check_call(lib.SymcExecutorManagerCreate(
            artifact.handle, *_contexts(ctx), c_array(ctypes.c_double, work_load_list),
            *_shape_args(_input_shapes(train_data)), *_name_args(param_names), self._sym_gen_callback, None,
            c_str(str(self.default_bucket_key)), ctypes.byref(self.handle)))
        self.execgrp = self._current_group(artifact, train_data)
        self.curr_execgrp = self.execgrp
        self.execgrp_bucket = {self.default_bucket_key: self.execgrp}

    def __del__(self):
        if getattr(self, "handle", None) and lib is not None:
            lib.SymcExecutorManagerFree(self.handle)
            self.handle = None

    def _current_group(self, artifact, batch):
        """The group libsymrt's manager runs now, wrapped."""
        handle = ctypes.c_void_p()
        check_call(lib.SymcExecutorManagerGetCurrentGroup(self.handle, ctypes.byref(handle)))
        return DataParallelExecutorGroup(artifact, self.arg_names, self.param_names, self.ctx, self.slices, batch,
                                         handle=handle)

    def _artifact_of_bucket(self, key, user):
        """sym_gen's symbol for the batch being loaded, compiled (called by libsymrt)."""
        try:
            artifact = _training_artifact(self.sym_gen(self._bucket_batch.bucket_key), self.slices,
                                          _input_shapes(self._bucket_batch))
            self._bucket_artifacts[self._bucket_batch.bucket_key] = artifact  # alive as long as the manager
            return artifact.handle.value
        except Exception as error:  # noqa: BLE001 - cannot cross the C boundary; raised after it
            self._bucket_error = error
            return None

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
        args, aux = _NDList({}), _NDList({})
        check_call(lib.SymcExecutorGroupCopyTo(self.execgrp.handle, args.handle, aux.handle))
        for averaged, target in ((args, arg_params), (aux, aux_params)):
            for name, value in averaged.items():
                if name in target:
                    np.copyto(np.asarray(target[name]), np.asarray(value), casting="unsafe")

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
        key = data_batch.bucket_key if self.sym_gen is not None else self.default_bucket_key
        shapes = _input_shapes(data_batch)
        self._bucket_batch, self._bucket_error = data_batch, None
        names = [name for name, _ in shapes] or self.curr_execgrp.data_names + self.curr_execgrp.label_names
        _, handles = _batch_arrays(data_batch)
        try:
            check_call(lib.SymcExecutorManagerLoadDataBatch(self.handle, c_str(str(key)), *_name_args(names), handles,
                                                            *_shape_args(shapes)))
        except Exception:
            if self._bucket_error is not None:
                raise self._bucket_error from None
            raise
        if key not in self.execgrp_bucket:
            self.execgrp_bucket[key] = self._current_group(self._bucket_artifacts[key], data_batch)
        self.curr_execgrp = self.execgrp_bucket[key]

    def forward(self, is_train=False):
        self.curr_execgrp.forward(is_train=is_train)

    def backward(self):
        self.curr_execgrp.backward()

    def aggregate_gradients(self, kvstore="local"):
        self.curr_execgrp.aggregate_gradients(kvstore)

    def update(self, optimizer):
        self.curr_execgrp.update(optimizer)

    def update_metric(self, metric, labels, pre_sliced=False):
        self.curr_execgrp.update_metric(metric, labels, pre_sliced)


__all__ = ["DataParallelExecutorGroup", "DataParallelExecutorManager"]
