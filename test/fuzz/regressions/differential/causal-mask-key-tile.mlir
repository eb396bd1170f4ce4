// RUN: attn-run %s --random 61979 --quiet --check
// EXPECT: ok
func.func @f(%a0: tensor<3x1x1x32x3xf32>, %a1: tensor<3x3x1x512x3xf32>, %a2: tensor<3x3x1x512x4xf32>, %a3: tensor<3x3x1x32x512xf32> {attn.no_grad}) -> tensor<3x3x?x32x4xbf16> {
  %v1 = attn.dot_product %a0, %a1, %a2 mask %a3 norm [count over keys, none over keys] scale 5.000000e-01 feature_map elu_plus_one causal
      : tensor<3x1x1x32x3xf32>, tensor<3x3x1x512x3xf32>, tensor<3x3x1x512x4xf32>, tensor<3x3x1x32x512xf32> -> tensor<3x3x?x32x4xbf16>
  return %v1 : tensor<3x3x?x32x4xbf16>
}
