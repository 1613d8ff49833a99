"""mx.io's in-memory data iterator: NDArrayIter over numpy arrays, with the
DataBatch and DataDesc it hands out."""
from collections import namedtuple

import numpy as np


class DataDesc(namedtuple("DataDesc", ["name", "shape"])):
    """An input's name, batch shape, dtype and layout, as provide_data lists it."""

    def __new__(cls, name, shape, dtype=np.float32, layout="NCHW"):
        desc = super().__new__(cls, name, tuple(shape))
        desc.dtype, desc.layout = dtype, layout
        return desc


class DataBatch:
    """One batch: its data and label arrays, and `pad`, how many samples at
    the end repeat earlier ones to fill it."""

    def __init__(self, data, label=None, pad=None, index=None, bucket_key=None, provide_data=None,
                 provide_label=None):
        self.data, self.label, self.pad, self.index = data, label, pad, index
        self.bucket_key, self.provide_data, self.provide_label = bucket_key, provide_data, provide_label


def _named(arrays, default_name):
    """Arrays as (name, numpy array) pairs: one array, a list or a dict."""
    if arrays is None:
        return []
    if isinstance(arrays, dict):
        return [(name, np.asarray(a)) for name, a in sorted(arrays.items())]
    if isinstance(arrays, (list, tuple)):
        if len(arrays) == 1:
            return [(default_name, np.asarray(arrays[0]))]
        return [("_%d_%s" % (i, default_name), np.asarray(a)) for i, a in enumerate(arrays)]
    return [(default_name, np.asarray(arrays.asnumpy() if hasattr(arrays, "asnumpy") else arrays))]


class NDArrayIter:
    """mx.io.NDArrayIter: batches of `batch_size` rows of in-memory arrays;
    last_batch_handle 'pad' fills the last batch from the start (and says so
    in its `pad`), 'discard' drops it."""

    def __init__(self, data, label=None, batch_size=1, shuffle=False, last_batch_handle="pad", data_name="data",
                 label_name="softmax_label"):
        if last_batch_handle not in ("pad", "discard"):
            raise ValueError("last_batch_handle must be 'pad' or 'discard', not %r" % last_batch_handle)
        self.data = _named(data, data_name)
        self.label = _named(label, label_name)
        self.num_data = self.data[0][1].shape[0]
        for name, array in self.data + self.label:
            if array.shape[0] != self.num_data:
                raise ValueError("all arrays need %d samples; %s has %d" % (self.num_data, name, array.shape[0]))
        if last_batch_handle == "discard" and self.num_data < batch_size:
            raise ValueError("batch_size needs to be smaller than data size.")
        self.batch_size, self.shuffle, self.last_batch_handle = batch_size, shuffle, last_batch_handle
        self.default_bucket_key = None
        self.reset()

    @property
    def provide_data(self):
        return [DataDesc(n, (self.batch_size,) + a.shape[1:], a.dtype) for n, a in self.data]

    @property
    def provide_label(self):
        return [DataDesc(n, (self.batch_size,) + a.shape[1:], a.dtype) for n, a in self.label]

    def reset(self):
        self.cursor = 0
        self.order = np.random.permutation(self.num_data) if self.shuffle else np.arange(self.num_data)

    def __iter__(self):
        return self

    def __next__(self):
        remaining = self.num_data - self.cursor
        if remaining <= 0 or (self.last_batch_handle == "discard" and remaining < self.batch_size):
            raise StopIteration
        rows = self.order[np.arange(self.cursor, self.cursor + self.batch_size) % self.num_data]
        pad = max(0, self.batch_size - remaining)
        self.cursor += self.batch_size
        return DataBatch([a[rows] for _, a in self.data], [a[rows] for _, a in self.label], pad=pad)

    next = __next__


__all__ = ["DataBatch", "DataDesc", "NDArrayIter"]
