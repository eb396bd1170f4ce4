// RUN: attn-opt %s --attn-grad | FileCheck %s
//
// Causal linear attention differentiates through reverse chunked scans
// (issue 21, design §7): --attn-grad first rewrites it into the exact chunked
// prefix-sum form of --attn-reassociate (chunks of 64 positions: causal
// attention inside a chunk plus the exclusive prefix sum of the chunk states
// phi(K_c)^T V_c), then differentiates those primitives. The prefix sums'
// adjoints are suffix sums (`reverse`), and no n x n (128 x 128) tensor is
// built: the gradient stays linear in n.

// CHECK-LABEL: func.func @causal_linear_grad
// CHECK-NOT: 128x128
// The forward: 64 x 64 causal scores inside each chunk, the chunk states'
// exclusive prefix sum and the row sums' inclusive prefix sum of phi(K).
// CHECK: attn.causal_mask %{{.+}} fill 0.000000e+00 : tensor<2x2x64x64xf32>
// CHECK: attn.prefix_sum %{{.+}} dim 1 exclusive : tensor<2x2x8x4xf32>
// CHECK: attn.prefix_sum %{{.+}} dim 1 : tensor<2x128x8xf32>
// The backward: suffix sums of the same scans, and the chunks' causal
// scores of dO V^T.
// CHECK: attn.prefix_sum %{{.+}} dim 1 reverse : tensor<2x128x8xf32>
// CHECK: attn.prefix_sum %{{.+}} dim 1 exclusive reverse : tensor<2x2x8x4xf32>
// CHECK: attn.causal_mask %{{.+}} fill 0.000000e+00 : tensor<2x2x64x64xf32>
// CHECK-NOT: 128x128
// CHECK: return
func.func @causal_linear(%q: tensor<2x128x8xf32>, %k: tensor<2x128x8xf32>, %v: tensor<2x128x4xf32>) -> tensor<2x128x4xf32> {
  %o = attn.dot_product %q, %k, %v norm [sum over keys eps 1.000000e-01] feature_map elu_plus_one causal
      : tensor<2x128x8xf32>, tensor<2x128x8xf32>, tensor<2x128x4xf32> -> tensor<2x128x4xf32>
  return %o : tensor<2x128x4xf32>
}

// n = 24 is not a multiple of the chunk: the quadratic primitive form, with
// the causal mask applied although there is no normalization step.
// CHECK-LABEL: func.func @ragged_causal_none_grad
// CHECK: %[[S:.+]] = attn.matmul %arg0, %arg1 transpose_rhs : tensor<24x4xf32>, tensor<24x4xf32> -> tensor<24x24xf32>
// CHECK-NEXT: attn.causal_mask %[[S]] fill 0.000000e+00 : tensor<24x24xf32>
func.func @ragged_causal_none(%q: tensor<24x4xf32>, %k: tensor<24x4xf32>, %v: tensor<24x3xf32>) -> tensor<24x3xf32> {
  %o = attn.dot_product %q, %k, %v norm [none over keys] causal
      : tensor<24x4xf32>, tensor<24x4xf32>, tensor<24x3xf32> -> tensor<24x3xf32>
  return %o : tensor<24x3xf32>
}
