"""attn.torch_op: a spec function as a torch.library custom op.

The forward kernel compiles when the op is registered; its fake
implementation gives torch.compile the result shapes without running it.
The gradient is a second custom op over @func_grad, compiled at the first
backward, so a traced backward is one opaque call too.
"""

import hashlib
import keyword

import torch

from . import Error, compile

# One registration per spec, function and options: torch.library names are
# process-wide.
_registered = {}


def _schema_names(names):
    """Spec argument names usable as schema argument names."""
    result = []
    for i, name in enumerate(names):
        if (not name.isidentifier() or keyword.iskeyword(name)
                or name in result or name in ("self", "out")):
            name = f"arg{i}"
        result.append(name)
    return result


def _schema(arg_names, results):
    returns = ("Tensor" if results == 1 else
               "(" + ", ".join(["Tensor"] * results) + ")")
    return ("(" + ", ".join(f"Tensor {n}" for n in arg_names) + ") -> " +
            returns)


def _as_tuple(value):
    return value if isinstance(value, tuple) else (value,)


def register(spec, func, options):
    key = hashlib.sha256(
        repr((spec, func, sorted(options.items()))).encode()).hexdigest()[:12]
    if key in _registered:
        return _registered[key]
    if options.get("grad"):
        raise Error("attn.torch_op registers the forward function and "
                    "differentiates it itself: drop grad=True")
    forward = compile(spec, func, **options)
    names = _schema_names([a.name for a in forward.arguments])
    results = forward.results
    dtypes = [getattr(torch, r.dtype) for r in results]

    def result_shapes(args):
        return forward.result_shapes(*(tuple(int(d) for d in a.shape)
                                       for a in args))

    def run(*args):
        return forward(*args)

    op = torch.library.custom_op(f"attn::{forward.name}_{key}", run,
                                 mutates_args=(),
                                 schema=_schema(names, len(results)))
    # save_statistics: the last `saved` results are what the backward takes
    # (per fused softmax op its row log-sum-exp, and for f32 and f64 its
    # output); the user sees f's own results.
    saved = forward.saved_statistics

    @op.register_fake
    def _(*args):
        outs = tuple(args[0].new_empty(shape, dtype=dtype)
                     for shape, dtype in zip(result_shapes(args), dtypes))
        return outs[0] if len(outs) == 1 else outs

    differentiable = list(forward._native.differentiable)
    if differentiable:
        _register_gradient(op, spec, func, options, key, forward.name, names,
                           results, dtypes, differentiable, result_shapes,
                           saved)
    user_op = op
    if saved:
        primal = len(results) - saved

        def user_op(*args):
            outs = _as_tuple(op(*args))[:primal]
            return outs[0] if primal == 1 else outs
        user_op.custom_op = op
    _registered[key] = user_op
    return user_op


def _register_gradient(op, spec, func, options, key, name, names, results,
                       dtypes, differentiable, result_shapes, saved):
    compiled = {}
    primal = len(results) - saved

    def gradient(*args):
        if "kernel" not in compiled:
            compiled["kernel"] = compile(spec, func, grad=True, **options)
        return compiled["kernel"](*args)

    grad_names = _schema_names(names + [f"d{r.name}" for r in results[:primal]]
                               + [f"saved{i}" for i in range(saved)])
    grad_op = torch.library.custom_op(
        f"attn::{name}_grad_{key}", gradient, mutates_args=(),
        schema=_schema(grad_names, len(differentiable)))

    @grad_op.register_fake
    def _(*args):
        outs = tuple(torch.empty_like(args[i]) for i in differentiable)
        return outs[0] if len(outs) == 1 else outs

    def setup_context(ctx, inputs, output):
        statistics = _as_tuple(output)[primal:]
        ctx.mark_non_differentiable(*statistics)
        ctx.save_for_backward(*inputs, *statistics)

    def backward(ctx, *cotangents):
        tensors = ctx.saved_tensors
        inputs, statistics = tensors[:len(names)], tensors[len(names):]
        shapes = result_shapes(inputs)
        # Autograd may pass None (a result not used) or a broadcast view;
        # the statistics get no cotangent (they are not differentiated).
        dresults = [torch.zeros(shape, dtype=dtype) if c is None
                    else c.contiguous()
                    for c, shape, dtype in zip(cotangents[:primal], shapes,
                                               dtypes)]
        grads = _as_tuple(grad_op(*inputs, *dresults, *statistics))
        full = [None] * len(inputs)
        for index, grad in zip(differentiable, grads):
            full[index] = grad
        return tuple(full)

    op.register_autograd(backward, setup_context=setup_context)
