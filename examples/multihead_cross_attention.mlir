// Multi-head cross-attention (Vaswani et al., "Attention Is All You Need",
// NeurIPS 2017, Section 3.2.2: the encoder-decoder attention).
//
// Queries come from one sequence (n = 64 decoder positions), keys and values
// from another (m = 200 encoder positions), so the score matrix is not
// square. Batch 2, 8 heads as leading dims, dk = dv = 32,
// scale = 1 / sqrt(32) = 0.17677669529663687:
//   O[b, h] = softmax_keys(Q[b, h] K[b, h]^T / sqrt(dk)) V[b, h]
func.func @multihead_cross_attention(%q: tensor<2x8x64x32xf32>, %k: tensor<2x8x200x32xf32>,
                                     %v: tensor<2x8x200x32xf32>) -> tensor<2x8x64x32xf32> {
  %o = attn.dot_product %q, %k, %v norm [softmax over keys] scale 0.17677669529663687
      : tensor<2x8x64x32xf32>, tensor<2x8x200x32xf32>, tensor<2x8x200x32xf32> -> tensor<2x8x64x32xf32>
  return %o : tensor<2x8x64x32xf32>
}
