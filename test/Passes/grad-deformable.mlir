// RUN: attn-opt %s --attn-grad=primitive-deformable=1 | FileCheck %s
//
// --attn-grad=primitive-deformable=1 differentiates multi-scale deformable
// attention in its primitive form (design §7; by default it is one
// attn.deformable_grad, grad-deformable-fused.mlir): the forward
// is recomputed in the primitive form of --attn-lower-deformable, and
// - each of the 4 corner gathers gives attn.scatter_pixels of its
//   cotangent into the value (corners outside a level get nothing);
// - the location gradient flows through the bilinear weights: the x and y
//   fractions' gradients go back into the (x, y) pair with
//   tensor.insert_slice, then through pixel = loc * size - 0.5 (an
//   attn.mul by the level sizes); the floor passes no gradient;
// - the attention weights get the samples weighted by dO (expand_shape's
//   adjoint is a collapse_shape).

// CHECK-LABEL: func.func @deformable_grad(
// CHECK-SAME: %[[VALUE:[a-z0-9_]+]]: tensor<1x30x2x4xf32>, %[[LOC:[a-z0-9_]+]]: tensor<1x3x2x2x2x2xf32>, %[[W:[a-z0-9_]+]]: tensor<1x3x2x2x2xf32>, %[[DO:[a-z0-9_]+]]: tensor<1x3x8xf32>) -> (tensor<1x30x2x4xf32>, tensor<1x3x2x2x2x2xf32>, tensor<1x3x2x2x2xf32>)
// CHECK: %[[SIZES:.+]] = arith.constant dense<{{\[}}{{\[}}[5.000000e+00, 4.000000e+00]], {{\[}}[5.000000e+00, 2.000000e+00]]]> : tensor<2x1x2xf32>
// CHECK: %[[PIXEL0:.+]] = attn.mul %[[LOC]], %[[SIZES]]
// CHECK: %[[BASE:.+]] = attn.floor
// CHECK: %[[DOCOL:.+]] = tensor.expand_shape %[[DO]] {{\[}}[0], [1], [2, 3, 4, 5]] output_shape [1, 3, 2, 1, 1, 4] : tensor<1x3x8xf32> into tensor<1x3x2x1x1x4xf32>
// CHECK: %[[DW:.+]] = tensor.collapse_shape %{{.+}} {{\[}}[0], [1], [2], [3], [4, 5]] : tensor<1x3x2x2x2x1xf32> into tensor<1x3x2x2x2xf32>
// CHECK-COUNT-4: attn.scatter_pixels %{{.+}}, %{{.+}} levels [4x5, 2x5] : tensor<1x3x2x2x2x4xf32>, tensor<1x3x2x2x2x2xf32> -> tensor<1x30x2x4xf32>
// CHECK-DAG: tensor.insert_slice %{{.+}} into %{{.+}}[0, 0, 0, 0, 0, 0] [1, 3, 2, 2, 2, 1] [1, 1, 1, 1, 1, 1] : tensor<1x3x2x2x2x1xf32> into tensor<1x3x2x2x2x2xf32>
// CHECK-DAG: tensor.insert_slice %{{.+}} into %{{.+}}[0, 0, 0, 0, 0, 1] [1, 3, 2, 2, 2, 1] [1, 1, 1, 1, 1, 1] : tensor<1x3x2x2x2x1xf32> into tensor<1x3x2x2x2x2xf32>
// CHECK: %[[DLOC:.+]] = attn.mul %{{.+}}, %[[SIZES]] : tensor<1x3x2x2x2x2xf32>, tensor<2x1x2xf32> -> tensor<1x3x2x2x2x2xf32>
// CHECK: return %{{.+}}, %[[DLOC]], %[[DW]]
// CHECK-NOT: attn.deformable
func.func @deformable(%value: tensor<1x30x2x4xf32>, %loc: tensor<1x3x2x2x2x2xf32>, %w: tensor<1x3x2x2x2xf32>) -> tensor<1x3x8xf32> {
  %o = attn.deformable %value, %loc, %w levels [4x5, 2x5]
      : tensor<1x30x2x4xf32>, tensor<1x3x2x2x2x2xf32>, tensor<1x3x2x2x2xf32> -> tensor<1x3x8xf32>
  return %o : tensor<1x3x8xf32>
}
