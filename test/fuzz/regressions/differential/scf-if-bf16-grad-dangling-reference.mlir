// RUN: attn-run %s --random 13240 --quiet --dynamic-size 8 --grad --check
// EXPECT: ok
func.func @f(%x0: tensor<3x2x24x?xbf16>, %x1: tensor<1x3x2x65x?xbf16>, %x2: tensor<1x3x2x65x?xbf16>, %x3: tensor<1x3x2x24x?xbf16>) -> tensor<1x3x2x24x?xbf16> {
  %v1 = attn.dot_product %x0, %x1, %x2 norm [sum over keys]
      : tensor<3x2x24x?xbf16>, tensor<1x3x2x65x?xbf16>, tensor<1x3x2x65x?xbf16> -> tensor<1x3x?x24x?xbf16>
  %v2 = attn.add %v1, %x3
      : tensor<1x3x?x24x?xbf16>, tensor<1x3x2x24x?xbf16> -> tensor<1x3x2x24x?xbf16>
  return %v2 : tensor<1x3x2x24x?xbf16>
}
