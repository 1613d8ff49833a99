"""mx.kvstore's roles in FeedForward.fit: how each step's gradients are
summed before the update.

'local' / 'device' / 'nccl': over one process's devices (executor groups
sum them in place): 'local' in host memory, 'device' on the GPUs (NCCL where
each executor has a GPU of its own, else as 'local'), 'nccl' with NCCL only.
'dist_sync' / 'dist_sync_device': and over the processes of an `mpirun -np N`
job, with libsymrt_mpi: Open MPI's all-reduce in host memory, or NCCL over
each worker's first GPU. Every worker applies the same update, and the batch
is the workers' batches together (rescale_grad 1/(batch * num_workers)).
"""
import ctypes
import os

from .artifact import verify
from .base import c_str, check_call, lib


def _mpi_library():
    """libsymrt_mpi, beside the libsymrt loaded, with its symbols global
    (Open MPI's plugins look for libmpi's there)."""
    name = "libsymrt_mpi.so.0.2"
    directory = os.path.dirname(lib._name)
    path = os.path.join(directory, name) if directory else name
    try:
        mpi = ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
    except OSError as error:
        raise ValueError("kvstore 'dist_sync' needs libsymrt_mpi (symc built with Open MPI, libopenmpi-dev): %s"
                         % error) from None
    mpi.SymcMpiCheckSame.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
    return mpi


class KVStore:
    """A 'local', 'device' or 'nccl' store: one process."""

    def __init__(self, kind):
        self.type, self.rank, self.num_workers = kind, 0, 1

    def init(self, group):
        """Before training: the workers agree on the model (one process: nothing to do)."""

    def sum_gradients(self, group):
        """Each parameter's gradient summed over the devices (and workers)."""
        group.aggregate_gradients(self.type)


class DistKVStore(KVStore):
    """'dist_sync' over mpirun's processes."""

    def __init__(self, kind):
        super().__init__(kind)
        self._mpi = _mpi_library()
        rank, size = ctypes.c_int(), ctypes.c_int()
        check_call(self._mpi.SymcMpiInit(ctypes.byref(rank), ctypes.byref(size)))
        self.rank, self.num_workers = rank.value, size.value

    def init(self, group):
        """Every worker must run the same artifact at the same shapes; they
        then start from rank 0's parameters."""
        check_call(self._mpi.SymcMpiCheckSame(c_str("the compiled artifact"),
                                              c_str(verify(group._artifact.path)[:64])))
        check_call(self._mpi.SymcMpiCheckSame(c_str("input shapes"), c_str(repr(group.data_shapes)[:64])))
        check_call(self._mpi.SymcMpiBroadcastParams(group.handle))

    def sum_gradients(self, group):
        group.aggregate_gradients("device" if self.type == "dist_sync_device" else "local")
        check_call(self._mpi.SymcMpiAllReduceGradientsEx(group.handle, c_str(self.type)))


def create(name="local"):
    """mx.kv.create: 'local', 'device', 'nccl', 'dist_sync' or 'dist_sync_device'."""
    if not isinstance(name, str):
        raise TypeError("name must be a string")
    if name in ("local", "device", "nccl"):
        return KVStore(name)
    if name in ("dist_sync", "dist_sync_device"):
        return DistKVStore(name)
    raise ValueError("Unknown KVStore type %s: symc has 'local', 'device', 'nccl', 'dist_sync' and "
                     "'dist_sync_device'" % name)


__all__ = ["DistKVStore", "KVStore", "create"]
