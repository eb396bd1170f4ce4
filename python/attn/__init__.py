"""attn from Python: compile attention specs, call the kernels on torch
tensors or numpy arrays without a copy, and use them as PyTorch ops.

    import attn, torch
    kernel = attn.compile(open("spec.mlir").read(), func="f")   # JIT
    out = kernel(q, k, v)            # torch tensors (CPU) or numpy arrays

    op = attn.torch_op(open("spec.mlir").read(), func="f")
    out = op(q, k, v)                # a torch.library custom op, with autograd

docs/python.md is the reference. Every failure raises attn.Error (a
ValueError) whose text carries the spec's <name>:line:col diagnostics.
"""

import collections

from ._attn import Error
from . import _attn

__all__ = ["Error", "Kernel", "TensorSpec", "compile", "torch_op"]

TensorSpec = collections.namedtuple("TensorSpec", ["name", "shape", "dtype"])
TensorSpec.__doc__ = ("An argument or result of a kernel: its name in the "
                      "spec, its shape (None for a dynamic dim) and dtype "
                      "('float32', 'float64', 'bfloat16' or 'float16').")


def _is_torch_tensor(value):
    # torch is optional: numpy arrays need no import of it.
    cls = type(value)
    return cls.__module__.startswith("torch") and hasattr(value, "detach")


def _new_array(like_torch, shape, dtype):
    if like_torch:
        import torch
        return torch.empty(shape, dtype=getattr(torch, dtype))
    import numpy
    if dtype == "bfloat16":
        raise Error("numpy has no bfloat16: call a kernel with bfloat16 "
                    "arguments or results on torch tensors")
    return numpy.empty(shape, dtype=dtype)


class Kernel:
    """A compiled spec function. Call it with one array per argument, in the
    spec's order; it returns the result (or a tuple of results) as arrays of
    the inputs' kind: torch tensors if any input is one, else numpy arrays.
    Inputs must be contiguous CPU arrays of the argument's dtype and a shape
    that fits its type; they are read in place. `out=` takes preallocated
    results (a tuple when there are several), written in place.
    """

    def __init__(self, native):
        self._native = native
        self.name = native.name
        self.arguments = [TensorSpec(*a) for a in native.arguments]
        self.results = [TensorSpec(*r) for r in native.results]
        # The trailing results that are saved statistics (save_statistics).
        self.saved_statistics = native.saved_statistics

    def __repr__(self):
        def show(specs):
            return ", ".join(
                f"{s.name}: {'x'.join('?' if d is None else str(d) for d in s.shape)}"
                f" {s.dtype}" for s in specs)
        return (f"<attn.Kernel @{self.name}({show(self.arguments)}) -> "
                f"({show(self.results)})>")

    def result_shapes(self, *shapes):
        """The result shapes for arguments of these shapes."""
        return [tuple(s) for s in self._native.result_shapes(
            [[int(d) for d in shape] for shape in shapes])]

    def __call__(self, *args, out=None):
        if len(args) != len(self.arguments):
            names = ", ".join(a.name for a in self.arguments)
            raise Error(f"@{self.name} takes {len(self.arguments)} arguments "
                        f"({names}), got {len(args)}")
        like_torch = any(_is_torch_tensor(a) for a in args)
        # A tensor that requires grad is read, not differentiated, here
        # (attn.torch_op differentiates); detach() makes no copy.
        inputs = [a.detach() if _is_torch_tensor(a) else a for a in args]
        for spec, value in zip(self.arguments, inputs):
            which = f"argument '{spec.name}' of @{self.name}"
            if not hasattr(value, "shape"):
                raise Error(f"{which} must be a torch tensor or numpy "
                            f"array, got {type(value).__name__}")
            if _is_torch_tensor(value) and value.device.type != "cpu":
                raise Error(f"{which} is on device '{value.device}': attn "
                            f"kernels take CPU tensors")
        shapes = self.result_shapes(*(tuple(a.shape) for a in inputs))
        if out is None:
            outputs = [_new_array(like_torch, s, r.dtype)
                       for s, r in zip(shapes, self.results)]
        else:
            outputs = list(out) if isinstance(out, (tuple, list)) else [out]
            for i, (o, s) in enumerate(zip(outputs, shapes)):
                if tuple(o.shape) != s:
                    raise Error(f"out[{i}] of @{self.name} has shape "
                                f"{tuple(o.shape)}, the result has {s}")
        try:
            self._native.run(inputs, outputs)
        except TypeError as error:
            # nanobind found no DLPack or buffer-protocol array among them.
            raise Error(f"@{self.name} takes torch tensors or numpy arrays "
                        f"(DLPack or the buffer protocol): {error}") from None
        return outputs[0] if len(outputs) == 1 else tuple(outputs)


