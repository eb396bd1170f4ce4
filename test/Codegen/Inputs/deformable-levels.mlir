// Sampling ops whose locations have a dynamic levels dim
// (deformable-errors.test): the kernel must get exactly the level list's
// count at run time.
func.func @deform_levels(%value: tensor<2x41x3x5xf32>,
                         %loc: tensor<2x4x3x?x3x2xf32>,
                         %w: tensor<2x4x3x?x3xf32>) -> tensor<2x4x15xf32> {
  %o = attn.deformable %value, %loc, %w levels [5x7, 3x2]
      : tensor<2x41x3x5xf32>, tensor<2x4x3x?x3x2xf32>, tensor<2x4x3x?x3xf32>
      -> tensor<2x4x15xf32>
  return %o : tensor<2x4x15xf32>
}

func.func @gather_levels(%value: tensor<2x41x3x5xf32>,
                         %loc: tensor<2x4x3x?x3x2xf32>) -> tensor<2x4x3x?x3x5xf32> {
  %o = attn.bilinear_gather %value, %loc levels [5x7, 3x2]
      : tensor<2x41x3x5xf32>, tensor<2x4x3x?x3x2xf32> -> tensor<2x4x3x?x3x5xf32>
  return %o : tensor<2x4x3x?x3x5xf32>
}

func.func @pixels_levels(%value: tensor<2x41x3x5xf32>,
                         %pixels: tensor<2x4x3x?x3x2xf32>) -> tensor<2x4x3x?x3x5xf32> {
  %o = attn.gather_pixels %value, %pixels levels [5x7, 3x2]
      : tensor<2x41x3x5xf32>, tensor<2x4x3x?x3x2xf32> -> tensor<2x4x3x?x3x5xf32>
  return %o : tensor<2x4x3x?x3x5xf32>
}

// A dynamic rows dim of the value must hold the levels' pixels, 5 * 7 +
// 3 * 2 = 41 (the reference refuses any other count; the kernels clamped
// their row reads and ran).
func.func @deform_rows(%value: tensor<2x?x3x5xf32>, %loc: tensor<2x4x3x2x3x2xf32>,
                       %w: tensor<2x4x3x2x3xf32>) -> tensor<2x4x15xf32> {
  %o = attn.deformable %value, %loc, %w levels [5x7, 3x2]
      : tensor<2x?x3x5xf32>, tensor<2x4x3x2x3x2xf32>, tensor<2x4x3x2x3xf32>
      -> tensor<2x4x15xf32>
  return %o : tensor<2x4x15xf32>
}

func.func @gather_rows(%value: tensor<2x?x3x5xf32>,
                       %loc: tensor<2x4x3x2x3x2xf32>) -> tensor<2x4x3x2x3x5xf32> {
  %o = attn.bilinear_gather %value, %loc levels [5x7, 3x2]
      : tensor<2x?x3x5xf32>, tensor<2x4x3x2x3x2xf32> -> tensor<2x4x3x2x3x5xf32>
  return %o : tensor<2x4x3x2x3x5xf32>
}

func.func @pixels_rows(%value: tensor<2x?x3x5xf32>,
                       %pixels: tensor<2x4x3x2x3x2xf32>) -> tensor<2x4x3x2x3x5xf32> {
  %o = attn.gather_pixels %value, %pixels levels [5x7, 3x2]
      : tensor<2x?x3x5xf32>, tensor<2x4x3x2x3x2xf32> -> tensor<2x4x3x2x3x5xf32>
  return %o : tensor<2x4x3x2x3x5xf32>
}
