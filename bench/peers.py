"""Times the benchmark kernels in PyTorch and ONNX Runtime (the peers).

    bench/.venv-peers/bin/python bench/peers.py [--kernels a,b] [--budget S]
                                                [--out peers.json]

Run by bench/run.sh. For every kernel of bench/kernels.py it times
(`--kernels` takes kernel and group names, as BENCH_KERNELS does):

- torch.sdpa:  F.scaled_dot_product_attention (softmax attention only) on
               (batch, heads, positions, d): is_causal for a causal row, the
               bias as its attn_mask (broadcast), enable_gqa for grouped K/V
               heads;
- torch.plain: the formula written with torch ops (external attention: the
               EANet formula);
- torch.grid_sample: deformable attention as Deformable DETR's PyTorch
               reference, ms_deform_attn_core_pytorch (one F.grid_sample per
               level, then the weighted sum); deformable has no torch.plain;
- ort.plain:   the same formula as an ONNX graph built with onnx.helper
               (not for deformable attention: its graph would be the
               grid_sample formulation again, not written yet);
- ort.mha:     the com.microsoft MultiHeadAttention contrib op of ONNX
               Runtime (softmax attention only; fed Q, K, V already in its
               (batch, positions, heads * dk) layout, the transposes are
               not timed; a causal row sets unidirectional, a bias is its
               attention_bias input). Left out where the op cannot state the
               row plainly: grouped K/V heads (GQA) and causal with n != m.

The rows of the "shapes" group (issue 27) are timed with torch.sdpa and
ort.mha only (PEERS_OF_GROUP); the plain formulas are there only as the
float64 reference.

The gradient rows (group "backward", issue 21) are timed with
torch.autograd through the same PyTorch formulas: torch.sdpa and
torch.plain for softmax attention, torch.plain for efficient, linear and
external attention, torch.grid_sample for deformable attention (no ONNX
Runtime: it has no backward outside its training package). What is timed is
the backward pass alone: the forward runs once, untimed, with inputs that
require grad, then every timed run is

    torch.autograd.grad(output, inputs, dO, retain_graph=True)

through the saved graph (FlashAttention's benchmark_backward does the same;
its papers report forward, backward and forward + backward; this is their
backward). The peer's backward thus gets what its forward saved (SDPA: the
output and the log-sum-exp; the plain formulas: the probabilities). attn's
softmax rows get the same as SDPA's: @f_grad takes the forward's saved lse
and output (--grad-save-statistics, docs/training.md), its efficient
rows the forward's normalized context (dk x dv, where the plain formula's
autograd keeps both softmaxes' weights) and its linear rows the context
phi(K)^T V and key sums (where autograd keeps phi(K)^T V and more); its
other rows take only the arguments and dO and recompute the forward,
which favours the peers. The cotangent dO is uniform in [0, 1)
like the inputs; the gradients are checked against autograd of the plain
formula in float64 (max error over the gradients relative to the largest
of them, as attn-run --check does; relative_error and cell_boundaries say
why, and which deformable samples' location gradients are left out).

The bf16 rows (group "bf16", issue 22) are timed with the same PyTorch
formulas on bf16 tensors: torch.sdpa and torch.plain for softmax attention,
torch.plain for efficient and linear attention (PyTorch's bf16 ops
accumulate in f32 and round each op's result to bf16). Their inputs are
drawn as the f32 rows' and rounded to bf16, as attn-run --random rounds
them, and the float64 formula starts from the rounded values. Left out,
with the reason in the table: ONNX Runtime (its CPU execution provider has
no bf16 kernels for these graphs, NO_ORT_BF16) and deformable attention's
grid_sample peer (PyTorch's bf16 grid_sample on CPU does not compute the
formula, GRID_SAMPLE_BF16). A bf16 peer agrees with the float64 formula
within AGREEMENT plus bf16_rounding_bound(), derived there from bf16's unit
roundoff 2^-8.

Two threads everywhere (torch.set_num_threads(2), intra_op_num_threads=2).
Inputs are uniform in [0, 1) like attn-run --random. Each peer is warmed up,
then run until `--budget` seconds or 100 runs (at least 5); the median is
reported. Each peer's output is compared with the plain formula evaluated
in float64, so a peer that computes something else is caught, not timed.
"""

import argparse
import json
import math
import platform
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import torch
import torch.nn.functional as F
from onnx import TensorProto, helper

sys.path.insert(0, str(Path(__file__).resolve().parent))
from kernels import select  # noqa: E402

