// RUN: attn-opt %s -split-input-file --attn-grad | FileCheck %s
//
// --attn-grad on functions with no attn op: their gradients still need
// attn ops (found by the spec fuzzer, test/fuzz: the pass crashed when the
// input had loaded no attn dialect).

// An unused argument gets zeros.
// CHECK-LABEL: func.func @unused_grad(
// CHECK-SAME: %arg0: tensor<4x3xf32>, %arg1: tensor<4x3xf32>, %arg2: tensor<4x3xf32>)
// CHECK: %[[ZERO:.+]] = arith.constant dense<0.000000e+00> : tensor<1x1xf32>
// CHECK: %[[ZEROS:.+]] = attn.broadcast %[[ZERO]] like %arg1
// CHECK: return %arg2, %[[ZEROS]]
func.func @unused(%a: tensor<4x3xf32>, %b: tensor<4x3xf32>) -> tensor<4x3xf32> {
  return %a : tensor<4x3xf32>
}

// -----

// An argument returned twice gets the sum of both cotangents.
// CHECK-LABEL: func.func @twice_grad(
// CHECK: %[[SUM:.+]] = attn.add %arg1, %arg2
// CHECK: return %[[SUM]]
func.func @twice(%a: tensor<4x3xf32>) -> (tensor<4x3xf32>, tensor<4x3xf32>) {
  return %a, %a : tensor<4x3xf32>, tensor<4x3xf32>
}
