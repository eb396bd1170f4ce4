#!/usr/bin/env bash
# The main job, end to end: set up and build; show what --attn-reassociate
# does to a non-local block (IR before/after, why softmax is left alone, the
# cost before/after, the numbers that prove the rewrite); compile kernels with
# Halide and time the quadratic vs the linear kernel on a 128x128 feature map
# in an app that links them; check every example's kernel against the
# reference runtime; differentiate every example and check the gradients;
# train a small attention layer with the forward and gradient kernels; run
# a PyTorch module whose attention is an attn op (python/).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$ROOT/scripts/setup.sh" >/dev/null
BUILD="${ATTN_BUILD_DIR:-$ROOT/build}"
BIN="$BUILD/bin"
cd "$ROOT"

section() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
# Remarks without the op dump, with "line N:" instead of the file path.
remarks() {
  grep -E "remark: " | sed -E 's/^[^:]*:([0-9]+):[0-9]+: remark: /  line \1: /'
}

section "1. Parse and verify every example (attn-opt round trip)"
for spec in examples/*.mlir; do
  "$BIN/attn-opt" "$spec" | "$BIN/attn-opt" >/dev/null
  echo "ok  $spec"
done

SPEC=examples/nonlocal_scaling.mlir
section "2. $SPEC before --attn-reassociate: (Q K^T) V"
grep -vE '^ *//' "$SPEC" | sed '/^$/d'

section "3. After --attn-reassociate=explain: Q (K^T V), K^T V computed first"
remarks_file="$(mktemp)"
trap 'rm -f "$remarks_file"' EXIT
"$BIN/attn-opt" --attn-reassociate=explain --mlir-print-op-on-diagnostic=false \
  "$SPEC" 2>"$remarks_file"
remarks <"$remarks_file"

section "4. Softmax does not factor: left alone, and explain says why"
"$BIN/attn-opt" --attn-reassociate=explain --mlir-print-op-on-diagnostic=false \
  examples/nonlocal_softmax.mlir -o /dev/null 2>&1 | remarks

section "5. Cost of $SPEC before and after (Shen et al., Table 1 model)"
echo "before:"
"$BIN/attn-opt" --attn-cost --mlir-print-op-on-diagnostic=false "$SPEC" \
  -o /dev/null 2>&1 | remarks
echo "after:"
"$BIN/attn-opt" --attn-reassociate --attn-cost \
  --mlir-print-op-on-diagnostic=false "$SPEC" -o /dev/null 2>&1 | remarks

section "6. The rewrites proven by numbers (reference runtime, random inputs)"
for spec in examples/*.mlir; do
  "$BIN/attn-run" "$spec" --verify-rewrites attn-default-pipeline --random 7 \
    2>&1 | grep '^verify-rewrites'
done

section "7. An app linking two generated kernels, on a 128x128 feature map"
echo "(examples/app: attn_add_kernel -> attn-compile -> static libraries + headers)"
cmake --build "$BUILD" --target attn-app >/dev/null
"$BUILD/examples/app/attn-app" 5

section "8. Every example's Halide kernel (JIT) checked against the reference"
for spec in examples/*.mlir; do
  "$BIN/attn-run" "$spec" --random 1 --check --quiet
done

section "9. Training: the gradient is attn IR (attn-opt --attn-grad)"
SPEC=examples/linear_attention.mlir
echo "cost of @linear_attention_grad (n = 256); before --attn-reassociate:"
"$BIN/attn-opt" --attn-grad --attn-cost --mlir-print-op-on-diagnostic=false \
  "$SPEC" -o /dev/null 2>&1 | grep "total of @linear_attention_grad" | remarks
echo "after (dk x dv contexts, linear in n: docs/training.md):"
"$BIN/attn-opt" --attn-grad --attn-reassociate --canonicalize --cse \
  --attn-cost --mlir-print-op-on-diagnostic=false "$SPEC" -o /dev/null 2>&1 |
  grep "total of @linear_attention_grad" | remarks
echo "every example's gradient: reference vs finite differences, kernel vs reference:"
for spec in examples/*.mlir; do
  "$BIN/attn-run" "$spec" --check-grad --random 3 --quiet | sed 's/^/  /'
  "$BIN/attn-run" "$spec" --grad --random 3 --check --quiet | sed 's/^/  /'
done

section "10. An app that trains: SGD on a linear-attention layer in C++"
echo "(examples/train_app: attn_add_kernel GRAD -> attention_layer + attention_layer_grad)"
cmake --build "$BUILD" --target attn-train-app >/dev/null
"$BUILD/examples/train_app/attn-train-app" 300

section "11. From PyTorch: a non-local block whose attention is an attn op"
echo "(examples/python: attn.torch_op -> torch.library op with autograd; python/)"
PYTHONPATH="$BUILD/python" "$ROOT/.venv/bin/python" examples/python/nonlocal_block.py
