// Causal (masked) scaled dot-product self-attention, the decoder attention of
// Vaswani et al., "Attention Is All You Need" (NeurIPS 2017), Eq. 1:
//   O = softmax_keys(Q K^T / sqrt(dk) + causal mask) V
// Query i sees keys j <= i only. 4 heads, n = 256 positions,
// dk = dv = 64, so scale = 1 / sqrt(64) = 0.125.
func.func @causal_softmax(%q: tensor<4x256x64xf32>, %k: tensor<4x256x64xf32>,
                          %v: tensor<4x256x64xf32>) -> tensor<4x256x64xf32> {
  %o = attn.dot_product %q, %k, %v norm [softmax over keys] scale 0.125 causal
      : tensor<4x256x64xf32>, tensor<4x256x64xf32>, tensor<4x256x64xf32> -> tensor<4x256x64xf32>
  return %o : tensor<4x256x64xf32>
}
