// Causal softmax attention, 4 heads of 256 positions, head dim 64.
func.func @causal_attention(%q: tensor<4x256x64xf32>, %k: tensor<4x256x64xf32>,
                            %v: tensor<4x256x64xf32>) -> tensor<4x256x64xf32> {
  %o = attn.dot_product %q, %k, %v norm [softmax over keys] scale 0.125 causal
      : tensor<4x256x64xf32>, tensor<4x256x64xf32>, tensor<4x256x64xf32>
      -> tensor<4x256x64xf32>
  return %o : tensor<4x256x64xf32>
}