THREADS = 2
MIN_RUNS, MAX_RUNS, WARMUP_RUNS = 5, 100, 2
ONNX_OPSET = 18
# Largest |peer - float64 formula| / max |float64 formula| we accept before
# flagging a peer as wrong: f32 accumulation over up to 65536 terms.
AGREEMENT = 1e-3
# The peers timed for the rows of a group (default: every peer of the family).
PEERS_OF_GROUP = {"shapes": ("torch.sdpa", "ort.mha")}
# The torch dtype of each element type a row's tensors can have.
TORCH_DTYPES = {"f32": torch.float32, "bf16": torch.bfloat16}
# bf16 keeps 8 significant bits: rounding to nearest gives x (1 + d) with
# |d| <= 2^-8.
BF16_UNIT_ROUNDOFF = 2.0 ** -8
# Why the bf16 rows have no ONNX Runtime peer: building their sessions fails
# with NOT_IMPLEMENTED for MatMul, Gemm, Softmax (ReduceMax), Add, Div and
# MultiHeadAttention on bf16 tensors (onnxruntime 1.31), and Elu has no bf16
# type at all.
NO_ORT_BF16 = (f"ONNX Runtime {ort.__version__}'s CPU execution provider has "
               "no bf16 kernels (MatMul, Gemm, Softmax, MultiHeadAttention)")
# Why deformable_encoder_bf16 has no grid_sample peer. Measured with torch
# 2.15 on the 100x150 level (values uniform in [0, 1)), bf16 against the
# same bf16 values and grid sampled in f32: with a contiguous value the mean
# error is 0.06 and the largest 0.97, pixel coordinates being rounded to
# bf16 (whole pixels from 128 up); with the non-contiguous value levels of
# ms_deform_attn_core_pytorch the output holds NaN and 3.4e38.
GRID_SAMPLE_BF16 = (f"torch {torch.__version__}'s CPU grid_sample in bf16 "
                    "rounds pixel coordinates to bf16 (whole pixels from 128 "
                    "up; errors up to the values' range) and returns NaN for "
                    "the reference's non-contiguous value levels")


@dataclass(frozen=True)
class Skipped:
    """A peer left out of a row on purpose: the table says why."""
    reason: str


def bf16_rounding_bound(kernel):
    """The largest error, relative to max |float64 formula|, that rounding to
    bf16 adds to a PyTorch peer of a bf16 row, on top of the f32 arithmetic
    the f32 rows' peers are held to (AGREEMENT); 0 for an f32 row.

    Derivation, with u = BF16_UNIT_ROUNDOFF = 2^-8. The inputs are rounded
    to bf16 before anything, for the peer and the formula alike: they add
    nothing. Each PyTorch op on bf16 tensors accumulates in f32 and rounds
    its result once, multiplying it by (1 + d), |d| <= u. The inputs are
    in [0, 1), so every intermediate is >= 0 (softmax, elu(x) + 1 = x + 1,
    V, and sums and products of these), and sums and products of
    nonnegative terms each within a factor [lo, hi] of exact are within
    [lo, hi] too: the output is, element by element, so the error is at
    most max(hi - 1, 1 - lo) of max |formula|.

    - efficient: softmax_positions(K), its context with V,
      softmax_features(Q) and the output round: [(1 - u)^4, (1 + u)^4].
    - linear: the numerator phi(Q) (phi(K)^T V) rounds phi(Q), phi(K), the
      context and itself (4), the normalizer phi(Q) (sum phi(K))^T rounds
      phi(Q), phi(K), the sum and itself (4), the quotient once:
      [(1 - u)^5 / (1 + u)^4, (1 + u)^5 / (1 - u)^4].
    - softmax: torch.plain rounds the scores Q K^T, then their product with
      the scale (exact for a power of two such as the rows' 0.125: only
      the exponent changes), the probabilities P and the output. A score s
      in [0, S], S = scale * dk (Q and K in [0, 1)), rounded r times moves
      by at most e = ((1 + u)^r - 1) S, so each exp(s) by a factor within
      [exp(-e), exp(e)] and P = exp(s) / sum exp by one within
      [exp(-2e), exp(2e)]; then P and O = P V (V >= 0) round:
      [(1 - u)^2 exp(-2e), (1 + u)^2 exp(2e)]. torch.sdpa rounds less (its
      CPU kernel keeps the scores in f32 and rounds P for the P V product):
      the same bound holds.

    These are worst cases, all roundings one way: the errors measured at
    full size are 4-19x smaller (softmax_h8_n1024 and n4096: 3.9e-3 to
    4.5e-3 against 7.3e-2; efficient and linear attention at n = 65536:
    4.3e-3 and 7.4e-3 against 1.6e-2 and 3.6e-2)."""
    if kernel.dtype == "f32":
        return 0.0
    if kernel.dtype != "bf16":
        raise ValueError(f"no rounding bound for {kernel.dtype}")
    u = BF16_UNIT_ROUNDOFF
    if kernel.family == "efficient":
        lo, hi = (1 - u) ** 4, (1 + u) ** 4
    elif kernel.family == "linear":
        lo, hi = (1 - u) ** 5 / (1 + u) ** 4, (1 + u) ** 5 / (1 - u) ** 4
    elif kernel.family == "softmax":
        p = kernel.params
        scale_is_exact = math.frexp(abs(p["scale"]))[0] == 0.5
        score_roundings = 1 if scale_is_exact else 2
        score_error = (((1 + u) ** score_roundings - 1) * abs(p["scale"])
                       * p["dk"])
        lo = (1 - u) ** 2 * math.exp(-2 * score_error)
        hi = (1 + u) ** 2 * math.exp(2 * score_error)
    else:
        raise ValueError(f"no bf16 peer of family {kernel.family}")
    return max(hi - 1, 1 - lo)


