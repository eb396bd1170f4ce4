// RUN: attn-opt %s --attn-reassociate | FileCheck %s
// RUN: attn-run %s --verify-rewrites attn-reassociate --random 5 | FileCheck %s --check-prefix=VERIFY

// Exact rewrites of attn.dot_product to K^T V first, each where the linear
// form needs fewer MACs. The second RUN line evaluates every function before
// and after the pass on the same random inputs: exact agreement (1e-5
// relative, attn-run fails otherwise).

// [count over keys] (non-local, scaling form): Q (K^T V) / m, the 1/m on the
// dk x dv context.
// CHECK-LABEL: func.func @count_over_keys
// CHECK-SAME: (%[[Q:[a-z0-9_]+]]: tensor<256x32xf32>, %[[K:[a-z0-9_]+]]: tensor<256x32xf32>, %[[V:[a-z0-9_]+]]: tensor<256x64xf32>)
// CHECK-NEXT: %[[CTX:.+]] = attn.matmul %[[K]], %[[V]] transpose_lhs : tensor<256x32xf32>, tensor<256x64xf32> -> tensor<32x64xf32>
// CHECK-NEXT: %[[SCALED:.+]] = attn.scale %[[CTX]] by 3.906250e-03 : tensor<32x64xf32>
// CHECK-NEXT: %[[O:.+]] = attn.matmul %[[Q]], %[[SCALED]] : tensor<256x32xf32>, tensor<32x64xf32> -> tensor<256x64xf32>
// CHECK-NEXT: return %[[O]]
// VERIFY: verify-rewrites: @count_over_keys max abs err = {{.*}}, max rel err = {{.*}} (exact)
func.func @count_over_keys(%q: tensor<256x32xf32>, %k: tensor<256x32xf32>, %v: tensor<256x64xf32>) -> tensor<256x64xf32> {
  %o = attn.dot_product %q, %k, %v norm [count over keys]
      : tensor<256x32xf32>, tensor<256x32xf32>, tensor<256x64xf32> -> tensor<256x64xf32>
  return %o : tensor<256x64xf32>
}

// No normalization and a scalar scale: the scale lands on the context.
// CHECK-LABEL: func.func @no_norm_scaled
// CHECK-SAME: (%[[Q:[a-z0-9_]+]]: tensor<128x16xf32>, %[[K:[a-z0-9_]+]]: tensor<128x16xf32>, %[[V:[a-z0-9_]+]]: tensor<128x16xf32>)
// CHECK-NEXT: %[[CTX:.+]] = attn.matmul %[[K]], %[[V]] transpose_lhs
// CHECK-NEXT: %[[SCALED:.+]] = attn.scale %[[CTX]] by 2.500000e-01 : tensor<16x16xf32>
// CHECK-NEXT: %[[O:.+]] = attn.matmul %[[Q]], %[[SCALED]]
// CHECK-NEXT: return %[[O]]
// VERIFY: verify-rewrites: @no_norm_scaled max abs err = {{.*}}, max rel err = {{.*}} (exact)
func.func @no_norm_scaled(%q: tensor<128x16xf32>, %k: tensor<128x16xf32>, %v: tensor<128x16xf32>) -> tensor<128x16xf32> {
  %o = attn.dot_product %q, %k, %v norm [none over keys] scale 0.25
      : tensor<128x16xf32>, tensor<128x16xf32>, tensor<128x16xf32> -> tensor<128x16xf32>
  return %o : tensor<128x16xf32>
}

// [sum over keys] with elu+1 (linear attention): numerator and denominator
// both factored, phi(Q) (phi(K)^T V) / (phi(Q) (phi(K)^T 1) + eps).
// CHECK-LABEL: func.func @linear_elu
// CHECK-SAME: (%[[Q:[a-z0-9_]+]]: tensor<256x32xf32>, %[[K:[a-z0-9_]+]]: tensor<256x32xf32>, %[[V:[a-z0-9_]+]]: tensor<256x32xf32>)
// CHECK-NEXT: %[[PQ:.+]] = attn.feature_map elu_plus_one %[[Q]] : tensor<256x32xf32>
// CHECK-NEXT: %[[PK:.+]] = attn.feature_map elu_plus_one %[[K]] : tensor<256x32xf32>
// CHECK-NEXT: %[[CTX:.+]] = attn.matmul %[[PK]], %[[V]] transpose_lhs : tensor<256x32xf32>, tensor<256x32xf32> -> tensor<32x32xf32>
// CHECK-NEXT: %[[KSUM:.+]] = attn.reduce_sum %[[PK]] dim 0 : tensor<256x32xf32> -> tensor<1x32xf32>
// CHECK-NEXT: %[[NUM:.+]] = attn.matmul %[[PQ]], %[[CTX]] : tensor<256x32xf32>, tensor<32x32xf32> -> tensor<256x32xf32>
// CHECK-NEXT: %[[DEN:.+]] = attn.matmul %[[PQ]], %[[KSUM]] transpose_rhs : tensor<256x32xf32>, tensor<1x32xf32> -> tensor<256x1xf32>
// CHECK-NEXT: %[[O:.+]] = attn.div %[[NUM]], %[[DEN]] eps 1.000000e-03 : tensor<256x32xf32>, tensor<256x1xf32> -> tensor<256x32xf32>
// CHECK-NEXT: return %[[O]]
// VERIFY: verify-rewrites: @linear_elu max abs err = {{.*}}, max rel err = {{.*}} (exact)
func.func @linear_elu(%q: tensor<256x32xf32>, %k: tensor<256x32xf32>, %v: tensor<256x32xf32>) -> tensor<256x32xf32> {
  %o = attn.dot_product %q, %k, %v norm [sum over keys eps 1.0e-3] feature_map elu_plus_one
      : tensor<256x32xf32>, tensor<256x32xf32>, tensor<256x32xf32> -> tensor<256x32xf32>
  return %o : tensor<256x32xf32>
}

