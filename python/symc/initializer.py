"""mx.initializer's dispatch by parameter name, with Uniform, Normal and
Xavier for weights: biases, betas and moving means start at 0, gammas and
moving variances at 1. (numpy draws: the values are not MXNet's.)"""
import numpy as np


class Initializer:
    def __call__(self, name, arr):
        """Fills `arr` (a numpy view or an array with asnumpy) for parameter `name`."""
        view = np.asarray(arr)
        if name.endswith(("_bias", "_beta", "moving_mean", "running_mean")):
            view[...] = 0
        elif name.endswith(("_gamma", "moving_var", "running_var")):
            view[...] = 1
        elif name.endswith("_weight"):
            view[...] = self._weight(view.shape)
        else:
            raise ValueError("Unknown initialization pattern for %s. Default initialization is now limited to "
                             "\"weight\", \"bias\", \"gamma\" (1.0), and \"beta\" (0.0)." % name)


class Uniform(Initializer):
    def __init__(self, scale=0.07):
        self.scale = scale

    def _weight(self, shape):
        return np.random.uniform(-self.scale, self.scale, shape)


class Normal(Initializer):
    def __init__(self, sigma=0.01):
        self.sigma = sigma

    def _weight(self, shape):
        return np.random.normal(0, self.sigma, shape)


class Xavier(Initializer):
    def __init__(self, rnd_type="uniform", factor_type="avg", magnitude=3):
        self.rnd_type, self.factor_type, self.magnitude = rnd_type, factor_type, float(magnitude)

    def _weight(self, shape):
        hw_scale = float(np.prod(shape[2:])) if len(shape) > 2 else 1.0
        fan_in, fan_out = (shape[1] if len(shape) > 1 else shape[0]) * hw_scale, shape[0] * hw_scale
        factor = {"avg": (fan_in + fan_out) / 2.0, "in": fan_in, "out": fan_out}[self.factor_type]
        scale = np.sqrt(self.magnitude / factor)
        if self.rnd_type == "uniform":
            return np.random.uniform(-scale, scale, shape)
        return np.random.normal(0, scale, shape)


__all__ = ["Initializer", "Normal", "Uniform", "Xavier"]
