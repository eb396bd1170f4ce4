// RUN: attn-opt %s --attn-reassociate=explain -verify-diagnostics | FileCheck %s

// Cases the algebra does not allow, left alone; `explain` says why (one
// remark per op). The last cases are rewritable and say so.

// CHECK-LABEL: func.func @additive_mask
// CHECK-NEXT: attn.dot_product
func.func @additive_mask(%q: tensor<128x16xf32>, %k: tensor<128x16xf32>, %v: tensor<128x16xf32>, %mask: tensor<128x128xf32>) -> tensor<128x16xf32> {
  // expected-remark @+1 {{attn-reassociate: not rewritten: an additive mask changes the scores before the normalization, so they do not factor through K^T V}}
  %o = attn.dot_product %q, %k, %v mask %mask norm [count over keys]
      : tensor<128x16xf32>, tensor<128x16xf32>, tensor<128x16xf32>, tensor<128x128xf32> -> tensor<128x16xf32>
  return %o : tensor<128x16xf32>
}

// CHECK-LABEL: func.func @softmax_without_opt_in
// CHECK-NEXT: attn.dot_product
func.func @softmax_without_opt_in(%q: tensor<128x16xf32>, %k: tensor<128x16xf32>, %v: tensor<128x16xf32>) -> tensor<128x16xf32> {
  // expected-remark @+1 {{attn-reassociate: not rewritten: 'softmax over keys' does not factor: exp(q.k) is not a product of a function of q and one of k. Opt in to the softmax efficient-attention approximation (a different function) with allow-softmax-approximation or the attn.allow_approximation attribute}}
  %o = attn.dot_product %q, %k, %v norm [softmax over keys]
      : tensor<128x16xf32>, tensor<128x16xf32>, tensor<128x16xf32> -> tensor<128x16xf32>
  return %o : tensor<128x16xf32>
}

// CHECK-LABEL: func.func @softmax_over_queries
// CHECK-NEXT: attn.dot_product
func.func @softmax_over_queries(%q: tensor<128x16xf32>, %k: tensor<128x16xf32>, %v: tensor<128x16xf32>) -> tensor<128x16xf32> {
  // expected-remark @+1 {{not rewritten: 'softmax over queries' normalizes each key column by a sum of exponentials over all queries: not a scalar factor per query row}}
  %o = attn.dot_product %q, %k, %v norm [softmax over queries]
      : tensor<128x16xf32>, tensor<128x16xf32>, tensor<128x16xf32> -> tensor<128x16xf32>
  return %o : tensor<128x16xf32>
}

// EANet's double normalization (attn.external after canonicalization).
// CHECK-LABEL: func.func @double_normalization
// CHECK-NEXT: attn.dot_product
func.func @double_normalization(%x: tensor<256x64xf32>, %mk: tensor<16x64xf32>, %mv: tensor<16x64xf32>) -> tensor<256x64xf32> {
  // expected-remark @+1 {{not rewritten: double normalization [softmax over queries, sum over keys]: a softmax combined with another step is not a scalar factor per query row}}
  %o = attn.dot_product %x, %mk, %mv norm [softmax over queries, sum over keys eps 1.0e-9]
      : tensor<256x64xf32>, tensor<16x64xf32>, tensor<16x64xf32> -> tensor<256x64xf32>
  return %o : tensor<256x64xf32>
}

// CHECK-LABEL: func.func @two_sums
// CHECK-NEXT: attn.dot_product
func.func @two_sums(%q: tensor<128x16xf32>, %k: tensor<128x16xf32>, %v: tensor<128x16xf32>) -> tensor<128x16xf32> {
  // expected-remark @+1 {{not rewritten: double normalization: a second 'sum over keys' divides by sums of already normalized rows}}
  %o = attn.dot_product %q, %k, %v norm [sum over keys, sum over keys]
      : tensor<128x16xf32>, tensor<128x16xf32>, tensor<128x16xf32> -> tensor<128x16xf32>
  return %o : tensor<128x16xf32>
}

