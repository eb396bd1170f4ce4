"""Kernels called from Python against the reference runtime (attn-run
--reference, the oracle): every example (JIT; two also AOT), their
gradients, dynamic dims, several results, bf16 through torch, f16 through
numpy. Prints one `ok:` line per case; any mismatch raises.

Tolerances are attn-run --check's: 1e-4 relative to the largest reference
value for f32 results; for 16-bit results 2(2u + 2^-12), u the unit
roundoff (docs/precision.md: rounded inputs, one rounding of the result).
"""
import argparse
import glob
import os
import subprocess
import tempfile

import numpy as np
import torch

import attn

TOLERANCE = {"float32": 1e-4, "float64": 1e-4,
             "bfloat16": 2 * (2 * 2.0**-8 + 2.0**-12),
             "float16": 2 * (2 * 2.0**-11 + 2.0**-12)}

parser = argparse.ArgumentParser()
parser.add_argument("--bin", required=True)
options = parser.parse_args()
scratch = tempfile.mkdtemp(prefix="attn-python-")


def reference(spec_path, func, inputs, cotangents, results):
    """attn-run --reference (with --grad when there are cotangents) on
    numpy arrays: its `results` results."""
    args = [os.path.join(options.bin, "attn-run"), spec_path, "--func", func,
            "--reference", "--quiet"] + (["--grad"] if cotangents else [])
    for flag, values in (("--input", inputs), ("--cotangent", cotangents)):
        for value in values:
            path = tempfile.mktemp(suffix=".npy", dir=scratch)
            np.save(path, value)
            args.append(f"{flag}={path}")
    outputs = [tempfile.mktemp(suffix=".npy", dir=scratch)
               for _ in range(results)]
    run = subprocess.run(args + ["--output=" + o for o in outputs],
                         capture_output=True, text=True)
    if run.returncode != 0:
        raise RuntimeError(run.stderr)
    return [np.load(o) for o in outputs]


def relative_error(results, references):
    scale = max(float(np.abs(r).max()) for r in references) or 1.0
    return max(float(np.abs(np.asarray(a, np.float64) - b).max())
               for a, b in zip(results, references)) / scale


def random_arrays(specs, seed, dynamic=5):
    rng = np.random.default_rng(seed)
    return [rng.uniform(0, 1, [dynamic if d is None else d
                               for d in a.shape]).astype(a.dtype)
            for a in specs]


def as_numpy(value):
    return value.float().numpy() if isinstance(value, torch.Tensor) else value


def check(label, spec_path, func, kernel, inputs, cotangents=(),
          kernel_inputs=None):
    """Runs `kernel` on the inputs and cotangents (numpy arrays), or on
    `kernel_inputs` holding the same values, and compares its results with
    the reference's."""
    results = kernel(*(kernel_inputs or list(inputs) + list(cotangents)))
    results = list(results) if isinstance(results, tuple) else [results]
    results = [as_numpy(r) for r in results]
    expected = reference(spec_path, func, inputs, list(cotangents),
                         len(kernel.results))
    error = relative_error(results, expected)
    limit = TOLERANCE[kernel.results[0].dtype]
    assert error <= limit, f"{label}: rel err {error:.3g} > {limit:.3g}"
    print(f"ok: {label} rel err {error:.2e}")


def write_spec(text):
    path = tempfile.mktemp(suffix=".mlir", dir=scratch)
    with open(path, "w") as f:
        f.write(text)
    return path


examples = sorted(glob.glob(os.path.join(
    os.path.dirname(__file__), "..", "..", "..", "examples", "*.mlir")))
for seed, path in enumerate(examples):
    text = open(path).read()
    kernel = attn.compile(text, name=path)
    inputs = random_arrays(kernel.arguments, seed)
    check(f"@{kernel.name} jit", path, kernel.name, kernel, inputs)
    if kernel.name in ("linear_attention", "external_attention"):
        check(f"@{kernel.name} aot", path, kernel.name,
              attn.compile(text, aot=True, name=path), inputs)
        grad = attn.compile(text, grad=True, name=path)
        check(f"@{grad.name} jit", path, kernel.name, grad, inputs,
              random_arrays(kernel.results, seed + 100))

# One kernel, several run-time sizes of a dynamic dim.
DYNAMIC = """
func.func @dynamic(%q: tensor<?x16xf32>, %k: tensor<?x16xf32>, %v: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %o = attn.dot_product %q, %k, %v norm [softmax over keys]
      : tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x8xf32> -> tensor<?x8xf32>
  return %o : tensor<?x8xf32>
}
"""
path = write_spec(DYNAMIC)
kernel = attn.compile(DYNAMIC)
for n in (1, 37, 100):
    check(f"@dynamic n={n}", path, "dynamic", kernel,
          random_arrays(kernel.arguments, n, dynamic=n))

# Several results come back as a tuple.
TWO_RESULTS = """
func.func @two(%x: tensor<8x4xf32>, %y: tensor<8x4xf32>) -> (tensor<8x4xf32>, tensor<8x4xf32>) {
  %s = attn.add %x, %y : tensor<8x4xf32>, tensor<8x4xf32> -> tensor<8x4xf32>
  %p = attn.mul %x, %y : tensor<8x4xf32>, tensor<8x4xf32> -> tensor<8x4xf32>
  return %s, %p : tensor<8x4xf32>, tensor<8x4xf32>
}
"""
path = write_spec(TWO_RESULTS)
kernel = attn.compile(TWO_RESULTS)
inputs = random_arrays(kernel.arguments, 7)
results = kernel(*inputs)
assert isinstance(results, tuple) and len(results) == 2
check("@two", path, "two", kernel, inputs)

# 16-bit storage: bf16 through torch (numpy has no bf16), f16 through numpy.
HALF = """
func.func @half(%q: tensor<2x64x32xTYPE>, %k: tensor<2x96x32xTYPE>, %v: tensor<2x96x16xTYPE>) -> tensor<2x64x16xTYPE> {
  %o = attn.dot_product %q, %k, %v norm [softmax over keys]
      : tensor<2x64x32xTYPE>, tensor<2x96x32xTYPE>, tensor<2x96x16xTYPE> -> tensor<2x64x16xTYPE>
  return %o : tensor<2x64x16xTYPE>
}
"""
text = HALF.replace("TYPE", "bf16")
kernel = attn.compile(text)
values = [torch.from_numpy(a).bfloat16() for a in
          random_arrays([a._replace(dtype="float32") for a in kernel.arguments], 11)]
result = kernel(*values)
assert result.dtype == torch.bfloat16, result.dtype
check("@half bf16 (torch)", write_spec(text), "half", kernel,
      [as_numpy(v) for v in values], kernel_inputs=values)
text = HALF.replace("TYPE", "f16")
kernel = attn.compile(text)
inputs = random_arrays(kernel.arguments, 12)
assert kernel(*inputs).dtype == np.float16
check("@half f16 (numpy)", write_spec(text), "half", kernel, inputs)
