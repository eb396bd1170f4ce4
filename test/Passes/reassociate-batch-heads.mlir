// RUN: attn-opt %s --attn-reassociate | FileCheck %s
// RUN: attn-opt %s --attn-reassociate | FileCheck %s --check-prefix=DYNAMIC
// RUN: attn-run %s --verify-rewrites attn-reassociate --random 4 --dynamic-size 4 | FileCheck %s --check-prefix=VERIFY

// Batch and head dims are leading dims: they broadcast the numpy way through
// every emitted op, so a K/V shared by all heads (rank 2, or a head dim of 1)
// gives one context per batch (not per head).

// Batch 2, 4 heads, all operands rank 4, [count over keys].
// CHECK-LABEL: func.func @batch_heads
// CHECK-SAME: (%[[Q:[a-z0-9_]+]]: tensor<2x4x128x16xf32>, %[[K:[a-z0-9_]+]]: tensor<2x4x128x16xf32>, %[[V:[a-z0-9_]+]]: tensor<2x4x128x32xf32>)
// CHECK-NEXT: %[[CTX:.+]] = attn.matmul %[[K]], %[[V]] transpose_lhs : tensor<2x4x128x16xf32>, tensor<2x4x128x32xf32> -> tensor<2x4x16x32xf32>
// CHECK-NEXT: %[[SCALED:.+]] = attn.scale %[[CTX]] by 7.812500e-03 : tensor<2x4x16x32xf32>
// CHECK-NEXT: %[[O:.+]] = attn.matmul %[[Q]], %[[SCALED]] : tensor<2x4x128x16xf32>, tensor<2x4x16x32xf32> -> tensor<2x4x128x32xf32>
// CHECK-NEXT: return %[[O]]
// VERIFY: verify-rewrites: @batch_heads max abs err = {{.*}}, max rel err = {{.*}} (exact)
func.func @batch_heads(%q: tensor<2x4x128x16xf32>, %k: tensor<2x4x128x16xf32>, %v: tensor<2x4x128x32xf32>) -> tensor<2x4x128x32xf32> {
  %o = attn.dot_product %q, %k, %v norm [count over keys]
      : tensor<2x4x128x16xf32>, tensor<2x4x128x16xf32>, tensor<2x4x128x32xf32> -> tensor<2x4x128x32xf32>
  return %o : tensor<2x4x128x32xf32>
}

// Keys and values shared by all heads (rank 2), linear attention: one
// context and one key sum, broadcast against the queries of every head.
// CHECK-LABEL: func.func @shared_kv
// CHECK-SAME: (%[[Q:[a-z0-9_]+]]: tensor<2x4x128x16xf32>, %[[K:[a-z0-9_]+]]: tensor<128x16xf32>, %[[V:[a-z0-9_]+]]: tensor<128x32xf32>)
// CHECK: %[[CTX:.+]] = attn.matmul %{{.+}}, %[[V]] transpose_lhs : tensor<128x16xf32>, tensor<128x32xf32> -> tensor<16x32xf32>
// CHECK-NEXT: %[[KSUM:.+]] = attn.reduce_sum %{{.+}} dim 0 : tensor<128x16xf32> -> tensor<1x16xf32>
// CHECK-NEXT: %[[NUM:.+]] = attn.matmul %{{.+}}, %[[CTX]] : tensor<2x4x128x16xf32>, tensor<16x32xf32> -> tensor<2x4x128x32xf32>
// CHECK-NEXT: %[[DEN:.+]] = attn.matmul %{{.+}}, %[[KSUM]] transpose_rhs : tensor<2x4x128x16xf32>, tensor<1x16xf32> -> tensor<2x4x128x1xf32>
// CHECK-NEXT: attn.div %[[NUM]], %[[DEN]] : tensor<2x4x128x32xf32>, tensor<2x4x128x1xf32> -> tensor<2x4x128x32xf32>
// VERIFY: verify-rewrites: @shared_kv max abs err = {{.*}}, max rel err = {{.*}} (exact)
func.func @shared_kv(%q: tensor<2x4x128x16xf32>, %k: tensor<128x16xf32>, %v: tensor<128x32xf32>) -> tensor<2x4x128x32xf32> {
  %o = attn.dot_product %q, %k, %v norm [sum over keys] feature_map elu_plus_one
      : tensor<2x4x128x16xf32>, tensor<128x16xf32>, tensor<128x32xf32> -> tensor<2x4x128x32xf32>
  return %o : tensor<2x4x128x32xf32>
}

