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
