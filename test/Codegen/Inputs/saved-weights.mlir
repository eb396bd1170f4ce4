// Double-normalized attention whose gradient takes the forward's saved
// weights (--attn-grad=save-statistics=1): saved-weights.test.

// EANet: n = 40 positions, S = 6 memory slots, d = 12.
func.func @external(%x: tensor<40x12xf32>, %mk: tensor<6x12xf32>, %mv: tensor<6x12xf32>) -> tensor<40x12xf32> {
  %o = attn.external %x, %mk, %mv : tensor<40x12xf32>, tensor<6x12xf32>, tensor<6x12xf32> -> tensor<40x12xf32>
  return %o : tensor<40x12xf32>
}

// The same normalization on batched heads, with a scale and a mask that
// needs a gradient (it is added to the scores before the first step).
func.func @heads(%q: tensor<2x3x24x8xf32>, %k: tensor<2x3x10x8xf32>, %v: tensor<2x3x10x5xf32>, %mask: tensor<24x10xf32>) -> tensor<2x3x24x5xf32> {
  %o = attn.dot_product %q, %k, %v mask %mask norm [softmax over queries, sum over keys eps 1.0e-9] scale 0.5
      : tensor<2x3x24x8xf32>, tensor<2x3x10x8xf32>, tensor<2x3x10x5xf32>, tensor<24x10xf32> -> tensor<2x3x24x5xf32>
  return %o : tensor<2x3x24x5xf32>
}

// One softmax over queries, causal.
func.func @over_queries(%q: tensor<20x8xf32>, %k: tensor<20x8xf32>, %v: tensor<20x4xf32>) -> tensor<20x4xf32> {
  %o = attn.dot_product %q, %k, %v norm [softmax over queries] causal
      : tensor<20x8xf32>, tensor<20x8xf32>, tensor<20x4xf32> -> tensor<20x4xf32>
  return %o : tensor<20x4xf32>
}

// f64.
func.func @f64(%x: tensor<18x6xf64>, %mk: tensor<5x6xf64>, %mv: tensor<5x7xf64>) -> tensor<18x7xf64> {
  %o = attn.external %x, %mk, %mv : tensor<18x6xf64>, tensor<5x6xf64>, tensor<5x7xf64> -> tensor<18x7xf64>
  return %o : tensor<18x7xf64>
}