// CHECK-LABEL: func.func @sum_over_queries
// CHECK-NEXT: attn.dot_product
func.func @sum_over_queries(%q: tensor<128x16xf32>, %k: tensor<128x16xf32>, %v: tensor<128x16xf32>) -> tensor<128x16xf32> {
  // expected-remark @+1 {{not rewritten: 'sum over queries' divides each key column by its own sum: not a scalar factor per query row}}
  %o = attn.dot_product %q, %k, %v norm [sum over queries]
      : tensor<128x16xf32>, tensor<128x16xf32>, tensor<128x16xf32> -> tensor<128x16xf32>
  return %o : tensor<128x16xf32>
}

// CHECK-LABEL: func.func @causal_softmax_opted_in
// CHECK-NEXT: attn.dot_product
func.func @causal_softmax_opted_in(%q: tensor<128x16xf32>, %k: tensor<128x16xf32>, %v: tensor<128x16xf32>) -> tensor<128x16xf32> {
  // expected-remark @+1 {{not rewritten: causal softmax attention has no efficient-attention form, even as an approximation}}
  %o = attn.dot_product %q, %k, %v norm [softmax over keys] causal {attn.allow_approximation}
      : tensor<128x16xf32>, tensor<128x16xf32>, tensor<128x16xf32> -> tensor<128x16xf32>
  return %o : tensor<128x16xf32>
}

// The factor 1/m of a count over a dynamic number of keys is not a constant.
// CHECK-LABEL: func.func @count_over_dynamic_keys
// CHECK-NEXT: attn.dot_product
func.func @count_over_dynamic_keys(%q: tensor<128x16xf32>, %k: tensor<?x16xf32>, %v: tensor<?x16xf32>) -> tensor<128x16xf32> {
  // expected-remark @+1 {{not rewritten: 'count over keys' divides by the number of keys, which is dynamic here, so the factor is not a constant}}
  %o = attn.dot_product %q, %k, %v norm [count over keys]
      : tensor<128x16xf32>, tensor<?x16xf32>, tensor<?x16xf32> -> tensor<128x16xf32>
  return %o : tensor<128x16xf32>
}

// Causal attention at dynamic sizes has a linear form
// (reassociate-causal-dynamic.mlir), but a count over a dynamic number of
// keys still blocks it: 1/m is not a constant.
// CHECK-LABEL: func.func @causal_count_over_dynamic_keys
// CHECK-NEXT: attn.dot_product
func.func @causal_count_over_dynamic_keys(%q: tensor<?x16xf32>, %k: tensor<?x16xf32>, %v: tensor<?x16xf32>) -> tensor<?x16xf32> {
  // expected-remark @+1 {{not rewritten: 'count over keys' divides by the number of keys, which is dynamic here, so the factor is not a constant}}
  %o = attn.dot_product %q, %k, %v norm [count over keys] causal
      : tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32> -> tensor<?x16xf32>
  return %o : tensor<?x16xf32>
}

// Exact but not cheaper: n = m = 8 with dk = dv = 64 (n m (dk + dv) = 8192
// MACs against (n + m) dk dv = 65536).
// CHECK-LABEL: func.func @not_cheaper
// CHECK-NEXT: attn.dot_product
func.func @not_cheaper(%q: tensor<8x64xf32>, %k: tensor<8x64xf32>, %v: tensor<8x64xf32>) -> tensor<8x64xf32> {
  // expected-remark @+1 {{not rewritten: Q (K^T V) is not cheaper for these sizes (65536 MACs and 4608 floats instead of 8192 MACs and 576 floats); force=true rewrites anyway}}
  %o = attn.dot_product %q, %k, %v norm [count over keys]
      : tensor<8x64xf32>, tensor<8x64xf32>, tensor<8x64xf32> -> tensor<8x64xf32>
  return %o : tensor<8x64xf32>
}

// And one that is rewritten, to show the positive remark.
// CHECK-LABEL: func.func @rewritten
// CHECK-NOT: attn.dot_product
// CHECK: return
func.func @rewritten(%q: tensor<256x32xf32>, %k: tensor<256x32xf32>, %v: tensor<256x64xf32>) -> tensor<256x64xf32> {
  // expected-remark @+1 {{attn-reassociate: rewritten (cheaper) to Q (K^T V): 1048576 MACs and 18432 floats instead of 6291456 MACs and 81920 floats}}
  %o = attn.dot_product %q, %k, %v norm [count over keys]
      : tensor<256x32xf32>, tensor<256x32xf32>, tensor<256x64xf32> -> tensor<256x64xf32>
  return %o : tensor<256x64xf32>
}
