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
from peers import (THREADS, float64_formula, implementations,  # noqa: E402
                   relative_error)

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


def reference_run(attn_run, kernel, directory):
    """Evaluates the kernel's spec with the reference runtime; returns the
    inputs attn-run drew and its output."""
    spec = directory / f"{kernel.name}.mlir"
    spec.write_text(k.render_spec(kernel))
    output = directory / "o.npy"
    completed = subprocess.run(
        [attn_run, str(spec), "--reference", "--random", str(SEED),
         "--save-inputs", str(directory), "--output", str(output), "--quiet"],
        capture_output=True, text=True, timeout=300)
    if completed.returncode != 0:
        raise SystemExit(f"check_peers: attn-run failed on {kernel.name}: "
                         + completed.stderr.strip())
    inputs = {name: np.load(directory / f"{name}.npy").astype(np.float32)
              for name in kernel.shapes}
    return inputs, np.load(output).astype(np.float64)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--attn-run", required=True, help="path of attn-run")
    args = parser.parse_args()
    torch.set_num_threads(THREADS)

    failures = []
    for kernel in SMALL_KERNELS:
        with tempfile.TemporaryDirectory() as tmp:
            inputs, reference = reference_run(args.attn_run, kernel, Path(tmp))
        checks = [("formula.f64", lambda: float64_formula(kernel, inputs),
                   lambda out: out)]
        checks += implementations(kernel, inputs)
        for impl, run, to_numpy in checks:
            if not callable(run):
                # A peer that cannot be built is reported by peers.py too.
                print(f"check_peers: {kernel.name:<28} {impl:<12} cannot run: "
                      f"{run}", file=sys.stderr)
                continue
            with torch.inference_mode():
                error = relative_error(to_numpy(run()), reference)
            verdict = "ok" if error <= TOLERANCE else "DISAGREES"
            print(f"check_peers: {kernel.name:<28} {impl:<12} rel. error "
                  f"{error:.1e} vs attn reference: {verdict}", file=sys.stderr)
            if error > TOLERANCE:
                failures.append(f"{impl} on {kernel.name}")
    if failures:
        raise SystemExit("check_peers: peers disagree with the attn reference "
                         "runtime: " + ", ".join(failures))


if __name__ == "__main__":
    main()
