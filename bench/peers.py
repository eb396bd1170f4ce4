"""Times the benchmark kernels in PyTorch and ONNX Runtime (the peers).

    bench/.venv-peers/bin/python bench/peers.py [--kernels a,b] [--budget S]
                                                [--out peers.json]

Run by bench/run.sh. For every kernel of bench/kernels.py it times:

- torch.sdpa:  F.scaled_dot_product_attention (softmax attention only);
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
               not timed).

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
from kernels import KERNELS, KERNELS_BY_NAME  # noqa: E402

THREADS = 2
MIN_RUNS, MAX_RUNS, WARMUP_RUNS = 5, 100, 2
ONNX_OPSET = 18
# Largest |peer - float64 formula| / max |float64 formula| we accept before
# flagging a peer as wrong: f32 accumulation over up to 65536 terms.
AGREEMENT = 1e-3


# --- The formulas in PyTorch --------------------------------------------------

def softmax_plain(q, k, v, scale):
    return torch.softmax(torch.matmul(q, k.transpose(-1, -2)) * scale, dim=-1) @ v


def softmax_sdpa(q, k, v, scale):
    # SDPA picks its fused CPU kernel for 4-D (batch, heads, positions, dk).
    return F.scaled_dot_product_attention(
        q.unsqueeze(0), k.unsqueeze(0), v.unsqueeze(0), scale=scale).squeeze(0)


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
        return lambda q, k, v: softmax_plain(q, k, v, p["scale"])
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


def onnx_mha(kernel):
    """com.microsoft.MultiHeadAttention on (1, positions, heads * dk)."""
    p = kernel.params
    heads, n, m, dk, dv = p["heads"], p["n"], p["m"], p["dk"], p["dv"]
    shapes = {"q": (1, n, heads * dk), "k": (1, m, heads * dk),
              "v": (1, m, heads * dv)}
    inputs = [helper.make_tensor_value_info(name, TensorProto.FLOAT, list(shape))
              for name, shape in shapes.items()]
    output = helper.make_tensor_value_info("o", TensorProto.FLOAT,
                                           [1, n, heads * dv])
    mha = helper.make_node("MultiHeadAttention", ["q", "k", "v"], ["o"],
                           domain="com.microsoft", num_heads=heads,
                           scale=p["scale"])
    graph = helper.make_graph([mha], kernel.name + "_mha", inputs, [output])
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", ONNX_OPSET),
                              helper.make_opsetid("com.microsoft", 1)])
    model.ir_version = 8
    return model


def to_heads_last(x):
    """(heads, positions, d) -> (1, positions, heads * d), MHA's layout."""
    heads, positions, d = x.shape
    return np.ascontiguousarray(x.transpose(1, 0, 2).reshape(1, positions,
                                                             heads * d))


def from_heads_last(x, heads):
    _, positions, hd = x.shape
    return x.reshape(positions, heads, hd // heads).transpose(1, 0, 2)


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


def relative_error(output, reference):
    output = np.asarray(output, dtype=np.float64)
    if output.shape != reference.shape:
        return float("inf")
    scale = max(np.max(np.abs(reference)), np.finfo(np.float64).tiny)
    return float(np.max(np.abs(output - reference)) / scale)


def implementations(kernel, inputs):
    """Every peer of `kernel` as (name, zero-argument run or the reason it
    cannot run, output -> numpy array in the kernel's output layout)."""
    tensors = [torch.from_numpy(x) for x in inputs.values()]
    formula = torch_formula(kernel)
    candidates = []
    if kernel.family == "softmax":
        scale = kernel.params["scale"]
        candidates.append(("torch.sdpa",
                           lambda: softmax_sdpa(*tensors, scale),
                           lambda out: out.numpy()))
    if kernel.family == "deformable":
        candidates.append(("torch.grid_sample", lambda: formula(*tensors),
                           lambda out: out.numpy()))
        return candidates
    candidates.append(("torch.plain", lambda: formula(*tensors),
                       lambda out: out.numpy()))
    candidates.append(("ort.plain", _ort_runner(onnx_plain(kernel), inputs),
                       lambda out: out))
    if kernel.family == "softmax":
        mha_inputs = {name: to_heads_last(x) for name, x in inputs.items()}
        heads = kernel.params["heads"]
        candidates.append(("ort.mha", _ort_runner(onnx_mha(kernel), mha_inputs),
                           lambda out: from_heads_last(out, heads)))
    return candidates


def float64_formula(kernel, inputs):
    """The plain formula in float64: what every timed peer must agree with."""
    formula = torch_formula(kernel)
    with torch.inference_mode():
        return formula(*[torch.from_numpy(x).double()
                         for x in inputs.values()]).numpy()


def bench_kernel(kernel, budget_seconds, seed):
    inputs = random_inputs(kernel, seed)
    reference = float64_formula(kernel, inputs)
    candidates = implementations(kernel, inputs)

    results = []
    for impl, run, to_numpy in candidates:
        record = {"kernel": kernel.name, "impl": impl}
        try:
            if not callable(run):
                raise RuntimeError(run)
            with torch.inference_mode():
                output, seconds = time_runs(run, budget_seconds)
            error = relative_error(to_numpy(output), reference)
            record.update(
                median_ms=1e3 * statistics.median(seconds),
                min_ms=1e3 * min(seconds), runs=len(seconds),
                max_rel_err_vs_float64=error, agrees=error <= AGREEMENT)
        except Exception as exc:  # a peer that cannot run is reported, not fatal
            record.update(error=f"{type(exc).__name__}: {exc}".strip()[:300])
        results.append(record)
        print(f"peers: {kernel.name:<18} {impl:<12} "
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
                        help="comma-separated kernel names (default: all)")
    parser.add_argument("--budget", type=float, default=3.0,
                        help="seconds of timed runs per kernel and peer")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", help="write the JSON here (default: stdout)")
    args = parser.parse_args()

    names = [name for name in args.kernels.split(",") if name]
    unknown = [name for name in names if name not in KERNELS_BY_NAME]
    if unknown:
        parser.error(f"unknown kernel(s) {', '.join(unknown)}; known: "
                     + ", ".join(KERNELS_BY_NAME))
    kernels = [KERNELS_BY_NAME[name] for name in names] or KERNELS

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
