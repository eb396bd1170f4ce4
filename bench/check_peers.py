"""Checks that every peer computes what the attn spec means.

    bench/.venv-peers/bin/python bench/check_peers.py --attn-run build/bin/attn-run

Run by bench/run.sh before anything is timed. For each kernel family, and
for each case of softmax attention the benchmark rows use (causal, an
additive bias broadcast over the batch, grouped K/V heads, decode with
dk != dv), it renders a small spec with bench/kernels.py (the same text as
the benchmark specs, smaller shapes), evaluates it with attn's reference
runtime (attn-run --reference --random SEED --save-inputs DIR --output
DIR/o.npy: naive loops, double accumulation, the project's oracle), runs
every peer bench/peers.py would time for such a row on the saved inputs,
and the float64 formula peers.py checks every timed output against
(formula.f64), and compares: max |peer - reference| / max |reference| must
be at most 1e-4. Exits non-zero naming the peer that disagrees, so a
benchmark never times a formula other than the spec's.

The bf16 rows (group "bf16") get the same check on a bf16 instance of each
family (every tensor bf16): the PyTorch peers on bf16 tensors and the
float64 formula (of the rounded inputs) against attn's reference, which
rounds its result to bf16. The tolerance adds to 1e-4 what bf16 rounding
can account for, derived from bf16's unit roundoff 2^-8 (bf16_tolerance;
peers.bf16_rounding_bound for the peers' own roundings). That bound is a
worst case, 4.4e-2 for softmax_small (a doubled scale moves its output by
4.2e-2 on these inputs): the bf16 peers call the formulas the f32 rows
check at 1e-4, so this check is there for what bf16 changes (the rounded
inputs, the bf16 tensors, reading the results back). A peer peers.py
leaves out of a bf16 row (ONNX Runtime; grid_sample) is listed as skipped.

The gradient rows (group "backward") get the same check on the gradient of
each family: attn-run --grad --reference with a cotangent dO.npy written
here gives attn's gradients, which every autograd peer and the float64
autograd formula must match (the largest error over the gradients
relative to the largest gradient, peers.agreement_error). Where attn's reference runtime cannot evaluate a gradient yet (an
op of the gradient it does not implement), that family is reported and
not fatal: attn's timed gradient row fails the same way, so no number is
compared with it, and its peers are still checked against the float64
formula at full size by peers.py.
"""

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
import kernels as k  # noqa: E402
from peers import (BF16_UNIT_ROUNDOFF, THREADS, Skipped,  # noqa: E402
                   agreement_error, bf16_rounding_bound, float64_formula,
                   implementations, random_cotangent)

TOLERANCE = 1e-4
SEED = 3
# One small instance per family and per case of softmax attention in the
# benchmark (the "shapes" ones get that group's peers); odd sizes catch
# transposed axes.
SMALL_KERNELS = [
    k.softmax_attention("softmax_small", (2,), 40, 40, 16, 16, 0.25),
    k.softmax_attention("causal_small", (2,), 40, 40, 16, 16, 0.25,
                        causal=True, group="shapes"),
    k.softmax_attention("bias_small", (3, 2), 9, 9, 8, 8, 0.3,
                        bias_lead=(1, 2), group="shapes"),
    k.softmax_attention("gqa_small", (3, 2), 5, 37, 16, 16, 0.25,
                        kv_lead=(3, 1), group="shapes"),
    k.softmax_attention("decode_dv8_small", (2,), 1, 300, 16, 8, 0.25,
                        group="shapes"),
    k.efficient_attention(n=56, dk=8, dv=12),
    k.linear_attention(n=56, dk=8, dv=12),
    k.external_attention(n=48, d=24, slots=8),
    k.deformable_attention("deformable_small", [(5, 7), (3, 2)], queries=6,
                           heads=2, points=3, depth=4, batch=2),
]
# The gradient of each family of the "backward" rows, and the bf16 instance
# of each family of the "bf16" rows (every tensor bf16).
SMALL_KERNELS += [k.gradient(kernel) for kernel in SMALL_KERNELS
                  if kernel.group == "core"]
SMALL_KERNELS += [k.bf16_row(kernel) for kernel in SMALL_KERNELS
                  if kernel.group == "core" and not kernel.grad
                  and kernel.family in ("softmax", "efficient", "linear",
                                        "deformable")]


