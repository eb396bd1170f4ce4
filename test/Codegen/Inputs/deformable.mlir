// Deformable attention cases for codegen (deformable-*.test): every kernel
// is checked against the reference runtime with attn-run --check.

// Unequal levels (5x7, 3x2), batch 2, 3 heads, odd D = 5, Lq = 7, P = 3.
// deformable-corners.py feeds locations whose corners fall outside on each
// side, at each image corner, on the borders, and fully outside.
func.func @deform_corners(%value: tensor<2x41x3x5xf32>,
                          %loc: tensor<2x7x3x2x3x2xf32>,
                          %w: tensor<2x7x3x2x3xf32>) -> tensor<2x7x15xf32> {
  %o = attn.deformable %value, %loc, %w levels [5x7, 3x2]
      : tensor<2x41x3x5xf32>, tensor<2x7x3x2x3x2xf32>, tensor<2x7x3x2x3xf32>
      -> tensor<2x7x15xf32>
  return %o : tensor<2x7x15xf32>
}

// The same with DAT-style align_corners (pixel = loc * (size - 1)).
func.func @deform_corners_ac(%value: tensor<2x41x3x5xf32>,
                             %loc: tensor<2x7x3x2x3x2xf32>,
                             %w: tensor<2x7x3x2x3xf32>) -> tensor<2x7x15xf32> {
  %o = attn.deformable %value, %loc, %w levels [5x7, 3x2] align_corners
      : tensor<2x41x3x5xf32>, tensor<2x7x3x2x3x2xf32>, tensor<2x7x3x2x3xf32>
      -> tensor<2x7x15xf32>
  return %o : tensor<2x7x15xf32>
}

// D = 17 (one vector of 16 and a tail), a 1x1 level, Lq = 11 (not a
// multiple of the 16 queries per parallel task).
func.func @deform_d17(%value: tensor<2x42x3x17xf32>,
                      %loc: tensor<2x11x3x3x2x2xf32>,
                      %w: tensor<2x11x3x3x2xf32>) -> tensor<2x11x51xf32> {
  %o = attn.deformable %value, %loc, %w levels [5x7, 3x2, 1x1]
      : tensor<2x42x3x17xf32>, tensor<2x11x3x3x2x2xf32>, tensor<2x11x3x3x2xf32>
      -> tensor<2x11x51xf32>
  return %o : tensor<2x11x51xf32>
}

// D = 17 with align_corners (the 1x1 level samples its only pixel).
func.func @deform_d17_ac(%value: tensor<2x42x3x17xf32>,
                         %loc: tensor<2x11x3x3x2x2xf32>,
                         %w: tensor<2x11x3x3x2xf32>) -> tensor<2x11x51xf32> {
  %o = attn.deformable %value, %loc, %w levels [5x7, 3x2, 1x1] align_corners
      : tensor<2x42x3x17xf32>, tensor<2x11x3x3x2x2xf32>, tensor<2x11x3x3x2xf32>
      -> tensor<2x11x51xf32>
  return %o : tensor<2x11x51xf32>
}

// Deformable DETR's head shape (M = 8, L = 4, P = 4, D = 32: two AVX-512
// vectors per head) on small levels, Lq = 37.
func.func @deform_detr_small(%value: tensor<1x206x8x32xf32>,
                             %loc: tensor<1x37x8x4x4x2xf32>,
                             %w: tensor<1x37x8x4x4xf32>) -> tensor<1x37x256xf32> {
  %o = attn.deformable %value, %loc, %w levels [10x15, 5x8, 3x4, 2x2]
      : tensor<1x206x8x32xf32>, tensor<1x37x8x4x4x2xf32>, tensor<1x37x8x4x4xf32>
      -> tensor<1x37x256xf32>
  return %o : tensor<1x37x256xf32>
}

// Dynamic batch, queries, points and channels: the schedule without a
// constant channel count; mismatched sizes are run-time errors of the kernel.
func.func @deform_dynamic(%value: tensor<?x41x3x?xf32>,
                          %loc: tensor<?x?x3x2x?x2xf32>,
                          %w: tensor<?x?x3x2x?xf32>) -> tensor<?x?x?xf32> {
  %o = attn.deformable %value, %loc, %w levels [5x7, 3x2]
      : tensor<?x41x3x?xf32>, tensor<?x?x3x2x?x2xf32>, tensor<?x?x3x2x?xf32>
      -> tensor<?x?x?xf32>
  return %o : tensor<?x?x?xf32>
}

// f64 with align_corners: the same algorithm in double.
func.func @deform_corners_f64(%value: tensor<2x41x3x5xf64>,
                              %loc: tensor<2x7x3x2x3x2xf64>,
                              %w: tensor<2x7x3x2x3xf64>) -> tensor<2x7x15xf64> {
  %o = attn.deformable %value, %loc, %w levels [5x7, 3x2] align_corners
      : tensor<2x41x3x5xf64>, tensor<2x7x3x2x3x2xf64>, tensor<2x7x3x2x3xf64>
      -> tensor<2x7x15xf64>
  return %o : tensor<2x7x15xf64>
}

// D = 65: past deformable.maxChannelVectors (4) vectors, so vector-wide
// chunks with a guarded last one (the shape sweep found it failing to
// compile: an update cannot shift its tail inwards). AVX2 reaches the same
// form at D = 33.
func.func @deform_d65(%value: tensor<2x42x3x65xf32>,
                      %loc: tensor<2x11x3x3x2x2xf32>,
                      %w: tensor<2x11x3x3x2xf32>) -> tensor<2x11x195xf32> {
  %o = attn.deformable %value, %loc, %w levels [5x7, 3x2, 1x1]
      : tensor<2x42x3x65xf32>, tensor<2x11x3x3x2x2xf32>, tensor<2x11x3x3x2xf32>
      -> tensor<2x11x195xf32>
  return %o : tensor<2x11x195xf32>
}

func.func @deform_d33_ac(%value: tensor<2x42x3x33xf32>,
                         %loc: tensor<2x11x3x3x2x2xf32>,
                         %w: tensor<2x11x3x3x2xf32>) -> tensor<2x11x99xf32> {
  %o = attn.deformable %value, %loc, %w levels [5x7, 3x2, 1x1] align_corners
      : tensor<2x42x3x33xf32>, tensor<2x11x3x3x2x2xf32>, tensor<2x11x3x3x2xf32>
      -> tensor<2x11x99xf32>
  return %o : tensor<2x11x99xf32>
}
