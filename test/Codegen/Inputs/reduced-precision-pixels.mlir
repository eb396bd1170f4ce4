// Reduced-precision forms of the pixel ops of
// test/Numerics/Inputs/primitives.mlir (reduced-precision.test): the
// gathered value or scattered cotangent in bf16 or f16, the pixel
// coordinates in f32 (a 16-bit float is not exact on large integers).

// Levels 3x4 (rows 0..11) and 2x3 (rows 12..17).
func.func @scatter_pixels_bf16(%dy: tensor<2x3x2x2x4x3xbf16>, %pixels: tensor<2x3x2x2x4x2xf32>) -> tensor<2x18x2x3xbf16> {
  %o = attn.scatter_pixels %dy, %pixels levels [3x4, 2x3]
      : tensor<2x3x2x2x4x3xbf16>, tensor<2x3x2x2x4x2xf32> -> tensor<2x18x2x3xbf16>
  return %o : tensor<2x18x2x3xbf16>
}

// Pixels 8 u - 2 for u in [0, 1): inside and outside both levels.
func.func @scatter_pixels_spread_bf16(%dy: tensor<2x3x2x2x4x3xbf16>, %u: tensor<2x3x2x2x4x2xf32>) -> tensor<2x18x2x3xbf16> {
  %two = arith.constant dense<-2.000000e+00> : tensor<1xf32>
  %s = attn.scale %u by 8.000000e+00 : tensor<2x3x2x2x4x2xf32>
  %pixels = attn.add %s, %two : tensor<2x3x2x2x4x2xf32>, tensor<1xf32> -> tensor<2x3x2x2x4x2xf32>
  %o = attn.scatter_pixels %dy, %pixels levels [3x4, 2x3]
      : tensor<2x3x2x2x4x3xbf16>, tensor<2x3x2x2x4x2xf32> -> tensor<2x18x2x3xbf16>
  return %o : tensor<2x18x2x3xbf16>
}

// The gather at the same spread pixels.
func.func @gather_pixels_bf16(%value: tensor<2x18x2x3xbf16>, %u: tensor<2x3x2x2x4x2xf32>) -> tensor<2x3x2x2x4x3xbf16> {
  %two = arith.constant dense<-2.000000e+00> : tensor<1xf32>
  %s = attn.scale %u by 8.000000e+00 : tensor<2x3x2x2x4x2xf32>
  %pixels = attn.add %s, %two : tensor<2x3x2x2x4x2xf32>, tensor<1xf32> -> tensor<2x3x2x2x4x2xf32>
  %o = attn.gather_pixels %value, %pixels levels [3x4, 2x3]
      : tensor<2x18x2x3xbf16>, tensor<2x3x2x2x4x2xf32> -> tensor<2x3x2x2x4x3xbf16>
  return %o : tensor<2x3x2x2x4x3xbf16>
}

// Levels 3x4 (rows 0..11) and 2x3 (rows 12..17).
func.func @scatter_pixels_f16(%dy: tensor<2x3x2x2x4x3xf16>, %pixels: tensor<2x3x2x2x4x2xf32>) -> tensor<2x18x2x3xf16> {
  %o = attn.scatter_pixels %dy, %pixels levels [3x4, 2x3]
      : tensor<2x3x2x2x4x3xf16>, tensor<2x3x2x2x4x2xf32> -> tensor<2x18x2x3xf16>
  return %o : tensor<2x18x2x3xf16>
}

// Pixels 8 u - 2 for u in [0, 1): inside and outside both levels.
func.func @scatter_pixels_spread_f16(%dy: tensor<2x3x2x2x4x3xf16>, %u: tensor<2x3x2x2x4x2xf32>) -> tensor<2x18x2x3xf16> {
  %two = arith.constant dense<-2.000000e+00> : tensor<1xf32>
  %s = attn.scale %u by 8.000000e+00 : tensor<2x3x2x2x4x2xf32>
  %pixels = attn.add %s, %two : tensor<2x3x2x2x4x2xf32>, tensor<1xf32> -> tensor<2x3x2x2x4x2xf32>
  %o = attn.scatter_pixels %dy, %pixels levels [3x4, 2x3]
      : tensor<2x3x2x2x4x3xf16>, tensor<2x3x2x2x4x2xf32> -> tensor<2x18x2x3xf16>
  return %o : tensor<2x18x2x3xf16>
}

// The gather at the same spread pixels.
func.func @gather_pixels_f16(%value: tensor<2x18x2x3xf16>, %u: tensor<2x3x2x2x4x2xf32>) -> tensor<2x3x2x2x4x3xf16> {
  %two = arith.constant dense<-2.000000e+00> : tensor<1xf32>
  %s = attn.scale %u by 8.000000e+00 : tensor<2x3x2x2x4x2xf32>
  %pixels = attn.add %s, %two : tensor<2x3x2x2x4x2xf32>, tensor<1xf32> -> tensor<2x3x2x2x4x2xf32>
  %o = attn.gather_pixels %value, %pixels levels [3x4, 2x3]
      : tensor<2x18x2x3xf16>, tensor<2x3x2x2x4x2xf32> -> tensor<2x3x2x2x4x3xf16>
  return %o : tensor<2x3x2x2x4x3xf16>
}
