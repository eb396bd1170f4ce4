// RUN: attn-opt %s -split-input-file --attn-lower-deformable | FileCheck %s
// RUN: attn-opt %s -split-input-file --attn-lower-deformable | attn-opt -split-input-file --attn-cost -mlir-print-op-on-diagnostic=false 2>&1 >/dev/null | FileCheck %s --check-prefix=COST

// The cost model knows the new primitives (second RUN line): attn.floor is
// one FLOP per element into a new tensor (its input has other users);
// attn.gather_pixels copies 2x5x3x2x4x8 = 1920 values, no arithmetic.
// COST: remark: cost: macs = 0, flops = 480, floats = 480
// COST-NEXT: attn.floor
// COST: remark: cost: macs = 0, flops = 0, floats = 1920
// COST-NEXT: attn.gather_pixels

// Multi-scale deformable attention lowered to primitives (align_corners
// false): pixel = loc * (W_l, H_l) - 0.5, floor and fraction, the 4 corner
// gathers (0 outside the level) weighted bilinearly, times the attention
// weights, summed over points then levels, reshaped to (N, Lq, M*D). Batch
// (N = 2) and heads (M = 3) stay leading dims throughout.

// Two levels of unequal shapes, 4x6 and 2x3: the per-level sizes are (W, H).
// CHECK-LABEL: func.func @two_levels
// CHECK-SAME: (%[[VALUE:[a-z0-9_]+]]: tensor<2x30x3x8xf32>, %[[LOC:[a-z0-9_]+]]: tensor<2x5x3x2x4x2xf32>, %[[W:[a-z0-9_]+]]: tensor<2x5x3x2x4xf32>)
// CHECK: %[[SIZES:.+]] = arith.constant dense<{{\[}}{{\[}}[6.000000e+00, 4.000000e+00]], {{\[}}[3.000000e+00, 2.000000e+00]]]> : tensor<2x1x2xf32>
// CHECK-NEXT: %[[SCALED:.+]] = attn.mul %[[LOC]], %[[SIZES]] : tensor<2x5x3x2x4x2xf32>, tensor<2x1x2xf32> -> tensor<2x5x3x2x4x2xf32>
// CHECK-NEXT: %[[HALF:.+]] = arith.constant dense<-5.000000e-01> : tensor<1xf32>
// CHECK-NEXT: %[[PIXEL:.+]] = attn.add %[[SCALED]], %[[HALF]] : tensor<2x5x3x2x4x2xf32>, tensor<1xf32> -> tensor<2x5x3x2x4x2xf32>
// CHECK-NEXT: %[[BASE:.+]] = attn.floor %[[PIXEL]] : tensor<2x5x3x2x4x2xf32>
// CHECK-NEXT: %[[NEGBASE:.+]] = attn.scale %[[BASE]] by -1.000000e+00
// CHECK-NEXT: %[[FRAC:.+]] = attn.add %[[PIXEL]], %[[NEGBASE]]
// CHECK-NEXT: %[[ONE:.+]] = arith.constant dense<1.000000e+00> : tensor<1xf32>
// CHECK-NEXT: %[[FX:.+]] = tensor.extract_slice %[[FRAC]][0, 0, 0, 0, 0, 0] [2, 5, 3, 2, 4, 1] [1, 1, 1, 1, 1, 1] : tensor<2x5x3x2x4x2xf32> to tensor<2x5x3x2x4x1xf32>
// CHECK-NEXT: %[[FY:.+]] = tensor.extract_slice %[[FRAC]][0, 0, 0, 0, 0, 1] [2, 5, 3, 2, 4, 1] [1, 1, 1, 1, 1, 1] : tensor<2x5x3x2x4x2xf32> to tensor<2x5x3x2x4x1xf32>
// CHECK-NEXT: %[[NEGFX:.+]] = attn.scale %[[FX]] by -1.000000e+00
// CHECK-NEXT: %[[GX:.+]] = attn.add %[[NEGFX]], %[[ONE]]
// CHECK-NEXT: %[[NEGFY:.+]] = attn.scale %[[FY]] by -1.000000e+00
// CHECK-NEXT: %[[GY:.+]] = attn.add %[[NEGFY]], %[[ONE]]
// Corner (0, 0): weight (1 - fx) (1 - fy).
// CHECK-NEXT: %[[G00:.+]] = attn.gather_pixels %[[VALUE]], %[[BASE]] levels [4x6, 2x3] : tensor<2x30x3x8xf32>, tensor<2x5x3x2x4x2xf32> -> tensor<2x5x3x2x4x8xf32>
// CHECK-NEXT: %[[W00:.+]] = attn.mul %[[GX]], %[[GY]]
// CHECK-NEXT: %[[T00:.+]] = attn.mul %[[G00]], %[[W00]] : tensor<2x5x3x2x4x8xf32>, tensor<2x5x3x2x4x1xf32> -> tensor<2x5x3x2x4x8xf32>
// Corner (1, 0): weight fx (1 - fy).
// CHECK-NEXT: %[[D10:.+]] = arith.constant dense<[1.000000e+00, 0.000000e+00]> : tensor<2xf32>
// CHECK-NEXT: %[[C10:.+]] = attn.add %[[BASE]], %[[D10]]
// CHECK-NEXT: %[[G10:.+]] = attn.gather_pixels %[[VALUE]], %[[C10]] levels [4x6, 2x3]
// CHECK-NEXT: %[[W10:.+]] = attn.mul %[[FX]], %[[GY]]
// CHECK-NEXT: %[[T10:.+]] = attn.mul %[[G10]], %[[W10]]
// CHECK-NEXT: %[[S1:.+]] = attn.add %[[T00]], %[[T10]]
// Corner (0, 1): weight (1 - fx) fy.
// CHECK-NEXT: %[[D01:.+]] = arith.constant dense<[0.000000e+00, 1.000000e+00]> : tensor<2xf32>
// CHECK-NEXT: %[[C01:.+]] = attn.add %[[BASE]], %[[D01]]
// CHECK-NEXT: %[[G01:.+]] = attn.gather_pixels %[[VALUE]], %[[C01]] levels [4x6, 2x3]
// CHECK-NEXT: %[[W01:.+]] = attn.mul %[[GX]], %[[FY]]
// CHECK-NEXT: %[[T01:.+]] = attn.mul %[[G01]], %[[W01]]
// CHECK-NEXT: %[[S2:.+]] = attn.add %[[S1]], %[[T01]]
// Corner (1, 1): weight fx fy.
// CHECK-NEXT: %[[D11:.+]] = arith.constant dense<1.000000e+00> : tensor<2xf32>
// CHECK-NEXT: %[[C11:.+]] = attn.add %[[BASE]], %[[D11]]
// CHECK-NEXT: %[[G11:.+]] = attn.gather_pixels %[[VALUE]], %[[C11]] levels [4x6, 2x3]
// CHECK-NEXT: %[[W11:.+]] = attn.mul %[[FX]], %[[FY]]
// CHECK-NEXT: %[[T11:.+]] = attn.mul %[[G11]], %[[W11]]
// CHECK-NEXT: %[[SAMPLES:.+]] = attn.add %[[S2]], %[[T11]] : tensor<2x5x3x2x4x8xf32>, tensor<2x5x3x2x4x8xf32> -> tensor<2x5x3x2x4x8xf32>
// Attention weights, then the sums over points (dim 4) and levels (dim 3).
// CHECK-NEXT: %[[WCOL:.+]] = tensor.expand_shape %[[W]] {{\[}}[0], [1], [2], [3], [4, 5]] output_shape [2, 5, 3, 2, 4, 1] : tensor<2x5x3x2x4xf32> into tensor<2x5x3x2x4x1xf32>
// CHECK-NEXT: %[[WEIGHTED:.+]] = attn.mul %[[SAMPLES]], %[[WCOL]] : tensor<2x5x3x2x4x8xf32>, tensor<2x5x3x2x4x1xf32> -> tensor<2x5x3x2x4x8xf32>
// CHECK-NEXT: %[[PERLEVEL:.+]] = attn.reduce_sum %[[WEIGHTED]] dim 4 : tensor<2x5x3x2x4x8xf32> -> tensor<2x5x3x2x1x8xf32>
// CHECK-NEXT: %[[PERHEAD:.+]] = attn.reduce_sum %[[PERLEVEL]] dim 3 : tensor<2x5x3x2x1x8xf32> -> tensor<2x5x3x1x1x8xf32>
// CHECK-NEXT: %[[OUT:.+]] = tensor.collapse_shape %[[PERHEAD]] {{\[}}[0], [1], [2, 3, 4, 5]] : tensor<2x5x3x1x1x8xf32> into tensor<2x5x24xf32>
// CHECK-NEXT: return %[[OUT]] : tensor<2x5x24xf32>
// CHECK-NOT: attn.deformable
func.func @two_levels(%value: tensor<2x30x3x8xf32>, %loc: tensor<2x5x3x2x4x2xf32>,
                      %w: tensor<2x5x3x2x4xf32>) -> tensor<2x5x24xf32> {
  %o = attn.deformable %value, %loc, %w levels [4x6, 2x3]
      : tensor<2x30x3x8xf32>, tensor<2x5x3x2x4x2xf32>, tensor<2x5x3x2x4xf32> -> tensor<2x5x24xf32>
  return %o : tensor<2x5x24xf32>
}