def bf16_tolerance(kernel, impl):
    """The tolerance of `impl` against attn's reference on a bf16 row.

    The reference rounds its result to bf16 once, so it is within
    u |exact| of the exact result, u = 2^-8. A peer within e max |exact| of
    the exact result (e = peers.bf16_rounding_bound: its own bf16 roundings;
    0 for the float64 formula, which rounds nothing) is within
    (e + u) max |exact| of the reference, and max |reference| >=
    (1 - u) max |exact|: relative to the reference, (e + u) / (1 - u). The
    f32 arithmetic of either side stays within TOLERANCE, as on the f32
    rows."""
    u = BF16_UNIT_ROUNDOFF
    own = 0.0 if impl == "formula.f64" else bf16_rounding_bound(kernel)
    return TOLERANCE + (own + u) / (1 - u)


class ReferenceUnavailable(Exception):
    """attn's reference runtime cannot evaluate a gradient (yet)."""


def reference_run(attn_run, kernel, directory):
    """Evaluates the kernel's spec with the reference runtime; returns the
    inputs attn-run drew, the cotangent (None but for a gradient row) and
    its output (a gradient row: the list of gradients, argument order)."""
    spec = directory / f"{kernel.name}.mlir"
    spec.write_text(k.render_spec(kernel))
    command = [attn_run, str(spec), "--reference", "--random", str(SEED),
               "--save-inputs", str(directory), "--quiet"]
    cotangent = None
    if kernel.grad:
        cotangent = random_cotangent(kernel, SEED)
        np.save(directory / "dO.npy", cotangent)
        command += ["--grad", "--cotangent", str(directory / "dO.npy")]
        outputs = [directory / f"d_{name}.npy" for name in kernel.shapes]
    else:
        outputs = [directory / "o.npy"]
    for output in outputs:
        command += ["--output", str(output)]
    completed = subprocess.run(command, capture_output=True, text=True,
                               timeout=300)
    if completed.returncode != 0:
        message = (f"attn-run failed on {kernel.name}: "
                   + completed.stderr.strip())
        if kernel.grad:
            raise ReferenceUnavailable(message)
        raise SystemExit(f"check_peers: {message}")
    inputs = {name: np.load(directory / f"{name}.npy").astype(np.float32)
              for name in kernel.shapes}
    results = [np.load(output).astype(np.float64) for output in outputs]
    return inputs, cotangent, results if kernel.grad else results[0]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--attn-run", required=True, help="path of attn-run")
    args = parser.parse_args()
    torch.set_num_threads(THREADS)

    failures = []
    for kernel in SMALL_KERNELS:
        with tempfile.TemporaryDirectory() as tmp:
            try:
                inputs, cotangent, reference = reference_run(
                    args.attn_run, kernel, Path(tmp))
            except ReferenceUnavailable as exc:
                # Not fatal: see the module docstring.
                first = str(exc).splitlines()[0]
                print(f"check_peers: {kernel.name:<28} not checked: attn's "
                      f"reference cannot evaluate this gradient yet ({first})",
                      file=sys.stderr)
                continue
        checks = [("formula.f64",
                   lambda: float64_formula(kernel, inputs, cotangent),
                   lambda out: out)]
        checks += implementations(kernel, inputs, cotangent)
        for impl, run, to_numpy in checks:
            if isinstance(run, Skipped):
                print(f"check_peers: {kernel.name:<28} {impl:<12} skipped: "
                      f"{run.reason}", file=sys.stderr)
                continue
            if not callable(run):
                # A peer that cannot be built is reported by peers.py too.
                print(f"check_peers: {kernel.name:<28} {impl:<12} cannot run: "
                      f"{run}", file=sys.stderr)
                continue
            if kernel.grad:  # autograd: no inference mode
                output = to_numpy(run())
            else:
                with torch.inference_mode():
                    output = to_numpy(run())
            error, _ = agreement_error(kernel, inputs, output, reference)
            tolerance = (TOLERANCE if kernel.dtype == "f32"
                         else bf16_tolerance(kernel, impl))
            verdict = "ok" if error <= tolerance else "DISAGREES"
            print(f"check_peers: {kernel.name:<28} {impl:<12} rel. error "
                  f"{error:.1e} vs attn reference: {verdict}"
                  + (f" (tolerance {tolerance:.1e})"
                     if tolerance != TOLERANCE else ""), file=sys.stderr)
            if error > tolerance:
                failures.append(f"{impl} on {kernel.name}")
    if failures:
        raise SystemExit("check_peers: peers disagree with the attn reference "
                         "runtime: " + ", ".join(failures))


if __name__ == "__main__":
    main()
