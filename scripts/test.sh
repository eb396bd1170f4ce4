#!/usr/bin/env bash
# Sets everything up, builds, and runs every test (lit + GoogleTest) via ctest.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$ROOT/scripts/setup.sh"
export PATH="$ROOT/.venv/bin:$PATH"
cd "${ATTN_BUILD_DIR:-$ROOT/build}"
ctest --output-on-failure "$@"
