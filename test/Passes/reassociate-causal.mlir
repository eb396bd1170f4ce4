// RUN: attn-opt %s --attn-reassociate=chunk-size=32 | FileCheck %s
// RUN: attn-opt %s --attn-reassociate="chunk-size=48 explain" -verify-diagnostics -o /dev/null
// RUN: attn-run %s --verify-rewrites "attn-reassociate{chunk-size=32}" --random 9 | FileCheck %s --check-prefix=VERIFY

// Causal masks keep the rewrite exact through prefix sums, computed in
// chunks of C positions (never an O(n dk dv) state per row): causal
// attention inside each chunk, plus phi(Q_c) times the exclusive prefix sum
// (over chunks) of the chunk states phi(K_c)^T V_c.

// [count over keys] causal, batch 2: chunks (2, 256/32, 32, d).
// CHECK-LABEL: func.func @causal_count
// CHECK-SAME: (%[[Q:[a-z0-9_]+]]: tensor<2x256x16xf32>, %[[K:[a-z0-9_]+]]: tensor<2x256x16xf32>, %[[V:[a-z0-9_]+]]: tensor<2x256x8xf32>)
// CHECK-NEXT: %[[SQ:.+]] = attn.scale %[[Q]] by 0.001953125 : tensor<2x256x16xf32>
// CHECK-NEXT: %[[QC:.+]] = tensor.expand_shape %[[SQ]] {{\[\[}}0], [1, 2], [3]] output_shape [2, 8, 32, 16] : tensor<2x256x16xf32> into tensor<2x8x32x16xf32>
// CHECK-NEXT: %[[KC:.+]] = tensor.expand_shape %[[K]] {{\[\[}}0], [1, 2], [3]] output_shape [2, 8, 32, 16]
// CHECK-NEXT: %[[VC:.+]] = tensor.expand_shape %[[V]] {{\[\[}}0], [1, 2], [3]] output_shape [2, 8, 32, 8]
// CHECK-NEXT: %[[INTRA:.+]] = attn.dot_product %[[QC]], %[[KC]], %[[VC]] norm [] causal : tensor<2x8x32x16xf32>, tensor<2x8x32x16xf32>, tensor<2x8x32x8xf32> -> tensor<2x8x32x8xf32>
// CHECK-NEXT: %[[STATES:.+]] = attn.matmul %[[KC]], %[[VC]] transpose_lhs : tensor<2x8x32x16xf32>, tensor<2x8x32x8xf32> -> tensor<2x8x16x8xf32>
// CHECK-NEXT: %[[EARLIER:.+]] = attn.prefix_sum %[[STATES]] dim 1 exclusive : tensor<2x8x16x8xf32>
// CHECK-NEXT: %[[INTER:.+]] = attn.matmul %[[QC]], %[[EARLIER]] : tensor<2x8x32x16xf32>, tensor<2x8x16x8xf32> -> tensor<2x8x32x8xf32>
// CHECK-NEXT: %[[SUM:.+]] = attn.add %[[INTRA]], %[[INTER]]
// CHECK-NEXT: %[[O:.+]] = tensor.collapse_shape %[[SUM]] {{\[\[}}0], [1, 2], [3]] : tensor<2x8x32x8xf32> into tensor<2x256x8xf32>
// CHECK-NEXT: return %[[O]]
// VERIFY: verify-rewrites: @causal_count max abs err = {{.*}}, max rel err = {{.*}} (exact)
func.func @causal_count(%q: tensor<2x256x16xf32>, %k: tensor<2x256x16xf32>, %v: tensor<2x256x8xf32>) -> tensor<2x256x8xf32> {
  // expected-remark @+1 {{not rewritten: causal attention: n = 256 is not a multiple of chunk-size 48}}
  %o = attn.dot_product %q, %k, %v norm [count over keys] scale 0.5 causal
      : tensor<2x256x16xf32>, tensor<2x256x16xf32>, tensor<2x256x8xf32> -> tensor<2x256x8xf32>
  return %o : tensor<2x256x8xf32>
}

