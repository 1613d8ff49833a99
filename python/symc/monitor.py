"""mx.monitor.Monitor: statistics of every node's outputs, every `interval` batches."""
import logging
import math
import re

from .ndarray import NDArray, array

__all__ = ["Monitor"]


def _rms(x):
    """MXNet's default stat: norm(x) / sqrt(x.size), as a (1,) array."""
    values = x.asnumpy().astype("float64")
    return array([math.sqrt(float((values * values).sum())) / math.sqrt(values.size or 1)])


class Monitor:
    """Monitor(interval, stat_func=None, pattern='.*', sort=False, monitor_all=False),
    with MXNet's install / tic / toc / toc_print."""

    def __init__(self, interval, stat_func=None, pattern=".*", sort=False, monitor_all=False):
        self.stat_func = stat_func or _rms
        self.interval = interval
        self.activated = False
        self.queue = []
        self.step = 0
        self.exes = []
        self.re_prog = re.compile(pattern)
        self.sort = sort
        self.monitor_all = monitor_all

    def stat_helper(self, name, array):
        array = NDArray(array, writable=False)
        name = name.decode() if isinstance(name, bytes) else name
        if not self.activated or not self.re_prog.match(name):
            return
        self.queue.append((self.step, name, self.stat_func(array)))

    def install(self, exe):
        exe.set_monitor_callback(self.stat_helper, self.monitor_all)
        self.exes.append(exe)

    def tic(self):
        """Starts collecting if this batch is one of every `interval`."""
        if self.step % self.interval == 0:
            self.queue = []
            self.activated = True
        self.step += 1

    def toc(self):
        """Ends collecting: (step, name, stats text) per monitored array, the
        arguments and aux states last."""
        if not self.activated:
            return []
        for exe in self.exes:
            for name, array in zip(exe._artifact.list_arguments(), exe.arg_arrays):
                if self.re_prog.match(name):
                    self.queue.append((self.step, name, self.stat_func(array)))
            for name, array in zip(exe._artifact.list_auxiliary_states(), exe.aux_arrays):
                if self.re_prog.match(name):
                    self.queue.append((self.step, name, self.stat_func(array)))
        self.activated = False
        if self.sort:
            self.queue.sort(key=lambda x: x[1])
        res = []
        for step, name, values in self.queue:
            text = ""
            for v in values if isinstance(values, list) else [values]:
                text += (str(v.asscalar()) if v.shape == (1,) else str(v.asnumpy())) + "\t"
            res.append((step, name, text))
        self.queue = []
        return res

    def toc_print(self):
        for step, name, text in self.toc():
            logging.info("Batch: {:7d} {:30s} {:s}".format(step, name, text))
