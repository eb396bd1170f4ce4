// RUN: attn-opt %s -split-input-file --attn-grad | FileCheck %s
//
// --attn-grad writes the gradient of attn.deformable as one fused
// attn.deformable_grad (design §7), not as its primitive form
// (grad-deformable.mlir): no gathers, scatters or level constants, and the
// op keeps the levels and align_corners of the forward.

// CHECK-LABEL: func.func @deformable_grad(
// CHECK-SAME: %[[VALUE:[a-z0-9_]+]]: tensor<1x30x2x4xf32>, %[[LOC:[a-z0-9_]+]]: tensor<1x3x2x2x2x2xf32>, %[[W:[a-z0-9_]+]]: tensor<1x3x2x2x2xf32>, %[[DO:[a-z0-9_]+]]: tensor<1x3x8xf32>)
// CHECK-NOT: attn.scatter_pixels
// CHECK: %[[DV:[a-z0-9_]+]], %[[DLOC:[a-z0-9_]+]], %[[DW:[a-z0-9_]+]] = attn.deformable_grad %[[VALUE]], %[[LOC]], %[[W]], %[[DO]] levels [4x5, 2x5] : tensor<1x30x2x4xf32>, tensor<1x3x2x2x2x2xf32>, tensor<1x3x2x2x2xf32>, tensor<1x3x8xf32> -> tensor<1x30x2x4xf32>, tensor<1x3x2x2x2x2xf32>, tensor<1x3x2x2x2xf32>
// CHECK-NOT: attn.scatter_pixels
// CHECK-NOT: attn.gather_pixels
// CHECK: return %[[DV]], %[[DLOC]], %[[DW]]
func.func @deformable(%value: tensor<1x30x2x4xf32>, %loc: tensor<1x3x2x2x2x2xf32>, %w: tensor<1x3x2x2x2xf32>) -> tensor<1x3x8xf32> {
  %o = attn.deformable %value, %loc, %w levels [4x5, 2x5]
      : tensor<1x30x2x4xf32>, tensor<1x3x2x2x2x2xf32>, tensor<1x3x2x2x2xf32> -> tensor<1x3x8xf32>
  return %o : tensor<1x3x8xf32>
}

// -----

// Dynamic sizes (which the primitive form cannot take) and align_corners;
// the location input is computed, so its gradient flows on through the
// attn.mul (a scale by the level factor 2).
// CHECK-LABEL: func.func @dynamic_grad(
// CHECK-SAME: %[[VALUE:[a-z0-9_]+]]: tensor<?x30x2x?xf32>, %[[LOC:[a-z0-9_]+]]: tensor<?x?x2x2x?x2xf32>, %[[W:[a-z0-9_]+]]: tensor<?x?x2x2x?xf32>, %[[DO:[a-z0-9_]+]]: tensor<?x?x?xf32>)
// CHECK: %[[SCALED:.+]] = attn.mul %[[LOC]], %[[TWO:[a-z0-9_]+]]
// CHECK: %[[DV:[a-z0-9_]+]], %[[DLOC:[a-z0-9_]+]], %[[DW:[a-z0-9_]+]] = attn.deformable_grad %[[VALUE]], %[[SCALED]], %[[W]], %[[DO]] levels [4x5, 2x5] align_corners : tensor<?x30x2x?xf32>, tensor<?x?x2x2x?x2xf32>, tensor<?x?x2x2x?xf32>, tensor<?x?x?xf32> -> tensor<?x30x2x?xf32>, tensor<?x?x2x2x?x2xf32>, tensor<?x?x2x2x?xf32>
// CHECK: %[[DL:.+]] = attn.mul %[[DLOC]], %[[TWO]]
// CHECK: return %[[DV]], %{{.+}}, %[[DW]]
func.func @dynamic(%value: tensor<?x30x2x?xf32>, %loc: tensor<?x?x2x2x?x2xf32>, %w: tensor<?x?x2x2x?xf32>) -> tensor<?x?x?xf32> {
  %two = arith.constant dense<2.000000e+00> : tensor<1xf32>
  %scaled = attn.mul %loc, %two : tensor<?x?x2x2x?x2xf32>, tensor<1xf32> -> tensor<?x?x2x2x?x2xf32>
  %o = attn.deformable %value, %scaled, %w levels [4x5, 2x5] align_corners
      : tensor<?x30x2x?xf32>, tensor<?x?x2x2x?x2xf32>, tensor<?x?x2x2x?xf32> -> tensor<?x?x?xf32>
  return %o : tensor<?x?x?xf32>
}

// -----

// f16 weights whose levels dim is `?`: attn.deformable_grad infers it (1
// level), so its dweights is more static than the argument; the rounding to
// f16 keeps the inferred shape and a cast restores the argument's type
// (found by the differential fuzzer, test/fuzz: the truncf had to change
// the shape, which arith.truncf does not verify).
// CHECK-LABEL: func.func @f16_dynamic_levels_grad(
// CHECK: %[[DV:.+]], %[[DLOC:.+]], %[[DW:.+]] = attn.deformable_grad
// CHECK-SAME: -> tensor<2x25x3x?xf32>, tensor<2x1x3x1x4x2xf32>, tensor<2x1x3x1x4xf32>
// CHECK: %[[W16:.+]] = arith.truncf %[[DW]] : tensor<2x1x3x1x4xf32> to tensor<2x1x3x1x4xf16>
// CHECK: %[[CAST:.+]] = tensor.cast %[[W16]] : tensor<2x1x3x1x4xf16> to tensor<2x1x3x?x4xf16>
// CHECK: return {{.*}}, %[[CAST]]
func.func @f16_dynamic_levels(%value: tensor<2x25x3x?xf16>, %loc: tensor<2x1x3x1x4x2xf16>, %w: tensor<2x1x3x?x4xf16>) -> tensor<2x1x?xf16> {
  %o = attn.deformable %value, %loc, %w levels [5x5] align_corners
      : tensor<2x25x3x?xf16>, tensor<2x1x3x1x4x2xf16>, tensor<2x1x3x?x4xf16> -> tensor<2x1x?xf16>
  return %o : tensor<2x1x?xf16>
}
