// Linear attention (elu + 1 feature map, sum over keys): after the default
// pipeline, K^T V and Q context are matmuls whose lhs is the feature map, and
// the output is a division (linear-fused.test).
func.func @linear(%q: tensor<1000x32xf32>, %k: tensor<1000x32xf32>, %v: tensor<1000x64xf32>) -> tensor<1000x64xf32> {
  %o = attn.dot_product %q, %k, %v norm [sum over keys] feature_map elu_plus_one
      : tensor<1000x32xf32>, tensor<1000x32xf32>, tensor<1000x64xf32> -> tensor<1000x64xf32>
  return %o : tensor<1000x64xf32>
}

// A dynamic row count: the lhs per block and the output tasks still apply.
func.func @linear_dynamic(%q: tensor<?x16xf32>, %k: tensor<?x16xf32>, %v: tensor<?x24xf32>) -> tensor<?x24xf32> {
  %o = attn.dot_product %q, %k, %v norm [sum over keys] feature_map elu_plus_one
      : tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x24xf32> -> tensor<?x24xf32>
  return %o : tensor<?x24xf32>
}
