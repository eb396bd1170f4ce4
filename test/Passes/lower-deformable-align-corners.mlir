// RUN: attn-opt %s -split-input-file --attn-lower-deformable | FileCheck %s

// With align_corners (DAT-style sampling) the pixel is (x (W - 1), y (H - 1)):
// the per-level sizes are (W - 1, H - 1) and there is no -0.5 offset; the
// rest of the lowering (floor, fraction, corners, sums) is the same.

// Levels 5x7 and 1x1: a 1x1 level has size (0, 0), so every location maps
// to its only pixel.
// CHECK-LABEL: func.func @align_corners
// CHECK-SAME: (%[[VALUE:[a-z0-9_]+]]: tensor<1x36x2x4xf32>, %[[LOC:[a-z0-9_]+]]: tensor<1x3x2x2x2x2xf32>, %[[W:[a-z0-9_]+]]: tensor<1x3x2x2x2xf32>)
// CHECK: %[[SIZES:.+]] = arith.constant dense<{{\[}}{{\[}}[6.000000e+00, 4.000000e+00]], {{\[}}[0.000000e+00, 0.000000e+00]]]> : tensor<2x1x2xf32>
// CHECK-NEXT: %[[PIXEL:.+]] = attn.mul %[[LOC]], %[[SIZES]] : tensor<1x3x2x2x2x2xf32>, tensor<2x1x2xf32> -> tensor<1x3x2x2x2x2xf32>
// CHECK-NEXT: %[[BASE:.+]] = attn.floor %[[PIXEL]] : tensor<1x3x2x2x2x2xf32>
// CHECK-NEXT: %[[NEGBASE:.+]] = attn.scale %[[BASE]] by -1.000000e+00
// CHECK-NEXT: %[[FRAC:.+]] = attn.add %[[PIXEL]], %[[NEGBASE]]
// CHECK: %[[G00:.+]] = attn.gather_pixels %[[VALUE]], %[[BASE]] levels [5x7, 1x1] : tensor<1x36x2x4xf32>, tensor<1x3x2x2x2x2xf32> -> tensor<1x3x2x2x2x4xf32>
// CHECK-COUNT-3: attn.gather_pixels %[[VALUE]], %{{.+}} levels [5x7, 1x1]
// CHECK: %[[WCOL:.+]] = tensor.expand_shape %[[W]]
// CHECK: %[[OUT:.+]] = tensor.collapse_shape %{{.+}} {{\[}}[0], [1], [2, 3, 4, 5]] : tensor<1x3x2x1x1x4xf32> into tensor<1x3x8xf32>
// CHECK-NEXT: return %[[OUT]]
// CHECK-NOT: attn.deformable
func.func @align_corners(%value: tensor<1x36x2x4xf32>, %loc: tensor<1x3x2x2x2x2xf32>,
                         %w: tensor<1x3x2x2x2xf32>) -> tensor<1x3x8xf32> {
  %o = attn.deformable %value, %loc, %w levels [5x7, 1x1] align_corners
      : tensor<1x36x2x4xf32>, tensor<1x3x2x2x2x2xf32>, tensor<1x3x2x2x2xf32> -> tensor<1x3x8xf32>
  return %o : tensor<1x3x8xf32>
}

// -----

// Without align_corners the same op gets the -0.5 offset (for contrast).
// CHECK-LABEL: func.func @half_pixel
// CHECK: arith.constant dense<{{\[}}{{\[}}[7.000000e+00, 5.000000e+00]], {{\[}}[1.000000e+00, 1.000000e+00]]]> : tensor<2x1x2xf32>
// CHECK-NEXT: attn.mul
// CHECK-NEXT: arith.constant dense<-5.000000e-01> : tensor<1xf32>
// CHECK-NEXT: attn.add
// CHECK-NEXT: attn.floor
func.func @half_pixel(%value: tensor<1x36x2x4xf32>, %loc: tensor<1x3x2x2x2x2xf32>,
                      %w: tensor<1x3x2x2x2xf32>) -> tensor<1x3x8xf32> {
  %o = attn.deformable %value, %loc, %w levels [5x7, 1x1]
      : tensor<1x36x2x4xf32>, tensor<1x3x2x2x2x2xf32>, tensor<1x3x2x2x2xf32> -> tensor<1x3x8xf32>
  return %o : tensor<1x3x8xf32>
}
