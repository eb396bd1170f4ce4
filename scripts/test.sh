#!/usr/bin/env bash
# Sets everything up, builds, and runs every test (lit + GoogleTest) via ctest.
#
#   scripts/test.sh [ctest args]              build/, every test
#   scripts/test.sh --sanitize [ctest args]   build-sanitize/: attn built with
#                                             ASan + UBSan, every test; any
#                                             report fails (docs/reliability.md)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [ "${1:-}" = --sanitize ]; then
  shift
  export ATTN_SANITIZE=1
  export ATTN_BUILD_DIR="${ATTN_BUILD_DIR:-$ROOT/build-sanitize}"
  # Why each option (docs/reliability.md, "Sanitizers"): Debian's LLVM/MLIR
  # are not instrumented, so ASan's container annotations of their
  # std::vector disagree with ours (a false overflow in
  # mlir::Dialect::addType); leaks are checked; a report aborts.
  export ASAN_OPTIONS="detect_container_overflow=0:allow_user_poisoning=0:detect_leaks=1:abort_on_error=1:allocator_may_return_null=1:suppressions=$ROOT/scripts/sanitize/asan.supp"
  export LSAN_OPTIONS="suppressions=$ROOT/scripts/sanitize/lsan.supp:print_suppressions=0"
  export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:suppressions=$ROOT/scripts/sanitize/ubsan.supp"
  # Halide compiles on a stack of its own reached by swapcontext, which ASan
  # supports only partly (a warning on stderr, possible false reports):
  # compile on the calling thread, whose stack may grow to 256 MiB.
  export HL_COMPILER_STACK_SIZE=0
  ulimit -s 262144
fi
"$ROOT/scripts/setup.sh"
export PATH="$ROOT/.venv/bin:$PATH"
cd "${ATTN_BUILD_DIR:-$ROOT/build}"
ctest --output-on-failure "$@"
