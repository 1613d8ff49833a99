"""mx.sym: a symbol loaded from JSON, compiled when it is bound.

`symc.sym.load("m-symbol.json").simple_bind(ctx, data=(32, 784))` compiles the
model for those shapes (cached, see symc.compile) and binds it, so an MXNet
script moves to symc by changing its import.
"""
import json
import subprocess

from .artifact import _symbol_json, compile as compile_symbol
from .base import MXNetError, find_compiler

__all__ = ["Symbol", "load", "load_json"]


class Symbol:
    """An MXNet symbol's JSON, bound by compiling it for the bound shapes."""

    def __init__(self, text):
        self._json = text
        self._interface = None

    def tojson(self):
        return self._json

    def save(self, fname):
        with open(fname, "w") as f:
            f.write(self._json)

    def _describe(self, shapes=None):
        """`symc compile --emit=interface`: arguments, aux states and outputs
        (with shapes when `shapes` are given)."""
        options = ["--shape=%s=%s" % (name, ",".join(str(int(d)) for d in shape))
                   for name, shape in sorted((shapes or {}).items())]
        result = subprocess.run([find_compiler(), "compile", "-", "--emit=interface"] + options, input=self._json,
                                capture_output=True, text=True)
        if result.returncode != 0:
            raise MXNetError(result.stderr.strip())
        return json.loads(result.stdout)

    def _names(self, key):
        if self._interface is None:
            self._interface = self._describe()
        return [t["name"] for t in self._interface[key]]

    def infer_shape(self, *args, **kwargs):
        """symbol.infer_shape(**shapes): (arg_shapes, out_shapes, aux_shapes)
        in list order, by MXNet's rules (a 0 dim is unknown)."""
        if args:
            kwargs.update(zip(self.list_arguments(), args))
        described = self._describe({name: shape for name, shape in kwargs.items() if shape})
        return tuple([tuple(t["shape"]) for t in described[key]] for key in ("arguments", "outputs", "aux_states"))

    def list_arguments(self):
        return self._names("arguments")

    def list_outputs(self):
        return self._names("outputs")

    def list_auxiliary_states(self):
        return self._names("aux_states")

    def _compile(self, shapes, grad_req):
        """Compiled for `shapes`, with the backward when any grad_req is not null."""
        names = self.list_arguments()
        if grad_req is None or isinstance(grad_req, str):
            reqs = {n: grad_req or "null" for n in names}
        elif isinstance(grad_req, dict):
            reqs = {n: grad_req.get(n, "null") for n in names}
        else:
            reqs = dict(zip(names, list(grad_req) + ["null"] * (len(names) - len(grad_req))))
        train = any(r != "null" for r in reqs.values())
        nulls = {n: "null" for n, r in reqs.items() if r == "null"} if train else None
        return compile_symbol(self._json, shapes, train=train, grad_req=nulls)

    def simple_bind(self, ctx, grad_req="write", type_dict=None, stype_dict=None, group2ctx=None,
                    shared_arg_names=None, shared_exec=None, shared_buffer=None, **kwargs):
        shapes = {name: shape for name, shape in kwargs.items() if isinstance(shape, tuple)}
        artifact = self._compile(shapes, grad_req)
        exe = artifact.simple_bind(ctx, grad_req, type_dict, stype_dict, group2ctx, shared_arg_names,
                                   shared_exec, shared_buffer, **kwargs)
        return self._reshapeable(exe, shapes, grad_req)

    def _reshapeable(self, exe, shapes, grad_req):
        """exe.reshape compiles this symbol for shapes its artifact cannot run."""
        exe._recompile = lambda new_shapes: self._compile(new_shapes, grad_req)
        exe._bound_shapes = dict(shapes)
        return exe

    def bind(self, ctx, args, args_grad=None, grad_req="write", aux_states=None, group2ctx=None,
             shared_exec=None):
        names = self.list_arguments()
        if isinstance(args, dict):
            shapes = {n: tuple(a.shape) for n, a in args.items() if n in names}
        else:
            shapes = {n: tuple(a.shape) for n, a in zip(names, args)}
        # Gradients are compiled only for arguments that have a gradient array.
        compiled_req = grad_req
        if args_grad is None:
            compiled_req = "null"
        elif isinstance(args_grad, dict) and isinstance(grad_req, str):
            compiled_req = {n: grad_req for n in args_grad}
        artifact = self._compile(shapes, compiled_req)
        exe = artifact.bind(ctx, args, args_grad, grad_req, aux_states, group2ctx, shared_exec)
        return self._reshapeable(exe, shapes, compiled_req)


def load(fname):
    """mx.sym.load: a -symbol.json file."""
    return Symbol(_symbol_json(fname))


def load_json(json_str):
    """mx.sym.load_json."""
    return Symbol(json_str)

