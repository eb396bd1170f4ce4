// RUN: attn-run %s --random 6781 --quiet --check --pass-pipeline attn-lower-double-norm,attn-lower-deformable,canonicalize,cse
// EXPECT: ok
func.func @f(%a0: tensor<1x3x8xf32>, %a1: tensor<1x514x8xf32>, %a2: tensor<1x514x5xf32>) -> (tensor<1x3x5xf32>, tensor<1x3x5xf32>) {
  %v1 = attn.efficient %a0, %a1, %a2 variant softmax
      : tensor<1x3x8xf32>, tensor<1x514x8xf32>, tensor<1x514x5xf32> -> tensor<1x3x5xf32>
  %v2 = attn.feature_map elu_plus_one %v1 : tensor<1x3x5xf32>
  return %v1, %v2 : tensor<1x3x5xf32>, tensor<1x3x5xf32>
}