def agreement_tolerance(kernel):
    """The largest relative error of a timed peer of `kernel` against the
    float64 formula that still agrees: AGREEMENT, plus for a bf16 row the
    bound of its bf16 roundings."""
    return AGREEMENT + bf16_rounding_bound(kernel)


# --- The formulas in PyTorch --------------------------------------------------

def softmax_plain(q, k, v, scale, bias=None, causal=False):
    """softmax_keys(scale * Q K^T [+ bias], causal: keys j <= i) V; leading
    dims broadcast (GQA: K, V (G, 1, m, d) against Q (G, R, n, d))."""
    scores = torch.matmul(q, k.transpose(-1, -2)) * scale
    if bias is not None:
        scores = scores + bias
    if causal:
        n, m = scores.shape[-2:]
        hidden = torch.ones(n, m, dtype=torch.bool).triu(1)  # key j > query i
        scores.masked_fill_(hidden, float("-inf"))
    return torch.softmax(scores, dim=-1) @ v


def _sdpa_gqa(kernel):
    """None when Q, K and V have the same leading dims (at most 2: batch,
    heads); (groups, query heads per group) when K and V broadcast over the
    query heads of a group (Q (G, R, n, dk), K and V (G, 1, m, d)): SDPA
    then takes Q as (1, G * R, n, dk), K and V as (1, G, m, d) with
    enable_gqa, query head h using KV head h // R. Raises ValueError for
    other layouts."""
    p = kernel.params
    lead, kv_lead = tuple(p["q_lead"]), tuple(p["kv_lead"])
    if len(lead) > 2:
        raise ValueError("more than 2 leading dims")
    if kv_lead == lead:
        return None
    if len(lead) == 2 and kv_lead == (lead[0], 1) and p["bias_lead"] is None:
        return lead
    raise ValueError(f"K/V leading dims {kv_lead} against Q's {lead}")


def softmax_sdpa(kernel):
    """F.scaled_dot_product_attention for a softmax row, as a function of the
    row's inputs (q, k, v[, bias]) giving the row's output layout."""
    p = kernel.params
    gqa = _sdpa_gqa(kernel)
    scale, causal = p["scale"], p["causal"]
    output = kernel.output

    def four_d(x):
        return x.reshape((1,) * (4 - x.dim()) + tuple(x.shape))

    def run(q, k, v, bias=None):
        if gqa:
            groups, per_group = gqa
            q = q.reshape(1, groups * per_group, *q.shape[-2:])
            k = k.reshape(1, groups, *k.shape[-2:])
            v = v.reshape(1, groups, *v.shape[-2:])
            out = F.scaled_dot_product_attention(q, k, v, scale=scale,
                                                 is_causal=causal,
                                                 enable_gqa=True)
            return out.reshape(output)
        mask = None if bias is None else four_d(bias)
        # SDPA picks its fused CPU kernel for 4-D (batch, heads, positions, d).
        out = F.scaled_dot_product_attention(
            four_d(q), four_d(k), four_d(v), attn_mask=mask, scale=scale,
            is_causal=causal)
        return out.reshape(output)
    return run


def efficient_plain(q, k, v):
    # softmax of each query over its features, of each key feature over the
    # positions; the dk x dv context first.
    context = torch.softmax(k, dim=-2).transpose(-1, -2) @ v
    return torch.softmax(q, dim=-1) @ context


