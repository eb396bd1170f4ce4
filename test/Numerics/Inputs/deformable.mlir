// Specs checked by the numpy oracle (../oracle.py); one lit test per function.

func.func @deform(%value: tensor<2x46x2x3xf32>, %loc: tensor<2x3x2x3x2x2xf32>, %w: tensor<2x3x2x3x2xf32>) -> tensor<2x3x6xf32> {
  %o = attn.deformable %value, %loc, %w levels [6x5, 3x4, 2x2]
      : tensor<2x46x2x3xf32>, tensor<2x3x2x3x2x2xf32>, tensor<2x3x2x3x2xf32> -> tensor<2x3x6xf32>
  return %o : tensor<2x3x6xf32>
}

func.func @deform_ac(%value: tensor<2x46x2x3xf32>, %loc: tensor<2x3x2x3x2x2xf32>, %w: tensor<2x3x2x3x2xf32>) -> tensor<2x3x6xf32> {
  %o = attn.deformable %value, %loc, %w levels [6x5, 3x4, 2x2] align_corners
      : tensor<2x46x2x3xf32>, tensor<2x3x2x3x2x2xf32>, tensor<2x3x2x3x2xf32> -> tensor<2x3x6xf32>
  return %o : tensor<2x3x6xf32>
}

func.func @deform_f64(%value: tensor<2x46x2x3xf64>, %loc: tensor<2x3x2x3x2x2xf64>, %w: tensor<2x3x2x3x2xf64>) -> tensor<2x3x6xf64> {
  %o = attn.deformable %value, %loc, %w levels [6x5, 3x4, 2x2]
      : tensor<2x46x2x3xf64>, tensor<2x3x2x3x2x2xf64>, tensor<2x3x2x3x2xf64> -> tensor<2x3x6xf64>
  return %o : tensor<2x3x6xf64>
}

func.func @deform_ac_f64(%value: tensor<2x46x2x3xf64>, %loc: tensor<2x3x2x3x2x2xf64>, %w: tensor<2x3x2x3x2xf64>) -> tensor<2x3x6xf64> {
  %o = attn.deformable %value, %loc, %w levels [6x5, 3x4, 2x2] align_corners
      : tensor<2x46x2x3xf64>, tensor<2x3x2x3x2x2xf64>, tensor<2x3x2x3x2xf64> -> tensor<2x3x6xf64>
  return %o : tensor<2x3x6xf64>
}
