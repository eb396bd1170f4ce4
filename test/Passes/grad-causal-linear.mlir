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

// n = 100 = 64 + 36: a whole chunk and a ragged last chunk of 36 rows, so
// the gradient stays linear in n at any n. The forward slices the head and
// the tail; the backward takes the tail's rows of dO (extract_slice), gives
// the tail's causal scores (36 x 36) their adjoint, runs the head's reverse
// scan, and writes each part's adjoint back into n rows (insert_slice, the
// adjoint of the slices). No 100 x 100 tensor.
// CHECK-LABEL: func.func @ragged_causal_count_grad
// CHECK-NOT: 100x100
// CHECK: tensor.extract_slice %{{.+}}[0, 0] [64, 4] [1, 1] : tensor<100x4xf32> to tensor<64x4xf32>
// CHECK: attn.causal_mask %{{.+}} fill 0.000000e+00 : tensor<1x64x64xf32>
// CHECK: attn.prefix_sum %{{.+}} dim 0 exclusive : tensor<1x4x3xf32>
// CHECK: tensor.extract_slice %{{.+}}[64, 0] [36, 4] [1, 1] : tensor<100x4xf32> to tensor<36x4xf32>
// CHECK: attn.causal_mask %{{.+}} fill 0.000000e+00 : tensor<36x36xf32>
// The tail's rows of dO; the head's are dO with the tail's rows zeroed.
// CHECK: %[[DTAIL:.+]] = tensor.extract_slice %[[DO:.+]][64, 0] [36, 3] [1, 1] : tensor<100x3xf32> to tensor<36x3xf32>
// CHECK: %[[CLEARED:.+]] = tensor.insert_slice %{{.+}} into %[[DO]][64, 0] [36, 3] [1, 1]
// CHECK: tensor.extract_slice %[[CLEARED]][0, 0] [64, 3] [1, 1] : tensor<100x3xf32> to tensor<64x3xf32>
// CHECK: attn.causal_mask %{{.+}} fill 0.000000e+00 : tensor<36x36xf32>
// CHECK: tensor.insert_slice %{{.+}} into %{{.+}}[64, 0] [36, 3] [1, 1] : tensor<36x3xf32> into tensor<100x3xf32>
// CHECK: attn.prefix_sum %{{.+}} dim 0 exclusive reverse : tensor<1x4x3xf32>
// CHECK: attn.causal_mask %{{.+}} fill 0.000000e+00 : tensor<1x64x64xf32>
// CHECK: tensor.insert_slice %{{.+}} into %{{.+}}[0, 0] [64, 3] [1, 1] : tensor<64x3xf32> into tensor<100x3xf32>
// CHECK-NOT: 100x100
// CHECK: return
func.func @ragged_causal_count(%q: tensor<100x4xf32>, %k: tensor<100x4xf32>, %v: tensor<100x3xf32>) -> tensor<100x3xf32> {
  %o = attn.dot_product %q, %k, %v norm [count over keys] causal
      : tensor<100x4xf32>, tensor<100x4xf32>, tensor<100x3xf32> -> tensor<100x3xf32>
  return %o : tensor<100x3xf32>
}

// n = 24 < 64: the whole sequence is one ragged chunk, whose chunked form is
// the causal quadratic form itself, so the gradient is that of the quadratic
// primitive form, with the causal mask applied although there is no
// normalization step.
// CHECK-LABEL: func.func @short_causal_none_grad
// CHECK: %[[S:.+]] = attn.matmul %arg0, %arg1 transpose_rhs : tensor<24x4xf32>, tensor<24x4xf32> -> tensor<24x24xf32>
// CHECK-NEXT: attn.causal_mask %[[S]] fill 0.000000e+00 : tensor<24x24xf32>
func.func @short_causal_none(%q: tensor<24x4xf32>, %k: tensor<24x4xf32>, %v: tensor<24x3xf32>) -> tensor<24x3xf32> {
  %o = attn.dot_product %q, %k, %v norm [none over keys] causal
      : tensor<24x4xf32>, tensor<24x4xf32>, tensor<24x3xf32> -> tensor<24x3xf32>
  return %o : tensor<24x3xf32>
}
