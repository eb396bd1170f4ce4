#!/usr/bin/env bash
# Installs everything attn needs (Debian packages, a project-local Python venv)
# and configures and builds it into build/. Idempotent: a second run installs
# nothing and only rebuilds what changed.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

APT_PACKAGES=(
  llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools  # LLVM/MLIR 22
  libgtest-dev                                           # GoogleTest
  pocl-opencl-icd ocl-icd-opencl-dev                     # OpenCL on the CPU
  g++ git
  python3-dev python3-venv                               # the Python package
)
missing=()
for pkg in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" \
    || missing+=("$pkg")
done
if ((${#missing[@]})); then
  echo "setup: installing Debian packages: ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null
fi

# Python venv with Halide, CMake >= 3.28, Ninja and numpy (for test data).
VENV="$ROOT/.venv"
STAMP="$VENV/.requirements.sha256"
want="$(sha256sum scripts/requirements.txt | cut -d' ' -f1)"
if [ ! -x "$VENV/bin/python" ]; then
  echo "setup: creating $VENV"
  python3 -m venv "$VENV"
fi
if [ "$(cat "$STAMP" 2>/dev/null)" != "$want" ]; then
  echo "setup: installing Python packages from scripts/requirements.txt"
  "$VENV/bin/pip" install -q --disable-pip-version-check -r scripts/requirements.txt
  echo "$want" > "$STAMP"
fi
export PATH="$VENV/bin:$PATH"

BUILD="${ATTN_BUILD_DIR:-$ROOT/build}"
if [ ! -f "$BUILD/build.ninja" ]; then
  cmake -G Ninja -S "$ROOT" -B "$BUILD" \
    -DCMAKE_BUILD_TYPE=Release \
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
    -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit \
    -DPython3_EXECUTABLE="$VENV/bin/python" \
    -DATTN_SANITIZE="$([ "${ATTN_SANITIZE:-0}" = 1 ] && echo ON || echo OFF)" \
    >/dev/null
fi
cmake --build "$BUILD"