// Causal linear attention: the row sums phi(q_i) . sum_{j <= i} phi(k_j) come
// from an inclusive prefix sum of phi(K) (O(n dk)), then a divide with eps.
// CHECK-LABEL: func.func @causal_linear
// CHECK-SAME: (%[[Q:[a-z0-9_]+]]: tensor<192x16xf32>, %[[K:[a-z0-9_]+]]: tensor<192x16xf32>, %[[V:[a-z0-9_]+]]: tensor<192x8xf32>)
// CHECK-NEXT: %[[PQ:.+]] = attn.feature_map elu_plus_one %[[Q]]
// CHECK-NEXT: %[[PK:.+]] = attn.feature_map elu_plus_one %[[K]]
// CHECK-NEXT: %[[QC:.+]] = tensor.expand_shape %[[PQ]] {{\[\[}}0, 1], [2]] output_shape [6, 32, 16]
// CHECK-NEXT: %[[KC:.+]] = tensor.expand_shape %[[PK]]
// CHECK-NEXT: %[[VC:.+]] = tensor.expand_shape %[[V]]
// CHECK-NEXT: %[[INTRA:.+]] = attn.dot_product %[[QC]], %[[KC]], %[[VC]] norm [] causal
// CHECK-NEXT: %[[STATES:.+]] = attn.matmul %[[KC]], %[[VC]] transpose_lhs : tensor<6x32x16xf32>, tensor<6x32x8xf32> -> tensor<6x16x8xf32>
// CHECK-NEXT: %[[EARLIER:.+]] = attn.prefix_sum %[[STATES]] dim 0 exclusive
// CHECK-NEXT: %[[INTER:.+]] = attn.matmul %[[QC]], %[[EARLIER]]
// CHECK-NEXT: %[[SUM:.+]] = attn.add %[[INTRA]], %[[INTER]]
// CHECK-NEXT: %[[NUM:.+]] = tensor.collapse_shape %[[SUM]]
// CHECK-NEXT: %[[KPREFIX:.+]] = attn.prefix_sum %[[PK]] dim 0 : tensor<192x16xf32>
// CHECK-NEXT: %[[PRODUCTS:.+]] = attn.mul %[[PQ]], %[[KPREFIX]]
// CHECK-NEXT: %[[DEN:.+]] = attn.reduce_sum %[[PRODUCTS]] dim 1 : tensor<192x16xf32> -> tensor<192x1xf32>
// CHECK-NEXT: %[[O:.+]] = attn.div %[[NUM]], %[[DEN]] eps 1.000000e-03
// CHECK-NEXT: return %[[O]]
// VERIFY: verify-rewrites: @causal_linear max abs err = {{.*}}, max rel err = {{.*}} (exact)
func.func @causal_linear(%q: tensor<192x16xf32>, %k: tensor<192x16xf32>, %v: tensor<192x8xf32>) -> tensor<192x8xf32> {
  // expected-remark @+1 {{rewritten (cheaper) to phi(Q) (phi(K)^T V) / phi(Q) (phi(K)^T 1) with causal prefix sums in chunks of 48}}
  %o = attn.dot_product %q, %k, %v norm [sum over keys eps 1.0e-3] feature_map elu_plus_one causal
      : tensor<192x16xf32>, tensor<192x16xf32>, tensor<192x8xf32> -> tensor<192x8xf32>
  return %o : tensor<192x8xf32>
}

// Causal cross attention (n != m) is left alone, with a reason.
// CHECK-LABEL: func.func @causal_cross
// CHECK-NEXT: attn.dot_product
// VERIFY: verify-rewrites: @causal_cross max abs err = 0, max rel err = 0 (unchanged)
func.func @causal_cross(%q: tensor<128x16xf32>, %k: tensor<256x16xf32>, %v: tensor<256x8xf32>) -> tensor<128x8xf32> {
  // expected-remark @+1 {{not rewritten: causal cross attention (n = 128 queries, m = 256 keys): the chunked form needs n = m}}
  %o = attn.dot_product %q, %k, %v norm [count over keys] causal
      : tensor<128x16xf32>, tensor<256x16xf32>, tensor<256x8xf32> -> tensor<128x8xf32>
  return %o : tensor<128x8xf32>
}

// A single chunk (n = C) is the quadratic form again: not cheaper, left alone.
// CHECK-LABEL: func.func @one_chunk
// CHECK-NEXT: attn.dot_product
// VERIFY: verify-rewrites: @one_chunk max abs err = 0, max rel err = 0 (unchanged)
func.func @one_chunk(%q: tensor<48x16xf32>, %k: tensor<48x16xf32>, %v: tensor<48x16xf32>) -> tensor<48x16xf32> {
  // expected-remark @+1 {{not rewritten: Q (K^T V) with causal prefix sums in chunks of 48 is not cheaper for these sizes}}
  %o = attn.dot_product %q, %k, %v norm [none over keys] causal
      : tensor<48x16xf32>, tensor<48x16xf32>, tensor<48x16xf32> -> tensor<48x16xf32>
  return %o : tensor<48x16xf32>
}
