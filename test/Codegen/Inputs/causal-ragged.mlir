// Causal linear attention at n that chunks of 64 do not divide
// (test/Codegen/causal-ragged.test): n = 1 and n < C (one ragged chunk, left
// quadratic), n = C + 1 (a whole chunk and a ragged chunk of 1), n = 200
// (3 whole chunks and a ragged chunk of 8), n = 3 for chunks of 2; each of
// none / count / sum over keys, with and without a feature map, K and V
// shared by the heads, and eps = 0.

// n = 1: a single position.
func.func @none_n1(%q: tensor<1x8xf32>, %k: tensor<1x8xf32>, %v: tensor<1x4xf32>) -> tensor<1x4xf32> {
  %o = attn.dot_product %q, %k, %v norm [none over keys] scale 0.5 causal
      : tensor<1x8xf32>, tensor<1x8xf32>, tensor<1x4xf32> -> tensor<1x4xf32>
  return %o : tensor<1x4xf32>
}

// n = 24 < 64, two heads.
func.func @count_n24(%q: tensor<2x24x8xf32>, %k: tensor<2x24x8xf32>, %v: tensor<2x24x4xf32>) -> tensor<2x24x4xf32> {
  %o = attn.dot_product %q, %k, %v norm [count over keys] causal
      : tensor<2x24x8xf32>, tensor<2x24x8xf32>, tensor<2x24x4xf32> -> tensor<2x24x4xf32>
  return %o : tensor<2x24x4xf32>
}

// n = C + 1: the tail is one row.
func.func @none_n65(%q: tensor<65x16xf32>, %k: tensor<65x16xf32>, %v: tensor<65x8xf32>) -> tensor<65x8xf32> {
  %o = attn.dot_product %q, %k, %v norm [none over keys] scale 0.25 causal
      : tensor<65x16xf32>, tensor<65x16xf32>, tensor<65x8xf32> -> tensor<65x8xf32>
  return %o : tensor<65x8xf32>
}

// n = C + 1, K and V shared by three heads (rank 2).
func.func @count_n65_shared_kv(%q: tensor<3x65x16xf32>, %k: tensor<65x16xf32>, %v: tensor<65x8xf32>) -> tensor<3x65x8xf32> {
  %o = attn.dot_product %q, %k, %v norm [count over keys] causal
      : tensor<3x65x16xf32>, tensor<65x16xf32>, tensor<65x8xf32> -> tensor<3x65x8xf32>
  return %o : tensor<3x65x8xf32>
}

// n = C + 1, linear attention with elu+1 and eps.
func.func @sum_elu_n65(%q: tensor<65x16xf32>, %k: tensor<65x16xf32>, %v: tensor<65x8xf32>) -> tensor<65x8xf32> {
  %o = attn.dot_product %q, %k, %v norm [sum over keys eps 1.000000e-03] feature_map elu_plus_one causal
      : tensor<65x16xf32>, tensor<65x16xf32>, tensor<65x8xf32> -> tensor<65x8xf32>
  return %o : tensor<65x8xf32>
}

// n = 200 = 3 * 64 + 8, two heads, scaled.
func.func @none_n200(%q: tensor<2x200x16xf32>, %k: tensor<2x200x16xf32>, %v: tensor<2x200x8xf32>) -> tensor<2x200x8xf32> {
  %o = attn.dot_product %q, %k, %v norm [none over keys] scale 0.125 causal
      : tensor<2x200x16xf32>, tensor<2x200x16xf32>, tensor<2x200x8xf32> -> tensor<2x200x8xf32>
  return %o : tensor<2x200x8xf32>
}

// n = 200, a count after the scale.
func.func @count_n200(%q: tensor<200x32xf32>, %k: tensor<200x32xf32>, %v: tensor<200x16xf32>) -> tensor<200x16xf32> {
  %o = attn.dot_product %q, %k, %v norm [count over keys] scale 0.5 causal
      : tensor<200x32xf32>, tensor<200x32xf32>, tensor<200x16xf32> -> tensor<200x16xf32>
  return %o : tensor<200x16xf32>
}

// n = 200, linear attention with elu+1 and eps = 0 (every row sum is > 0:
// elu+1 is positive, and no row is padded).
func.func @sum_elu_n200(%q: tensor<2x200x16xf32>, %k: tensor<2x200x16xf32>, %v: tensor<2x200x8xf32>) -> tensor<2x200x8xf32> {
  %o = attn.dot_product %q, %k, %v norm [sum over keys] feature_map elu_plus_one causal
      : tensor<2x200x16xf32>, tensor<2x200x16xf32>, tensor<2x200x8xf32> -> tensor<2x200x8xf32>
  return %o : tensor<2x200x8xf32>
}

// n = 200, relu with eps, then a count (a factor after the sum).
func.func @sum_relu_count_n200(%q: tensor<200x16xf32>, %k: tensor<200x16xf32>, %v: tensor<200x8xf32>) -> tensor<200x8xf32> {
  %o = attn.dot_product %q, %k, %v norm [sum over keys eps 1.000000e-03, count over keys] feature_map relu causal
      : tensor<200x16xf32>, tensor<200x16xf32>, tensor<200x8xf32> -> tensor<200x8xf32>
  return %o : tensor<200x8xf32>
}

// n = 3 (chunks of 2 in the test: a whole chunk and a ragged chunk of 1).
func.func @sum_elu_n3(%q: tensor<2x3x4xf32>, %k: tensor<2x3x4xf32>, %v: tensor<2x3x2xf32>) -> tensor<2x3x2xf32> {
  %o = attn.dot_product %q, %k, %v norm [sum over keys eps 1.000000e-03] feature_map elu_plus_one causal
      : tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x2xf32> -> tensor<2x3x2xf32>
  return %o : tensor<2x3x2xf32>
}
