// Softmax attention whose keys the CPU schedule splits (key-split.test runs
// these with small attention.keySplit values, so every function here has
// several splits).

// Batch and heads, broadcast K and V over the batch.
func.func @split_heads(%q: tensor<2x3x40x16xf32>, %k: tensor<3x256x16xf32>, %v: tensor<3x256x24xf32>) -> tensor<2x3x40x24xf32> {
  %o = attn.dot_product %q, %k, %v norm [softmax over keys] scale 2.500000e-01
      : tensor<2x3x40x16xf32>, tensor<3x256x16xf32>, tensor<3x256x24xf32> -> tensor<2x3x40x24xf32>
  return %o : tensor<2x3x40x24xf32>
}

// Causal with n = m: the splits right of the diagonal are hidden for the
// first rows.
func.func @split_causal(%q: tensor<2x192x16xf32>, %k: tensor<2x192x16xf32>, %v: tensor<2x192x8xf32>) -> tensor<2x192x8xf32> {
  %o = attn.dot_product %q, %k, %v norm [softmax over keys] scale 2.500000e-01 causal
      : tensor<2x192x16xf32>, tensor<2x192x16xf32>, tensor<2x192x8xf32> -> tensor<2x192x8xf32>
  return %o : tensor<2x192x8xf32>
}

// Causal with n < m: row i sees keys 0..i only, so for every row all but
// the first split are hidden.
func.func @split_causal_n_lt_m(%q: tensor<20x16xf32>, %k: tensor<256x16xf32>, %v: tensor<256x8xf32>) -> tensor<20x8xf32> {
  %o = attn.dot_product %q, %k, %v norm [softmax over keys] causal
      : tensor<20x16xf32>, tensor<256x16xf32>, tensor<256x8xf32> -> tensor<20x8xf32>
  return %o : tensor<20x8xf32>
}

// An additive mask of -inf right of the diagonal (attn.causal_mask of
// zeros): whole splits are -inf, and the splits' maxima are the lowest
// float there.
func.func @split_neginf_mask(%q: tensor<24x16xf32>, %k: tensor<256x16xf32>, %v: tensor<256x8xf32>) -> tensor<24x8xf32> {
  %zero = arith.constant dense<0.000000e+00> : tensor<24x256xf32>
  %mask = attn.causal_mask %zero : tensor<24x256xf32>
  %o = attn.dot_product %q, %k, %v mask %mask norm [softmax over keys]
      : tensor<24x16xf32>, tensor<256x16xf32>, tensor<256x8xf32>, tensor<24x256xf32> -> tensor<24x8xf32>
  return %o : tensor<24x8xf32>
}

// Scores far apart across splits: a large scale makes one split's maximum
// dominate, so the rescaling by exp(split max - row max) matters.
func.func @split_large_scale(%q: tensor<32x16xf32>, %k: tensor<256x16xf32>, %v: tensor<256x8xf32>) -> tensor<32x8xf32> {
  %o = attn.dot_product %q, %k, %v norm [softmax over keys] scale 2.000000e+01
      : tensor<32x16xf32>, tensor<256x16xf32>, tensor<256x8xf32> -> tensor<32x8xf32>
  return %o : tensor<32x8xf32>
}

// f64, a feature map, and a dynamic number of queries.
func.func @split_f64_dynamic(%q: tensor<?x16xf64>, %k: tensor<128x16xf64>, %v: tensor<128x8xf64>) -> tensor<?x8xf64> {
  %o = attn.dot_product %q, %k, %v norm [softmax over keys] feature_map elu_plus_one
      : tensor<?x16xf64>, tensor<128x16xf64>, tensor<128x8xf64> -> tensor<?x8xf64>
  return %o : tensor<?x8xf64>
}

// m = 200 is not a multiple of the split: the plain algorithm runs.
func.func @split_uneven(%q: tensor<16x16xf32>, %k: tensor<200x16xf32>, %v: tensor<200x8xf32>) -> tensor<16x8xf32> {
  %o = attn.dot_product %q, %k, %v norm [softmax over keys]
      : tensor<16x16xf32>, tensor<200x16xf32>, tensor<200x8xf32> -> tensor<16x8xf32>
  return %o : tensor<16x8xf32>
}
