// attn.efficient's softmax over positions in chunks (AlgorithmOptions::
// efficientChunk): 2048 positions, 8 chunks of 256 with
// chunkedProduct.chunk=256. efficient-chunks.test gives K chunks whose
// maxima lie far apart.
func.func @efficient_chunks(%q: tensor<64x8xf32>, %k: tensor<2048x8xf32>, %v: tensor<2048x12xf32>) -> tensor<64x12xf32> {
  %o = attn.efficient %q, %k, %v variant softmax
      : tensor<64x8xf32>, tensor<2048x8xf32>, tensor<2048x12xf32> -> tensor<64x12xf32>
  return %o : tensor<64x12xf32>
}

// Dynamic dv: the chunk tasks' tiles need static columns, so the max over
// positions is its own pass.
func.func @efficient_dynamic_dv(%q: tensor<64x8xf32>, %k: tensor<2048x8xf32>, %v: tensor<2048x?xf32>) -> tensor<64x?xf32> {
  %o = attn.efficient %q, %k, %v variant softmax
      : tensor<64x8xf32>, tensor<2048x8xf32>, tensor<2048x?xf32> -> tensor<64x?xf32>
  return %o : tensor<64x?xf32>
}

// Batch and head dims before the positions (issue 28): the chunk tasks run
// per (batch, chunk), and the stages fused with them (compute_with) must
// nest their loops the same way. Each batch's K chunks sit at maxima of
// their own, so a merge that used another batch's max fails --check.
func.func @efficient_batched(%q: tensor<3x64x8xf32>, %k: tensor<3x2048x8xf32>, %v: tensor<3x2048x12xf32>) -> tensor<3x64x12xf32> {
  %o = attn.efficient %q, %k, %v variant softmax
      : tensor<3x64x8xf32>, tensor<3x2048x8xf32>, tensor<3x2048x12xf32> -> tensor<3x64x12xf32>
  return %o : tensor<3x64x12xf32>
}

// The shapes of the issue, at the default chunk (1024 positions).
func.func @efficient_heads(%q: tensor<2x8x4096x64xf32>, %k: tensor<2x8x4096x64xf32>, %v: tensor<2x8x4096x64xf32>) -> tensor<2x8x4096x64xf32> {
  %o = attn.efficient %q, %k, %v variant softmax
      : tensor<2x8x4096x64xf32>, tensor<2x8x4096x64xf32>, tensor<2x8x4096x64xf32> -> tensor<2x8x4096x64xf32>
  return %o : tensor<2x8x4096x64xf32>
}

func.func @efficient_batch3(%q: tensor<3x2048x32xf32>, %k: tensor<3x2048x32xf32>, %v: tensor<3x2048x32xf32>) -> tensor<3x2048x32xf32> {
  %o = attn.efficient %q, %k, %v variant softmax
      : tensor<3x2048x32xf32>, tensor<3x2048x32xf32>, tensor<3x2048x32xf32> -> tensor<3x2048x32xf32>
  return %o : tensor<3x2048x32xf32>
}

func.func @efficient_long(%q: tensor<2x65536x32xf32>, %k: tensor<2x65536x32xf32>, %v: tensor<2x65536x32xf32>) -> tensor<2x65536x32xf32> {
  %o = attn.efficient %q, %k, %v variant softmax
      : tensor<2x65536x32xf32>, tensor<2x65536x32xf32>, tensor<2x65536x32xf32> -> tensor<2x65536x32xf32>
  return %o : tensor<2x65536x32xf32>
}
