// RUN: attn-opt %s --attn-reassociate=chunk-size=32 | FileCheck %s
// RUN: attn-opt %s --attn-reassociate="chunk-size=48 explain" -verify-diagnostics -o /dev/null
// RUN: attn-run %s --verify-rewrites "attn-reassociate{chunk-size=32}" --random 9 | FileCheck %s --check-prefix=VERIFY

// Causal masks keep the rewrite exact through prefix sums, computed in
// chunks of C positions (never an O(n dk dv) state per row): causal
// attention inside each chunk, plus phi(Q_c) times the exclusive prefix sum
// (over chunks) of the chunk states phi(K_c)^T V_c.

// [count over keys] causal, batch 2: chunks (2, 256/32, 32, d). With chunks
// of 48, 256 = 5 * 48 + 16: 2 * (240 * 48 * 24 + 2 * 240 * 16 * 8 + 16 * 16
// * 24 + 16 * 16 * 8) = 692224 MACs (see @causal_ragged) instead of
// 2 * 256 * 256 * 24 = 3145728.
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
  // expected-remark @+1 {{rewritten (cheaper) to Q (K^T V) with causal prefix sums in chunks of 48 (n = 256: 5 whole chunks and a ragged last chunk of 16): 692224 MACs}}
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

// A single chunk (n = C = 48) is the quadratic form again: not cheaper, left
// alone. With chunks of 32, 48 = 32 + 16 is one whole chunk and a ragged one:
// 32 * 32 * 32 + 2 * 32 * 16 * 16 + 16 * 16 * 32 + 16 * 16 * 16 = 61440
// MACs against 48 * 48 * 32 = 73728, so it is rewritten.
// CHECK-LABEL: func.func @one_chunk
// CHECK: attn.dot_product %{{.+}}, %{{.+}}, %{{.+}} norm [] causal : tensor<1x32x16xf32>, tensor<1x32x16xf32>, tensor<1x32x16xf32> -> tensor<1x32x16xf32>
// CHECK: attn.dot_product %{{.+}}, %{{.+}}, %{{.+}} norm [] causal : tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32> -> tensor<16x16xf32>
// CHECK: tensor.insert_slice %{{.+}} into %{{.+}}[32, 0] [16, 16] [1, 1] : tensor<16x16xf32> into tensor<48x16xf32>
// VERIFY: verify-rewrites: @one_chunk max abs err = {{.*}}, max rel err = {{.*}} (exact)
func.func @one_chunk(%q: tensor<48x16xf32>, %k: tensor<48x16xf32>, %v: tensor<48x16xf32>) -> tensor<48x16xf32> {
  // expected-remark @+1 {{not rewritten: Q (K^T V) with causal prefix sums in chunks of 48 is not cheaper for these sizes}}
  %o = attn.dot_product %q, %k, %v norm [none over keys] causal
      : tensor<48x16xf32>, tensor<48x16xf32>, tensor<48x16xf32> -> tensor<48x16xf32>
  return %o : tensor<48x16xf32>
}

