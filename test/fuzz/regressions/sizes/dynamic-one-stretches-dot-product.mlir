// RUN: attn-run %s --quiet --input in_0=%I/in_0.npy --input in_1=%I/in_1.npy --input in_2=%I/in_2.npy --input in_3=%I/in_3.npy --check
// EXPECT: ok
func.func @f(%in_0: tensor<1x33xf64>, %in_1: tensor<?x?x33xf64>, %in_2: tensor<3x?x3xf64>, %in_3: tensor<1x1x?xf64>) -> tensor<3x1x3xf64> {
  %v1 = attn.dot_product %in_0, %in_1, %in_2 norm [softmax over keys] scale 5.000000e-01 feature_map identity
      : tensor<1x33xf64>, tensor<?x?x33xf64>, tensor<3x?x3xf64> -> tensor<3x1x3xf64>
  %v2 = attn.mul %v1, %in_3
      : tensor<3x1x3xf64>, tensor<1x1x?xf64> -> tensor<3x1x3xf64>
  return %v2 : tensor<3x1x3xf64>
}