def linear_plain(q, k, v):
    phi_q, phi_k = F.elu(q) + 1, F.elu(k) + 1
    context = phi_k.transpose(-1, -2) @ v            # dk x dv
    normalizer = phi_q @ phi_k.sum(dim=-2, keepdim=True).transpose(-1, -2)
    return (phi_q @ context) / normalizer          # [sum over keys], eps 0


def external_plain(x, mk, mv, eps):
    attention = torch.softmax(x @ mk.transpose(-1, -2), dim=-2)  # over positions
    attention = attention / (eps + attention.sum(dim=-1, keepdim=True))  # slots
    return attention @ mv


def ms_deform_attn_core_pytorch(value, value_spatial_shapes,
                                sampling_locations, attention_weights,
                                align_corners=False):
    """Deformable DETR's pure-PyTorch reference (models/ops/functions/
    ms_deform_attn_func.py), as published; align_corners is added for
    DAT-style sampling (the original passes False)."""
    N_, S_, M_, D_ = value.shape
    _, Lq_, M_, L_, P_, _ = sampling_locations.shape
    value_list = value.split([H_ * W_ for H_, W_ in value_spatial_shapes],
                             dim=1)
    sampling_grids = 2 * sampling_locations - 1
    sampling_value_list = []
    for lid_, (H_, W_) in enumerate(value_spatial_shapes):
        # N_, H_*W_, M_, D_ -> N_*M_, D_, H_, W_
        value_l_ = value_list[lid_].flatten(2).transpose(1, 2).reshape(
            N_ * M_, D_, H_, W_)
        # N_, Lq_, M_, P_, 2 -> N_*M_, Lq_, P_, 2
        sampling_grid_l_ = sampling_grids[:, :, :, lid_].transpose(1, 2) \
            .flatten(0, 1)
        # N_*M_, D_, Lq_, P_
        sampling_value_l_ = F.grid_sample(
            value_l_, sampling_grid_l_, mode="bilinear", padding_mode="zeros",
            align_corners=align_corners)
        sampling_value_list.append(sampling_value_l_)
    # (N_, Lq_, M_, L_, P_) -> (N_*M_, 1, Lq_, L_*P_)
    attention_weights = attention_weights.transpose(1, 2).reshape(
        N_ * M_, 1, Lq_, L_ * P_)
    output = (torch.stack(sampling_value_list, dim=-2).flatten(-2)
              * attention_weights).sum(-1).view(N_, M_ * D_, Lq_)
    return output.transpose(1, 2).contiguous()


def torch_formula(kernel):
    p = kernel.params
    if kernel.family == "softmax":
        return lambda q, k, v, bias=None: softmax_plain(
            q, k, v, p["scale"], bias, p["causal"])
    if kernel.family == "efficient":
        return efficient_plain
    if kernel.family == "linear":
        return linear_plain
    if kernel.family == "external":
        return lambda x, mk, mv: external_plain(x, mk, mv, p["eps"])
    if kernel.family == "deformable":
        levels = [tuple(level) for level in p["levels"]]
        return lambda value, loc, weights: ms_deform_attn_core_pytorch(
            value, levels, loc, weights)
    raise ValueError(kernel.family)


# --- The formulas as ONNX graphs ----------------------------------------------

def _graph_model(kernel, nodes, initializers=()):
    inputs = [helper.make_tensor_value_info(name, TensorProto.FLOAT, list(shape))
              for name, shape in kernel.shapes.items()]
    output = helper.make_tensor_value_info("o", TensorProto.FLOAT,
                                           list(kernel.output))
    graph = helper.make_graph(nodes, kernel.name, inputs, [output],
                              initializer=list(initializers))
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", ONNX_OPSET),
                              helper.make_opsetid("com.microsoft", 1)])
    model.ir_version = 8
    return model


def _scalar(name, value):
    return helper.make_tensor(name, TensorProto.FLOAT, [], [value])


