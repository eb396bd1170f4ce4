// RUN: attn-opt %s --attn-grad | FileCheck %s
//
// --attn-grad: the gradient @f_grad(args, dResults) -> dArgs of each
// function, built from the adjoint rules of its ops (design §7,
// docs/training.md). Every CHECK block below is one @f_grad, in full.

// C = A B: dA = dC B^T, dB = A^T dC.
// CHECK-LABEL: func.func @plain_grad(
// CHECK-SAME: %arg0: tensor<4x3xf32>, %arg1: tensor<3x5xf32>, %arg2: tensor<4x5xf32>) -> (tensor<4x3xf32>, tensor<3x5xf32>) attributes {{[{]}}attn.gradient_of = @plain}
// CHECK-NEXT: %[[V0:[a-z0-9_]+]] = attn.matmul %arg2, %arg1 transpose_rhs : tensor<4x5xf32>, tensor<3x5xf32> -> tensor<4x3xf32>
// CHECK-NEXT: %[[V1:[a-z0-9_]+]] = attn.matmul %arg0, %arg2 transpose_lhs : tensor<4x3xf32>, tensor<4x5xf32> -> tensor<3x5xf32>
// CHECK-NEXT: return %[[V0]], %[[V1]] : tensor<4x3xf32>, tensor<3x5xf32>
func.func @plain(%a: tensor<4x3xf32>, %b: tensor<3x5xf32>) -> tensor<4x5xf32> {
  %c = attn.matmul %a, %b : tensor<4x3xf32>, tensor<3x5xf32> -> tensor<4x5xf32>
  return %c : tensor<4x5xf32>
}

// -----

// C = A B^T: dA = dC B, dB = dC^T A.
// CHECK-LABEL: func.func @rhs_transposed_grad(
// CHECK-SAME: %arg0: tensor<4x3xf32>, %arg1: tensor<5x3xf32>, %arg2: tensor<4x5xf32>) -> (tensor<4x3xf32>, tensor<5x3xf32>) attributes {{[{]}}attn.gradient_of = @rhs_transposed}
// CHECK-NEXT: %[[V0:[a-z0-9_]+]] = attn.matmul %arg2, %arg1 : tensor<4x5xf32>, tensor<5x3xf32> -> tensor<4x3xf32>
// CHECK-NEXT: %[[V1:[a-z0-9_]+]] = attn.matmul %arg2, %arg0 transpose_lhs : tensor<4x5xf32>, tensor<4x3xf32> -> tensor<5x3xf32>
// CHECK-NEXT: return %[[V0]], %[[V1]] : tensor<4x3xf32>, tensor<5x3xf32>
func.func @rhs_transposed(%a: tensor<4x3xf32>, %b: tensor<5x3xf32>) -> tensor<4x5xf32> {
  %c = attn.matmul %a, %b transpose_rhs : tensor<4x3xf32>, tensor<5x3xf32> -> tensor<4x5xf32>
  return %c : tensor<4x5xf32>
}

// -----

// C = A^T B: dA = B dC^T, dB = A dC.
// CHECK-LABEL: func.func @lhs_transposed_grad(
// CHECK-SAME: %arg0: tensor<3x4xf32>, %arg1: tensor<3x5xf32>, %arg2: tensor<4x5xf32>) -> (tensor<3x4xf32>, tensor<3x5xf32>) attributes {{[{]}}attn.gradient_of = @lhs_transposed}
// CHECK-NEXT: %[[V0:[a-z0-9_]+]] = attn.matmul %arg1, %arg2 transpose_rhs : tensor<3x5xf32>, tensor<4x5xf32> -> tensor<3x4xf32>
// CHECK-NEXT: %[[V1:[a-z0-9_]+]] = attn.matmul %arg0, %arg2 : tensor<3x4xf32>, tensor<4x5xf32> -> tensor<3x5xf32>
// CHECK-NEXT: return %[[V0]], %[[V1]] : tensor<3x4xf32>, tensor<3x5xf32>
func.func @lhs_transposed(%a: tensor<3x4xf32>, %b: tensor<3x5xf32>) -> tensor<4x5xf32> {
  %c = attn.matmul %a, %b transpose_lhs : tensor<3x4xf32>, tensor<3x5xf32> -> tensor<4x5xf32>
  return %c : tensor<4x5xf32>
}

// -----

// C = A^T B^T: dA = B^T dC^T, dB = dC^T A^T.
// CHECK-LABEL: func.func @both_transposed_grad(
// CHECK-SAME: %arg0: tensor<3x4xf32>, %arg1: tensor<5x3xf32>, %arg2: tensor<4x5xf32>) -> (tensor<3x4xf32>, tensor<5x3xf32>) attributes {{[{]}}attn.gradient_of = @both_transposed}
// CHECK-NEXT: %[[V0:[a-z0-9_]+]] = attn.matmul %arg1, %arg2 transpose_lhs transpose_rhs : tensor<5x3xf32>, tensor<4x5xf32> -> tensor<3x4xf32>
// CHECK-NEXT: %[[V1:[a-z0-9_]+]] = attn.matmul %arg2, %arg0 transpose_lhs transpose_rhs : tensor<4x5xf32>, tensor<3x4xf32> -> tensor<5x3xf32>
// CHECK-NEXT: return %[[V0]], %[[V1]] : tensor<3x4xf32>, tensor<5x3xf32>
func.func @both_transposed(%a: tensor<3x4xf32>, %b: tensor<5x3xf32>) -> tensor<4x5xf32> {
  %c = attn.matmul %a, %b transpose_lhs transpose_rhs : tensor<3x4xf32>, tensor<5x3xf32> -> tensor<4x5xf32>
  return %c : tensor<4x5xf32>
}

