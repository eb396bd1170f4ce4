// RUN: attn-run %s --random 27288 --quiet --grad --check --grad-save-statistics
// EXPECT: ok
func.func @f(%in_0: tensor<7x129xf32>, %in_1: tensor<31x129xf32>, %in_2: tensor<31x48xf32>) -> tensor<?x48xf32> {
  %v1 = attn.dot_product %in_0, %in_1, %in_2 norm [softmax over keys] scale 1.250000e-01 feature_map elu_plus_one causal
      : tensor<7x129xf32>, tensor<31x129xf32>, tensor<31x48xf32> -> tensor<?x48xf32>
  return %v1 : tensor<?x48xf32>
}