def onnx_plain(kernel):
    p = kernel.params
    node = helper.make_node
    if kernel.family == "softmax":
        nodes = [node("Transpose", ["k"], ["kt"], perm=[0, 2, 1]),
                 node("MatMul", ["q", "kt"], ["s"]),
                 node("Mul", ["s", "scale"], ["ss"]),
                 node("Softmax", ["ss"], ["p"], axis=-1),
                 node("MatMul", ["p", "v"], ["o"])]
        return _graph_model(kernel, nodes, [_scalar("scale", p["scale"])])
    if kernel.family == "efficient":
        nodes = [node("Softmax", ["q"], ["rq"], axis=-1),
                 node("Softmax", ["k"], ["rk"], axis=-2),
                 node("Gemm", ["rk", "v"], ["context"], transA=1),
                 node("MatMul", ["rq", "context"], ["o"])]
        return _graph_model(kernel, nodes)
    if kernel.family == "linear":
        nodes = [node("Elu", ["q"], ["eq"]), node("Add", ["eq", "one"], ["fq"]),
                 node("Elu", ["k"], ["ek"]), node("Add", ["ek", "one"], ["fk"]),
                 node("Gemm", ["fk", "v"], ["context"], transA=1),
                 node("ReduceSum", ["fk", "axis0"], ["ksum"], keepdims=1),
                 node("Gemm", ["fq", "ksum"], ["normalizer"], transB=1),
                 node("MatMul", ["fq", "context"], ["numerator"]),
                 node("Div", ["numerator", "normalizer"], ["o"])]
        axis0 = helper.make_tensor("axis0", TensorProto.INT64, [1], [0])
        return _graph_model(kernel, nodes, [_scalar("one", 1.0), axis0])
    if kernel.family == "external":
        nodes = [node("Gemm", ["x", "mk"], ["a"], transB=1),
                 node("Softmax", ["a"], ["pa"], axis=0),
                 node("ReduceSum", ["pa", "axis1"], ["slots"], keepdims=1),
                 node("Add", ["slots", "eps"], ["denominator"]),
                 node("Div", ["pa", "denominator"], ["na"]),
                 node("MatMul", ["na", "mv"], ["o"])]
        axis1 = helper.make_tensor("axis1", TensorProto.INT64, [1], [1])
        return _graph_model(kernel, nodes, [_scalar("eps", p["eps"]), axis1])
    raise ValueError(kernel.family)


def mha_layout(kernel):
    """(batch, heads) of MultiHeadAttention for a softmax row, or the reason
    the op cannot state the row plainly (a string)."""
    p = kernel.params
    lead = tuple(p["q_lead"])
    if tuple(p["kv_lead"]) != lead:
        return ("MultiHeadAttention needs one K/V head per query head "
                "(no grouped K/V heads)")
    if len(lead) > 2:
        return "more than 2 leading dims"
    batch, heads = (1,) * (2 - len(lead)) + lead
    if p["bias_lead"] is not None:
        bias_batch, bias_heads = (1,) * (2 - len(p["bias_lead"])) \
            + tuple(p["bias_lead"])
        if bias_batch not in (1, batch) or bias_heads not in (1, heads):
            return "attention_bias must be (batch or 1, heads or 1, n, m)"
    if p["causal"] and p["n"] != p["m"]:
        return "unidirectional aligns the diagonal differently when n != m"
    return batch, heads


def onnx_mha(kernel):
    """com.microsoft.MultiHeadAttention on (batch, positions, heads * d)."""
    p = kernel.params
    batch, heads = mha_layout(kernel)
    n, m, dk, dv = p["n"], p["m"], p["dk"], p["dv"]
    shapes = {"q": (batch, n, heads * dk), "k": (batch, m, heads * dk),
              "v": (batch, m, heads * dv)}
    names = ["q", "k", "v"]
    if "bias" in kernel.shapes:
        bias = kernel.shapes["bias"]
        shapes["bias"] = (1,) * (4 - len(bias)) + tuple(bias)
        names += ["", "", "bias"]  # input 5: attention_bias
    inputs = [helper.make_tensor_value_info(name, TensorProto.FLOAT, list(shape))
              for name, shape in shapes.items()]
    output = helper.make_tensor_value_info("o", TensorProto.FLOAT,
                                           [batch, n, heads * dv])
    attributes = {"unidirectional": 1} if p["causal"] else {}
    mha = helper.make_node("MultiHeadAttention", names, ["o"],
                           domain="com.microsoft", num_heads=heads,
                           scale=p["scale"], **attributes)
    graph = helper.make_graph([mha], kernel.name + "_mha", inputs, [output])
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", ONNX_OPSET),
                              helper.make_opsetid("com.microsoft", 1)])
    model.ir_version = 8
    return model


def to_heads_last(x, batch, heads):
    """(batch, heads, positions, d) -> (batch, positions, heads * d), MHA's
    layout, from any leading dims that reshape to (batch, heads)."""
    positions, d = x.shape[-2:]
    x = x.reshape(batch, heads, positions, d)
    return np.ascontiguousarray(x.transpose(0, 2, 1, 3).reshape(
        batch, positions, heads * d))