// -----

// A rank-2 B broadcast over the batch: its gradient sums over the batch
// (attn.unbroadcast).
// CHECK-LABEL: func.func @broadcast_rhs_grad(
// CHECK-SAME: %arg0: tensor<2x4x3xf32>, %arg1: tensor<3x5xf32>, %arg2: tensor<2x4x5xf32>) -> (tensor<2x4x3xf32>, tensor<3x5xf32>) attributes {{[{]}}attn.gradient_of = @broadcast_rhs}
// CHECK-NEXT: %[[V0:[a-z0-9_]+]] = attn.matmul %arg2, %arg1 transpose_rhs : tensor<2x4x5xf32>, tensor<3x5xf32> -> tensor<2x4x3xf32>
// CHECK-NEXT: %[[V1:[a-z0-9_]+]] = attn.matmul %arg0, %arg2 transpose_lhs : tensor<2x4x3xf32>, tensor<2x4x5xf32> -> tensor<2x3x5xf32>
// CHECK-NEXT: %[[V2:[a-z0-9_]+]] = attn.unbroadcast %[[V1]] like %arg1 : tensor<2x3x5xf32>, tensor<3x5xf32> -> tensor<3x5xf32>
// CHECK-NEXT: return %[[V0]], %[[V2]] : tensor<2x4x3xf32>, tensor<3x5xf32>
func.func @broadcast_rhs(%a: tensor<2x4x3xf32>, %b: tensor<3x5xf32>) -> tensor<2x4x5xf32> {
  %c = attn.matmul %a, %b : tensor<2x4x3xf32>, tensor<3x5xf32> -> tensor<2x4x5xf32>
  return %c : tensor<2x4x5xf32>
}

// -----

// {attn.no_grad}: no result for %b, and its product is never built.
// CHECK-LABEL: func.func @no_grad_grad(
// CHECK-SAME: %arg0: tensor<2x4x3xf32>, %arg1: tensor<3x5xf32>, %arg2: tensor<2x4x5xf32>) -> tensor<2x4x3xf32> attributes {{[{]}}attn.gradient_of = @no_grad}
// CHECK-NEXT: %[[V0:[a-z0-9_]+]] = attn.matmul %arg2, %arg1 transpose_rhs : tensor<2x4x5xf32>, tensor<3x5xf32> -> tensor<2x4x3xf32>
// CHECK-NEXT: return %[[V0]] : tensor<2x4x3xf32>
func.func @no_grad(%a: tensor<2x4x3xf32>, %b: tensor<3x5xf32> {attn.no_grad}) -> tensor<2x4x5xf32> {
  %c = attn.matmul %a, %b : tensor<2x4x3xf32>, tensor<3x5xf32> -> tensor<2x4x5xf32>
  return %c : tensor<2x4x5xf32>
}

// -----

// An argument that reaches no result gets zeros; one returned as is gets
// the cotangent itself.
// CHECK-LABEL: func.func @unused_grad(
// CHECK-SAME: %arg0: tensor<4x3xf32>, %arg1: tensor<4x3xf32>, %arg2: tensor<4x3xf32>) -> (tensor<4x3xf32>, tensor<4x3xf32>) attributes {{[{]}}attn.gradient_of = @unused}
// CHECK-NEXT: %[[Vcst:[a-z0-9_]+]] = arith.constant dense<0.000000e+00> : tensor<1x1xf32>
// CHECK-NEXT: %[[V0:[a-z0-9_]+]] = attn.broadcast %[[Vcst]] like %arg1 : tensor<1x1xf32>, tensor<4x3xf32> -> tensor<4x3xf32>
// CHECK-NEXT: return %arg2, %[[V0]] : tensor<4x3xf32>, tensor<4x3xf32>
func.func @unused(%a: tensor<4x3xf32>, %b: tensor<4x3xf32>) -> tensor<4x3xf32> {
  return %a : tensor<4x3xf32>
}

// -----

// Two results: the cotangents of both reach %a and are added.
// CHECK-LABEL: func.func @two_results_grad(
// CHECK-SAME: %arg0: tensor<4x3xf32>, %arg1: tensor<3x3xf32>, %arg2: tensor<4x3xf32>, %arg3: tensor<4x3xf32>) -> (tensor<4x3xf32>, tensor<3x3xf32>) attributes {{[{]}}attn.gradient_of = @two_results}
// CHECK-NEXT: %[[V0:[a-z0-9_]+]] = attn.matmul %arg2, %arg1 transpose_rhs : tensor<4x3xf32>, tensor<3x3xf32> -> tensor<4x3xf32>
// CHECK-NEXT: %[[V1:[a-z0-9_]+]] = attn.matmul %arg0, %arg2 transpose_lhs : tensor<4x3xf32>, tensor<4x3xf32> -> tensor<3x3xf32>
// CHECK-NEXT: %[[V2:[a-z0-9_]+]] = attn.add %arg3, %[[V0]] : tensor<4x3xf32>, tensor<4x3xf32> -> tensor<4x3xf32>
// CHECK-NEXT: return %[[V2]], %[[V1]] : tensor<4x3xf32>, tensor<3x3xf32>
func.func @two_results(%a: tensor<4x3xf32>, %b: tensor<3x3xf32>) -> (tensor<4x3xf32>, tensor<4x3xf32>) {
  %c = attn.matmul %a, %b : tensor<4x3xf32>, tensor<3x3xf32> -> tensor<4x3xf32>
  return %c, %a : tensor<4x3xf32>, tensor<4x3xf32>
}
