"""mx.optimizer's SGD on libsymrt, as MXNet 1.9.1 computes it:

    g = rescale_grad * grad (clipped to +-clip_gradient when set)
    w = (1 - lr * wd) * w - lr * g                       (no momentum)
    m = momentum * m - lr * wd * w - lr * g; w = w + m   (momentum)

with lr and wd scaled by each parameter's lr_mult and wd_mult: the
symbol's __lr_mult__ / __wd_mult__ attributes, set_lr_mult / set_wd_mult,
and wd_mult 0 for parameters whose names end in neither _weight nor _gamma.
"""
import ctypes

from .base import c_array, c_str, check_call, lib


class SGD:
    """mx.optimizer.SGD (dense float32 arrays; the momentum lives in
    libsymrt, keyed by the updater index)."""

    def __init__(self, momentum=0.0, lazy_update=True, learning_rate=0.01, wd=0.0, rescale_grad=1.0,
                 clip_gradient=None, param_idx2name=None, sym=None, **kwargs):
        self.momentum, self.lazy_update = momentum, lazy_update
        self.lr, self.wd, self.rescale_grad, self.clip_gradient = learning_rate, wd, rescale_grad, clip_gradient
        self.idx2name = dict(param_idx2name or {})
        self._symbol_json = sym.tojson() if sym is not None else None
        self.lr_mult, self.wd_mult = {}, {}
        self.handle = ctypes.c_void_p()
        check_call(lib.SymcOptimizerCreateSGD(ctypes.c_float(learning_rate), ctypes.c_float(momentum),
                                              ctypes.c_float(wd), ctypes.c_float(rescale_grad),
                                              ctypes.c_float(clip_gradient or 0.0), ctypes.byref(self.handle)))
        self._set_multipliers()

    def __del__(self):
        if getattr(self, "handle", None) and lib is not None:
            lib.SymcOptimizerFree(self.handle)
            self.handle = None

    def _set_multipliers(self):
        names = sorted(set(self.idx2name.values()))

        def named(values):
            keys = list(values)
            return (len(keys), c_array(ctypes.c_char_p, [c_str(k) for k in keys]),
                    c_array(ctypes.c_float, [float(values[k]) for k in keys]))

        check_call(lib.SymcOptimizerSetMultipliers(
            self.handle, c_str(self._symbol_json) if self._symbol_json else None, len(names),
            c_array(ctypes.c_char_p, [c_str(n) for n in names]), *named(self.lr_mult), *named(self.wd_mult)))

    def set_lr_mult(self, args_lr_mult):
        self.lr_mult = dict(args_lr_mult)
        self._set_multipliers()

    def set_wd_mult(self, args_wd_mult):
        self.wd_mult = dict(args_wd_mult)
        self._set_multipliers()

    def set_learning_rate(self, lr):
        self.lr = lr
        check_call(lib.SymcOptimizerSetLearningRate(self.handle, ctypes.c_float(lr)))

    @property
    def learning_rate(self):
        return self.lr

    def update(self, index, weight, grad, state=None):
        """One step on `weight` from `grad`; the momentum is kept under `index`."""
        check_call(lib.SymcOptimizerUpdate(self.handle, int(index), c_str(self.idx2name.get(index, str(index))),
                                           weight.handle, grad.handle))


def create(name, **kwargs):
    """mx.optimizer.create: 'sgd' (the only optimizer symc has yet)."""
    if name.lower() != "sgd":
        raise ValueError("Cannot find optimizer %s" % name)
    return SGD(**kwargs)


def get_updater(optimizer):
    """mx.optimizer.get_updater: updater(index, grad, weight)."""
    def updater(index, grad, weight):
        optimizer.update(index, weight, grad)
    return updater


__all__ = ["SGD", "create", "get_updater"]
