#!/usr/bin/env bash
# Creates bench/.venv-peers with the peers the benchmark times (PyTorch,
# ONNX Runtime, onnx to build the graphs, numpy) and matplotlib for the
# roofline plot, from PyPI only.
# Idempotent: a second run installs nothing unless requirements-peers.txt
# changed (its sha256 is stamped into the venv).
set -euo pipefail
BENCH="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
VENV="$BENCH/.venv-peers"
REQUIREMENTS="$BENCH/requirements-peers.txt"
STAMP="$VENV/.requirements.sha256"

want="$(sha256sum "$REQUIREMENTS" | cut -d' ' -f1)"
if [ ! -x "$VENV/bin/python" ]; then
  echo "setup_peers: creating $VENV"
  python3 -m venv "$VENV"
fi
if [ "$(cat "$STAMP" 2>/dev/null)" != "$want" ]; then
  echo "setup_peers: installing $REQUIREMENTS (PyTorch is large; first run takes minutes)"
  "$VENV/bin/pip" install -q --disable-pip-version-check -r "$REQUIREMENTS"
  echo "$want" > "$STAMP"
fi
# Fail here, not in the middle of a run, if an install is broken.
"$VENV/bin/python" -c "import torch, onnxruntime, onnx, numpy, matplotlib"
