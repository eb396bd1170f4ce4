// Linear attention whose gradient takes the forward's saved context
// phi(K)^T V and key sums phi(K)^T 1 (--attn-grad=save-statistics=1):
// saved-linear-context.test.

// Batch and heads, n != m, a scale and eps (one pass of positions).
func.func @heads(%q: tensor<2x3x40x8xf32>, %k: tensor<2x3x56x8xf32>, %v: tensor<2x3x56x12xf32>) -> tensor<2x3x40x12xf32> {
  %o = attn.dot_product %q, %k, %v norm [sum over keys eps 1.000000e-06] scale 5.000000e-01 feature_map elu_plus_one : tensor<2x3x40x8xf32>, tensor<2x3x56x8xf32>, tensor<2x3x56x12xf32> -> tensor<2x3x40x12xf32>
  return %o : tensor<2x3x40x12xf32>
}

// Keys in chunks (K^T V and the key sums reduce in the same chunk tasks,
// the forward returns both), n != m.
func.func @chunks(%q: tensor<1500x32xf32>, %k: tensor<4096x32xf32>, %v: tensor<4096x64xf32>) -> tensor<1500x64xf32> {
  %o = attn.dot_product %q, %k, %v norm [sum over keys] feature_map relu : tensor<1500x32xf32>, tensor<4096x32xf32>, tensor<4096x64xf32> -> tensor<1500x64xf32>
  return %o : tensor<1500x64xf32>
}

// No normalization: the context alone is saved.
func.func @unnormalized(%q: tensor<64x8xf32>, %k: tensor<96x8xf32>, %v: tensor<96x12xf32>) -> tensor<64x12xf32> {
  %o = attn.dot_product %q, %k, %v norm [none over keys] scale 2.500000e-01 : tensor<64x8xf32>, tensor<96x8xf32>, tensor<96x12xf32> -> tensor<64x12xf32>
  return %o : tensor<64x12xf32>
}

// f64, for the finite differences.
func.func @f64(%q: tensor<2x33x8xf64>, %k: tensor<2x45x8xf64>, %v: tensor<2x45x10xf64>) -> tensor<2x33x10xf64> {
  %o = attn.dot_product %q, %k, %v norm [sum over keys eps 1.000000e-06] feature_map elu_plus_one : tensor<2x33x8xf64>, tensor<2x45x8xf64>, tensor<2x45x10xf64> -> tensor<2x33x10xf64>
  return %o : tensor<2x33x10xf64>
}

// f64 without normalization.
func.func @unnormalized_f64(%q: tensor<30x6xf64>, %k: tensor<40x6xf64>, %v: tensor<40x7xf64>) -> tensor<30x7xf64> {
  %o = attn.dot_product %q, %k, %v norm [none over keys] feature_map elu_plus_one : tensor<30x6xf64>, tensor<40x6xf64>, tensor<40x7xf64> -> tensor<30x7xf64>
  return %o : tensor<30x7xf64>
}
