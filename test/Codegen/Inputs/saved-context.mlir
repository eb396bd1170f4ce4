// Efficient attention whose gradient takes the forward's saved normalized
// context (--attn-grad=save-statistics=1): saved-context.test.

// Batch and heads, small sizes (one pass of positions, no chunks).
func.func @heads(%q: tensor<2x3x40x8xf32>, %k: tensor<2x3x56x8xf32>, %v: tensor<2x3x56x12xf32>) -> tensor<2x3x40x12xf32> {
  %o = attn.efficient %q, %k, %v variant softmax : tensor<2x3x40x8xf32>, tensor<2x3x56x8xf32>, tensor<2x3x56x12xf32> -> tensor<2x3x40x12xf32>
  return %o : tensor<2x3x40x12xf32>
}

// Positions in chunks of 1024 (the forward merges chunk softmaxes), n != m.
func.func @chunks(%q: tensor<1500x32xf32>, %k: tensor<4096x32xf32>, %v: tensor<4096x64xf32>) -> tensor<1500x64xf32> {
  %o = attn.efficient %q, %k, %v variant softmax : tensor<1500x32xf32>, tensor<4096x32xf32>, tensor<4096x64xf32> -> tensor<1500x64xf32>
  return %o : tensor<1500x64xf32>
}

// Dynamic positions: the gradient keeps the column softmax's sum over the
// positions (the trace form needs static shapes).
func.func @dynamic(%q: tensor<?x8xf32>, %k: tensor<?x8xf32>, %v: tensor<?x12xf32>) -> tensor<?x12xf32> {
  %o = attn.efficient %q, %k, %v variant softmax : tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x12xf32> -> tensor<?x12xf32>
  return %o : tensor<?x12xf32>
}

// f64.
func.func @f64(%q: tensor<33x6xf64>, %k: tensor<45x6xf64>, %v: tensor<45x10xf64>) -> tensor<33x10xf64> {
  %o = attn.efficient %q, %k, %v variant softmax : tensor<33x6xf64>, tensor<45x6xf64>, tensor<45x10xf64> -> tensor<33x10xf64>
  return %o : tensor<33x10xf64>
}

// The context is a result of f too: its cotangent adds to dC.
func.func @returns_context(%q: tensor<24x8xf32>, %k: tensor<30x8xf32>, %v: tensor<30x12xf32>) -> (tensor<24x12xf32>, tensor<8x12xf32>) {
  %o, %c, %lse = attn.efficient %q, %k, %v variant softmax with_context : tensor<24x8xf32>, tensor<30x8xf32>, tensor<30x12xf32> -> tensor<24x12xf32>, tensor<8x12xf32>, tensor<1x8xf32>
  return %o, %c : tensor<24x12xf32>, tensor<8x12xf32>
}