// A ragged last chunk: n = 100 = 3 * 32 + 4. The 96 head rows are chunked as
// above; the 4 tail rows are one ragged chunk: causal attention inside it
// plus phi(Q_tail) times the sum of all head chunk states (the reduce_sum of
// STATES, its unit chunk dim dropped). Head and tail are written into one
// 100-row tensor; no position is padded. MACs: 96 * 32 * 24 (chunks) +
// 2 * 96 * 16 * 8 (states, inter) + 4 * 4 * 24 (tail) + 4 * 16 * 8 (tail
// inter) = 99200 against 100 * 100 * 24 = 240000.
// CHECK-LABEL: func.func @causal_ragged
// CHECK-SAME: (%[[Q:[a-z0-9_]+]]: tensor<100x16xf32>, %[[K:[a-z0-9_]+]]: tensor<100x16xf32>, %[[V:[a-z0-9_]+]]: tensor<100x8xf32>)
// CHECK-NEXT: %[[SQ:.+]] = attn.scale %[[Q]] by 2.500000e-01 : tensor<100x16xf32>
// CHECK-NEXT: %[[QH:.+]] = tensor.extract_slice %[[SQ]][0, 0] [96, 16] [1, 1] : tensor<100x16xf32> to tensor<96x16xf32>
// CHECK-NEXT: %[[KH:.+]] = tensor.extract_slice %[[K]][0, 0] [96, 16] [1, 1]
// CHECK-NEXT: %[[VH:.+]] = tensor.extract_slice %[[V]][0, 0] [96, 8] [1, 1]
// CHECK-NEXT: %[[QC:.+]] = tensor.expand_shape %[[QH]] {{\[\[}}0, 1], [2]] output_shape [3, 32, 16]
// CHECK-NEXT: %[[KC:.+]] = tensor.expand_shape %[[KH]]
// CHECK-NEXT: %[[VC:.+]] = tensor.expand_shape %[[VH]]
// CHECK-NEXT: %[[INTRA:.+]] = attn.dot_product %[[QC]], %[[KC]], %[[VC]] norm [] causal
// CHECK-NEXT: %[[STATES:.+]] = attn.matmul %[[KC]], %[[VC]] transpose_lhs : tensor<3x32x16xf32>, tensor<3x32x8xf32> -> tensor<3x16x8xf32>
// CHECK-NEXT: %[[EARLIER:.+]] = attn.prefix_sum %[[STATES]] dim 0 exclusive
// CHECK-NEXT: %[[INTER:.+]] = attn.matmul %[[QC]], %[[EARLIER]]
// CHECK-NEXT: %[[SUM:.+]] = attn.add %[[INTRA]], %[[INTER]]
// CHECK-NEXT: %[[HEAD:.+]] = tensor.collapse_shape %[[SUM]] {{\[\[}}0, 1], [2]] : tensor<3x32x8xf32> into tensor<96x8xf32>
// CHECK-NEXT: %[[QT:.+]] = tensor.extract_slice %[[SQ]][96, 0] [4, 16] [1, 1] : tensor<100x16xf32> to tensor<4x16xf32>
// CHECK-NEXT: %[[KT:.+]] = tensor.extract_slice %[[K]][96, 0] [4, 16] [1, 1]
// CHECK-NEXT: %[[VT:.+]] = tensor.extract_slice %[[V]][96, 0] [4, 8] [1, 1]
// CHECK-NEXT: %[[TINTRA:.+]] = attn.dot_product %[[QT]], %[[KT]], %[[VT]] norm [] causal : tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT: %[[TOTAL:.+]] = attn.reduce_sum %[[STATES]] dim 0 : tensor<3x16x8xf32> -> tensor<1x16x8xf32>
// CHECK-NEXT: %[[HSTATE:.+]] = tensor.collapse_shape %[[TOTAL]] {{\[\[}}0, 1], [2]] : tensor<1x16x8xf32> into tensor<16x8xf32>
// CHECK-NEXT: %[[TINTER:.+]] = attn.matmul %[[QT]], %[[HSTATE]] : tensor<4x16xf32>, tensor<16x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT: %[[TAIL:.+]] = attn.add %[[TINTRA]], %[[TINTER]]
// CHECK-NEXT: %[[ZEROS:.+]] = arith.constant dense<0.000000e+00> : tensor<100x8xf32>
// CHECK-NEXT: %[[JOIN:.+]] = tensor.insert_slice %[[HEAD]] into %[[ZEROS]][0, 0] [96, 8] [1, 1]
// CHECK-NEXT: %[[O:.+]] = tensor.insert_slice %[[TAIL]] into %[[JOIN]][96, 0] [4, 8] [1, 1] : tensor<4x8xf32> into tensor<100x8xf32>
// CHECK-NEXT: return %[[O]]
// VERIFY: verify-rewrites: @causal_ragged max abs err = {{.*}}, max rel err = {{.*}} (exact)
func.func @causal_ragged(%q: tensor<100x16xf32>, %k: tensor<100x16xf32>, %v: tensor<100x8xf32>) -> tensor<100x8xf32> {
  // expected-remark @+1 {{rewritten (cheaper) to Q (K^T V) with causal prefix sums in chunks of 48 (n = 100: 2 whole chunks and a ragged last chunk of 4)}}
  %o = attn.dot_product %q, %k, %v norm [none over keys] scale 0.25 causal
      : tensor<100x16xf32>, tensor<100x16xf32>, tensor<100x8xf32> -> tensor<100x8xf32>
  return %o : tensor<100x8xf32>
}

