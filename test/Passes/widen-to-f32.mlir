// RUN: attn-opt %s --attn-widen-to-f32 | FileCheck %s
// RUN: attn-opt %s --attn-widen-to-f32 --attn-widen-to-f32 | FileCheck %s
//
// --attn-widen-to-f32: bf16 and f16 are storage types (docs/precision.md).
// Each attn op on them becomes the f32 op between one arith.extf per 16-bit
// value it reads (placed after the value's definition and shared by its
// users) and arith.truncf of each 16-bit result. A second run changes
// nothing (the second RUN line checks the same output).

// A fused op: operands widened, the result rounded once.
// CHECK-LABEL: func.func @sdpa_bf16(
// CHECK-SAME: %[[Q:.*]]: tensor<2x16x8xbf16>, %[[K:.*]]: tensor<2x16x8xbf16>, %[[V:.*]]: tensor<2x16x8xbf16>) -> tensor<2x16x8xbf16>
// CHECK-DAG: %[[QW:.*]] = arith.extf %[[Q]] : tensor<2x16x8xbf16> to tensor<2x16x8xf32>
// CHECK-DAG: %[[KW:.*]] = arith.extf %[[K]] : tensor<2x16x8xbf16> to tensor<2x16x8xf32>
// CHECK-DAG: %[[VW:.*]] = arith.extf %[[V]] : tensor<2x16x8xbf16> to tensor<2x16x8xf32>
// CHECK: %[[O:.*]] = attn.dot_product %[[QW]], %[[KW]], %[[VW]] norm [softmax over keys] scale 1.250000e-01 : tensor<2x16x8xf32>, tensor<2x16x8xf32>, tensor<2x16x8xf32> -> tensor<2x16x8xf32>
// CHECK-NEXT: %[[R:.*]] = arith.truncf %[[O]] : tensor<2x16x8xf32> to tensor<2x16x8xbf16>
// CHECK-NEXT: return %[[R]]
func.func @sdpa_bf16(%q: tensor<2x16x8xbf16>, %k: tensor<2x16x8xbf16>, %v: tensor<2x16x8xbf16>) -> tensor<2x16x8xbf16> {
  %o = attn.dot_product %q, %k, %v norm [softmax over keys] scale 0.125 : tensor<2x16x8xbf16>, tensor<2x16x8xbf16>, tensor<2x16x8xbf16> -> tensor<2x16x8xbf16>
  return %o : tensor<2x16x8xbf16>
}

// A declared f32 result of bf16 operands is not rounded.
// CHECK-LABEL: func.func @bf16_in_f32_out(
// CHECK: %[[P:.*]] = attn.matmul %{{.*}}, %{{.*}} transpose_rhs : tensor<16x8xf32>, tensor<16x8xf32> -> tensor<16x16xf32>
// CHECK-NEXT: return %[[P]] : tensor<16x16xf32>
func.func @bf16_in_f32_out(%a: tensor<16x8xbf16>) -> tensor<16x16xf32> {
  %p = attn.matmul %a, %a transpose_rhs : tensor<16x8xbf16>, tensor<16x8xbf16> -> tensor<16x16xf32>
  return %p : tensor<16x16xf32>
}

// A chain rounds at every declared f16 value: the scores are rounded to f16
// and widened again for the normalization; %a is widened once for both of
// its uses.
// CHECK-LABEL: func.func @chain_f16(
// CHECK-SAME: %[[A:.*]]: tensor<16x8xf16>
// CHECK-NEXT: %[[AW:.*]] = arith.extf %[[A]] : tensor<16x8xf16> to tensor<16x8xf32>
// CHECK-NEXT: %[[S:.*]] = attn.matmul %[[AW]], %[[AW]] transpose_rhs : tensor<16x8xf32>, tensor<16x8xf32> -> tensor<16x16xf32>
// CHECK-NEXT: %[[SR:.*]] = arith.truncf %[[S]] : tensor<16x16xf32> to tensor<16x16xf16>
// CHECK-NEXT: %[[SW:.*]] = arith.extf %[[SR]] : tensor<16x16xf16> to tensor<16x16xf32>
// CHECK-NEXT: %[[P:.*]] = attn.normalize softmax %[[SW]] dim 1 : tensor<16x16xf32>
// CHECK-NEXT: %[[PR:.*]] = arith.truncf %[[P]] : tensor<16x16xf32> to tensor<16x16xf16>
// CHECK-NEXT: return %[[PR]]
func.func @chain_f16(%a: tensor<16x8xf16>) -> tensor<16x16xf16> {
  %s = attn.matmul %a, %a transpose_rhs : tensor<16x8xf16>, tensor<16x8xf16> -> tensor<16x16xf16>
  %p = attn.normalize softmax %s dim 1 : tensor<16x16xf16>
  return %p : tensor<16x16xf16>
}

// f32 and f64 ops, and tensor ops on bf16 (views), are left alone.
// CHECK-LABEL: func.func @untouched(
// CHECK-NEXT: tensor.expand_shape
// CHECK-NEXT: attn.scale %{{.*}} by 2.000000e+00 : tensor<4x4xf32>
// CHECK-NOT: arith.
// CHECK: return
func.func @untouched(%a: tensor<16xbf16>, %b: tensor<4x4xf32>) -> (tensor<4x4xbf16>, tensor<4x4xf32>) {
  %e = tensor.expand_shape %a [[0, 1]] output_shape [4, 4] : tensor<16xbf16> into tensor<4x4xbf16>
  %s = attn.scale %b by 2.0 : tensor<4x4xf32>
  return %e, %s : tensor<4x4xbf16>, tensor<4x4xf32>
}
