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
output and the log-sum-exp; the plain formulas: the probabilities), while
attn's @f_grad takes only the arguments and dO and recomputes the forward:
the comparison favours the peers. The cotangent dO is uniform in [0, 1)
like the inputs; the gradients are checked against autograd of the plain
formula in float64 (max error over the gradients relative to the largest
of them, as attn-run --check does; relative_error and cell_boundaries say
why, and which deformable samples' location gradients are left out).

Two threads everywhere (torch.set_num_threads(2), intra_op_num_threads=2).
Inputs are uniform in [0, 1) like attn-run --random. Each peer is warmed up,
then run until `--budget` seconds or 100 runs (at least 5); the median is
reported. Each peer's output is compared with the plain formula evaluated
in float64, so a peer that computes something else is caught, not timed.
"""

import argparse
import json
import platform
import statistics
import sys
import time
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
    rng = np.random.default_rng(seed)
    return {name: rng.random(shape, dtype=np.float32)
            for name, shape in kernel.shapes.items()}


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
    tensors = [torch.from_numpy(x) for x in inputs.values()]
    formula = torch_formula(kernel)
    wanted = PEERS_OF_GROUP.get(kernel.group)
    candidates = []
    if kernel.family == "softmax":
        try:
            sdpa = softmax_sdpa(kernel)
            candidates.append(("torch.sdpa", lambda: sdpa(*tensors),
                               lambda out: out.numpy()))
        except ValueError as exc:
            candidates.append(("torch.sdpa", f"cannot state the row: {exc}",
                               None))
    if kernel.family == "deformable":
        candidates.append(("torch.grid_sample", lambda: formula(*tensors),
                           lambda out: out.numpy()))
        return candidates
    if wanted is None or "torch.plain" in wanted:
        candidates.append(("torch.plain", lambda: formula(*tensors),
                           lambda out: out.numpy()))
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
    reference = float64_formula(kernel, inputs, cotangent)
    candidates = implementations(kernel, inputs, cotangent)

    results = []
    for impl, run, to_numpy in candidates:
        record = {"kernel": kernel.name, "impl": impl}
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
            record.update(
                median_ms=1e3 * statistics.median(seconds),
                min_ms=1e3 * min(seconds), runs=len(seconds),
                max_rel_err_vs_float64=error, agrees=error <= AGREEMENT)
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