// Factors before the sum (scale, count over keys) multiply numerator and
// denominator (they matter because of eps); a count after it scales the
// quotient. relu feature map.
// CHECK-LABEL: func.func @linear_with_factors
// CHECK-SAME: (%[[Q:[a-z0-9_]+]]: tensor<256x32xf32>, %[[K:[a-z0-9_]+]]: tensor<256x32xf32>, %[[V:[a-z0-9_]+]]: tensor<256x32xf32>)
// CHECK-NEXT: %[[PQ:.+]] = attn.feature_map relu %[[Q]]
// CHECK-NEXT: %[[PK:.+]] = attn.feature_map relu %[[K]]
// CHECK-NEXT: %[[CTX:.+]] = attn.matmul %[[PK]], %[[V]] transpose_lhs
// CHECK-NEXT: %[[KSUM:.+]] = attn.reduce_sum %[[PK]] dim 0
// CHECK-NEXT: %[[SCTX:.+]] = attn.scale %[[CTX]] by 7.812500e-03 : tensor<32x32xf32>
// CHECK-NEXT: %[[NUM:.+]] = attn.matmul %[[PQ]], %[[SCTX]]
// CHECK-NEXT: %[[SKSUM:.+]] = attn.scale %[[KSUM]] by 7.812500e-03 : tensor<1x32xf32>
// CHECK-NEXT: %[[DEN:.+]] = attn.matmul %[[PQ]], %[[SKSUM]] transpose_rhs
// CHECK-NEXT: %[[RATIO:.+]] = attn.div %[[NUM]], %[[DEN]] eps 5.000000e-01
// CHECK-NEXT: %[[O:.+]] = attn.scale %[[RATIO]] by 3.906250e-03 : tensor<256x32xf32>
// CHECK-NEXT: return %[[O]]
// VERIFY: verify-rewrites: @linear_with_factors max abs err = {{.*}}, max rel err = {{.*}} (exact)
func.func @linear_with_factors(%q: tensor<256x32xf32>, %k: tensor<256x32xf32>, %v: tensor<256x32xf32>) -> tensor<256x32xf32> {
  %o = attn.dot_product %q, %k, %v norm [count over keys, sum over keys eps 0.5, count over queries] scale 2.0 feature_map relu
      : tensor<256x32xf32>, tensor<256x32xf32>, tensor<256x32xf32> -> tensor<256x32xf32>
  return %o : tensor<256x32xf32>
}

// Cross attention, n = 512 queries and m = 300 keys: the context is built
// over the m keys, Q multiplies it; [count over keys] divides by m = 300.
// CHECK-LABEL: func.func @cross_attention
// CHECK-SAME: (%[[Q:[a-z0-9_]+]]: tensor<512x16xf32>, %[[K:[a-z0-9_]+]]: tensor<300x16xf32>, %[[V:[a-z0-9_]+]]: tensor<300x8xf32>)
// CHECK-NEXT: %[[CTX:.+]] = attn.matmul %[[K]], %[[V]] transpose_lhs : tensor<300x16xf32>, tensor<300x8xf32> -> tensor<16x8xf32>
// CHECK-NEXT: %[[SCALED:.+]] = attn.scale %[[CTX]] by 0.0033333333333333335 : tensor<16x8xf32>
// CHECK-NEXT: %[[O:.+]] = attn.matmul %[[Q]], %[[SCALED]] : tensor<512x16xf32>, tensor<16x8xf32> -> tensor<512x8xf32>
// CHECK-NEXT: return %[[O]]
// VERIFY: verify-rewrites: @cross_attention max abs err = {{.*}}, max rel err = {{.*}} (exact)
func.func @cross_attention(%q: tensor<512x16xf32>, %k: tensor<300x16xf32>, %v: tensor<300x8xf32>) -> tensor<512x8xf32> {
  %o = attn.dot_product %q, %k, %v norm [count over keys]
      : tensor<512x16xf32>, tensor<300x16xf32>, tensor<300x8xf32> -> tensor<512x8xf32>
  return %o : tensor<512x8xf32>
}
