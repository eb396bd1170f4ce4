#!/usr/bin/env bash
# The main job, end to end: set up, build, then for the attention examples
# parse -> verify -> cost report -> print the IR, and evaluate one with the
# reference runtime.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$ROOT/scripts/setup.sh" >/dev/null
BIN="${ATTN_BUILD_DIR:-$ROOT/build}/bin"
cd "$ROOT"

section() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

section "1. Parse and verify every example (attn-opt round trip)"
for spec in examples/*.mlir; do
  "$BIN/attn-opt" "$spec" | "$BIN/attn-opt" >/dev/null
  echo "ok  $spec"
done

section "2. Cost (Shen et al., Table 1 model): non-local block vs efficient attention"
for spec in examples/nonlocal_softmax.mlir examples/efficient_softmax.mlir; do
  echo "$spec:"
  "$BIN/attn-opt" --attn-cost --mlir-print-op-on-diagnostic=false "$spec" \
    -o /dev/null 2>&1 | grep -E "remark: (cost|total)" \
    | sed -E 's/^[^:]*:([0-9]+):[0-9]+: remark: /  line \1: /'
done

section "3. The IR of every example"
for spec in examples/*.mlir; do
  echo "// ---- $spec"
  "$BIN/attn-opt" "$spec"
done

section "4. Evaluate efficient attention with the reference runtime"
echo "\$ attn-run examples/efficient_softmax.mlir --random 42"
"$BIN/attn-run" examples/efficient_softmax.mlir --random 42
