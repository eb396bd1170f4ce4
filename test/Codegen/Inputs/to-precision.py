#!/usr/bin/env python3
"""Prints an .mlir spec with its f32 tensors and scalars as TYPE (bf16 or f16).

Functions that use attn.gather_pixels or attn.scatter_pixels are dropped:
their pixel coordinates must stay f32 (the verifier says why), so their
reduced-precision forms are written by hand in reduced-precision-pixels.mlir.
Used by reduced-precision.test to run every primitive op and every example
in bf16 and f16 without keeping copies of them.
"""
import re
import sys


def main():
    if len(sys.argv) != 3 or sys.argv[2] not in ("bf16", "f16"):
        sys.exit("usage: to-precision.py SPEC.mlir bf16|f16")
    path, element = sys.argv[1], sys.argv[2]
    text = open(path).read()
    # Split before each top-level function (and its leading comments).
    pieces = re.split(r"(?m)^(?=(?://[^\n]*\n)*func\.func )", text)
    kept = [p for p in pieces if "_pixels" not in p or "func.func" not in p]
    out = "".join(kept)
    out = re.sub(r"xf32>", "x" + element + ">", out)
    out = re.sub(r"tensor<f32>", "tensor<" + element + ">", out)
    # Scalars: a tensor.pad's padding value and its constant (0.5 and 0
    # are exact in both types).
    out = re.sub(r"(arith\.constant [^:\n]*|tensor\.yield %\w+) : f32\b",
                 r"\1 : " + element, out)
    sys.stdout.write(out)


if __name__ == "__main__":
    main()
