// RUN: attn-run %s --random 50320 --quiet --check-grad
// EXPECT: ok
func.func @f(%a0: tensor<2x2x1x15xf32>, %a1: tensor<2x2x1x15xf32>, %a2: tensor<2x2x1x64xf32>) -> tensor<2x2x1x64xf32> {
  %v1 = attn.efficient %a0, %a1, %a2 variant softmax
      : tensor<2x2x1x15xf32>, tensor<2x2x1x15xf32>, tensor<2x2x1x64xf32> -> tensor<2x2x1x64xf32>
  %v2 = attn.scale %v1 by 0.75 : tensor<2x2x1x64xf32>
  return %v2 : tensor<2x2x1x64xf32>
}
