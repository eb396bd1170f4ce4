// RUN: attn-opt %s --attn-grad | FileCheck %s
//
// --attn-grad: the gradient @f_grad(args, dResults) -> dArgs of each
// function, built from the adjoint rules of its ops (design §7,
// docs/training.md). Every CHECK block below is one @f_grad, in full.

// softmax: dx = y (dy - sum(dy y)), the sum along the normalized dim.
// CHECK-LABEL: func.func @softmax_grad(
// CHECK-SAME: %arg0: tensor<4x6xf32>, %arg1: tensor<4x6xf32>) -> tensor<4x6xf32> attributes {{[{]}}attn.gradient_of = @softmax}
// CHECK-NEXT: %[[V0:[a-z0-9_]+]] = attn.normalize softmax %arg0 dim 1 : tensor<4x6xf32>
// CHECK-NEXT: %[[V1:[a-z0-9_]+]] = attn.mul %arg1, %[[V0]] : tensor<4x6xf32>, tensor<4x6xf32> -> tensor<4x6xf32>
// CHECK-NEXT: %[[V2:[a-z0-9_]+]] = attn.reduce_sum %[[V1]] dim 1 : tensor<4x6xf32> -> tensor<4x1xf32>
// CHECK-NEXT: %[[V3:[a-z0-9_]+]] = attn.scale %[[V2]] by -1.000000e+00 : tensor<4x1xf32>
// CHECK-NEXT: %[[V4:[a-z0-9_]+]] = attn.add %arg1, %[[V3]] : tensor<4x6xf32>, tensor<4x1xf32> -> tensor<4x6xf32>
// CHECK-NEXT: %[[V5:[a-z0-9_]+]] = attn.mul %[[V0]], %[[V4]] : tensor<4x6xf32>, tensor<4x6xf32> -> tensor<4x6xf32>
// CHECK-NEXT: return %[[V5]] : tensor<4x6xf32>
func.func @softmax(%x: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %y = attn.normalize softmax %x dim 1 : tensor<4x6xf32>
  return %y : tensor<4x6xf32>
}

// -----

// sum: y = x / (eps + s), dx = (dy - sum(dy y)) / (eps + s).
// CHECK-LABEL: func.func @sum_grad(
// CHECK-SAME: %arg0: tensor<4x6xf32>, %arg1: tensor<4x6xf32>) -> tensor<4x6xf32> attributes {{[{]}}attn.gradient_of = @sum}
// CHECK-NEXT: %[[V0:[a-z0-9_]+]] = attn.normalize sum %arg0 dim 0 eps 1.000000e-09 : tensor<4x6xf32>
// CHECK-NEXT: %[[V1:[a-z0-9_]+]] = attn.reduce_sum %arg0 dim 0 : tensor<4x6xf32> -> tensor<1x6xf32>
// CHECK-NEXT: %[[V2:[a-z0-9_]+]] = attn.mul %arg1, %[[V0]] : tensor<4x6xf32>, tensor<4x6xf32> -> tensor<4x6xf32>
// CHECK-NEXT: %[[V3:[a-z0-9_]+]] = attn.reduce_sum %[[V2]] dim 0 : tensor<4x6xf32> -> tensor<1x6xf32>
// CHECK-NEXT: %[[V4:[a-z0-9_]+]] = attn.scale %[[V3]] by -1.000000e+00 : tensor<1x6xf32>
// CHECK-NEXT: %[[V5:[a-z0-9_]+]] = attn.add %arg1, %[[V4]] : tensor<4x6xf32>, tensor<1x6xf32> -> tensor<4x6xf32>
// CHECK-NEXT: %[[V6:[a-z0-9_]+]] = attn.div %[[V5]], %[[V1]] eps 1.000000e-09 : tensor<4x6xf32>, tensor<1x6xf32> -> tensor<4x6xf32>
// CHECK-NEXT: return %[[V6]] : tensor<4x6xf32>
func.func @sum(%x: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %y = attn.normalize sum %x dim 0 eps 1.000000e-09 : tensor<4x6xf32>
  return %y : tensor<4x6xf32>
}

// -----

// count: linear, dx = count(dy), also for a dynamic length.
// CHECK-LABEL: func.func @count_grad(
// CHECK-SAME: %arg0: tensor<4x?xf32>, %arg1: tensor<4x?xf32>) -> tensor<4x?xf32> attributes {{[{]}}attn.gradient_of = @count}
// CHECK-NEXT: %[[V0:[a-z0-9_]+]] = attn.normalize count %arg1 dim 1 : tensor<4x?xf32>
// CHECK-NEXT: return %[[V0]] : tensor<4x?xf32>
func.func @count(%x: tensor<4x?xf32>) -> tensor<4x?xf32> {
  %y = attn.normalize count %x dim 1 : tensor<4x?xf32>
  return %y : tensor<4x?xf32>
}

// -----

// softmax_from_lse: y = exp(x - lse), dx = dy y, dlse = -sum over dim of
// dy y (the op's own result read back, nothing recomputed).
// CHECK-LABEL: func.func @from_lse_grad(
// CHECK-SAME: %arg0: tensor<4x6xf32>, %arg1: tensor<1x6xf32>, %arg2: tensor<4x6xf32>) -> (tensor<4x6xf32>, tensor<1x6xf32>) attributes {{[{]}}attn.gradient_of = @from_lse}
// CHECK-NEXT: %[[Y:[a-z0-9_]+]] = attn.softmax_from_lse %arg0, %arg1 dim 0 : tensor<4x6xf32>, tensor<1x6xf32>
// CHECK-NEXT: %[[GY:[a-z0-9_]+]] = attn.mul %arg2, %[[Y]] : tensor<4x6xf32>, tensor<4x6xf32> -> tensor<4x6xf32>
// CHECK-NEXT: %[[S:[a-z0-9_]+]] = attn.reduce_sum %[[GY]] dim 0 : tensor<4x6xf32> -> tensor<1x6xf32>
// CHECK-NEXT: %[[NS:[a-z0-9_]+]] = attn.scale %[[S]] by -1.000000e+00 : tensor<1x6xf32>
// CHECK-NEXT: return %[[GY]], %[[NS]] : tensor<4x6xf32>, tensor<1x6xf32>
func.func @from_lse(%x: tensor<4x6xf32>, %lse: tensor<1x6xf32>) -> tensor<4x6xf32> {
  %y = attn.softmax_from_lse %x, %lse dim 0 : tensor<4x6xf32>, tensor<1x6xf32>
  return %y : tensor<4x6xf32>
}
