// Specs for --verify-rewrites and attn-run --check of --attn-lower-double-norm
// (test/Passes/lower-double-norm-verify.test).

// EANet's double normalization, causal, with batch and heads (2 x 3), odd
// sizes (n = m = 9, dk = 5, dv = 4) and a scale.
func.func @causal_double(%q: tensor<2x3x9x5xf32>, %k: tensor<2x3x9x5xf32>,
                         %v: tensor<2x3x9x4xf32>) -> tensor<2x3x9x4xf32> {
  %o = attn.dot_product %q, %k, %v norm [softmax over queries, sum over keys eps 1.000000e-09]
      scale 0.5 causal
      : tensor<2x3x9x5xf32>, tensor<2x3x9x5xf32>, tensor<2x3x9x4xf32> -> tensor<2x3x9x4xf32>
  return %o : tensor<2x3x9x4xf32>
}

// Two softmaxes under a causal mask with n = 6 queries, m = 8 keys (keys 6
// and 7 hidden from every query): the second softmax must not see the zeros
// the first one left in hidden entries.
func.func @causal_two_softmaxes(%q: tensor<6x5xf32>, %k: tensor<8x5xf32>,
                                %v: tensor<8x3xf32>) -> tensor<6x3xf32> {
  %o = attn.dot_product %q, %k, %v norm [softmax over keys, softmax over queries] causal
      : tensor<6x5xf32>, tensor<8x5xf32>, tensor<8x3xf32> -> tensor<6x3xf32>
  return %o : tensor<6x3xf32>
}

// An additive mask shared by both heads (rank 2), cross attention n = 7,
// m = 11, and a `none` step that is dropped.
func.func @masked(%q: tensor<2x7x4xf32>, %k: tensor<2x11x4xf32>,
                  %v: tensor<2x11x6xf32>, %mask: tensor<7x11xf32>) -> tensor<2x7x6xf32> {
  %o = attn.dot_product %q, %k, %v mask %mask
      norm [softmax over queries, none over keys, sum over keys eps 1.000000e-03]
      : tensor<2x7x4xf32>, tensor<2x11x4xf32>, tensor<2x11x6xf32>, tensor<7x11xf32> -> tensor<2x7x6xf32>
  return %o : tensor<2x7x6xf32>
}

// A single step over queries, with a feature map and K/V shared by the
// batch; and [sum over queries, count over keys].
func.func @feature_map_queries(%q: tensor<3x9x4xf32>, %k: tensor<5x4xf32>,
                               %v: tensor<5x2xf32>) -> tensor<3x9x2xf32> {
  %o = attn.dot_product %q, %k, %v norm [sum over queries eps 5.000000e-01, count over keys]
      feature_map elu_plus_one
      : tensor<3x9x4xf32>, tensor<5x4xf32>, tensor<5x2xf32> -> tensor<3x9x2xf32>
  return %o : tensor<3x9x2xf32>
}

// External attention as written (not canonicalized first), batch of 2,
// n = 33, S = 5 slots.
func.func @external_batched(%x: tensor<2x33x8xf32>, %mk: tensor<5x8xf32>,
                            %mv: tensor<5x6xf32>) -> tensor<2x33x6xf32> {
  %o = attn.external %x, %mk, %mv
      : tensor<2x33x8xf32>, tensor<5x8xf32>, tensor<5x6xf32> -> tensor<2x33x6xf32>
  return %o : tensor<2x33x6xf32>
}

// Causal with more keys than queries: the keys after the last query are
// hidden in every row, so the sum over queries (eps 0) of their columns is
// 0 / 0 (found by the differential fuzzer, test/fuzz: the lowered form gave
// inf).
func.func @causal_hidden_columns(%q: tensor<4x6xf32>, %k: tensor<9x6xf32>, %v: tensor<9x3xf32>) -> tensor<4x3xf32> {
  %o = attn.dot_product %q, %k, %v norm [softmax over keys, sum over queries] causal
      : tensor<4x6xf32>, tensor<9x6xf32>, tensor<9x3xf32> -> tensor<4x3xf32>
  return %o : tensor<4x3xf32>
}

// Standard attention: one step over keys, left alone.
func.func @single_step(%q: tensor<9x4xf32>, %k: tensor<9x4xf32>,
                       %v: tensor<9x4xf32>) -> tensor<9x4xf32> {
  %o = attn.dot_product %q, %k, %v norm [softmax over keys]
      : tensor<9x4xf32>, tensor<9x4xf32>, tensor<9x4xf32> -> tensor<9x4xf32>
  return %o : tensor<9x4xf32>
}