def compile(spec, func="", *, target="host", aot=False, grad=False,
            save_statistics=False, pipeline="", default_pipeline=True,
            tuning_cache="",
            autoscheduler="", schedule=None, shapes=None, name="<spec>"):
    """Compiles function `func` of the attn spec text `spec` (the only
    function with a body when func is empty) into a kernel of this process.

    target: a Halide target string ("host", "host-opencl", ...).
    aot: compile ahead of time as attn-compile does (static library and
        runtime, linked into a shared object and loaded) instead of JIT.
    grad: compile @func_grad (--attn-grad): its arguments are func's, then
        one cotangent per result; its results the gradients of the
        arguments not marked {attn.no_grad}.
    save_statistics: as --attn-grad=save-statistics=1 (docs/training.md,
        "Saved statistics"): @func also returns the row log-sum-exp of each
        softmax attention whose gradient is fused and its unrounded
        output, the normalized context of each softmax attn.efficient, and
        the context and key sums of each linear attention computed in
        linear form and the weights of each double-normalized attention
        (EANet), after its own results (Kernel.saved_statistics counts
        them; f32 for bf16 and f16 ops), and with grad=True @func_grad
        takes them after the cotangents.
    pipeline / default_pipeline: as attn-run's --pass-pipeline and
        --no-default-pipeline.
    tuning_cache, autoscheduler: as attn-run's flags of those names.
    schedule: hand-schedule knobs, {"group.name": value}.
    shapes: the argument shapes to choose the schedule for (dynamic dims).
    name: names the spec in diagnostics (a file name, say).
    """
    if not isinstance(spec, str):
        raise Error(f"spec must be the text of an attn spec (str), got "
                    f"{type(spec).__name__}")
    params = [f"{k}={v}" for k, v in (schedule or {}).items()]
    estimates = [[int(d) for d in s] for s in (shapes or [])]
    try:
        native = _attn.compile(spec, name, func, target, aot, grad,
                               save_statistics, pipeline, default_pipeline,
                               tuning_cache, autoscheduler, params, estimates)
    except Error as error:
        # The library words its errors for attn-run's flags.
        text = str(error)
        for flag, keyword in _KEYWORD_OF_FLAG.items():
            text = text.replace(flag, keyword)
        raise Error(text) from None
    return Kernel(native)


_KEYWORD_OF_FLAG = {"--pass-pipeline": "pipeline=",
                    "--schedule-param": "schedule=",
                    "--tuning-cache": "tuning_cache=",
                    "--autoscheduler": "autoscheduler="}


def torch_op(spec, func="", **options):
    """Registers function `func` of `spec` as a torch.library custom op
    (attn::<func>_<hash of spec and options>) with a fake implementation,
    so it runs inside torch.compile'd models, and with autograd through the
    gradient kernel @func_grad, compiled at the first backward. Returns the
    op; call it with torch tensors. `options` are compile()'s; with
    save_statistics=True the forward saves its softmax row log-sum-exp (and
    efficient attention's context) for the backward instead of the backward
    recomputing it, and the op
    returned is a function over the custom op that returns f's own
    results only."""
    from ._torch import register
    return register(spec, func, options)
