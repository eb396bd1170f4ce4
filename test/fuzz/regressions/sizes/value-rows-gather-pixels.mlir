// RUN: attn-run %s --quiet --input in_0=%I/in_0.npy --input in_1=%I/in_1.npy
// EXPECT: error
func.func @f(%in_0: tensor<1x?x?x3xf32>, %in_1: tensor<1x5x?x1x1x2xf32>) -> tensor<1x5x?x1x1x3xf32> {
  %v1 = attn.scale %in_1 by 4.000000e+00 : tensor<1x5x?x1x1x2xf32>
  %v2 = attn.floor %v1 : tensor<1x5x?x1x1x2xf32>
  %v3 = attn.scale %in_1 by -1.0 : tensor<1x5x?x1x1x2xf32>
  %v4 = attn.floor %v3 : tensor<1x5x?x1x1x2xf32>
  %v5 = attn.add %v2, %v4
      : tensor<1x5x?x1x1x2xf32>, tensor<1x5x?x1x1x2xf32> -> tensor<1x5x?x1x1x2xf32>
  %v6 = attn.gather_pixels %in_0, %v5 levels [2x1]
      : tensor<1x?x?x3xf32>, tensor<1x5x?x1x1x2xf32> -> tensor<1x5x?x1x1x3xf32>
  return %v6 : tensor<1x5x?x1x1x3xf32>
}
