"""MXNet's fused RNN op in numpy (float64), step by step and row by row.

It is the expected value for what MXNet 1.9.1 runs with cuDNN only: sequence
lengths (cuDNN's padded layout: row n runs its first lengths[n] steps, the
reverse direction from its last one, and outputs 0 past them) and the LSTM
state clip (the cell limited to [min, max] before h = o tanh(c); with
clip_nan a NaN becomes min). check_forward checks this reference against
MXNet's CPU RNN on every RNN case MXNet runs (modes, layers, directions,
projection), so only the cuDNN options rest on it alone.
"""
import numpy as np

GATES = {"rnn_tanh": 1, "rnn_relu": 1, "lstm": 4, "gru": 3}


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def parse_attrs(attrs):
    """RNN's attributes from a symbol's string attribute dict."""
    value = lambda v: {"True": True, "true": True, "False": False, "false": False, "None": None}.get(v, v)
    parsed = {k: value(v) for k, v in attrs.items() if not k.startswith("__")}
    for key in ("state_size", "num_layers", "projection_size"):
        if parsed.get(key) is not None:
            parsed[key] = int(parsed[key])
    for key in ("lstm_state_clip_min", "lstm_state_clip_max"):
        if parsed.get(key) is not None:
            parsed[key] = float(parsed[key])
    return parsed


class Parameters:
    """MXNet's flat vector: every layer's and direction's i2h, h2h (and h2r)
    weights, then their i2h and h2h biases."""

    def __init__(self, flat):
        self.flat, self.offset = flat.astype(np.float64), 0

    def take(self, *shape):
        size = int(np.prod(shape))
        value = self.flat[self.offset:self.offset + size].reshape(shape)
        self.offset += size
        return value


def cell_step(mode, x, h, c, w, clip):
    """One step of one row: x, h the i2h and h2h inputs; returns (h, c)."""
    i2h, h2h, h2r, bx, bh = w
    xs, hs = i2h @ x + bx, h2h @ h + bh
    if mode == "lstm":
        i, f, g, o = np.split(xs + hs, 4)
        c = sigmoid(f) * c + sigmoid(i) * np.tanh(g)
        if clip:
            lo, hi, nan = clip
            c = np.fmin(np.fmax(c, lo), hi) if nan else np.minimum(np.maximum(c, lo), hi)
        h = sigmoid(o) * np.tanh(c)
        return (h2r @ h if h2r is not None else h), c
    if mode == "gru":
        xr, xz, xn = np.split(xs, 3)
        hr, hz, hn = np.split(hs, 3)
        r, z = sigmoid(xr + hr), sigmoid(xz + hz)
        n = np.tanh(xn + r * hn)
        return (1 - z) * n + z * h, c
    s = xs + hs
    return (np.maximum(s, 0) if mode == "rnn_relu" else np.tanh(s)), c


def rnn(data, params, state, cell=None, lengths=None, *, mode, state_size, num_layers, bidirectional=False,
        projection_size=None, lstm_state_clip_min=None, lstm_state_clip_max=None, lstm_state_clip_nan=False,
        state_outputs=False, **_):
    """The outputs MXNet's RNN op gives: out, then with state_outputs the final
    states (and for lstm cells)."""
    steps, batch, _ = data.shape
    hidden, projection = state_size, projection_size or 0
    width, directions = projection or hidden, 2 if bidirectional else 1
    rows = GATES[mode] * hidden
    clip = (lstm_state_clip_min, lstm_state_clip_max, lstm_state_clip_nan) if lstm_state_clip_min is not None else None
    flat = Parameters(params)
    weights, layer_input = [], data.shape[2]
    for _ in range(num_layers * directions):
        weights.append([flat.take(rows, layer_input), flat.take(rows, width),
                        flat.take(projection, hidden) if projection else None])
        if len(weights) % directions == 0:
            layer_input = directions * width
    for w in weights:
        w += [flat.take(rows), flat.take(rows)]
    runs = np.full(batch, steps) if lengths is None else np.clip(np.trunc(lengths), 0, steps).astype(int)
    x = data.astype(np.float64)
    final_h = np.zeros((num_layers * directions, batch, width))
    final_c = np.zeros((num_layers * directions, batch, hidden))
    for layer in range(num_layers):
        out = np.zeros((steps, batch, directions * width))
        for d in range(directions):
            k = layer * directions + d
            for n in range(batch):
                h = state[k, n].astype(np.float64)
                c = cell[k, n].astype(np.float64) if cell is not None else None
                for t in (reversed(range(runs[n])) if d else range(runs[n])):
                    h, c = cell_step(mode, x[t, n], h, c, weights[k], clip)
                    out[t, n, d * width:(d + 1) * width] = h
                final_h[k, n] = h
                if c is not None:
                    final_c[k, n] = c
        x = out
    if not state_outputs:
        return [x]
    return [x, final_h, final_c] if mode == "lstm" else [x, final_h]
