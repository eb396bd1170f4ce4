// Specs for --verify-rewrites and attn-run --check of --attn-lower-deformable
// (test/Passes/lower-deformable-verify.test). Random inputs are uniform in
// [0, 1); functions that need other locations compute them from the inputs.

// Locations remapped to [-1, 2): samples left of, right of, above and below
// every level (x < 0, x > 1, y < 0, y > 1) and samples with 1, 2 or 3 corners
// outside; three levels of unequal odd shapes (5x7, 3x2, 1x1); N = 2 batches,
// M = 3 heads, Lq = 7 queries, P = 3 points, D = 5 channels.
func.func @outside_every_level(%value: tensor<2x42x3x5xf32>,
                               %loc01: tensor<2x7x3x3x3x2xf32>,
                               %weights: tensor<2x7x3x3x3xf32>) -> tensor<2x7x15xf32> {
  %wide = attn.scale %loc01 by 3.0 : tensor<2x7x3x3x3x2xf32>
  %minus_one = arith.constant dense<-1.0> : tensor<1xf32>
  %loc = attn.add %wide, %minus_one : tensor<2x7x3x3x3x2xf32>, tensor<1xf32> -> tensor<2x7x3x3x3x2xf32>
  %out = attn.deformable %value, %loc, %weights levels [5x7, 3x2, 1x1]
      : tensor<2x42x3x5xf32>, tensor<2x7x3x3x3x2xf32>, tensor<2x7x3x3x3xf32> -> tensor<2x7x15xf32>
  return %out : tensor<2x7x15xf32>
}

// The same samples with align_corners (pixel = (x (W - 1), y (H - 1))); the
// 1x1 level maps every location to pixel (0, 0).
func.func @outside_align_corners(%value: tensor<2x42x3x5xf32>,
                                 %loc01: tensor<2x7x3x3x3x2xf32>,
                                 %weights: tensor<2x7x3x3x3xf32>) -> tensor<2x7x15xf32> {
  %wide = attn.scale %loc01 by 3.0 : tensor<2x7x3x3x3x2xf32>
  %minus_one = arith.constant dense<-1.0> : tensor<1xf32>
  %loc = attn.add %wide, %minus_one : tensor<2x7x3x3x3x2xf32>, tensor<1xf32> -> tensor<2x7x3x3x3x2xf32>
  %out = attn.deformable %value, %loc, %weights levels [5x7, 3x2, 1x1] align_corners
      : tensor<2x42x3x5xf32>, tensor<2x7x3x3x3x2xf32>, tensor<2x7x3x3x3xf32> -> tensor<2x7x15xf32>
  return %out : tensor<2x7x15xf32>
}

// Every corner case at fixed locations, level 0 of 4x4 (pixel = 4 x - 0.5)
// and level 1 of 2x3: inside; left, right, top, bottom edge (2 corners
// outside); top-left and bottom-right (3 outside); entirely outside on each
// side; exactly on pixel centers.
func.func @corner_cases(%value: tensor<1x22x2x3xf32>,
                        %weights: tensor<1x1x2x2x11xf32>) -> tensor<1x1x6xf32> {
  %loc = arith.constant dense<[[[
       [[[0.4, 0.6], [-0.1, 0.5], [1.05, 0.5], [0.5, -0.1], [0.5, 1.05], [-0.1, -0.1],
        [1.05, 1.05], [-0.5, 0.5], [1.5, 0.5], [0.5, -0.5], [0.125, 0.875]],
       [[0.4, 0.6], [-0.1, 0.5], [1.05, 0.5], [0.5, -0.1], [0.5, 1.05], [-0.1, -0.1],
        [1.05, 1.05], [-0.5, 0.5], [0.5, 1.5], [0.5, -0.5], [0.5, 0.75]]],
       [[[0.9, 0.1], [0.0, 0.0], [1.0, 1.0], [0.0, 1.0], [1.0, 0.0], [0.3, 0.7],
        [0.7, 0.3], [-0.2, 1.2], [1.2, -0.2], [0.51, 0.49], [0.25, 0.25]],
       [[0.9, 0.1], [0.0, 0.0], [1.0, 1.0], [0.0, 1.0], [1.0, 0.0], [0.3, 0.7],
        [0.7, 0.3], [-0.2, 1.2], [1.2, -0.2], [0.51, 0.49], [0.25, 0.25]]]]]]>
      : tensor<1x1x2x2x11x2xf32>
  %out = attn.deformable %value, %loc, %weights levels [4x4, 2x3]
      : tensor<1x22x2x3xf32>, tensor<1x1x2x2x11x2xf32>, tensor<1x1x2x2x11xf32> -> tensor<1x1x6xf32>
  return %out : tensor<1x1x6xf32>
}

// The corner cases with align_corners.
func.func @corner_cases_align_corners(%value: tensor<1x22x2x3xf32>,
                                      %weights: tensor<1x1x2x2x11xf32>) -> tensor<1x1x6xf32> {
  %loc = arith.constant dense<[[[
       [[[0.4, 0.6], [-0.1, 0.5], [1.05, 0.5], [0.5, -0.1], [0.5, 1.05], [-0.1, -0.1],
        [1.05, 1.05], [-0.5, 0.5], [1.5, 0.5], [0.5, -0.5], [0.125, 0.875]],
       [[0.4, 0.6], [-0.1, 0.5], [1.05, 0.5], [0.5, -0.1], [0.5, 1.05], [-0.1, -0.1],
        [1.05, 1.05], [-0.5, 0.5], [0.5, 1.5], [0.5, -0.5], [0.5, 0.75]]],
       [[[0.9, 0.1], [0.0, 0.0], [1.0, 1.0], [0.0, 1.0], [1.0, 0.0], [0.3, 0.7],
        [0.7, 0.3], [-0.2, 1.2], [1.2, -0.2], [0.51, 0.49], [0.25, 0.25]],
       [[0.9, 0.1], [0.0, 0.0], [1.0, 1.0], [0.0, 1.0], [1.0, 0.0], [0.3, 0.7],
        [0.7, 0.3], [-0.2, 1.2], [1.2, -0.2], [0.51, 0.49], [0.25, 0.25]]]]]]>
      : tensor<1x1x2x2x11x2xf32>
  %out = attn.deformable %value, %loc, %weights levels [4x4, 2x3] align_corners
      : tensor<1x22x2x3xf32>, tensor<1x1x2x2x11x2xf32>, tensor<1x1x2x2x11xf32> -> tensor<1x1x6xf32>
  return %out : tensor<1x1x6xf32>
}

// Locations as given (in [0, 1)), odd sizes everywhere, N = 3, one point,
// in double precision.
func.func @batches_f64(%value: tensor<3x21x2x3xf64>,
                       %loc: tensor<3x5x2x2x1x2xf64>,
                       %weights: tensor<3x5x2x2x1xf64>) -> tensor<3x5x6xf64> {
  %out = attn.deformable %value, %loc, %weights levels [3x5, 2x3]
      : tensor<3x21x2x3xf64>, tensor<3x5x2x2x1x2xf64>, tensor<3x5x2x2x1xf64> -> tensor<3x5x6xf64>
  return %out : tensor<3x5x6xf64>
}