def from_heads_last(x, heads, shape):
    """MHA's (batch, positions, heads * dv) -> the kernel's output shape."""
    batch, positions, hd = x.shape
    return x.reshape(batch, positions, heads, hd // heads) \
        .transpose(0, 2, 1, 3).reshape(shape)


def ort_session(model):
    options = ort.SessionOptions()
    options.intra_op_num_threads = THREADS
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    onnx.checker.check_model(model)
    return ort.InferenceSession(model.SerializeToString(), options,
                                providers=["CPUExecutionProvider"])


# --- Timing -----------------------------------------------------------------

class Backward:
    """A zero-argument run of the backward pass of `function` at `inputs`
    (numpy arrays) with cotangent dO: the first call (a warm-up run of
    time_runs) also runs the forward with inputs that require grad and
    keeps its graph; every call returns torch.autograd.grad(output, inputs,
    dO, retain_graph=True), the gradients of every input through that graph
    (no accumulation into .grad). release() frees the graph."""

    def __init__(self, function, inputs, cotangent):
        self.function, self.inputs = function, inputs
        self.cotangent = torch.from_numpy(cotangent)
        self.graph = None

    def __call__(self):
        if self.graph is None:
            leaves = [torch.from_numpy(x).requires_grad_()
                      for x in self.inputs.values()]
            with torch.enable_grad():
                self.graph = (self.function(*leaves), leaves)
        output, leaves = self.graph
        with torch.enable_grad():
            return torch.autograd.grad(output, leaves, self.cotangent,
                                       retain_graph=True)

    def release(self):
        self.graph = None


def time_runs(run, budget_seconds):
    """Warm-up, then runs until the budget or MAX_RUNS (at least MIN_RUNS).
    Returns (output of the last run, list of seconds)."""
    for _ in range(WARMUP_RUNS):
        output = run()
    seconds = []
    spent = 0.0
    while len(seconds) < MIN_RUNS or (spent < budget_seconds
                                      and len(seconds) < MAX_RUNS):
        start = time.perf_counter()
        output = run()
        elapsed = time.perf_counter() - start
        seconds.append(elapsed)
        spent += elapsed
    return output, seconds


def random_inputs(kernel, seed):
    """Uniform in [0, 1), f32 arrays; a bf16 row's rounded to bf16 (to
    nearest even, as attn-run --random rounds them), so every peer and the
    float64 formula start from the same values."""
    rng = np.random.default_rng(seed)
    inputs = {name: rng.random(shape, dtype=np.float32)
              for name, shape in kernel.shapes.items()}
    if kernel.dtype == "f32":
        return inputs
    dtype = TORCH_DTYPES[kernel.dtype]
    return {name: torch.from_numpy(x).to(dtype).float().numpy()
            for name, x in inputs.items()}


def random_cotangent(kernel, seed):
    """A gradient row's dO: uniform in [0, 1), the output's shape."""
    return np.random.default_rng(seed + 1000).random(kernel.output,
                                                     dtype=np.float32)


def relative_error(output, reference):
    """max |output - reference| / max |reference|; for lists (a gradient
    row's gradients) over all of them, as attn-run --check measures several
    results: a gradient that is small because its terms cancel (dQ of
    efficient and linear attention at n = 65536 with uniform inputs: 3e-4
    against dV's 0.6) carries f32 rounding of the terms' size, percents of
    its own largest value, in every implementation."""
    if isinstance(reference, (list, tuple)):
        if not isinstance(output, (list, tuple)) or len(output) != len(reference):
            return float("inf")
        output = [np.asarray(out, dtype=np.float64) for out in output]
        if any(out.shape != ref.shape for out, ref in zip(output, reference)):
            return float("inf")
        scale = max(max(np.max(np.abs(ref)) for ref in reference),
                    np.finfo(np.float64).tiny)
        return float(max(np.max(np.abs(out - ref))
                         for out, ref in zip(output, reference)) / scale)
    output = np.asarray(output, dtype=np.float64)
    if output.shape != reference.shape:
        return float("inf")
    scale = max(np.max(np.abs(reference)), np.finfo(np.float64).tiny)
    return float(np.max(np.abs(output - reference)) / scale)


# A deformable sample whose pixel coordinate is this close to a cell boundary
# is left out of the location gradient's comparison (see cell_boundaries).
CELL_BOUNDARY_PIXELS = 1e-4


def cell_boundaries(kernel, inputs):
    """For a deformable gradient row: the mask (batch, queries, heads,
    levels, points) of the samples with a pixel coordinate (loc * size - 0.5,
    align_corners=False) within CELL_BOUNDARY_PIXELS of an integer. The
    gradient of bilinear sampling in the location jumps there (the corners
    change), and f32 and f64 coordinates can fall in different cells; such
    samples' location gradients differ by the jump (185 against 2.5 at
    n = 19947 queries), not by rounding. None for other rows."""
    if not (kernel.grad and kernel.family == "deformable"):
        return None
    sizes = np.array([[width, height]
                      for height, width in kernel.params["levels"]],
                     dtype=np.float64)  # (levels, 2): x scales by the width
    pixels = (inputs["sampling_locations"].astype(np.float64)
              * sizes[:, None, :] - 0.5)
    near = np.abs(pixels - np.round(pixels)) < CELL_BOUNDARY_PIXELS
    return near.any(axis=-1)


def agreement_error(kernel, inputs, output, reference):
    """relative_error of a peer's output against the reference, a
    deformable gradient's location gradient without the samples at cell
    boundaries (cell_boundaries). Returns (error, samples left out)."""
    mask = cell_boundaries(kernel, inputs)
    if mask is None or not mask.any():
        return relative_error(output, reference), 0
    where = list(kernel.shapes).index("sampling_locations")
    output, reference = list(output), list(reference)
    output[where] = np.where(mask[..., None], 0.0, output[where])
    reference[where] = np.where(mask[..., None], 0.0, reference[where])
    return relative_error(output, reference), int(mask.sum())


def gradient_implementations(kernel, inputs, cotangent):
    """The peers of a gradient row: (name, Backward run, gradients ->
    list of numpy arrays), torch.autograd through each PyTorch formula."""
    formula = torch_formula(kernel)
    functions = []
    if kernel.family == "softmax":
        try:
            functions.append(("torch.sdpa", softmax_sdpa(kernel)))
        except ValueError as exc:
            functions.append(("torch.sdpa", f"cannot state the row: {exc}"))
    functions.append(("torch.grid_sample" if kernel.family == "deformable"
                      else "torch.plain", formula))
    return [(name, Backward(function, inputs, cotangent)
             if callable(function) else function,
             lambda grads: [grad.numpy() for grad in grads])
            for name, function in functions]


def implementations(kernel, inputs, cotangent=None):
    """Every peer of `kernel` as (name, zero-argument run or the reason it
    cannot run, output -> numpy array in the kernel's output layout; for a
    gradient row, whose runs need the cotangent: -> list of gradients)."""
    if kernel.grad:
        return gradient_implementations(kernel, inputs, cotangent)
    # A bf16 row's tensors are bf16 (exact: the inputs are rounded already);
    # its outputs are read back as f32 (exact too).
    tensors = [torch.from_numpy(x).to(TORCH_DTYPES[kernel.dtype])
               for x in inputs.values()]
    formula = torch_formula(kernel)
    wanted = PEERS_OF_GROUP.get(kernel.group)
    candidates = []
    if kernel.family == "softmax":
        try:
            sdpa = softmax_sdpa(kernel)
            candidates.append(("torch.sdpa", lambda: sdpa(*tensors),
                               lambda out: out.float().numpy()))
        except ValueError as exc:
            candidates.append(("torch.sdpa", f"cannot state the row: {exc}",
                               None))
    if kernel.family == "deformable":
        if kernel.dtype != "f32":
            candidates.append(("torch.grid_sample", Skipped(GRID_SAMPLE_BF16),
                               None))
        else:
            candidates.append(("torch.grid_sample", lambda: formula(*tensors),
                               lambda out: out.numpy()))
        return candidates
    if wanted is None or "torch.plain" in wanted:
        candidates.append(("torch.plain", lambda: formula(*tensors),
                           lambda out: out.float().numpy()))
    if kernel.dtype != "f32":
        # ONNX Runtime's peers of the row, left out (NO_ORT_BF16).
        ort_peers = ("ort.plain", "ort.mha") if kernel.family == "softmax" \
            else ("ort.plain",)
        candidates += [(impl, Skipped(NO_ORT_BF16), None) for impl in ort_peers
                       if wanted is None or impl in wanted]
        return candidates
    if wanted is None or "ort.plain" in wanted:
        candidates.append(("ort.plain", _ort_runner(onnx_plain(kernel),
                                                    inputs),
                           lambda out: out))
    if kernel.family == "softmax" and (wanted is None or "ort.mha" in wanted):
        layout = mha_layout(kernel)
        if isinstance(layout, str):
            # Not a failure: the op has no plain way to say this row.
            print(f"peers: {kernel.name:<28} ort.mha      left out: {layout}",
                  file=sys.stderr, flush=True)
        else:
            batch, heads = layout
            mha_inputs = {
                name: (to_heads_last(x, batch, heads) if name != "bias"
                       else x.reshape((1,) * (4 - x.ndim) + x.shape))
                for name, x in inputs.items()}
            output = kernel.output
            candidates.append(("ort.mha",
                               _ort_runner(onnx_mha(kernel), mha_inputs),
                               lambda out: from_heads_last(out, heads, output)))
    return candidates


def float64_formula(kernel, inputs, cotangent=None):
    """The plain formula in float64: what every timed peer must agree with
    (a gradient row: the list of its gradients by autograd, given dO)."""
    formula = torch_formula(kernel)
    if kernel.grad:
        leaves = [torch.from_numpy(x).double().requires_grad_()
                  for x in inputs.values()]
        with torch.enable_grad():
            grads = torch.autograd.grad(
                formula(*leaves), leaves,
                torch.from_numpy(cotangent).double())
        return [grad.numpy() for grad in grads]
    with torch.inference_mode():
        return formula(*[torch.from_numpy(x).double()
                         for x in inputs.values()]).numpy()


def bench_kernel(kernel, budget_seconds, seed):
    inputs = random_inputs(kernel, seed)
    cotangent = random_cotangent(kernel, seed) if kernel.grad else None
    candidates = implementations(kernel, inputs, cotangent)
    # Seconds of float64 at full size: only for a row with a peer to check.
    reference = (float64_formula(kernel, inputs, cotangent)
                 if any(not isinstance(run, Skipped) for _, run, _ in candidates)
                 else None)

    results = []
    for impl, run, to_numpy in candidates:
        record = {"kernel": kernel.name, "impl": impl}
        if isinstance(run, Skipped):
            record["skipped"] = run.reason
            results.append(record)
            print(f"peers: {kernel.name:<28} {impl:<12} skipped: {run.reason}",
                  file=sys.stderr, flush=True)
            continue
        try:
            if not callable(run):
                raise RuntimeError(run)
            if kernel.grad:  # autograd: no inference mode
                output, seconds = time_runs(run, budget_seconds)
            else:
                with torch.inference_mode():
                    output, seconds = time_runs(run, budget_seconds)
            error, left_out = agreement_error(kernel, inputs,
                                             to_numpy(output), reference)
            tolerance = agreement_tolerance(kernel)
            record.update(
                median_ms=1e3 * statistics.median(seconds),
                min_ms=1e3 * min(seconds), runs=len(seconds),
                max_rel_err_vs_float64=error, agreement_tolerance=tolerance,
                agrees=error <= tolerance)
            if left_out:
                record["samples_at_cell_boundaries_left_out"] = left_out
        except Exception as exc:  # a peer that cannot run is reported, not fatal
            record.update(error=f"{type(exc).__name__}: {exc}".strip()[:300])
        finally:
            if isinstance(run, Backward):
                run.release()  # its graph: GBs at n = 4096
        results.append(record)
        print(f"peers: {kernel.name:<28} {impl:<12} "
              + (f"{record['median_ms']:10.3f} ms over {record['runs']} runs"
                 f"  (rel. error {record['max_rel_err_vs_float64']:.1e})"
                 if "median_ms" in record else record["error"]),
              file=sys.stderr, flush=True)
    return results


def _ort_runner(model, inputs):
    """A zero-argument run of `model` on `inputs`, or the reason it has none."""
    try:
        session = ort_session(model)
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"
    return lambda: session.run(["o"], inputs)[0]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--kernels", default="",
                        help="comma-separated kernel and group names "
                        "(default: all)")
    parser.add_argument("--budget", type=float, default=3.0,
                        help="seconds of timed runs per kernel and peer")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", help="write the JSON here (default: stdout)")
    args = parser.parse_args()

    try:
        kernels = select(args.kernels)
    except ValueError as exc:
        parser.error(str(exc))

    torch.set_num_threads(THREADS)
    torch.set_num_interop_threads(1)
    results = []
    for kernel in kernels:
        results.extend(bench_kernel(kernel, args.budget, args.seed))
    report = {
        "threads": THREADS,
        "versions": {"python": platform.python_version(),
                     "torch": torch.__version__,
                     "torch_parallel": torch.__config__.parallel_info()
                     .splitlines()[0:6],
                     "onnxruntime": ort.__version__, "onnx": onnx.__version__,
                     "numpy": np.__version__},
        "results": results,
    }
    text = json.dumps(report, indent=2)
    if args.out:
        Path(args.out).write_text(text + "\n")
    else:
        print(text)


if __name__ == "__main__":
    main()