// A ragged sum step with K and V shared by the heads: the row sums stay an
// inclusive prefix sum over all n = 100 rows (never chunked or padded), and
// divide the joined numerator.
// CHECK-LABEL: func.func @causal_linear_ragged_heads
// CHECK: %[[PK:.+]] = attn.feature_map elu_plus_one %{{.+}} : tensor<100x16xf32>
// CHECK: %[[TAIL:.+]] = attn.dot_product %{{.+}}, %{{.+}}, %{{.+}} norm [] causal : tensor<2x4x16xf32>, tensor<4x16xf32>, tensor<4x8xf32> -> tensor<2x4x8xf32>
// CHECK: %[[NUM:.+]] = tensor.insert_slice %{{.+}} into %{{.+}}[0, 96, 0] [2, 4, 8] [1, 1, 1] : tensor<2x4x8xf32> into tensor<2x100x8xf32>
// CHECK-NEXT: %[[KPREFIX:.+]] = attn.prefix_sum %[[PK]] dim 0 : tensor<100x16xf32>
// CHECK-NEXT: %[[PRODUCTS:.+]] = attn.mul %{{.+}}, %[[KPREFIX]]
// CHECK-NEXT: %[[DEN:.+]] = attn.reduce_sum %[[PRODUCTS]] dim 2 : tensor<2x100x16xf32> -> tensor<2x100x1xf32>
// CHECK-NEXT: %[[O:.+]] = attn.div %[[NUM]], %[[DEN]] : tensor<2x100x8xf32>, tensor<2x100x1xf32>
// CHECK-NEXT: return %[[O]]
// VERIFY: verify-rewrites: @causal_linear_ragged_heads max abs err = {{.*}}, max rel err = {{.*}} (exact)
func.func @causal_linear_ragged_heads(%q: tensor<2x100x16xf32>, %k: tensor<100x16xf32>, %v: tensor<100x8xf32>) -> tensor<2x100x8xf32> {
  // expected-remark @+1 {{rewritten (cheaper) to phi(Q) (phi(K)^T V) / phi(Q) (phi(K)^T 1) with causal prefix sums in chunks of 48 (n = 100: 2 whole chunks and a ragged last chunk of 4)}}
  %o = attn.dot_product %q, %k, %v norm [sum over keys] feature_map elu_plus_one causal
      : tensor<2x100x16xf32>, tensor<100x16xf32>, tensor<100x8xf32> -> tensor<2x100x8xf32>
  return %o : tensor<2x100x8xf32>
}

// n < C: the whole sequence is one ragged chunk, whose chunked form is the
// causal quadratic form itself; left alone, with that reason.
// CHECK-LABEL: func.func @shorter_than_a_chunk
// CHECK-NEXT: attn.dot_product
// VERIFY: verify-rewrites: @shorter_than_a_chunk max abs err = 0, max rel err = 0 (unchanged)
func.func @shorter_than_a_chunk(%q: tensor<24x16xf32>, %k: tensor<24x16xf32>, %v: tensor<24x8xf32>) -> tensor<24x8xf32> {
  // expected-remark @+1 {{not rewritten: causal attention: n = 24 is less than chunk-size 48: a single (ragged) chunk, whose causal form is the quadratic one}}
  %o = attn.dot_product %q, %k, %v norm [count over keys] causal
      : tensor<24x16xf32>, tensor<24x16xf32>, tensor<24x8xf32> -> tensor<24x8xf32>
  return %o : tensor<24x8xf32>
}
