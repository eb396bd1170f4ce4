// RUN: attn-run %s --quiet --input arg0=%I/arg0.npy --input arg1=%I/arg1.npy --input arg2=%I/arg2.npy --input arg3=%I/arg3.npy --aot
// EXPECT: error
func.func @f(%arg0: tensor<3x?x1x17x9xf32>, %arg1: tensor<3x?x1x64x9xf32>, %arg2: tensor<3x1x1x64x64xf32>, %arg3: tensor<3x?x1x17x64xf32>) -> (tensor<3x?x1x17x9xf32>, tensor<3x?x1x64x9xf32>, tensor<3x?x1x64x64xf32>) {
  %v1_0, %v1_1, %v1_2 = attn.attention_grad %arg0, %arg1, %arg2, %arg3 scale 1.000000e+00
      : tensor<3x?x1x17x9xf32>, tensor<3x?x1x64x9xf32>, tensor<3x1x1x64x64xf32>, tensor<3x?x1x17x64xf32>
      -> tensor<3x?x1x17x9xf32>, tensor<3x?x1x64x9xf32>, tensor<3x?x1x64x64xf32>
  return %v1_0, %v1_1, %v1_2 : tensor<3x?x1x17x9xf32>, tensor<3x?x1x64x9xf32>, tensor<3x?x1x64x64xf32>
}