// Causal with heads and K/V with a head dim of 1: each operand is chunked
// in its own rank, and the chunk dims line up right-aligned.
// CHECK-LABEL: func.func @causal_heads
// CHECK: tensor.expand_shape %{{.+}} {{\[\[}}0], [1], [2, 3], [4]] output_shape [2, 4, 2, 64, 16] : tensor<2x4x128x16xf32> into tensor<2x4x2x64x16xf32>
// CHECK: tensor.expand_shape %{{.+}} output_shape [2, 1, 2, 64, 16] : tensor<2x1x128x16xf32> into tensor<2x1x2x64x16xf32>
// CHECK: attn.dot_product {{.*}} causal : tensor<2x4x2x64x16xf32>, tensor<2x1x2x64x16xf32>, tensor<2x1x2x64x8xf32> -> tensor<2x4x2x64x8xf32>
// CHECK: attn.prefix_sum %{{.+}} dim 2 exclusive : tensor<2x1x2x16x8xf32>
// CHECK: tensor.collapse_shape %{{.+}} {{\[\[}}0], [1], [2, 3], [4]] : tensor<2x4x2x64x8xf32> into tensor<2x4x128x8xf32>
// VERIFY: verify-rewrites: @causal_heads max abs err = {{.*}}, max rel err = {{.*}} (exact)
func.func @causal_heads(%q: tensor<2x4x128x16xf32>, %k: tensor<2x1x128x16xf32>, %v: tensor<2x1x128x8xf32>) -> tensor<2x4x128x8xf32> {
  %o = attn.dot_product %q, %k, %v norm [count over keys] causal
      : tensor<2x4x128x16xf32>, tensor<2x1x128x16xf32>, tensor<2x1x128x8xf32> -> tensor<2x4x128x8xf32>
  return %o : tensor<2x4x128x8xf32>
}

// Dynamic batch and heads, static lengths: the batch in the formulas is the
// product of the broadcast leading dims (max of each pair). A declared result
// more static than the linear form's is restored with tensor.cast.
// DYNAMIC-LABEL: func.func @dynamic_heads
// DYNAMIC-SAME: (%[[Q:[a-z0-9_]+]]: tensor<?x?x64x16xf32>, %[[K:[a-z0-9_]+]]: tensor<?x1x64x16xf32>, %[[V:[a-z0-9_]+]]: tensor<?x1x64x16xf32>)
// DYNAMIC: arith.maxui
// DYNAMIC: scf.if %{{.+}} -> (tensor<?x4x64x16xf32>) {
// DYNAMIC: %[[LINEAR:.+]] = attn.matmul %[[Q]], %{{.+}} : tensor<?x?x64x16xf32>, tensor<?x1x16x16xf32> -> tensor<?x?x64x16xf32>
// DYNAMIC-NEXT: %[[CAST:.+]] = tensor.cast %[[LINEAR]] : tensor<?x?x64x16xf32> to tensor<?x4x64x16xf32>
// DYNAMIC-NEXT: scf.yield %[[CAST]]
// VERIFY: verify-rewrites: @dynamic_heads max abs err = {{.*}}, max rel err = {{.*}} (exact)
func.func @dynamic_heads(%q: tensor<?x?x64x16xf32>, %k: tensor<?x1x64x16xf32>, %v: tensor<?x1x64x16xf32>) -> tensor<?x4x64x16xf32> {
  %o = attn.dot_product %q, %k, %v norm [none over keys]
      : tensor<?x?x64x16xf32>, tensor<?x1x64x16xf32>, tensor<?x1x64x16xf32> -> tensor<?x4x64x16xf32>
  return %o : tensor<?x4x64x16xf32>
}
