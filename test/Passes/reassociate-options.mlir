// RUN: not attn-opt %s --attn-reassociate=chunk-size=0 2>&1 | FileCheck %s --check-prefix=ZERO
// RUN: not attn-opt %s --attn-reassociate=chunk-size=-4 2>&1 | FileCheck %s --check-prefix=NEGATIVE
// RUN: not attn-opt %s --attn-reassociate=no-such-option 2>&1 | FileCheck %s --check-prefix=UNKNOWN

// Bad pass options are errors with a non-zero exit, never a crash.
// ZERO: error: attn-reassociate: chunk-size must be > 0, got 0
// NEGATIVE: error: attn-reassociate: chunk-size must be > 0, got -4
// UNKNOWN: no-such-option
func.func @f(%q: tensor<128x16xf32>) -> tensor<128x16xf32> {
  %o = attn.dot_product %q, %q, %q norm [count over keys] causal
      : tensor<128x16xf32>, tensor<128x16xf32>, tensor<128x16xf32> -> tensor<128x16xf32>
  return %o : tensor<128x16xf32>
}
