#!/usr/bin/env bash
# Runs every fuzzer of test/fuzz (specs, npy, differential) for SECONDS each
# (default 60), one after the other, on the build in ${ATTN_BUILD_DIR:-build}
# (brought up to date first; scripts/setup.sh makes it). Prints executions and
# findings per fuzzer; writes each finding to test/fuzz/regressions/<fuzzer>/
# and exits 1 if there was one. docs/reliability.md says what is fuzzed.
#
#   scripts/fuzz.sh 600                       # every fuzzer, ten minutes each
#   scripts/fuzz.sh 60 --only npy --seed 7    # one fuzzer, another seed
#   scripts/fuzz.sh --replay                  # the regression corpus only
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${ATTN_BUILD_DIR:-$ROOT/build}"
if [ ! -x "$BUILD/bin/attn-opt" ]; then
  echo "fuzz: no build in $BUILD; run scripts/setup.sh first" >&2
  exit 2
fi
"$ROOT/.venv/bin/cmake" --build "$BUILD" >/dev/null
seconds=()
if [[ $# -gt 0 && $1 =~ ^[0-9]+([.][0-9]+)?$ ]]; then
  seconds=(--seconds "$1")
  shift
fi
exec "$ROOT/.venv/bin/python" "$ROOT/test/fuzz/fuzz.py" --bin "$BUILD/bin" \
  "${seconds[@]}" "$@"
