// RUN: attn-run %s --random 13990 --quiet --dynamic-size 1 --grad --check
// EXPECT: ok
func.func @f(%x0: tensor<2x25x3x?xf16>, %x1: tensor<2x1x3x1x4x2xf16>, %x2: tensor<2x1x3x?x4xf16>) -> tensor<2x1x?xf16> {
  %v1 = attn.deformable %x0, %x1, %x2 levels [5x5] align_corners
      : tensor<2x25x3x?xf16>, tensor<2x1x3x1x4x2xf16>, tensor<2x1x3x?x4xf16> -> tensor<2x1x?xf16>
  return %v1 : tensor<2x1x?xf16>
}
