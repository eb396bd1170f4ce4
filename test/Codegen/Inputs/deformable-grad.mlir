// Deformable attention gradients for codegen (deformable-grad*.test): the
// specs of deformable.mlir serve too; these are the cases it lacks.

// The corner-case inputs of deformable-corners.py (levels 5x7 and 3x2,
// N = 2, Lq = 7, M = 3, P = 3, D = 5) with the locations marked no_grad:
// at a location exactly on a pixel center the location gradient is
// one-sided, and the f32 kernel (which may fuse loc * W - 0.5 into one
// FMA) and the f64 reference can round it into neighbouring cells. The
// value and weight gradients are continuous there; the f64 cases below
// check the location gradient on the same inputs.
func.func @corners_no_loc(%value: tensor<2x41x3x5xf32>,
                          %loc: tensor<2x7x3x2x3x2xf32> {attn.no_grad},
                          %w: tensor<2x7x3x2x3xf32>) -> tensor<2x7x15xf32> {
  %o = attn.deformable %value, %loc, %w levels [5x7, 3x2]
      : tensor<2x41x3x5xf32>, tensor<2x7x3x2x3x2xf32>, tensor<2x7x3x2x3xf32>
      -> tensor<2x7x15xf32>
  return %o : tensor<2x7x15xf32>
}

func.func @corners_no_loc_ac(%value: tensor<2x41x3x5xf32>,
                             %loc: tensor<2x7x3x2x3x2xf32> {attn.no_grad},
                             %w: tensor<2x7x3x2x3xf32>) -> tensor<2x7x15xf32> {
  %o = attn.deformable %value, %loc, %w levels [5x7, 3x2] align_corners
      : tensor<2x41x3x5xf32>, tensor<2x7x3x2x3x2xf32>, tensor<2x7x3x2x3xf32>
      -> tensor<2x7x15xf32>
  return %o : tensor<2x7x15xf32>
}

// The half-pixel convention in f64 (deformable.mlir's f64 spec has
// align_corners).
func.func @corners_f64(%value: tensor<2x41x3x5xf64>,
                       %loc: tensor<2x7x3x2x3x2xf64>,
                       %w: tensor<2x7x3x2x3xf64>) -> tensor<2x7x15xf64> {
  %o = attn.deformable %value, %loc, %w levels [5x7, 3x2]
      : tensor<2x41x3x5xf64>, tensor<2x7x3x2x3x2xf64>, tensor<2x7x3x2x3xf64>
      -> tensor<2x7x15xf64>
  return %o : tensor<2x7x15xf64>
}

// Deformable DETR's head shape at 4 levels with M = 8 heads, P = 4 points
// and D = 64 (the dots' vector path, two AVX-512 vectors per corner), Lq =
// 53 (not a multiple of the 16 queries per task), batch 2.
func.func @detr_d64(%value: tensor<2x206x8x64xf32>,
                    %loc: tensor<2x53x8x4x4x2xf32>,
                    %w: tensor<2x53x8x4x4xf32>) -> tensor<2x53x512xf32> {
  %o = attn.deformable %value, %loc, %w levels [10x15, 5x8, 3x4, 2x2]
      : tensor<2x206x8x64xf32>, tensor<2x53x8x4x4x2xf32>, tensor<2x53x8x4x4xf32>
      -> tensor<2x53x512xf32>
  return %o : tensor<2x53x512xf32>
}

// One query, one head, one level, one point, D = 16 (one vector).
func.func @single(%value: tensor<1x12x1x16xf32>,
                  %loc: tensor<1x1x1x1x1x2xf32>,
                  %w: tensor<1x1x1x1x1xf32>) -> tensor<1x1x16xf32> {
  %o = attn.deformable %value, %loc, %w levels [3x4]
      : tensor<1x12x1x16xf32>, tensor<1x1x1x1x1x2xf32>, tensor<1x1x1x1x1xf32>
      -> tensor<1x1x16xf32>
  return %o : tensor<1x1x16xf32>
}

// Locations computed from a parameter (an offset network's output, say):
// the location gradient flows on through attn.mul and attn.add.
func.func @offsets(%value: tensor<1x41x2x8xf32>,
                   %offsets: tensor<1x9x2x2x3x2xf32>,
                   %w: tensor<1x9x2x2x3xf32>) -> tensor<1x9x16xf32> {
  %s = arith.constant dense<1.250000e+00> : tensor<1xf32>
  %b = arith.constant dense<-1.250000e-01> : tensor<1xf32>
  %scaled = attn.mul %offsets, %s : tensor<1x9x2x2x3x2xf32>, tensor<1xf32> -> tensor<1x9x2x2x3x2xf32>
  %loc = attn.add %scaled, %b : tensor<1x9x2x2x3x2xf32>, tensor<1xf32> -> tensor<1x9x2x2x3x2xf32>
  %o = attn.deformable %value, %loc, %w levels [5x7, 3x2]
      : tensor<1x41x2x8xf32>, tensor<1x9x2x2x3x2xf32>, tensor<1x9x2x2x3xf32>
      -> tensor<1x9x16xf32>
  return %o : tensor<1x9x16xf32>
}
