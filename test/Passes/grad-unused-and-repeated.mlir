// RUN: attn-opt %s -split-input-file --attn-grad | FileCheck %s
//
// --attn-grad for arguments that reach no result (zeros) or reach it twice
// (a sum of cotangents), which need ops the function itself may lack (found
// by the spec fuzzer, test/fuzz: without any attn op in the input the pass
// crashed, its attn dialect not loaded).

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

// -----

// An unused scalar (rank 0) gets a zero constant of its type: no shape
// broadcasts to a scalar (the spec fuzzer found the attn.broadcast whose
// type could not be inferred, a fatal error).
// CHECK-LABEL: func.func @unused_scalar_grad(
// CHECK: %[[ZERO:.+]] = arith.constant dense<0.000000e+00> : tensor<f32>
// CHECK: return %{{.+}}, %[[ZERO]] : tensor<4x3xf32>, tensor<f32>
func.func @unused_scalar(%a: tensor<4x3xf32>, %s: tensor<f32>) -> tensor<4x3xf32> {
  %o = attn.scale %a by 2.0 : tensor<4x3xf32>
  return %o : tensor<4x3xf32>
}