// -----

// f64 specs get f64 constants.
// CHECK-LABEL: func.func @double_precision
// CHECK: %[[SIZES:.+]] = arith.constant dense<5.000000e+00> : tensor<1x1x2xf64>
// CHECK: attn.add %{{.+}}, %{{.+}} : tensor<1x2x1x1x1x2xf64>, tensor<1xf64> -> tensor<1x2x1x1x1x2xf64>
// CHECK: %[[OUT:.+]] = tensor.collapse_shape %{{.+}} {{\[}}[0], [1], [2, 3, 4, 5]] : tensor<1x2x1x1x1x3xf64> into tensor<1x2x3xf64>
// CHECK-NEXT: return %[[OUT]]
func.func @double_precision(%value: tensor<1x25x1x3xf64>, %loc: tensor<1x2x1x1x1x2xf64>,
                            %w: tensor<1x2x1x1x1xf64>) -> tensor<1x2x3xf64> {
  %o = attn.deformable %value, %loc, %w levels [5x5]
      : tensor<1x25x1x3xf64>, tensor<1x2x1x1x1x2xf64>, tensor<1x2x1x1x1xf64> -> tensor<1x2x3xf64>
  return %o : tensor<1x2x3xf64>
}

// -----

// Dynamic sizes are left alone (the weights' expand_shape needs static
// shapes in the evaluator and codegen).
// CHECK-LABEL: func.func @dynamic_queries
// CHECK-SAME: (%[[VALUE:[a-z0-9_]+]]: tensor<1x16x2x4xf32>, %[[LOC:[a-z0-9_]+]]: tensor<1x?x2x1x2x2xf32>, %[[W:[a-z0-9_]+]]: tensor<1x?x2x1x2xf32>)
// CHECK-NEXT: %[[O:.+]] = attn.deformable %[[VALUE]], %[[LOC]], %[[W]] levels [4x4]
// CHECK-NEXT: return %[[O]]
func.func @dynamic_queries(%value: tensor<1x16x2x4xf32>, %loc: tensor<1x?x2x1x2x2xf32>,
                           %w: tensor<1x?x2x1x2xf32>) -> tensor<1x?x8xf32> {
  %o = attn.deformable %value, %loc, %w levels [4x4]
      : tensor<1x16x2x4xf32>, tensor<1x?x2x1x2x2xf32>, tensor<1x?x2x1x2xf32> -> tensor<1x?x8xf32>
  return %o : tensor<1x?x8xf32>
}
